import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { Cob, WebhookCallbackBody } from '@paygate/pix';
import { cobBody, newTxid, startReceiver, startSimulator, waitFor, type Started } from './helpers.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

describe('callbacks: POST {webhookUrl}/pix', () => {
  let pix: Started;
  let receiver: Receiver;
  let token: string;
  const statuses: number[] = [];

  beforeEach(async () => {
    statuses.length = 0;
    pix = await startSimulator();
    token = await pix.client.accessToken();
  });
  afterEach(async () => {
    await receiver.close();
    await pix.stop();
  });

  const register = async (url: string) => {
    const answer = await pix.client.call('PUT', `/webhook/${encodeURIComponent(pix.pixKey)}`, token, {
      webhookUrl: url,
    });
    assert.equal(answer.status, 200, answer.text);
  };
  const paidCharge = async (payer?: object) => {
    const txid = newTxid();
    assert.equal((await pix.client.call('PUT', `/cob/${txid}`, token, cobBody(pix.pixKey, '42.00'))).status, 201);
    assert.equal((await pix.control('/control/pay', { txid, ...(payer ? { payer } : {}) })).status, 200);
    return txid;
  };

  test('normal: one callback with the Pix and its pagador, as GET /cob then reports it', async () => {
    receiver = await startReceiver(statuses);
    await register(receiver.url);
    const txid = await paidCharge({ name: 'Maria', cpf: '01234567890' });
    await waitFor(() => receiver.received.length === 1, 'the callback');
    const [callback] = receiver.received;
    assert.equal(callback?.path, '/channels/pix/notifications/pix');
    const body = WebhookCallbackBody.parse(JSON.parse(callback?.raw ?? ''));
    assert.equal(body.pix.length, 1);
    const cob = Cob.parse((await pix.client.call('GET', `/cob/${txid}`, token)).body);
    assert.deepEqual(body.pix, cob.pix);
    assert.deepEqual(body.pix[0]?.pagador, { nome: 'Maria', cpf: '01234567890' });
    await pix.simulator.step();
    assert.equal(receiver.attempts.length, 1, 'sent once');
    assert.equal(pix.simulator.store.outbox.size, 0);
  });

  test('https: the callback presents the simulator client certificate to a receiver that requires one', async () => {
    const files = pix.simulator.tls;
    receiver = await startReceiver(statuses, {
      cert: readFileSync(files.serverCert, 'utf8'),
      key: readFileSync(files.serverKey, 'utf8'),
      ca: readFileSync(files.caCert, 'utf8'),
    });
    await register(receiver.url);
    await paidCharge();
    await waitFor(() => receiver.received.length === 1, 'the https callback');
    assert.equal(receiver.received[0]?.peer, 'paygate-pix callbacks');
  });

  test('a refused callback is retried until acknowledged, with the same body', async () => {
    statuses.push(500, 503);
    receiver = await startReceiver(statuses);
    await register(receiver.url);
    await paidCharge();
    await waitFor(() => receiver.received.length === 1, 'the callback after two refusals');
    assert.equal(receiver.attempts.length, 3);
    assert.equal(new Set(receiver.attempts.map((a) => a.raw)).size, 1);
  });

  test('drop: no callback, while GET /cob still tells the truth', async () => {
    receiver = await startReceiver(statuses);
    await register(receiver.url);
    assert.deepEqual((await pix.control('/control/notifications', { mode: 'drop' })).body, { ok: true });
    const txid = await paidCharge();
    await pix.simulator.step();
    assert.equal(pix.simulator.store.outbox.size, 0);
    assert.equal(receiver.attempts.length, 0);
    assert.equal(Cob.parse((await pix.client.call('GET', `/cob/${txid}`, token)).body).status, 'CONCLUIDA');
  });

  test('duplicate: the same callback twice', async () => {
    receiver = await startReceiver(statuses);
    await register(receiver.url);
    await pix.control('/control/notifications', { mode: 'duplicate' });
    await paidCharge();
    await waitFor(() => receiver.received.length === 2, 'both copies');
    assert.equal(receiver.received[0]?.raw, receiver.received[1]?.raw);
    await pix.control('/control/notifications', { mode: 'normal' });
    await paidCharge();
    await waitFor(() => receiver.received.length === 3, 'one copy in normal mode');
  });

  test('no webhook registered: nothing is sent; a bad mode is refused', async () => {
    receiver = await startReceiver(statuses);
    await paidCharge();
    assert.equal(pix.simulator.store.outbox.size, 0);
    assert.equal((await pix.control('/control/notifications', { mode: 'reverse' })).status, 400);
  });
});
