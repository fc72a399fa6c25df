package authz.scopes_test

import data.authz.scopes

# f_deep sits in f_team, which sits in f_root
_folders := {
	"f_root": {"scopes": ["folders:uid:f_root"]},
	"f_team": {"scopes": ["folders:uid:f_team", "folders:uid:f_root"]},
	"f_deep": {"scopes": ["folders:uid:f_deep", "folders:uid:f_team", "folders:uid:f_root"]},
}

_dashboards := {"d_deep": {"folder": "f_deep"}, "d_root": {"folder": ""}}

_alert_rules := {"r_deep": {"folder": "f_deep"}}

_candidates(resource) := candidates if {
	candidates := scopes.candidates(scopes.target(resource)) with data.folders as _folders
		with data.dashboards as _dashboards
		with data.alert_rules as _alert_rules
}

test_target_of_kind_and_uid if {
	scopes.target({"kind": "dashboards", "uid": "d1"}) == {"kind": "dashboards", "attr": "uid", "value": "d1", "scope": "dashboards:uid:d1"}
}

test_target_of_kind_and_numeric_id if {
	scopes.target({"kind": "teams", "id": 4}) == {"kind": "teams", "attr": "id", "value": "4", "scope": "teams:id:4"}
}

test_target_of_kind_and_string_id if {
	scopes.target({"kind": "users", "id": "u1"}).scope == "users:id:u1"
}

test_target_of_a_full_scope_is_the_same_as_kind_and_uid if {
	scopes.target({"scope": "dashboards:uid:d1"}) == scopes.target({"kind": "dashboards", "uid": "d1"})
}

test_target_of_a_scope_keeps_colons_in_the_value if {
	scopes.target({"scope": "settings:auth:saml:enabled"}).value == "saml:enabled"
}

test_target_of_star_and_kind_wildcard if {
	scopes.target({"scope": "*"}) == {"scope": "*"}
	scopes.target({"scope": "teams:*"}) == {"kind": "teams", "scope": "teams:*"}
}

test_malformed_resources_have_no_target if {
	every resource in [
		{"kind": "dashboards"},
		{"kind": "dashboards", "uid": ""},
		{"kind": "dashboards", "uid": 7},
		{"kind": "dashboards", "id": true},
		{"kind": "dashboards", "scope": "dashboards:uid:d1"},
		{"kind": "bananas", "uid": "b1"},
		{"scope": "teams:4"},
		{"scope": ""},
		{"scope": ":uid:x"},
		{"scope": "teams::x"},
		{"scope": "teams:uid:"},
		{"scope": 42},
		{},
		"dashboards:uid:d1",
		null,
	] {
		not scopes.target(resource)
	}
}

test_problem_names_an_unknown_kind if {
	scopes.problem({"kind": "bananas", "uid": "b1"}) == {"kind": "input", "field": "resource", "resourceKind": "bananas"}
}

test_problem_of_a_malformed_resource if {
	scopes.problem({"scope": "teams:4"}) == {"kind": "input", "field": "resource"}
}

test_every_kind_is_known if {
	every kind in [
		"alert.rules", "alert.silences", "annotations", "apikeys", "connectors", "dashboards", "folders", "global.users",
		"investigations", "orgs", "roles", "serviceaccounts", "settings", "teams", "users",
	] {
		scopes.is_kind(kind)
	}
}

test_dashboard_inherits_from_its_folder_and_every_ancestor if {
	_candidates({"kind": "dashboards", "uid": "d_deep"}) == [
		"dashboards:uid:d_deep",
		"folders:uid:f_deep", "folders:uid:f_team", "folders:uid:f_root",
		"dashboards:uid:*", "dashboards:*",
		"folders:uid:*", "folders:*",
		"*",
	]
}

test_dashboard_at_the_root_is_covered_by_folder_wildcards_only if {
	_candidates({"kind": "dashboards", "uid": "d_root"}) == [
		"dashboards:uid:d_root",
		"dashboards:uid:*", "dashboards:*",
		"folders:uid:*", "folders:*",
		"*",
	]
}

