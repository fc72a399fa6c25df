/**
 * The admin console (docs/console.md). Over plain HTTP: its addresses and the pages the API's
 * `url` fields name answer the console's shell, and its assets are served. In a real browser
 * (Debian's chromium, driven by playwright-core; skipped without it, except in CI): an admin grants
 * a Viewer Edit on a folder, the Viewer sees what the grant allows, the audit log shows the grant,
 * the policy explorer explains the Viewer's allow and lists them under who-can, and a Viewer on
 * the users page gets the refused state. Every request the console makes is a route of the
 * OpenAPI document; axe finds no serious or critical violation on any page; every page is
 * screenshotted at 1280 and 390 pixels wide, light and dark, under test-artifacts/console/.
 */
import { expect } from 'chai';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createUser, type TestUser } from './helpers/factories.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { requireDatabase, requirePeer } from './helpers/peers.ts';
import { launchChromium } from './helpers/chromium.ts';
import { newRecord, requestsOffTheDocument, screenshotAndAxe, succeeded, signedIn as signedInRecording } from './helpers/console.ts';

const CONSOLE_ASSETS = [
  'console.js',
  'console-api.js',
  'console-ui.js',
  'console-folders.js',
  'console-audit.js',
  'console-policy.js',
  'console-users.js',
  'console-teams.js',
  'console-serviceaccounts.js',
  'console-orgs.js',
  'console-roles.js',
  'console-connectors.js',
  'preact.js',
  'preact-hooks.js',
  'htm.js',
];

describe('admin console over HTTP', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => {
    await app.close();
  });

  it('answers every console address and the url pages with the shell, signed in or not', async () => {
    const user = await createUser(app);
    for (const path of [
      '/admin',
      '/admin/',
      '/admin/folders',
      '/admin/audit',
      '/admin/policy',
      '/admin/users',
      '/admin/roles',
      '/admin/connectors',
      '/d/abc',
      '/d/abc/my-dash',
      '/dashboards/f/f1/',
    ]) {
      for (const cookie of [undefined, user.cookie]) {
        const res = await app.request('GET', path, cookie ? { cookie } : {});
        expect(res.status, path).to.equal(200);
        expect(res.headers.get('content-type'), path).to.equal('text/html; charset=utf-8');
        expect(res.body, path).to.include('<script type="importmap">').and.include('src="/assets/console.js"');
        expect(res.headers.get('cache-control')).to.equal('no-store');
      }
    }
  });

  it('allows only its own import map as an inline script', async () => {
    const res = await app.request('GET', '/admin/folders');
    const policy = res.headers.get('content-security-policy')!;
    expect(policy).to.match(/script-src 'self' 'sha256-[A-Za-z0-9+/]+=*';/);
    expect(policy).to.include("default-src 'none'").and.include("connect-src 'self'");
  });

  it('serves its modules, preact and htm, its style sheet and the policy manifest', async () => {
    for (const file of CONSOLE_ASSETS) {
      const res = await app.request('GET', `/assets/${file}`);
      expect(res.status, file).to.equal(200);
      expect(res.headers.get('content-type'), file).to.equal('text/javascript; charset=utf-8');
    }
    expect((await app.request('GET', '/assets/console.css')).headers.get('content-type')).to.equal('text/css; charset=utf-8');
    const manifest = await app.request('GET', '/assets/policy-manifest.json');
    expect(manifest.status).to.equal(200);
    expect(manifest.body).to.have.keys('opaVersion', 'sourceHash', 'entrypoints');
  });

  it('names no file on disk: an unknown page or a path out of the assets is a 404', async () => {
    for (const path of ['/admin/folders/x', '/assets/..%2Fpackage.json', '/assets/preact', '/assets/console-missing.js']) {
      expect((await app.request('GET', path)).status, path).to.equal(404);
    }
  });
});

