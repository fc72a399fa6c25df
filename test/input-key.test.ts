/**
 * The keys of the engine's kept answers (src/authz/input-key.ts) and the cache that keeps them
 * under the document's seqs (src/authz/decision-cache.ts). An answer kept for one input is given
 * to another only if it asks the same, so two inputs the policy could answer differently must
 * never share one: each field of a fully populated input, changed alone, changes both what the
 * policy is asked with and the key; what the policy is asked with is the declared fields only;
 * among inputs built to collide (ids holding the keys' own delimiters, numbers and strings), two
 * keys are equal exactly when the questions are; and an answer kept at one seq is not found at
 * another.
 */
import { expect } from 'chai';
import { AnswerCache } from '../src/authz/decision-cache.ts';
import {
  activeOrgKey,
  activeOrgPolicyInput,
  decisionKey,
  filterKey,
  filterPolicyInput,
  permissionsKey,
  policyInput,
  subjectCopy,
  subjectKey,
  visibleKey,
  visiblePolicyInput,
} from '../src/authz/input-key.ts';
import type { LoadedDocument } from '../src/authz/loaded-document.ts';
import type { ActiveOrgInput, AuthzInput, FilterInput, ResourceRef, Subject, VisibleInput } from '../src/authz/types.ts';

/** Every field any shape of T has, each required: a field added to one of the shapes must be given here. */
type EveryField<T> = { [K in T extends unknown ? keyof T : never]-?: unknown };

const subject = { id: '7', kind: 'user', server_admin: false, disabled: false } satisfies Required<Subject>;
const resource = { kind: 'dashboards', uid: 'abc', id: '12', scope: 'dashboards:uid:abc' } satisfies EveryField<ResourceRef>;

/** An input with every field set, so changing any one of them is a different question. */
const fullInput = {
  subject,
  org_id: '3',
  action: 'dashboards:write',
  resource: resource as ResourceRef,
  chat: { agent_type: 'investigator', tool: 'query_metrics', permission_mode: 'ask', write: false },
  delegate: [{ action: 'teams:read', scope: 'teams:*' }],
  target_user: { server_admin: false },
  destination: { kind: 'folders', uid: 'f1' },
  setup: { open: false },
  requires: [{ action: 'connectors:query', resource: { kind: 'connectors', uid: 'c1' } }],
  author: { kind: 'user', id: '9', must: 'differ' },
} satisfies Required<AuthzInput>;

const fullActiveOrgInput = {
  subject: { ...subject, pinned_org: '3' },
  org_id: '3',
  org: { is_member: true },
} satisfies Required<ActiveOrgInput> & { subject: Required<ActiveOrgInput['subject']> };

/** Another value of the same kind: a string, a flag, a list or an object that reads differently. */
function changed(value: unknown): unknown {
  if (typeof value === 'string') return `${value}x`;
  if (typeof value === 'boolean') return !value;
  if (value === null) return 'x';
  if (Array.isArray(value)) return [...value, value[0]];
  return { ...(value as object), changed: true };
}

/**
 * Each variant of `base` with one field changed or (when optional) left out: at the top, or for
 * the `nested` objects one level down (a property added to those is not a question, see below).
 */
function variants<T extends object>(base: T, nested: ReadonlyArray<keyof T>, optional: ReadonlyArray<keyof T>): Array<{ field: string; input: T }> {
  const out: Array<{ field: string; input: T }> = [];
  for (const field of Object.keys(base) as Array<keyof T>) {
    if (!nested.includes(field)) out.push({ field: String(field), input: { ...base, [field]: changed(base[field]) } });
    if (optional.includes(field)) {
      const without = { ...base };
      delete without[field];
      out.push({ field: `${String(field)} left out`, input: without });
    }
    if (nested.includes(field)) {
      const inner = base[field] as Record<string, unknown>;
      for (const innerField of Object.keys(inner)) {
        out.push({ field: `${String(field)}.${innerField}`, input: { ...base, [field]: { ...inner, [innerField]: changed(inner[innerField]) } } });
        const without = { ...inner };
        delete without[innerField];
        out.push({ field: `${String(field)}.${innerField} left out`, input: { ...base, [field]: without } });
      }
    }
  }
  return out;
}

