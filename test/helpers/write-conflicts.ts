/**
 * The write-conflict fuzz (test/write-conflicts.test.ts, tools/bench/write-conflicts.ts): rounds
 * of two or three conflicting writes on the same rows (update × delete, move × delete, move ×
 * move, rename × rename, grant × revoke, member add × org delete…), sent at once with seeded
 * random delays to one instance or to two instances over the same database. Every answer must be
 * 2xx, 404, 409 or 412 with a `{message}` (400 only where the same requests one after the other
 * answer 400 too, as a move into a folder that is gone); after the rounds the database holds no
 * orphan row, no folder cycle, no folder deeper than the limit, every acknowledged write with its
 * audit entry, and each instance's policy document equals a fresh build.
 */
import http from 'node:http';
import { MAX_FOLDER_DEPTH } from '../../src/folders/store.ts';
import type { TestApp } from './app.ts';
import { addMember, createOrg, createUser, type TestUser } from './factories.ts';

/** mulberry32: a small seeded generator, so a run is reproducible from its printed seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface ConflictingRequest {
  label: string;
  method: 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  body?: unknown;
  /** The org the request acts in (X-Svc-Org-Id); default the round's org. */
  orgId?: string;
  /** Statuses besides 2xx, 404, 409 and 412 that the same request answers when it runs after the others (e.g. 400 for a destination that is gone). */
  alsoAllowed?: number[];
  /** The audit entry an acknowledged answer must have left: the action's prefix and the target id. */
  audit?: { action: string; targetId: string };
}

/** One round: the writes sent at once, and what their answers imply about the rows afterwards. */
interface Conflict {
  requests: ConflictingRequest[];
  /** Problems with the rows given the answers (an acknowledged write missing, two winners of one name). */
  verify?: (answers: Answer[]) => Promise<string[]>;
}

interface World {
  app: TestApp;
  admin: TestUser;
  /** The org the round works in (its requests' X-Svc-Org-Id unless they name another). */
  orgId: string;
  /** A name no other round uses. */
  unique(prefix: string): string;
  /** Sends a setup request as the admin; anything but 2xx fails the round's setup. */
  setup(method: string, path: string, body?: unknown, orgId?: string): Promise<any>;
  user(): Promise<TestUser>;
  exists(table: string, where: Record<string, unknown>): Promise<boolean>;
}

interface Scenario {
  name: string;
  build(world: World): Promise<Conflict>;
}

/** A grant to everyone of an org role on the resource at `path`: a third write on the same row, no user to make. */
const roleGrant = (path: string): ConflictingRequest => ({
  label: 'grant',
  method: 'POST',
  path: `${path}/permissions`,
  body: { items: [{ role: 'Editor', permission: 2 }] },
});

/**
 * One request on a connection of its own: a kept-alive connection that the server closes while
 * idle (between batches) may be picked for the next request and reset under it, an answer lost
 * that no status could stand for.
 */
