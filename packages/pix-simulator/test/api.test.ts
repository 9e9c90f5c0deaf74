import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Cob, parseBrCode, PixList, Problem, TokenAnswer, Webhook } from '@paygate/pix';
import { ensureCertificates } from '../src/certs.js';
import {
  clientTls,
  cobBody,
  httpsCall,
  newTxid,
  pixClient,
  startSimulator,
  tempDir,
  testClock,
  type Answer,
  type Started,
} from './helpers.js';

/** A problem+json answer of the API Pix with this status and error type. */
function assertProblem(answer: Answer, status: number, kind: string): void {
  assert.equal(answer.status, status, answer.text);
  assert.match(String(answer.headers['content-type']), /^application\/problem\+json/);
  const problem = Problem.parse(answer.body);
  assert.equal(problem.type, `https://pix.bcb.gov.br/api/v2/error/${kind}`);
  assert.equal(problem.status, status);
}

describe('the API Pix over mTLS', () => {
  let pix: Started;
  const clock = testClock();
  let token: string;

  before(async () => {
    pix = await startSimulator({ tokenTtlS: 600 }, { clock: clock.now });
    token = await pix.client.accessToken();
  });
  after(() => pix.stop());

  describe('client certificates', () => {
    test('a connection without a client certificate is refused during the handshake', async () => {
      const { cert: _c, key: _k, ...noCert } = pix.tls;
      await assert.rejects(httpsCall(pix.simulator.url, noCert, 'POST', '/oauth/token', { body: '' }));
    });

    test('a client certificate from another CA is refused', async () => {
      const other = tempDir();
      try {
        const foreign = clientTls(await ensureCertificates(other.dir));
        await assert.rejects(
          httpsCall(pix.simulator.url, { ...foreign, ca: pix.tls.ca }, 'POST', '/oauth/token', { body: '' }),
        );
      } finally {
        other.remove();
      }
    });

    test('the server certificate is trusted through the simulator CA alone (127.0.0.1)', async () => {
      const answer = await pix.client.token();
      assert.equal(answer.status, 200);
    });
  });

  describe('OAuth 2.0 client credentials', () => {
    test('answers an expiring Bearer token with the scopes asked for', async () => {
      const answer = await pix.client.token('grant_type=client_credentials&scope=cob.read%20pix.read');
      assert.equal(answer.status, 200);
      assert.equal(answer.headers['cache-control'], 'no-store');
      const parsed = TokenAnswer.parse(answer.body);
      assert.equal(parsed.expires_in, 600);
      assert.equal(parsed.scope, 'cob.read pix.read');
    });

    test('refuses a wrong client, a wrong grant, an unknown scope (RFC 6749 §5.2)', async () => {
      const wrong = await pix.client.token(
        'grant_type=client_credentials',
        `Basic ${Buffer.from(`${pix.simulator.credentials.clientId}:nope`).toString('base64')}`,
      );
      assert.equal(wrong.status, 401);
      assert.equal(wrong.body.error, 'invalid_client');
      assert.match(String(wrong.headers['www-authenticate']), /^Basic/);
      assert.equal((await pix.client.token('grant_type=client_credentials', '')).status, 401);
      const malformed = `Basic ${Buffer.from('%zz:%E0%A4%A').toString('base64')}`;
      assert.equal((await pix.client.token('grant_type=client_credentials', malformed)).body.error, 'invalid_client');
      const grant = await pix.client.token('grant_type=password');
      assert.equal(grant.status, 400);
      assert.equal(grant.body.error, 'unsupported_grant_type');
      const scope = await pix.client.token('grant_type=client_credentials&scope=cob.read%20admin');
      assert.equal(scope.body.error, 'invalid_scope');
      assert.equal((await pix.client.token('')).body.error, 'invalid_request');
    });

    test('an API call without a token, or with a forged one, is 401 invalid_token', async () => {
      const none = await pix.client.call('GET', `/cob/${newTxid()}`, undefined);
      assertProblem(none, 401, 'AcessoNegado');
      assert.equal(none.headers['www-authenticate'], 'Bearer error="invalid_token"');
      const [payload] = token.split('.');
      assertProblem(await pix.client.call('GET', `/cob/${newTxid()}`, `${payload}.AAAA`), 401, 'AcessoNegado');
    });

    test('a token without the scope is 403 AcessoNegado', async () => {
      const readOnly = await pix.client.accessToken('cob.read');
      const answer = await pix.client.call('PUT', `/cob/${newTxid()}`, readOnly, cobBody(pix.pixKey));
      assertProblem(answer, 403, 'AcessoNegado');
    });

    test('a token expires after expires_in; a new one works', async () => {
      const short = await pix.client.accessToken();
      const txid = newTxid();
      assert.equal((await pix.client.call('PUT', `/cob/${txid}`, short, cobBody(pix.pixKey))).status, 201);
      clock.advance(601_000);
      const expired = await pix.client.call('GET', `/cob/${txid}`, short);
      assertProblem(expired, 401, 'AcessoNegado');
      assert.match(expired.body.detail, /expired/);
      token = await pix.client.accessToken();
      assert.equal((await pix.client.call('GET', `/cob/${txid}`, token)).status, 200);
    });

    test('revoking all tokens (control) makes every issued token 401 at once', async () => {
      const before = await pix.client.accessToken();
      assert.deepEqual((await pix.control('/control/tokens/revoke', {})).body, { ok: true });
      const answer = await pix.client.call('GET', `/cob/${newTxid()}`, before);
      assertProblem(answer, 401, 'AcessoNegado');
      assert.match(answer.body.detail, /revoked/);
      token = await pix.client.accessToken();
      assertProblem(await pix.client.call('GET', `/cob/${newTxid()}`, token), 404, 'CobNaoEncontrado');
    });
  });

  describe('cob', () => {
    test('PUT creates an ATIVA charge answered as the document describes, with a valid BR Code', async () => {
      const txid = newTxid();
      const body = { ...cobBody(pix.pixKey, '37.00', 3600), solicitacaoPagador: 'Pedido 42' };
      const answer = await pix.client.call('PUT', `/cob/${txid}`, token, body);
      assert.equal(answer.status, 201, answer.text);
      const cob = Cob.parse(answer.body);
      assert.equal(cob.txid, txid);
      assert.equal(cob.status, 'ATIVA');
      assert.equal(cob.revisao, 0);
      assert.equal(cob.calendario.expiracao, 3600);
      assert.equal(cob.valor.original, '37.00');
      assert.equal(cob.chave, pix.pixKey);
      assert.equal(cob.solicitacaoPagador, 'Pedido 42');
      assert.equal(cob.pix, undefined);
      assert.ok(cob.location?.startsWith('127.0.0.1:'));
      const code = parseBrCode(cob.pixCopiaECola as string);
      assert.deepEqual(code.account, { kind: 'url', url: cob.location });
      assert.equal(code.pointOfInitiation, '12');
      assert.equal(code.merchantName, 'PAYGATE TEST');
      assert.equal(code.txid, '***');
      assert.deepEqual((await pix.client.call('GET', `/cob/${txid}`, token)).body, answer.body);
    });

    test('a repeated PUT with the same terms answers the same charge; other terms revise it', async () => {
      const txid = newTxid();
      const first = await pix.client.call('PUT', `/cob/${txid}`, token, cobBody(pix.pixKey));
      const again = await pix.client.call('PUT', `/cob/${txid}`, token, cobBody(pix.pixKey));
      assert.equal(again.status, 201);
      assert.deepEqual(again.body, first.body);
      const revised = Cob.parse(
        (await pix.client.call('PUT', `/cob/${txid}`, token, cobBody(pix.pixKey, '11.00'))).body,
      );
      assert.equal(revised.revisao, 1);
      assert.equal(revised.valor.original, '11.00');
      assert.equal(revised.pixCopiaECola, first.body.pixCopiaECola, 'same location, same code');
    });

    test('paid: CONCLUIDA with the Pix and its pagador; the charge then refuses changes', async () => {
      const txid = newTxid();
      await pix.client.call('PUT', `/cob/${txid}`, token, cobBody(pix.pixKey, '25.90'));
      const paid = await pix.control('/control/pay', { txid, payer: { name: 'Ana Souza', cpf: '01234567890' } });
      assert.equal(paid.status, 200, paid.text);
      const cob = Cob.parse((await pix.client.call('GET', `/cob/${txid}`, token)).body);
      assert.equal(cob.status, 'CONCLUIDA');
      assert.equal(cob.pix?.length, 1);
      const [received] = cob.pix ?? [];
      assert.match(received?.endToEndId ?? '', /^E[0-9]{8}[0-9]{12}[a-zA-Z0-9]{11}$/);
      assert.equal(received?.txid, txid);
      assert.equal(received?.valor, '25.90');
      assert.deepEqual(received?.pagador, { nome: 'Ana Souza', cpf: '01234567890' });
      assertProblem(
        await pix.client.call('PUT', `/cob/${txid}`, token, cobBody(pix.pixKey, '1.00')),
        400,
        'CobOperacaoInvalida',
      );
      assertProblem(
        await pix.client.call('PATCH', `/cob/${txid}`, token, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' }),
        400,
        'CobOperacaoInvalida',
      );
      assert.equal((await pix.control('/control/pay', { txid })).status, 409, 'paid once only');
      // The same terms again are no change: the paid charge is answered as it is (a retried create).
      assert.equal(
        Cob.parse((await pix.client.call('PUT', `/cob/${txid}`, token, cobBody(pix.pixKey, '25.90'))).body).status,
        'CONCLUIDA',
      );
    });

    test('a payer with a CNPJ, and a paid amount other than the original', async () => {
      const txid = newTxid();
      await pix.client.call('PUT', `/cob/${txid}`, token, cobBody(pix.pixKey, '10.00'));
      await pix.control('/control/pay', { txid, amount: '9.99', payer: { cnpj: '12345678000195' } });
      const cob = Cob.parse((await pix.client.call('GET', `/cob/${txid}`, token)).body);
      assert.equal(cob.pix?.[0]?.valor, '9.99');
      assert.deepEqual(cob.pix?.[0]?.pagador, { cnpj: '12345678000195' });
      assert.equal((await pix.control('/control/pay', { txid: newTxid(), payer: { cpf: '1' } })).status, 400);
    });

    test('PATCH removes an ATIVA charge (revisao + 1) and refuses removal mixed with changes', async () => {
      const txid = newTxid();
      await pix.client.call('PUT', `/cob/${txid}`, token, cobBody(pix.pixKey));
      assertProblem(
        await pix.client.call('PATCH', `/cob/${txid}`, token, {
          status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR',
          valor: { original: '2.00' },
        }),
        400,
        'CobOperacaoInvalida',
      );
      const revised = await pix.client.call('PATCH', `/cob/${txid}`, token, { solicitacaoPagador: 'novo texto' });
      assert.equal(Cob.parse(revised.body).revisao, 1);
      const removed = await pix.client.call('PATCH', `/cob/${txid}`, token, {
        status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR',
      });
      assert.equal(removed.status, 200);
      const cob = Cob.parse(removed.body);
      assert.equal(cob.status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR');
      assert.equal(cob.revisao, 2);
      assert.equal(cob.solicitacaoPagador, 'novo texto');
      assert.equal((await pix.control('/control/pay', { txid })).status, 409, 'a removed charge takes no payment');
      assertProblem(
        await pix.client.call('PATCH', `/cob/${newTxid()}`, token, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' }),
        404,
        'CobNaoEncontrado',
      );
    });

    test('the PSP removes a charge (control): REMOVIDA_PELO_PSP', async () => {
      const txid = newTxid();
      await pix.client.call('PUT', `/cob/${txid}`, token, cobBody(pix.pixKey));
      assert.equal((await pix.control('/control/remove', { txid })).status, 200);
      assert.equal(Cob.parse((await pix.client.call('GET', `/cob/${txid}`, token)).body).status, 'REMOVIDA_PELO_PSP');
      assert.equal((await pix.control('/control/remove', { txid })).status, 409);
    });

    test('past calendario.expiracao a charge stays ATIVA but takes no payment; the receiver may still remove it', async () => {
      const txid = newTxid();
      await pix.client.call('PUT', `/cob/${txid}`, token, cobBody(pix.pixKey, '5.00', 60));
      clock.advance(61_000);
      token = await pix.client.accessToken();
      const late = await pix.control('/control/pay', { txid });
      assert.equal(late.status, 409);
      assert.match(late.body.error, /expired/);
      assert.equal(Cob.parse((await pix.client.call('GET', `/cob/${txid}`, token)).body).status, 'ATIVA');
      const removed = await pix.client.call('PATCH', `/cob/${txid}`, token, {
        status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR',
      });
      assert.equal(Cob.parse(removed.body).status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR');
    });

    test('refuses what the document refuses, with violacoes, and changes nothing', async () => {
      const txid = newTxid();
      const invalid = await pix.client.call('PUT', `/cob/${txid}`, token, {
        calendario: { expiracao: 0 },
        valor: { original: '10' },
        chave: pix.pixKey,
      });
      assertProblem(invalid, 400, 'CobOperacaoInvalida');
      assert.deepEqual(
        invalid.body.violacoes.map((v: { propriedade: string }) => v.propriedade),
        ['cob.calendario.expiracao', 'cob.valor.original'],
      );
      const otherKey = await pix.client.call('PUT', `/cob/${txid}`, token, cobBody('someone-else@example.com'));
      assertProblem(otherKey, 400, 'CobOperacaoInvalida');
      assert.equal(otherKey.body.violacoes[0].propriedade, 'cob.chave');
      assertProblem(
        await pix.client.call('PUT', `/cob/${txid}`, token, { ...cobBody(pix.pixKey), extra: 1 }),
        400,
        'CobOperacaoInvalida',
      );
      assertProblem(await pix.client.call('PUT', '/cob/short', token, cobBody(pix.pixKey)), 400, 'CobOperacaoInvalida');
      const notJson = await httpsCall(pix.simulator.url, pix.tls, 'PUT', `/api/v2/cob/${txid}`, {
        body: '{',
        headers: { authorization: `Bearer ${token}` },
      });
      assertProblem(notJson, 400, 'RequisicaoInvalida');
      assertProblem(await pix.client.call('GET', `/cob/${txid}`, token), 404, 'CobNaoEncontrado');
      assertProblem(await pix.client.call('GET', '/nothing', token), 404, 'NaoEncontrado');
      assertProblem(await pix.client.call('GET', '/cob/%E0%A4%A', token), 404, 'CobNaoEncontrado');
      assertProblem(
        await pix.client.call('PUT', '/webhook/%E0%A4%A', token, { webhookUrl: 'https://x.example' }),
        400,
        'WebhookOperacaoInvalida',
      );
    });
  });

  describe('GET /pix', () => {
    test('lists the Pix received between inicio and fim, with the paging the document describes', async () => {
      const start = new Date(clock.now() - 1000).toISOString();
      const txids = [newTxid(), newTxid(), newTxid()];
      for (const txid of txids) {
        await pix.client.call('PUT', `/cob/${txid}`, token, cobBody(pix.pixKey, '3.00'));
        await pix.control('/control/pay', { txid, payer: { name: 'Zé', cpf: '00000000191' } });
      }
      const end = new Date(clock.now() + 1000).toISOString();
      const query = `inicio=${encodeURIComponent(start)}&fim=${encodeURIComponent(end)}`;
      const all = PixList.parse((await pix.client.call('GET', `/pix?${query}`, token)).body);
      assert.deepEqual(
        all.pix.map((p) => p.txid),
        txids,
      );
      assert.equal(all.parametros.paginacao.quantidadeTotalDeItens, 3);
      assert.deepEqual(all.pix[0]?.pagador, { nome: 'Zé', cpf: '00000000191' });
      const page = PixList.parse(
        (await pix.client.call('GET', `/pix?${query}&paginacao.itensPorPagina=2&paginacao.paginaAtual=1`, token)).body,
      );
      assert.deepEqual(
        page.pix.map((p) => p.txid),
        [txids[2]],
      );
      assert.equal(page.parametros.paginacao.quantidadeDePaginas, 2);
      const before = `inicio=2020-01-01T00:00:00Z&fim=2020-01-02T00:00:00Z`;
      assert.deepEqual(PixList.parse((await pix.client.call('GET', `/pix?${before}`, token)).body).pix, []);
      assertProblem(
        await pix.client.call('GET', `/pix?inicio=${encodeURIComponent(end)}&fim=${encodeURIComponent(start)}`, token),
        400,
        'PixConsultaInvalida',
      );
      assertProblem(await pix.client.call('GET', '/pix', token), 400, 'PixConsultaInvalida');
    });
  });

  describe('webhook', () => {
    test('PUT, GET, DELETE on the receiver key; other keys refused', async () => {
      const path = `/webhook/${encodeURIComponent(pix.pixKey)}`;
      const url = 'https://platform.example/channels/pix/notifications';
      const put = await pix.client.call('PUT', path, token, { webhookUrl: url });
      assert.equal(put.status, 200, put.text);
      assert.equal((await pix.client.call('PUT', path, token, { webhookUrl: url })).status, 200, 'idempotent');
      const got = Webhook.parse((await pix.client.call('GET', path, token)).body);
      assert.equal(got.webhookUrl, url);
      assert.equal(got.chave, pix.pixKey);
      assertProblem(
        await pix.client.call('PUT', '/webhook/someone-else', token, { webhookUrl: url }),
        400,
        'WebhookOperacaoInvalida',
      );
      assertProblem(
        await pix.client.call('PUT', path, token, { webhookUrl: 'ftp://x' }),
        400,
        'WebhookOperacaoInvalida',
      );
      assert.equal((await pix.client.call('DELETE', path, token)).status, 204);
      assertProblem(await pix.client.call('GET', path, token), 404, 'WebhookNaoEncontrado');
      assertProblem(await pix.client.call('DELETE', path, token), 404, 'WebhookNaoEncontrado');
    });
  });

  describe('going down', () => {
    test('unavailable: every call answers 503 ServicoIndisponivel until it comes back', async () => {
      assert.equal((await pix.control('/control/availability', { mode: 'unavailable' })).status, 200);
      assertProblem(await pix.client.call('GET', `/cob/${newTxid()}`, token), 503, 'ServicoIndisponivel');
      assertProblem(await pix.client.token(), 503, 'ServicoIndisponivel');
      await pix.control('/control/availability', { mode: 'up' });
      assert.equal((await pix.client.token()).status, 200);
    });

    test('refuse: connections are refused; up: the same port answers again', async () => {
      await pix.control('/control/availability', { mode: 'refuse' });
      await assert.rejects(pix.client.token(), /ECONNREFUSED/);
      await pix.control('/control/availability', { mode: 'up' });
      assert.equal((await pix.client.token()).status, 200);
    });

    test('slow: answers are held back until a client gives up', async () => {
      await pix.control('/control/slow', { ms: 3_000 });
      await assert.rejects(pix.client.call('GET', `/cob/${newTxid()}`, token, undefined, 200), /timed out/);
      await pix.control('/control/slow', { ms: 0 });
      assertProblem(await pix.client.call('GET', `/cob/${newTxid()}`, token), 404, 'CobNaoEncontrado');
      assert.equal((await pix.control('/control/slow', { ms: -1 })).status, 400);
    });
  });

  test('the channel snippet: the fixed pix-api settings with absolute files that exist', async () => {
    const channel = (await (await fetch(`${pix.simulator.controlUrl}/control/channel`)).json()) as Record<
      string,
      unknown
    >;
    assert.equal(channel.kind, 'pix-api');
    assert.deepEqual(channel.methods, [{ currency: 'BRL', code: 'PIX' }]);
    assert.deepEqual(channel.payouts, []);
    assert.equal(channel.baseUrl, `${pix.simulator.url}/api/v2`);
    assert.equal(channel.tokenUrl, `${pix.simulator.url}/oauth/token`);
    assert.equal(channel.pixKey, pix.pixKey);
    for (const file of ['certFile', 'keyFile', 'caFile']) assert.match(String(channel[file]), /^\/.+\.pem$/);
    // The snippet alone is enough to talk to the simulator.
    const fromSnippet = pixClient(
      String(channel.baseUrl).replace(/\/api\/v2$/, ''),
      clientTls({
        ...pix.simulator.tls,
        clientCert: String(channel.certFile),
        clientKey: String(channel.keyFile),
        caCert: String(channel.caFile),
      }),
      String(channel.clientId),
      String(channel.clientSecret),
    );
    assert.equal((await fromSnippet.token()).status, 200);
  });
});
