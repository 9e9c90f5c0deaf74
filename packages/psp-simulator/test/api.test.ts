import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { orderNo, startReceiver, startSimulator, waitFor, type Started } from './helpers.js';

const NOTIFY = 'http://127.0.0.1:9/channels/psp/notifications';
const charge = (reference: string, method = 'PIX', amount = '10.50') => ({
  reference,
  amount,
  currency: method === 'SEPA' ? 'EUR' : method === 'SPEI' ? 'MXN' : 'BRL',
  method,
  notifyUrl: NOTIFY,
});
const transfer = (reference: string, amount = '25.00') => ({
  reference,
  amount,
  currency: 'BRL',
  payee: { name: 'Ana Souza', accountNumber: '12345-6', bankCode: '001', documentNumber: '12345678909' },
  notifyUrl: NOTIFY,
});

/** CRC-16/CCITT-FALSE, computed independently of the simulator to check its Pix codes. */
function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(text)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

describe('simulator API', () => {
  let psp: Started;
  before(async () => {
    psp = await startSimulator();
  });
  after(() => psp.stop());

  test('GET /healthz answers without authentication', async () => {
    const response = await fetch(`${psp.url}/healthz`);
    assert.deepEqual(await response.json(), { ok: true });
  });

  test('POST /v1/charges: 201 open charge with payer instructions by method', async () => {
    const reference = orderNo('P');
    const pix = await psp.call('POST', '/v1/charges', charge(reference));
    assert.equal(pix.status, 201);
    assert.match(pix.body.id, /^ch_[0-9a-f]{24}$/);
    assert.equal(pix.body.reference, reference);
    assert.equal(pix.body.status, 'open');
    assert.equal(pix.body.amount, '10.50');
    assert.equal(pix.body.payUrl, `${psp.url}/pay/${pix.body.id}`);
    const code: string = pix.body.pixCode;
    assert.match(code, /^000201.*br\.gov\.bcb\.pix.*5303986540510\.50.*6304[0-9A-F]{4}$/);
    assert.equal(code.slice(-4), crc16(code.slice(0, -4)), 'the Pix code carries a valid CRC');

    const boleto = await psp.call('POST', '/v1/charges', charge(orderNo('P'), 'BOLETO', '123.45'));
    assert.equal(boleto.status, 201);
    assert.equal((boleto.body.boletoLine as string).replace(/[^0-9]/g, '').length, 47);
    assert.match(boleto.body.boletoLine, /0000012345$/);

    const spei = await psp.call('POST', '/v1/charges', charge(orderNo('P'), 'SPEI'));
    assert.match(spei.body.bankDetails.account, /^[0-9]{18}$/);
    const sepa = await psp.call('POST', '/v1/charges', charge(orderNo('P'), 'SEPA'));
    assert.match(sepa.body.bankDetails.account, /^DE[0-9]{20}$/);
    assert.equal(sepa.body.bankDetails.reference, sepa.body.id);
    const card = await psp.call('POST', '/v1/charges', charge(orderNo('P'), 'CARD'));
    assert.equal(card.body.pixCode, undefined);
    assert.equal(card.body.bankDetails, undefined);
  });

  test('POST /v1/charges is idempotent on reference; other terms are a 409', async () => {
    const reference = orderNo('P');
    const first = await psp.call('POST', '/v1/charges', charge(reference));
    const second = await psp.call('POST', '/v1/charges', charge(reference));
    assert.equal(first.status, 201);
    assert.equal(second.status, 200);
    assert.deepEqual(second.body, first.body);
    const conflict = await psp.call('POST', '/v1/charges', charge(reference, 'PIX', '11.00'));
    assert.equal(conflict.status, 409);
    assert.match(conflict.body.error, /other terms/);
  });

  test('POST /v1/charges validates its body (400 with a reason)', async () => {
    for (const [body, reason] of [
      [{ ...charge(orderNo('P')), amount: '10,00' }, /^amount: /],
      [{ ...charge(orderNo('P')), amount: '0.00' }, /^amount: /],
      [{ ...charge(orderNo('P')), method: 'WIRE' }, /^method: /],
      [{ ...charge(orderNo('P')), notifyUrl: 'ftp://x' }, /^notifyUrl: /],
      [{ ...charge(orderNo('P')), extra: 1 }, /extra/],
    ] as const) {
      const answer = await psp.call('POST', '/v1/charges', body);
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.match(answer.body.error, reason);
    }
  });

  test('GET /v1/charges/{id} and ?reference= answer the charge; unknown is 404', async () => {
    const reference = orderNo('P');
    const created = await psp.call('POST', '/v1/charges', charge(reference));
    assert.deepEqual((await psp.call('GET', `/v1/charges/${created.body.id}`)).body, created.body);
    assert.deepEqual((await psp.call('GET', `/v1/charges?reference=${reference}`)).body, created.body);
    assert.equal((await psp.call('GET', '/v1/charges/ch_000000000000000000000000')).status, 404);
    assert.equal((await psp.call('GET', '/v1/charges?reference=P999')).status, 404);
  });

  test('control payments/complete: paid with payer and paidAmount; FAILED declines; not open is 409', async () => {
    const reference = orderNo('P');
    await psp.call('POST', '/v1/charges', charge(reference));
    const done = await psp.control('/control/payments/complete', {
      reference,
      status: 'SUCCEEDED',
      payer: { name: 'Ana Souza', documentNumber: '12345678909' },
      paidAmount: '10.40',
    });
    assert.deepEqual(done.body, { ok: true });
    const paid = (await psp.call('GET', `/v1/charges?reference=${reference}`)).body;
    assert.equal(paid.status, 'paid');
    assert.equal(paid.paidAmount, '10.40');
    assert.deepEqual(paid.payer, { name: 'Ana Souza', documentNumber: '12345678909' });
    const again = await psp.control('/control/payments/complete', { reference, status: 'FAILED' });
    assert.equal(again.status, 409);
    assert.match(again.body.error, /is paid, not open/);

    const other = orderNo('P');
    await psp.call('POST', '/v1/charges', charge(other));
    assert.deepEqual((await psp.control('/control/payments/complete', { reference: other, status: 'FAILED' })).body, {
      ok: true,
    });
    assert.equal((await psp.call('GET', `/v1/charges?reference=${other}`)).body.status, 'declined');
    const unknown = await psp.control('/control/payments/complete', { reference: 'P404', status: 'SUCCEEDED' });
    assert.equal(unknown.status, 404);
    assert.equal((await psp.control('/control/payments/complete', { reference: other, status: 'PAID' })).status, 400);
  });

  test('charges: cancel while open (idempotent, then nothing can be paid), 409 once paid', async () => {
    const reference = orderNo('P');
    const created = await psp.call('POST', '/v1/charges', charge(reference));
    const canceled = await psp.call('POST', `/v1/charges/${created.body.id}/cancel`);
    assert.equal(canceled.status, 200);
    assert.equal(canceled.body.status, 'canceled');
    const again = await psp.call('POST', `/v1/charges/${created.body.id}/cancel`);
    assert.deepEqual(again.body, canceled.body, 'a retried cancel answers the same charge');
    const paid = await psp.control('/control/payments/complete', { reference, status: 'SUCCEEDED' });
    assert.equal(paid.status, 409);
    const page = await fetch(`${psp.url}/pay/${created.body.id}`);
    assert.match(await page.text(), /canceled by the merchant/);

    const other = orderNo('P');
    const second = await psp.call('POST', '/v1/charges', charge(other));
    await psp.control('/control/payments/complete', { reference: other, status: 'SUCCEEDED' });
    const late = await psp.call('POST', `/v1/charges/${second.body.id}/cancel`);
    assert.equal(late.status, 409);
    assert.match(late.body.error, /is paid, not open/);
    assert.equal((await psp.call('POST', '/v1/charges/ch_000000000000000000000000/cancel')).status, 404);
    assert.equal(
      (await psp.call('POST', `/v1/charges/${second.body.id}/cancel`, undefined, 'wrong-secret')).status,
      401,
    );
  });

  test('transfers: create (idempotent), get, by reference, cancel while queued only', async () => {
    const reference = orderNo('W');
    const created = await psp.call('POST', '/v1/transfers', transfer(reference));
    assert.equal(created.status, 201);
    assert.match(created.body.id, /^tr_[0-9a-f]{24}$/);
    assert.equal(created.body.status, 'queued');
    assert.equal((await psp.call('POST', '/v1/transfers', transfer(reference))).status, 200);
    assert.equal((await psp.call('POST', '/v1/transfers', transfer(reference, '26.00'))).status, 409);
    assert.deepEqual((await psp.call('GET', `/v1/transfers/${created.body.id}`)).body, created.body);
    assert.deepEqual((await psp.call('GET', `/v1/transfers?reference=${reference}`)).body, created.body);
    assert.equal((await psp.call('GET', '/v1/transfers?reference=W404')).status, 404);
    assert.equal(
      (await psp.call('POST', '/v1/transfers', { ...transfer(orderNo('W')), payee: { name: 'x' } })).status,
      400,
    );
    // A Pix key (an e-mail address, say) is an account number too: up to 140 characters, as the platform allows.
    const pixKey = `${'a'.repeat(128)}@example.com`;
    const long = await psp.call('POST', '/v1/transfers', {
      ...transfer(orderNo('W')),
      payee: { name: 'Ana', accountNumber: pixKey },
    });
    assert.equal(long.status, 201);
    assert.equal(long.body.payee.accountNumber, pixKey);

    const canceled = await psp.call('POST', `/v1/transfers/${created.body.id}/cancel`);
    assert.equal(canceled.status, 200);
    assert.equal(canceled.body.status, 'canceled');
    assert.equal((await psp.call('POST', `/v1/transfers/${created.body.id}/cancel`)).status, 409);
    assert.equal((await psp.control('/control/payouts/complete', { reference, status: 'SUCCEEDED' })).status, 409);
  });

  test('control payouts/complete and payouts/return', async () => {
    const reference = orderNo('W');
    const created = await psp.call('POST', '/v1/transfers', transfer(reference));
    assert.equal(
      (await psp.control('/control/payouts/return', { reference })).status,
      409,
      'a queued transfer cannot return',
    );
    assert.deepEqual((await psp.control('/control/payouts/complete', { reference, status: 'SUCCEEDED' })).body, {
      ok: true,
    });
    assert.equal((await psp.call('GET', `/v1/transfers/${created.body.id}`)).body.status, 'sent');
    assert.equal((await psp.call('POST', `/v1/transfers/${created.body.id}/cancel`)).status, 409);
    const before = Date.now();
    assert.deepEqual((await psp.control('/control/payouts/return', { reference })).body, { ok: true });
    const returned = (await psp.call('GET', `/v1/transfers?reference=${reference}`)).body;
    assert.equal(returned.status, 'returned');
    assert.match(returned.returnId, /^rt_[0-9a-f]{24}$/);
    assert.ok(returned.returnedAt >= before && returned.returnedAt <= Date.now());
    assert.equal((await psp.control('/control/payouts/return', { reference })).status, 409, 'returned once');

    const rejected = orderNo('W');
    await psp.call('POST', '/v1/transfers', transfer(rejected));
    await psp.control('/control/payouts/complete', { reference: rejected, status: 'FAILED' });
    assert.equal((await psp.call('GET', `/v1/transfers?reference=${rejected}`)).body.status, 'rejected');
    assert.equal((await psp.control('/control/payouts/complete', { reference: 'W404', status: 'FAILED' })).status, 404);
  });

  test('control notifications validates the mode', async () => {
    assert.equal((await psp.control('/control/notifications', { mode: 'sometimes' })).status, 400);
    assert.deepEqual((await psp.control('/control/notifications', { mode: 'normal' })).body, { ok: true });
  });

  test('unknown routes are 404', async () => {
    assert.equal((await psp.call('GET', '/v1/nothing')).status, 404);
    assert.equal((await psp.control('/control/nothing', {})).status, 404);
  });
});

