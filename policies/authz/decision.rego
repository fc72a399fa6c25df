# METADATA
# description: |
#   The entry points of the authz policy. TypeScript builds the input and the per-org data
#   document (policies/README.md); everything that decides is here.
package authz

import data.authz.authorship
import data.authz.chat
import data.authz.delegation
import data.authz.legacy
import data.authz.rbac
import data.authz.scim
import data.authz.scopes
import data.authz.self
import data.authz.server
import data.authz.setup
import data.authz.subject

# METADATA
# title: Decision
# description: |
#   Whether input.subject may do input.action on input.resource in input.org_id, and for a
#   chat-driven action whether the chat checks pass too. Always {allow, reasons}: the grants that
#   matched when allowed, what was missing when denied. Reasons are data ({kind, ...}, listed in
#   policies/README.md, "Reasons"), which the service words; each kind sorted on its own.
# entrypoint: true
default decision := {"allow": false, "reasons": [{"kind": "input"}]}

# allowed: every grant that matched; denied: what was missing, only worked out on a deny. A plain
# request (_is_plain) has no refusal with a message: its deny is only the reasons, and most often
# the one missing grant alone, given without gathering and sorting _denials.
decision := {"allow": true, "reasons": _grants} if {
	allow
} else := {"allow": false, "reasons": [_missing_grant]} if {
	_is_plain
	_denied_for_grant_alone
} else := {"allow": false, "reasons": sort(_denials)} if {
	_is_plain
} else := _refusal(_grants)

# _denials is exactly {_missing_grant}: an active subject with no grant, nothing server-only, and a
# missing grant to name (which needs an action and, with a resource, a target of a known shape).
# server.refuses rather than server.refusal: the same test without building the message, and a
# function, where the rule, undefined on this path, would be worked out and not memoized.
_denied_for_grant_alone if {
	subject.is_active
	not _granted
	_missing_grant
	not server.refuses(input.action)
	not scim.refuses(input.action)
}

# METADATA
# title: Enforce
# description: |
#   What authorize() enforces, in one evaluation: true when allowed, without building, sorting or
#   returning the grants as reasons; when denied, decision itself (its reasons and message),
#   worked out in the same evaluation rather than in a second one.
# entrypoint: true
enforce if {
	allow
} else := decision

# decision.allow alone: whether any grant matches is asked without building the grants as
# reasons. decision and enforce both answer through it.
default allow := false

allow if {
	_granted
	passes_refusals(input)
	chat.allows(input)
	_may_use_chat(input)
}

# A chat-driven request is its user's use of the chat agent, so besides the tool's own action it
# needs chat:use, held on any scope (basic roles from Viewer up, or the fixed role chat:user):
# without it a member whose grants reach a connector could still have the agent query it.
_may_use_chat(request) if {
	not chat.is_driven(request)
} else if {
	_has_grant_on_some_scope("chat:use")
}

# Compiled Rego memoizes every rule without arguments in a table it fills per evaluation, and an
# entry costs more than most of the tests it caches; every body of a rule or function is
# evaluated. So the hot path goes through functions and else chains, and as few rules as it can
# (policies/README.md, "Evaluation cost").

