/**
 * Reading the schema (schema.ts): the configuration from an environment, the effective settings
 * by variable name, and the list of every variable.
 */
import { schema, type Config } from './schema.ts';
import { nodeEnv } from './sections/service.ts';
import { dataDir } from './sections/storage.ts';
import { Derived, Optional, Variable, type Env, type LoadContext, type Members, type Setting } from './variable.ts';

type Node = Members[string];

function readNode(node: Node, ctx: LoadContext, requiredWhen: string | undefined): unknown {
  if (node instanceof Variable) return node.read(ctx, requiredWhen);
  if (node instanceof Derived) return node.compute(ctx);
  if (node instanceof Optional) {
    if (!node.spec.isOn(ctx)) return null;
    const value = readMembers(node.members, ctx, node.spec.requiredWhen);
    node.spec.check?.(value as never);
    return value;
  }
  return readMembers(node, ctx, requiredWhen);
}

function readMembers(members: Members, ctx: LoadContext, requiredWhen: string | undefined): Record<string, unknown> {
  return Object.fromEntries(Object.entries(members).map(([key, node]) => [key, readNode(node, ctx, requiredWhen)]));
}

/** The configuration of `env`; a ConfigError names the first variable whose value is refused. */
export function loadConfig(env: Env = process.env): Config {
  // NODE_ENV and DATA_DIR are read first, from nothing but their own values: the rest may depend on them
  const base: LoadContext = { env, nodeEnv: 'development', dataDir: '' };
  const ctx: LoadContext = { env, nodeEnv: nodeEnv.read(base), dataDir: dataDir.read(base) };
  return readMembers(schema, ctx, undefined) as Config;
}

/** Every variable of `members`, in the order of the schema: a group's switch before its members. */
export function variablesOf(members: Members): Array<Variable<unknown>> {
  return Object.values(members).flatMap((node): Array<Variable<unknown>> => {
    if (node instanceof Variable) return [node];
    if (node instanceof Derived) return [];
    if (node instanceof Optional) return [...(node.spec.switch ? [node.spec.switch] : []), ...variablesOf(node.members)];
    return variablesOf(node);
  });
}

export const VARIABLES: ReadonlyArray<Variable<unknown>> = variablesOf(schema);

function showMembers(members: Members, group: Record<string, unknown> | null, settings: Record<string, Setting>): void {
  for (const [key, node] of Object.entries(members)) {
    const value = group === null ? null : group[key];
    if (node instanceof Variable) settings[node.name] = group === null ? null : node.show(value, group);
    else if (node instanceof Optional) {
      if (node.spec.switch) settings[node.spec.switch.name] = value !== null;
      showMembers(node.members, value as Record<string, unknown> | null, settings);
    } else if (!(node instanceof Derived)) showMembers(node, value as Record<string, unknown> | null, settings);
  }
}

/**
 * The effective configuration by variable name (GET /api/admin/settings): every variable of the
 * schema with the value this instance runs with, secrets shown only as set (REDACTED) or unset
 * (null); the variables of a group that is off are null.
 */
export function effectiveSettings(config: Config): Record<string, Setting> {
  const settings: Record<string, Setting> = {};
  showMembers(schema, config as unknown as Record<string, unknown>, settings);
  return settings;
}