describe('admin console in the browser', function () {
  this.timeout(300_000);
  let app: TestApp;
  let browser: Browser;
  let admin: TestUser;
  let viewer: TestUser;
  const record = newRecord();
  let granted: { uid: string; title: string };
  let other: { uid: string; title: string };
  let grantedDashboard: { uid: string; url: string };
  let otherDashboard: { uid: string; url: string };

  /** A browser context signed in as `user` with their session cookie, recording every request to the service. */
  const signedIn = (user: TestUser): Promise<{ context: BrowserContext; page: Page }> => signedInRecording(browser, app, user, record);

  const api = (user: TestUser, method: string, path: string, body?: unknown) => succeeded(app, user, method, path, body);

  before(async function () {
    requirePeer(this, 'chromium');
    app = await startTestApp();
    admin = await createUser(app, { login: 'ada', name: 'Ada Admin', svcAdmin: true, role: 'Admin' });
    viewer = await createUser(app, { login: 'vic', name: 'Vic Viewer', role: 'Viewer' });
    const operations = await api(admin, 'POST', '/api/folders', { title: 'Operations' });
    granted = await api(admin, 'POST', '/api/folders', { title: 'Payments', parentUid: operations.uid });
    other = await api(admin, 'POST', '/api/folders', { title: 'Finance' });
    grantedDashboard = await api(admin, 'POST', '/api/dashboards/db', { dashboard: { title: 'Payments overview' }, folderUid: granted.uid });
    otherDashboard = await api(admin, 'POST', '/api/dashboards/db', { dashboard: { title: 'Finance overview' }, folderUid: other.uid });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await app?.close();
  });

  it('an admin grants the Viewer Edit on a folder in /admin/folders', async () => {
    const { context, page } = await signedIn(admin);
    await page.goto(`${app.url}/admin`);
    await page.waitForURL(`${app.url}/admin/folders`);
    await page.getByRole('heading', { name: 'Folders', level: 1 }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Console' });
    expect(await nav.getByRole('link').allTextContents()).to.deep.equal([
      'Folders',
      'Audit log',
      'Policy',
      'Users',
      'Teams',
      'Service accounts',
      'Roles',
      'Connectors',
      'Orgs',
    ]);

    // The tree opens lazily: Payments is inside Operations.
    const tree = page.getByRole('navigation', { name: 'Folder tree' });
    await tree.getByRole('button', { name: 'Open Operations' }).click();
    await tree.getByRole('link', { name: 'Payments' }).click();
    await page.waitForURL(`${app.url}/dashboards/f/${granted.uid}/`);
    await page.getByRole('link', { name: 'Payments overview' }).waitFor();

    const panel = page.getByRole('region', { name: 'Folder permissions' });
    await panel.getByLabel('Find a user').fill(viewer.login);
    await panel.getByLabel('User', { exact: true }).locator('option', { hasText: viewer.login }).waitFor({ state: 'attached' });
    await panel.getByLabel('User', { exact: true }).selectOption({ label: `${viewer.login} (Vic Viewer)` });
    await panel.getByLabel('Permission', { exact: true }).selectOption({ label: 'Edit' });
    await panel.getByRole('button', { name: 'Grant' }).click();
    await panel.getByText(`Granted Edit to User ${viewer.login} (Vic Viewer).`).waitFor();
    await panel.getByText(`User ${viewer.login}: Edit`).waitFor();

    const grants = await api(admin, 'GET', `/api/folders/${granted.uid}/permissions`);
    expect(grants.filter((g: { userId: string }) => g.userId === viewer.id).map((g: { permissionName: string }) => g.permissionName)).to.deep.equal(['Edit']);

    // The dashboard inside shows the grant as inherited, from the folder it comes from.
    await page.goto(`${app.url}${grantedDashboard.url}`);
    const dashboardPanel = page.getByRole('region', { name: 'Dashboard permissions' });
    await dashboardPanel.getByText(`User ${viewer.login}: Edit`).waitFor();
    expect(await dashboardPanel.getByRole('link', { name: 'Payments' }).count()).to.be.greaterThan(0);
    await context.close();
  });

  it('the Viewer sees only what the grant allows', async () => {
    const { context, page } = await signedIn(viewer);
    await page.goto(`${app.url}/admin/folders`);
    await page.getByRole('heading', { name: 'Folders', level: 1 }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('link').allTextContents()).to.deep.equal([
      'Folders',
      'Policy',
      'Teams',
      'Connectors',
    ]);

    await page.goto(`${app.url}${grantedDashboard.url}`);
    const mayGranted = page.locator('dt:text-is("You may") + dd');
    await page.getByRole('heading', { name: 'Dashboard Payments overview' }).waitFor();
    // Edit on a folder is Grafana's: view, edit and delete its dashboards, not change who has access.
    expect(await mayGranted.textContent()).to.equal('view, edit, delete');

    await page.goto(`${app.url}${otherDashboard.url}`);
    await page.getByRole('heading', { name: 'Dashboard Finance overview' }).waitFor();
    expect(await page.locator('dt:text-is("You may") + dd').textContent()).to.equal('view');

    // Edit does not let the Viewer change who has access, so nothing offers it.
    await page.goto(`${app.url}/dashboards/f/${granted.uid}/`);
    await page.getByRole('link', { name: 'Payments overview' }).waitFor();
    expect(await page.getByRole('button', { name: 'Grant' }).count()).to.equal(0);
    expect(await page.getByRole('button', { name: /^Revoke/ }).count()).to.equal(0);
    await context.close();
  });

  it('/admin/audit shows the grant, with links to its actor and target', async () => {
    const { context, page } = await signedIn(admin);
    await page.goto(`${app.url}/admin/audit?action=permission.granted`);
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const row = page.getByRole('row').filter({ hasText: 'permission.granted' }).filter({ hasText: 'Payments' });
    await row.first().waitFor();
    expect(
      await row
        .getByRole('link', { name: /^(Ada Admin|ada)$/ })
        .first()
        .getAttribute('href'),
    ).to.equal(`/admin/audit?actorId=${admin.id}`);
    expect(await row.getByRole('link', { name: 'Payments' }).first().getAttribute('href')).to.equal(`/dashboards/f/${granted.uid}/`);

    // The filters are the address: by target, only that folder's entries.
    await page.getByLabel('Target ID').fill(granted.uid);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/targetId=/);
    await row.first().waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'Finance' }).count()).to.equal(0);
    await context.close();
  });

  it("/admin/policy explains the Viewer's allow on a dashboard in the folder and lists them under who-can", async () => {
    const { context, page } = await signedIn(admin);
    const params = new URLSearchParams({ userId: viewer.id, action: 'dashboards:write', kind: 'dashboards', uid: grantedDashboard.uid });
    await page.goto(`${app.url}/admin/policy?${params}`);
    const explain = page.getByRole('region', { name: 'Explain a decision' });
    await explain.getByRole('button', { name: 'Explain' }).waitFor();
    await explain.getByRole('button', { name: 'Explain' }).click();
    await explain.getByText('Allowed', { exact: true }).waitFor();
    const reasons = await explain.locator('ol.reasons li').allTextContents();
    expect(reasons.join('\n')).to.include(granted.uid);

    const whoCan = page.getByRole('region', { name: 'Who can' });
    await whoCan.getByRole('button', { name: 'Find who can' }).click();
    await whoCan.getByText(viewer.login, { exact: true }).waitFor();
    await context.close();
  });

  it('a Viewer on /admin/users sees the refused state', async () => {
    const { context, page } = await signedIn(viewer);
    await page.goto(`${app.url}/admin/users`);
    await page.getByRole('heading', { name: 'Access denied' }).waitFor();
    expect(await page.getByRole('table').count()).to.equal(0);
    await context.close();
  });

  it('an admin creates a team and adds the Viewer to it in /admin/teams', async () => {
    const { context, page } = await signedIn(admin);
    await page.goto(`${app.url}/admin/teams`);
    await page.getByLabel('Team name').fill('Payments on call');
    await page.getByRole('button', { name: 'Create team' }).click();
    await page.getByRole('link', { name: 'Payments on call' }).click();
    const members = page.getByRole('region', { name: 'Members of Payments on call' });
    await members.getByLabel('Find a user').fill(viewer.login);
    await members.getByLabel('User', { exact: true }).locator('option', { hasText: viewer.login }).waitFor({ state: 'attached' });
    await members.getByLabel('User', { exact: true }).selectOption({ label: viewer.login });
    await members.getByRole('button', { name: 'Add member' }).click();
    await members.getByText(`${viewer.login} (Vic Viewer): Member`).waitFor();
    const [team] = await app.db('teams').where({ name: 'Payments on call' });
    expect(await app.count('team_members', { team_id: team.id, user_id: viewer.id })).to.equal(1);
    await context.close();
  });

  it('/admin/serviceaccounts shows a token key once', async () => {
    const { context, page } = await signedIn(admin);
    await page.goto(`${app.url}/admin/serviceaccounts`);
    await page.getByLabel('Name', { exact: true }).fill('deployer');
    await page.getByRole('button', { name: 'Create service account' }).click();
    await page.getByRole('link', { name: 'deployer' }).click();
    const tokens = page.getByRole('region', { name: 'Tokens of deployer' });
    await tokens.getByLabel('Token name').fill('ci');
    await tokens.getByRole('button', { name: 'Issue token' }).click();
    const key = (await tokens.getByLabel('Token key').textContent())!;
    const whoAmI = await app.request('GET', '/api/serviceaccounts/search', { token: key });
    expect(whoAmI.status).to.not.equal(401);
    await tokens.getByRole('button', { name: 'I have copied the key' }).click();
    expect(await tokens.getByLabel('Token key').count()).to.equal(0);
    await page.reload();
    await tokens.locator('li', { hasText: 'never expires' }).waitFor();
    expect(await page.content()).to.not.include(key);
    await context.close();
  });

  it('every page passes axe and is screenshotted at 1280 and 390 wide, light and dark', async function () {
    // what the pages draw is the browser's: one database's run checks it; the flows above run on both
    requireDatabase(this, 'sqlite');
    const pages: Array<[string, TestUser, string]> = [
      ['folders', admin, '/admin/folders'],
      ['folder', admin, `/dashboards/f/${granted.uid}/`],
      ['dashboard', admin, grantedDashboard.url],
      ['audit', admin, '/admin/audit'],
      ['policy', admin, `/admin/policy?${new URLSearchParams({ kind: 'dashboards', uid: grantedDashboard.uid })}`],
      ['users', admin, '/admin/users'],
      ['users-refused', viewer, '/admin/users'],
      ['teams', admin, '/admin/teams'],
      ['serviceaccounts', admin, '/admin/serviceaccounts'],
      ['orgs', admin, '/admin/orgs?org=org_main'],
      ['orgs-refused', viewer, '/admin/orgs'],
      ['not-found', admin, '/admin/nothing'],
    ];
    const violations = await screenshotAndAxe(browser, app, record, pages);
    expect(violations).to.deep.equal([]);
  });

  it('made only requests to routes of the OpenAPI document, and raised no script error', async () => {
    expect(record.requests.length).to.be.greaterThan(50);
    expect(await requestsOffTheDocument(app, record.requests)).to.deep.equal([]);
    expect(record.pageErrors).to.deep.equal([]);
  });
});
