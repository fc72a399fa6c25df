package authz_test

import data.authz

# The org of the entry-point tests (permissions_test and filter_test use it too).
# f_deep sits in f_team, which sits in f_root; a dashboard in each, and d_root at the root.
org := {
	"org_id": "org_main",
	"settings": {"legacy_acl_enabled": true},
	"members": {
		"u_viewer": {"role": "Viewer", "teams": [], "roles": []},
		"u_editor": {"role": "Editor", "teams": [], "roles": []},
		"u_admin": {"role": "Admin", "teams": [], "roles": []},
		"u_ops": {"role": "Viewer", "teams": ["t_ops"], "roles": ["managed:users:u_ops:permissions"]},
		"u_none": {"role": "None", "teams": ["t_legacy"], "roles": []},
		"u_root": {"role": "None", "teams": [], "roles": []},
	},
	"teams": {
		"t_ops": {"roles": ["managed:teams:t_ops:permissions"]},
		"t_legacy": {"roles": []},
	},
	"builtin_roles": {
		"None": [],
		"Viewer": ["basic:viewer", "managed:builtins:viewer:permissions"],
		"Editor": ["basic:viewer", "managed:builtins:viewer:permissions", "basic:editor"],
		"Admin": ["basic:viewer", "managed:builtins:viewer:permissions", "basic:editor", "basic:admin"],
	},
	"roles": {
		"basic:viewer": {
			"dashboards:read": {"dashboards:*": true, "folders:*": true},
			"folders:read": {"folders:*": true},
			"teams:read": {"teams:*": true},
			"chat:use": {"*": true},
		},
		"basic:editor": {
			"dashboards:*": {"dashboards:*": true, "folders:*": true},
			"alert.rules:create": {"folders:*": true},
		},
		"basic:admin": {"*": {"*": true}},
		"basic:server_admin": {"*": {"*": true}},
		# c_open keeps its default role entry (Viewer: View); c_restricted's was taken away
		"managed:builtins:viewer:permissions": {"connectors:read": {"connectors:uid:c_open": true}, "connectors:query": {"connectors:uid:c_open": true}},
		"managed:teams:t_ops:permissions": {
			"dashboards:write": {"folders:uid:f_team": true},
			"connectors:query": {"connectors:uid:c_restricted": true},
		},
		"managed:users:u_ops:permissions": {
			"dashboards:write": {"dashboards:uid:d_root": true},
			"dashboards:delete": {"dashboards:uid:d_root": false},
		},
	},
	"folders": {
		"f_root": {"scopes": ["folders:uid:f_root"]},
		"f_team": {"scopes": ["folders:uid:f_team", "folders:uid:f_root"]},
		"f_deep": {"scopes": ["folders:uid:f_deep", "folders:uid:f_team", "folders:uid:f_root"]},
	},
	"dashboards": {
		"d_deep": {"folder": "f_deep"},
		"d_team": {"folder": "f_team"},
		"d_top": {"folder": "f_root"},
		"d_root": {"folder": ""},
	},
	"alert_rules": {"r_deep": {"folder": "f_deep"}},
	"legacy_acl": {
		"dashboards:uid:d_root": {"user:u_none": 1},
		"folders:uid:f_root": {"team:t_legacy": 2},
		"folders:uid:f_team": {"role:None": 4},
	},
	"chat_agents": {"investigator": {"tools": {"dashboards_get": true, "dashboards_update": true}}},
}

user(id) := {"id": id, "kind": "user", "server_admin": false, "disabled": false}

server_admin(id) := object.union(user(id), {"server_admin": true})

request(subject, action, resource) := {"subject": subject, "org_id": "org_main", "action": action, "resource": resource}

dashboard(uid) := {"kind": "dashboards", "uid": uid}

_decide(req) := _decide_with_settings(req, org.settings)

_decide_without_legacy(req) := _decide_with_settings(req, {"legacy_acl_enabled": false})

