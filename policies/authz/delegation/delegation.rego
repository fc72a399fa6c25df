# METADATA
# description: |
#   Grafana's delegation rule: whoever creates, changes or assigns a role must hold every
#   permission the role grants (input.delegate, a list of {action, scope}). A held permission
#   covers a granted one when its action matches (the same, "<resource>:*" or "*") and its scope
#   is the same or a wildcard above it ("<kind>:<attr>:*", "<kind>:*", "*"), or, for a folder,
#   dashboard or alert rule, the scope of a folder it inherits from (a folder's Admin may share it).
package authz.delegation

import data.authz.rbac
import data.authz.scopes
import data.authz.subject

# whether every permission in request.delegate is held; true when there is none to check
allows(request) if {
	not request.delegate
} else if {
	is_array(request.delegate)
	count(missing(request)) == 0
}

# An org Admin who is not a server admin must not demote or remove a server admin from the org:
# the server's administrator would otherwise lose an org to someone it outranks.
# input.target_user describes the user an org.users change is about.
protects_server_admin(request) if {
	_changes_membership(request.action)
	request.target_user.server_admin == true
	not subject.is_server_admin
}

# compared one by one: a set literal is built anew on every evaluation
_changes_membership("org.users:write")

_changes_membership("org.users:remove")

server_admin_refusal := {"kind": "protected"}

# the granted permissions the subject does not hold, as reasons
# {kind: "unmet", need: "delegation", action, scope}
missing(request) := {{"kind": "unmet", "need": "delegation", "action": _text(item.action), "scope": _text(item.scope)} |
	some item in request.delegate
	not _is_held(item)
}

# a value as text for a reason; a malformed item must still be reported, or it would pass
_text(value) := value if is_string(value)

else := json.marshal(value)

_is_held(item) if {
	is_string(item.action)
	is_string(item.scope)
	helds := rbac.matching_actions(item.action)
	index := data.roles
	some role in subject.roles
	permissions := index[role]
	some held in helds
	some scope in array.concat(covering_scopes(item.scope), scopes.inherited(item.scope))
	permissions[held][scope] == true
}

# the scopes that cover scope: itself, the wildcard of each of its prefixes, then "*"
# (dashboards:uid:d1 -> dashboards:uid:d1, dashboards:uid:*, dashboards:*, *)
covering_scopes(scope) := array.concat(array.concat([scope], _prefix_wildcards(scope)), ["*"]) if {
	scope != "*"
} else := ["*"]

_prefix_wildcards(scope) := [wildcard |
	parts := split(scope, ":")
	count(parts) > 1
	some n in numbers.range(1, count(parts) - 1)
	wildcard := concat(":", array.concat(array.slice(parts, 0, count(parts) - n), ["*"]))
	wildcard != scope
]
