/**
 * The chat agent types and the tools each may call: the first of the chat triple check. Only
 * tools that exist (src/chat/tools.ts) are listed; the investigator and the operator read clusters
 * (ops_read); only the operator may record changes and propose ops plans (approving one is never
 * a tool).
 */
import type { OrgDocument } from './types.ts';

const AGENT_TOOLS: Record<string, string[]> = {
  investigator: ['connectors_list', 'metrics_query', 'logs_query', 'changes_list', 'ops_read'],
  dashboard_builder: ['connectors_list', 'metrics_query', 'logs_query'],
  operator: ['connectors_list', 'metrics_query', 'logs_query', 'changes_list', 'changes_record', 'ops_read', 'ops_plan_create'],
};

export const DEFAULT_CHAT_AGENTS: OrgDocument['chat_agents'] = Object.fromEntries(
  Object.entries(AGENT_TOOLS).map(([agent, tools]) => [agent, { tools: Object.fromEntries(tools.map((t) => [t, true as const])) }]),
);
