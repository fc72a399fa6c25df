/**
 * The console's roles and connectors pages, the folder tree opened to the folder an address
 * names, and the audit log's filters on a phone, in Debian's chromium (skipped without it,
 * except in CI). An admin creates a custom role and assigns it to a team; a Viewer is refused
 * the roles page, as by the API. An admin tests a connector against a stand-in Prometheus, sets
 * a label rule, sees an invalid selector's 400 inline, grants a team on it, and sets, replaces
 * and clears a secret that the page never holds once saved. Every request is a route of the
 * OpenAPI document, axe finds no serious or critical violation, and each new page is
 * screenshotted at 1280 and 390 wide, light and dark.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { launchChromium } from './helpers/chromium.ts';
import { newRecord, requestsOffTheDocument, screenshotAndAxe, succeeded, signedIn } from './helpers/console.ts';
import { createUser, type TestUser } from './helpers/factories.ts';
import { requireDatabase, requirePeer } from './helpers/peers.ts';

const SECRET = 'sEcReT-bearer-7f3a9c21d4';
const REPLACED = 'rEpLaCeD-bearer-55e0b1';

/** A stand-in Prometheus: its labels API answers two names, and it keeps the Authorization headers it was sent. */
async function startLabelsBackend(): Promise<{ url: string; authorizations: string[]; close(): Promise<void> }> {
  const authorizations: string[] = [];
  const server = http.createServer((req, res) => {
    authorizations.push(req.headers.authorization ?? '');
    if (req.url?.startsWith('/api/v1/labels')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'success', data: ['__name__', 'job'] }));
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, authorizations, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Every value the page holds: its markup, and the live values of its inputs and text areas. */
async function everythingInThePage(page: Page): Promise<string> {
  const values = await page.evaluate(() => [...document.querySelectorAll('input, textarea, select')].map((el) => (el as HTMLInputElement).value));
  return `${await page.content()}\n${values.join('\n')}`;
}

describe('admin console: roles, connectors, the folder tree and the audit filters in the browser', function () {
  this.timeout(300_000);
  let app: TestApp;
  let browser: Browser;
  let admin: TestUser;
  let viewer: TestUser;
  let backend: Awaited<ReturnType<typeof startLabelsBackend>>;
  let team: { id: string; name: string };
  let connectorUid: string;
  const folders: Array<{ uid: string; title: string }> = [];
  const record = newRecord();
  const ROLE_UID = 'custom:dashboard-readers';

  const api = (user: TestUser, method: string, path: string, body?: unknown) => succeeded(app, user, method, path, body);

  before(async function () {
    requirePeer(this, 'chromium');
    app = await startTestApp({ env: { CONNECTOR_ALLOWED_NETWORKS: '127.0.0.0/8' } });
    backend = await startLabelsBackend();
    admin = await createUser(app, { login: 'ada', name: 'Ada Admin', svcAdmin: true, role: 'Admin' });
    viewer = await createUser(app, { login: 'vic', name: 'Vic Viewer', role: 'Viewer' });
    const created = await api(admin, 'POST', '/api/teams', { name: 'Checkout' });
    team = { id: String(created.teamId ?? created.id), name: 'Checkout' };
    connectorUid = (await api(admin, 'POST', '/api/connectors', { name: 'Prometheus', type: 'tsmetrics', url: backend.url })).uid;
    // five folders, each inside the one before
    let parentUid: string | undefined;
    for (const title of ['Region', 'Country', 'City', 'District', 'Street']) {
      const folder = await api(admin, 'POST', '/api/folders', { title, ...(parentUid && { parentUid }) });
      folders.push({ uid: folder.uid, title });
      parentUid = folder.uid;
    }
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    await backend?.close();
  });

  it('an admin creates a custom role with a permission, changes it, and assigns it to a team in /admin/roles', async () => {
    const { context, page } = await signedIn(browser, app, admin, record);
    await page.goto(`${app.url}/admin/roles`);
    await page.getByRole('heading', { name: 'Roles', level: 1 }).waitFor();
    const basic = page.getByRole('region', { name: 'Basic roles' });
    await basic.getByRole('link', { name: 'Viewer', exact: true }).waitFor();
    expect(await page.getByRole('region', { name: 'Fixed roles' }).getByRole('row').count()).to.be.greaterThan(10);
    await page.getByRole('region', { name: 'Custom roles' }).getByText('No custom roles yet.').waitFor();

    const create = page.getByRole('form', { name: 'Create a custom role' });
    await create.getByLabel('Name', { exact: true }).fill('dashboard-readers');
    await create.getByLabel('Display name').fill('Dashboard readers');
    await create.getByLabel('Action 1').fill('dashboards:read');
    await create.getByLabel('Scope 1').fill('dashboards:*');
    await create.getByRole('button', { name: 'Create role' }).click();
    await page.waitForURL(`${app.url}/admin/roles?role=${encodeURIComponent(ROLE_UID)}`);
    const role = page.getByRole('region', { name: 'Dashboard readers' });
    await role.getByRole('row', { name: 'dashboards:read dashboards:*' }).waitFor();
    expect((await api(admin, 'GET', `/api/access-control/roles/${ROLE_UID}`)).permissions).to.deep.equal([
      { action: 'dashboards:read', scope: 'dashboards:*' },
    ]);

    // A second permission row, saved at the version read.
    const change = role.getByRole('form', { name: 'Change Dashboard readers' });
    await change.getByRole('button', { name: 'Add a permission' }).click();
    await change.getByLabel('Action 2').fill('folders:read');
    await change.getByLabel('Scope 2').fill('folders:*');
    await change.getByRole('button', { name: 'Save role' }).click();
    await role.getByText('Saved role Dashboard readers.').waitFor();
    await role.getByRole('row', { name: 'folders:read folders:*' }).waitFor();
    const saved = await api(admin, 'GET', `/api/access-control/roles/${ROLE_UID}`);
    expect(saved.version).to.equal(2);
    expect(saved.permissions).to.have.length(2);

    const assignments = page.getByRole('region', { name: 'Assignments' });
    await assignments.getByText('This role is assigned to no one in this org.').waitFor();
    await assignments.getByLabel('Assign to').selectOption({ label: 'Team' });
    await assignments.getByLabel('Team', { exact: true }).locator('option', { hasText: 'Checkout' }).waitFor({ state: 'attached' });
    await assignments.getByLabel('Team', { exact: true }).selectOption({ label: 'Checkout' });
    await assignments.getByRole('button', { name: 'Assign', exact: true }).click();
    await assignments.getByText('Assigned Dashboard readers to Team Checkout.').waitFor();
    await assignments.getByRole('listitem').filter({ hasText: 'Team Checkout' }).waitFor();
    const teamRoles = await api(admin, 'GET', `/api/access-control/teams/${team.id}/roles`);
    expect(teamRoles.roles.map((r: { uid: string }) => r.uid)).to.deep.equal([ROLE_UID]);

    // The role's page is an address: it shows the assignment after a reload.
    await page.reload();
    await page.getByRole('region', { name: 'Assignments' }).getByRole('listitem').filter({ hasText: 'Team Checkout' }).waitFor();
    await page.getByRole('region', { name: 'Custom roles' }).getByRole('link', { name: 'Dashboard readers' }).waitFor();
    await context.close();
  });

  it('an admin unassigns a custom role from a user, assigns it to a service account, and deletes it', async () => {
    await api(admin, 'POST', '/api/access-control/roles', {
      uid: 'custom:short-lived',
      name: 'custom:short-lived',
      displayName: 'Short lived',
      permissions: [{ action: 'teams:read', scope: 'teams:*' }],
    });
    await api(admin, 'POST', `/api/access-control/users/${viewer.id}/roles`, { roleUid: 'custom:short-lived' });
    const account = await api(admin, 'POST', '/api/serviceaccounts', { name: 'deployer', role: 'Viewer' });
    const { context, page } = await signedIn(browser, app, admin, record);
    await page.goto(`${app.url}/admin/roles?role=custom%3Ashort-lived`);
    const assignments = page.getByRole('region', { name: 'Assignments' });
    await assignments.getByRole('button', { name: `Unassign Short lived from User ${viewer.login}` }).click();
    await assignments.getByText(`Unassigned Short lived from User ${viewer.login}.`).waitFor();
    expect((await api(admin, 'GET', `/api/access-control/users/${viewer.id}/roles`)).roles).to.deep.equal([]);

    // A service account is assigned through the users' routes, and listed as a service account.
    await assignments.getByLabel('Assign to').selectOption({ label: 'Service account' });
    await assignments.getByLabel('Service account', { exact: true }).locator('option', { hasText: 'deployer' }).waitFor({ state: 'attached' });
    await assignments.getByLabel('Service account', { exact: true }).selectOption({ label: 'deployer' });
    await assignments.getByRole('button', { name: 'Assign', exact: true }).click();
    await assignments.getByRole('listitem').filter({ hasText: 'Service account deployer' }).waitFor();
    expect((await api(admin, 'GET', `/api/access-control/users/${account.id}/roles`)).roles.map((r: { uid: string }) => r.uid)).to.deep.equal([
      'custom:short-lived',
    ]);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete role Short lived' }).click();
    await page.waitForURL(`${app.url}/admin/roles`);
    expect((await app.request('GET', '/api/access-control/roles/custom:short-lived', { cookie: admin.cookie })).status).to.equal(404);
    await context.close();
  });

  it('an admin sees a global assignment of a role as every org, and unassigns it as one; an org Admin is offered no Unassign of it', async () => {
    await api(admin, 'POST', '/api/access-control/roles', {
      uid: 'custom:everywhere',
      name: 'custom:everywhere',
      displayName: 'Everywhere',
      global: true,
      permissions: [{ action: 'teams:read', scope: 'teams:*' }],
    });
    await api(admin, 'POST', `/api/access-control/users/${viewer.id}/roles`, { roleUid: 'custom:everywhere', global: true });

    // An org Admin who is not a server admin sees the global holder and is offered no Unassign: the API refuses it too.
    const orgAdmin = await createUser(app, { login: 'oda', name: 'Oda Org-Admin', role: 'Admin' });
    const asOrgAdmin = await signedIn(browser, app, orgAdmin, record);
    await asOrgAdmin.page.goto(`${app.url}/admin/roles?role=custom%3Aeverywhere`);
    const seen = asOrgAdmin.page.getByRole('region', { name: 'Assignments' });
    await seen
      .getByRole('listitem')
      .filter({ hasText: `User ${viewer.login} (every org)` })
      .waitFor();
    expect(await seen.getByRole('button', { name: /^Unassign/ }).count()).to.equal(0);
    await asOrgAdmin.context.close();
    const refused = await app.request('DELETE', `/api/access-control/users/${viewer.id}/roles/custom:everywhere?global=true`, { cookie: orgAdmin.cookie });
    expect(refused.status).to.equal(403);

    const { context, page } = await signedIn(browser, app, admin, record);
    await page.goto(`${app.url}/admin/roles?role=custom%3Aeverywhere`);
    const assignments = page.getByRole('region', { name: 'Assignments' });
    await assignments
      .getByRole('listitem')
      .filter({ hasText: `User ${viewer.login} (every org)` })
      .waitFor();
    await assignments.getByRole('button', { name: `Unassign Everywhere from User ${viewer.login} (every org)` }).click();
    await assignments.getByText(`Unassigned Everywhere from User ${viewer.login} (every org).`).waitFor();
    await assignments.getByText('This role is assigned to no one in this org.').waitFor();
    expect((await api(admin, 'GET', `/api/access-control/users/${viewer.id}/roles`)).roles).to.deep.equal([]);
    await api(admin, 'DELETE', '/api/access-control/roles/custom:everywhere');
    await context.close();
  });

  it('a Viewer gets the refused state on /admin/roles, as from the API, no Roles link, and a connector without controls', async () => {
    const { context, page } = await signedIn(browser, app, viewer, record);
    await page.goto(`${app.url}/admin/roles?role=${encodeURIComponent(ROLE_UID)}`);
    await page.getByRole('heading', { name: 'Access denied' }).waitFor();
    expect(await page.getByRole('table').count()).to.equal(0);
    expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('link').allTextContents()).to.not.include('Roles');
    for (const path of ['/api/access-control/roles', `/api/access-control/roles/${ROLE_UID}`]) {
      expect((await app.request('GET', path, { cookie: viewer.cookie })).status, path).to.equal(403);
    }

    // A connector the Viewer may read, and nothing offered to change it.
    await page.goto(`${app.url}/admin/connectors?connector=${connectorUid}`);
    await page.getByRole('heading', { name: 'Prometheus', level: 2 }).waitFor();
    await page.getByRole('region', { name: 'Secrets' }).waitFor();
    for (const name of ['Save settings', 'Test the connection', 'Save secret', 'Grant', 'Save label rules']) {
      expect(await page.getByRole('button', { name }).count(), name).to.equal(0);
    }
    await context.close();
  });

  it("an admin tests a connector, sets a label rule, sees an invalid selector's message inline, and grants a team", async () => {
    const { context, page } = await signedIn(browser, app, admin, record);
    await page.goto(`${app.url}/admin/connectors`);
    await page.getByRole('link', { name: 'Prometheus' }).click();
    await page.waitForURL(`${app.url}/admin/connectors?connector=${connectorUid}`);
    await page.getByRole('button', { name: 'Test the connection' }).click();
    await page.getByText('Test passed: Successfully queried the Prometheus API: 2 label names').waitFor();

    const rules = page.getByRole('region', { name: 'Label rules' });
    await rules.getByRole('button', { name: 'Add a rule' }).click();
    await rules.getByLabel('Principal kind 1').selectOption({ label: 'Team' });
    await rules.getByLabel('Principal 1').selectOption({ label: 'Checkout' });
    await rules.getByLabel('Selector 1').fill('{job = "api"}');
    await rules.getByRole('button', { name: 'Save label rules' }).click();
    await rules.getByText('Saved 1 label rule.').waitFor();
    expect(await api(admin, 'GET', `/api/connectors/${connectorUid}/label-rules`)).to.deep.equal({ rules: [{ teamId: team.id, selector: '{job="api"}' }] });
    // saved in its canonical form, which the page shows after a reload
    await page.reload();
    expect(await page.getByRole('region', { name: 'Label rules' }).getByLabel('Selector 1').inputValue()).to.equal('{job="api"}');

    // An invalid selector: the API's 400 message under that selector, and nothing saved.
    const invalid = '{job="api"';
    const refused = await app.request('PUT', `/api/connectors/${connectorUid}/label-rules`, {
      cookie: admin.cookie,
      body: { rules: [{ teamId: team.id, selector: invalid }] },
    });
    expect(refused.status).to.equal(400);
    const message = refused.body.message as string;
    await rules.getByLabel('Selector 1').fill(invalid);
    await rules.getByRole('button', { name: 'Save label rules' }).click();
    const inline = rules.locator('#rule-selector-0-error');
    await inline.waitFor();
    expect((await inline.textContent())!.toLowerCase()).to.equal(message.toLowerCase());
    expect(await rules.getByLabel('Selector 1').getAttribute('aria-invalid')).to.equal('true');
    expect((await api(admin, 'GET', `/api/connectors/${connectorUid}/label-rules`)).rules[0].selector).to.equal('{job="api"}');

    const permissions = page.getByRole('region', { name: 'Connector permissions' });
    await permissions.getByLabel('Grant to').selectOption({ label: 'Team' });
    await permissions.getByLabel('Team', { exact: true }).locator('option', { hasText: 'Checkout' }).waitFor({ state: 'attached' });
    await permissions.getByLabel('Team', { exact: true }).selectOption({ label: 'Checkout' });
    await permissions.getByLabel('Permission', { exact: true }).selectOption({ label: 'Edit' });
    await permissions.getByRole('button', { name: 'Grant' }).click();
    await permissions.getByText('Team Checkout: Edit').waitFor();
    const grants = await api(admin, 'GET', `/api/connectors/${connectorUid}/permissions`);
    expect(grants.filter((g: { teamId?: string }) => String(g.teamId) === team.id).map((g: { permissionName: string }) => g.permissionName)).to.deep.equal([
      'Edit',
    ]);
    await permissions.getByRole('button', { name: 'Revoke Edit from Team Checkout' }).click();
    await permissions.getByText('Revoked Edit from Team Checkout.').waitFor();
    await context.close();
  });

  it('a secret typed in is sent to the backend but never readable in the page after save, reload, replace or clear', async () => {
    const { context, page } = await signedIn(browser, app, admin, record);
    await page.goto(`${app.url}/admin/connectors?connector=${connectorUid}`);
    const secrets = page.getByRole('region', { name: 'Secrets' });
    await secrets.getByText('No secret is set.').waitFor();
    await secrets.getByLabel('Secret name').fill('bearerToken');
    await secrets.getByLabel('Secret value').fill(SECRET);
    await secrets.getByRole('button', { name: 'Save secret' }).click();
    await secrets.getByText('Secret bearerToken saved.').waitFor();
    await secrets.getByText('bearerToken: set').waitFor();
    expect(await everythingInThePage(page)).to.not.include(SECRET);
    const connector = await api(admin, 'GET', `/api/connectors/${connectorUid}`);
    expect(connector.secureJsonFields).to.deep.equal({ bearerToken: true });
    expect(JSON.stringify(connector)).to.not.include(SECRET);

    // The backend gets it: the test sends it as the bearer token.
    await page.getByRole('button', { name: 'Test the connection' }).click();
    await page.getByText(/^Test passed/).waitFor();
    expect(backend.authorizations).to.include(`Bearer ${SECRET}`);

    await page.reload();
    await secrets.getByText('bearerToken: set').waitFor();
    expect(await everythingInThePage(page)).to.not.include(SECRET);

    await secrets.getByRole('button', { name: 'Replace bearerToken' }).click();
    await secrets.getByLabel('New value of bearerToken').fill(REPLACED);
    await secrets.getByRole('button', { name: 'Save bearerToken' }).click();
    await secrets.getByText('Secret bearerToken saved.').waitFor();
    expect(await secrets.getByLabel('New value of bearerToken').count()).to.equal(0);
    expect(await everythingInThePage(page)).to.not.include(REPLACED);
    await page.getByRole('button', { name: 'Test the connection' }).click();
    await page.getByText(/^Test passed/).waitFor();
    expect(backend.authorizations.at(-1)).to.equal(`Bearer ${REPLACED}`);

    await secrets.getByRole('button', { name: 'Clear bearerToken' }).click();
    await secrets.getByText('Secret bearerToken cleared.').waitFor();
    await secrets.getByText('No secret is set.').waitFor();
    expect((await api(admin, 'GET', `/api/connectors/${connectorUid}`)).secureJsonFields).to.deep.equal({});
    await context.close();
  });

  it('opening a deep folder by its address opens the tree down to it and focuses it', async () => {
    const { context, page } = await signedIn(browser, app, admin, record);
    const deepest = folders.at(-1)!;
    await page.goto(`${app.url}/dashboards/f/${deepest.uid}/`);
    const tree = page.getByRole('navigation', { name: 'Folder tree' });
    const selected = tree.getByRole('link', { name: deepest.title });
    await selected.waitFor();
    expect(await selected.getAttribute('aria-current')).to.equal('page');
    expect(await selected.isVisible()).to.equal(true);
    for (const ancestor of folders.slice(0, -1)) {
      expect(await tree.getByRole('button', { name: `Close ${ancestor.title}` }).getAttribute('aria-expanded'), ancestor.title).to.equal('true');
    }
    await page.waitForFunction((title) => document.activeElement?.textContent === title, deepest.title);
    await context.close();
  });

  it('a list search goes to its own address and lists what matches, or says nothing does', async () => {
    const { context, page } = await signedIn(browser, app, admin, record);
    await page.goto(`${app.url}/admin/connectors`);
    await page.getByRole('searchbox', { name: 'Search connectors' }).fill('Prom');
    await page.getByRole('search').getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(`${app.url}/admin/connectors?query=Prom`);
    await page.getByRole('table').getByRole('link', { name: 'Prometheus' }).waitFor();
    await page.getByRole('searchbox', { name: 'Search connectors' }).fill('nothing like it');
    await page.getByRole('search').getByRole('button', { name: 'Search' }).click();
    await page.getByText('No connector matches “nothing like it”.').waitFor();
    expect(await page.getByRole('searchbox', { name: 'Search connectors' }).inputValue()).to.equal('nothing like it');
    await context.close();
  });

  it('on a phone the audit filters fold into a "Filters" disclosure that counts the active ones', async () => {
    const { context, page } = await signedIn(browser, app, admin, record);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${app.url}/admin/audit?action=role.created&outcome=success`);
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const summary = page.locator('summary', { hasText: 'Filters (2 active)' });
    await summary.waitFor();
    expect(await page.getByLabel('Target ID').isVisible()).to.equal(false);
    await summary.click();
    expect(await page.getByLabel('Target ID').isVisible()).to.equal(true);
    expect(await page.getByLabel('Action').inputValue()).to.equal('role.created');
    // two fields to a line, not one long column
    const [actor, action] = await Promise.all([page.getByLabel('Actor ID').boundingBox(), page.getByLabel('Action').boundingBox()]);
    expect(actor!.y).to.equal(action!.y);

    await page.setViewportSize({ width: 1280, height: 900 });
    await page.locator('summary').waitFor({ state: 'detached' });
    expect(await page.getByLabel('Target ID').isVisible()).to.equal(true);
    await context.close();
  });

  it('the new pages pass axe and are screenshotted at 1280 and 390 wide, light and dark', async function () {
    // what the pages draw is the browser's: one database's run checks it; the flows above run on both
    requireDatabase(this, 'sqlite');
    // the connector's page with a secret set, as it is drawn then
    await api(admin, 'PUT', `/api/connectors/${connectorUid}`, { secureJsonData: { bearerToken: SECRET } });
    const violations = await screenshotAndAxe(browser, app, record, [
      ['roles', admin, '/admin/roles'],
      ['role', admin, `/admin/roles?role=${encodeURIComponent(ROLE_UID)}`],
      ['role-basic', admin, '/admin/roles?role=basic%3Aviewer'],
      ['roles-refused', viewer, '/admin/roles'],
      ['connectors', admin, '/admin/connectors'],
      ['connector', admin, `/admin/connectors?connector=${connectorUid}`],
      ['connector-viewer', viewer, `/admin/connectors?connector=${connectorUid}`],
      ['folder-deep', admin, `/dashboards/f/${folders.at(-1)!.uid}/`],
      ['audit-filtered', admin, '/admin/audit?action=role.created'],
    ]);
    expect(violations).to.deep.equal([]);
  });

  it('made only requests to routes of the OpenAPI document, and raised no script error', async () => {
    expect(record.requests.length).to.be.greaterThan(50);
    expect(await requestsOffTheDocument(app, record.requests)).to.deep.equal([]);
    expect(record.pageErrors).to.deep.equal([]);
    // who holds a role is read from its assignments, never from the org's data document
    const paths = record.requests.map((r) => r.path);
    expect(paths).to.include(`/api/access-control/roles/${encodeURIComponent(ROLE_UID)}/assignments`);
    expect(paths).not.to.include('/api/access-control/policy-data');
  });
});
