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
import type { ResourceRef } from '../src/authz/types.ts';
import { PolicyModule } from '../src/authz/wasm.ts';
import { generateOrg } from './helpers/generated-org.ts';
import { findOpa, REPO_ROOT } from './helpers/opa.ts';

const CASES = 400;

describe('policy parity: wasm in Node versus opa eval on the sources', function () {
  this.timeout(120_000);
  const opa = findOpa();

  before(function () {
    if (!opa) {
      if (process.env.CI) throw new Error('opa is required in CI for the parity test (tools/opa.sh installs it)');
      this.skip();
    }
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
