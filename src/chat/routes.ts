/**
 * `POST /api/chat/tools/:tool` `{agentType, permissionMode, args}`: the chat agent reaches
 * connectors only through these tools, each call one policy decision carrying the chat context
 * (src/chat/tool.ts). The answer is the tool's result as it is.
 */
import { NotFoundError } from '../errors.ts';
import { actorOf } from '../http/actor.ts';
import type { RouteModule } from '../http/route.ts';
import { subjectOf } from '../http/subject.ts';
import { CHAT_TOOLS } from './tools.ts';

const shortText = { type: 'string', minLength: 1, maxLength: 64 } as const;

export const chatRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'post',
    path: '/api/chat/tools/:tool',
    access: 'authenticated',
    level: 'org',
    params: { type: 'object', properties: { tool: shortText }, required: ['tool'] },
    body: {
      type: 'object',
      properties: {
        agentType: shortText,
        permissionMode: shortText,
        args: { type: 'object', default: {} },
      },
      required: ['agentType', 'permissionMode'],
      additionalProperties: false,
    },
    summary: "Calls a chat tool for the caller's agent: one policy decision with the chat context, then the tool's result.",
    responses: { 200: { anyOf: [...CHAT_TOOLS.values()].map((tool) => tool.result) } },
    async handler({ ctx, params, body, principal, orgId, services, authorize, filter }) {
      const tool = CHAT_TOOLS.get(params.tool);
      if (!tool) {
        // Who may not use chat learns nothing of its tools; who may learns their names.
        await authorize('chat:use');
        throw new NotFoundError(`no chat tool ${params.tool}: the tools are ${[...CHAT_TOOLS.keys()].join(', ')}`);
      }
      const args = tool.guard(body.args);
      const chat = { agent_type: body.agentType, tool: params.tool, permission_mode: body.permissionMode, write: tool.write };
      ctx.body = await tool.run({
        args,
        orgId,
        services,
        actor: actorOf(ctx, principal),
        userId: principal.user.id,
        subject: subjectOf(principal),
        filter,
        authorize: (action, resource) => authorize(action, resource, { chat }),
      });
    },
  });
};
