# METADATA
# description: |
#   Action matching against the indexed role permissions, data.roles[role][action][scope]. Only
#   direct lookups: the roles of the subject and the candidate scopes of the target are small,
#   the role index is not.
package authz.rbac

# the held actions that cover an asked one: dashboards:read is covered by dashboards:read,
# dashboards:* and *
matching_actions(action) := array.concat([action], _wildcards_of(action)) if is_string(action)

# Whether grants(roles, action, scopes) is not empty, without building its reasons: holds, or in
# two parts, the action itself (holds_exactly) and its wildcards (holds_through_wildcard), so that
# an allow by the action itself neither builds the wildcards nor looks them up.

holds(roles, action, scopes) if _holds_as(roles, matching_actions(action), scopes)

# whether some permission of roles names action itself (no wildcard) on one of scopes; written out
# rather than as _holds_as(roles, [action], scopes), which builds and walks a one-item list on the
# path most allows take
holds_exactly(roles, action, scopes) if {
	index := data.roles
	some role in roles
	scoped := index[role][action]
	some scope in scopes
	scoped[scope] == true
}

# whether some permission of roles names a wildcard of action (dashboards:* or *) on one of scopes
holds_through_wildcard(roles, action, scopes) if _holds_as(roles, _wildcards_of(action), scopes)

_holds_as(roles, helds, scopes) if {
	index := data.roles
	some role in roles
	permissions := index[role]
	some held in helds
	scoped := permissions[held]
	some scope in scopes
	scoped[scope] == true
}

# the wildcard actions that cover an action: dashboards:read -> dashboards:* and *. Constants for
# the kinds asked most: building the string costs more than a few prefix tests.
_wildcards_of(action) := ["dashboards:*", "*"] if {
	startswith(action, "dashboards:")
} else := ["folders:*", "*"] if {
	startswith(action, "folders:")
} else := ["dashboards.permissions:*", "*"] if {
	startswith(action, "dashboards.permissions:")
} else := ["connectors:*", "*"] if {
	startswith(action, "connectors:")
} else := ["teams:*", "*"] if {
	startswith(action, "teams:")
} else := [concat("", [parts[0], ":*"]), "*"] if {
	parts := split(action, ":")
	count(parts) > 1
	parts[0] != ""
} else := ["*"]

# every permission of roles that covers action on one of scopes, as a reason
# {kind: "grant", role, action, scope} (action is the held one: the asked action or a wildcard)
grants(roles, action, scopes) := {{"kind": "grant", "role": role, "action": held, "scope": scope} |
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

# for an action without a target: every role that holds it (or a wildcard of it) on any scope,
# as a reason {kind: "grant", role, action} without a scope
holders(roles, action) := {{"kind": "grant", "role": role, "action": held} |
	helds := matching_actions(action)
	index := data.roles
	some role in roles
	permissions := index[role]
	some held in helds
	count(permissions[held]) > 0
}

# every scope on which some permission of roles names action or a wildcard of it
held_scopes(roles, action) := {scope |
	helds := matching_actions(action)
	index := data.roles
	some role in roles
	permissions := index[role]
	some held in helds
	some scope, granted in permissions[held]
	granted == true
}
