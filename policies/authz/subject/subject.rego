# METADATA
# description: |
#   Who is asking: whether the subject may act in input.org_id at all, and the role uids that
#   apply to it there. A server admin needs membership like anyone else; with org_id null only a
#   server admin acts, through basic:server_admin.
package authz.subject

# Compiled Rego memoizes every rule without arguments, and that costs more than the test it
# caches: the hot path keeps to a few rules (_active_member, roles, principals) built from
# functions of input.subject.

default is_active := false

default is_server_admin := false

# a default, so that the common answer (no) is memoized too
default _is_server_level_admin := false

# the subject's id, when it is usable as a key of data.members
id := input.subject.id if _has_id(input.subject)

# the org the request acts in, when it names one
org_id := input.org_id if _is_org_id(input.org_id)

# server-level actions (create an org, the audit log, server stats) carry org_id null
is_server_level if input.org_id == null

# the flag only counts for users: a service account is never a server admin
is_server_admin if _is_server_admin(input.subject)

is_active if _active_member

else if _is_server_level_admin

# the role uids that apply, as an array: a role listed twice only repeats a lookup, and a set
# costs more to build
roles := array.concat(org_role_roles, other_roles)

# the roles that come with the member's org role (data.builtin_roles), apart from the rest: most
# allows come from them, so authz asks them first, and they are few, shared and short
default org_role_roles := []

org_role_roles := object.get(data.builtin_roles, member.role, []) if member := _active_member

# the member's own roles, its teams' and basic:server_admin for a server admin; outside an org, a
# server admin's basic:server_admin
default other_roles := []

other_roles := _member_roles(member) if member := _active_member

else := ["basic:server_admin"] if _is_server_level_admin

# the keys under which the legacy ACL names this subject
principals contains concat("", ["user:", input.subject.id]) if _active_member

principals contains concat("", ["team:", team]) if {
	some team in _active_member.teams
	is_string(team)
}

principals contains concat("", ["role:", role]) if {
	role := _active_member.role
	is_string(role)
}

# why the subject may not act; read only on a deny. Identity problems hide org problems, so an
# anonymous or disabled subject is not also told it is not a member.
problems := _identity_problems if count(_identity_problems) > 0

problems := _org_problems if count(_identity_problems) == 0

# a user or service account with an id that is not disabled; says nothing about org membership
is_enabled if _is_enabled(input.subject)

# the subject's record, when it is enabled and a member of the org the data is for
_active_member := member if {
	_is_enabled(input.subject)
	member := _member_of(input.subject.id, input.org_id)
}

_member_of(id, org) := data.members[id] if {
	_is_org_id(org)
	data.org_id == org
}

# whether the subject is listed at all, enabled or not; read only on a deny
_member := _member_of(id, org_id)

_has_id(subject) if {
	is_string(subject.id)
	subject.id != ""
}

_is_org_id(org) if {
	is_string(org)
	org != ""
}

_is_enabled(subject) if {
	_has_id(subject)
	_is_principal_kind(subject.kind)
	subject.disabled == false
}

_is_server_admin(subject) if {
	subject.kind == "user"
	subject.server_admin == true
}

_is_principal_kind("user")

_is_principal_kind("service_account")

# the test most requests fail comes first
_is_server_level_admin if {
	input.org_id == null
	_is_server_admin(input.subject)
	_is_enabled(input.subject)
}

# a member's direct roles and its teams', and basic:server_admin for a server admin
_member_roles(member) := array.concat(_own_roles(member), ["basic:server_admin"]) if _is_server_admin(input.subject)

else := _own_roles(member)

_own_roles(member) := array.concat(object.get(member, "roles", []), _team_roles(member))

_team_roles(member) := [role |
	some team in object.get(member, "teams", [])
	some role in data.teams[team].roles
]

# as reasons {kind: "subject", problem[, subjectKind]} and {kind: "org", problem[, org]}
_identity_problems := {_subject_problem("anonymous")} if input.subject.kind == "anonymous"

_identity_problems := _subject_problems if not input.subject.kind == "anonymous"

_subject_problem(problem) := {"kind": "subject", "problem": problem}

_org_problem(problem) := {"kind": "org", "problem": problem}

_subject_problems contains _subject_problem("missing") if not _has_subject

_subject_problems contains _subject_problem("no-id") if {
	_has_subject
	not id
}

_subject_problems contains _subject_problem("no-kind") if {
	_has_subject
	not _has_kind
}

_subject_problems contains {"kind": "subject", "problem": "unknown-kind", "subjectKind": input.subject.kind} if {
	is_string(input.subject.kind)
	not _is_principal_kind(input.subject.kind)
}

_subject_problems contains _subject_problem("disabled") if input.subject.disabled == true

# fail closed: a subject whose disabled flag is missing is not taken to be enabled
_subject_problems contains _subject_problem("disabled-not-boolean") if {
	_has_subject
	not _has_disabled_flag
}

_org_problems contains _org_problem("no-org-id") if {
	not org_id
	not is_server_level
}

_org_problems contains _org_problem("server-level") if {
	is_server_level
	not is_server_admin
}

_org_problems contains {"kind": "org", "problem": "other-document", "org": org_id} if {
	org_id
	not data.org_id == org_id
}

_org_problems contains {"kind": "org", "problem": "not-member", "org": org_id} if {
	data.org_id == org_id
	not _member
}

# helpers, not inline calls: a negated call whose argument is undefined does not succeed
_has_subject if is_object(input.subject)

_has_kind if is_string(input.subject.kind)

_has_disabled_flag if is_boolean(input.subject.disabled)
