/**
 * What a configuration variable is: its name, the form its value takes, its default, whether it
 * is a secret and what it means, with how it is read from the environment and how GET
 * /api/admin/settings shows it. The kinds of variable are in kinds.ts; the variables themselves
 * in schema.ts.
 */

export class ConfigError extends Error {}

export type Env = Record<string, string | undefined>;

export const NODE_ENVS = ['production', 'development', 'test'] as const;
export type NodeEnv = (typeof NODE_ENVS)[number];

/** What a variable's reading may depend on besides its own value. */
export interface LoadContext {
  env: Env;
  nodeEnv: NodeEnv;
  /** DATA_DIR, resolved. */
  dataDir: string;
}

/** A value as GET /api/admin/settings shows it. */
export type Setting = string | number | boolean | string[] | null;

/** What stands for a secret wherever configuration is shown (GET /api/admin/settings, the start-up line). */
export const REDACTED = '*****';

export interface VariableSpec<T> {
  name: string;
  /** The expected form, in the words of the docs and of the loader's errors: `integer ≥ 1`, `true or false`. */
  form: string;
  /** The default as the docs state it; an empty string when there is none. */
  defaultText: string;
  /** What the variable does (Markdown). */
  meaning: string;
  /** Shown only as set (REDACTED) or unset (null). */
  secret?: boolean;
  /** The value, or a ConfigError naming the variable; `requiredWhen` says when its group needs it set. */
  read(ctx: LoadContext, requiredWhen: string | undefined): T;
  /** How the settings show a value other than as itself (or REDACTED for a secret); `group` holds its siblings. */
  show?(value: T, group: unknown): Setting;
}

export class Variable<T> {
  readonly name: string;
  readonly form: string;
  readonly defaultText: string;
  readonly meaning: string;
  readonly secret: boolean;
  private readonly spec: VariableSpec<T>;

  constructor(spec: VariableSpec<T>) {
    this.spec = spec;
    this.name = spec.name;
    this.form = spec.form;
    this.defaultText = spec.defaultText;
    this.meaning = spec.meaning;
    this.secret = spec.secret ?? false;
  }

  read(ctx: LoadContext, requiredWhen?: string): T {
    return this.spec.read(ctx, requiredWhen);
  }

  show(value: T, group: unknown): Setting {
    if (this.spec.show) return this.spec.show(value, group);
    if (this.secret) return value ? REDACTED : null;
    return (value ?? null) as Setting;
  }
}

/** A field of the configuration computed from others, not read from a variable of its own. */
export class Derived<T> {
  constructor(readonly compute: (ctx: LoadContext) => T) {}
}

/** The members of a group: variables, derived fields and nested groups. */
export interface Members {
  [key: string]: Variable<any> | Derived<any> | Optional<any> | Members;
}

export interface OptionalSpec<M extends Members> {
  /** Whether the group is on: its value is null when off, and its members are not read. */
  isOn(ctx: LoadContext): boolean;
  /** Said by the error of a member that must be set: `SAML_ENABLED=true`. */
  requiredWhen: string;
  /** The variable that turns the group on, when it is not one of its members (shown as whether the group is on). */
  switch?: Variable<boolean>;
  /** A rule across members, checked once they are all read. */
  check?(value: Infer<M>): void;
}

/** A group that is either wholly configured or null (a login provider that is off). */
export class Optional<M extends Members> {
  constructor(
    readonly spec: OptionalSpec<M>,
    readonly members: M,
  ) {}
}

/** The configuration a schema describes. */
export type Infer<N> =
  N extends Variable<infer T> ? T : N extends Derived<infer T> ? T : N extends Optional<infer M> ? InferMembers<M> | null : InferMembers<N>;
type InferMembers<M> = { [K in keyof M]: Infer<M[K]> };
