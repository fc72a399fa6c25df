package authz.authorship_test

import data.authz.authorship

_alice := {"id": "u_alice", "kind": "user", "server_admin": false, "disabled": false}

_bob := object.union(_alice, {"id": "u_bob"})

_request(subject, must) := {"subject": subject, "action": "connectors:write", "author": {"kind": "user", "id": "u_alice", "must": must}}

test_a_request_without_an_author_is_not_checked if {
	authorship.allows({"subject": _alice, "action": "connectors:write"})
}

test_differ_refuses_the_author_and_lets_anyone_else if {
	not authorship.allows(_request(_alice, "differ"))
	authorship.allows(_request(_bob, "differ"))
}

test_match_lets_only_the_author if {
	authorship.allows(_request(_alice, "match"))
	not authorship.allows(_request(_bob, "match"))
}

test_a_service_account_with_the_same_id_is_not_the_author if {
	robot := object.union(_alice, {"kind": "service_account"})
	authorship.allows(_request(robot, "differ"))
	not authorship.allows(_request(robot, "match"))
}

test_a_malformed_author_refuses_everyone if {
	every author in [
		null,
		false,
		"u_alice",
		{"kind": "user", "id": "u_alice"},
		{"kind": "user", "id": "u_alice", "must": "maybe"},
		{"kind": "user", "id": "", "must": "differ"},
		{"kind": "user", "id": 7, "must": "differ"},
		{"id": "u_alice", "must": "differ"},
	] {
		every subject in [_alice, _bob] {
			not authorship.allows({"subject": subject, "action": "connectors:write", "author": author})
		}
	}
}

test_the_messages_and_problems_name_the_rule_only if {
	authorship.message == "permission denied: a plan's author may not approve it; another user must" with input as _request(_alice, "differ")
	authorship.message == "permission denied: only a plan's author may cancel it" with input as _request(_bob, "match")
	authorship.problem == {"kind": "author", "must": "differ"} with input as _request(_alice, "differ")
	authorship.problem == {"kind": "author", "must": "match"} with input as _request(_bob, "match")
	malformed := {"subject": _bob, "author": {"id": "u_alice"}}
	not authorship.message with input as malformed
	authorship.problem == {"kind": "input", "field": "author"} with input as malformed
}
