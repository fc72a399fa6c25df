package authz.legacy_test

import data.authz.legacy

_members := {"u_ops": {"role": "Editor", "teams": ["t_ops"], "roles": []}}

_acl := {
	"dashboards:uid:d1": {"user:u_ops": 1, "user:u_other": 4},
	"folders:uid:f_team": {"team:t_ops": 2},
	"folders:uid:f_root": {"role:Editor": 4, "role:Viewer": 1},
	"folders:uid:f_odd": {"user:u_ops": "4"},
}

_dashboard := {"kind": "dashboards", "attr": "uid", "value": "d1", "scope": "dashboards:uid:d1"}

_dashboard_scopes := ["dashboards:uid:d1", "folders:uid:f_team", "folders:uid:f_root", "dashboards:*", "*"]

_grants(action, target, scopes, enabled) := grants if {
	grants := legacy.grants(action, target, scopes) with input as {
		"subject": {"id": "u_ops", "kind": "user", "server_admin": false, "disabled": false},
		"org_id": "org_main",
	}
		with data.org_id as "org_main"
		with data.members as _members
		with data.legacy_acl as _acl
		with data.settings.legacy_acl_enabled as enabled
}

test_disabled_acl_grants_nothing if {
	_grants("dashboards:read", _dashboard, _dashboard_scopes, false) == set()
}

test_missing_setting_means_disabled if {
	not legacy.is_enabled({})
	legacy.is_enabled({"legacy_acl_enabled": true})
}

test_view_level_on_the_dashboard_for_the_user_allows_read if {
	_grants("dashboards:read", _dashboard, ["dashboards:uid:d1"], true) == {{"kind": "acl", "level": 1, "scope": "dashboards:uid:d1", "principal": "user:u_ops"}}
}

test_view_level_does_not_allow_write if {
	_grants("dashboards:write", _dashboard, ["dashboards:uid:d1"], true) == set()
}

test_edit_level_on_an_ancestor_folder_for_a_team_allows_write_create_delete if {
	every action in ["dashboards:write", "dashboards:create", "dashboards:delete"] {
		entry := {"kind": "acl", "level": 2, "scope": "folders:uid:f_team", "principal": "team:t_ops"}
		_grants(action, _dashboard, ["dashboards:uid:d1", "folders:uid:f_team"], true) == {entry}
	}
}

test_edit_level_does_not_manage_permissions if {
	_grants("dashboards.permissions:write", _dashboard, ["dashboards:uid:d1", "folders:uid:f_team"], true) == set()
}

test_admin_level_for_the_org_role_manages_permissions if {
	entry := {"kind": "acl", "level": 4, "scope": "folders:uid:f_root", "principal": "role:Editor"}
	_grants("dashboards.permissions:write", _dashboard, _dashboard_scopes, true) == {entry}
}

test_every_entry_that_allows_is_listed if {
	_grants("dashboards:read", _dashboard, _dashboard_scopes, true) == {
		{"kind": "acl", "level": 1, "scope": "dashboards:uid:d1", "principal": "user:u_ops"},
		{"kind": "acl", "level": 2, "scope": "folders:uid:f_team", "principal": "team:t_ops"},
		{"kind": "acl", "level": 4, "scope": "folders:uid:f_root", "principal": "role:Editor"},
	}
}

test_folder_target_is_covered if {
	folder := {"kind": "folders", "attr": "uid", "value": "f_team", "scope": "folders:uid:f_team"}
	_grants("folders:write", folder, ["folders:uid:f_team", "folders:uid:f_root"], true) == {
		{"kind": "acl", "level": 2, "scope": "folders:uid:f_team", "principal": "team:t_ops"},
		{"kind": "acl", "level": 4, "scope": "folders:uid:f_root", "principal": "role:Editor"},
	}
}

test_other_targets_are_not_covered if {
	rule := {"kind": "alert.rules", "attr": "uid", "value": "r1", "scope": "alert.rules:uid:r1"}
	_grants("dashboards:read", rule, ["alert.rules:uid:r1", "folders:uid:f_root"], true) == set()
}

test_actions_the_acl_does_not_know_are_not_covered if {
	_grants("annotations:write", _dashboard, _dashboard_scopes, true) == set()
}

