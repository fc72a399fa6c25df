package authz

import data.authz.legacy
import data.authz.scim
import data.authz.self
import data.authz.server
import data.authz.subject

# METADATA
# title: Permissions
# description: |
#   Everything input.subject holds in input.org_id, {action: [scope, ...]}: exactly what decision
#   answers for a resource, in scopes. The permissions of every role that applies to it, but the
#   server-only and SCIM actions decision refuses it; the legacy ACL entries for it (LEGACY_ACL_ENABLED),
#   as the actions of their levels on the entries' scopes; its rights on its own record
#   (users:id:<id>); a server admin's administration of the org, member or not (orgs:id:<org>).
#   {} for a non-member or a disabled subject (a comprehension is never undefined). Scopes come
#   as a set, a JSON array in no particular order: sorting a role with tens of thousands of
#   grants costs seconds in wasm, milliseconds in the caller.
# entrypoint: true
permissions := {action: scopes |
	some action in _held_actions
	scopes := _role_scopes(action) | object.get(_beside_roles, action, set())
	count(scopes) > 0
}

_held_actions contains action if {
	some role in subject.roles
	some action, _ in data.roles[role]
	not server.refuses(action)
	not scim.refuses(action)
}

_held_actions contains action if some action, _ in _beside_roles

_role_scopes(action) := {scope |
	some role in subject.roles
	some scope, granted in data.roles[role][action]
	granted == true
}

# what is granted besides roles, by action; the three speak of different actions
_beside_roles := object.union_n([legacy.held, self.held, server.held])
