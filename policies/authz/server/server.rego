# METADATA
# description: |
#   Actions only a server admin may perform, whatever else holds them: an org admin's "*" on "*"
#   stops at its org, and these reach past it (seeding roles, orgs themselves, server settings,
#   the audit log, the server-admin flag, reloading the policy itself).
package authz.server

import data.authz.setup
import data.authz.subject

# the reason a server action is refused to this subject; undefined otherwise
refusal := {"kind": "server-only", "action": input.action} if refuses(input.action)

# whether action is a server action this subject may not perform. A function, not a rule:
# compiled Rego memoizes rules, and an undefined one (most actions) is worked out again on every
# reference, at a cost above the check itself. The open setup wizard is the one exception: before
# the first user exists there is no server admin to ask.
refuses(action) if {
	is_server_action(action)
	not subject.is_server_admin
	not setup.opens(action)
}

is_server_action("roles:seed")

is_server_action("orgs:create")

is_server_action("orgs:delete")

is_server_action("orgs.quotas:write")

is_server_action("serviceaccounts:migrate")

is_server_action("audit:read")

is_server_action("server.policy:reload")

is_server_action("server.stats:read")

is_server_action("settings:read")

is_server_action("settings:write")

is_server_action("users.permissions:write")

is_server_action("policy.diff:run")

# A server admin administers every org from the org's own level, member or not: the org itself,
# its members, preferences and quotas. The org's resources (dashboards, teams, connectors…) stay
# out of its reach until it joins. The reasons, as the decision's grants; empty otherwise.
org_grants(resource, action) := [{"kind": "rule", "rule": "server-admin", "action": action}] if {
	resource.kind == "orgs"
	resource.id == input.org_id
	is_org_administration(action)
	subject.is_server_admin
	subject.is_enabled
} else := []

# What a server admin holds on the org, member or not, as permissions lists it: the org
# administration actions on the org itself.
held := {action: {concat("", ["orgs:id:", input.org_id])} |
	subject.is_server_admin
	subject.is_enabled
	is_string(input.org_id)
	some action in org_administration
}

# the org administration actions, as a list to enumerate (is_org_administration tests one
# without building it)
org_administration := [
	"orgs:read", "orgs:write", "org.users:read", "org.users:add", "org.users:write",
	"org.users:remove", "orgs.preferences:read", "orgs.preferences:write", "orgs.quotas:read", "orgs.quotas:write",
]

is_org_administration("orgs:read")

is_org_administration("orgs:write")

is_org_administration("org.users:read")

is_org_administration("org.users:add")

is_org_administration("org.users:write")

is_org_administration("org.users:remove")

is_org_administration("orgs.preferences:read")

is_org_administration("orgs.preferences:write")

is_org_administration("orgs.quotas:read")

is_org_administration("orgs.quotas:write")
