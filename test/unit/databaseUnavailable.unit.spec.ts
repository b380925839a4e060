import { isDatabaseUnavailable } from '../../apps/api/src/http/errors';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('telling a database that does not answer from a fault', () => {
  it('knows a cut, refused or shutting-down connection as node-postgres reports it', () => {
    expect(isDatabaseUnavailable(withCode('terminating connection due to administrator command', '57P01'))).toBe(true);
    expect(isDatabaseUnavailable(withCode('the database system is starting up', '57P03'))).toBe(true);
    expect(isDatabaseUnavailable(withCode('sorry, too many clients already', '53300'))).toBe(true);
    expect(isDatabaseUnavailable(withCode('connection failure', '08006'))).toBe(true);
    expect(isDatabaseUnavailable(withCode('canceling statement due to statement timeout', '57014'))).toBe(true);
    expect(isDatabaseUnavailable(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(isDatabaseUnavailable(new Error('terminating connection due to idle-in-transaction timeout'))).toBe(true);
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDatabaseUnavailable(new Error('Client has encountered a connection error and is not queryable'))).toBe(true);
    expect(isDatabaseUnavailable(withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'))).toBe(true);
    expect(isDatabaseUnavailable(new Error('wrapped', { cause: withCode('x', '57P01') }))).toBe(true);
  });

  it('leaves a wrong query, a conflict and another service’s network error alone', () => {
    expect(isDatabaseUnavailable(withCode('duplicate key value violates unique constraint', '23505'))).toBe(false);
    expect(isDatabaseUnavailable(withCode('could not serialize access', '40001'))).toBe(false);
    expect(isDatabaseUnavailable(withCode('syntax error', '42601'))).toBe(false);
    expect(isDatabaseUnavailable(new TypeError('fetch failed', { cause: withCode('connect ECONNREFUSED 127.0.0.1:8899', 'ECONNREFUSED') }))).toBe(false);
    expect(isDatabaseUnavailable(new Error('boom'))).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
  });
});