type FilterItem = FilterInput['resources'][number];
/** An item with every field any item may have. */
const fullItem = { ...resource, requires: fullInput.requires } satisfies EveryField<FilterItem>;
const otherItem: FilterItem = { kind: 'alert.rules', uid: 'r2' };
const fullFilterInput = { subject, org_id: '3', action: 'alert.rules:read', resources: [fullItem as FilterItem, otherItem] } satisfies Required<FilterInput>;

const asked = (input: AuthzInput) => JSON.stringify(policyInput(input));
const askedActiveOrg = (input: ActiveOrgInput) => JSON.stringify(activeOrgPolicyInput(input));
const askedFilter = (input: FilterInput) => JSON.stringify(filterPolicyInput(input));
const askedVisible = (input: VisibleInput) => JSON.stringify(visiblePolicyInput(input));

const fullVisibleInput = { subject, org_id: '3', action: 'dashboards:read', kind: 'dashboards' } satisfies Required<VisibleInput>;

/** A document at these seqs, as far as the cache looks at one. */
const at = (seq: number, globalSeq = 0) => ({ seq, globalSeq }) as LoadedDocument;

/** Kept answers whose answer to each input is the question the policy is asked: a wrong answer shows as another question. */
function keptQuestions(inputs: AuthzInput[], max = 10_000): { get(input: AuthzInput): string | undefined; size: number } {
  const kept = new AnswerCache<{ question: string }>(max);
  for (const input of inputs) kept.set(at(1), decisionKey(input), { question: asked(input) });
  return {
    get: (input) => kept.get(at(1), decisionKey(input))?.question,
    get size() {
      return kept.size;
    },
  };
}

