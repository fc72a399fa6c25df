package authz.rbac_test

import data.authz.rbac

_roles := {
	"basic:viewer": {"dashboards:read": {"dashboards:*": true, "folders:*": true}},
	"custom:exact": {"dashboards:write": {"dashboards:uid:d1": true, "dashboards:uid:d2": false}},
	"custom:any_dashboard_action": {"dashboards:*": {"folders:uid:f1": true}},
	"custom:folders_only": {"folders:*": {"*": true}},
	"custom:empty": {"dashboards:delete": {}},
	"basic:admin": {"*": {"*": true}},
	"custom:action_only": {"teams:read": {"*": true}},
}

_grants(roles, action, scopes) := grants if {
	grants := rbac.grants(roles, action, scopes) with data.roles as _roles
}

_holders(roles, action) := holders if {
	holders := rbac.holders(roles, action) with data.roles as _roles
}

test_matching_actions_are_the_action_its_resource_wildcard_and_star if {
	rbac.matching_actions("alert.rules:create") == ["alert.rules:create", "alert.rules:*", "*"]
}

test_matching_actions_of_an_action_without_verb if {
	rbac.matching_actions("ping") == ["ping", "*"]
}

test_exact_action_on_a_candidate_scope_matches if {
	exact := {"kind": "grant", "role": "custom:exact", "action": "dashboards:write", "scope": "dashboards:uid:d1"}
	_grants(["custom:exact"], "dashboards:write", ["dashboards:uid:d1", "dashboards:*", "*"]) == {exact}
}

test_scope_not_among_the_candidates_does_not_match if {
	_grants(["custom:exact"], "dashboards:write", ["dashboards:uid:d3", "dashboards:*", "*"]) == set()
}

test_scope_set_to_false_does_not_match if {
	_grants(["custom:exact"], "dashboards:write", ["dashboards:uid:d2"]) == set()
}

test_resource_wildcard_action_matches if {
	grants := _grants(["custom:any_dashboard_action"], "dashboards:delete", ["dashboards:uid:d1", "folders:uid:f1"])
	grants == {{"kind": "grant", "role": "custom:any_dashboard_action", "action": "dashboards:*", "scope": "folders:uid:f1"}}
}

test_wildcard_of_another_resource_does_not_match if {
	_grants(["custom:folders_only"], "dashboards:read", ["dashboards:uid:d1", "*"]) == set()
}

test_star_action_matches_every_action if {
	_grants(["basic:admin"], "users:write", ["users:id:1", "users:*", "*"]) == {{"kind": "grant", "role": "basic:admin", "action": "*", "scope": "*"}}
}

test_every_matching_role_and_scope_is_listed if {
	_grants(["basic:viewer", "basic:admin", "custom:unknown"], "dashboards:read", ["dashboards:uid:d1", "dashboards:*", "folders:*", "*"]) == {
		{"kind": "grant", "role": "basic:viewer", "action": "dashboards:read", "scope": "dashboards:*"},
		{"kind": "grant", "role": "basic:viewer", "action": "dashboards:read", "scope": "folders:*"},
		{"kind": "grant", "role": "basic:admin", "action": "*", "scope": "*"},
	}
}

test_no_roles_match_nothing if {
	_grants([], "dashboards:read", ["*"]) == set()
}

test_holders_hold_the_action_on_any_scope if {
	_holders(["custom:exact", "custom:any_dashboard_action", "basic:viewer"], "dashboards:write") == {
		{"kind": "grant", "role": "custom:exact", "action": "dashboards:write"},
		{"kind": "grant", "role": "custom:any_dashboard_action", "action": "dashboards:*"},
	}
}

test_an_action_without_scopes_is_not_held if {
	_holders(["custom:empty"], "dashboards:delete") == set()
}

