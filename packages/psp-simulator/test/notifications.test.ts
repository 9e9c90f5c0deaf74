import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { delay, orderNo, startReceiver, startSimulator, waitFor, type Started } from './helpers.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

describe('notifications', () => {
  let psp: Started;
  let receiver: Receiver;
  const statuses: number[] = [];

  beforeEach(async () => {
    statuses.length = 0;
    receiver = await startReceiver(statuses);
    psp = await startSimulator();
  });
  afterEach(async () => {
    await psp.stop();
    await receiver.close();
  });

  const newCharge = async () => {
    const reference = orderNo('P');
    const answer = await psp.call('POST', '/v1/charges', {
      reference,
      amount: '10.00',
      currency: 'BRL',
      method: 'PIX',
      notifyUrl: receiver.url,
    });
    assert.equal(answer.status, 201);
    return { reference, id: answer.body.id as string };
  };
  const pay = (reference: string) => psp.control('/control/payments/complete', { reference, status: 'SUCCEEDED' });

  test('normal: one signed notification carrying the charge as GET answers it', async () => {
    const { reference, id } = await newCharge();
    await pay(reference);
    await waitFor(() => receiver.received.length === 1, 'the notification');
    const [note] = receiver.received;
    assert.ok(note?.verified);
    assert.equal(note.path, '/channels/psp/notifications');
    assert.match(note.body.id, /^evt_[0-9a-f]{24}$/);
    assert.equal(note.body.type, 'charge.updated');
    assert.deepEqual(note.body.object, (await psp.call('GET', `/v1/charges/${id}`)).body);
    await delay(100);
    assert.equal(receiver.attempts.length, 1, 'sent once');
    assert.equal(psp.simulator.store.outbox.size, 0);
  });

  test('drop: never sent, while GET still answers truthfully (returns included)', async () => {
    assert.deepEqual((await psp.control('/control/notifications', { mode: 'drop' })).body, { ok: true });
    const { reference, id } = await newCharge();
    await pay(reference);
    const w = orderNo('W');
    const transfer = await psp.call('POST', '/v1/transfers', {
      reference: w,
      amount: '5.00',
      currency: 'BRL',
      payee: { name: 'Ana', accountNumber: '1' },
      notifyUrl: receiver.url,
    });
    await psp.control('/control/payouts/complete', { reference: w, status: 'SUCCEEDED' });
    await psp.control('/control/payouts/return', { reference: w });
    await delay(150);
    assert.equal(receiver.attempts.length, 0);
    assert.equal((await psp.call('GET', `/v1/charges/${id}`)).body.status, 'paid');
    const returned = (await psp.call('GET', `/v1/transfers/${transfer.body.id}`)).body;
    assert.equal(returned.status, 'returned');
    assert.match(returned.returnId, /^rt_/);
    // Dropped means never: changing the mode later does not send them.
    await psp.control('/control/notifications', { mode: 'normal' });
    await delay(100);
    assert.equal(receiver.attempts.length, 0);
  });

  test('duplicate: the same notification (same id, same bytes) twice, each freshly signed', async () => {
    await psp.control('/control/notifications', { mode: 'duplicate' });
    const { reference } = await newCharge();
    await pay(reference);
    await waitFor(() => receiver.received.length === 2, 'two deliveries');
    const [a, b] = receiver.received;
    assert.equal(a?.raw, b?.raw);
    assert.ok(a?.verified && b?.verified, 'the second is not refused as a replay: a new nonce');
    await delay(100);
    assert.equal(receiver.attempts.length, 2);
  });

  test('reverse: held, then released newest first when the mode changes', async () => {
    await psp.control('/control/notifications', { mode: 'reverse' });
    const w = orderNo('W');
    await psp.call('POST', '/v1/transfers', {
      reference: w,
      amount: '5.00',
      currency: 'BRL',
      payee: { name: 'Ana', accountNumber: '1' },
      notifyUrl: receiver.url,
    });
    await psp.control('/control/payouts/complete', { reference: w, status: 'SUCCEEDED' });
    await psp.control('/control/payouts/return', { reference: w });
    const { reference } = await newCharge();
    await pay(reference);
    await delay(150);
    assert.equal(receiver.attempts.length, 0, 'held while reverse');
    await psp.control('/control/notifications', { mode: 'normal' });
    await waitFor(() => receiver.received.length === 3, 'the released notifications');
    assert.deepEqual(
      receiver.received.map((r) => `${r.body.type}:${r.body.object.status}`),
      ['charge.updated:paid', 'transfer.updated:returned', 'transfer.updated:sent'],
    );
  });

  test('a failed delivery is retried with backoff until acknowledged (500, 500, then 200)', async () => {
    statuses.push(500, 500);
    const { reference } = await newCharge();
    await pay(reference);
    await waitFor(() => receiver.received.length === 1, 'the acknowledged delivery');
    assert.equal(receiver.attempts.length, 3);
    assert.equal(new Set(receiver.attempts.map((a) => a.raw)).size, 1, 'the same bytes every attempt');
    // The receiver has answered; the simulator removes the notification once it reads that answer.
    await waitFor(() => psp.simulator.store.outbox.size === 0, 'the acknowledged notification leaving the outbox');
    await delay(150);
    assert.equal(receiver.attempts.length, 3, 'nothing after the acknowledgement');
  });

  test('an unreachable receiver keeps the notification in the outbox with its attempts', async () => {
    const { reference, id } = await newCharge();
    // Point this charge at a closed port: every attempt fails at the network.
    const charge = psp.simulator.store.charges.get(id);
    assert.ok(charge);
    psp.simulator.store.commit([{ t: 'charge', v: { ...charge, notifyUrl: 'http://127.0.0.1:9/n' } }]);
    await pay(reference);
    await waitFor(
      () => [...psp.simulator.store.outbox.values()].some((entry) => entry.attempts >= 2),
      'two failed attempts',
    );
    const [entry] = psp.simulator.store.outbox.values();
    assert.match(entry?.lastError ?? '', /Error/);
  });
});
