# METADATA
# description: |
#   The chat-agent checks of a chat-driven action (input.chat): the agent type may call the tool,
#   and a write needs a permission mode other than read_only. RBAC, the third check, is the
#   decision's own.
package authz.chat

default is_allowed := false

# without a chat context the request is not chat-driven: RBAC alone decides
is_allowed if not is_present

is_allowed if {
	is_present
	_is_tool_allowed
	_is_mode_allowed
}

# defined for any value of input.chat, null and false included
is_present if type_name(input.chat)

# why the chat checks deny; read only on a deny
problems contains _tool_problem if {
	is_present
	not _is_tool_allowed
}

problems contains "chat: permission mode read_only forbids writes" if {
	is_present
	not _is_mode_allowed
	input.chat.permission_mode == "read_only"
}

problems contains "chat: a write needs a permission mode" if {
	is_present
	not _is_mode_allowed
	not input.chat.permission_mode == "read_only"
}

_is_tool_allowed if data.chat_agents[input.chat.agent_type].tools[input.chat.tool] == true

# fail closed: only an explicit write: false is a read
_is_write if not input.chat.write == false

_is_mode_allowed if not _is_write

_is_mode_allowed if {
	_is_write
	is_string(input.chat.permission_mode)
	not input.chat.permission_mode in {"", "read_only"}
}

_tool_problem := concat("", ["chat: tool ", input.chat.tool, " is not allowed for agent type ", input.chat.agent_type]) if {
	_has_tool_and_agent
}

_tool_problem := "chat: agent_type and tool are required" if {
	not _has_tool_and_agent
}

_has_tool_and_agent if {
	is_string(input.chat.tool)
	is_string(input.chat.agent_type)
}
