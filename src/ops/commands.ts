/**
 * The read commands of an ops connector, written as kubectl's (`get pods -n shop -l app=web`),
 * parsed here into what src/ops/reads.ts runs. Words are split on spaces only: no shell, no
 * quoting, no expansion. Anything outside the allowlist is a 400 that names it.
 */
import { BadRequestError } from '../errors.ts';

export const READ_VERBS = ['get', 'describe', 'logs', 'top', 'events', 'rollout status', 'rollout history', 'api-resources', 'version'] as const;

export const ALLOWLIST_TEXT = `the allowed commands are ${READ_VERBS.join(', ')}`;

export type ReadCommand =
  | { verb: 'get'; kind: string; name?: string; namespace?: string; allNamespaces: boolean; selector?: string; limit?: number }
  | { verb: 'describe'; kind: string; name: string; namespace?: string }
  | { verb: 'logs'; pod: string; namespace?: string; container?: string; tail?: number }
  | { verb: 'top'; kind: 'pods' | 'nodes'; namespace?: string }
  | { verb: 'events'; namespace?: string; allNamespaces: boolean; forObject?: string }
  | { verb: 'rollout status' | 'rollout history'; kind: string; name: string; namespace?: string }
  | { verb: 'api-resources' }
  | { verb: 'version' };

/** The flags each verb takes, by every spelling, and the option they set. */
type Option = 'namespace' | 'selector' | 'container' | 'tail' | 'limit' | 'allNamespaces' | 'for';
const FLAG_SPELLINGS: Record<string, Option> = {
  '-n': 'namespace',
  '--namespace': 'namespace',
  '-l': 'selector',
  '--selector': 'selector',
  '-c': 'container',
  '--container': 'container',
  '--tail': 'tail',
  '--limit': 'limit',
  '-A': 'allNamespaces',
  '--all-namespaces': 'allNamespaces',
  '--for': 'for',
};
const SWITCHES = new Set<Option>(['allNamespaces']);

const VERB_OPTIONS: Record<string, Option[]> = {
  get: ['namespace', 'selector', 'limit', 'allNamespaces'],
  describe: ['namespace'],
  logs: ['namespace', 'container', 'tail'],
  top: ['namespace'],
  events: ['namespace', 'allNamespaces', 'for'],
  'rollout status': ['namespace'],
  'rollout history': ['namespace'],
  'api-resources': [],
  version: [],
};

export const MAX_COMMAND_LENGTH = 500;
const MAX_LIST_LIMIT = 500;
const MAX_TAIL_LINES = 5000;
/** Names, label selectors and container names: printable, no spaces (split already), bounded. */
const WORD = /^[A-Za-z0-9._\-/=!,:()]{1,253}$/;

function spellingsOf(option: Option): string {
  return Object.entries(FLAG_SPELLINGS)
    .filter(([, value]) => value === option)
    .map(([flag]) => flag)
    .join('/');
}

function integerOption(value: string, flag: string, max: number): number {
  if (!/^\d{1,6}$/.test(value) || Number(value) < 1 || Number(value) > max) throw new BadRequestError(`command: ${flag} takes a whole number from 1 to ${max}`);
  return Number(value);
}

/** `kind/name` or `kind name`: kubectl's two ways to name one object. */
function kindAndName(words: string[], verb: string, nameRequired: boolean): { kind: string; name?: string } {
  const [first, second, ...rest] = words;
  if (!first) throw new BadRequestError(`command: ${verb} needs a resource kind, e.g. ${verb} deployment/web`);
  if (rest.length > 0) throw new BadRequestError(`command: ${verb} takes one resource, got ${words.join(' ')}`);
  const slash = first.indexOf('/');
  if (slash >= 0) {
    if (second !== undefined) throw new BadRequestError(`command: ${verb} takes kind/name or kind name, not both`);
    const name = first.slice(slash + 1);
    if (!name) throw new BadRequestError(`command: ${first} names no object`);
    return { kind: first.slice(0, slash), name };
  }
  if (nameRequired && second === undefined) throw new BadRequestError(`command: ${verb} needs an object, e.g. ${verb} ${first}/<name>`);
  return { kind: first, ...(second !== undefined && { name: second }) };
}

