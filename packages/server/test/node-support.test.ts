import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nodeEndOfLifeWarning } from '../src/node-support.js';

const day = (iso: string) => new Date(`${iso}T12:00:00Z`);

describe('node end-of-life warning', () => {
  it('is silent on the supported lines 22, 24 and 26', () => {
    for (const version of ['v22.12.0', 'v24.11.1', 'v26.0.0']) {
      assert.equal(nodeEndOfLifeWarning(version, day('2026-11-25')), undefined, version);
    }
  });

  it('names the version, its end of life and the supported lines on Node 20 after 2026-04-30', () => {
    const warning = nodeEndOfLifeWarning('v20.19.1', day('2026-05-01'));
    assert.equal(
      warning,
      'Node.js v20.19.1 is past its end of life since 2026-04-30 and gets no security fixes; run Paygate on Node.js 22, 24 or 26',
    );
  });

  it('is silent on a line until its end-of-life day, inclusive', () => {
    assert.equal(nodeEndOfLifeWarning('v20.11.0', day('2026-04-30')), undefined);
    assert.match(nodeEndOfLifeWarning('v22.1.0', day('2027-05-01')) ?? '', /since 2027-04-30/);
  });

  it('warns on odd lines past their six months and on lines older than the table', () => {
    assert.match(nodeEndOfLifeWarning('v25.2.0', day('2026-11-25')) ?? '', /past its end of life since 2026-06-01/);
    assert.match(
      nodeEndOfLifeWarning('v16.20.2', day('2026-11-25')) ?? '',
      /^Node\.js v16\.20\.2 is past its end of life and/,
    );
  });

  it('assumes a line newer than the table is supported, and ignores what is not a version', () => {
    assert.equal(nodeEndOfLifeWarning('v28.0.0', day('2035-01-01')), undefined);
    assert.equal(nodeEndOfLifeWarning('bun', day('2026-11-25')), undefined);
  });
});
