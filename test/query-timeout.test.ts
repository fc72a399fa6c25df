/**
 * The query bound (src/db/query-timeout.ts) on a connection that never answers: a query times out
 * past the bound, and work run withoutQueryTimeout (boot's migrations and seeding) is not bound,
 * also while another such run ends beside it; once none runs, queries are bound again.
 */
import { expect } from 'chai';
import { boundQueries, QueryTimeoutError, withoutQueryTimeout, type DriverConnection } from '../src/db/query-timeout.ts';

const BOUND_MS = 30;

/** A connection whose queries never answer, bound by BOUND_MS. */
function silentConnection(): DriverConnection & { destroyed: boolean } {
  const connection = {
    destroyed: false,
    query: () => undefined,
    destroy() {
      connection.destroyed = true;
    },
  };
  boundQueries(connection, BOUND_MS);
  return connection;
}

/** What a query's callback got within `waitMs`: an error, or nothing. */
function outcome(connection: DriverConnection, waitMs = BOUND_MS * 4): Promise<Error | 'no answer'> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('no answer'), waitMs);
    connection.query('SELECT 1', (err: Error | null) => {
      clearTimeout(timer);
      resolve(err ?? 'no answer');
    });
  });
}

describe('query bound (DB_QUERY_TIMEOUT_MS)', () => {
  it('fails a query that gets no answer within the bound and destroys its connection', async () => {
    const connection = silentConnection();
    const result = await outcome(connection);
    expect(result).to.be.instanceOf(QueryTimeoutError);
    expect(connection.destroyed).to.equal(true);
  });

  it('leaves work run withoutQueryTimeout unbound, also after another such run ended beside it, and binds again after', async () => {
    let releaseFirst!: () => void;
    const first = withoutQueryTimeout(() => new Promise<void>((resolve) => (releaseFirst = resolve)));
    const second = withoutQueryTimeout(async () => {
      releaseFirst();
      await first;
      return outcome(silentConnection());
    });
    expect(await second).to.equal('no answer');
    expect(await outcome(silentConnection())).to.be.instanceOf(QueryTimeoutError);
  });
});