test_a_level_that_is_not_a_number_is_ignored if {
	_grants("dashboards:read", _dashboard, ["folders:uid:f_odd"], true) == set()
}

_folder := {"kind": "folders", "attr": "uid", "value": "f1", "scope": "folders:uid:f1"}

_grants_at_level(level, action) := grants if {
	grants := legacy.grants(action, _folder, ["folders:uid:f1"]) with input as {
		"subject": {"id": "u_ops", "kind": "user", "server_admin": false, "disabled": false},
		"org_id": "org_main",
	}
		with data.org_id as "org_main"
		with data.members as _members
		with data.legacy_acl as {"folders:uid:f1": {"user:u_ops": level}}
		with data.settings.legacy_acl_enabled as true
}

_levels := {
	"dashboards:read": 1, "folders:read": 1,
	"dashboards:write": 2, "dashboards:create": 2, "dashboards:delete": 2,
	"folders:write": 2, "folders:create": 2, "folders:delete": 2,
	"dashboards.permissions:read": 4, "dashboards.permissions:write": 4,
	"folders.permissions:read": 4, "folders.permissions:write": 4,
}

test_each_action_needs_its_level if {
	every action, level in _levels {
		count(_grants_at_level(level, action)) == 1
		count(_grants_at_level(level / 2, action)) == 0
	}
}

test_the_listed_actions_are_those_with_a_level if {
	{action | some action in legacy.actions} == object.keys(_levels)
	count(legacy.actions) == count(_levels)
}

test_an_entry_on_a_dashboard_covers_its_dashboard_actions_only if {
	_grants("dashboards:read", _dashboard, ["dashboards:uid:d1"], true) != set()
	_grants("folders:read", _dashboard, ["dashboards:uid:d1"], true) == set()
}

_held(acl, enabled) := held if {
	held := legacy.held with input as {
		"subject": {"id": "u_ops", "kind": "user", "server_admin": false, "disabled": false},
		"org_id": "org_main",
	}
		with data.org_id as "org_main"
		with data.members as _members
		with data.legacy_acl as acl
		with data.settings.legacy_acl_enabled as enabled
}

test_held_lists_each_scope_at_the_highest_level_of_the_subjects_entries if {
	_held(_acl, true) == {
		# u_ops's View on d1 (u_other's Admin there is not its own)
		"dashboards:read": {"dashboards:uid:d1", "folders:uid:f_team", "folders:uid:f_root"},
		"folders:read": {"folders:uid:f_team", "folders:uid:f_root"},
		# its team's Edit on f_team, its org role's Admin on f_root (role:Viewer's View there is not its own)
		"dashboards:write": {"folders:uid:f_team", "folders:uid:f_root"},
		"dashboards:create": {"folders:uid:f_team", "folders:uid:f_root"},
		"dashboards:delete": {"folders:uid:f_team", "folders:uid:f_root"},
		"folders:write": {"folders:uid:f_team", "folders:uid:f_root"},
		"folders:create": {"folders:uid:f_team", "folders:uid:f_root"},
		"folders:delete": {"folders:uid:f_team", "folders:uid:f_root"},
		"dashboards.permissions:read": {"folders:uid:f_root"},
		"dashboards.permissions:write": {"folders:uid:f_root"},
		"folders.permissions:read": {"folders:uid:f_root"},
		"folders.permissions:write": {"folders:uid:f_root"},
	}
}

test_held_is_empty_when_the_acl_is_off if {
	_held(_acl, false) == {}
}

test_a_level_other_than_1_2_or_4_is_named_as_it_is if {
	grants := legacy.grants("dashboards:write", _dashboard, ["dashboards:uid:d1"]) with input as {
		"subject": {"id": "u_ops", "kind": "user", "server_admin": false, "disabled": false},
		"org_id": "org_main",
	}
		with data.org_id as "org_main"
		with data.members as _members
		with data.legacy_acl as {"dashboards:uid:d1": {"user:u_ops": 3}}
		with data.settings.legacy_acl_enabled as true
	grants == {{"kind": "acl", "level": 3, "scope": "dashboards:uid:d1", "principal": "user:u_ops"}}
}
