import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  Cob,
  CobPatchBody,
  CobPutBody,
  EndToEndId,
  Pix,
  PixList,
  PixListQuery,
  Problem,
  TokenAnswer,
  TokenRequest,
  TxId,
  Valor,
  Webhook,
  WebhookCallbackBody,
  WebhookPutBody,
} from '../src/index.js';

// The example values below are those of the API Pix document 2.9.0 (components.examples), so the
// schemas are held against what the document itself shows.

const cobBody2 = {
  calendario: { expiracao: 3600 },
  devedor: { cnpj: '12345678000195', nome: 'Empresa de Serviços SA' },
  valor: { original: '37.00', modalidadeAlteracao: 1 },
  chave: '7d9f0335-8dcc-4054-9bf9-0dbd61d36906',
  solicitacaoPagador: 'Serviço realizado.',
  infoAdicionais: [
    { nome: 'Campo 1', valor: 'Informação Adicional1 do PSP-Recebedor' },
    { nome: 'Campo 2', valor: 'Informação Adicional2 do PSP-Recebedor' },
  ],
};

const cobResponse2 = {
  calendario: { criacao: '2020-09-09T20:15:00.358Z', expiracao: 3600 },
  txid: '655dfdb1a4514b8fbb58254b958913fb',
  revisao: 1,
  loc: { id: 567, location: 'pix.example.com/qr/1dd7f893a58e417287028dc33e21a403' },
  location: 'pix.example.com/qr/1dd7f893a58e417287028dc33e21a403',
  status: 'CONCLUIDA',
  devedor: { cnpj: '12345678000195', nome: 'Empresa de Serviços SA' },
  valor: { original: '100.00', modalidadeAlteracao: 0 },
  chave: '40a0932d-1918-4eee-845d-35a2da1690dc',
  solicitacaoPagador: 'Informar cartão fidelidade',
  pix: [
    {
      endToEndId: 'E1234567820200909122120200808008',
      txid: '655dfdb1a4514b8fbb58254b958913fb',
      valor: '110.00',
      horario: '2020-09-09T20:15:00.358Z',
      infoPagador: '0123456789',
      devolucoes: [
        {
          id: '123ABC',
          rtrId: 'D1234567820200909122120200808006',
          valor: '10.00',
          horario: { solicitacao: '2020-09-09T20:15:00.358Z' },
          status: 'EM_PROCESSAMENTO',
        },
      ],
    },
  ],
};

describe('patterns', () => {
  test('txid: 26 to 35 letters or digits', () => {
    assert.ok(TxId.safeParse('7978c0c97ea847e78e8849634473c1f1').success);
    assert.ok(TxId.safeParse('a'.repeat(26)).success);
    assert.ok(TxId.safeParse('a'.repeat(35)).success);
    assert.ok(!TxId.safeParse('a'.repeat(25)).success);
    assert.ok(!TxId.safeParse('a'.repeat(36)).success);
    assert.ok(!TxId.safeParse(`${'a'.repeat(30)}-`).success);
  });

  test('endToEndId: exactly 32 letters or digits', () => {
    assert.ok(EndToEndId.safeParse('E12345678202009091221abcdef12345').success);
    // The document's own pixResponse2 example is 34 characters long and breaks its pattern.
    assert.ok(!EndToEndId.safeParse('E12345678202009091221ghijk78901234').success);
  });

  test('valor: digits, a dot and two decimals', () => {
    for (const ok of ['0.00', '37.00', '1234567890.99']) assert.ok(Valor.safeParse(ok).success, ok);
    for (const bad of ['37', '37.0', '37,00', '-1.00', '12345678901.00', ' 1.00']) {
      assert.ok(!Valor.safeParse(bad).success, bad);
    }
  });
});

