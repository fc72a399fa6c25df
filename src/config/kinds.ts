/**
 * The kinds of configuration variable: each reads its value from the environment, refuses a
 * malformed one with a ConfigError naming the variable and the expected form, and states that
 * form and its default for the docs. A variable that is unset or empty takes its default.
 */
import path from 'node:path';
import { ConfigError, Variable, type LoadContext, type Setting } from './variable.ts';

type Default<T> = T | ((ctx: LoadContext) => T);

interface Common {
  meaning: string;
  /** The default in the docs' words, when the value alone does not say it. */
  defaultText?: string;
}

/** The docs' default of a variable its group cannot do without. */
export const REQUIRED = '*(required)*';

const valueOf = <T>(fallback: Default<T>, ctx: LoadContext): T => (typeof fallback === 'function' ? (fallback as (ctx: LoadContext) => T)(ctx) : fallback);
const code = (value: unknown) => `\`${String(value)}\``;
const stated = <T>(spec: Common & { default?: Default<T> }) =>
  spec.defaultText ?? (spec.default === undefined || spec.default === null ? '' : code(spec.default));

/** The error of a variable its group cannot do without. */
export function required(name: string, requiredWhen: string | undefined): never {
  throw new ConfigError(requiredWhen ? `${name} is required when ${requiredWhen}` : `${name} is required`);
}

/** `a or b`, `a, b, c or d`, and past four `one of a, b, …`. */
function choices(values: readonly string[]): string {
  if (values.length > 4) return `one of ${values.join(', ')}`;
  return values.length === 1 ? values[0]! : `${values.slice(0, -1).join(', ')} or ${values[values.length - 1]}`;
}

export function integer(name: string, spec: Common & { default: Default<number>; min: number; max?: number }): Variable<number> {
  const { min, max } = spec;
  return new Variable({
    name,
    form: max === undefined ? `integer ≥ ${min}` : `integer ${min}–${max}`,
    defaultText: stated(spec),
    meaning: spec.meaning,
    read(ctx) {
      const raw = ctx.env[name];
      if (raw === undefined || raw === '') return valueOf(spec.default, ctx);
      if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
      const value = Number(raw);
      if (value < min) throw new ConfigError(`${name} must be at least ${min}, got ${value}`);
      if (max !== undefined && value > max) throw new ConfigError(`${name} must be at most ${max}, got ${value}`);
      return value;
    },
  });
}

export function flag(name: string, spec: Common & { default: Default<boolean> }): Variable<boolean> {
  return new Variable({
    name,
    form: '`true` or `false`',
    defaultText: stated(spec),
    meaning: spec.meaning,
    read(ctx) {
      const raw = ctx.env[name];
      if (raw === undefined || raw === '') return valueOf(spec.default, ctx);
      const normalized = raw.trim().toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(normalized)) return true;
      if (['false', '0', 'no', 'off'].includes(normalized)) return false;
      throw new ConfigError(`${name} must be true or false, got "${raw}"`);
    },
  });
}

interface TextSpec<D> extends Common {
  /** Absent: the variable must be set when read (inside a group that is on). */
  default?: Default<D>;
  /** Surrounding spaces are dropped (a secret is taken as given). */
  trim?: boolean;
  secret?: boolean;
  form?: string;
  show?: (value: string | D, group: unknown) => Setting;
}

export function text<D extends string | null = string>(name: string, spec: TextSpec<D>): Variable<string | D> {
  const trim = spec.trim ?? !spec.secret;
  return new Variable<string | D>({
    name,
    form: spec.form ?? 'text',
    defaultText: stated(spec),
    meaning: spec.meaning,
    secret: spec.secret,
    show: spec.show,
    read(ctx, requiredWhen) {
      const raw = trim ? ctx.env[name]?.trim() : ctx.env[name];
      if (raw) return raw;
      return spec.default === undefined ? required(name, requiredWhen) : valueOf(spec.default, ctx);
    },
  });
}

/** A file path, resolved against the working directory. */
export function filePath(
  name: string,
  spec: Common & { default: Default<string>; trim?: boolean; show?: (value: string, group: unknown) => Setting },
): Variable<string> {
  return new Variable({
    name,
    form: 'path',
    defaultText: stated(spec),
    meaning: spec.meaning,
    show: spec.show,
    read(ctx) {
      const raw = spec.trim === false ? ctx.env[name] : ctx.env[name]?.trim();
      return path.resolve(raw || valueOf(spec.default, ctx));
    },
  });
}

/** One of `values`, in any case; the value is the canonical one. */
export function choice<const V extends string>(name: string, values: readonly V[], spec: Common & { default?: Default<V> }): Variable<V> {
  return new Variable({
    name,
    form: values.map(code).join(', '),
    defaultText: stated(spec),
    meaning: spec.meaning,
    read(ctx, requiredWhen) {
      const raw = ctx.env[name];
      const given = raw?.trim().toLowerCase();
      if (!given) return spec.default === undefined ? required(name, requiredWhen) : valueOf(spec.default, ctx);
      const value = values.find((candidate) => candidate.toLowerCase() === given);
      if (!value) throw new ConfigError(`${name} must be ${choices(values)}, got "${raw}"`);
      return value;
    },
  });
}

/** The entries of a comma-separated list, spaces around them dropped; `entries` checks or shapes them. */
export function list<T = string>(
  name: string,
  spec: Common & { form?: string; secret?: boolean; entries?: (entries: string[], ctx: LoadContext) => T[]; show?: (value: T[]) => Setting },
): Variable<T[]> {
  return new Variable<T[]>({
    name,
    form: spec.form ?? 'comma-separated list',
    defaultText: spec.defaultText ?? '*(empty)*',
    meaning: spec.meaning,
    secret: spec.secret,
    show: spec.show,
    read(ctx) {
      const entries = (ctx.env[name] ?? '')
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean);
      return spec.entries ? spec.entries(entries, ctx) : (entries as T[]);
    },
  });
}

/** An http(s) URL; with a `null` default, optional. */
export function url<D extends string | null = string>(
  name: string,
  spec: Common & { default?: Default<D>; shape?: (url: string) => string },
): Variable<string | D> {
  return new Variable<string | D>({
    name,
    form: 'http(s) URL',
    defaultText: stated(spec),
    meaning: spec.meaning,
    read(ctx, requiredWhen) {
      const fallback = spec.default === undefined ? '' : valueOf(spec.default, ctx);
      const raw = ctx.env[name]?.trim() || fallback;
      if (raw === null) return null as D;
      if (!raw) return required(name, requiredWhen);
      let parsed: URL;
      try {
        parsed = new URL(raw);
      } catch {
        throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
      }
      if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
      return spec.shape ? spec.shape(raw) : raw;
    },
  });
}

/** A number from 0 to 1. */
export function fraction(name: string, spec: Common & { default: number }): Variable<number> {
  return new Variable({
    name,
    form: 'number from 0 to 1',
    defaultText: stated(spec),
    meaning: spec.meaning,
    read(ctx) {
      const raw = ctx.env[name]?.trim() || String(spec.default);
      const value = Number(raw);
      if (!/^\d*\.?\d+$/.test(raw) || value > 1) throw new ConfigError(`${name} must be a number from 0 to 1, got "${ctx.env[name]}"`);
      return value;
    },
  });
}