# Every decision a test makes is asked of allow and enforce too, which must agree with it.
_decide_with_settings(req, settings) := answers.decision if {
	answers := {"decision": authz.decision, "allow": authz.allow, "enforce": authz.enforce} with input as req
		with data.org_id as org.org_id
		with data.settings as settings
		with data.members as org.members
		with data.teams as org.teams
		with data.builtin_roles as org.builtin_roles
		with data.roles as org.roles
		with data.folders as org.folders
		with data.dashboards as org.dashboards
		with data.alert_rules as org.alert_rules
		with data.legacy_acl as org.legacy_acl
		with data.chat_agents as org.chat_agents
	_agree(answers)
}

# allow is the decision's allow; enforce is true when it allows and the decision itself when it refuses
_agree(answers) if {
	answers.allow == answers.decision.allow
	_enforces(answers.enforce, answers.decision)
}

_enforces(true, decision) if decision.allow

_enforces(refusal, decision) if {
	not decision.allow
	refusal == decision
}

_allowed(req) if _decide(req).allow

_deny(reasons) := {"allow": false, "reasons": reasons}

test_editor_writes_a_nested_dashboard_through_its_builtin_role if {
	_decide(request(user("u_editor"), "dashboards:write", dashboard("d_deep"))) == {"allow": true, "reasons": [
		{"kind": "grant", "role": "basic:editor", "action": "dashboards:*", "scope": "dashboards:*"},
		{"kind": "grant", "role": "basic:editor", "action": "dashboards:*", "scope": "folders:*"},
	]}
}

test_viewer_may_not_write_and_is_told_every_candidate_scope if {
	_decide(request(user("u_viewer"), "dashboards:write", dashboard("d_deep"))) == _deny([{"kind": "missing", "action": "dashboards:write", "scopes": [
		"dashboards:uid:d_deep", "folders:uid:f_deep", "folders:uid:f_team", "folders:uid:f_root",
		"dashboards:uid:*", "dashboards:*", "folders:uid:*", "folders:*", "*",
	]}])
}

test_team_grant_on_a_folder_covers_dashboards_of_its_subfolders if {
	_decide(request(user("u_ops"), "dashboards:write", dashboard("d_deep"))) == {"allow": true, "reasons": [
		{"kind": "grant", "role": "managed:teams:t_ops:permissions", "action": "dashboards:write", "scope": "folders:uid:f_team"},
	]}
}

test_direct_dashboard_grant_adds_to_what_folders_give if {
	_decide(request(user("u_ops"), "dashboards:write", dashboard("d_root"))) == {"allow": true, "reasons": [
		{"kind": "grant", "role": "managed:users:u_ops:permissions", "action": "dashboards:write", "scope": "dashboards:uid:d_root"},
	]}
	_allowed(request(user("u_ops"), "dashboards:write", dashboard("d_team")))
}

test_a_scope_set_to_false_grants_nothing if {
	not _allowed(request(user("u_ops"), "dashboards:delete", dashboard("d_root")))
}

test_folder_inherits_from_its_ancestors if {
	_allowed(request(user("u_ops"), "dashboards:write", {"kind": "folders", "uid": "f_deep"}))
	not _allowed(request(user("u_ops"), "dashboards:write", {"kind": "folders", "uid": "f_root"}))
}

test_alert_rule_inherits_from_its_folders if {
	_allowed(request(user("u_editor"), "alert.rules:create", {"kind": "alert.rules", "uid": "r_deep"}))
	not _allowed(request(user("u_viewer"), "alert.rules:create", {"kind": "alert.rules", "uid": "r_deep"}))
}

test_server_admin_member_holds_everything if {
	_decide(request(server_admin("u_root"), "users:write", {"kind": "users", "id": 5})) == {"allow": true, "reasons": [
		{"kind": "grant", "role": "basic:server_admin", "action": "*", "scope": "*"},
	]}
}

test_server_admin_who_is_not_a_member_is_denied if {
	_decide(request(server_admin("u_stranger"), "dashboards:read", dashboard("d_root"))) == _deny([{"kind": "org", "problem": "not-member", "org": "org_main"}])
}

test_server_admin_acts_outside_an_org if {
	req := {"subject": server_admin("u_stranger"), "org_id": null, "action": "orgs:create"}
	_decide(req) == {"allow": true, "reasons": [{"kind": "grant", "role": "basic:server_admin", "action": "*"}]}
}