describe('kept-answer keys', () => {
  it('every field of an authorize() input, changed or left out alone, changes its key and what the policy is asked', () => {
    const optional = Object.keys(fullInput).filter((field) => !['subject', 'org_id', 'action'].includes(field)) as Array<keyof AuthzInput>;
    const all = variants<AuthzInput>(fullInput, ['subject', 'resource'], optional);
    expect(all.length).to.be.greaterThan(30);
    const kept = keptQuestions([fullInput]);
    for (const { field, input } of all) {
      expect(decisionKey(input), field).to.not.equal(decisionKey(fullInput));
      expect(kept.get(input), field).to.equal(undefined);
      expect(asked(input), field).to.not.equal(asked(fullInput));
    }
    expect(kept.get(structuredClone(fullInput)), 'the same question in another object').to.equal(asked(fullInput));
    // and, with every variant kept, each gets its own answer
    const allKept = keptQuestions(all.map(({ input }) => input));
    for (const { field, input } of all) expect(allKept.get(input), field).to.equal(asked(input));
  });

  it('every field of an active-org input, changed alone, changes its key and what the policy is asked', () => {
    const all = variants<ActiveOrgInput>(fullActiveOrgInput, ['subject', 'org'], []);
    for (const { field, input } of all) {
      expect(activeOrgKey(input), field).to.not.equal(activeOrgKey(fullActiveOrgInput));
      expect(askedActiveOrg(input), field).to.not.equal(askedActiveOrg(fullActiveOrgInput));
    }
  });

  it('every field of a filter() input and of each item, changed or left out alone, changes its key and what the policy is asked', () => {
    const all = variants<FilterInput>(fullFilterInput, ['subject'], []);
    for (const field of Object.keys(fullItem) as Array<keyof typeof fullItem>) {
      const changedItem = { ...fullItem, [field]: changed(fullItem[field]) } as FilterItem;
      const withoutField: Partial<typeof fullItem> = { ...fullItem };
      delete withoutField[field];
      all.push({ field: `resources[0].${field}`, input: { ...fullFilterInput, resources: [changedItem, otherItem] } });
      all.push({ field: `resources[0].${field} left out`, input: { ...fullFilterInput, resources: [withoutField as FilterItem, otherItem] } });
    }
    all.push({ field: 'the order of the items', input: { ...fullFilterInput, resources: [otherItem, fullItem as FilterItem] } });
    all.push({ field: 'one item fewer', input: { ...fullFilterInput, resources: [fullItem as FilterItem] } });
    for (const { field, input } of all) {
      expect(filterKey(input), field).to.not.equal(filterKey(fullFilterInput));
      expect(askedFilter(input), field).to.not.equal(askedFilter(fullFilterInput));
    }
    expect(new Set(all.map(({ input }) => filterKey(input))).size).to.equal(new Set(all.map(({ input }) => askedFilter(input))).size);
    const padded = { ...fullFilterInput, resources: fullFilterInput.resources.map((item) => ({ ...item, title: 'x' })), extra: true } as unknown as FilterInput;
    expect(filterKey(padded), 'a property besides the declared ones').to.equal(filterKey(fullFilterInput));
    expect(askedFilter(padded)).to.equal(askedFilter(fullFilterInput));
  });

  it('every field of a visible() input, changed alone, changes its key and what the policy is asked', () => {
    const all = variants<VisibleInput>(fullVisibleInput, ['subject'], []);
    all.push({ field: 'the other kind', input: { ...fullVisibleInput, kind: 'folders' } });
    for (const { field, input } of all) {
      expect(visibleKey(input), field).to.not.equal(visibleKey(fullVisibleInput));
      expect(askedVisible(input), field).to.not.equal(askedVisible(fullVisibleInput));
    }
    const padded = { ...fullVisibleInput, extra: true } as VisibleInput;
    expect(visibleKey(padded), 'a property besides the declared ones').to.equal(visibleKey(fullVisibleInput));
    expect(askedVisible(padded)).to.equal(askedVisible(fullVisibleInput));
  });

  it('every field of a subject, changed alone, changes its key', () => {
    for (const field of Object.keys(subject) as Array<keyof Subject>) {
      const other = { ...subject, [field]: changed(subject[field]) } as Subject;
      expect(subjectKey(other), field).to.not.equal(subjectKey(subject));
      expect(permissionsKey(other, '3'), field).to.not.equal(permissionsKey(subject, '3'));
      expect(JSON.stringify(subjectCopy(other)), field).to.not.equal(JSON.stringify(subjectCopy(subject)));
    }
  });

  it('asks the policy with the declared fields only: a property besides them neither reaches it nor changes the key', () => {
    const padded = {
      ...fullInput,
      subject: { ...subject, role: 'Admin' },
      resource: { ...resource, folder: 'general' },
      grants: ['*'],
    } as unknown as AuthzInput;
    expect(keptQuestions([fullInput]).get(padded)).to.equal(asked(fullInput));
    expect(asked(padded)).to.equal(asked(fullInput));
    expect(JSON.parse(asked(padded))).to.not.have.any.keys('grants');
    const paddedActiveOrg = { ...fullActiveOrgInput, subject: { ...fullActiveOrgInput.subject, role: 'Admin' }, org: { is_member: true, exists: true } };
    expect(activeOrgKey(paddedActiveOrg)).to.equal(activeOrgKey(fullActiveOrgInput));
    expect(askedActiveOrg(paddedActiveOrg)).to.equal(askedActiveOrg(fullActiveOrgInput));
  });

  it('a permissions() key names the org: null and "null" are two orgs', () => {
    expect(permissionsKey(subject, null)).to.not.equal(permissionsKey(subject, 'null'));
    expect(permissionsKey(subject, '3')).to.not.equal(permissionsKey(subject, '4'));
  });

  it('never gives two different questions one key, whatever the ids hold', () => {
    const base: AuthzInput = { subject, org_id: '3', action: 'teams:read' };
    const tricky = ['', '1', '1:', ':1', '1:1', '11', 'T', 'F', 'N', 'U', '#1#', '#"1"#', '{', '|', 'chat=T', 'x|chat=T', '3:abc', '"'];
    const inputs: AuthzInput[] = [base];
    for (const text of tricky) {
      inputs.push({ ...base, org_id: text });
      inputs.push({ ...base, action: text });
      inputs.push({ ...base, subject: { ...subject, id: text } });
      inputs.push({ ...base, resource: { kind: 'teams', id: text } });
      inputs.push({ ...base, resource: { kind: 'teams', uid: text } });
      inputs.push({ ...base, resource: { scope: text } });
      inputs.push({ ...base, resource: { kind: text, uid: text } });
      inputs.push({ ...base, setup: { open: text === '' } });
      inputs.push({ ...base, action: `teams:read${text}`, org_id: null });
    }
    // an id given as a number is another question than the same digits as a string (the policy sees the type)
    inputs.push({ ...base, resource: { kind: 'teams', id: 1 as unknown as string } });
    inputs.push({ ...base, org_id: null }, { ...base, org_id: 'null' });
    // a field set to null is another question than a field left out (the policy sees null)
    inputs.push({ ...base, resource: { kind: 'teams', uid: null as unknown as string } }, { ...base, resource: { kind: 'teams' } as ResourceRef });
    inputs.push({ ...base, setup: null as unknown as AuthzInput['setup'] });
    // two keys are equal exactly when the questions are
    const questionOf = new Map<string, string>();
    for (const input of inputs) {
      const key = decisionKey(input);
      expect(questionOf.get(key) ?? asked(input), asked(input)).to.equal(asked(input));
      questionOf.set(key, asked(input));
    }
    expect(questionOf.size).to.equal(new Set(inputs.map(asked)).size);
    expect(questionOf.size).to.be.greaterThan(100);
  });
});

