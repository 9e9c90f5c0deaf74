import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { orderNo, startReceiver, startSimulator, waitFor, type Started } from './helpers.js';

describe('hosted payer page', () => {
  let psp: Started;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    receiver = await startReceiver();
    psp = await startSimulator();
  });
  after(async () => {
    await psp.stop();
    await receiver.close();
  });

  const newCharge = async (method = 'PIX') => {
    const reference = orderNo('P');
    const answer = await psp.call('POST', '/v1/charges', {
      reference,
      amount: '42.00',
      currency: 'BRL',
      method,
      notifyUrl: receiver.url,
    });
    return {
      reference,
      id: answer.body.id as string,
      payUrl: answer.body.payUrl as string,
      pixCode: answer.body.pixCode as string,
    };
  };

  test('GET /pay/{id}: the charge, Pay and Decline, a strict CSP and nothing external', async () => {
    const { reference, payUrl, pixCode } = await newCharge();
    const response = await fetch(payUrl);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
    const csp = response.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, /form-action 'self'/);
    const html = await response.text();
    assert.ok(html.includes(reference));
    assert.ok(html.includes('42.00 BRL'));
    assert.ok(html.includes(pixCode));
    assert.match(html, /<button class="pay"[^>]*>Pay<\/button>/);
    assert.match(html, /formaction="\/pay\/ch_[0-9a-f]{24}\/decline">Decline</);
    assert.doesNotMatch(html, /(src|href)=["']?(https?:)?\/\//, 'no external requests');
    assert.doesNotMatch(html, /<script/);
  });

  test('Pay: 303 back to the page, the charge paid with the payer, a notification sent', async () => {
    const { id, payUrl } = await newCharge();
    const response = await fetch(`${payUrl}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=Ana+Souza&documentNumber=12345678909',
      redirect: 'manual',
    });
    assert.equal(response.status, 303);
    assert.equal(response.headers.get('location'), `/pay/${id}`);
    const charge = (await psp.call('GET', `/v1/charges/${id}`)).body;
    assert.equal(charge.status, 'paid');
    assert.equal(charge.paidAmount, '42.00');
    assert.deepEqual(charge.payer, { name: 'Ana Souza', documentNumber: '12345678909' });
    await waitFor(() => receiver.received.some((r) => r.body.object.id === id), 'the notification');
    const note = receiver.received.find((r) => r.body.object.id === id);
    assert.equal(note?.body.object.status, 'paid');
    const page = await (await fetch(payUrl)).text();
    assert.match(page, /Paid\. You can close this page\./);
    assert.doesNotMatch(page, /<form/);
  });

  test('Decline: the charge declined; a second action changes nothing', async () => {
    const { id, payUrl } = await newCharge('BOLETO');
    await fetch(`${payUrl}/decline`, { method: 'POST', body: '', redirect: 'manual' });
    assert.equal((await psp.call('GET', `/v1/charges/${id}`)).body.status, 'declined');
    const again = await fetch(`${payUrl}/pay`, { method: 'POST', body: '', redirect: 'manual' });
    assert.equal(again.status, 303);
    assert.equal((await psp.call('GET', `/v1/charges/${id}`)).body.status, 'declined');
  });

  test('with a returnUrl: Pay sends the payer back to the shop, whose origin the CSP allows; the page links back', async () => {
    const returnUrl = 'https://shop.example/thanks?cart=7&orderNo=P000000000000000042';
    const reference = orderNo('P');
    const created = await psp.call('POST', '/v1/charges', {
      reference,
      amount: '42.00',
      currency: 'BRL',
      method: 'PIX',
      notifyUrl: receiver.url,
      returnUrl,
    });
    assert.equal(created.status, 201);
    const payUrl = created.body.payUrl as string;
    const open = await fetch(payUrl);
    assert.match(open.headers.get('content-security-policy') ?? '', /form-action 'self' https:\/\/shop\.example;/);
    assert.doesNotMatch(await open.text(), /Back to the shop/, 'no way back while the charge is open');
    const paid = await fetch(`${payUrl}/pay`, { method: 'POST', body: '', redirect: 'manual' });
    assert.equal(paid.status, 303);
    assert.equal(paid.headers.get('location'), returnUrl, 'the URL exactly as the platform gave it');
    const page = await (await fetch(payUrl)).text();
    assert.ok(page.includes('href="https://shop.example/thanks?cart=7&amp;orderNo=P000000000000000042"'));
    const refused = await psp.call('POST', '/v1/charges', {
      reference: orderNo('P'),
      amount: '1.00',
      currency: 'BRL',
      method: 'PIX',
      notifyUrl: receiver.url,
      returnUrl: 'javascript:alert(1)',
    });
    assert.equal(refused.status, 400);
  });

  test('an unknown charge is a 404 page', async () => {
    const response = await fetch(`${psp.url}/pay/ch_000000000000000000000000`);
    assert.equal(response.status, 404);
    assert.match(response.headers.get('content-security-policy') ?? '', /default-src 'none'/);
  });
});
