/** Every chat tool by the name the agent calls it (POST /api/chat/tools/:tool). */
import { changesList } from './changes-list.ts';
import { changesRecord } from './changes-record.ts';
import { connectorsList } from './connectors-list.ts';
import { logsQuery } from './logs-query.ts';
import { metricsQuery } from './metrics-query.ts';
import { opsRead } from './ops-read.ts';
import { opsPlanCreate } from './ops-plan-create.ts';
import type { ChatTool } from './tool.ts';

export const CHAT_TOOLS: ReadonlyMap<string, ChatTool> = new Map([
  ['connectors_list', connectorsList],
  ['metrics_query', metricsQuery],
  ['logs_query', logsQuery],
  ['changes_list', changesList],
  ['changes_record', changesRecord],
  ['ops_read', opsRead],
  ['ops_plan_create', opsPlanCreate],
]);
