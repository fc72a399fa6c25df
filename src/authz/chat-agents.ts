/**
 * The chat agent types and the tools each may call: the first of the chat triple check.
 * Read-only tools only for the investigator; the operator may also act through the ops tools.
 */
import type { OrgDocument } from './types.ts';

const AGENT_TOOLS: Record<string, string[]> = {
  investigator: ['connectors_list', 'metrics_query', 'logs_query', 'changes_list', 'dashboards_search'],
  dashboard_builder: ['connectors_list', 'metrics_query', 'dashboards_search', 'dashboards_write'],
  operator: ['connectors_list', 'metrics_query', 'logs_query', 'changes_list', 'ops_read', 'ops_execute_plan'],
};

export const DEFAULT_CHAT_AGENTS: OrgDocument['chat_agents'] = Object.fromEntries(
  Object.entries(AGENT_TOOLS).map(([agent, tools]) => [agent, { tools: Object.fromEntries(tools.map((t) => [t, true as const])) }]),
);
