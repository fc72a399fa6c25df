package authz_test

import data.authz

# org, user and server_admin come from decision_test.rego
_permissions(req) := _permissions_with(req, {"legacy_acl_enabled": false}, org.roles)

_permissions_with(req, settings, roles) := permissions if {
	permissions := authz.permissions with input as req
		with data.org_id as org.org_id
		with data.settings as settings
		with data.members as org.members
		with data.teams as org.teams
		with data.builtin_roles as org.builtin_roles
		with data.roles as roles
		with data.legacy_acl as org.legacy_acl
}

# what any subject that may act holds on its own record
_self_rights(id) := {action: {concat("", ["users:id:", id])} | some action in [
	"users:read", "users:write", "users.password:write", "users.preferences:read", "users.preferences:write",
	"users.permissions:read", "users.sessions:read", "users.sessions:write", "users.tokens:read", "users.tokens:write",
	"users.authlinks:read", "users.authlinks:write", "users.quotas:read",
]}

test_permissions_are_the_union_of_every_role_of_the_subject_and_its_rights_on_itself if {
	_permissions({"subject": user("u_ops"), "org_id": "org_main"}) == object.union(_self_rights("u_ops"), {
		"dashboards:read": {"dashboards:*", "folders:*"},
		"dashboards:write": {"folders:uid:f_team", "dashboards:uid:d_root"},
		"folders:read": {"folders:*"},
		"connectors:read": {"connectors:uid:c_open"},
		"connectors:query": {"connectors:uid:c_open", "connectors:uid:c_restricted"},
		"teams:read": {"teams:*"},
		"chat:use": {"*"},
	})
}

test_a_viewer_queries_the_connectors_its_role_entries_name_and_no_other if {
	_permissions({"subject": user("u_viewer"), "org_id": "org_main"})["connectors:query"] == {"connectors:uid:c_open"}
}

test_server_only_actions_are_not_listed_for_whom_decision_refuses_them if {
	roles := object.union(org.roles, {"basic:viewer": {"orgs:create": {"*": true}, "teams:read": {"teams:*": true}}})
	held := _permissions_with({"subject": user("u_viewer"), "org_id": "org_main"}, {"legacy_acl_enabled": false}, roles)
	not held["orgs:create"]
	held["teams:read"] == {"teams:*"}
}

test_legacy_acl_entries_are_listed_as_the_actions_of_their_levels_when_enabled if {
	req := {"subject": user("u_none"), "org_id": "org_main"}
	_permissions(req) == _self_rights("u_none")
	_permissions_with(req, {"legacy_acl_enabled": true}, org.roles) == object.union(_self_rights("u_none"), {
		# user:u_none View on d_root, team:t_legacy Edit on f_root, role:None Admin on f_team
		"dashboards:read": {"dashboards:uid:d_root", "folders:uid:f_root", "folders:uid:f_team"},
		"folders:read": {"folders:uid:f_root", "folders:uid:f_team"},
		"dashboards:write": {"folders:uid:f_root", "folders:uid:f_team"},
		"dashboards:create": {"folders:uid:f_root", "folders:uid:f_team"},
		"dashboards:delete": {"folders:uid:f_root", "folders:uid:f_team"},
		"folders:write": {"folders:uid:f_root", "folders:uid:f_team"},
		"folders:create": {"folders:uid:f_root", "folders:uid:f_team"},
		"folders:delete": {"folders:uid:f_root", "folders:uid:f_team"},
		"dashboards.permissions:read": {"folders:uid:f_team"},
		"dashboards.permissions:write": {"folders:uid:f_team"},
		"folders.permissions:read": {"folders:uid:f_team"},
		"folders.permissions:write": {"folders:uid:f_team"},
	})
}

test_member_without_roles_holds_its_rights_on_itself_only if {
	_permissions({"subject": user("u_root"), "org_id": "org_main"}) == _self_rights("u_root")
}

test_non_member_holds_nothing if {
	_permissions({"subject": user("u_stranger"), "org_id": "org_main"}) == {}
}

test_server_admin_holds_the_administration_of_the_org_member_or_not if {
	_permissions({"subject": server_admin("u_stranger"), "org_id": "org_main"}) == {action: {"orgs:id:org_main"} | some action in [
		"orgs:read", "orgs:write", "org.users:read", "org.users:add", "org.users:write",
		"org.users:remove", "orgs.preferences:read", "orgs.preferences:write", "orgs.quotas:read", "orgs.quotas:write",
	]}
}

test_disabled_subject_holds_nothing if {
	_permissions({"subject": object.union(user("u_admin"), {"disabled": true}), "org_id": "org_main"}) == {}
	_permissions({"subject": object.union(server_admin("u_stranger"), {"disabled": true}), "org_id": "org_main"}) == {}
}

test_server_admin_outside_an_org_holds_basic_server_admin if {
	_permissions({"subject": server_admin("u_stranger"), "org_id": null}) == object.union(_self_rights("u_stranger"), {"*": {"*"}})
}

test_permissions_of_garbage_input_are_empty if {
	_permissions("junk") == {}
}
