import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { z } from 'zod';
import {
  ConfigError,
  ControlRefusal,
  controlInput,
  createControlPort,
  envDuration,
  envInteger,
  Journal,
  JournalStore,
  writeFileAtomic,
} from '../src/index.js';

function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'paygate-kit-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

type Change = { t: 'set'; k: string; v: number } | { t: 'del'; k: string };

/** A store the way a simulator writes one: its own records, the kit's journal. */
function openStore(dir: string, compactAfter?: number) {
  const values = new Map<string, number>();
  const apply = (change: Change) => {
    if (change.t === 'set') values.set(change.k, change.v);
    else values.delete(change.k);
  };
  const journal = new Journal<Change, { values: [string, number][] }>(
    dir,
    {
      apply,
      snapshot: () => ({ values: [...values] }),
      restore: (snapshot) => snapshot.values.forEach(([k, v]) => values.set(k, v)),
    },
    compactAfter === undefined ? {} : { compactAfter },
  );
  return { values, journal };
}

describe('Journal', () => {
  test('commits survive a reopen without close; a torn last line is dropped; opening compacts', () => {
    const temp = tempDir();
    try {
      const first = openStore(temp.dir);
      first.journal.commit([{ t: 'set', k: 'a', v: 1 }]);
      first.journal.commit([
        { t: 'set', k: 'b', v: 2 },
        { t: 'del', k: 'a' },
      ]);
      appendFileSync(join(temp.dir, 'journal.jsonl'), '[{"t":"set","k":"c"');
      const again = openStore(temp.dir);
      assert.deepEqual([...again.values], [['b', 2]]);
      assert.equal(readFileSync(join(temp.dir, 'journal.jsonl'), 'utf8'), '');
      assert.equal(statSync(join(temp.dir, 'state.json')).mode & 0o777, 0o600);
      again.journal.close();
      assert.throws(() => again.journal.commit([{ t: 'set', k: 'x', v: 0 }]), /the store is closed/);
    } finally {
      temp.remove();
    }
  });

  test('damage before the last line refuses to open', () => {
    const temp = tempDir();
    try {
      openStore(temp.dir).journal.close();
      writeFileSync(join(temp.dir, 'journal.jsonl'), `garbage\n${JSON.stringify([{ t: 'set', k: 'a', v: 1 }])}\n`);
      assert.throws(() => openStore(temp.dir), /journal\.jsonl: line 1 is not a transaction/);
    } finally {
      temp.remove();
    }
  });

  test('compacts after the given number of transactions', () => {
    const temp = tempDir();
    try {
      const store = openStore(temp.dir, 3);
      for (let i = 0; i < 7; i++) store.journal.commit([{ t: 'set', k: `k${i}`, v: i }]);
      assert.equal(readFileSync(join(temp.dir, 'journal.jsonl'), 'utf8').split('\n').length - 1, 1);
      assert.equal((JSON.parse(readFileSync(join(temp.dir, 'state.json'), 'utf8')) as { values: [] }).values.length, 6);
      store.journal.close();
      assert.equal(openStore(temp.dir).values.size, 7);
    } finally {
      temp.remove();
    }
  });

  test('writeFileAtomic: a temporary path of choice, then the rename', () => {
    const temp = tempDir();
    try {
      writeFileAtomic(join(temp.dir, 'out.txt'), 'one', { temporary: join(temp.dir, '.out.part') });
      assert.equal(readFileSync(join(temp.dir, 'out.txt'), 'utf8'), 'one');
    } finally {
      temp.remove();
    }
  });
});

/** A store the way a simulator declares one on the kit's base: its records, apply, snapshot, restore. */
class CounterStore extends JournalStore<Change, { values: [string, number][] }> {
  readonly values = new Map<string, number>();

  constructor(dir: string, open = true) {
    super(dir);
    if (open) this.open();
  }

  protected override apply(change: Change): void {
    if (change.t === 'set') this.values.set(change.k, change.v);
    else this.values.delete(change.k);
  }

  protected override snapshot() {
    return { values: [...this.values] };
  }

  protected override restore(snapshot: { values: [string, number][] }): void {
    for (const [k, v] of snapshot.values) this.values.set(k, v);
  }
}

describe('JournalStore', () => {
  test("loads into the subclass's own maps, commits, closes once, and reopens with the same records", () => {
    const temp = tempDir();
    try {
      const first = new CounterStore(temp.dir);
      first.commit([{ t: 'set', k: 'a', v: 1 }]);
      first.commit([
        { t: 'set', k: 'b', v: 2 },
        { t: 'del', k: 'a' },
      ]);
      assert.deepEqual([...first.values], [['b', 2]]);
      assert.equal(first.closed, false);
      first.close();
      first.close();
      assert.equal(first.closed, true);
      assert.throws(() => first.commit([{ t: 'set', k: 'x', v: 0 }]), /the store is closed/);
      const again = new CounterStore(temp.dir);
      assert.deepEqual([...again.values], [['b', 2]]);
      again.close();
    } finally {
      temp.remove();
    }
  });

  test('a store whose constructor did not open it says so on first use', () => {
    const temp = tempDir();
    try {
      assert.throws(() => new CounterStore(temp.dir, false).commit([]), /must call open\(\)/);
    } finally {
      temp.remove();
    }
  });
});

