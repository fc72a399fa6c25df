package authz_test

import data.authz

# org, user and dashboard come from decision_test.rego
_filter(req) := indexes if {
	indexes := authz.filter with input as req
		with data.org_id as org.org_id
		with data.settings as org.settings
		with data.members as org.members
		with data.teams as org.teams
		with data.builtin_roles as org.builtin_roles
		with data.roles as org.roles
		with data.folders as org.folders
		with data.dashboards as org.dashboards
		with data.legacy_acl as org.legacy_acl
}

_batch(subject, action, resources) := {"subject": subject, "org_id": "org_main", "action": action, "resources": resources}

test_filter_keeps_the_indexes_of_allowed_resources if {
	resources := [
		dashboard("d_deep"),
		dashboard("d_top"),
		dashboard("d_root"),
		{"kind": "bananas", "uid": "b1"},
		{"kind": "folders", "uid": "f_team"},
	]
	_filter(_batch(user("u_ops"), "dashboards:write", resources)) == [0, 2, 4]
}

test_filter_keeps_the_connectors_granted_to_the_subject if {
	resources := [{"kind": "connectors", "uid": "c_restricted"}, {"kind": "connectors", "uid": "c_open"}]
	_filter(_batch(user("u_viewer"), "connectors:query", resources)) == [1]
}

test_filter_applies_the_legacy_acl if {
	resources := [dashboard("d_root"), dashboard("d_top"), {"kind": "teams", "id": 1}]
	_filter(_batch(user("u_none"), "dashboards:read", resources)) == [0, 1]
}

test_filter_for_a_non_member_is_empty if {
	_filter(_batch(user("u_stranger"), "dashboards:read", [dashboard("d_root")])) == []
}

test_filter_without_action_is_empty if {
	_filter(_batch(user("u_admin"), "", [dashboard("d_root")])) == []
}

test_filter_of_resources_that_are_not_an_array_is_empty if {
	_filter(_batch(user("u_admin"), "dashboards:read", {"0": dashboard("d_root")})) == []
}

_requiring_query(resource, connector_uid) := object.union(resource, {"requires": [_query_on(connector_uid)]})

test_filter_checks_the_requirements_of_each_item if {
	resources := [_requiring_query(dashboard("d_deep"), "c_restricted"), _requiring_query(dashboard("d_top"), "c_open"), dashboard("d_root")]
	_filter(_batch(user("u_viewer"), "dashboards:read", resources)) == [1, 2]
	_filter(_batch(user("u_ops"), "dashboards:read", resources)) == [0, 1, 2]
}

test_filter_applies_a_subjects_rights_on_itself if {
	resources := [{"kind": "users", "id": "u_viewer"}, {"kind": "users", "id": "u_admin"}]
	_filter(_batch(user("u_viewer"), "users.preferences:read", resources)) == [0]
}