test_only_a_server_admin_acts_outside_an_org if {
	req := {"subject": user("u_admin"), "org_id": null, "action": "orgs:create"}
	_decide(req) == _deny([{"kind": "org", "problem": "server-level"}])
}

test_disabled_subject_is_denied if {
	disabled := object.union(user("u_admin"), {"disabled": true})
	_decide(request(disabled, "dashboards:read", dashboard("d_root"))) == _deny([{"kind": "subject", "problem": "disabled"}])
}

test_anonymous_subject_is_denied if {
	_decide(request({"kind": "anonymous"}, "dashboards:read", dashboard("d_root"))) == _deny([{"kind": "subject", "problem": "anonymous"}])
}

test_without_a_resource_the_action_held_on_any_scope_counts if {
	req := {"subject": user("u_editor"), "org_id": "org_main", "action": "alert.rules:create"}
	_decide(req) == {"allow": true, "reasons": [{"kind": "grant", "role": "basic:editor", "action": "alert.rules:create"}]}
}

test_without_a_resource_an_action_held_nowhere_is_denied if {
	req := {"subject": user("u_viewer"), "org_id": "org_main", "action": "alert.rules:create"}
	_decide(req) == _deny([{"kind": "missing", "action": "alert.rules:create"}])
}

test_scope_resource if {
	_allowed(request(user("u_viewer"), "teams:read", {"scope": "teams:id:4"}))
	_allowed(request(user("u_viewer"), "dashboards:read", {"scope": "dashboards:*"}))
	_decide(request(user("u_viewer"), "dashboards:read", {"scope": "*"})) == _deny([{"kind": "missing", "action": "dashboards:read", "scopes": ["*"]}])
	_allowed(request(user("u_admin"), "dashboards:read", {"scope": "*"}))
}

test_a_connectors_viewer_entry_lets_every_member_query_it if {
	_decide(request(user("u_viewer"), "connectors:query", {"kind": "connectors", "uid": "c_open"})) == {"allow": true, "reasons": [
		{"kind": "grant", "role": "managed:builtins:viewer:permissions", "action": "connectors:query", "scope": "connectors:uid:c_open"},
	]}
	_allowed(request(user("u_editor"), "connectors:query", {"kind": "connectors", "uid": "c_open"}))
}

test_a_connector_without_role_entries_is_queried_by_its_grantees_only if {
	connector := {"kind": "connectors", "uid": "c_restricted"}
	_decide(request(user("u_viewer"), "connectors:query", connector)) == _deny([
		{"kind": "missing", "action": "connectors:query", "scopes": ["connectors:uid:c_restricted", "connectors:uid:*", "connectors:*", "*"]},
	])
	_decide(request(user("u_ops"), "connectors:query", connector)) == {"allow": true, "reasons": [
		{"kind": "grant", "role": "managed:teams:t_ops:permissions", "action": "connectors:query", "scope": "connectors:uid:c_restricted"},
	]}
	_allowed(request(user("u_admin"), "connectors:query", connector))
}

test_legacy_user_entry_on_the_dashboard if {
	req := request(user("u_none"), "dashboards:read", dashboard("d_root"))
	_decide(req) == {"allow": true, "reasons": [{"kind": "acl", "level": 1, "scope": "dashboards:uid:d_root", "principal": "user:u_none"}]}
	not _decide_without_legacy(req).allow
	not _allowed(request(user("u_none"), "dashboards:write", dashboard("d_root")))
}

test_legacy_team_entry_on_an_ancestor_folder if {
	req := request(user("u_none"), "dashboards:delete", dashboard("d_top"))
	_decide(req) == {"allow": true, "reasons": [{"kind": "acl", "level": 2, "scope": "folders:uid:f_root", "principal": "team:t_legacy"}]}
	not _decide_without_legacy(req).allow
}

test_legacy_role_entry_manages_permissions if {
	req := request(user("u_none"), "dashboards.permissions:write", dashboard("d_team"))
	_decide(req) == {"allow": true, "reasons": [{"kind": "acl", "level": 4, "scope": "folders:uid:f_team", "principal": "role:None"}]}
	not _decide_without_legacy(req).allow
}

test_empty_input_is_denied_with_reasons if {
	_decide({}) == _deny([{"kind": "input", "field": "action"}, {"kind": "subject", "problem": "missing"}])
}