/** Parses a read command; 400 naming the allowlist (or the flag, or the word) when it is not one. */
export function parseReadCommand(text: string): ReadCommand {
  if (text.length > MAX_COMMAND_LENGTH) throw new BadRequestError(`command is longer than ${MAX_COMMAND_LENGTH} characters`);
  const words = text.trim().split(/\s+/).filter(Boolean);
  if (words[0] === 'kubectl') words.shift();
  const [head, sub] = words;
  if (!head) throw new BadRequestError(`command is empty: ${ALLOWLIST_TEXT}`);
  const verb = head === 'rollout' && (sub === 'status' || sub === 'history') ? `rollout ${sub}` : head;
  const allowed = VERB_OPTIONS[verb];
  if (!allowed) throw new BadRequestError(`command: ${head === 'rollout' ? `rollout ${sub ?? ''}`.trim() : head} is not allowed: ${ALLOWLIST_TEXT}`);

  const positional: string[] = [];
  const options: Partial<Record<Option, string>> = {};
  const rest = words.slice(verb.includes(' ') ? 2 : 1);
  for (let index = 0; index < rest.length; index++) {
    const word = rest[index]!;
    if (!word.startsWith('-')) {
      if (!WORD.test(word)) throw new BadRequestError(`command: ${JSON.stringify(word.slice(0, 60))} is not a name kubectl would take`);
      positional.push(word);
      continue;
    }
    const [flag, inline] = word.includes('=') ? [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)] : [word, undefined];
    const option = FLAG_SPELLINGS[flag];
    if (!option || !allowed.includes(option)) {
      const takes = allowed.map(spellingsOf).join(', ');
      throw new BadRequestError(`command: ${verb} does not take ${flag}${takes ? `; it takes ${takes}` : ''}`);
    }
    if (option in options) throw new BadRequestError(`command: ${flag} is given twice`);
    if (SWITCHES.has(option)) {
      if (inline !== undefined) throw new BadRequestError(`command: ${flag} takes no value`);
      options[option] = 'true';
      continue;
    }
    const value = inline ?? rest[++index];
    if (value === undefined || value === '' || value.startsWith('-')) throw new BadRequestError(`command: ${flag} needs a value`);
    if (!WORD.test(value)) throw new BadRequestError(`command: ${JSON.stringify(value.slice(0, 60))} is not a name kubectl would take`);
    options[option] = value;
  }
  if (options.namespace !== undefined && options.allNamespaces) throw new BadRequestError('command: -n and -A cannot both be given');
  const namespace = options.namespace;
  const allNamespaces = options.allNamespaces === 'true';
  const noPositional = () => {
    if (positional.length > 0)
      throw new BadRequestError(`command: ${verb} takes no ${positional.length === 1 ? 'argument' : 'arguments'}, got ${positional.join(' ')}`);
  };

  switch (verb) {
    case 'get': {
      const { kind, name } = kindAndName(positional, verb, false);
      if (name && (allNamespaces || options.selector || options.limit)) throw new BadRequestError('command: get of one object takes no -A, -l or --limit');
      return {
        verb,
        kind,
        ...(name && { name }),
        ...(namespace && { namespace }),
        allNamespaces,
        ...(options.selector && { selector: options.selector }),
        ...(options.limit && { limit: integerOption(options.limit, '--limit', MAX_LIST_LIMIT) }),
      };
    }
    case 'describe': {
      const { kind, name } = kindAndName(positional, verb, true);
      return { verb, kind, name: name!, ...(namespace && { namespace }) };
    }
    case 'rollout status':
    case 'rollout history': {
      const { kind, name } = kindAndName(positional, verb, true);
      return { verb, kind, name: name!, ...(namespace && { namespace }) };
    }
    case 'logs': {
      const [target, ...extra] = positional;
      if (!target || extra.length > 0) throw new BadRequestError('command: logs takes one pod, e.g. logs web-0 -n shop');
      const pod = target.startsWith('pod/') || target.startsWith('pods/') ? target.slice(target.indexOf('/') + 1) : target;
      if (pod.includes('/')) throw new BadRequestError('command: logs reads a pod: logs <pod> or logs pod/<pod>');
      return {
        verb,
        pod,
        ...(namespace && { namespace }),
        ...(options.container && { container: options.container }),
        ...(options.tail && { tail: integerOption(options.tail, '--tail', MAX_TAIL_LINES) }),
      };
    }
    case 'top': {
      const [what, ...extra] = positional;
      const kind = what === 'pod' || what === 'pods' || what === 'po' ? 'pods' : what === 'node' || what === 'nodes' || what === 'no' ? 'nodes' : null;
      if (!kind || extra.length > 0) throw new BadRequestError('command: top takes pods or nodes');
      return { verb, kind, ...(namespace && { namespace }) };
    }
    case 'events':
      noPositional();
      return { verb, ...(namespace && { namespace }), allNamespaces, ...(options.for && { forObject: options.for }) };
    case 'api-resources':
      noPositional();
      return { verb };
    default:
      noPositional();
      return { verb: 'version' };
  }
}
