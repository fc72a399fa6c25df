# METADATA
# description: |
#   SCIM provisioning (/scim/v2) is an identity provider's job, done with a service account's
#   token: its actions are refused to a person whatever else it holds (an org admin's "*" on "*"
#   included), so a browser session or a personal token never provisions accounts.
package authz.scim

# the reason a SCIM action is refused to this subject; undefined otherwise
refusal := {"kind": "service-account-only", "action": input.action} if refuses(input.action)

# whether action is a SCIM action this subject may not perform. A function, not a rule, for the
# same reason as server.refuses: most actions are not SCIM actions, and an undefined rule is
# worked out again on every reference.
refuses(action) if {
	is_scim_action(action)
	not _is_service_account(input.subject)
}

is_scim_action("scim:read")

is_scim_action("scim:write")

_is_service_account(subject) if subject.kind == "service_account"
