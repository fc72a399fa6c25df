/**
 * Password hashing takes turns: PASSWORD_HASH_CONCURRENCY derivations at once, PASSWORD_HASH_QUEUE
 * more waiting, and beyond that 503 with Retry-After at once — never a hang, and a login refused
 * for being too busy costs no lockout attempt.
 */
import { expect } from 'chai';
import { DEFAULT_HASH_CONCURRENCY, DEFAULT_HASH_QUEUE, KeyDerivationGate, keyDerivations } from '../src/crypto/password.ts';
import { ServiceUnavailableError } from '../src/errors.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { createUser, DEFAULT_PASSWORD, type TestUser } from './helpers/factories.ts';

/** A piece of work that runs until the test lets it finish. */
function heldWork(log: string[], name: string) {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return {
    work: async () => {
      log.push(`start ${name}`);
      await done;
      log.push(`end ${name}`);
    },
    finish,
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('password hashing takes turns', () => {
  it('runs `concurrency` at once, queues `queue` more in order, refuses the rest with 503 and Retry-After', async () => {
    const gate = new KeyDerivationGate(2, 1);
    const log: string[] = [];
    const [a, b, c] = [heldWork(log, 'a'), heldWork(log, 'b'), heldWork(log, 'c')];
    const running = [gate.run(a.work), gate.run(b.work), gate.run(c.work)];
    await tick();
    expect(log).to.deep.equal(['start a', 'start b']);
    let refused: unknown;
    await gate.run(async () => log.push('never')).catch((err: unknown) => (refused = err));
    expect(refused).to.be.instanceOf(ServiceUnavailableError);
    expect((refused as ServiceUnavailableError).status).to.equal(503);
    expect((refused as ServiceUnavailableError).headers).to.deep.equal({ 'Retry-After': '1' });
    b.finish();
    await tick();
    await tick();
    expect(log).to.deep.equal(['start a', 'start b', 'end b', 'start c']);
    a.finish();
    c.finish();
    await Promise.all(running);
    // every turn was given back: two run at once again
    const [d, e] = [heldWork(log, 'd'), heldWork(log, 'e')];
    const again = [gate.run(d.work), gate.run(e.work)];
    await tick();
    expect(log.slice(-2)).to.deep.equal(['start d', 'start e']);
    d.finish();
    e.finish();
    await Promise.all(again);
  });

  it('a failing derivation gives its turn back', async () => {
    const gate = new KeyDerivationGate(1, 0);
    await gate.run(() => Promise.reject(new Error('boom'))).catch(() => undefined);
    expect(await gate.run(async () => 'ran')).to.equal('ran');
  });

  describe('POST /api/login when every turn is taken', () => {
    let app: TestApp;
    let user: TestUser;
    before(async () => {
      app = await startTestApp({ env: { PASSWORD_HASH_CONCURRENCY: '1', PASSWORD_HASH_QUEUE: '0' } });
      user = await createUser(app);
    });
    after(async () => {
      keyDerivations.configure({ concurrency: DEFAULT_HASH_CONCURRENCY, queue: DEFAULT_HASH_QUEUE });
      await app.close();
    });
    const login = (password: string) => app.request('POST', '/api/login', { body: { user: user.login, password } });

    it('answers 503 with Retry-After at once, charges no lockout attempt, and logs in once a turn is free', async () => {
      const busy = heldWork([], 'busy');
      const holding = keyDerivations.run(busy.work);
      await tick();
      const refused = await login(DEFAULT_PASSWORD);
      expect(refused.status).to.equal(503);
      expect(refused.headers.get('retry-after')).to.equal('1');
      expect(refused.body).to.deep.equal({ message: 'too many password checks at once: retry in a moment' });
      busy.finish();
      await holding;
      // the refused attempt was given back: still five wrong passwords before the lockout
      for (let i = 0; i < 5; i += 1) expect((await login('wrong password, wrong')).status).to.equal(401);
      expect((await login(DEFAULT_PASSWORD)).status).to.equal(429);
    });

    it('PASSWORD_HASH_CONCURRENCY below 1 or a negative PASSWORD_HASH_QUEUE stops startup with the variable named', async () => {
      for (const [name, value] of [
        ['PASSWORD_HASH_CONCURRENCY', '0'],
        ['PASSWORD_HASH_QUEUE', '-1'],
        ['PASSWORD_HASH_QUEUE', 'many'],
      ] as const) {
        let failure: unknown;
        await startTestApp({ env: { [name]: value } }).catch((err: unknown) => (failure = err));
        expect(String(failure)).to.include(name);
      }
    });
  });
});
