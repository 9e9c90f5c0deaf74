import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Camt054, Pain002 } from '@paygate/iso20022';
import { stopSimulator } from '@paygate/simulator-kit/test-support';
import ssh2 from 'ssh2';
import {
  BIN,
  clientKey,
  connect,
  control,
  newId,
  nextFiles,
  pain001,
  startBank,
  tempDir,
  transfer,
  waitFor,
  type Running,
  type Session,
} from './helpers.js';

const { STATUS_CODE } = ssh2.utils.sftp;

const sftpCode = (error: unknown) => (error as { code?: number }).code;

describe('paygate-bank (SFTP, pain.001 in, pain.002 and camt.054 out)', () => {
  const temp = tempDir();
  const key = clientKey(temp.dir);
  const dataDir = join(temp.dir, 'bank');
  let bank: Running;
  let session: Session;
  const seen = new Set<string>();

  before(async () => {
    bank = await startBank(dataDir, key.publicFile);
    session = await connect(bank.sftpPort, { privateKey: key.privateKey, fingerprint: bank.fingerprint });
  });
  after(async () => {
    session?.end();
    if (bank) assert.equal(await stopSimulator(bank), 0, 'SIGTERM stops gracefully');
    temp.remove();
  });

  test('prints its host key as ssh-keygen -lf does and the sepa-sftp channel that uses it', () => {
    const publicKey = readFileSync(join(dataDir, 'ssh_host_ed25519_key.pub'), 'utf8').trim().split(' ');
    assert.equal(publicKey[0], 'ssh-ed25519');
    const keygen = spawnSync('ssh-keygen', ['-lf', join(dataDir, 'ssh_host_ed25519_key.pub')], { encoding: 'utf8' });
    if (keygen.status === 0) assert.equal(keygen.stdout.split(' ')[1], bank.fingerprint);
    assert.deepEqual(bank.channel, {
      name: 'bank',
      kind: 'sepa-sftp',
      methods: [],
      payouts: ['EUR'],
      host: '127.0.0.1',
      port: bank.sftpPort,
      username: 'paygate',
      privateKeyFile: join(temp.dir, 'client'),
      hostKey: bank.fingerprint,
      uploadDir: '/upload',
      downloadDir: '/download',
      debtor: { name: 'Paygate Payouts', iban: 'DE75512108001245126199', bic: 'PGBKDEF0XXX' },
      batchEvery: '60s',
      pollEvery: '60s',
    });
    assert.deepEqual(JSON.parse(readFileSync(join(dataDir, 'channel.json'), 'utf8')), bank.channel);
  });

  test('a pain.001 uploaded (temporary name, then rename) is booked: pain.002 ACSC and camt.054 DBIT', async () => {
    const msgId = newId('MSG');
    const [a, b] = [newId('W'), newId('W')];
    await session.upload(`${msgId}.xml`, pain001(msgId, [transfer(a, '12.30'), transfer(b, '0.07')]));
    const [report, notification] = (await nextFiles(session, seen, 2)) as [Pain002, Camt054];
    assert.equal(report.kind, 'pain.002');
    assert.equal(report.originalMsgId, msgId);
    assert.equal(report.groupStatus, 'ACSC');
    assert.deepEqual(
      report.transactions.map((tx) => [tx.originalEndToEndId, tx.status]),
      [
        [a, 'ACSC'],
        [b, 'ACSC'],
      ],
    );
    assert.equal(notification.kind, 'camt.054');
    assert.deepEqual(
      notification.entries.map((entry) => [
        entry.creditDebit,
        entry.status,
        entry.amount,
        entry.currency,
        entry.transactions[0]?.endToEndId,
      ]),
      [
        ['DBIT', 'BOOK', '12.30', 'EUR', a],
        ['DBIT', 'BOOK', '0.07', 'EUR', b],
      ],
    );
    const refs = notification.entries.map((entry) => entry.transactions[0]?.accountServicerRef);
    assert.equal(new Set(refs).size, 2, 'a unique AcctSvcrRef per booking');
    assert.deepEqual(
      notification.entries.map((entry) => entry.accountServicerRef),
      refs,
      'the entry carries its transaction reference',
    );
    // The upload is taken out of /upload; the bank reports what it did.
    assert.deepEqual(await session.readdir('/upload'), []);
    const state = await control(bank.controlUrl, '/control/transfers');
    const booked = state.body.transfers.filter((t: { msgId: string }) => t.msgId === msgId);
    assert.deepEqual(
      booked.map((t: { status: string; reported: boolean }) => [t.status, t.reported]),
      [
        ['booked', true],
        ['booked', true],
      ],
    );
  });

  test('a file written in place as .xml is taken only once it is closed', async () => {
    const msgId = newId('MSG');
    const bytes = Buffer.from(pain001(msgId, [transfer(newId('W'))]));
    const handle = await new Promise<Buffer>((ok, fail) =>
      session.sftp.open(`/upload/${msgId}.xml`, 'w', (e, h) => (e ? fail(e) : ok(h))),
    );
    const half = Math.floor(bytes.length / 2);
    await new Promise<void>((ok, fail) => session.sftp.write(handle, bytes, 0, half, 0, (e) => (e ? fail(e) : ok())));
    await new Promise((resolve) => setTimeout(resolve, 300)); // several of the bank's ticks
    assert.deepEqual(await session.readdir('/upload'), [`${msgId}.xml`], 'half a file is left alone');
    await new Promise<void>((ok, fail) =>
      session.sftp.write(handle, bytes, half, bytes.length - half, half, (e) => (e ? fail(e) : ok())),
    );
    await new Promise<void>((ok, fail) => session.sftp.close(handle, (e) => (e ? fail(e) : ok())));
    const [report] = (await nextFiles(session, seen, 2)) as [Pain002];
    assert.equal(report.originalMsgId, msgId);
    assert.equal(report.groupStatus, 'ACSC');
  });

  test('a file invalid against the EPC XSD is rejected: pain.002 RJCT FF01; names not ending in .xml are left alone', async () => {
    const msgId = newId('BAD');
    const valid = pain001(msgId, [transfer(newId('W'))]);
    await session.upload(`${msgId}.xml`, valid.replace(/<ChrgBr>SLEV<\/ChrgBr>/, '<ChrgBr>DEBT</ChrgBr>'));
    await session.write('/upload/in-progress.tmp', 'not yet');
    const [report] = (await nextFiles(session, seen, 1)) as [Pain002];
    assert.equal(report.kind, 'pain.002');
    assert.equal(report.originalMsgId, msgId);
    assert.equal(report.groupStatus, 'RJCT');
    assert.equal(report.groupReason, 'FF01');
    assert.deepEqual(report.transactions, []);
    assert.deepEqual(await session.readdir('/upload'), ['in-progress.tmp']);
    const files = await control(bank.controlUrl, '/control/files');
    const upload = files.body.uploads.find((u: { msgId: string }) => u.msgId === msgId);
    assert.equal(upload.outcome, 'rejected');
    assert.match(upload.detail, /EPC pain\.001\.001\.09 XSD/);
  });

  test('a MsgId taken before is rejected with DU01, across a restart; the same bytes again are taken once', async () => {
    const msgId = newId('DUP');
    const first = pain001(msgId, [transfer(newId('W'), '5.00')]);
    await session.upload(`${msgId}.xml`, first);
    await nextFiles(session, seen, 2); // ACSC, DBIT
    // The same file again (an upload cut off and sent again): nothing more is answered.
    await session.upload(`${msgId}.xml`, first);
    await waitFor(async () => ((await session.readdir('/upload')).length === 1 ? true : undefined), 'the file taken');
    const files = await control(bank.controlUrl, '/control/files');
    assert.deepEqual(
      files.body.uploads.filter((u: { msgId: string }) => u.msgId === msgId).map((u: { outcome: string }) => u.outcome),
      ['accepted', 'repeated'],
    );

    // The bank restarts: it still knows the MsgId.
    session.end();
    assert.equal(await stopSimulator(bank), 0);
    bank = await startBank(dataDir, key.publicFile, { BANK_SFTP_PORT: String(bank.sftpPort) });
    session = await connect(bank.sftpPort, { privateKey: key.privateKey, fingerprint: bank.fingerprint });
    assert.equal(bank.fingerprint, JSON.parse(readFileSync(join(dataDir, 'channel.json'), 'utf8')).hostKey);
    await session.upload(`${msgId}.xml`, pain001(msgId, [transfer(newId('W'), '6.00')]));
    const [report] = (await nextFiles(session, seen, 1)) as [Pain002];
    assert.equal(report.originalMsgId, msgId);
    assert.equal(report.groupStatus, 'RJCT');
    assert.equal(report.groupReason, 'DU01');
  });

  test('hold: bookings wait; a transfer is rejected (AC01), another returned (AC04) before its success; release reports the rest', async () => {
    assert.deepEqual(await control(bank.controlUrl, '/control/booking', { mode: 'hold' }), {
      status: 200,
      body: { ok: true },
    });
    const msgId = newId('MSG');
    const [a, b, c] = [newId('W'), newId('W'), newId('W')];
    await session.upload(
      `${msgId}.xml`,
      pain001(msgId, [transfer(a, '1.00'), transfer(b, '2.00'), transfer(c, '3.00')]),
    );
    await waitFor(async () => {
      const { body } = await control(bank.controlUrl, '/control/transfers');
      const mine = body.transfers.filter((t: { msgId: string }) => t.msgId === msgId);
      return mine.length === 3 && mine.every((t: { status: string }) => t.status === 'booked') ? true : undefined;
    }, 'the bookings (held)');
    assert.deepEqual(await session.readdir('/download').then((names) => names.filter((n) => !seen.has(n))), []);

    assert.deepEqual(await control(bank.controlUrl, '/control/transfers/reject', { endToEndId: a, reason: 'AC01' }), {
      status: 200,
      body: { ok: true },
    });
    const [rejection] = (await nextFiles(session, seen, 1)) as [Pain002];
    assert.equal(rejection.originalMsgId, msgId);
    assert.equal(rejection.groupStatus, undefined);
    assert.deepEqual(
      rejection.transactions.map((tx) => [tx.originalEndToEndId, tx.status, tx.reason]),
      [[a, 'RJCT', 'AC01']],
    );

    assert.equal(
      (await control(bank.controlUrl, '/control/transfers/return', { endToEndId: b, reason: 'AC04' })).status,
      200,
    );
    const [returned] = (await nextFiles(session, seen, 1)) as [Camt054];
    assert.equal(returned.kind, 'camt.054');
    const entry = returned.entries[0];
    assert.deepEqual(
      [entry?.creditDebit, entry?.status, entry?.amount, entry?.bankTransactionCode],
      ['CRDT', 'BOOK', '2.00', { domain: 'PMNT', family: 'ICDT', subFamily: 'RRTN' }],
    );
    assert.equal(entry?.transactions[0]?.endToEndId, b);
    assert.equal(entry?.transactions[0]?.returnReason, 'AC04');
    assert.equal(entry?.accountServicerRef, entry?.transactions[0]?.accountServicerRef);
    const returnRef = entry?.transactions[0]?.accountServicerRef;
    assert.ok(returnRef);

    assert.equal((await control(bank.controlUrl, '/control/booking', { mode: 'release' })).status, 200);
    const [report, notification] = (await nextFiles(session, seen, 2)) as [Pain002, Camt054];
    assert.equal(report.groupStatus, 'PART', 'one of the file was rejected');
    assert.deepEqual(
      report.transactions.map((tx) => [tx.originalEndToEndId, tx.status]),
      [
        [b, 'ACSC'],
        [c, 'ACSC'],
      ],
    );
    assert.deepEqual(
      notification.entries.map((e) => [e.creditDebit, e.transactions[0]?.endToEndId]),
      [
        ['DBIT', b],
        ['DBIT', c],
      ],
    );
    const bookingRefs = notification.entries.map((e) => e.transactions[0]?.accountServicerRef);
    assert.ok(!bookingRefs.includes(returnRef), 'the return has a reference of its own');

    // Too late to reject; returned once in full; another amount may be returned (for tests).
    const late = await control(bank.controlUrl, '/control/transfers/reject', { endToEndId: c, reason: 'AC01' });
    assert.equal(late.status, 409);
    assert.match(late.body.error, /booked and reported/);
    assert.equal(
      (await control(bank.controlUrl, '/control/transfers/return', { endToEndId: b, reason: 'AC04' })).status,
      409,
    );
    assert.equal(
      (await control(bank.controlUrl, '/control/transfers/return', { endToEndId: c, reason: 'MD07', amount: '1.50' }))
        .status,
      200,
    );
    const [partial] = (await nextFiles(session, seen, 1)) as [Camt054];
    assert.equal(partial.entries[0]?.amount, '1.50');
    assert.equal(partial.entries[0]?.transactions[0]?.returnReason, 'MD07');
    const { status, body } = await control(bank.controlUrl, '/control/transfers/return', {
      endToEndId: 'NOSUCH',
      reason: 'AC04',
    });
    assert.deepEqual([status, body], [404, { error: 'no transfer with EndToEndId NOSUCH' }]);
    assert.equal(
      (await control(bank.controlUrl, '/control/transfers/return', { endToEndId: c, reason: 'bad' })).status,
      400,
    );
  });

  test('a status file sent again: the same bytes under a new name', async () => {
    const { body } = await control(bank.controlUrl, '/control/files');
    const original = body.statusFiles.find((f: { kind: string }) => f.kind === 'pain.002');
    assert.equal((await control(bank.controlUrl, '/control/files/duplicate', { name: original.name })).status, 200);
    const fresh = await waitFor(async () => {
      const names = (await session.readdir('/download')).filter((name) => !seen.has(name));
      return names.length === 1 ? names[0] : undefined;
    }, 'the copy');
    seen.add(fresh);
    assert.notEqual(fresh, original.name);
    assert.deepEqual(await session.read(`/download/${fresh}`), await session.read(`/download/${original.name}`));
    assert.equal((await control(bank.controlUrl, '/control/files/duplicate', { name: 'nothing.xml' })).status, 404);
  });

  test('the customer is jailed to its root: paths escaping it, writes outside /upload and overwriting renames are refused', async () => {
    assert.deepEqual(await session.readdir('/'), ['download', 'upload']);
    assert.deepEqual(await session.readdir('upload/..'), ['download', 'upload']);
    for (const path of ['/..', '/../..', '/upload/../../etc', '../../../../etc/passwd']) {
      await assert.rejects(session.readdir(path), (error) => sftpCode(error) === STATUS_CODE.PERMISSION_DENIED, path);
    }
    await assert.rejects(
      session.read('/../../../../etc/passwd'),
      (error) => sftpCode(error) === STATUS_CODE.PERMISSION_DENIED,
    );
    await assert.rejects(
      session.write('/download/mine.xml', 'x'),
      (error) => sftpCode(error) === STATUS_CODE.PERMISSION_DENIED,
    );
    await assert.rejects(
      session.write('/escape.txt', 'x'),
      (error) => sftpCode(error) === STATUS_CODE.PERMISSION_DENIED,
    );
    const realpath = await new Promise<string>((ok, fail) =>
      session.sftp.realpath('.', (e, path) => (e ? fail(e) : ok(path))),
    );
    assert.equal(realpath, '/');
    // A rename never replaces an existing file (as OpenSSH's sftp-server), and exclusive create refuses one.
    await session.write('/upload/one.part', '1');
    await session.write('/upload/two.part', '2');
    await assert.rejects(
      session.rename('/upload/one.part', '/upload/two.part'),
      (error) => sftpCode(error) === STATUS_CODE.FAILURE,
    );
    await assert.rejects(
      session.write('/upload/two.part', '3', 'wx'),
      (error) => sftpCode(error) === STATUS_CODE.FAILURE,
    );
    assert.equal((await session.read('/upload/two.part')).toString(), '2');
    await new Promise<void>((ok, fail) => session.sftp.mkdir('/upload/sub', (e) => (e ? fail(e) : ok())));
    await session.rename('/upload/one.part', '/upload/sub/one.part');
    for (const path of ['/upload/sub/one.part', '/upload/two.part', '/upload/in-progress.tmp']) {
      await new Promise<void>((ok, fail) => session.sftp.unlink(path, (e) => (e ? fail(e) : ok())));
    }
    await new Promise<void>((ok, fail) => session.sftp.rmdir('/upload/sub', (e) => (e ? fail(e) : ok())));
    assert.deepEqual(await session.readdir('/upload'), []);
  });

  test('only the authorized key of the configured user gets in', async () => {
    const other = clientKey(temp.dir, 'other');
    await assert.rejects(
      connect(bank.sftpPort, { privateKey: other.privateKey, fingerprint: bank.fingerprint }),
      /All configured authentication methods failed/,
    );
    await assert.rejects(
      connect(bank.sftpPort, { privateKey: key.privateKey, fingerprint: bank.fingerprint, username: 'root' }),
      /All configured authentication methods failed/,
    );
    // The session is SFTP only: no command, no shell.
    await assert.rejects(
      new Promise((ok, fail) => session.client.exec('id', (e, stream) => (e ? fail(e) : ok(stream)))),
      /Unable to exec/,
    );
    await assert.rejects(
      new Promise((ok, fail) => session.client.shell((e, stream) => (e ? fail(e) : ok(stream)))),
      /Unable to (request a pseudo-terminal|start shell)/,
    );
    // A client pinning another host key refuses the bank before it authenticates.
    await assert.rejects(
      connect(bank.sftpPort, { privateKey: key.privateKey, fingerprint: `SHA256:${'A'.repeat(43)}` }),
      /host/i,
    );
  });

  test('kill -9 with bookings held: after a restart they are still held, and release reports them', async () => {
    assert.equal((await control(bank.controlUrl, '/control/booking', { mode: 'hold' })).status, 200);
    const msgId = newId('MSG');
    const a = newId('W');
    await session.upload(`${msgId}.xml`, pain001(msgId, [transfer(a, '4.20')]));
    await waitFor(async () => {
      const { body } = await control(bank.controlUrl, '/control/transfers');
      return body.transfers.some(
        (t: { endToEndId: string; status: string }) => t.endToEndId === a && t.status === 'booked',
      )
        ? true
        : undefined;
    }, 'the booking (held)');
    session.end();
    assert.equal(await stopSimulator(bank, 'SIGKILL'), null);
    bank = await startBank(dataDir, key.publicFile);
    session = await connect(bank.sftpPort, { privateKey: key.privateKey, fingerprint: bank.fingerprint });
    const { body } = await control(bank.controlUrl, '/control/transfers');
    assert.equal(body.mode, 'hold');
    const held = body.transfers.find((t: { endToEndId: string }) => t.endToEndId === a);
    assert.deepEqual([held.status, held.reported], ['booked', false]);
    assert.equal((await control(bank.controlUrl, '/control/booking', { mode: 'release' })).status, 200);
    const [report, notification] = (await nextFiles(session, seen, 2)) as [Pain002, Camt054];
    assert.deepEqual([report.originalMsgId, report.groupStatus], [msgId, 'ACSC']);
    assert.deepEqual(
      notification.entries.map((e) => [e.creditDebit, e.amount, e.transactions[0]?.accountServicerRef]),
      [['DBIT', '4.20', held.accountServicerRef]],
    );
  });

  test('a second bank on the same data directory, and a bank without its authorized key, stop at once with one line', () => {
    const env = { ...process.env, NODE_OPTIONS: '', BANK_DATA_DIR: dataDir, BANK_SFTP_PORT: '0', BANK_PORT: '0' };
    const second = spawnSync(process.execPath, [BIN], {
      env: { ...env, BANK_AUTHORIZED_KEY: key.publicFile },
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(second.status, 1);
    assert.deepEqual(second.stderr.trim().split('\n'), [
      `paygate-bank: the data directory ${dataDir} is in use by paygate-bank (pid ${bank.child.pid}); stop it first, or use another directory`,
    ]);
    const keyless = spawnSync(process.execPath, [BIN], {
      env: { ...env, BANK_DATA_DIR: join(temp.dir, 'other') },
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(keyless.status, 1);
    assert.equal(keyless.stderr.trim().split('\n').length, 1);
    assert.match(keyless.stderr, /^paygate-bank: BANK_AUTHORIZED_KEY is required/);
  });
});