# A refusal carries a message for the caller only when what it says is safe to show: a
# delegation refusal names nothing but the caller's own permissions and the role's, which the
# caller sent or may read; a refused move names the create action the destination folder (the
# caller's own choice) lacks; an authorship refusal names the rule (a plan's author may not
# approve it), never who the author is; the closed setup wizard tells a caller who has not signed
# in to do so; a refused chat check names the agent type, tool and permission mode (the caller's
# own) and the agent types' tools (documented), and a chat-driven request without chat:use names
# that action. Every other refusal says only which action was refused.
_refusal(grants) := {"allow": false, "reasons": sort(_denials), "message": chat.message} if {
	not chat.allows(input)
} else := {"allow": false, "reasons": sort(_denials), "message": "permission denied: you need chat:use to do this"} if {
	subject.is_active
	not _may_use_chat(input)
} else := {"allow": false, "reasons": sort(_denials), "message": delegation_message} if {
	count(grants) > 0
	subject.is_active
	not server.refuses(input.action)
	chat.allows(input)
	not delegation.protects_server_admin(input)
	count(delegation.missing(input)) > 0
} else := {"allow": false, "reasons": sort(_denials), "message": destination_message} if {
	count(grants) > 0
	subject.is_active
	not _destination_allows(input)
} else := {"allow": false, "reasons": sort(_denials), "message": authorship.message} if {
	count(grants) > 0
	subject.is_active
	not authorship.allows(input)
} else := {"allow": false, "reasons": sort(_denials), "message": requires_message} if {
	count(grants) > 0
	subject.is_active
	is_array(input.requires)
	not requirements_met(input)
} else := {"allow": false, "reasons": sort(_denials), "message": setup.closed_message} if {
	setup.refuses_anonymous(input)
} else := {"allow": false, "reasons": sort(_denials)}

destination_message := concat("", ["permission denied: you need ", _creation_of(input.action), " on the destination folder to do this"])

# names the required actions and kinds, never which resources: "permission denied: you need
# connectors:query on every connector the alert rule reads"; a delete requires what it removes
# with the resource: "... you need dashboards:delete on every dashboard the folder holds"
requires_message := concat("", [
	"permission denied: you need ", concat(", ", sort({_text(requirement.action) | some requirement in input.requires})),
	" on every ", concat(" and ", sort({_noun(requirement.resource.kind) | some requirement in input.requires})),
	" the ", _noun(split(_text(input.action), ":")[0]), _requiring_verb(input.action),
])

_requiring_verb(action) := " holds" if {
	endswith(_text(action), ":delete")
} else := " reads"

# "connectors" -> "connector", "alert.rules" -> "alert rule"
_noun(kind) := trim_suffix(replace(_text(kind), ".", " "), "s")

# a value as text for a message or a reason; a malformed one must still be reported
_text(value) := value if is_string(value)

else := json.marshal(value)

delegation_message := concat("", [
	"permission denied: ", _granted_by(input.resource),
	" permissions you do not hold, and you can only grant what you hold",
])

_granted_by(resource) := concat("", ["role ", resource.uid, " grants"]) if {
	resource.kind == "roles"
	is_string(resource.uid)
} else := "this change grants"

# The one definition of "allowed", shared by allow (and so decision) and filter: some grant
# matched (has_grant) and no rule refuses the request (a server-only action, delegation, a server
# admin's membership, a move to a folder the subject may not create in, a requirement not
# granted, the author of a plan approving it or another user cancelling it). The refusals read
# only request.action and the request's own facts, never its resource, so filter asks them once
# for all its items, with the input as is (and each item's requires on its own).
passes_refusals(request) if {
	not server.refuses(request.action)
	not scim.refuses(request.action)
	delegation.allows(request)
	not delegation.protects_server_admin(request)
	_destination_allows(request)
	requirements_met(request)
	authorship.allows(request)
}

# Some requests need more than their own action (request.requires, a list of {action,
# resource}; in a filter, each item's own): reading an alert rule needs connectors:query on
# every connector its queries read. Each is asked through has_grant, as a decision of its own.
requirements_met(holder) if {
	not holder.requires
} else if {
	is_array(holder.requires)
	count(_unmet_requirements(holder)) == 0
}

# the requirements not granted, in the request's order
_unmet_requirements(holder) := [requirement |
	some requirement in holder.requires
	not has_grant(requirement.resource, requirement.action)
]

# the requirements not granted, as reasons: the first ten by name, then how many more. A request
# may require thousands (a folder delete requires what it removes), and building and sorting a
# reason each would cost a deny more than all of its checks.
unmet_requirements(holder) := array.concat(named, _more_unmet(count(unmet) - 10)) if {
	unmet := _unmet_requirements(holder)
	named := [_unmet(requirement) | some requirement in array.slice(unmet, 0, 10)]
}

_more_unmet(more) := [] if {
	more <= 0
} else := [{"kind": "unmet-more", "need": "requirement", "count": more}]

