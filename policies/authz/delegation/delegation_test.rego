package authz.delegation_test

import data.authz.delegation

_roles := {
	"basic:viewer": {"dashboards:read": {"dashboards:*": true}},
	"fixed:roles:writer": {"roles:write": {"roles:*": true}},
	"managed:users:u2:permissions": {"dashboards:write": {"folders:uid:f1": true}},
	"basic:admin": {"*": {"*": true}},
}

_members := {
	"u1": {"role": "Viewer", "teams": [], "roles": ["fixed:roles:writer"]},
	"u2": {"role": "None", "teams": [], "roles": ["managed:users:u2:permissions"]},
	"u3": {"role": "Admin", "teams": [], "roles": []},
}

_request(id, delegate) := {
	"subject": {"id": id, "kind": "user", "server_admin": false, "disabled": false},
	"org_id": "org_main",
	"action": "roles:write",
	"delegate": delegate,
}

_allows(req) if {
	delegation.allows(req) with input as req
		with data.org_id as "org_main"
		with data.members as _members
		with data.roles as _roles
		with data.builtin_roles as {"None": [], "Viewer": ["basic:viewer"], "Admin": ["basic:admin"]}
		with data.teams as {}
}

_missing(req) := missing if {
	missing := delegation.missing(req) with input as req
		with data.org_id as "org_main"
		with data.members as _members
		with data.roles as _roles
		with data.builtin_roles as {"None": [], "Viewer": ["basic:viewer"], "Admin": ["basic:admin"]}
		with data.teams as {}
}

test_nothing_to_delegate_is_allowed if {
	_allows({"subject": {"id": "u1", "kind": "user", "server_admin": false, "disabled": false}, "org_id": "org_main", "action": "roles:write"})
	_allows(_request("u1", []))
}

test_a_held_permission_can_be_granted if {
	_allows(_request("u1", [{"action": "dashboards:read", "scope": "dashboards:uid:d1"}]))
	_allows(_request("u1", [{"action": "dashboards:read", "scope": "dashboards:*"}]))
}

test_a_permission_not_held_cannot_be_granted if {
	req := _request("u1", [{"action": "dashboards:write", "scope": "dashboards:uid:d1"}, {"action": "dashboards:read", "scope": "*"}])
	not _allows(req)
	_missing(req) == {
		{"kind": "unmet", "need": "delegation", "action": "dashboards:write", "scope": "dashboards:uid:d1"},
		{"kind": "unmet", "need": "delegation", "action": "dashboards:read", "scope": "*"},
	}
}

test_a_narrow_grant_does_not_cover_a_wider_one if {
	_allows(_request("u2", [{"action": "dashboards:write", "scope": "folders:uid:f1"}]))
	not _allows(_request("u2", [{"action": "dashboards:write", "scope": "folders:*"}]))
	not _allows(_request("u2", [{"action": "dashboards:*", "scope": "folders:uid:f1"}]))
}

test_an_admin_holding_everything_can_grant_anything if {
	_allows(_request("u3", [{"action": "*", "scope": "*"}, {"action": "teams:write", "scope": "teams:id:7"}]))
}

test_malformed_items_are_not_held if {
	not _allows(_request("u3", [{"action": 5, "scope": "*"}]))
}

test_covering_scopes if {
	delegation.covering_scopes("dashboards:uid:d1") == ["dashboards:uid:d1", "dashboards:uid:*", "dashboards:*", "*"]
	delegation.covering_scopes("*") == ["*"]
	delegation.covering_scopes("teams:*") == ["teams:*", "*"]
}

test_a_delegate_that_is_not_a_list_is_refused if {
	not _allows(_request("u3", "everything"))
}

_member_change(action, caller_is_server_admin, target_is_server_admin) := {
	"subject": {"id": "u3", "kind": "user", "server_admin": caller_is_server_admin, "disabled": false},
	"org_id": "org_main",
	"action": action,
	"target_user": {"server_admin": target_is_server_admin},
}

_protects(req) if delegation.protects_server_admin(req) with input as req

test_an_org_admin_may_not_change_a_server_admins_membership if {
	every action in ["org.users:write", "org.users:remove"] {
		_protects(_member_change(action, false, true))
	}
}

test_a_server_admin_may_change_another_server_admins_membership if {
	not _protects(_member_change("org.users:write", true, true))
}

test_an_org_admin_may_change_an_ordinary_member if {
	not _protects(_member_change("org.users:remove", false, false))
}

test_other_actions_are_not_protected if {
	not _protects(_member_change("org.users:read", false, true))
}

_tree := {
	"f1": {"scopes": ["folders:uid:f1"]},
	"f2": {"scopes": ["folders:uid:f2", "folders:uid:f1"]},
	"f9": {"scopes": ["folders:uid:f9"]},
}

_allows_in_tree(req) if {
	delegation.allows(req) with input as req
		with data.org_id as "org_main"
		with data.members as _members
		with data.roles as _roles
		with data.builtin_roles as {"None": [], "Viewer": ["basic:viewer"], "Admin": ["basic:admin"]}
		with data.teams as {}
		with data.folders as _tree
		with data.dashboards as {"d2": {"folder": "f2"}, "d9": {"folder": "f9"}}
		with data.alert_rules as {"r2": {"folder": "f2"}}
}

test_a_folder_grant_covers_what_inherits_from_the_folder if {
	_allows_in_tree(_request("u2", [{"action": "dashboards:write", "scope": "folders:uid:f2"}]))
	_allows_in_tree(_request("u2", [{"action": "dashboards:write", "scope": "dashboards:uid:d2"}]))
	_allows_in_tree(_request("u2", [{"action": "dashboards:write", "scope": "alert.rules:uid:r2"}]))
}

test_a_folder_grant_covers_nothing_outside_the_folder if {
	not _allows_in_tree(_request("u2", [{"action": "dashboards:write", "scope": "folders:uid:f9"}]))
	not _allows_in_tree(_request("u2", [{"action": "dashboards:write", "scope": "dashboards:uid:d9"}]))
	not _allows_in_tree(_request("u2", [{"action": "dashboards:write", "scope": "dashboards:uid:unknown"}]))
	not _allows_in_tree(_request("u2", [{"action": "dashboards:write", "scope": "teams:id:f1"}]))
}