describe('settlement file', () => {
  test('one line per final state reached that day, served and written under the data dir', async () => {
    const psp = await startSimulator({ feeBps: 100 });
    try {
      const paid = orderNo('P');
      const declined = orderNo('P');
      const open = orderNo('P');
      const sent = orderNo('W');
      const c1 = await psp.call('POST', '/v1/charges', charge(paid, 'PIX', '200.00'));
      const c2 = await psp.call('POST', '/v1/charges', charge(declined));
      await psp.call('POST', '/v1/charges', charge(open));
      const t1 = await psp.call('POST', '/v1/transfers', transfer(sent, '50.00'));
      await psp.control('/control/payments/complete', { reference: paid, status: 'SUCCEEDED', paidAmount: '199.99' });
      await psp.control('/control/payments/complete', { reference: declined, status: 'FAILED' });
      await psp.control('/control/payouts/complete', { reference: sent, status: 'SUCCEEDED' });
      await psp.control('/control/payouts/return', { reference: sent });
      const t = (await psp.call('GET', `/v1/transfers/${t1.body.id}`)).body;

      const date = new Date().toISOString().slice(0, 10);
      const answer = await psp.call('GET', `/v1/settlements/${date}.csv`);
      assert.equal(answer.status, 200);
      const lines = answer.text.trimEnd().split('\n');
      assert.equal(lines[0], 'type,id,reference,status,currency,amount,paid_amount,fee,updated_at');
      const rows = lines.slice(1).map((line) => line.split(','));
      assert.deepEqual(
        rows.map((row) => row.slice(0, 8)),
        [
          ['charge', c1.body.id, paid, 'paid', 'BRL', '200.00', '199.99', '2.00'],
          ['charge', c2.body.id, declined, 'declined', 'BRL', '10.50', '', '0.00'],
          ['transfer', t1.body.id, sent, 'sent', 'BRL', '50.00', '', '0.50'],
          ['return', t.returnId, sent, 'returned', 'BRL', '50.00', '', '0.00'],
        ],
      );
      assert.equal(rows[3]?.[8], new Date(t.returnedAt).toISOString());
      assert.equal(readFileSync(join(psp.config.dataDir, 'settlements', `${date}.csv`), 'utf8'), answer.text);
      const empty = await psp.call('GET', '/v1/settlements/2001-01-01.csv');
      assert.equal(empty.text, 'type,id,reference,status,currency,amount,paid_amount,fee,updated_at\n');
      assert.equal((await psp.call('GET', '/v1/settlements/2001-13-45.csv')).status, 400);
    } finally {
      await psp.stop();
    }
  });
});

describe('auto-complete', () => {
  test('PSP_AUTO_COMPLETE sends queued transfers after the delay, with a notification', async () => {
    const receiver = await startReceiver();
    const psp = await startSimulator({ autoCompleteMs: 50 });
    try {
      const reference = orderNo('W');
      await psp.call('POST', '/v1/transfers', { ...transfer(reference), notifyUrl: receiver.url });
      await waitFor(() => receiver.received.length === 1, 'the transfer notification');
      assert.equal(receiver.received[0]?.body.type, 'transfer.updated');
      assert.equal(receiver.received[0]?.body.object.status, 'sent');
      assert.equal((await psp.call('GET', `/v1/transfers?reference=${reference}`)).body.status, 'sent');
    } finally {
      await psp.stop();
      await receiver.close();
    }
  });
});
