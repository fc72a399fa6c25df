package authz_test

import data.authz

# org, user and server_admin come from decision_test.rego
_permissions(req) := permissions if {
	permissions := authz.permissions with input as req
		with data.org_id as org.org_id
		with data.members as org.members
		with data.teams as org.teams
		with data.builtin_roles as org.builtin_roles
		with data.roles as org.roles
}

test_permissions_are_the_union_of_every_role_of_the_subject if {
	_permissions({"subject": user("u_ops"), "org_id": "org_main"}) == {
		"dashboards:read": {"dashboards:*", "folders:*"},
		"dashboards:write": {"folders:uid:f_team", "dashboards:uid:d_root"},
		"folders:read": {"folders:*"},
		"connectors:read": {"connectors:uid:c_open"},
		"connectors:query": {"connectors:uid:c_open", "connectors:uid:c_restricted"},
		"teams:read": {"teams:*"},
		"chat:use": {"*"},
	}
}

test_member_without_roles_holds_nothing if {
	_permissions({"subject": user("u_none"), "org_id": "org_main"}) == {}
}

test_non_member_holds_nothing if {
	_permissions({"subject": server_admin("u_stranger"), "org_id": "org_main"}) == {}
}

test_disabled_subject_holds_nothing if {
	_permissions({"subject": object.union(user("u_admin"), {"disabled": true}), "org_id": "org_main"}) == {}
}

test_server_admin_outside_an_org_holds_basic_server_admin if {
	_permissions({"subject": server_admin("u_stranger"), "org_id": null}) == {"*": {"*"}}
}

test_permissions_of_garbage_input_are_empty if {
	_permissions("junk") == {}
}