function send(app: TestApp, method: string, path: string, cookie: string, orgId: string, body?: unknown): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${app.url}${path}`,
      {
        method,
        agent: false,
        headers: {
          cookie,
          'x-svc-org-id': orgId,
          ...(payload !== undefined && { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON: kept as text, which fails the {message} check
          }
          resolve({ status: response.statusCode ?? 0, body: parsed });
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

interface Answer {
  status: number;
  body: any;
}

/** Every direct grant on the resource at `path` taken away. */
const revokeAll = (path: string): ConflictingRequest => ({ label: 'revoke all', method: 'POST', path: `${path}/permissions`, body: { items: [] } });

/** The most writes a round sends at once. */
const MAX_WRITES = 4;

const ok = (res: Answer | undefined) => !!res && res.status >= 200 && res.status < 300;

/** An update racing a delete: when the delete won the row is gone, else an acknowledged update shows. */
function updateDeleteVerify(world: World, table: string, where: Record<string, unknown>, updated: Record<string, unknown>) {
  return async ([update, remove]: Answer[]): Promise<string[]> => {
    const row = await world.app.db(table).where(where).first();
    if (ok(remove)) return row ? [`${table} ${JSON.stringify(where)} acknowledged deleted but present`] : [];
    if (!row) return [`${table} ${JSON.stringify(where)} gone though no delete was acknowledged`];
    if (ok(update) && Object.entries(updated).some(([column, value]) => row[column] !== value))
      return [`${table} ${JSON.stringify(where)} acknowledged update ${JSON.stringify(updated)} not present`];
    return [];
  };
}

/** Of writes that each take the same unique name, at most one is acknowledged. */
const oneWinner = (what: string) => async (answers: Answer[]) =>
  answers.filter(ok).length > 1 ? [`${what}: ${answers.filter(ok).length} writes of the same name acknowledged`] : [];

function alertRule(title: string, folderUID: string) {
  return {
    title,
    folderUID,
    ruleGroup: 'fuzz',
    condition: 'B',
    data: [
      { refId: 'A', datasourceUid: 'fuzz-changes', relativeTimeRange: { from: 600, to: 0 }, model: { expr: 'up' } },
      { refId: 'B', datasourceUid: '__expr__', model: { type: 'threshold', expression: 'A' } },
    ],
    for: '5m',
  };
}

const SCENARIOS: Scenario[] = [
  {
    name: 'folder rename × delete',
    async build(w) {
      const uid = w.unique('f');
      await w.setup('POST', '/api/folders', { uid, title: uid });
      const title = `${uid}-renamed`;
      return {
        requests: [
          { label: 'rename', method: 'PUT', path: `/api/folders/${uid}`, body: { title }, audit: { action: 'folder.updated', targetId: uid } },
          { label: 'delete', method: 'DELETE', path: `/api/folders/${uid}`, audit: { action: 'folder.deleted', targetId: uid } },
          roleGrant(`/api/folders/${uid}`),
          {
            label: 'describe',
            method: 'PUT',
            path: `/api/folders/${uid}`,
            body: { description: 'described' },
            audit: { action: 'folder.updated', targetId: uid },
          },
        ],
        verify: updateDeleteVerify(w, 'folders', { org_id: w.orgId, uid }, { title }),
      };
    },
  },
  {
    name: 'folder move × delete',
    async build(w) {
      const [uid, destination] = [w.unique('f'), w.unique('d')];
      await w.setup('POST', '/api/folders', { uid, title: uid });
      await w.setup('POST', '/api/folders', { uid: destination, title: destination });
      return {
        requests: [
          { label: 'move', method: 'PUT', path: `/api/folders/${uid}`, body: { parentUid: destination }, audit: { action: 'folder.updated', targetId: uid } },
          { label: 'delete', method: 'DELETE', path: `/api/folders/${uid}`, audit: { action: 'folder.deleted', targetId: uid } },
          roleGrant(`/api/folders/${uid}`),
          {
            label: 'rename',
            method: 'PUT',
            path: `/api/folders/${uid}`,
            body: { title: `${uid}-renamed` },
            audit: { action: 'folder.updated', targetId: uid },
          },
        ],
        verify: updateDeleteVerify(w, 'folders', { org_id: w.orgId, uid }, { parent_uid: destination }),
      };
    },
  },
  {
    name: 'folder move × delete of the destination',
    async build(w) {
      const [uid, destination] = [w.unique('f'), w.unique('d')];
      await w.setup('POST', '/api/folders', { uid, title: uid });
      await w.setup('POST', '/api/folders', { uid: destination, title: destination });
      return {
        requests: [
          {
            label: 'move',
            method: 'PUT',
            path: `/api/folders/${uid}`,
            body: { parentUid: destination },
            alsoAllowed: [400],
            audit: { action: 'folder.updated', targetId: uid },
          },
          { label: 'delete destination', method: 'DELETE', path: `/api/folders/${destination}`, audit: { action: 'folder.deleted', targetId: destination } },
        ],
      };
    },
  },
  {
    name: 'folder move × move (a cycle)',
    async build(w) {
      const [a, b] = [w.unique('a'), w.unique('b')];
      await w.setup('POST', '/api/folders', { uid: a, title: a });
      await w.setup('POST', '/api/folders', { uid: b, title: b });
      return {
        requests: [
          {
            label: 'a into b',
            method: 'PUT',
            path: `/api/folders/${a}`,
            body: { parentUid: b },
            alsoAllowed: [400],
            audit: { action: 'folder.updated', targetId: a },
          },
          {
            label: 'b into a',
            method: 'PUT',
            path: `/api/folders/${b}`,
            body: { parentUid: a },
            alsoAllowed: [400],
            audit: { action: 'folder.updated', targetId: b },
          },
        ],
      };
    },
  },
  {
    name: 'folder move × move × move (a cycle of three)',
    async build(w) {
      const uids = [w.unique('a'), w.unique('b'), w.unique('c')];
      for (const uid of uids) await w.setup('POST', '/api/folders', { uid, title: uid });
      return {
        requests: uids.map((uid, i) => ({
          label: `${i} into ${(i + 1) % 3}`,
          method: 'PUT' as const,
          path: `/api/folders/${uid}`,
          body: { parentUid: uids[(i + 1) % 3] },
          alsoAllowed: [400],
          audit: { action: 'folder.updated', targetId: uid },
        })),
      };
    },
  },
  {
    name: 'folder move × move (depth)',
    async build(w) {
      // Two chains of four and a root: either move alone keeps the tree within eight levels, both together would not.
      const chain = async (prefix: string) => {
        const uids: string[] = [];
        for (let i = 0; i < 4; i++) {
          const uid = w.unique(prefix);
          await w.setup('POST', '/api/folders', { uid, title: uid, ...(i > 0 && { parentUid: uids[i - 1] }) });
          uids.push(uid);
        }
        return uids;
      };
      const [upper, lower] = [await chain('u'), await chain('l')];
      const root = w.unique('r');
      await w.setup('POST', '/api/folders', { uid: root, title: root });
      return {
        requests: [
          { label: 'lower under upper', method: 'PUT', path: `/api/folders/${lower[0]}`, body: { parentUid: upper[3] }, alsoAllowed: [400] },
          { label: 'upper under a root', method: 'PUT', path: `/api/folders/${upper[0]}`, body: { parentUid: root }, alsoAllowed: [400] },
        ],
      };
    },
  },
  {
    name: 'folder rename × rename (sibling titles)',
    async build(w) {
      const [parent, a, b] = [w.unique('p'), w.unique('a'), w.unique('b')];
      await w.setup('POST', '/api/folders', { uid: parent, title: parent });
      await w.setup('POST', '/api/folders', { uid: a, title: a, parentUid: parent });
      await w.setup('POST', '/api/folders', { uid: b, title: b, parentUid: parent });
      return {
        requests: [
          { label: 'rename a', method: 'PUT', path: `/api/folders/${a}`, body: { title: 'Same title' }, audit: { action: 'folder.updated', targetId: a } },
          { label: 'rename b', method: 'PUT', path: `/api/folders/${b}`, body: { title: 'same TITLE' }, audit: { action: 'folder.updated', targetId: b } },
        ],
        verify: oneWinner('folder titles'),
      };
    },
  },
  {
    name: 'folder create inside × delete',
    async build(w) {
      const [parent, child] = [w.unique('p'), w.unique('c')];
      await w.setup('POST', '/api/folders', { uid: parent, title: parent });
      return {
        requests: [
          {
            label: 'create inside',
            method: 'POST',
            path: '/api/folders',
            body: { uid: child, title: child, parentUid: parent },
            alsoAllowed: [400],
            audit: { action: 'folder.created', targetId: child },
          },
          { label: 'delete', method: 'DELETE', path: `/api/folders/${parent}`, audit: { action: 'folder.deleted', targetId: parent } },
          {
            label: 'dashboard inside',
            method: 'POST',
            path: '/api/dashboards/db',
            body: { dashboard: { uid: `${child}-dash`, title: child }, folderUid: parent },
            alsoAllowed: [400],
          },
        ],
      };
    },
  },
  {
    name: 'folder grant × delete',
    async build(w) {
      const uid = w.unique('f');
      const user = await w.user();
      await w.setup('POST', '/api/folders', { uid, title: uid });
      return {
        requests: [
          { label: 'grant', method: 'POST', path: `/api/folders/${uid}/permissions`, body: { items: [{ userId: user.id, permission: 2 }] } },
          { label: 'delete', method: 'DELETE', path: `/api/folders/${uid}`, audit: { action: 'folder.deleted', targetId: uid } },
          {
            label: 'rename',
            method: 'PUT',
            path: `/api/folders/${uid}`,
            body: { title: `${uid}-renamed` },
            audit: { action: 'folder.updated', targetId: uid },
          },
          revokeAll(`/api/folders/${uid}`),
        ],
      };
    },
  },
  {
    name: 'folder grant × revoke',
    async build(w) {
      const uid = w.unique('f');
      const user = await w.user();
      await w.setup('POST', '/api/folders', { uid, title: uid });
      await w.setup('POST', `/api/folders/${uid}/permissions`, { items: [{ userId: user.id, permission: 1 }] });
      return {
        requests: [
          { label: 'grant edit', method: 'POST', path: `/api/folders/${uid}/permissions`, body: { items: [{ userId: user.id, permission: 2 }] } },
          { label: 'revoke all', method: 'POST', path: `/api/folders/${uid}/permissions`, body: { items: [] } },
        ],
      };
    },
  },
  {
    name: 'dashboard save × delete',
    async build(w) {
      const uid = w.unique('dash');
      await w.setup('POST', '/api/dashboards/db', { dashboard: { uid, title: uid } });
      const title = `${uid}-saved`;
      return {
        requests: [
          { label: 'save', method: 'POST', path: '/api/dashboards/db', body: { dashboard: { uid, title }, overwrite: true } },
          { label: 'delete', method: 'DELETE', path: `/api/dashboards/uid/${uid}`, audit: { action: 'dashboard.deleted', targetId: uid } },
          roleGrant(`/api/dashboards/uid/${uid}`),
          revokeAll(`/api/dashboards/uid/${uid}`),
        ],
        // A save after the delete creates the dashboard anew (version 1): it is then there, with its title.
        verify: async (answers) => {
          const [save, remove] = answers;
          if (ok(save) && ok(remove) && save!.body.version === 1) {
            const row = await w.app.db('dashboards').where({ org_id: w.orgId, uid }).first('title');
            return row?.title === title ? [] : [`dashboard ${uid} saved anew after its delete but ${row ? `titled ${row.title}` : 'absent'}`];
          }
          return updateDeleteVerify(w, 'dashboards', { org_id: w.orgId, uid }, { title })(answers);
        },
      };
    },
  },
  {
    name: 'dashboard save × save (titles in a folder)',
    async build(w) {
      const [folder, a, b] = [w.unique('f'), w.unique('dash'), w.unique('dash')];
      await w.setup('POST', '/api/folders', { uid: folder, title: folder });
      for (const uid of [a, b]) await w.setup('POST', '/api/dashboards/db', { dashboard: { uid, title: uid }, folderUid: folder });
      return {
        requests: [a, b].map((uid) => ({
          label: `rename ${uid}`,
          method: 'POST' as const,
          path: '/api/dashboards/db',
          body: { dashboard: { uid, title: 'Same title' }, overwrite: true },
        })),
        verify: oneWinner('dashboard titles'),
      };
    },
  },
  {
    name: 'dashboard save into a folder × folder delete',
    async build(w) {
      const [folder, uid] = [w.unique('f'), w.unique('dash')];
      await w.setup('POST', '/api/folders', { uid: folder, title: folder });
      return {
        requests: [
          { label: 'save into', method: 'POST', path: '/api/dashboards/db', body: { dashboard: { uid, title: uid }, folderUid: folder }, alsoAllowed: [400] },
          {
            label: 'delete folder',
            method: 'DELETE',
            path: `/api/folders/${folder}?forceDeleteRules=true`,
            audit: { action: 'folder.deleted', targetId: folder },
          },
          { label: 'rule into', method: 'POST', path: '/api/v1/provisioning/alert-rules', body: alertRule(w.unique('rule'), folder), alsoAllowed: [400] },
        ],
      };
    },
  },
  {
    name: 'dashboard grant × delete',
    async build(w) {
      const uid = w.unique('dash');
      const user = await w.user();
      await w.setup('POST', '/api/dashboards/db', { dashboard: { uid, title: uid } });
      return {
        requests: [
          { label: 'grant', method: 'POST', path: `/api/dashboards/uid/${uid}/permissions`, body: { items: [{ userId: user.id, permission: 1 }] } },
          { label: 'delete', method: 'DELETE', path: `/api/dashboards/uid/${uid}`, audit: { action: 'dashboard.deleted', targetId: uid } },
        ],
      };
    },
  },
  {
    name: 'alert rule update × delete',
    async build(w) {
      const folder = w.unique('f');
      await w.setup('POST', '/api/folders', { uid: folder, title: folder });
      const rule = await w.setup('POST', '/api/v1/provisioning/alert-rules', alertRule(w.unique('rule'), folder));
      const title = `${rule.uid}-updated`;
      return {
        requests: [
          {
            label: 'update',
            method: 'PUT',
            path: `/api/v1/provisioning/alert-rules/${rule.uid}`,
            body: alertRule(title, folder),
            audit: { action: 'alert_rule.updated', targetId: rule.uid },
          },
          {
            label: 'delete',
            method: 'DELETE',
            path: `/api/v1/provisioning/alert-rules/${rule.uid}`,
            audit: { action: 'alert_rule.deleted', targetId: rule.uid },
          },
        ],
        verify: updateDeleteVerify(w, 'alert_rules', { org_id: w.orgId, uid: rule.uid }, { title }),
      };
    },
  },
  {
    name: 'alert rule update × update (titles in a folder)',
    async build(w) {
      const folder = w.unique('f');
      await w.setup('POST', '/api/folders', { uid: folder, title: folder });
      const rules: Array<{ uid: string }> = [];
      for (let i = 0; i < 2; i++) rules.push(await w.setup('POST', '/api/v1/provisioning/alert-rules', alertRule(w.unique('rule'), folder)));
      return {
        requests: rules.map((rule) => ({
          label: `rename ${rule.uid}`,
          method: 'PUT' as const,
          path: `/api/v1/provisioning/alert-rules/${rule.uid}`,
          body: alertRule('Same title', folder),
        })),
        verify: oneWinner('alert rule titles'),
      };
    },
  },
  {
    name: 'alert rule create × folder delete',
    async build(w) {
      const folder = w.unique('f');
      await w.setup('POST', '/api/folders', { uid: folder, title: folder });
      return {
        requests: [
          { label: 'create', method: 'POST', path: '/api/v1/provisioning/alert-rules', body: alertRule(w.unique('rule'), folder), alsoAllowed: [400] },
          {
            label: 'delete folder',
            method: 'DELETE',
            path: `/api/folders/${folder}?forceDeleteRules=true`,
            audit: { action: 'folder.deleted', targetId: folder },
          },
        ],
      };
    },
  },
  {
    name: 'connector update × delete',
    async build(w) {
      const uid = w.unique('c');
      await w.setup('POST', '/api/connectors', { uid, name: uid, type: 'changes' });
      const name = `${uid}-renamed`;
      return {
        requests: [
          { label: 'update', method: 'PUT', path: `/api/connectors/${uid}`, body: { name }, audit: { action: 'connector.updated', targetId: uid } },
          { label: 'delete', method: 'DELETE', path: `/api/connectors/${uid}`, audit: { action: 'connector.deleted', targetId: uid } },
          roleGrant(`/api/connectors/${uid}`),
          revokeAll(`/api/connectors/${uid}`),
        ],
        verify: updateDeleteVerify(w, 'connectors', { org_id: w.orgId, uid }, { name }),
      };
    },
  },
  {
    name: 'connector rename × rename',
    async build(w) {
      const [a, b, name] = [w.unique('c'), w.unique('c'), w.unique('name')];
      await w.setup('POST', '/api/connectors', { uid: a, name: a, type: 'changes' });
      await w.setup('POST', '/api/connectors', { uid: b, name: b, type: 'changes' });
      return {
        requests: [
          { label: 'rename a', method: 'PUT', path: `/api/connectors/${a}`, body: { name }, audit: { action: 'connector.updated', targetId: a } },
          { label: 'rename b', method: 'PUT', path: `/api/connectors/${b}`, body: { name }, audit: { action: 'connector.updated', targetId: b } },
        ],
        verify: oneWinner('connector names'),
      };
    },
  },
  {
    name: 'connector grant × delete',
    async build(w) {
      const uid = w.unique('c');
      const user = await w.user();
      await w.setup('POST', '/api/connectors', { uid, name: uid, type: 'changes' });
      return {
        requests: [
          { label: 'grant', method: 'POST', path: `/api/connectors/${uid}/permissions`, body: { items: [{ userId: user.id, permission: 1 }] } },
          { label: 'delete', method: 'DELETE', path: `/api/connectors/${uid}`, audit: { action: 'connector.deleted', targetId: uid } },
          {
            label: 'update',
            method: 'PUT',
            path: `/api/connectors/${uid}`,
            body: { name: `${uid}-renamed` },
            audit: { action: 'connector.updated', targetId: uid },
          },
          revokeAll(`/api/connectors/${uid}`),
        ],
      };
    },
  },
  {
    name: 'team update × delete',
    async build(w) {
      const team = await w.setup('POST', '/api/teams', { name: w.unique('team') });
      const id = String(team.teamId);
      const name = `${w.unique('team')}-renamed`;
      const user = await w.user();
      return {
        requests: [
          { label: 'update', method: 'PUT', path: `/api/teams/${id}`, body: { name }, audit: { action: 'team.updated', targetId: id } },
          { label: 'delete', method: 'DELETE', path: `/api/teams/${id}`, audit: { action: 'team.deleted', targetId: id } },
          {
            label: 'add member',
            method: 'POST',
            path: `/api/teams/${id}/members`,
            body: { userId: user.id },
            audit: { action: 'team.member_added', targetId: id },
          },
          { label: 'preferences', method: 'PUT', path: `/api/teams/${id}/preferences`, body: { theme: 'dark' } },
        ],
        verify: updateDeleteVerify(w, 'teams', { id }, { name }),
      };
    },
  },
  {
    name: 'team rename × rename',
    async build(w) {
      const a = String((await w.setup('POST', '/api/teams', { name: w.unique('team') })).teamId);
      const b = String((await w.setup('POST', '/api/teams', { name: w.unique('team') })).teamId);
      const name = w.unique('same');
      return {
        requests: [
          { label: 'rename a', method: 'PUT', path: `/api/teams/${a}`, body: { name }, audit: { action: 'team.updated', targetId: a } },
          { label: 'rename b', method: 'PUT', path: `/api/teams/${b}`, body: { name }, audit: { action: 'team.updated', targetId: b } },
        ],
        verify: oneWinner('team names'),
      };
    },
  },
  {
    name: 'team member add × team delete',
    async build(w) {
      const id = String((await w.setup('POST', '/api/teams', { name: w.unique('team') })).teamId);
      const user = await w.user();
      return {
        requests: [
          {
            label: 'add member',
            method: 'POST',
            path: `/api/teams/${id}/members`,
            body: { userId: user.id },
            audit: { action: 'team.member_added', targetId: id },
          },
          { label: 'delete team', method: 'DELETE', path: `/api/teams/${id}`, audit: { action: 'team.deleted', targetId: id } },
        ],
      };
    },
  },
  {
    name: 'team member admin × member remove × team delete',
    async build(w) {
      const id = String((await w.setup('POST', '/api/teams', { name: w.unique('team') })).teamId);
      const user = await w.user();
      await w.setup('POST', `/api/teams/${id}/members`, { userId: user.id });
      return {
        requests: [
          {
            label: 'make admin',
            method: 'PUT',
            path: `/api/teams/${id}/members/${user.id}`,
            body: { permission: 4 },
            audit: { action: 'team.member_updated', targetId: id },
          },
          { label: 'remove member', method: 'DELETE', path: `/api/teams/${id}/members/${user.id}`, audit: { action: 'team.member_removed', targetId: id } },
          { label: 'delete team', method: 'DELETE', path: `/api/teams/${id}`, audit: { action: 'team.deleted', targetId: id } },
        ],
      };
    },
  },
  {
    name: 'team member add × user delete',
    async build(w) {
      const id = String((await w.setup('POST', '/api/teams', { name: w.unique('team') })).teamId);
      const user = await w.user();
      return {
        requests: [
          {
            label: 'add member',
            method: 'POST',
            path: `/api/teams/${id}/members`,
            body: { userId: user.id },
            alsoAllowed: [400],
            audit: { action: 'team.member_added', targetId: id },
          },
          { label: 'delete user', method: 'DELETE', path: `/api/admin/users/${user.id}`, audit: { action: 'user.deleted', targetId: user.id } },
        ],
      };
    },
  },
  {
    name: 'team role assignment × team delete',
    async build(w) {
      const id = String((await w.setup('POST', '/api/teams', { name: w.unique('team') })).teamId);
      return {
        requests: [
          { label: 'assign', method: 'POST', path: `/api/access-control/teams/${id}/roles`, body: { roleUid: 'fixed:dashboards:reader' } },
          { label: 'delete team', method: 'DELETE', path: `/api/teams/${id}`, audit: { action: 'team.deleted', targetId: id } },
          { label: 'replace roles', method: 'PUT', path: `/api/access-control/teams/${id}/roles`, body: { roleUids: ['fixed:folders:reader'] } },
        ],
      };
    },
  },
  {
    name: 'org update × delete',
    async build(w) {
      const org = await w.setup('POST', '/api/orgs', { name: w.unique('org') });
      const id = String(org.id);
      const name = w.unique('org-renamed');
      const user = await w.user();
      return {
        requests: [
          { label: 'update', method: 'PUT', path: `/api/orgs/${id}`, body: { name }, audit: { action: 'org.updated', targetId: id } },
          { label: 'delete', method: 'DELETE', path: `/api/orgs/${id}`, audit: { action: 'org.deleted', targetId: id } },
          { label: 'add member', method: 'POST', path: `/api/orgs/${id}/users`, body: { loginOrEmail: user.login, role: 'Viewer' } },
        ],
        verify: updateDeleteVerify(w, 'orgs', { id }, { name }),
      };
    },
  },
  {
    name: 'org rename × rename',
    async build(w) {
      const a = String((await w.setup('POST', '/api/orgs', { name: w.unique('org') })).id);
      const b = String((await w.setup('POST', '/api/orgs', { name: w.unique('org') })).id);
      const name = w.unique('same-org');
      return {
        requests: [
          { label: 'rename a', method: 'PUT', path: `/api/orgs/${a}`, body: { name } },
          { label: 'rename b', method: 'PUT', path: `/api/orgs/${b}`, body: { name } },
        ],
        verify: oneWinner('org names'),
      };
    },
  },
  {
    name: 'org member add × org delete',
    async build(w) {
      const id = String((await w.setup('POST', '/api/orgs', { name: w.unique('org') })).id);
      const user = await w.user();
      return {
        requests: [
          { label: 'add member', method: 'POST', path: `/api/orgs/${id}/users`, body: { loginOrEmail: user.login, role: 'Editor' } },
          { label: 'delete org', method: 'DELETE', path: `/api/orgs/${id}`, audit: { action: 'org.deleted', targetId: id } },
        ],
      };
    },
  },
  {
    name: 'org team create × org delete',
    async build(w) {
      const id = String((await w.setup('POST', '/api/orgs', { name: w.unique('org') })).id);
      return {
        requests: [
          { label: 'create team', method: 'POST', path: '/api/teams', orgId: id, body: { name: w.unique('team') }, alsoAllowed: [401, 403] },
          { label: 'create folder', method: 'POST', path: '/api/folders', orgId: id, body: { title: w.unique('folder') }, alsoAllowed: [401, 403] },
          { label: 'delete org', method: 'DELETE', path: `/api/orgs/${id}`, audit: { action: 'org.deleted', targetId: id } },
        ],
      };
    },
  },
  {
    name: 'user update × delete',
    async build(w) {
      const user = await w.user();
      const name = `${user.login}-renamed`;
      return {
        requests: [
          { label: 'update', method: 'PATCH', path: `/api/admin/users/${user.id}`, body: { name } },
          { label: 'delete', method: 'DELETE', path: `/api/admin/users/${user.id}`, audit: { action: 'user.deleted', targetId: user.id } },
          { label: 'org role', method: 'PATCH', path: `/api/org/users/${user.id}`, body: { role: 'Editor' } },
          { label: 'disable', method: 'POST', path: `/api/admin/users/${user.id}/disable` },
        ],
        verify: updateDeleteVerify(w, 'users', { id: user.id }, { name }),
      };
    },
  },
  {
    name: 'user role assignment × unassignment',
    async build(w) {
      const user = await w.user();
      const role = 'fixed:dashboards:reader';
      return {
        requests: [
          { label: 'assign', method: 'POST', path: `/api/access-control/users/${user.id}/roles`, body: { roleUid: role } },
          { label: 'unassign', method: 'DELETE', path: `/api/access-control/users/${user.id}/roles/${role}` },
          { label: 'delete user', method: 'DELETE', path: `/api/admin/users/${user.id}`, audit: { action: 'user.deleted', targetId: user.id } },
        ],
      };
    },
  },
  {
    name: 'service account update × delete',
    async build(w) {
      const id = String((await w.setup('POST', '/api/serviceaccounts', { name: w.unique('sa'), role: 'Viewer' })).id);
      const name = w.unique('sa-renamed');
      return {
        requests: [
          {
            label: 'update',
            method: 'PATCH',
            path: `/api/serviceaccounts/${id}`,
            body: { name, role: 'Editor' },
            audit: { action: 'service_account.updated', targetId: id },
          },
          { label: 'delete', method: 'DELETE', path: `/api/serviceaccounts/${id}`, audit: { action: 'service_account.deleted', targetId: id } },
          { label: 'create token', method: 'POST', path: `/api/serviceaccounts/${id}/tokens`, body: { name: 'token' } },
          { label: 'create another token', method: 'POST', path: `/api/serviceaccounts/${id}/tokens`, body: { name: 'another token' } },
        ],
        verify: updateDeleteVerify(w, 'users', { id }, { name }),
      };
    },
  },
  {
    name: 'service account rename × rename',
    async build(w) {
      const a = String((await w.setup('POST', '/api/serviceaccounts', { name: w.unique('sa'), role: 'Viewer' })).id);
      const b = String((await w.setup('POST', '/api/serviceaccounts', { name: w.unique('sa'), role: 'Viewer' })).id);
      const name = w.unique('same-sa');
      return {
        requests: [
          { label: 'rename a', method: 'PATCH', path: `/api/serviceaccounts/${a}`, body: { name }, audit: { action: 'service_account.updated', targetId: a } },
          { label: 'rename b', method: 'PATCH', path: `/api/serviceaccounts/${b}`, body: { name }, audit: { action: 'service_account.updated', targetId: b } },
        ],
        verify: oneWinner('service account names'),
      };
    },
  },
  {
    name: 'service account token create × revoke × account delete',
    async build(w) {
      const id = String((await w.setup('POST', '/api/serviceaccounts', { name: w.unique('sa'), role: 'Viewer' })).id);
      const token = await w.setup('POST', `/api/serviceaccounts/${id}/tokens`, { name: 'first' });
      return {
        requests: [
          { label: 'create token', method: 'POST', path: `/api/serviceaccounts/${id}/tokens`, body: { name: 'second' } },
          { label: 'revoke token', method: 'DELETE', path: `/api/serviceaccounts/${id}/tokens/${token.id}` },
          { label: 'delete account', method: 'DELETE', path: `/api/serviceaccounts/${id}`, audit: { action: 'service_account.deleted', targetId: id } },
        ],
      };
    },
  },
  {
    name: 'role update × delete',
    async build(w) {
      const uid = `custom:${w.unique('role')}`;
      await w.setup('POST', '/api/access-control/roles', {
        uid,
        name: uid,
        displayName: uid,
        permissions: [{ action: 'dashboards:read', scope: 'dashboards:*' }],
      });
      return {
        requests: [
          {
            label: 'update',
            method: 'PUT',
            path: `/api/access-control/roles/${uid}`,
            body: { version: 2, displayName: `${uid} renamed`, permissions: [{ action: 'folders:read', scope: 'folders:*' }] },
          },
          { label: 'delete', method: 'DELETE', path: `/api/access-control/roles/${uid}` },
        ],
      };
    },
  },
  {
    name: 'role update × update',
    async build(w) {
      const uid = `custom:${w.unique('role')}`;
      await w.setup('POST', '/api/access-control/roles', {
        uid,
        name: uid,
        displayName: uid,
        permissions: [{ action: 'dashboards:read', scope: 'dashboards:*' }],
      });
      return {
        requests: [
          {
            label: 'update a',
            method: 'PUT',
            path: `/api/access-control/roles/${uid}`,
            body: { version: 2, permissions: [{ action: 'folders:read', scope: 'folders:*' }] },
          },
          {
            label: 'update b',
            method: 'PUT',
            path: `/api/access-control/roles/${uid}`,
            body: { version: 2, permissions: [{ action: 'teams:read', scope: 'teams:*' }] },
          },
        ],
        verify: oneWinner('role versions'),
      };
    },
  },
  {
    name: 'role assignment × role delete',
    async build(w) {
      const uid = `custom:${w.unique('role')}`;
      await w.setup('POST', '/api/access-control/roles', {
        uid,
        name: uid,
        displayName: uid,
        permissions: [{ action: 'dashboards:read', scope: 'dashboards:*' }],
      });
      const user = await w.user();
      const team = String((await w.setup('POST', '/api/teams', { name: w.unique('team') })).teamId);
      return {
        requests: [
          { label: 'assign to user', method: 'POST', path: `/api/access-control/users/${user.id}/roles`, body: { roleUid: uid } },
          { label: 'assign to team', method: 'POST', path: `/api/access-control/teams/${team}/roles`, body: { roleUid: uid } },
          { label: 'delete role', method: 'DELETE', path: `/api/access-control/roles/${uid}` },
        ],
      };
    },
  },
];

export const SCENARIO_NAMES = SCENARIOS.map((scenario) => scenario.name);

export interface ConflictOptions {
  seed: number;
  /** Conflicting pairs to run at least: a round of two writes is one, of three writes three. */
  pairs: number;
  /** Rounds run at once (on distinct rows). */
  parallel: number;
  /** The longest random delay before a request of a round is sent. */
  maxDelayMs: number;
  /** Invariants are checked after every this many batches of parallel rounds (and at the end). */
  checkEvery?: number;
  progress?: (line: string) => void;
  /** Only the kinds of conflict whose name contains this (to replay one kind). */
  only?: string;
}

export interface ConflictReport {
  seed: number;
  rounds: number;
  /** Conflicting pairs: one a round of two writes, three a round of three. */
  pairs: number;
  requests: number;
  statuses: Record<string, number>;
  /** Answers outside what is allowed, with the round that made them. */
  failures: string[];
  invariantBreaks: string[];
  setupFailures: string[];
  durationMs: number;
}

/** Runs rounds of conflicting writes over `instances` (one or two apps on the same database) until `options.pairs` pairs ran. */
export async function runWriteConflicts(instances: TestApp[], options: ConflictOptions): Promise<ConflictReport> {
  const started = Date.now();
  const random = seededRandom(options.seed);
  const primary = instances[0]!;
  const admin = await createUser(primary, { svcAdmin: true, role: 'Admin' });
  let sequence = 0;
  const worldIn = (orgId: string): World => ({
    app: primary,
    admin,
    orgId,
    unique: (prefix) => `${prefix}-${options.seed.toString(36)}-${(sequence++).toString(36)}`,
    async setup(method, path, body, inOrg = orgId) {
      const res = await send(primary, method, path, admin.cookie, inOrg, body);
      if (res.status < 200 || res.status >= 300) throw new Error(`setup ${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
    user: () => createUser(primary, { orgId, role: 'Viewer' }),
    exists: async (table, where) => !!(await primary.db(table).where(where).first()),
  });
  /**
   * A fresh org for every few batches: each commit's document check (AUTHZ_VERIFY_DOCUMENTS) builds
   * the documents it checks anew, so the rounds work in an org that stays small. All made before
   * the first request: another instance learns of the admin's new memberships only within its
   * principal cache's lifetime.
   */
  const checkEvery = options.checkEvery ?? 1;
  const scenarios = SCENARIOS.filter((scenario) => !options.only || scenario.name.includes(options.only));
  const worlds: World[] = [];
  async function freshWorld(): Promise<World> {
    const orgId = await createOrg(primary);
    await addMember(primary, orgId, admin.id, 'Admin');
    const world = worldIn(orgId);
    // the connector alert rules read
    await world.setup('POST', '/api/connectors', { uid: 'fuzz-changes', name: 'fuzz-changes', type: 'changes' });
    return world;
  }
  // every round is at least one pair: enough orgs for the longest run
  for (let i = 0; i <= options.pairs / (options.parallel * checkEvery); i++) worlds.push(await freshWorld());
  let world = worlds.shift()!;

  const report: ConflictReport = {
    seed: options.seed,
    rounds: 0,
    pairs: 0,
    requests: 0,
    statuses: {},
    failures: [],
    invariantBreaks: [],
    setupFailures: [],
    durationMs: 0,
  };
  const acknowledged: Array<{ round: string; audit: NonNullable<ConflictingRequest['audit']> }> = [];

  async function runRound(world: World, index: number, scenario: Scenario, delays: number[], targets: TestApp[]): Promise<void> {
    let conflict: Conflict;
    try {
      conflict = await scenario.build(world);
    } catch (err) {
      report.setupFailures.push(`round ${index} (${scenario.name}): ${(err as Error).message}`);
      return;
    }
    const name = `round ${index} (${scenario.name}, seed ${options.seed})`;
    const answers = await Promise.all(
      conflict.requests.map(async (request, i) => {
        await new Promise((resolve) => setTimeout(resolve, delays[i]));
        return send(targets[i]!, request.method, request.path, admin.cookie, request.orgId ?? world.orgId, request.body);
      }),
    );
    report.rounds += 1;
    report.pairs += (conflict.requests.length * (conflict.requests.length - 1)) / 2;
    conflict.requests.forEach((request, i) => {
      const answer = answers[i]!;
      report.requests += 1;
      report.statuses[answer.status] = (report.statuses[answer.status] ?? 0) + 1;
      const success = answer.status >= 200 && answer.status < 300;
      const allowed = success || [404, 409, 412, ...(request.alsoAllowed ?? [])].includes(answer.status);
      const hasMessage = success || (typeof answer.body === 'object' && answer.body !== null && typeof answer.body.message === 'string');
      if (!allowed || !hasMessage) {
        const sequenceOfAnswers = conflict.requests.map((r, j) => `${r.label}: ${answers[j]!.status}`).join(', ');
        report.failures.push(
          `${name}: ${request.label} ${request.method} ${request.path} answered ${answer.status} ${JSON.stringify(answer.body)} [${sequenceOfAnswers}]`,
        );
      }
      if (success && request.audit) acknowledged.push({ round: name, audit: request.audit });
    });
    if (conflict.verify) {
      for (const problem of await conflict.verify(answers)) report.invariantBreaks.push(`${name}: ${problem}`);
    }
  }

  let batches = 0;
  for (let next = 0; report.pairs < options.pairs;) {
    const batch: Array<Promise<void>> = [];
    for (let slot = 0; slot < options.parallel; slot++, next++) {
      // Every random choice is drawn here, in order, so the seed alone replays the run.
      const scenario = scenarios[Math.floor(random() * scenarios.length)]!;
      const delays = Array.from({ length: MAX_WRITES }).map(() => Math.floor(random() * options.maxDelayMs));
      const targets = Array.from({ length: MAX_WRITES }).map(() => instances[Math.floor(random() * instances.length)]!);
      batch.push(runRound(world, next, scenario, delays, targets));
    }
    await Promise.all(batch);
    batches += 1;
    if (batches % checkEvery === 0 || report.pairs >= options.pairs) {
      report.invariantBreaks.push(...(await checkInvariants(instances, acknowledged.splice(0))));
      options.progress?.(
        `${report.pairs}/${options.pairs} pairs in ${next} rounds, statuses ${JSON.stringify(report.statuses)}, failures ${report.failures.length}, invariant breaks ${report.invariantBreaks.length}`,
      );
    }
    if (batches % checkEvery === 0 && report.pairs < options.pairs) world = worlds.shift() ?? (await freshWorld());
  }
  report.durationMs = Date.now() - started;
  return report;
}

