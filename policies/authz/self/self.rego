# METADATA
# description: |
#   A subject's own record: a user or service account may read and manage itself (profile,
#   password, preferences, sessions, tokens, external login links, its own permissions) without
#   any role — the routes under /api/user. Within an org it must still be a member of it. Nothing
#   here gives a privilege: server-admin flags and roles are not self actions. Likewise a member
#   reads the org it is in (/api/org) without any role.
package authz.self

import data.authz.subject

# the reasons action on resource is allowed as a self action; empty when it is not one. The
# target is checked first: it rules out every other request with one comparison.
grants(resource, action) := [{"kind": "rule", "rule": "self", "action": action}] if {
	_is_own_record(resource)
	is_self_action(action)
	_may_act_here
} else := []

# What a subject holds on itself, as permissions lists it: every self action on its own record.
held := {action: {concat("", ["users:id:", subject.id])} |
	_may_act_here
	some action in actions
}

# the self actions, as a list to enumerate (is_self_action tests one without building it)
actions := [
	"users:read", "users:write", "users.password:write", "users.preferences:read", "users.preferences:write",
	"users.permissions:read", "users.sessions:read", "users.sessions:write", "users.tokens:read", "users.tokens:write",
	"users.authlinks:read", "users.authlinks:write", "users.quotas:read",
]

is_self_action("users:read")

is_self_action("users:write")

is_self_action("users.password:write")

is_self_action("users.preferences:read")

is_self_action("users.preferences:write")

is_self_action("users.permissions:read")

is_self_action("users.sessions:read")

is_self_action("users.sessions:write")

is_self_action("users.tokens:read")

is_self_action("users.tokens:write")

is_self_action("users.authlinks:read")

is_self_action("users.authlinks:write")

is_self_action("users.quotas:read")

_is_own_record(resource) if {
	resource.kind == "users"
	resource.id == subject.id
}

# outside an org (org_id null) any enabled subject; inside one, only a member
_may_act_here if {
	subject.is_enabled
	subject.is_server_level
}

_may_act_here if subject.is_active

# Every member reads the org it is in, whatever its roles: its profile already names the org.
# Only without a target (GET /api/org, the active org): an org named by id (/api/orgs/<id>) is
# org administration, for holders of orgs:read there. As an array of reasons, empty when none;
# a function, so the list and create actions that share this branch pay one comparison.
org_grants(action) := [{"kind": "rule", "rule": "member", "action": action}] if {
	action == "orgs:read"
	not subject.is_server_level
	subject.is_active
} else := []
