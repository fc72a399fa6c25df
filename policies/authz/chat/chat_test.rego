package authz.chat_test

import data.authz.chat

_agents := {"investigator": {"tools": {"connectors_list": true, "dashboards_update": true, "retired_tool": false}}}

_chat(overrides) := object.union(
	{"agent_type": "investigator", "tool": "dashboards_update", "permission_mode": "default", "write": true},
	overrides,
)

# whether the chat checks allow, and their problems, for a chat context
_eval(context) := {"allowed": allowed, "problems": problems} if {
	allowed := _allows({"chat": context})
	problems := chat.problems with input as {"chat": context} with data.chat_agents as _agents
}

default _allows(_) := false

_allows(request) if chat.allows(request) with data.chat_agents as _agents

test_without_chat_context_nothing_is_checked if {
	chat.allows({"action": "dashboards:write"})
	count(chat.problems) == 0 with input as {"action": "dashboards:write"}
}

test_allowed_tool_and_writable_mode_pass if {
	_eval(_chat({})) == {"allowed": true, "problems": set()}
}

test_tool_not_allowed_for_the_agent_type_denies if {
	_eval(_chat({"tool": "users_delete"})) == {
		"allowed": false,
		"problems": {{"kind": "chat", "problem": "tool", "agentType": "investigator", "tool": "users_delete"}},
	}
}

test_tool_set_to_false_is_not_allowed if {
	not _eval(_chat({"tool": "retired_tool"})).allowed
}

test_unknown_agent_type_denies if {
	_eval(_chat({"agent_type": "ghost"})).problems == {{"kind": "chat", "problem": "tool", "agentType": "ghost", "tool": "dashboards_update"}}
}

test_read_only_mode_forbids_writes if {
	_eval(_chat({"permission_mode": "read_only"})) == {
		"allowed": false,
		"problems": {{"kind": "chat", "problem": "read-only"}},
	}
}

test_read_only_mode_allows_reads if {
	_eval(_chat({"tool": "connectors_list", "permission_mode": "read_only", "write": false})).allowed
}

test_missing_write_flag_counts_as_a_write if {
	not _eval(object.remove(_chat({"permission_mode": "read_only"}), ["write"])).allowed
}

test_write_without_permission_mode_denies if {
	_eval(object.remove(_chat({}), ["permission_mode"])).problems == {{"kind": "chat", "problem": "no-mode"}}
}

test_chat_context_without_tool_or_agent_type_denies if {
	_eval({"permission_mode": "default", "write": false}) == {
		"allowed": false,
		"problems": {{"kind": "chat", "problem": "no-tool"}},
	}
}

test_null_chat_context_is_checked_and_denies if {
	_eval(null).problems == {{"kind": "chat", "problem": "no-tool"}, {"kind": "chat", "problem": "no-mode"}}
}

# the message a chat refusal carries words each problem, sorted
_message(context) := message if {
	message := chat.message with input as {"chat": context} with data.chat_agents as _agents
}

test_the_message_words_every_problem if {
	_message(_chat({"tool": "users_delete"})) == "chat: tool users_delete is not allowed for agent type investigator"
	_message(_chat({"permission_mode": "read_only"})) == "chat: permission mode read_only forbids writes"
	_message(null) == "chat: a write needs a permission mode; chat: agent_type and tool are required"
}
