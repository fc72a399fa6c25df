# METADATA
# description: |
#   Actions only a server admin may perform, whatever else holds them: an org admin's "*" on "*"
#   stops at its org, and these reach past it (seeding roles, orgs themselves, server settings,
#   the audit log, the server-admin flag).
package authz.server

import data.authz.subject

# the reason a server action is refused to this subject; undefined otherwise
refusal := concat("", ["only a server admin may ", input.action]) if refuses(input.action)

# whether action is a server action this subject may not perform. A function, not a rule:
# compiled Rego memoizes rules, and an undefined one (most actions) is worked out again on every
# reference, at a cost above the check itself.
refuses(action) if {
	is_server_action(action)
	not subject.is_server_admin
}

is_server_action("roles:seed")

is_server_action("orgs:create")

is_server_action("orgs:delete")

is_server_action("audit:read")

is_server_action("server.stats:read")

is_server_action("settings:read")

is_server_action("settings:write")

is_server_action("users.permissions:write")
