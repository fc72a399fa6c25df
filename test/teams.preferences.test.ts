/** Teams: team preferences (`/api/teams/:id/preferences`). */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { api, buildTeam, createUser, expectAuditEntry, type TestUser } from './helpers/factories.ts';

describe('teams', () => {
  let app: TestApp;
  let admin: TestUser;
  let viewer: TestUser;

  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { role: 'Admin', login: 'team-admin-root' });
    viewer = await createUser(app, { role: 'Viewer' });
  });
  after(async () => {
    await app.close();
  });

  async function expectAudited(action: string, team: { id: string; name: string }, actor: TestUser, metadata?: Record<string, unknown>) {
    const fields = { actor_type: 'user', actor_id: actor.id, org_id: 'org_main', target_type: 'team', target_name: team.name, outcome: 'success' };
    await expectAuditEntry(app, { action, target_id: team.id }, { ...fields, ...(metadata && { metadata }) });
  }

  describe('team preferences', () => {
    it('GET shows defaults, PUT replaces all three (owner_kind team), audited', async () => {
      const team = await buildTeam(app);
      const empty = await api(app, viewer).get(`/api/teams/${team.id}/preferences`);
      expect(empty.status).to.equal(200);
      expect(empty.body).to.deep.equal({ homeDashboardUid: '', timezone: '', theme: '' });

      const saved = await api(app, admin).put(`/api/teams/${team.id}/preferences`, { homeDashboardUid: 'home1', timezone: 'Europe/Paris', theme: 'dark' });
      expect(saved.status).to.equal(200);
      expect(saved.body).to.deep.equal({ homeDashboardUid: 'home1', timezone: 'Europe/Paris', theme: 'dark' });
      expect(await app.db('preferences').where({ owner_kind: 'team', owner_id: team.id }).first('home_dashboard_uid', 'timezone', 'theme')).to.deep.equal({
        home_dashboard_uid: 'home1',
        timezone: 'Europe/Paris',
        theme: 'dark',
      });
      await expectAudited('team.preferences_updated', team, admin, { fields: ['homeDashboardUid', 'theme', 'timezone'] });
      expect((await api(app, viewer).get(`/api/teams/${team.id}/preferences`)).body).to.deep.equal({
        homeDashboardUid: 'home1',
        timezone: 'Europe/Paris',
        theme: 'dark',
      });

      const partial = await api(app, admin).put(`/api/teams/${team.id}/preferences`, { theme: 'light' });
      expect(partial.body).to.deep.equal({ homeDashboardUid: '', timezone: '', theme: 'light' });
    });

    it('PUT rejects bad input with 400', async () => {
      const team = await buildTeam(app);
      for (const body of [{ theme: 'blue' }, { timezone: 5 }, { homeDashboardUid: 'x'.repeat(41) }, { colour: 'red' }]) {
        const res = await api(app, admin).put(`/api/teams/${team.id}/preferences`, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
      }
      expect(await app.count('preferences', { owner_kind: 'team', owner_id: team.id })).to.equal(0);
    });
  });
});
