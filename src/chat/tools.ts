/** Every chat tool by the name the agent calls it (POST /api/chat/tools/:tool). */
import { connectorsList } from './connectors-list.ts';
import { logsQuery } from './logs-query.ts';
import { metricsQuery } from './metrics-query.ts';
import type { ChatTool } from './tool.ts';

export const CHAT_TOOLS: ReadonlyMap<string, ChatTool> = new Map([
  ['connectors_list', connectorsList],
  ['metrics_query', metricsQuery],
  ['logs_query', logsQuery],
]);