# an action-only permission (no scope in the request) is stored with scope "*": every target matches
test_action_only_permission_matches_every_target if {
	action_only := {"kind": "grant", "role": "custom:action_only", "action": "teams:read", "scope": "*"}
	_grants({"custom:action_only"}, "teams:read", ["teams:id:5", "teams:*", "*"]) == {action_only}
}

test_action_only_permission_grants_only_its_action if {
	count(_grants({"custom:action_only"}, "teams:write", ["teams:id:5", "teams:*", "*"])) == 0
}

_holds_exactly(roles, action, scopes) if {
	rbac.holds_exactly(roles, action, scopes) with data.roles as _roles
}

_holds_through_wildcard(roles, action, scopes) if {
	rbac.holds_through_wildcard(roles, action, scopes) with data.roles as _roles
}

test_holds_exactly_asks_the_action_itself_only if {
	_holds_exactly(["custom:exact"], "dashboards:write", ["dashboards:uid:d1"])
	not _holds_exactly(["custom:exact"], "dashboards:write", ["dashboards:uid:d2"])
	not _holds_exactly(["basic:admin"], "dashboards:write", ["*"])
	not _holds_exactly(["custom:unknown"], "dashboards:write", ["dashboards:uid:d1"])
}

test_holds_through_wildcard_asks_the_resource_wildcard_and_star if {
	_holds_through_wildcard(["custom:any_dashboard_action"], "dashboards:delete", ["dashboards:uid:d9", "folders:uid:f1"])
	_holds_through_wildcard(["basic:admin"], "alert.rules:create", ["*"])
	_holds_through_wildcard(["custom:folders_only"], "folders:write", ["*"])
	not _holds_through_wildcard(["custom:exact"], "dashboards:write", ["dashboards:uid:d1"])
	not _holds_through_wildcard(["custom:any_dashboard_action"], "dashboards.permissions:write", ["folders:uid:f1"])
}

# holds, and holds_exactly or holds_through_wildcard, exactly when grants has a reason, for every pairing
test_the_two_holds_agree_with_grants if {
	role_sets := [
		["basic:viewer"], ["custom:exact"], ["custom:any_dashboard_action"], ["custom:folders_only"],
		["custom:empty"], ["basic:admin"], ["custom:action_only"], [],
	]
	every roles in role_sets {
		every action in ["dashboards:read", "dashboards:write", "dashboards:delete", "folders:read", "teams:read", "ping"] {
			every scopes in [["dashboards:uid:d1", "dashboards:*", "*"], ["folders:uid:f1"], ["dashboards:uid:d2"], ["*"]] {
				has_reason := count(_grants(roles, action, scopes)) > 0
				_held(roles, action, scopes) == has_reason
				_holds(roles, action, scopes) == has_reason
			}
		}
	}
}

_held(roles, action, scopes) if {
	_holds_exactly(roles, action, scopes)
} else if {
	_holds_through_wildcard(roles, action, scopes)
} else := false

_holds(roles, action, scopes) if {
	rbac.holds(roles, action, scopes) with data.roles as _roles
} else := false

test_wildcards_of_the_kinds_asked_most_and_of_any_other if {
	rbac._wildcards_of("dashboards:read") == ["dashboards:*", "*"]
	rbac._wildcards_of("folders:write") == ["folders:*", "*"]
	rbac._wildcards_of("dashboards.permissions:write") == ["dashboards.permissions:*", "*"]
	rbac._wildcards_of("connectors:query") == ["connectors:*", "*"]
	rbac._wildcards_of("teams:read") == ["teams:*", "*"]
	rbac._wildcards_of("alert.rules:read:extra") == ["alert.rules:*", "*"]
	rbac._wildcards_of("ping") == ["*"]
	rbac._wildcards_of(":odd") == ["*"]
}

test_matching_actions_of_what_is_no_action_are_undefined if {
	not rbac.matching_actions(7)
	not rbac.holds(["basic:admin"], 7, ["*"]) with data.roles as _roles
}
