package authz_test

import data.authz

# The folder tree changes under the policy: folders move, dashboards and alert rules move
# between folders, folders and grants are deleted. The service re-exports the changed sections
# (src/folders, src/dashboards, src/alerting); these tests pin what each change means for a
# decision, on the org of decision_test.rego.

_decide_in(req, folders, dashboards, alert_rules, roles) := answers.decision if {
	answers := {"decision": authz.decision, "allow": authz.allow, "enforce": authz.enforce} with input as req
		with data.org_id as org.org_id
		with data.settings as {"legacy_acl_enabled": false}
		with data.members as org.members
		with data.teams as org.teams
		with data.builtin_roles as org.builtin_roles
		with data.roles as roles
		with data.folders as folders
		with data.dashboards as dashboards
		with data.alert_rules as alert_rules
		with data.legacy_acl as {}
		with data.chat_agents as org.chat_agents
	_agree(answers)
}

_allowed_in(req, folders, dashboards, alert_rules) if {
	_decide_in(req, folders, dashboards, alert_rules, org.roles).allow
}

# f_deep moved out of f_team to the root: its chain is only itself
_f_deep_at_root := object.union(org.folders, {"f_deep": {"scopes": ["folders:uid:f_deep"]}})

# f_side, a root folder with d_side in it, before and after it moves into f_team
_with_f_side := object.union(org.folders, {"f_side": {"scopes": ["folders:uid:f_side"]}})

_f_side_under_f_team := object.union(org.folders, {"f_side": {"scopes": ["folders:uid:f_side", "folders:uid:f_team", "folders:uid:f_root"]}})

_with_d_side := object.union(org.dashboards, {"d_side": {"folder": "f_side"}})

test_a_folder_moved_out_takes_its_dashboards_out_of_the_old_parents_grants if {
	req := request(user("u_ops"), "dashboards:write", dashboard("d_deep"))
	_allowed_in(req, org.folders, org.dashboards, org.alert_rules)
	not _allowed_in(req, _f_deep_at_root, org.dashboards, org.alert_rules)
}

test_a_folder_moved_in_brings_its_dashboards_under_the_new_parents_grants if {
	req := request(user("u_ops"), "dashboards:write", dashboard("d_side"))
	not _allowed_in(req, _with_f_side, _with_d_side, org.alert_rules)
	_allowed_in(req, _f_side_under_f_team, _with_d_side, org.alert_rules)
}

test_a_moved_folder_answers_to_its_new_ancestors_itself if {
	req := request(user("u_ops"), "dashboards:write", {"kind": "folders", "uid": "f_deep"})
	_allowed_in(req, org.folders, org.dashboards, org.alert_rules)
	not _allowed_in(req, _f_deep_at_root, org.dashboards, org.alert_rules)
}

test_a_dashboard_moved_between_folders_follows_its_new_folder if {
	req := request(user("u_ops"), "dashboards:write", dashboard("d_top"))
	not _allowed_in(req, org.folders, org.dashboards, org.alert_rules)
	_allowed_in(req, org.folders, object.union(org.dashboards, {"d_top": {"folder": "f_deep"}}), org.alert_rules)
}

test_an_alert_rule_moved_between_folders_follows_its_new_folder if {
	grants := object.union(org.roles, {"managed:teams:t_ops:permissions": {"alert.rules:read": {"folders:uid:f_team": true}}})
	req := request(user("u_ops"), "alert.rules:read", {"kind": "alert.rules", "uid": "r_deep"})
	_decide_in(req, org.folders, org.dashboards, org.alert_rules, grants).allow
	not _decide_in(req, org.folders, org.dashboards, {"r_deep": {"folder": "f_root"}}, grants).allow
}

test_a_deleted_folder_leaves_nothing_to_inherit if {
	req := request(user("u_ops"), "dashboards:write", dashboard("d_deep"))
	folders := object.remove(org.folders, ["f_deep"])
	dashboards := object.remove(org.dashboards, ["d_deep"])
	not _allowed_in(req, folders, dashboards, org.alert_rules)

	# the kind-wide grants of an Editor still reach a uid the index does not know
	_allowed_in(request(user("u_editor"), "dashboards:write", dashboard("d_deep")), folders, dashboards, org.alert_rules)
}

test_a_removed_grant_allows_nothing_any_more if {
	req := request(user("u_ops"), "dashboards:write", dashboard("d_deep"))
	grants := object.remove(org.roles, ["managed:teams:t_ops:permissions"])
	not _decide_in(req, org.folders, org.dashboards, org.alert_rules, grants).allow
}
