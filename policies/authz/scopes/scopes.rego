# METADATA
# description: |
#   Candidate scopes of a target: its own scope, the wildcards above it, the folders it inherits
#   from, and "*". A target is allowed when a held permission names one of them, so the
#   candidates are a union: a direct grant only adds.
package authz.scopes

# the kinds a {kind, uid} or {kind, id} resource may name; {scope} resources are not checked.
# Every body of a function is evaluated, an else chain stops at the first match: the kinds asked
# most come first.
is_kind(kind) if {
	kind == "dashboards"
} else if {
	kind == "folders"
} else if {
	kind == "alert.rules"
} else if {
	kind == "connectors"
} else if {
	kind == "teams"
} else if {
	kind == "users"
} else if {
	kind == "annotations"
} else if {
	kind == "alert.silences"
} else if {
	kind == "apikeys"
} else if {
	kind == "global.users"
} else if {
	kind == "investigations"
} else if {
	kind == "orgs"
} else if {
	kind == "roles"
} else if {
	kind == "serviceaccounts"
} else if {
	kind == "settings"
}

# target(resource) normalizes {kind, uid}, {kind, id} and {scope} into
# {kind, attr, value, scope}; "*" and "<kind>:*" scopes keep only what they have
target(resource) := _named_target(resource.kind, resource) if is_kind(resource.kind)

else := _scope_target(resource.scope) if not resource.kind

_named_target(kind, resource) := _attr_target(kind, "uid", resource.uid) if _is_text(resource.uid)

else := _attr_target(kind, "id", _id_text(resource.id)) if not resource.uid

_scope_target(scope) := {"scope": "*"} if scope == "*"

else := _parts_target(split(scope, ":"), scope)

_parts_target(parts, scope) := {"kind": parts[0], "scope": scope} if {
	count(parts) == 2
	parts[0] != ""
	parts[1] == "*"
}

_parts_target(parts, _) := _attr_target(parts[0], parts[1], value) if {
	count(parts) > 2
	parts[0] != ""
	parts[1] != ""
	value := concat(":", array.slice(parts, 2, count(parts)))
	value != ""
}

# why a resource has no target, as a reason {kind: "input", field: "resource"[, resourceKind]}:
# an unknown kind, else a shape that is not {kind, uid}, {kind, id} or {scope} with a scope *,
# <kind>:* or <kind>:<attr>:<value>
problem(resource) := {"kind": "input", "field": "resource", "resourceKind": resource.kind} if _has_unknown_kind(resource)

problem(resource) := {"kind": "input", "field": "resource"} if {
	not _has_unknown_kind(resource)
}

# most specific first: own scope, inherited folders, wildcards, "*". One link of an else chain
# per shape of target, so only its own work is done. A connector is flat: who may query it is
# said by the grants on it (its role entries, Viewer and Editor by default) like anything else.
candidates(target) := array.concat(array.concat([target.scope], _folder_chain(folder)), _folder_wildcards(target)) if {
	# a dashboard or an alert rule known to the index inherits from its folder's chain
	folder := _folder_of(target)
} else := array.concat(data.folders[target.value].scopes, ["folders:uid:*", "folders:*", "*"]) if {
	# a folder in the index: its chain is its own scope, then its ancestors'
	target.kind == "folders"
	target.attr == "uid"
	target.value != "*"
} else := array.concat(array.concat([target.scope], _ancestors(target)), _wildcards(target)) if {
	target.kind == "folders"
} else := array.concat([target.scope], _wildcards(target))

_attr_target(kind, attr, value) := {
	"kind": kind,
	"attr": attr,
	"value": value,
	"scope": concat(":", [kind, attr, value]),
}

_is_text(x) if {
	is_string(x)
	x != ""
}

_id_text(id) := id if _is_text(id)

_id_text(id) := json.marshal(id) if is_number(id)

_has_unknown_kind(resource) if {
	is_string(resource.kind)
	not is_kind(resource.kind)
}

# the scopes of the folders a resource's scope inherits from: a folder's ancestors, a
# dashboard's or an alert rule's folder and its ancestors; none for any other scope
inherited(scope) := _inherited(target) if {
	target := _scope_target(scope)
} else := []

_inherited(target) := _folder_chain(folder) if {
	folder := _folder_of(target)
} else := _ancestors(target) if {
	target.kind == "folders"
} else := []

# the folder a dashboard or an alert rule known to the index lives in ("" = the root)
_folder_of(target) := data.dashboards[target.value].folder if {
	target.kind == "dashboards"
	target.attr == "uid"
} else := data.alert_rules[target.value].folder if {
	target.kind == "alert.rules"
	target.attr == "uid"
}

# a folder and its ancestors as scopes, nearest first (precomputed in the data document);
# "" is the root, which has no scope of its own
_folder_chain(folder) := data.folders[folder].scopes if {
	is_string(folder)
	folder != ""
} else := []

# the ancestors of a folder target that candidates() does not take from the index whole: one
# missing from it, or one whose uid is "*"
_ancestors(target) := array.slice(scopes, 1, count(scopes)) if {
	target.attr == "uid"
	scopes := data.folders[target.value].scopes
} else := []

# whatever lives in a folder, the root included, is also covered by the folder wildcards (a uid
# of "*" is its own attribute wildcard)
_folder_wildcards(target) := ["dashboards:uid:*", "dashboards:*", "folders:uid:*", "folders:*", "*"] if {
	target.kind == "dashboards"
	target.value != "*"
} else := ["alert.rules:uid:*", "alert.rules:*", "folders:uid:*", "folders:*", "*"] if {
	target.kind == "alert.rules"
	target.value != "*"
} else := [concat("", [target.kind, ":*"]), "folders:uid:*", "folders:*", "*"]

# the wildcards above a target, "*" last
_wildcards(target) := [] if target.scope == "*"

else := _attr_wildcards(target.kind, target.attr) if target.value != "*"

else := [concat("", [target.kind, ":*"]), "*"] if target.attr

else := ["*"]

# "<kind>:<attr>:*", "<kind>:*" and "*"; constants for the kinds asked most, so that nothing is
# built per decision
_attr_wildcards(kind, attr) := ["connectors:uid:*", "connectors:*", "*"] if {
	kind == "connectors"
	attr == "uid"
} else := ["teams:id:*", "teams:*", "*"] if {
	kind == "teams"
	attr == "id"
} else := ["users:id:*", "users:*", "*"] if {
	kind == "users"
	attr == "id"
} else := ["folders:uid:*", "folders:*", "*"] if {
	kind == "folders"
	attr == "uid"
} else := [concat("", [kind, ":", attr, ":*"]), concat("", [kind, ":*"]), "*"]