test_input_that_is_not_an_object_is_denied if {
	_decide("junk") == _deny([{"kind": "input", "field": "action"}, {"kind": "subject", "problem": "missing"}])
}

test_missing_action_is_denied if {
	_decide(request(user("u_admin"), "", dashboard("d_root"))) == _deny([{"kind": "input", "field": "action"}])
}

test_unknown_resource_kind_is_denied if {
	unknown_kind := {"kind": "input", "field": "resource", "resourceKind": "bananas"}
	_decide(request(user("u_admin"), "bananas:read", {"kind": "bananas", "uid": "b1"})) == _deny([unknown_kind])
}

test_null_resource_is_denied if {
	_decide(request(user("u_admin"), "dashboards:read", null)) == _deny([
		{"kind": "input", "field": "resource"},
	])
}

# sort failing as a builtin does on a bad operand (sum of reasons: an error, so no result)
test_decision_is_a_deny_even_when_it_cannot_be_evaluated if {
	_decide({}) == _deny([{"kind": "input"}]) with sort as sum
}

test_org_admin_is_refused_a_server_action_in_its_org if {
	_decide(request(user("u_admin"), "roles:seed", {"kind": "orgs", "id": "org_main"})) == _deny([{"kind": "server-only", "action": "roles:seed"}])
	_allowed(request(server_admin("u_root"), "roles:seed", {"kind": "orgs", "id": "org_main"}))
}

test_a_member_without_roles_reads_itself if {
	own := {"kind": "rule", "rule": "self", "action": "users:read"}
	_decide(request(user("u_root"), "users:read", {"kind": "users", "id": "u_root"})) == {"allow": true, "reasons": [own]}
	not _allowed(request(user("u_root"), "users:read", {"kind": "users", "id": "u_viewer"}))
}

test_a_user_reads_itself_outside_any_org if {
	req := {"subject": user("u_stranger"), "org_id": null, "action": "users:read", "resource": {"kind": "users", "id": "u_stranger"}}
	_decide(req) == {"allow": true, "reasons": [{"kind": "rule", "rule": "self", "action": "users:read"}]}
}

test_reasons_of_every_kind_are_sorted_together if {
	_decide(request(server_admin("u_root"), "dashboards:read", dashboard("d_team"))).reasons == [
		{"kind": "acl", "level": 4, "scope": "folders:uid:f_team", "principal": "role:None"},
		{"kind": "grant", "role": "basic:server_admin", "action": "*", "scope": "*"},
	]
	_decide(request(user("u_admin"), "users:read", {"kind": "users", "id": "u_admin"})).reasons == [
		{"kind": "rule", "rule": "self", "action": "users:read"},
		{"kind": "grant", "role": "basic:admin", "action": "*", "scope": "*"},
	]
}

test_a_role_write_needs_every_delegated_permission if {
	req := object.union(request(user("u_editor"), "dashboards:write", dashboard("d_deep")), {"delegate": [{"action": "teams:write", "scope": "teams:*"}]})
	refusal := _deny([{"kind": "unmet", "need": "delegation", "action": "teams:write", "scope": "teams:*"}])
	message := "permission denied: this change grants permissions you do not hold, and you can only grant what you hold"
	_decide(req) == object.union(refusal, {"message": message})
	held := [{"action": "dashboards:read", "scope": "dashboards:uid:d_deep"}]
	ok := object.union(request(user("u_editor"), "dashboards:write", dashboard("d_deep")), {"delegate": held})
	_allowed(ok)
}

test_a_server_admin_administers_an_org_it_is_not_a_member_of if {
	req := {"subject": server_admin("u_stranger"), "org_id": "org_main", "action": "org.users:add", "resource": {"kind": "orgs", "id": "org_main"}}
	_decide(req) == {"allow": true, "reasons": [{"kind": "rule", "rule": "server-admin", "action": "org.users:add"}]}
	not _allowed({"subject": server_admin("u_stranger"), "org_id": "org_main", "action": "dashboards:read", "resource": {"kind": "orgs", "id": "org_main"}})
	not _allowed({"subject": server_admin("u_stranger"), "org_id": "org_main", "action": "orgs:read", "resource": {"kind": "orgs", "id": "org_other"}})
	not _allowed({"subject": user("u_stranger"), "org_id": "org_main", "action": "orgs:read", "resource": {"kind": "orgs", "id": "org_main"}})
}

