/**
 * GET /api/health (liveness: the process, never the database) and GET /api/health/ready (the
 * database answers, every migration has run, the policy is loaded; 503 naming what is not).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { readManifest } from '../src/authz/manifest.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { REPO_ROOT } from './helpers/opa.ts';

/** The committed build: unsigned, its revision the Rego source hash. */
const POLICY_BUNDLE = { source: 'build', revision: readManifest(REPO_ROOT).sourceHash, signer: null };
const READY = { status: 'ok', database: 'ok', migrations: 'ok', policy: 'ok', policyBundle: POLICY_BUNDLE };

describe('health', () => {
  describe('a running instance', () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp();
    });
    after(async () => {
      await app.close();
    });

    it('is alive and ready, to anyone, whatever credential comes along', async () => {
      expect(await app.request('GET', '/api/health'))
        .to.include({ status: 200 })
        .and.to.have.deep.property('body', { status: 'ok' });
      expect(await app.request('GET', '/api/health/ready'))
        .to.include({ status: 200 })
        .and.to.have.deep.property('body', READY);
      // A probe is never refused for a credential it carries: a dead cookie or an unknown token is not read.
      expect((await app.request('GET', '/api/health', { cookie: 'svc_session=forged' })).status).to.equal(200);
      expect((await app.request('GET', '/api/health/ready', { token: 'not-a-token' })).status).to.equal(200);
    });

    it('is not ready while a migration of this code has not run on the database', async () => {
      const last = await app.db('knex_migrations').orderBy('id', 'desc').first('id', 'name', 'batch', 'migration_time');
      await app.db('knex_migrations').where('id', last.id).delete();
      try {
        const res = await app.request('GET', '/api/health/ready');
        expect(res.status).to.equal(503);
        expect(res.body).to.deep.equal({
          status: 'unavailable',
          database: 'ok',
          migrations: `pending: ${last.name}`,
          policy: 'ok',
          policyBundle: POLICY_BUNDLE,
        });
        expect((await app.request('GET', '/api/health')).status).to.equal(200);
      } finally {
        await app.db('knex_migrations').insert(last);
      }
      expect((await app.request('GET', '/api/health/ready')).status).to.equal(200);
    });

    it('is not ready when the database cannot be reached, and stays alive', async () => {
      // The pool destroyed: every query fails as on a database gone away. Last test of this app.
      await app.db.destroy();
      const res = await app.request('GET', '/api/health/ready');
      expect(res.status).to.equal(503);
      expect(res.body.status).to.equal('unavailable');
      expect(res.body.database).to.match(/^failed \(/);
      expect(res.body.migrations).to.equal('unknown: the database is unreachable');
      expect(await app.request('GET', '/api/health'))
        .to.include({ status: 200 })
        .and.to.have.deep.property('body', { status: 'ok' });
    });
  });

  it('is not ready when the policy cannot be loaded', async () => {
    // A valid WebAssembly module that is no OPA policy: it compiles, and instantiating it as one fails.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-policy-'));
    const wasm = path.join(dir, 'authz.wasm');
    fs.writeFileSync(wasm, Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]));
    const app = await startTestApp({ env: { POLICY_WASM_PATH: wasm } });
    try {
      const res = await app.request('GET', '/api/health/ready');
      expect(res.status).to.equal(503);
      // no manifest.json beside this file: no revision to name
      expect(res.body).to.deep.equal({
        status: 'unavailable',
        database: 'ok',
        migrations: 'ok',
        policy: 'not loaded',
        policyBundle: { source: 'build', revision: null, signer: null },
      });
      expect((await app.request('GET', '/api/health')).status).to.equal(200);
    } finally {
      await app.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
