/**
 * The compiled wasm and OPA itself must decide identically: generated cases are evaluated
 * through the committed build in Node and through `opa eval` on the Rego sources. It runs
 * wherever `opa` is available, and CI (CI=true) fails when it is not.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ACTIONS } from '../src/authz/actions.ts';
import type { Decision, ResourceRef, Subject } from '../src/authz/types.ts';
import { PolicyModule } from '../src/authz/wasm.ts';
import { generateOrg } from './helpers/generated-org.ts';
import { findOpa, REPO_ROOT } from './helpers/opa.ts';
import { requirePeer } from './helpers/peers.ts';

const CASES = 400;

describe('policy parity: wasm in Node versus opa eval on the sources', function () {
  this.timeout(120_000);
  const opa = findOpa();

  before(function () {
    requirePeer(this, 'opa');
  });

  for (const seed of [1, 2, 3]) {
    it(`gives identical decisions, enforcement answers, permissions and filters for ${CASES} generated cases (seed ${seed})`, async () => {
      const org = generateOrg(seed, CASES);
      const instance = await (await PolicyModule.fromFile(path.join(REPO_ROOT, 'policies/build/authz.wasm'))).instantiate();
      instance.setData(org.document);
      const wasm = {
        decisions: org.inputs.map((input) => instance.evaluate('authz/decision', input)),
        enforced: org.inputs.map((input) => instance.evaluate('authz/enforce', input)),
        permissions: org.subjects.map((subject) => instance.evaluate('authz/permissions', { subject, org_id: 'org_gen' })),
        filters: org.filters.map((input) => instance.evaluate('authz/filter', input)),
      };

      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-parity-'));
      const dataFile = path.join(dir, 'data.json');
      fs.writeFileSync(dataFile, JSON.stringify({ ...org.document, parity: { inputs: org.inputs, subjects: org.subjects, filters: org.filters } }));
      const query = `{
        "decisions": [d | some i in data.parity.inputs; d := data.authz.decision with input as i],
        "enforced": [e | some i in data.parity.inputs; e := data.authz.enforce with input as i],
        "permissions": [p | some s in data.parity.subjects; p := data.authz.permissions with input as {"subject": s, "org_id": "org_gen"}],
        "filters": [f | some i in data.parity.filters; f := data.authz.filter with input as i]
      }`;
      const output = execFileSync(opa!, ['eval', '--format', 'json', '-d', path.join(REPO_ROOT, 'policies/authz'), '-d', dataFile, query], {
        encoding: 'utf8',
        maxBuffer: 256 * 1024 * 1024,
      });
      fs.rmSync(dir, { recursive: true, force: true });
      const native = JSON.parse(output).result[0].expressions[0].value;

      expect(native.decisions).to.have.length(CASES);
      const allowed = wasm.decisions.filter((d) => (d as { allow: boolean }).allow).length;
      expect(allowed, 'the generated cases mix allows and denies').to.be.within(CASES * 0.1, CASES * 0.9);
      for (let i = 0; i < CASES; i++) {
        expect(wasm.decisions[i], `case ${i}: ${JSON.stringify(org.inputs[i])}`).to.deep.equal(native.decisions[i]);
        // authorize() asks authz/enforce: true when the decision allows, else the decision itself, in wasm and in OPA
        const enforced = native.decisions[i].allow ? true : native.decisions[i];
        expect(wasm.enforced[i], `enforce, case ${i}: ${JSON.stringify(org.inputs[i])}`).to.deep.equal(enforced);
        expect(native.enforced[i], `native enforce, case ${i}`).to.deep.equal(enforced);
      }
      // permissions returns scope sets, as JSON arrays in no fixed order
      const sortScopes = (maps: Array<Record<string, string[]>>) =>
        maps.map((map) => Object.fromEntries(Object.entries(map).map(([action, scopes]) => [action, [...scopes].sort()])));
      expect(sortScopes(wasm.permissions as Array<Record<string, string[]>>)).to.deep.equal(sortScopes(native.permissions));
      expect(wasm.filters).to.deep.equal(native.filters);
    });
  }

  for (const seed of [4, 5]) {
    it(`filter keeps exactly the items decision allows, for every generated subject, action and kind of target (seed ${seed})`, async () => {
      const org = generateOrg(seed, 0);
      const instance = await (await PolicyModule.fromFile(path.join(REPO_ROOT, 'policies/build/authz.wasm'))).instantiate();
      instance.setData(org.document);
      const actions = [
        'dashboards:read',
        'dashboards:write',
        'folders:read',
        'connectors:query',
        'users:read',
        'users.tokens:write',
        'orgs:read',
        'org.users:write',
        'teams:read',
        'orgs:create',
      ];
      let allowed = 0;
      let items = 0;
      for (const subject of org.subjects) {
        const resources: ResourceRef[] = [
          { kind: 'users', id: subject.id },
          { kind: 'users', id: 'u1' },
          { kind: 'orgs', id: 'org_gen' },
          { kind: 'orgs', id: 'org_other' },
          ...['d0', 'd1', 'd2', 'd-missing'].map((uid) => ({ kind: 'dashboards', uid })),
          ...['f0', 'f1', 'f2'].map((uid) => ({ kind: 'folders', uid })),
          { kind: 'teams', id: 't1' },
          { kind: 'connectors', uid: 'c1' },
          { scope: '*' },
        ];
        for (const action of actions) {
          for (const orgId of ['org_gen', null]) {
            const request = { subject, org_id: orgId, action };
            const kept = instance.evaluate('authz/filter', { ...request, resources }) as number[];
            const decided = resources.flatMap((resource, index) =>
              (instance.evaluate('authz/decision', { ...request, resource }) as { allow: boolean }).allow ? [index] : [],
            );
            expect(kept, `${JSON.stringify(request)}`).to.deep.equal(decided);
            allowed += decided.length;
            items += resources.length;
          }
        }
      }
      expect(allowed, 'the generated items mix allows and denies').to.be.within(1, items - 1);
    });
  }
});

/** The permission map is decision's answer in scopes: in the committed build alone, so it runs without OPA. */
describe('policy parity: permissions versus decision', function () {
  this.timeout(120_000);

  /** The resource a listed scope names: `{kind, uid|id}` for `<kind>:uid|id:<value>`, else `{scope}`. */
  const resourceOfScope = (scope: string): ResourceRef => {
    const [kind, attr, ...rest] = scope.split(':');
    const value = rest.join(':');
    if (kind && value && attr === 'uid') return { kind, uid: value };
    if (kind && value && attr === 'id') return { kind, id: value };
    return { scope };
  };

  for (const [seed, legacyAcl] of [
    [6, true],
    [7, false],
  ] as const) {
    it(`permissions lists exactly what decision allows, for every generated subject, action and kind of target (seed ${seed}, legacy ACL ${legacyAcl ? 'on' : 'off'})`, async () => {
      const org = generateOrg(seed, 0);
      org.document.settings.legacy_acl_enabled = legacyAcl;
      const instance = await (await PolicyModule.fromFile(path.join(REPO_ROOT, 'policies/build/authz.wasm'))).instantiate();
      instance.setData(org.document);
      const allows = (subject: Subject, orgId: string | null, action: string, resource: ResourceRef) =>
        instance.evaluate('authz/decision', { subject, org_id: orgId, action, resource }) as Decision;
      let claims = 0;
      let covered = 0;
      for (const subject of org.subjects) {
        const resources: ResourceRef[] = [
          { kind: 'users', id: subject.id },
          { kind: 'users', id: 'u1' },
          { kind: 'orgs', id: 'org_gen' },
          { kind: 'orgs', id: 'org_other' },
          ...['d0', 'd1', 'd2', 'd3', 'd-missing'].map((uid) => ({ kind: 'dashboards', uid })),
          ...['f0', 'f1', 'f2', 'f3'].map((uid) => ({ kind: 'folders', uid })),
          ...['r0', 'r1'].map((uid) => ({ kind: 'alert.rules', uid })),
          ...['c0', 'c1', 'c2', 'c3'].map((uid) => ({ kind: 'connectors', uid })),
          { kind: 'teams', id: 't1' },
          { scope: 'dashboards:*' },
          { scope: '*' },
        ];
        for (const orgId of ['org_gen', null]) {
          const held = instance.evaluate('authz/permissions', { subject, org_id: orgId }) as Record<string, string[]>;
          const context = `${JSON.stringify(subject)} in ${orgId}`;
          // every (action, scope) it lists is allowed on a resource of that scope
          for (const [action, scopes] of Object.entries(held)) {
            for (const scope of scopes) {
              expect(allows(subject, orgId, action, resourceOfScope(scope)).allow, `${context} is listed ${action} on ${scope}`).to.equal(true);
              claims++;
            }
          }
          // every grant behind an allow is listed
          const holds = (action: string, scope: string) => (held[action] ?? []).includes(scope);
          for (const action of ACTIONS) {
            for (const resource of resources) {
              const decision = allows(subject, orgId, action, resource);
              if (!decision.allow) continue;
              covered++;
              for (const reason of decision.reasons) {
                const listed =
                  reason.kind === 'grant' && reason.scope !== undefined
                    ? holds(reason.action, reason.scope)
                    : reason.kind === 'acl'
                      ? holds(action, reason.scope)
                      : reason.kind === 'rule' && reason.rule === 'self'
                        ? holds(action, `users:id:${subject.id}`)
                        : reason.kind === 'rule' && reason.rule === 'server-admin'
                          ? holds(action, `orgs:id:${orgId}`)
                          : false;
                expect(
                  listed,
                  `${context}: ${action} on ${JSON.stringify(resource)} is allowed by ${JSON.stringify(reason)}, which permissions does not list`,
                ).to.equal(true);
              }
            }
          }
        }
      }
      expect(claims, 'the generated maps list something').to.be.greaterThan(100);
      expect(covered, 'the generated decisions allow something').to.be.greaterThan(100);
    });
  }
});
