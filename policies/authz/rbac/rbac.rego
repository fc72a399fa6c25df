# METADATA
# description: |
#   Action matching against the indexed role permissions, data.roles[role][action][scope]. Only
#   direct lookups: the roles of the subject and the candidate scopes of the target are small,
#   the role index is not.
package authz.rbac

# the held actions that cover an asked one: dashboards:read is covered by dashboards:read,
# dashboards:* and *
matching_actions(action) := [action, concat("", [substring(action, 0, i), ":*"]), "*"] if {
	i := indexof(action, ":")
	i > 0
} else := [action, "*"] if indexof(action, ":") < 1

# every permission of roles that covers action on one of scopes, as a reason
grants(roles, action, scopes) := {concat("", ["role ", role, " grants ", held, " on ", scope]) |
	helds := matching_actions(action)

	# data.roles once, not once per role: a lookup in data costs as much as one in the role
	index := data.roles
	some role in roles
	permissions := index[role]
	some held in helds
	scoped := permissions[held]
	some scope in scopes
	scoped[scope] == true
}

# for an action without a target: every role that holds it (or a wildcard of it) on any scope
holders(roles, action) := {concat("", ["role ", role, " grants ", held, " on some scope"]) |
	helds := matching_actions(action)
	index := data.roles
	some role in roles
	permissions := index[role]
	some held in helds
	count(permissions[held]) > 0
}
