package authz

import data.authz.legacy
import data.authz.rbac
import data.authz.subject

# METADATA
# title: Visible
# description: |
#   Every item of input.kind ("dashboards" or "folders") on which input.action is allowed, as sets
#   rather than item by item, so a list is filtered in SQL: {"all": true} when a wildcard that
#   every item of the kind inherits is granted; else "folders", the folders of the org whose own
#   grants allow the action, on them and on everything under them (grants are inherited down the
#   tree), and "items", the uids the action is granted on directly. An item of the org filter
#   allows is exactly one of all, or one in or under a listed folder (a folder: one of them or
#   under one), or listed itself. Undefined for any other kind: their items may carry requires
#   of their own, which filter checks item by item.
# entrypoint: true
visible := _visible_of(_held_scopes(input.kind, _action), input.kind) if {
	_is_listed_kind(input.kind)
	passes_refusals(input)
} else := {"all": false, "folders": set(), "items": set()} if {
	_is_listed_kind(input.kind)
}

_is_listed_kind(kind) if {
	kind == "dashboards"
} else if {
	kind == "folders"
}

# every scope on which the subject holds action for items of kind: role permissions, and legacy
# ACL entries at a level that allows it
_held_scopes(kind, action) := rbac.held_scopes(subject.roles, action) | legacy.held_scopes(kind, action)

_visible_of(held, kind) := {"all": true, "folders": set(), "items": set()} if {
	some scope in _inherited_wildcards(kind)
	held[scope]
} else := {"all": false, "folders": _visible_folders(held), "items": _direct_items(held, kind)}

# the wildcards among every item's candidate scopes (scopes.candidates): a dashboard inherits
# the folder wildcards too
_inherited_wildcards("dashboards") := ["dashboards:uid:*", "dashboards:*", "folders:uid:*", "folders:*", "*"]

_inherited_wildcards("folders") := ["folders:uid:*", "folders:*", "*"]

# the folders of the org granted on their own scope: a folder and everything under it inherit its
# grants, so the tree below them is the caller's to walk (in SQL), not the policy's
_visible_folders(held) := {uid |
	some scope in held
	startswith(scope, "folders:uid:")
	uid := substring(scope, 12, -1)
	data.folders[uid]
}

# the uids of kind granted on their own scope
_direct_items(held, kind) := {substring(scope, count(prefix), -1) |
	prefix := concat("", [kind, ":uid:"])
	some scope in held
	startswith(scope, prefix)
}