test_every_member_reads_its_active_org_but_not_an_org_by_id if {
	active_org := {"subject": user("u_viewer"), "org_id": "org_main", "action": "orgs:read"}
	_decide(active_org) == {"allow": true, "reasons": [{"kind": "rule", "rule": "member", "action": "orgs:read"}]}
	_allowed(object.union(active_org, {"subject": user("u_root")}))
	_decide(object.union(active_org, {"subject": user("u_admin")})).reasons == [
		{"kind": "rule", "rule": "member", "action": "orgs:read"},
		{"kind": "grant", "role": "basic:admin", "action": "*"},
	]
	not _allowed(object.union(active_org, {"resource": {"kind": "orgs", "id": "org_main"}}))
	not _allowed(object.union(active_org, {"subject": user("u_stranger")}))
	not _allowed(object.union(active_org, {"org_id": null}))
	not _allowed(object.union(active_org, {"action": "orgs:write"}))
}

test_only_a_server_admin_changes_org_quotas if {
	_decide(request(user("u_admin"), "orgs.quotas:write", {"kind": "orgs", "id": "org_main"})) == _deny([{"kind": "server-only", "action": "orgs.quotas:write"}])
}

test_only_a_server_admin_changes_a_server_admins_org_membership if {
	target := {"kind": "users", "id": "u_editor"}
	refused := object.union(request(user("u_admin"), "org.users:remove", target), {"target_user": {"server_admin": true}})
	_decide(refused) == _deny([{"kind": "protected"}])
	_allowed(object.union(request(user("u_admin"), "org.users:remove", target), {"target_user": {"server_admin": false}}))
	_allowed(object.union(request(server_admin("u_admin"), "org.users:write", target), {"target_user": {"server_admin": true}}))
}

# a refusal other than delegation's says only which action was refused
test_only_a_delegation_refusal_carries_a_message if {
	delegate := {"delegate": [{"action": "teams:write", "scope": "teams:*"}]}
	no_grant := object.union(request(user("u_viewer"), "dashboards:write", dashboard("d_deep")), delegate)
	not _decide(no_grant).message
	without_delegation := request(user("u_viewer"), "dashboards:write", dashboard("d_deep"))
	not _decide(without_delegation).message
}

test_the_delegation_message_names_a_role_target if {
	message := "permission denied: role custom:x grants permissions you do not hold, and you can only grant what you hold"
	authz.delegation_message == message with input as {"resource": {"kind": "roles", "uid": "custom:x"}}
}

_moved(req, folder) := object.union(req, {"destination": {"kind": "folders", "uid": folder}})

test_a_move_needs_create_on_the_destination if {
	_allowed(_moved(request(user("u_editor"), "dashboards:write", dashboard("d_team")), "f_deep"))
	_allowed(_moved(request(user("u_admin"), "alert.rules:write", {"kind": "alert.rules", "uid": "r_deep"}), "f_root"))
	stuck := _moved(request(user("u_ops"), "dashboards:write", dashboard("d_team")), "f_deep")
	_decide(stuck) == {
		"allow": false,
		"reasons": [{"kind": "unmet", "need": "destination", "action": "dashboards:create", "scope": "folders:uid:f_deep"}],
		"message": "permission denied: you need dashboards:create on the destination folder to do this",
	}

	# written in place, no create is asked
	_allowed(request(user("u_ops"), "dashboards:write", dashboard("d_team")))
}

test_a_move_the_resource_itself_refuses_says_only_that if {
	refused := _decide(_moved(request(user("u_viewer"), "dashboards:write", dashboard("d_team")), "f_deep"))
	not refused.allow
	not refused.message
}

test_a_destination_of_no_known_shape_is_refused if {
	req := object.union(request(user("u_editor"), "dashboards:write", dashboard("d_team")), {"destination": {"kind": "nope"}})
	refused := _decide(req)
	not refused.allow
	{"kind": "unmet", "need": "destination", "action": "dashboards:create"} in refused.reasons
}

