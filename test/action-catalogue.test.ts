import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ACTIONS, isGrantableAction } from '../src/authz/actions.ts';
import { BASIC_ROLES, FIXED_ROLES } from '../src/accesscontrol/builtin-roles.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, assignRole, buildRole, createUser, type TestUser } from './helpers/factories.ts';

const CATALOGUE: ReadonlySet<string> = new Set(ACTIONS);
/** Literals shaped like `<resource>:<verb>` that name something other than an action. */
const NOT_ACTIONS = /^(node|basic|fixed|managed|custom):/;

function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && keep(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Every action-shaped literal of the files, with where it is. */
function actionLiterals(files: string[], quote: string): Array<{ file: string; action: string }> {
  const pattern = new RegExp(`${quote}([a-z][a-z.]*:[a-z]+)${quote}`, 'g');
  return files.flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(pattern)].map((match) => ({ file, action: match[1]! })).filter(({ action }) => !NOT_ACTIONS.test(action)),
  );
}

describe('action catalogue (src/authz/actions.ts)', () => {
  it('holds every action-shaped literal of src/ and of the non-test Rego', () => {
    const typescript = actionLiterals(
      filesUnder('src', (name) => name.endsWith('.ts')),
      "'",
    );
    const rego = actionLiterals(
      filesUnder('policies/authz', (name) => name.endsWith('.rego') && !name.endsWith('_test.rego')),
      '"',
    );
    expect(typescript.length).to.be.greaterThan(100);
    expect(rego.length).to.be.greaterThan(40);
    expect([...typescript, ...rego].filter(({ action }) => !CATALOGUE.has(action))).to.deep.equal([]);
  });

  it('the basic and fixed roles grant only catalogued actions or wildcards over them', () => {
    const granted = [...BASIC_ROLES, ...FIXED_ROLES].flatMap((role) => role.permissions.map(({ action }) => `${role.uid} ${action}`));
    expect(granted.filter((entry) => !isGrantableAction(entry.split(' ')[1]!))).to.deep.equal([]);
  });

  it('fixed:users:writer grants users:disable and users:enable', () => {
    const writer = FIXED_ROLES.find((role) => role.uid === 'fixed:users:writer')!;
    expect(writer.permissions.map(({ action }) => action)).to.include.members(['users:disable', 'users:enable']);
  });

  describe('custom roles', () => {
    let app: TestApp;
    let orgAdmin: TestUser;

    before(async () => {
      app = await startTestApp();
      orgAdmin = await createUser(app, { role: 'Admin' });
    });
    after(async () => {
      await app.close();
    });

    it('refuses an unknown action or a wildcard over an unknown resource with 400', async () => {
      for (const action of ['teams:frobnicate', 'bananas:read', 'bananas:*', 'teams.frobs:*']) {
        const res = await api(app, orgAdmin).post('/api/access-control/roles', buildRole({ permissions: [{ action, scope: '*' }] }));
        expect(res.status, action).to.equal(400);
        expect(res.body.message).to.equal(`permissions[0].action ${action} is not a known action: a catalogued <resource>:<verb>, <resource>:* or *`);
      }
    });

    it('accepts catalogued actions and wildcards over catalogued resources', async () => {
      const permissions = [
        { action: '*', scope: '*' },
        { action: 'teams:*', scope: 'teams:*' },
        { action: 'alert.rules:*', scope: 'folders:*' },
        { action: 'teams:read', scope: 'teams:*' },
      ];
      const res = await api(app, orgAdmin).post('/api/access-control/roles', buildRole({ permissions }));
      expect(res.status).to.equal(201);
      expect(res.body.permissions).to.have.deep.members(permissions);
    });

    it('stores an action-only permission with scope *, and it grants the action on every scope', async () => {
      const body = { ...buildRole(), permissions: [{ action: 'teams:read' }] };
      const created = await api(app, orgAdmin).post('/api/access-control/roles', body);
      expect(created.status).to.equal(201);
      expect(created.body.permissions).to.deep.equal([{ action: 'teams:read', scope: '*' }]);

      const holder = await createUser(app, { role: 'None' });
      await assignRole(app, 'org_main', holder.id, body.uid);
      const teams = await api(app, holder).get('/api/teams/search');
      expect(teams.status).to.equal(200);
    });
  });
});
