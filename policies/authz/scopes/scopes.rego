# METADATA
# description: |
#   Candidate scopes of a target: its own scope, the wildcards above it, the folders it inherits
#   from, and "*". A target is allowed when a held permission names one of them, so the
#   candidates are a union: a direct grant only adds.
package authz.scopes

default _inherited(_) := []

default _wildcards(_) := ["*"]

# the kinds a {kind, uid} or {kind, id} resource may name; {scope} resources are not checked.
# Functions of constants rather than a set: nothing to build per decision.
is_kind("alert.rules")

is_kind("alert.silences")

is_kind("annotations")

is_kind("apikeys")

is_kind("connectors")

is_kind("dashboards")

is_kind("folders")

is_kind("global.users")

is_kind("investigations")

is_kind("orgs")

is_kind("roles")

is_kind("serviceaccounts")

is_kind("settings")

is_kind("teams")

is_kind("users")

# target(resource) normalizes {kind, uid}, {kind, id} and {scope} into
# {kind, attr, value, scope}; "*" and "<kind>:*" scopes keep only what they have
target(resource) := _attr_target(resource.kind, "uid", resource.uid) if {
	is_kind(resource.kind)
	_is_text(resource.uid)
}

target(resource) := _attr_target(resource.kind, "id", _id_text(resource.id)) if {
	is_kind(resource.kind)
	not resource.uid
}

target(resource) := {"scope": "*"} if {
	resource.scope == "*"
	not resource.kind
}

target(resource) := {"kind": parts[0], "scope": resource.scope} if {
	not resource.kind
	parts := split(resource.scope, ":")
	count(parts) == 2
	parts[0] != ""
	parts[1] == "*"
}

target(resource) := _attr_target(parts[0], parts[1], value) if {
	not resource.kind
	parts := split(resource.scope, ":")
	count(parts) > 2
	parts[0] != ""
	parts[1] != ""
	value := concat(":", array.slice(parts, 2, count(parts)))
	value != ""
}

# why a resource has no target
problem(resource) := concat("", ["unknown resource kind ", resource.kind]) if _has_unknown_kind(resource)

problem(resource) := "resource must be {kind, uid}, {kind, id} or {scope} with a scope *, <kind>:* or <kind>:<attr>:<value>" if {
	not _has_unknown_kind(resource)
}

# most specific first: own scope, inherited folders, wildcards, "*"
candidates(target, action) := [target.scope, "*"] if is_narrowed(target, action)

candidates(target, action) := array.concat(array.concat([target.scope], _inherited(target)), _wildcards(target)) if {
	not is_narrowed(target, action)
}

# every member may query every connector (basic:viewer holds connectors:query on connectors:*)
# until the connector carries a grant of its own: then only a grant on it, or "*", lets one query
is_narrowed(target, "connectors:query") if {
	target.kind == "connectors"
	target.attr == "uid"
	data.restricted_connectors[target.value] == true
}

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

# the folder a dashboard or an alert rule known to the index lives in ("" = the root)
_folder_of(target) := data.dashboards[target.value].folder if {
	target.kind == "dashboards"
	target.attr == "uid"
}

_folder_of(target) := data.alert_rules[target.value].folder if {
	target.kind == "alert.rules"
	target.attr == "uid"
}

_inherited(target) := _folder_chain(_folder_of(target))

_inherited(target) := array.slice(scopes, 1, count(scopes)) if {
	scopes := data.folders[target.value].scopes
	target.kind == "folders"
	target.attr == "uid"
}

# a folder and its ancestors as scopes, nearest first (precomputed in the data document);
# "" is the root, which has no scope of its own
_folder_chain(folder) := [] if folder == ""

_folder_chain(folder) := data.folders[folder].scopes if {
	is_string(folder)
	folder != ""
}

_wildcards(target) := [] if target.scope == "*"

# whatever lives in a folder, the root included, is also covered by the folder wildcards
_wildcards(target) := array.concat(_attr_wildcards(target), ["folders:uid:*", "folders:*", "*"]) if {
	target.attr
	_folder_of(target)
}

_wildcards(target) := array.concat(_attr_wildcards(target), ["*"]) if {
	target.attr
	not _folder_of(target)
}

_attr_wildcards(target) := [concat("", [target.kind, ":", target.attr, ":*"]), concat("", [target.kind, ":*"])] if {
	target.value != "*"
}

_attr_wildcards(target) := [concat("", [target.kind, ":*"])] if target.value == "*"
