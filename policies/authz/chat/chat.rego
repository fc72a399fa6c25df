# METADATA
# description: |
#   The chat-agent checks of a chat-driven action (input.chat): the agent type may call the tool,
#   and a write needs a permission mode other than read_only. RBAC, the third check, is the
#   decision's own.
package authz.chat

# whether the chat checks let request through: without a chat context the request is not
# chat-driven and RBAC alone decides. Functions of the request, not rules: compiled Rego
# memoizes rules, which costs more than these checks.
allows(request) if {
	not is_driven(request)
} else if {
	_is_tool_allowed(request.chat)
	_is_mode_allowed(request.chat)
}

# why the chat checks deny, as reasons {kind: "chat", problem[, agentType, tool]}; read only on
# a deny
problems contains _tool_problem if {
	is_driven(input)
	not _is_tool_allowed(input.chat)
}

problems contains {"kind": "chat", "problem": "read-only"} if {
	is_driven(input)
	not _is_mode_allowed(input.chat)
	input.chat.permission_mode == "read_only"
}

problems contains {"kind": "chat", "problem": "no-mode"} if {
	is_driven(input)
	not _is_mode_allowed(input.chat)
	not input.chat.permission_mode == "read_only"
}

# what the caller is told of a chat refusal: it names only what the caller sent and the agent
# types' tools, which are documented
message := concat("; ", sort({_message_of(problem) | some problem in problems}))

_message_of(problem) := concat("", ["chat: tool ", problem.tool, " is not allowed for agent type ", problem.agentType]) if {
	problem.problem == "tool"
} else := "chat: agent_type and tool are required" if {
	problem.problem == "no-tool"
} else := "chat: permission mode read_only forbids writes" if {
	problem.problem == "read-only"
} else := "chat: a write needs a permission mode"

# whether the request is chat-driven: input.chat is set. Defined for any value of request.chat,
# null and false included.
is_driven(request) if _ = request.chat

_is_tool_allowed(chat) if data.chat_agents[chat.agent_type].tools[chat.tool] == true

# fail closed: only an explicit write: false is a read
_is_mode_allowed(chat) if {
	chat.write == false
} else if {
	is_string(chat.permission_mode)
	chat.permission_mode != ""
	chat.permission_mode != "read_only"
}

_tool_problem := {"kind": "chat", "problem": "tool", "agentType": input.chat.agent_type, "tool": input.chat.tool} if {
	_has_tool_and_agent
}

_tool_problem := {"kind": "chat", "problem": "no-tool"} if {
	not _has_tool_and_agent
}

_has_tool_and_agent if {
	is_string(input.chat.tool)
	is_string(input.chat.agent_type)
}
