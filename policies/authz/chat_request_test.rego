package authz_test

# Chat-driven requests through the decision: the chat checks, RBAC and chat:use (the org and
# helpers are decision_test's).

_chat_request(subject, chat) := object.union(request(subject, "dashboards:write", dashboard("d_deep")), {"chat": chat})

_chat := {"agent_type": "investigator", "tool": "dashboards_update", "permission_mode": "default", "write": true}

# a chat refusal tells the caller which chat check refused
_chat_deny(reasons, message) := object.union(_deny(reasons), {"message": message})

test_chat_action_passing_all_three_checks_is_allowed if {
	_allowed(_chat_request(user("u_editor"), _chat))
}

test_chat_tool_not_allowed_for_the_agent_type_denies if {
	req := _chat_request(user("u_editor"), object.union(_chat, {"tool": "users_delete"}))
	_decide(req) == _chat_deny(
		[{"kind": "chat", "problem": "tool", "agentType": "investigator", "tool": "users_delete"}],
		"chat: tool users_delete is not allowed for agent type investigator",
	)
}

test_chat_read_only_mode_denies_a_write if {
	req := _chat_request(user("u_editor"), object.union(_chat, {"permission_mode": "read_only"}))
	_decide(req) == _chat_deny([{"kind": "chat", "problem": "read-only"}], "chat: permission mode read_only forbids writes")
}

test_chat_action_rbac_does_not_allow_denies if {
	_decide(_chat_request(user("u_viewer"), _chat)) == _deny([{"kind": "missing", "action": "dashboards:write", "scopes": [
		"dashboards:uid:d_deep", "folders:uid:f_deep", "folders:uid:f_team", "folders:uid:f_root",
		"dashboards:uid:*", "dashboards:*", "folders:uid:*", "folders:*", "*",
	]}])
}

test_chat_action_needs_chat_use_besides_its_own_action if {
	# u_none writes d_deep through the legacy ACL (role:None, level 4 on f_team), and holds no role
	plain := request(user("u_none"), "dashboards:write", dashboard("d_deep"))
	_allowed(plain)
	_decide(_chat_request(user("u_none"), _chat)) == object.union(
		_deny([{"kind": "unmet", "need": "chat", "action": "chat:use"}]),
		{"message": "permission denied: you need chat:use to do this"},
	)
}

test_chat_refusal_with_rbac_also_refusing_names_the_chat_checks_only if {
	req := _chat_request(user("u_viewer"), object.union(_chat, {"tool": "users_delete", "permission_mode": "read_only"}))
	_decide(req).message == "chat: permission mode read_only forbids writes; chat: tool users_delete is not allowed for agent type investigator"
}
