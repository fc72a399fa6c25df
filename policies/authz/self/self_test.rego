package authz.self_test

import data.authz.self

_members := {"u1": {"role": "None", "teams": [], "roles": []}}

_grants(req) := grants if {
	grants := {reason | some reason in self.grants(req.resource, req.action)} with input as req
		with data.org_id as "org_main"
		with data.members as _members
}

_user(id) := {"id": id, "kind": "user", "server_admin": false, "disabled": false}

_own(id) := {"kind": "users", "id": id}

test_a_user_reads_itself_outside_an_org if {
	_grants({"subject": _user("u9"), "org_id": null, "action": "users:read", "resource": _own("u9")}) == {{"kind": "rule", "rule": "self", "action": "users:read"}}
}

test_a_member_manages_itself_in_its_org if {
	req := {"subject": _user("u1"), "org_id": "org_main", "action": "users.permissions:read", "resource": _own("u1")}
	_grants(req) == {{"kind": "rule", "rule": "self", "action": "users.permissions:read"}}
}

test_not_in_an_org_it_does_not_belong_to if {
	count(_grants({"subject": _user("u9"), "org_id": "org_main", "action": "users:read", "resource": _own("u9")})) == 0
}

test_not_on_another_user if {
	count(_grants({"subject": _user("u1"), "org_id": null, "action": "users:read", "resource": _own("u2")})) == 0
}

test_no_privilege_through_self if {
	count(_grants({"subject": _user("u1"), "org_id": null, "action": "users.permissions:write", "resource": _own("u1")})) == 0
}

test_not_when_disabled if {
	disabled := object.union(_user("u1"), {"disabled": true})
	count(_grants({"subject": disabled, "org_id": null, "action": "users:read", "resource": _own("u1")})) == 0
}

test_not_for_anonymous if {
	anonymous := {"kind": "anonymous", "id": "", "server_admin": false, "disabled": false}
	count(_grants({"subject": anonymous, "org_id": null, "action": "users:read", "resource": _own("")})) == 0
}

_org_grants(req) := grants if {
	grants := self.org_grants(req.action) with input as req
		with data.org_id as "org_main"
		with data.members as _members
}

test_a_member_of_any_role_reads_the_org_it_is_in if {
	_org_grants({"subject": _user("u1"), "org_id": "org_main", "action": "orgs:read"}) == [{"kind": "rule", "rule": "member", "action": "orgs:read"}]
}

test_not_another_org_nor_at_server_level if {
	_org_grants({"subject": _user("u9"), "org_id": "org_main", "action": "orgs:read"}) == []
	_org_grants({"subject": _user("u1"), "org_id": null, "action": "orgs:read"}) == []
}

test_reading_the_org_is_all_a_member_gets if {
	_org_grants({"subject": _user("u1"), "org_id": "org_main", "action": "orgs:write"}) == []
	disabled := object.union(_user("u1"), {"disabled": true})
	_org_grants({"subject": disabled, "org_id": "org_main", "action": "orgs:read"}) == []
}

test_every_listed_action_is_a_self_action if {
	every action in self.actions {
		self.is_self_action(action)
	}
	count({action | some action in self.actions}) == 13
}