/** What must hold whatever the answers were: no orphans, a tree, audited acknowledgements, current policy documents. */
export async function checkInvariants(
  instances: TestApp[],
  acknowledged: Array<{ round: string; audit: { action: string; targetId: string } }>,
): Promise<string[]> {
  const db = instances[0]!.db;
  const breaks: string[] = [];
  const orphans = async (what: string, query: Promise<unknown[]>) => {
    const rows = await query;
    if (rows.length > 0) breaks.push(`${what}: ${JSON.stringify(rows.slice(0, 5))}${rows.length > 5 ? ` and ${rows.length - 5} more` : ''}`);
  };
  const missing = (table: string, on: (join: any) => void) => (query: any) => query.leftJoin(`${table} as m`, on).whereNull('m.org_id');

  await orphans(
    'folders whose parent is gone',
    missing('folders', function (this: any) {
      this.on('m.org_id', 'f.org_id').andOn('m.uid', 'f.parent_uid');
    })(db('folders as f').whereNotNull('f.parent_uid')).select('f.org_id', 'f.uid', 'f.parent_uid'),
  );
  for (const table of ['dashboards', 'alert_rules']) {
    await orphans(
      `${table} whose folder is gone`,
      missing('folders', function (this: any) {
        this.on('m.org_id', 'r.org_id').andOn('m.uid', 'r.folder_uid');
      })(db(`${table} as r`).whereNotNull('r.folder_uid')).select('r.org_id', 'r.uid', 'r.folder_uid'),
    );
  }
  await orphans(
    'team members outside the team’s org',
    db('team_members as tm')
      .join('teams as t', 't.id', 'tm.team_id')
      .leftJoin('org_members as om', function () {
        this.on('om.org_id', 't.org_id').andOn('om.user_id', 'tm.user_id');
      })
      .whereNull('om.user_id')
      .select('tm.team_id', 'tm.user_id'),
  );
  await orphans(
    'service account tokens of accounts that are gone or elsewhere',
    db('api_tokens as k').leftJoin('users as u', 'u.id', 'k.user_id').where('k.kind', 'sa').whereNull('u.id').select('k.id', 'k.user_id'),
  );

  // Grants on resources that are gone: a permission of an org's role scoped to a uid or id of that org.
  const scoped: Array<{ org_id: string; role: string; scope: string }> = await db('role_permissions as p')
    .join('roles as r', 'r.id', 'p.role_id')
    .whereNotNull('r.org_id')
    .where((q) => {
      for (const prefix of ['folders:uid:', 'dashboards:uid:', 'alert.rules:uid:', 'connectors:uid:', 'teams:id:']) q.orWhere('p.scope', 'like', `${prefix}%`);
    })
    .select('r.org_id', 'r.uid as role', 'p.scope');
  const existing = new Set<string>();
  for (const [table, kind, key] of [
    ['folders', 'folders:uid:', 'uid'],
    ['dashboards', 'dashboards:uid:', 'uid'],
    ['alert_rules', 'alert.rules:uid:', 'uid'],
    ['connectors', 'connectors:uid:', 'uid'],
    ['teams', 'teams:id:', 'id'],
  ] as const) {
    for (const row of (await db(table).select('org_id', key)) as Array<Record<string, string>>) existing.add(`${row.org_id} ${kind}${row[key]}`);
  }
  const dangling = scoped.filter((grant) => !existing.has(`${grant.org_id} ${grant.scope}`) && !grant.scope.endsWith(':*'));
  if (dangling.length > 0) breaks.push(`grants on resources that are gone: ${JSON.stringify(dangling.slice(0, 5))}`);
  const teamRoles: Array<{ org_id: string; uid: string }> = await db('roles').where('uid', 'like', 'managed:teams:%').select('org_id', 'uid');
  const teamIds = new Set(((await db('teams').pluck('id')) as unknown[]).map(String));
  const goneTeams = teamRoles.filter((role) => !teamIds.has(role.uid.split(':')[2]!));
  if (goneTeams.length > 0) breaks.push(`managed roles of teams that are gone: ${JSON.stringify(goneTeams.slice(0, 5))}`);

  // The folder tree: no cycle, nothing deeper than the limit.
  const folders: Array<{ org_id: string; uid: string; parent_uid: string | null }> = await db('folders').select('org_id', 'uid', 'parent_uid');
  const parentOf = new Map(folders.map((folder) => [`${folder.org_id} ${folder.uid}`, folder.parent_uid]));
  for (const folder of folders) {
    const seen = new Set<string>();
    let depth = 1;
    let parent = folder.parent_uid;
    while (parent) {
      const key = `${folder.org_id} ${parent}`;
      if (seen.has(key)) {
        breaks.push(`folder cycle through ${folder.org_id}/${folder.uid}`);
        break;
      }
      seen.add(key);
      depth += 1;
      parent = parentOf.get(key) ?? null;
    }
    if (depth > MAX_FOLDER_DEPTH) breaks.push(`folder ${folder.org_id}/${folder.uid} at level ${depth}, past ${MAX_FOLDER_DEPTH}`);
  }

  // Every acknowledged write has its audit entry.
  for (const { round, audit } of acknowledged) {
    const entry = await db('audit_log').where({ action: audit.action, target_id: audit.targetId, outcome: 'success' }).first('id');
    if (!entry) breaks.push(`${round}: acknowledged ${audit.action} of ${audit.targetId} has no audit entry`);
  }

  // Each instance's policy documents equal a fresh build, once it has heard of the others' changes.
  for (const [i, instance] of instances.entries()) {
    try {
      await instance.services.engine.pollChanges();
      await instance.services.engine.checkDocuments();
    } catch (err) {
      breaks.push(`instance ${i}: ${(err as Error).message}`);
    }
  }
  return breaks;
}
