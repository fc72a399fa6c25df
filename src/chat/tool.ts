/**
 * What a chat tool is: its arguments (checked before anything runs), whether it writes, what it
 * does and what it answers (the route's response is one of the tools' results). A tool asks the
 * policy once, through `call.authorize`, which carries the chat context of the call, so the three
 * checks of a chat-driven action (the agent type may call the tool, a write needs a permission
 * mode other than read_only, RBAC allows the action) are one decision.
 */
import type { Action } from '../authz/actions.ts';
import type { Actor } from '../audit/writer.ts';
import type { ResourceRef, Subject } from '../authz/types.ts';
import { compileGuard, type Guard, type Infer, type JSONSchema } from '../http/guard.ts';
import type { RouteContext } from '../http/route.ts';
import type { Services } from '../services.ts';

export interface ToolCall<A> {
  args: A;
  orgId: string;
  services: Services;
  /** Who acts, for the audit entry of a write: the caller, whose agent called the tool. */
  actor: Actor;
  userId: string;
  /** The caller as the policy sees it: what a tool records as its author (an ops plan's). */
  subject: Subject;
  /** The one decision of the call: `action` on `resource`, with the chat checks. Before the tool acts. */
  authorize(action: Action, resource?: ResourceRef): Promise<void>;
  /** The items the caller may do `action` on (RBAC only: the call's decision has made the chat checks). */
  filter: RouteContext<unknown, unknown, unknown>['filter'];
}

export interface ChatTool {
  /** A write needs a permission mode other than read_only. */
  write: boolean;
  /** What `args` may hold. */
  args: JSONSchema;
  /** Checks `args` against the tool's schema: 400 naming the field (`body.args.query is required`). */
  guard: Guard;
  /** What `run` answers: the response schema of the tool's calls. */
  result: JSONSchema;
  run(call: ToolCall<unknown>): Promise<unknown>;
}

export function defineTool<const S extends JSONSchema>(tool: {
  write: boolean;
  args: S;
  result: JSONSchema;
  run(call: ToolCall<Infer<S>>): Promise<unknown>;
}): ChatTool {
  return {
    write: tool.write,
    args: tool.args,
    guard: compileGuard('body.args', tool.args),
    result: tool.result,
    // The guard checked args against the schema the type derives from.
    run: (call) => tool.run(call as ToolCall<Infer<S>>),
  };
}
