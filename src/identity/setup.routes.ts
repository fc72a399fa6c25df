/**
 * The setup wizard's API (all public by the spec). The policy decides who may change setup
 * (policies/authz/setup): anyone while no user exists, afterwards a server admin. The handlers
 * gather that fact for it (setup.ts), which re-checks it where the change is written.
 */
import { recordAudit, recordFailure } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import { hashPassword } from '../crypto/password.ts';
import { ConflictError } from '../errors.ts';
import type { RouteModule } from '../http/route.ts';
import { DEFAULT_ORG_ID } from '../orgs/store.ts';
import type { Services } from '../services.ts';
import { readSetting, writeSetting } from '../settings/store.ts';
import { assertAcceptablePassword } from './password-policy.ts';
import { completeLogin } from './login-completion.ts';
import { insertFirstAdmin, setupFacts, writeSetupChange } from './setup.ts';
import { anyHumanUserExists } from './users.store.ts';
import {
  platformSettingsSchema,
  PRESENTED_PLATFORM_SETTINGS_SCHEMA,
  presentPlatformSettings,
  sealPlatformSettings,
  type PlatformSettings,
  type StoredPlatformSettings,
} from './platform-settings.ts';
import { emailSchema, loginSchema, nameSchema, newPasswordSchema } from '../http/schemas.ts';

const SETTINGS_KEY = 'platform';
const COMPLETE_KEY = 'setup.complete';

async function setupState(services: Services) {
  const [adminExists, complete, settings] = await Promise.all([
    anyHumanUserExists(services.db),
    readSetting<{ at: number }>(services.db, COMPLETE_KEY),
    readSetting<StoredPlatformSettings>(services.db, SETTINGS_KEY),
  ]);
  return {
    adminExists,
    complete: !!complete,
    completedAt: complete ? new Date(complete.at).toISOString() : null,
    settings: presentPlatformSettings(settings),
  };
}

const SETUP_STATE_SCHEMA = {
  type: 'object',
  properties: {
    adminExists: { type: 'boolean' },
    complete: { type: 'boolean' },
    completedAt: { type: ['string', 'null'] },
    settings: PRESENTED_PLATFORM_SETTINGS_SCHEMA,
  },
  required: ['adminExists', 'complete', 'completedAt', 'settings'],
} as const;

/** What anyone learns of a closed setup: that it is closed, nothing of its settings. */
const CLOSED_SETUP_SCHEMA = {
  type: 'object',
  properties: { adminExists: { const: true } },
  required: ['adminExists'],
  additionalProperties: false,
} as const;

export const setupRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/setup/config',
    access: 'public',
    summary:
      'The state of setup: whether an admin exists, whether setup is complete, the platform settings; once an admin exists, only that, unless the caller may read the settings.',
    responses: { 200: { anyOf: [SETUP_STATE_SCHEMA, CLOSED_SETUP_SCHEMA] } },
    async handler({ ctx, services, explain }) {
      const setup = await setupFacts(services.db);
      // While setup is open anyone may change its settings, so anyone may see them; afterwards
      // they are the server's settings, for whoever may read those (the wizard's signed-in admin).
      const shown = setup.open || (await explain('settings:read', { scope: 'settings:*' })).allow;
      ctx.body = shown ? await setupState(services) : { adminExists: true };
    },
  });

  routes.add({
    method: 'post',
    path: '/api/setup/admin',
    access: 'public',
    body: {
      type: 'object',
      properties: {
        name: nameSchema,
        login: loginSchema,
        email: emailSchema,
        password: newPasswordSchema,
      },
      required: ['name', 'email', 'password'],
      additionalProperties: false,
    },
    summary: 'Creates the first user, a server admin, while no user exists; signs it in.',
    responses: {
      201: { type: 'object', properties: { userId: { type: 'string' }, orgId: { type: 'string' } }, required: ['userId', 'orgId'] },
    },
    async handler({ ctx, body, services }) {
      const actor = actorOf(ctx);
      const login = body.login ?? body.email;
      assertAcceptablePassword(body.password, { login, email: body.email });
      const passwordHash = await hashPassword(body.password);
      const admin = { login, email: body.email, name: body.name, passwordHash };
      const signedIn = await completeLogin(ctx, services, {
        method: 'setup',
        actor,
        user: async (tx, now) => {
          const userId = await insertFirstAdmin(tx, admin, actor, now);
          return userId === null ? null : { id: userId, login: login.toLowerCase(), default_org_id: DEFAULT_ORG_ID };
        },
        answer: { kind: 'created' },
      });
      if (!signedIn) {
        await recordFailure(services, actor, { action: 'setup.admin_created', metadata: { reason: 'a user already exists' } });
        throw new ConflictError('setup is already done: a user exists');
      }
    },
  });

  routes.add({
    method: 'post',
    path: '/api/setup/config',
    access: 'public',
    body: platformSettingsSchema,
    summary: 'Saves platform settings from the wizard (anyone before the first user, then a server admin).',
    responses: { 200: SETUP_STATE_SCHEMA },
    async handler(route) {
      const { ctx, body, services, principal } = route;
      const setup = await setupFacts(services.db);
      await route.authorize('settings:write', undefined, { setup });
      const now = services.clock.now();
      await writeSetupChange(services, actorOf(ctx, principal), setup, 'setup.config_saved', async (tx) => {
        const previous = await readSetting<StoredPlatformSettings>(tx.db, SETTINGS_KEY);
        await writeSetting(tx.db, SETTINGS_KEY, sealPlatformSettings(body as PlatformSettings, previous, services.secretBox), now);
        await recordAudit(tx.db, actorOf(ctx, principal), { action: 'setup.config_saved', metadata: { sections: Object.keys(body) } }, now);
      });
      ctx.body = await setupState(services);
    },
  });

  routes.add({
    method: 'post',
    path: '/api/setup/complete',
    access: 'public',
    summary: 'Marks setup complete (anyone before the first user, then a server admin).',
    responses: { 200: SETUP_STATE_SCHEMA },
    async handler(route) {
      const { ctx, services, principal } = route;
      const setup = await setupFacts(services.db);
      await route.authorize('settings:write', undefined, { setup });
      const now = services.clock.now();
      await writeSetupChange(services, actorOf(ctx, principal), setup, 'setup.completed', async (tx) => {
        if (await readSetting(tx.db, COMPLETE_KEY)) return;
        await writeSetting(tx.db, COMPLETE_KEY, { at: now }, now);
        await recordAudit(tx.db, actorOf(ctx, principal), { action: 'setup.completed' }, now);
      });
      ctx.body = await setupState(services);
    },
  });
};