test_dashboard_missing_from_the_index_inherits_nothing if {
	_candidates({"kind": "dashboards", "uid": "d_new"}) == ["dashboards:uid:d_new", "dashboards:uid:*", "dashboards:*", "*"]
}

test_folder_inherits_from_its_ancestors if {
	_candidates({"kind": "folders", "uid": "f_deep"}) == [
		"folders:uid:f_deep", "folders:uid:f_team", "folders:uid:f_root",
		"folders:uid:*", "folders:*",
		"*",
	]
}

test_alert_rule_is_folder_scoped if {
	_candidates({"kind": "alert.rules", "uid": "r_deep"}) == [
		"alert.rules:uid:r_deep",
		"folders:uid:f_deep", "folders:uid:f_team", "folders:uid:f_root",
		"alert.rules:uid:*", "alert.rules:*",
		"folders:uid:*", "folders:*",
		"*",
	]
}

test_id_scoped_target if {
	_candidates({"kind": "teams", "id": 4}) == ["teams:id:4", "teams:id:*", "teams:*", "*"]
}

test_star_scope if {
	_candidates({"scope": "*"}) == ["*"]
}

test_kind_wildcard_scope if {
	_candidates({"scope": "users:*"}) == ["users:*", "*"]
}

test_attribute_wildcard_scope if {
	_candidates({"scope": "dashboards:uid:*"}) == ["dashboards:uid:*", "dashboards:*", "*"]
}

test_connector_is_flat_and_covered_by_its_wildcards if {
	_candidates({"kind": "connectors", "uid": "c1"}) == ["connectors:uid:c1", "connectors:uid:*", "connectors:*", "*"]
}

test_folder_missing_from_the_index_inherits_nothing if {
	_candidates({"kind": "folders", "uid": "f_new"}) == ["folders:uid:f_new", "folders:uid:*", "folders:*", "*"]
}

test_user_target if {
	_candidates({"kind": "users", "id": "u1"}) == ["users:id:u1", "users:id:*", "users:*", "*"]
}

# "*" is a uid like any other for the index, though its attribute wildcard is itself
test_uid_star_in_the_index if {
	dashboard := scopes.candidates(scopes.target({"kind": "dashboards", "uid": "*"})) with data.folders as _folders
		with data.dashboards as {"*": {"folder": "f_team"}}
	dashboard == [
		"dashboards:uid:*",
		"folders:uid:f_team", "folders:uid:f_root",
		"dashboards:*",
		"folders:uid:*", "folders:*",
		"*",
	]
	folders := {"*": {"scopes": ["folders:uid:*", "folders:uid:f_root"]}}
	folder := scopes.candidates(scopes.target({"kind": "folders", "uid": "*"})) with data.folders as folders
	folder == ["folders:uid:*", "folders:uid:f_root", "folders:*", "*"]
}

_inherited(scope) := inherited if {
	inherited := scopes.inherited(scope) with data.folders as _folders
		with data.dashboards as _dashboards
		with data.alert_rules as _alert_rules
}

test_inherited_scopes_are_the_folders_above if {
	_inherited("folders:uid:f_deep") == ["folders:uid:f_team", "folders:uid:f_root"]
	_inherited("dashboards:uid:d_deep") == ["folders:uid:f_deep", "folders:uid:f_team", "folders:uid:f_root"]
	_inherited("alert.rules:uid:r_deep") == ["folders:uid:f_deep", "folders:uid:f_team", "folders:uid:f_root"]
}

test_inherited_scopes_of_anything_else_are_none if {
	_inherited("folders:uid:f_root") == []
	_inherited("dashboards:uid:d_root") == []
	_inherited("dashboards:uid:d_gone") == []
	_inherited("teams:id:7") == []
	_inherited("*") == []
	_inherited("not a scope") == []
}