_requiring(req, connector_uids) := object.union(req, {"requires": [_query_on(uid) | some uid in connector_uids]})

_query_on(connector_uid) := {"action": "connectors:query", "resource": {"kind": "connectors", "uid": connector_uid}}

test_every_requirement_must_be_granted if {
	create := request(user("u_editor"), "alert.rules:create", {"kind": "folders", "uid": "f_deep"})
	_allowed(_requiring(create, ["c_open"]))
	_decide(_requiring(create, ["c_open", "c_restricted"])) == {
		"allow": false,
		"reasons": [{"kind": "unmet", "need": "requirement", "action": "connectors:query", "scope": "connectors:uid:c_restricted"}],
		"message": "permission denied: you need connectors:query on every connector the alert rule reads",
	}

	# a team grant on the connector, and an admin's "*", meet it
	_allowed(_requiring(request(user("u_ops"), "dashboards:read", dashboard("d_deep")), ["c_restricted"]))
	_allowed(_requiring(request(user("u_admin"), "alert.rules:read", {"kind": "alert.rules", "uid": "r_deep"}), ["c_restricted"]))
}

_authored_by(req, author_id, must) := object.union(req, {"author": {"kind": "user", "id": author_id, "must": must}})

_plan_connector := {"kind": "connectors", "uid": "c_open"}

test_a_plan_is_approved_by_a_writer_other_than_its_author if {
	approve := request(user("u_admin"), "connectors:write", _plan_connector)
	_allowed(_authored_by(approve, "u_editor", "differ"))
	_decide(_authored_by(approve, "u_admin", "differ")) == {
		"allow": false,
		"reasons": [{"kind": "author", "must": "differ"}],
		"message": "permission denied: a plan's author may not approve it; another user must",
	}
}

test_an_author_without_the_action_is_told_only_the_action_is_missing if {
	refused := _decide(_authored_by(request(user("u_viewer"), "connectors:write", _plan_connector), "u_admin", "differ"))
	not refused.allow
	not refused.message
}

test_only_the_author_cancels_a_plan if {
	cancel := request(user("u_viewer"), "connectors:query", _plan_connector)
	_allowed(_authored_by(cancel, "u_viewer", "match"))
	_decide(_authored_by(cancel, "u_editor", "match")) == {
		"allow": false,
		"reasons": [{"kind": "author", "must": "match"}],
		"message": "permission denied: only a plan's author may cancel it",
	}
}

test_a_malformed_author_is_refused_without_a_message if {
	refused := _decide(object.union(request(user("u_admin"), "connectors:write", _plan_connector), {"author": {"id": "u_editor"}}))
	refused == {"allow": false, "reasons": [{"kind": "input", "field": "author"}]}
}

test_requirements_do_not_replace_the_action_itself if {
	refused := _decide(_requiring(request(user("u_viewer"), "dashboards:write", dashboard("d_deep")), ["c_open"]))
	not refused.allow
	not refused.message
}

test_an_empty_list_of_requirements_asks_nothing if {
	_allowed(object.union(request(user("u_editor"), "dashboards:write", dashboard("d_deep")), {"requires": []}))
}

test_malformed_requirements_are_refused if {
	base := request(user("u_admin"), "dashboards:read", dashboard("d_deep"))
	not_a_list := _decide(object.union(base, {"requires": "connectors:query"}))
	not not_a_list.allow
	not not_a_list.message
	{"kind": "input", "field": "requires"} in not_a_list.reasons
	unknown := _decide(object.union(base, {"requires": [{"action": 7, "resource": {"kind": "nope"}}]}))
	not unknown.allow
	{"kind": "unmet", "need": "requirement", "action": "7", "scope": "{\"kind\":\"nope\"}"} in unknown.reasons
}

# a server admin's org administration reads the org's kind and id alone: a resource that is no
# target otherwise (a stray empty uid) is still the org, and the reasons are the rule's alone
test_a_server_admin_administers_an_org_named_by_id_alone if {
	req := request(server_admin("u_stranger"), "orgs:write", {"kind": "orgs", "id": "org_main", "uid": ""})
	_decide(req) == {"allow": true, "reasons": [{"kind": "rule", "rule": "server-admin", "action": "orgs:write"}]}
}