_unmet(requirement) := {"kind": "unmet", "need": "requirement", "action": _text(requirement.action), "scope": _resource_text(requirement.resource)}

_resource_text(resource) := scopes.target(resource).scope if {
	scopes.target(resource)
} else := _text(resource)

# A move lands the resource in another folder (request.destination): besides the action on the
# resource itself, the subject needs "<resource>:create" there, decided here in the same call.
_destination_allows(request) if {
	not request.destination
} else if {
	has_grant(request.destination, _creation_of(request.action))
}

# A request with nothing but subject, org_id, action and perhaps resource: none of the fields only
# some requests carry (chat, delegate, destination, requires, author, target_user, setup), so none
# of their refusals applies. Counting the keys and finding the common ones proves it in a few
# lookups; most denials are of such requests.
default _is_plain := false

_is_plain if {
	count(input) == 4
	_has_resource(input)
	_has_common_fields(input)
} else if {
	count(input) == 3
	_has_common_fields(input)
}

# each defined, whatever its value (null and false included). A function of the request rather
# than a rule: memoizing it would cost more than its three lookups.
_has_common_fields(request) if {
	_ = request.subject
	_ = request.org_id
	_ = request.action
}

# the create action of the action's resource: dashboards:write -> dashboards:create
_creation_of(action) := concat("", [split(action, ":")[0], ":create"]) if is_string(action)

_action := input.action if _is_action(input.action)

_is_action(action) if {
	is_string(action)
	action != ""
}

# defined for any value of request.resource, null and false included. A function of the input
# rather than a rule: an undefined rule (no resource) is worked out again on every reference.
_has_resource(request) if _ = request.resource

_target := scopes.target(input.resource)

_candidates := scopes.candidates(_target)

# what role permissions and legacy ACL entries grant, plus a subject's rights on itself (only
# ever on a users target), as sorted reasons; without a target, the action held on any scope
# counts, a member reads the org it is in, and anyone changes the open setup wizard's settings.
# A subject that may not act has no roles and no principals, so it is granted nothing.
#
# Each kind of reason is sorted on its own and the sorted arrays are joined, rather than a union
# of sets sorted at the end (a union builds a new set): the rules' reasons (a subject on itself,
# a member on its org, a server admin on an org) first, then legacy ACL entries, then roles',
# then the open setup wizard's.
default _grants := []

_grants := grants_on(input.resource, input.action) if {
	_granted
	_has_resource(input)
} else := array.concat(array.concat(self.org_grants(_action), sort(rbac.holders(subject.roles, _action))), setup.grants(_action)) if {
	_granted
}

# Whether the request's own action has a grant: on its resource (has_grant, with the target and
# candidates the reasons of a deny read too), or without one on some scope. True exactly when
# _grants is not empty. A rule, so that a deny does not work it out again for its reasons.
default _granted := false

_granted if {
	_has_resource(input)
	_has_target_grant(_target, _action, _candidates)
} else if {
	_has_resource(input)
	_has_grant_beside_roles(input.resource, input.action)
} else if {
	not _has_resource(input)
	_has_grant_on_some_scope(_action)
}

_has_grant_on_some_scope(action) if {
	count(rbac.holders(subject.roles, action)) > 0
} else if {
	count(self.org_grants(action)) > 0
} else if {
	count(setup.grants(action)) > 0
}

# Whether grants_on(resource, action) is not empty, without joining and sorting its reasons: the
# question allow, filter, a requirement and a destination ask. Role permissions, the common
# case, are asked first; the reasons themselves are few, it is their sorting that costs.
has_grant(resource, action) if {
	_is_action(action)
	target := scopes.target(resource)
	_has_target_grant(target, action, scopes.candidates(target))
} else if {
	_has_grant_beside_roles(resource, action)
}

# a subject's rights on itself, a server admin's on an org
_has_grant_beside_roles(resource, action) if {
	resource.kind == "users"
	count(self.grants(resource, action)) > 0
} else if {
	resource.kind == "orgs"
	count(server.org_grants(resource, action)) > 0
}

