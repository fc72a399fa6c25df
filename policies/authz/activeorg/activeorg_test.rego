package authz.activeorg_test

import data.authz.activeorg

_user := {"id": "u1", "kind": "user", "server_admin": false, "disabled": false, "pinned_org": null}

_token(org) := {"id": "sa1", "kind": "service_account", "server_admin": false, "disabled": false, "pinned_org": org}

_decide(subject, org_id, is_member) := decision if {
	decision := activeorg.decision with input as {"subject": subject, "org_id": org_id, "org": {"is_member": is_member}}
}

test_a_member_acts_in_its_org if {
	_decide(_user, "org_a", true) == {"allow": true, "reasons": [{"kind": "active-org", "via": "membership", "org": "org_a"}]}
}

test_a_non_member_is_refused_with_the_org_it_named if {
	_decide(_user, "org_b", false) == {
		"allow": false,
		"reasons": [{"kind": "org", "problem": "not-member", "org": "org_b"}],
		"message": "user is not a member of org org_b",
	}
}

test_a_server_admin_needs_membership_too if {
	admin := object.union(_user, {"server_admin": true})
	not _decide(admin, "org_b", false).allow
}

test_a_user_of_no_org_is_refused if {
	_decide(_user, null, false) == {
		"allow": false,
		"reasons": [{"kind": "org", "problem": "no-org"}],
		"message": "user is not a member of any org",
	}
}

test_a_token_acts_in_its_pinned_org if {
	_decide(_token("org_a"), "org_a", true) == {"allow": true, "reasons": [{"kind": "active-org", "via": "token", "org": "org_a"}]}
}

test_a_token_naming_another_org_is_refused_even_where_its_owner_is_a_member if {
	_decide(_token("org_a"), "org_b", true) == {
		"allow": false,
		"reasons": [{"kind": "org", "problem": "pinned-elsewhere", "org": "org_a"}],
		"message": "this token can only act in org org_a",
	}
}

test_missing_or_malformed_facts_fail_closed if {
	not _decide(_user, "org_a", "yes").allow
	not _decide_input({"subject": _user, "org_id": "org_a"}).allow
	unpinned := object.remove(_user, ["pinned_org"])
	_decide(unpinned, "org_a", true) == {
		"allow": false,
		"reasons": [{"kind": "input", "field": "subject.pinned_org"}],
		"message": "permission denied",
	}
	not _decide(_token(""), "org_a", true).allow
	not _decide(_user, 7, true).allow
}

test_without_input_it_refuses if {
	_decide_input({}).allow == false
}

_decide_input(request) := decision if {
	decision := activeorg.decision with input as request
}
