# METADATA
# description: |
#   Whether a request may act in the org it asks for, decided before any org's data is loaded.
#   TypeScript names the org (input.org_id: X-Svc-Org-Id, then ?orgId, then the token's pinned
#   org, then the user's default org; null when there is none) and gathers the facts about it
#   (input.subject.pinned_org, input.org.is_member); this refuses a service-account token outside
#   the org it is pinned to and a user outside the orgs it belongs to. It reads the input only,
#   so it runs without any org's document: an org id made up by the caller loads none, and the
#   answer is the same whether the org exists or not. What the subject may do inside the org is
#   the decision's.
package authz.activeorg

# Always defined. Every refusal carries a message safe to show: it names only the org the
# caller's own token is pinned to, or the org the caller named.
decision := {"allow": true, "reasons": [_acceptance]} if {
	_acceptance
} else := {"allow": false, "reasons": [refusal[0]], "message": refusal[1]} if {
	refusal := _refusal
}

# as reasons: {kind: "active-org", via: "token" | "membership", org} when accepted, {kind: "org",
# problem, org} or {kind: "input", field} when refused
_acceptance := {"kind": "active-org", "via": "token", "org": input.org_id} if {
	_is_pinned(input.subject)
	input.org_id == input.subject.pinned_org
} else := {"kind": "active-org", "via": "membership", "org": input.org_id} if {
	input.subject.pinned_org == null
	is_string(input.org_id)
	input.org.is_member == true
}

# [reason, message]; a token's pin is checked first: it holds whatever the token's owner belongs to
_refusal := [
	{"kind": "org", "problem": "pinned-elsewhere", "org": pinned},
	concat("", ["this token can only act in org ", pinned]),
] if {
	_is_pinned(input.subject)
	pinned := input.subject.pinned_org
	input.org_id != pinned
} else := [{"kind": "org", "problem": "no-org"}, "user is not a member of any org"] if {
	input.subject.pinned_org == null
	input.org_id == null
} else := [{"kind": "org", "problem": "not-member", "org": input.org_id}, concat("", ["user is not a member of org ", input.org_id])] if {
	input.subject.pinned_org == null
	is_string(input.org_id)

	# fail closed: a missing or non-boolean is_member is not membership
	not input.org.is_member == true
} else := [{"kind": "input", "field": "subject.pinned_org"}, "permission denied"]

_is_pinned(subject) if {
	is_string(subject.pinned_org)
	subject.pinned_org != ""
}
