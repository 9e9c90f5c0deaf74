import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Transfer } from '../src/model.js';
import { Store } from '../src/store.js';
import { tempDir } from './helpers.js';

const transfer = (id: string, status: Transfer['status'] = 'queued'): Transfer => ({
  id,
  reference: `W${id}`,
  status,
  amount: '1.00',
  currency: 'BRL',
  payee: { name: 'Ana', accountNumber: '1' },
  notifyUrl: 'http://127.0.0.1:9/n',
  createdAt: 1,
  updatedAt: 1,
});

test('store: a committed transaction survives a crash; a torn last line is dropped', () => {
  const temp = tempDir();
  try {
    // A process commits two transactions and dies by kill -9 (no close(), and its lock goes with it)…
    const script = `
      const { Store } = await import(${JSON.stringify(new URL('../src/store.ts', import.meta.url).href)});
      const transfers = ${JSON.stringify([transfer('tr_1'), transfer('tr_1', 'sent')])};
      const store = new Store(${JSON.stringify(temp.dir)});
      store.commit([{ t: 'transfer', v: transfers[0] }]);
      store.commit([{ t: 'transfer', v: transfers[1] }, { t: 'mode', v: { mode: 'reverse' } }]);
      process.kill(process.pid, 'SIGKILL');
    `;
    const crashed = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(crashed.signal, 'SIGKILL', crashed.stderr);
    // …half-way through writing a third transaction.
    appendFileSync(join(temp.dir, 'journal.jsonl'), '[{"t":"transfer","v":{"id":"tr_2"');
    const reopened = new Store(temp.dir);
    assert.equal(reopened.transfers.get('tr_1')?.status, 'sent');
    assert.equal(reopened.transfersByReference.get('Wtr_1'), 'tr_1');
    assert.equal(reopened.transfers.has('tr_2'), false);
    assert.equal(reopened.mode.mode, 'reverse');
    // Opening compacts: the snapshot holds everything, the journal starts empty.
    assert.equal(readFileSync(join(temp.dir, 'journal.jsonl'), 'utf8'), '');
    reopened.close();
    const again = new Store(temp.dir);
    assert.equal(again.transfers.get('tr_1')?.status, 'sent');
    again.close();
  } finally {
    temp.remove();
  }
});

test('store: damage before the last line refuses to start rather than lose transactions silently', () => {
  const temp = tempDir();
  try {
    new Store(temp.dir).close();
    writeFileSync(
      join(temp.dir, 'journal.jsonl'),
      `garbage\n${JSON.stringify([{ t: 'transfer', v: transfer('tr_1') }])}\n`,
    );
    assert.throws(() => new Store(temp.dir), /journal\.jsonl: line 1 is not a transaction/);
  } finally {
    temp.remove();
  }
});
