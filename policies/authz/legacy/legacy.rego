# METADATA
# description: |
#   The legacy dashboard ACL fallback (LEGACY_ACL_ENABLED): an entry on a candidate scope of a
#   dashboard or folder, for the subject's user, one of its teams or its org role, allows what its
#   level allows: 1 View reads, 2 Edit also writes, creates and deletes, 4 Admin also manages
#   permissions. An entry on a dashboard is about that dashboard: it allows dashboard actions
#   only; an entry on a folder allows the folder actions and the dashboard actions of its level.
package authz.legacy

import data.authz.subject

# every ACL entry that allows action on target for the subject, as a reason {kind: "acl", level,
# scope, principal}; scopes are the target's candidate scopes. The subject's keys are only worked out once a scope has entries.
grants(action, target, scopes) := {reason |
	acl := data.legacy_acl # once, not once per scope: a lookup in data costs as much
	count(acl) > 0 # most orgs have no entries: no scope is looked up
	_covers(target.kind, action)
	is_enabled(data.settings)
	needed := _level(action)
	some scope in scopes
	entries := acl[scope]
	some principal in subject.principals
	level := entries[principal]
	is_number(level)
	level >= needed
	reason := {"kind": "acl", "level": level, "scope": scope, "principal": principal}
}

# every scope with an entry for the subject at a level that allows action on items of kind: the
# scopes grants() would find among an item's candidates
held_scopes(kind, action) := {scope |
	acl := data.legacy_acl
	count(acl) > 0
	_covers(kind, action)
	is_enabled(data.settings)
	needed := _level(action)
	some scope, entries in acl
	some principal in subject.principals
	level := entries[principal]
	is_number(level)
	level >= needed
}

# What the subject's entries allow, as permissions lists it, {action: {scope}}: each scope that
# has entries for the subject, at the highest of their levels, with every action of that level the
# scope's kind covers. A rule, worked out only for the map.
held := {action: scopes |
	is_enabled(data.settings)
	levels := _levels_by_scope
	some action in actions
	needed := _level(action)
	scopes := {scope |
		some scope, level in levels
		level >= needed
		_covers(split(scope, ":")[0], action)
	}
	count(scopes) > 0
}

# each scope with an entry for one of the subject's keys, at the highest level among them
_levels_by_scope := {scope: max(levels) |
	some scope, entries in data.legacy_acl
	levels := [level |
		some principal in subject.principals
		level := entries[principal]
		is_number(level)
	]
	count(levels) > 0
}

# the actions a level allows, as a list to enumerate (_level finds one without building it)
actions := [
	"dashboards:read", "dashboards:write", "dashboards:create", "dashboards:delete",
	"dashboards.permissions:read", "dashboards.permissions:write", "folders:read", "folders:write",
	"folders:create", "folders:delete", "folders.permissions:read", "folders.permissions:write",
]

# whether the ACL applies; a function of data.settings rather than a rule, which compiled Rego
# memoizes at a cost above this lookup
is_enabled(settings) if settings.legacy_acl_enabled == true

# whether an entry on a scope of kind (a dashboard's, a folder's: the ACL has no other) speaks of
# action: a folder's covers its dashboards too, a dashboard's only the dashboard actions
_covers(kind, action) if {
	kind == "dashboards"
	startswith(action, "dashboards")
} else if {
	kind == "folders"
}

# the level an action needs; constants, not an object, to build nothing per decision, in an else
# chain that stops at the first match (every body of a function is evaluated), the actions asked
# most first
_level(action) := 1 if {
	action == "dashboards:read"
} else := 2 if {
	action == "dashboards:write"
} else := 1 if {
	action == "folders:read"
} else := 2 if {
	action == "dashboards:create"
} else := 2 if {
	action == "dashboards:delete"
} else := 2 if {
	action == "folders:write"
} else := 2 if {
	action == "folders:create"
} else := 2 if {
	action == "folders:delete"
} else := 4 if {
	action == "dashboards.permissions:read"
} else := 4 if {
	action == "dashboards.permissions:write"
} else := 4 if {
	action == "folders.permissions:read"
} else := 4 if {
	action == "folders.permissions:write"
}