# Cheapest and likeliest first, as an else chain stops at its first match: the action itself held
# by the org role's roles (most allows: then the member's own roles and its teams' are neither
# worked out nor looked up); the action or its wildcards held by the other roles, in one pass so
# that a deny looks each of their long uids up once; the org role's roles' wildcards; legacy ACLs.
_has_target_grant(target, action, candidates) if {
	rbac.holds_exactly(subject.org_role_roles, action, candidates)
} else if {
	rbac.holds(subject.other_roles, action, candidates)
} else if {
	rbac.holds_through_wildcard(subject.org_role_roles, action, candidates)
} else if {
	count(legacy.grants(action, target, candidates)) > 0
}

# the grants that allow action on resource, as sorted reasons: a subject's rights on itself
# (only ever on a users target), a server admin's on an org, role permissions and legacy ACL
# entries: the decision's reasons. has_grant asks whether there is one, for allow and filter
# alike, so a list shows exactly what a single read allows.
grants_on(resource, action) := array.concat(self.grants(resource, action), _target_grants(resource, action)) if {
	resource.kind == "users"
} else := array.concat(server.org_grants(resource, action), _target_grants(resource, action)) if {
	resource.kind == "orgs"
} else := _target_grants(resource, action)

# the role permissions and legacy ACL entries that allow action on a resource, as sorted
# reasons; none on a resource of no known shape. It checks the action itself rather than read
# _action, one rule fewer to memoize.
default _target_grants(_, _) := []

_target_grants(resource, action) := _grants_on(target, action, scopes.candidates(target)) if {
	_is_action(action)
	target := scopes.target(resource)
}

_grants_on(target, action, candidates) := array.concat(sort(acl_grants), sort(rbac.grants(subject.roles, action, candidates))) if {
	acl_grants := legacy.grants(action, target, candidates)
	count(acl_grants) > 0
} else := sort(rbac.grants(subject.roles, action, candidates))

_denials contains problem if {
	not subject.is_active
	some problem in subject.problems
}

_denials contains {"kind": "input", "field": "action"} if not _action

_denials contains scopes.problem(input.resource) if {
	_has_resource(input)
	not _target
}

_denials contains _missing_grant if {
	subject.is_active
	count(_grants) == 0
}

_denials contains server.refusal if subject.is_active

_denials contains scim.refusal if subject.is_active

# what the fields only some requests carry add: none for a plain request, which skips their checks
_denials contains problem if {
	not _is_plain
	some problem in _denials_of_other_fields
}

_denials_of_other_fields contains problem if some problem in chat.problems

_denials_of_other_fields contains {"kind": "unmet", "need": "chat", "action": "chat:use"} if {
	subject.is_active
	not _may_use_chat(input)
}

_denials_of_other_fields contains problem if {
	subject.is_active
	some problem in delegation.missing(input)
}

# a destination of no known shape has no scope to name
_denials_of_other_fields contains object.union(
	{"kind": "unmet", "need": "destination", "action": _creation_of(input.action)},
	_destination_scope,
) if {
	subject.is_active
	not _destination_allows(input)
}

_destination_scope := {"scope": scopes.target(input.destination).scope} if {
	scopes.target(input.destination)
} else := {}

_denials_of_other_fields contains problem if {
	subject.is_active
	some problem in unmet_requirements(input)
}

_denials_of_other_fields contains {"kind": "input", "field": "requires"} if {
	input.requires
	not is_array(input.requires)
}

_denials_of_other_fields contains authorship.problem if {
	subject.is_active
	not authorship.allows(input)
}

_denials_of_other_fields contains delegation.server_admin_refusal if {
	subject.is_active
	delegation.protects_server_admin(input)
}

# the request's own action, granted on none of the target's candidate scopes (most specific
# first), or on no scope at all without a target
_missing_grant := {"kind": "missing", "action": _action, "scopes": _candidates} if {
	_candidates
} else := {"kind": "missing", "action": _action} if {
	not _has_resource(input)
}
