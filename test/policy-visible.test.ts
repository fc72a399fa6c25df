/**
 * authz/visible answers a list as sets (all, folders, direct items); a list filtered by them must
 * hold exactly the items authz/filter keeps one by one and authz/decision allows. Checked in the
 * committed build over randomized orgs: a folder tree with grants at several levels, held by
 * users, teams, custom roles and the org roles' role entries, direct grants on items, wildcards
 * now and then, and the legacy ACL on and off.
 */
import path from 'node:path';
import { expect } from 'chai';
import type { ListedKind, OrgDocument, VisibleSet } from '../src/authz/types.ts';
import { PolicyModule, type PolicyInstance } from '../src/authz/wasm.ts';
import { generateOrg, prng } from './helpers/generated-org.ts';
import { REPO_ROOT } from './helpers/opa.ts';

const LIST_ACTIONS = [
  'dashboards:read',
  'dashboards:write',
  'dashboards:delete',
  'dashboards.permissions:write',
  'folders:read',
  'folders:write',
  'folders:delete',
];

/** More grants of the listed actions: on folders at every depth, on items directly, rarely on a wildcard. */
function addListGrants(document: OrgDocument, seed: number): void {
  const rnd = prng(seed);
  const folders = Object.keys(document.folders);
  const dashboards = Object.keys(document.dashboards);
  const scope = () => {
    const roll = rnd.int(20);
    if (roll === 0) return rnd.pick(['*', 'dashboards:*', 'folders:*', 'folders:uid:*', 'dashboards:uid:*']);
    if (roll < 10) return `folders:uid:${rnd.pick(folders)}`;
    return `dashboards:uid:${rnd.pick(dashboards)}`;
  };
  for (const [uid, permissions] of Object.entries(document.roles)) {
    if (uid.startsWith('basic:')) continue;
    for (let i = rnd.int(5); i > 0; i--) {
      const action = rnd.chance(0.05) ? 'dashboards:*' : rnd.pick(LIST_ACTIONS);
      (permissions[action] ??= {})[scope()] = true;
    }
  }
}

/** Whether a list filtered by `answer` holds the item: every item, or one in or under a listed folder, or one listed itself. */
function isListed(answer: VisibleSet, document: OrgDocument, kind: ListedKind, uid: string): boolean {
  if (answer.all) return true;
  const folder = kind === 'folders' ? uid : document.dashboards[uid]!.folder;
  const chain = document.folders[folder]?.scopes ?? [];
  return answer.folders.some((listed) => chain.includes(`folders:uid:${listed}`)) || answer.items.includes(uid);
}

describe('policy parity: visible versus filter and decision', function () {
  this.timeout(120_000);

  for (const [seed, legacyAcl] of [
    [11, true],
    [12, false],
    [13, true],
    [14, false],
  ] as const) {
    it(`a list filtered by the visible sets holds exactly what filter keeps and decision allows (seed ${seed}, legacy ACL ${legacyAcl ? 'on' : 'off'})`, async () => {
      const org = generateOrg(seed, 0);
      org.document.settings.legacy_acl_enabled = legacyAcl;
      addListGrants(org.document, seed);
      const instance: PolicyInstance = await (await PolicyModule.fromFile(path.join(REPO_ROOT, 'policies/build/authz.wasm'))).instantiate();
      instance.setData(org.document);
      const shapes = { all: 0, folders: 0, items: 0, allowed: 0, denied: 0 };
      for (const subject of org.subjects) {
        for (const orgId of ['org_gen', null]) {
          for (const action of LIST_ACTIONS) {
            for (const kind of ['dashboards', 'folders'] as const) {
              const uids = Object.keys(kind === 'folders' ? org.document.folders : org.document.dashboards);
              const request = { subject, org_id: orgId, action };
              const context = `${JSON.stringify(request)} listing ${kind}`;
              const answer = instance.evaluate('authz/visible', { ...request, kind }) as VisibleSet;
              const resources = uids.map((uid) => ({ kind, uid }));
              const kept = (instance.evaluate('authz/filter', { ...request, resources }) as number[]).map((index) => uids[index]);
              const decided = uids.filter((uid) => (instance.evaluate('authz/decision', { ...request, resource: { kind, uid } }) as { allow: boolean }).allow);
              const listed = uids.filter((uid) => isListed(answer, org.document, kind, uid));
              expect(listed, context).to.deep.equal(kept);
              expect(listed, context).to.deep.equal(decided);
              if (answer.all) shapes.all++;
              else {
                if (answer.folders.length > 0) shapes.folders++;
                if (answer.items.length > 0) shapes.items++;
              }
              shapes.allowed += listed.length;
              shapes.denied += uids.length - listed.length;
            }
          }
        }
      }
      // every shape of answer is exercised, and the lists mix allowed and denied items
      expect(shapes.all, 'answers of all').to.be.greaterThan(0);
      expect(shapes.folders, 'answers with folders').to.be.greaterThan(10);
      expect(shapes.items, 'answers with direct items').to.be.greaterThan(10);
      expect(shapes.allowed).to.be.greaterThan(100);
      expect(shapes.denied).to.be.greaterThan(100);
    });
  }

  it('is undefined for a kind whose items it does not list as sets', async () => {
    const org = generateOrg(15, 0);
    const instance = await (await PolicyModule.fromFile(path.join(REPO_ROOT, 'policies/build/authz.wasm'))).instantiate();
    instance.setData(org.document);
    const subject = org.subjects[0]!;
    expect(instance.evaluate('authz/visible', { subject, org_id: 'org_gen', action: 'alert.rules:read', kind: 'alert.rules' })).to.equal(undefined);
  });
});
