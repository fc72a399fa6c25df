package authz

import data.authz.subject

# METADATA
# title: Permissions
# description: |
#   Everything input.subject holds in input.org_id, {action: [scope, ...]}: the union of every
#   role that applies to it; {} for a non-member or a disabled subject (a comprehension is never
#   undefined). Scopes come as a set, a JSON array in no particular order: sorting a role with
#   tens of thousands of grants costs seconds in wasm, milliseconds in the caller. Legacy ACL
#   entries are not listed: they only exist for a given target.
# entrypoint: true
permissions := {action: scopes |
	some action in _held_actions
	scopes := {scope |
		some role in subject.roles
		some scope, granted in data.roles[role][action]
		granted == true
	}
	count(scopes) > 0
}

_held_actions contains action if {
	some role in subject.roles
	some action, _ in data.roles[role]
}