describe('config helpers', () => {
  test('integers and durations, refused with one line naming the variable', () => {
    assert.equal(envInteger({}, 'X', 7), 7);
    assert.equal(envInteger({ X: '12' }, 'X', 7, 1, 20), 12);
    assert.throws(
      () => envInteger({ X: '21' }, 'X', 7, 1, 20),
      new ConfigError('X must be a whole number from 1 to 20, got "21"'),
    );
    assert.equal(envDuration({}, 'D', 2000), 2000);
    assert.equal(envDuration({ D: '2s' }, 'D', 0), 2000);
    assert.equal(envDuration({ D: '150ms' }, 'D', 0), 150);
    assert.equal(envDuration({ D: '5m' }, 'D', 0), 300_000);
    assert.equal(envDuration({ D: '40' }, 'D', 0), 40);
    assert.throws(() => envDuration({ D: '2 days' }, 'D', 0), /D must be a duration such as 2s/);
  });
});

describe('control port', () => {
  test('JSON POSTs answer {"ok": true} or a 4xx with a reason; GET routes report state', async () => {
    class Domain extends Error {
      status = 409;
    }
    let mode = 'release';
    const port = createControlPort({
      log: pino({ level: 'silent' }),
      refusal: (error) => (error instanceof Domain ? error : undefined),
      routes: {
        'POST /control/mode': ({ body }) => {
          mode = controlInput(z.strictObject({ mode: z.enum(['hold', 'release']) }), body).mode;
        },
        'POST /control/conflict': () => {
          throw new Domain('already done');
        },
        'POST /control/boom': () => {
          throw new Error('a bug');
        },
        'GET /control/state': () => ({ mode }),
      },
    });
    const url = await port.listen(0, '127.0.0.1');
    try {
      const post = async (path: string, body: string) => {
        const response = await fetch(`${url}${path}`, { method: 'POST', body });
        return { status: response.status, body: (await response.json()) as unknown };
      };
      assert.deepEqual(await post('/control/mode', '{"mode":"hold"}'), { status: 200, body: { ok: true } });
      assert.equal(mode, 'hold');
      assert.deepEqual(await post('/control/mode', '{"mode":"later"}'), {
        status: 400,
        body: { error: 'mode: Invalid option: expected one of "hold"|"release"' },
      });
      assert.deepEqual(await post('/control/mode', 'not json'), {
        status: 400,
        body: { error: 'the body must be JSON' },
      });
      assert.deepEqual(await post('/control/conflict', '{}'), { status: 409, body: { error: 'already done' } });
      assert.deepEqual(await post('/control/boom', '{}'), { status: 500, body: { error: 'internal error' } });
      assert.deepEqual(await post('/control/nothing', '{}'), { status: 404, body: { error: 'not found' } });
      assert.deepEqual(await post('/control/mode', 'x'.repeat(70_000)), {
        status: 413,
        body: { error: 'the body is too large' },
      });
      assert.deepEqual(await (await fetch(`${url}/control/state`)).json(), { mode: 'hold' });
      assert.deepEqual(await (await fetch(`${url}/healthz`)).json(), { ok: true });
    } finally {
      await port.close();
    }
    assert.ok(new ControlRefusal(400, 'x') instanceof Error);
  });
});

describe('the stop', () => {
  /** Starts the stuck simulator (its close never ends) with `deadlineMs`; resolves once it listens. */
  async function startStuck(deadlineMs: number) {
    const child = spawn(
      process.execPath,
      [
        '--conditions=source',
        '--import',
        'tsx',
        join(import.meta.dirname, 'fixtures/stuck-simulator.ts'),
        `${deadlineMs}`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const printed = async (text: string) => {
      while (!output.includes(text)) {
        if (child.exitCode !== null) assert.fail(`exited before "${text}":\n${output}`);
        await sleep(20);
      }
    };
    await printed('"msg":"stuck-simulator listening"');
    return { child, exited, printed, output: () => output };
  }

  test('a stop that does not end by the deadline exits 1, saying so', { timeout: 30_000 }, async (t) => {
    const stuck = await startStuck(300);
    t.after(() => stuck.child.kill('SIGKILL'));
    stuck.child.kill('SIGTERM');
    assert.equal(await stuck.exited, 1);
    assert.match(stuck.output(), /"deadlineMs":300,"msg":"the stop did not end in time: exiting now"/);
  });

  test('a second signal during the stop exits 1 at once', { timeout: 30_000 }, async (t) => {
    const stuck = await startStuck(600_000);
    t.after(() => stuck.child.kill('SIGKILL'));
    stuck.child.kill('SIGTERM');
    await stuck.printed('"msg":"shutting down"');
    stuck.child.kill('SIGINT');
    assert.equal(await stuck.exited, 1);
    assert.match(stuck.output(), /"signal":"SIGINT","msg":"second signal during the stop: exiting now"/);
  });
});
