package authz_test

# A folder delete is one decision over everything it removes (src/folders/tree-delete.ts): the
# delete action on the folder, and on each subfolder, dashboard and alert rule as requirements,
# on the org of decision_test.rego.

# f_team holds f_deep, d_team and d_deep, and r_deep in f_deep; u_none deletes folders and
# dashboards there through its team's legacy ACL entry on f_root, which reaches no alert rule
_team_folder_delete(subject, with_rules) := object.union(request(subject, "folders:delete", {"kind": "folders", "uid": "f_team"}), {"requires": array.concat(
	[
		{"action": "folders:delete", "resource": {"kind": "folders", "uid": "f_deep"}},
		{"action": "dashboards:delete", "resource": dashboard("d_team")},
		{"action": "dashboards:delete", "resource": dashboard("d_deep")},
	],
	[{"action": "alert.rules:delete", "resource": {"kind": "alert.rules", "uid": "r_deep"}} | with_rules],
)})

test_a_folder_delete_needs_delete_on_everything_it_removes if {
	_allowed(_team_folder_delete(user("u_none"), false))
	_allowed(_team_folder_delete(user("u_admin"), true))
	_decide(_team_folder_delete(user("u_none"), true)) == {
		"allow": false,
		"reasons": [{"kind": "unmet", "need": "requirement", "action": "alert.rules:delete", "scope": "alert.rules:uid:r_deep"}],
		"message": concat("", [
			"permission denied: you need alert.rules:delete, dashboards:delete, folders:delete ",
			"on every alert rule and dashboard and folder the folder holds",
		]),
	}
}

# the first ten unmet requirements are named, in the request's order, then how many more
test_a_deny_names_ten_unmet_requirements_and_counts_the_rest if {
	uids := [concat("", ["d_", format_int(n, 10)]) | some n in numbers.range(1, 25)]
	dashboards := [{"action": "dashboards:delete", "resource": dashboard(uid)} | some uid in uids]
	folder := {"kind": "folders", "uid": "f_team"}
	refused := _decide(object.union(request(user("u_viewer"), "folders:read", folder), {"requires": dashboards}))
	not refused.allow
	count(refused.reasons) == 11
	{"kind": "unmet", "need": "requirement", "action": "dashboards:delete", "scope": "dashboards:uid:d_1"} in refused.reasons
	{"kind": "unmet", "need": "requirement", "action": "dashboards:delete", "scope": "dashboards:uid:d_10"} in refused.reasons
	{"kind": "unmet-more", "need": "requirement", "count": 15} in refused.reasons
	not {"kind": "unmet", "need": "requirement", "action": "dashboards:delete", "scope": "dashboards:uid:d_11"} in refused.reasons
}