describe('cob bodies', () => {
  test("PUT accepts the document's create example and the minimal body of the decisions", () => {
    assert.deepEqual(CobPutBody.parse(cobBody2), cobBody2);
    const minimal = { calendario: { expiracao: 900 }, valor: { original: '10.00' }, chave: 'loja@example.com' };
    assert.deepEqual(CobPutBody.parse(minimal), minimal);
  });

  test('PUT refuses what the violations list names, and unknown members', () => {
    const bad = (change: object) => CobPutBody.safeParse({ ...cobBody2, ...change }).success;
    assert.equal(bad({ calendario: { expiracao: 0 } }), false);
    assert.equal(bad({ valor: { original: '0.00' } }), false);
    assert.equal(bad({ valor: { original: '10' } }), false);
    assert.equal(bad({ devedor: { cpf: '123', nome: 'Ana' } }), false);
    assert.equal(bad({ devedor: { cpf: '12345678909', cnpj: '12345678000195', nome: 'Ana' } }), false);
    assert.equal(bad({ chave: 'x'.repeat(78) }), false);
    assert.equal(bad({ solicitacaoPagador: 'x'.repeat(141) }), false);
    assert.equal(bad({ chave: undefined }), false);
    assert.equal(bad({ calendario: undefined }), false);
    assert.equal(bad({ extra: 1 }), false);
    // Pix Saque/Troco (valor.retirada) is not accepted.
    assert.equal(bad({ valor: { original: '10.00', retirada: { saque: { valor: '5.00' } } } }), false);
  });

  test("PATCH accepts the document's revision examples; a removal goes alone", () => {
    const cobBody3 = {
      loc: { id: 7768 },
      devedor: { cpf: '12345678909', nome: 'Francisco da Silva' },
      valor: { original: '123.45' },
      solicitacaoPagador: 'Cobrança dos serviços prestados.',
    };
    assert.deepEqual(CobPatchBody.parse(cobBody3), cobBody3);
    assert.ok(CobPatchBody.safeParse({ valor: { original: '567.89' } }).success);
    assert.deepEqual(CobPatchBody.parse({ status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' }), {
      status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR',
    });
    assert.ok(
      !CobPatchBody.safeParse({ status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR', valor: { original: '1.00' } }).success,
    );
    assert.ok(!CobPatchBody.safeParse({ status: 'CONCLUIDA' }).success);
    assert.ok(!CobPatchBody.safeParse({ unknown: true }).success);
  });
});

describe('answers', () => {
  test("a charge answer: the document's created and paid examples", () => {
    const cobResponse1 = {
      calendario: { criacao: '2020-09-09T20:15:00.358Z', expiracao: 3600 },
      txid: '7978c0c97ea847e78e8849634473c1f1',
      revisao: 0,
      loc: { id: 789, location: 'pix.example.com/qr/9d36b84fc70b478fb95c12729b90ca25', tipoCob: 'cob' },
      location: 'pix.example.com/qr/9d36b84fc70b478fb95c12729b90ca25',
      status: 'ATIVA',
      valor: { original: '37.00', modalidadeAlteracao: 1 },
      chave: '7d9f0335-8dcc-4054-9bf9-0dbd61d36906',
    };
    assert.deepEqual(Cob.parse(cobResponse1), cobResponse1);
    const paid = Cob.parse(cobResponse2);
    assert.equal(paid.status, 'CONCLUIDA');
    assert.equal(paid.pix?.[0]?.endToEndId, 'E1234567820200909122120200808008');
  });

  test('answers keep members added by later versions or providers, and read the pagador extension', () => {
    const withExtras = {
      ...cobResponse2,
      novoCampo: 'x',
      pix: [{ ...cobResponse2.pix[0], pagador: { nome: 'Ana', cpf: '01234567890' }, outro: 1 }],
    };
    const parsed = Cob.parse(withExtras);
    assert.equal((parsed as Record<string, unknown>).novoCampo, 'x');
    assert.deepEqual(parsed.pix?.[0]?.pagador, { nome: 'Ana', cpf: '01234567890' });
    assert.ok(!Pix.safeParse({ ...cobResponse2.pix[0], pagador: { cpf: '1' } }).success);
  });

  test('a charge answer with nonsense is refused', () => {
    assert.ok(!Cob.safeParse({ ...cobResponse2, status: 'PAGA' }).success);
    assert.ok(!Cob.safeParse({ ...cobResponse2, txid: 'short' }).success);
    assert.ok(!Cob.safeParse({ ...cobResponse2, calendario: { criacao: 'yesterday', expiracao: 3600 } }).success);
    assert.ok(!Cob.safeParse({ ...cobResponse2, valor: { original: 100 } }).success);
    assert.ok(!Cob.safeParse({ ...cobResponse2, pix: [{ ...cobResponse2.pix[0], endToEndId: 'E1' }] }).success);
    assert.ok(!Cob.safeParse('<html>').success);
  });

  test('the received-Pix list: GET /pix answer (getPix1, with the valid pixResponse1)', () => {
    const answer = {
      parametros: {
        inicio: '2020-04-01T00:00:00Z',
        fim: '2020-04-01T23:59:59Z',
        paginacao: { paginaAtual: 0, itensPorPagina: 100, quantidadeDePaginas: 1, quantidadeTotalDeItens: 1 },
      },
      pix: [
        {
          endToEndId: 'E12345678202009091221abcdef12345',
          txid: 'cd1fe328c875481285a6f233ae41b662',
          valor: '100.00',
          horario: '2020-09-10T13:03:33.902Z',
          infoPagador: 'Reforma da casa',
        },
      ],
    };
    assert.deepEqual(PixList.parse(answer), answer);
    assert.deepEqual(PixList.parse({ parametros: answer.parametros }).pix, []);
  });

  test('the GET /pix query: RFC 3339 bounds in order, paging defaults', () => {
    assert.deepEqual(PixListQuery.parse({ inicio: '2020-04-01T00:00:00Z', fim: '2020-04-01T23:59:59-03:00' }), {
      inicio: '2020-04-01T00:00:00Z',
      fim: '2020-04-01T23:59:59-03:00',
      'paginacao.paginaAtual': 0,
      'paginacao.itensPorPagina': 100,
    });
    assert.ok(!PixListQuery.safeParse({ inicio: '2020-04-02T00:00:00Z', fim: '2020-04-01T00:00:00Z' }).success);
    assert.ok(!PixListQuery.safeParse({ inicio: '2020-04-01', fim: '2020-04-02' }).success);
    assert.ok(
      !PixListQuery.safeParse({
        inicio: '2020-04-01T00:00:00Z',
        fim: '2020-04-01T00:00:00Z',
        'paginacao.itensPorPagina': '1001',
      }).success,
    );
  });

  test('webhook: PUT body, GET answer (webhookResponse1) and the callback body', () => {
    assert.ok(WebhookPutBody.safeParse({ webhookUrl: 'https://pix.example.com/api/webhook/' }).success);
    assert.ok(WebhookPutBody.safeParse({ webhookUrl: 'http://127.0.0.1:3000/channels/pix/notifications' }).success);
    assert.ok(!WebhookPutBody.safeParse({ webhookUrl: 'ftp://x' }).success);
    assert.ok(!WebhookPutBody.safeParse({ webhookUrl: 'https://x', extra: 1 }).success);
    assert.ok(
      Webhook.safeParse({
        webhookUrl: 'https://pix.example.com/api/webhook/',
        chave: '40a0932d-1918-4eee-845d-35a2da1690dc',
        criacao: '2020-11-11T10:15:00.358Z',
      }).success,
    );
    const callback = {
      pix: [
        {
          endToEndId: 'E87654321202009091221dfghi123456',
          txid: '971122d8f37211eaadc10242ac120002',
          valor: '110.00',
          horario: '2020-09-09T20:15:00.358Z',
          infoPagador: '0123456789',
        },
      ],
    };
    assert.deepEqual(WebhookCallbackBody.parse(callback), callback);
    // The document's pixWebhook1 example writes devolucoes as one object, against its own schema.
    assert.ok(!WebhookCallbackBody.safeParse({ pix: [{ ...callback.pix[0], devolucoes: { id: '123ABC' } }] }).success);
    assert.ok(!WebhookCallbackBody.safeParse({}).success);
  });

  test("problems: the document's error examples", () => {
    for (const example of [
      {
        type: 'https://pix.bcb.gov.br/api/v2/error/CobOperacaoInvalida',
        title: 'Cobrança inválida.',
        status: 400,
        detail: 'A requisição que busca alterar ou criar uma cobrança para pagamento imediato não respeita o _schema_.',
        violacoes: [
          { razao: 'O campo cob.valor.original não respeita o _schema_.', propriedade: 'cob.valor.original' },
        ],
      },
      {
        type: 'https://pix.bcb.gov.br/api/v2/error/AcessoNegado',
        title: 'Acesso Negado',
        status: 403,
        detail: 'Requisição de participante autenticado que viola alguma regra de autorização.',
      },
      { type: 'https://pix.bcb.gov.br/api/v2/error/NaoEncontrado', title: 'Não Encontrado', status: 404 },
    ]) {
      assert.deepEqual(Problem.parse(example), example);
    }
    assert.ok(!Problem.safeParse({ title: 'x', status: 400 }).success);
    assert.ok(!Problem.safeParse({ type: 'x', title: 'x', status: 200 }).success);
  });

  test('OAuth: the token answer and request (RFC 6749 §4.4)', () => {
    assert.ok(TokenAnswer.safeParse({ access_token: 'abc', token_type: 'Bearer', expires_in: 3600 }).success);
    assert.ok(TokenAnswer.safeParse({ access_token: 'abc', token_type: 'bearer', scope: 'cob.read' }).success);
    assert.ok(!TokenAnswer.safeParse({ access_token: 'abc', token_type: 'mac' }).success);
    assert.ok(!TokenAnswer.safeParse({ access_token: '', token_type: 'Bearer' }).success);
    assert.ok(!TokenAnswer.safeParse({ access_token: 'abc', token_type: 'Bearer', expires_in: -1 }).success);
    assert.ok(TokenRequest.safeParse({ grant_type: 'client_credentials', scope: 'cob.write cob.read' }).success);
    assert.ok(!TokenRequest.safeParse({ grant_type: 'password' }).success);
  });
});
