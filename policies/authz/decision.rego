# METADATA
# description: |
#   The entry points of the authz policy. TypeScript builds the input and the per-org data
#   document (policies/README.md); everything that decides is here.
package authz

import data.authz.chat
import data.authz.legacy
import data.authz.rbac
import data.authz.scopes
import data.authz.self
import data.authz.server
import data.authz.subject

# METADATA
# title: Decision
# description: |
#   Whether input.subject may do input.action on input.resource in input.org_id, and for a
#   chat-driven action whether the chat checks pass too. Always {allow, reasons}: the grants that
#   matched when allowed, what was missing when denied, sorted.
# entrypoint: true
default decision := {"allow": false, "reasons": ["the request could not be evaluated"]}

default _allow := false

decision := {"allow": _allow, "reasons": _reasons}

_allow if {
	count(_grants) > 0
	chat.is_allowed
	not server.refusal
}

_reasons := sort(_grants) if _allow

_reasons := sort(_denials) if not _allow

_action := input.action if {
	is_string(input.action)
	input.action != ""
}

# defined for any value of input.resource, null and false included
_has_resource if type_name(input.resource)

_target := scopes.target(input.resource)

_candidates := scopes.candidates(_target, _action)

# what role permissions and legacy ACL entries grant, plus a subject's rights on itself
_grants := _role_grants | self.grants

default _role_grants := set()

_role_grants := _grants_on(_target, _candidates) if subject.is_active

# without a target, the action held on any scope counts
_role_grants := rbac.holders(subject.roles, _action) if {
	subject.is_active
	not _has_resource
}

# the role permissions and legacy ACL entries that allow _action on a target, as reasons
_grants_on(target, candidates) := role_grants | acl_grants if {
	role_grants := rbac.grants(subject.roles, _action, candidates)
	acl_grants := legacy.grants(_action, target, candidates)
}

_denials contains problem if {
	not subject.is_active
	some problem in subject.problems
}

_denials contains "no action given" if not _action

_denials contains scopes.problem(input.resource) if {
	_has_resource
	not _target
}

_denials contains _missing_grant if {
	subject.is_active
	count(_grants) == 0
}

_denials contains problem if some problem in chat.problems

_denials contains server.refusal if subject.is_active

_missing_grant := concat("", ["no role grants ", _action, " on ", concat(", ", _candidates)]) if _candidates

_missing_grant := concat("", ["no role grants ", _action, " on any scope"]) if not _has_resource
