import { copyText } from '@svc/projections';

describe('rows as COPY text', () => {
  it('escapes the characters that delimit, marks nulls, and prints numbers and booleans as PostgreSQL reads them', () => {
    const rows = [
      { id: 'a\\b\tc\nd\re', n: 12, hot: 1764110000000 / 45_000_000, ok: true, note: null },
      { id: '\\N', n: 0, hot: -0.5, ok: false, note: undefined },
    ];
    expect(copyText(rows, { id: 'text', n: 'bigint', hot: 'double precision', ok: 'boolean', note: 'text' })).toBe(
      `a\\\\b\\tc\\nd\\re\t12\t${1764110000000 / 45_000_000}\tt\t\\N\n` + `\\\\N\t0\t-0.5\tf\t\\N\n`,
    );
  });
});