describe('kept answers', () => {
  const question = (action: string, id = '7'): AuthzInput => ({ subject: { ...subject, id }, org_id: '3', action });

  it('keeps at most its bound, the least recently asked going first', () => {
    const kept = keptQuestions([question('a'), question('b')], 2);
    expect(kept.get(question('a'))).to.equal(asked(question('a')));
    const more = new AnswerCache<{ n: number }>(2);
    more.set(at(1), 'a', { n: 1 });
    more.set(at(1), 'b', { n: 2 });
    expect(more.get(at(1), 'a')).to.deep.equal({ n: 1 });
    more.set(at(1), 'c', { n: 3 });
    expect(more.size).to.equal(2);
    expect(more.get(at(1), 'b'), 'the least recently asked').to.equal(undefined);
    expect(more.get(at(1), 'a')).to.deep.equal({ n: 1 });
    expect(more.get(at(1), 'c')).to.deep.equal({ n: 3 });
  });

  it('keeps no question whose key is longer than 2,048 characters: a long id or a long rare field', () => {
    const longId = question('a', 'x'.repeat(2100));
    const longRare: AuthzInput = { ...question('a'), delegate: Array.from({ length: 80 }, () => ({ action: 'teams:read', scope: 'teams:*' })) };
    const kept = keptQuestions([longId, longRare, question('a')]);
    expect(kept.size).to.equal(1);
    expect(kept.get(longId)).to.equal(undefined);
    expect(kept.get(longRare)).to.equal(undefined);
    expect(kept.get(question('a'))).to.equal(asked(question('a')));
  });

  it('an answer kept at one pair of seqs is not found at another: a change of the org or of the global roles moves them', () => {
    const kept = new AnswerCache<{ allow: boolean }>(10);
    const key = decisionKey(question('a'));
    kept.set(at(4, 9), key, { allow: true });
    expect(kept.get(at(4, 9), key)).to.deep.equal({ allow: true });
    expect(kept.get(at(5, 9), key), 'after a change of the org').to.equal(undefined);
    expect(kept.get(at(4, 10), key), 'after a change of the global roles').to.equal(undefined);
    // the seqs cannot run into each other or into the key
    kept.set(at(1, 12), key, { allow: false });
    expect(kept.get(at(11, 2), key)).to.equal(undefined);
  });
});
