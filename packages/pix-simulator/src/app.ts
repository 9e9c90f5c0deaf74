import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { join } from 'node:path';
import { rootCertificates, type TLSSocket } from 'node:tls';
import {
  Cnpj,
  CobPatchBody,
  CobPutBody,
  Cpf,
  isPositiveValor,
  PIX_SCOPES,
  PixListQuery,
  TokenRequest,
  TxId,
  Valor,
  WebhookPutBody,
  type PixScope,
  type Violacao,
} from '@paygate/pix';
import {
  controlInput,
  createControlPort,
  listenOn,
  lockDirectory,
  stopListening,
  urlHost,
  writeFileAtomic,
} from '@paygate/simulator-kit';
import { pino, type Logger } from 'pino';
import { z } from 'zod';
import { ensureCertificates, type TlsFiles } from './certs.js';
import type { SimulatorConfig } from './config.js';
import { ensureCredentials, type Credentials } from './credentials.js';
import { NOTIFICATION_MODES } from './model.js';
import { Notifier } from './notifier.js';
import {
  accessDenied,
  ApiProblem,
  cobInvalid,
  cobNotFound,
  cobQueryInvalid,
  invalidRequest,
  notFound,
  pixQueryInvalid,
  unauthorized,
  unavailable,
  webhookInvalid,
} from './problems.js';
import { ControlError, PixProvider } from './provider.js';
import { Store } from './store.js';
import { sameSecret, TokenIssuer } from './tokens.js';

const MAX_BODY = 64 * 1024;

/** The `pix-api` channel settings (decisions.md, "The Pix API: a real rail") that use this simulator. */
export interface ChannelSettings {
  readonly name: string;
  readonly kind: 'pix-api';
  readonly methods: readonly { currency: 'BRL'; code: 'PIX' }[];
  readonly payouts: readonly never[];
  readonly baseUrl: string;
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly pixKey: string;
  readonly certFile: string;
  readonly keyFile: string;
  readonly caFile: string;
}

/** How the API port behaves: normally, refusing connections, or answering 503 to everything. */
export type Availability = 'up' | 'refuse' | 'unavailable';

export interface Simulator {
  readonly config: SimulatorConfig;
  readonly provider: PixProvider;
  readonly notifier: Notifier;
  readonly store: Store;
  readonly credentials: Credentials;
  readonly tls: TlsFiles;
  readonly log: Logger;
  /** `https://HOST:PORT` of the API and token endpoint, once listening. */
  readonly url: string;
  /** `http://HOST:PORT` of the test controls, once listening. */
  readonly controlUrl: string;
  readonly availability: Availability;
  readonly slowMs: number;
  /** The channels-file entry for the platform (absolute paths). */
  channel(): ChannelSettings;
  listen(): Promise<void>;
  /** One pass of the background loop (callbacks due); tests may call it directly. */
  step(): Promise<void>;
  setAvailability(availability: Availability): Promise<void>;
  setSlow(ms: number): void;
  close(): Promise<void>;
}

export interface SimulatorDeps {
  readonly log?: Logger;
  readonly clock?: () => number;
}

// ---------------------------------------------------------------- control bodies

const controlPay = z.strictObject({
  txid: TxId,
  payer: z
    .strictObject({ name: z.string().min(1).max(200).optional(), cpf: Cpf.optional(), cnpj: Cnpj.optional() })
    .refine((p) => p.cpf === undefined || p.cnpj === undefined, 'a payer has a cpf or a cnpj, not both')
    .optional(),
  amount: Valor.refine(isPositiveValor, 'more than zero').optional(),
});
const controlTxid = z.strictObject({ txid: TxId });
const controlMode = z.strictObject({ mode: z.enum(NOTIFICATION_MODES) });
const controlAvailability = z.strictObject({ mode: z.enum(['up', 'refuse', 'unavailable']) });
const controlSlow = z.strictObject({ ms: z.int().min(0).max(600_000) });

// ---------------------------------------------------------------- HTTP helpers

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(invalidRequest('the body is larger than 64 KiB'));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function send(
  response: ServerResponse,
  status: number,
  value: unknown,
  contentType = 'application/json; charset=utf-8',
  headers: Record<string, string> = {},
): void {
  const body = value === undefined ? '' : JSON.stringify(value);
  response.writeHead(status, {
    ...(body === '' ? {} : { 'content-type': contentType }),
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    ...headers,
  });
  response.end(body);
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw invalidRequest('the body must be JSON');
  }
}

/** Validates an API body; a refusal lists each violated member as the document's `violacoes`. */
function validate<T>(
  schema: z.ZodType<T>,
  value: unknown,
  prefix: string,
  refuse: (detail: string, v: Violacao[]) => ApiProblem,
): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const violacoes = result.error.issues.map((issue) => ({
    razao: issue.message,
    propriedade: [prefix, ...issue.path.map(String)].filter((part) => part !== '').join('.'),
  }));
  throw refuse(`the request does not respect the schema: ${violacoes.map((v) => v.propriedade).join(', ')}`, violacoes);
}

/** `decodeURIComponent` that answers undefined for a malformed escape instead of throwing. */
function decode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------- the simulator

/**
 * The simulator as a factory: takes the data directory's lock first (a second simulator on it
 * fails here, before touching anything), makes or loads the TLS material and the credentials,
 * loads the state; `listen()` opens the API (HTTPS, client certificate required) and the control
 * port (plain HTTP). `main.ts` only parses config, listens and handles signals.
 */
export async function createSimulator(config: SimulatorConfig, deps: SimulatorDeps = {}): Promise<Simulator> {
  const clock = deps.clock ?? Date.now;
  const log = deps.log ?? pino({ name: 'paygate-pix', level: config.logLevel });
  const lock = lockDirectory(config.dataDir, 'paygate-pix');
  let store: Store;
  let tls: TlsFiles;
  let credentials: Credentials;
  try {
    tls = await ensureCertificates(config.dataDir);
    credentials = ensureCredentials(config.dataDir);
    store = new Store(config.dataDir);
  } catch (error) {
    lock.release();
    throw error;
  }
  const caPem = readFileSync(tls.caCert, 'utf8');
  const provider = new PixProvider(
    store,
    {
      pixKey: credentials.pixKey,
      merchantName: config.merchantName,
      merchantCity: config.merchantCity,
      locationHost: `127.0.0.1:${config.port}`,
    },
    clock,
  );
  const notifier = new Notifier(
    store,
    {
      batch: config.batch,
      retryBaseMs: config.retryBaseMs,
      retryMaxMs: config.retryMaxMs,
      timeoutMs: config.notifyTimeoutMs,
      tls: {
        cert: readFileSync(tls.callbackCert, 'utf8'),
        key: readFileSync(tls.callbackKey, 'utf8'),
        ca: [...rootCertificates, caPem],
      },
    },
    log,
    clock,
  );
  const tokens = new TokenIssuer(credentials.tokenKey);

  let availability: Availability = 'up';
  let slowMs = 0;
  let apiPort = config.port;

  // ---- the token endpoint (RFC 6749 §4.4; errors as §5.2)

  function token(request: IncomingMessage, body: Buffer, response: ServerResponse): void {
    const oauthError = (status: number, error: string, description: string, headers: Record<string, string> = {}) =>
      send(response, status, { error, error_description: description }, undefined, { pragma: 'no-cache', ...headers });
    const basic = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(request.headers.authorization ?? '');
    const decoded = basic ? Buffer.from(basic[1] as string, 'base64').toString('utf8') : '';
    const colon = decoded.indexOf(':');
    // RFC 6749 §2.3.1: both parts are form-urlencoded before the Basic encoding.
    const id = colon < 0 ? '' : (decode(decoded.slice(0, colon)) ?? '');
    const secret = colon < 0 ? '' : (decode(decoded.slice(colon + 1)) ?? '');
    const idOk = sameSecret(id, credentials.clientId);
    const secretOk = sameSecret(secret, credentials.clientSecret);
    if (!basic || !idOk || !secretOk) {
      log.warn({ clientId: id || undefined }, 'token refused: client authentication failed');
      return oauthError(401, 'invalid_client', 'client authentication failed (HTTP Basic)', {
        'www-authenticate': 'Basic realm="paygate-pix"',
      });
    }
    const form = new URLSearchParams(body.toString('utf8'));
    const fields: Record<string, string> = {};
    for (const [key, value] of form) {
      if (key in fields) return oauthError(400, 'invalid_request', `${key} is given twice`);
      fields[key] = value;
    }
    const parsed = TokenRequest.safeParse(fields);
    if (!parsed.success) {
      return fields.grant_type !== undefined && fields.grant_type !== 'client_credentials'
        ? oauthError(400, 'unsupported_grant_type', 'only client_credentials is supported')
        : oauthError(400, 'invalid_request', 'grant_type=client_credentials is required');
    }
    const requested = parsed.data.scope?.split(' ').filter((scope) => scope !== '') ?? [...PIX_SCOPES];
    const unknown = requested.filter((scope) => !(PIX_SCOPES as readonly string[]).includes(scope));
    if (unknown.length > 0) return oauthError(400, 'invalid_scope', `unknown scope: ${unknown.join(' ')}`);
    const scopes = [...new Set(requested)];
    const now = clock();
    const accessToken = tokens.issue({
      clientId: credentials.clientId,
      scopes,
      expiresAt: now + config.tokenTtlS * 1000,
      epoch: store.tokenEpoch,
    });
    send(
      response,
      200,
      { access_token: accessToken, token_type: 'Bearer', expires_in: config.tokenTtlS, scope: scopes.join(' ') },
      undefined,
      { pragma: 'no-cache' },
    );
  }

  function authorize(request: IncomingMessage, scope: PixScope): void {
    const bearer = /^Bearer ([A-Za-z0-9._~+/=-]+)$/i.exec(request.headers.authorization ?? '');
    if (!bearer) throw unauthorized('an access token (Authorization: Bearer) is required');
    const check = tokens.check(bearer[1] as string, clock(), store.tokenEpoch);
    if (!check.ok)
      throw unauthorized(`the access token is ${check.reason === 'malformed' ? 'not valid' : check.reason}`);
    if (!check.grant.scopes.includes(scope)) throw accessDenied(`the access token lacks the scope ${scope}`);
  }

  // ---- the API Pix

  async function api(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (slowMs > 0) await delay(slowMs);
    const body = await readBody(request);
    if (availability === 'unavailable') throw unavailable();
    // rejectUnauthorized already ends handshakes without a certificate of our CA; this is the second lock.
    if (!(request.socket as TLSSocket).authorized) throw unauthorized('a client certificate is required');
    const method = request.method ?? 'GET';
    const url = new URL(request.url ?? '/', 'https://pix.invalid');
    const path = url.pathname;
    let match: RegExpExecArray | null;

    if (path === '/oauth/token') {
      if (method !== 'POST') throw notFound();
      return token(request, body, response);
    }

    if ((match = /^\/api\/v2\/cob\/([^/]*)$/.exec(path))) {
      const txid = decode(match[1] as string) ?? '';
      if (method === 'PUT') {
        authorize(request, 'cob.write');
        if (!TxId.safeParse(txid).success) {
          throw cobInvalid('the txid must be 26 to 35 letters or digits', [{ propriedade: 'txid', valor: txid }]);
        }
        const input = validate(CobPutBody, parseJson(body), 'cob', cobInvalid);
        return send(response, 201, provider.view(provider.putCob(txid, input)));
      }
      if (method === 'PATCH') {
        authorize(request, 'cob.write');
        const input = validate(CobPatchBody, parseJson(body), 'cob', cobInvalid);
        return send(response, 200, provider.view(provider.patchCob(txid, input)));
      }
      if (method === 'GET') {
        authorize(request, 'cob.read');
        const cob = store.cobs.get(txid);
        if (!cob) throw cobNotFound(txid);
        const revisao = url.searchParams.get('revisao');
        if (revisao !== null && revisao !== String(cob.revisao)) {
          throw cobQueryInvalid(`revision ${revisao} is not the current one (${cob.revisao}); only it is kept`);
        }
        return send(response, 200, provider.view(cob));
      }
      throw notFound();
    }

    if (path === '/api/v2/pix' && method === 'GET') {
      authorize(request, 'pix.read');
      const query = validate(PixListQuery, Object.fromEntries(url.searchParams), '', pixQueryInvalid);
      return send(response, 200, provider.listPix(query));
    }

    if ((match = /^\/api\/v2\/webhook\/([^/]+)$/.exec(path))) {
      const chave = decode(match[1] as string) ?? '';
      if (method === 'PUT') {
        authorize(request, 'webhook.write');
        provider.putWebhook(chave, validate(WebhookPutBody, parseJson(body), 'webhook', webhookInvalid));
        return send(response, 200, undefined);
      }
      if (method === 'GET') {
        authorize(request, 'webhook.read');
        return send(response, 200, provider.getWebhook(chave));
      }
      if (method === 'DELETE') {
        authorize(request, 'webhook.write');
        provider.deleteWebhook(chave);
        return send(response, 204, undefined);
      }
    }
    throw notFound();
  }

  const apiServer = createHttpsServer(
    {
      key: readFileSync(tls.serverKey),
      cert: readFileSync(tls.serverCert),
      ca: caPem,
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: 'TLSv1.2',
    },
    (request, response) => {
      api(request, response).catch((error: unknown) => {
        if (error instanceof ApiProblem) {
          if (error.status >= 500 || error.status === 401) {
            log.warn({ method: request.method, url: request.url, status: error.status }, error.message);
          }
          if (!response.headersSent) {
            send(response, error.status, error.toJSON(), 'application/problem+json; charset=utf-8', {
              ...error.headers,
            });
          }
          return;
        }
        log.error({ err: error, method: request.method, url: request.url }, 'request failed');
        if (!response.headersSent) {
          send(
            response,
            500,
            new ApiProblem(500, 'ErroInternoDoServidor', 'Erro interno do servidor', 'internal error').toJSON(),
            'application/problem+json; charset=utf-8',
          );
        }
      });
    },
  );
  apiServer.on('tlsClientError', (error) => log.debug({ err: error.message }, 'TLS handshake refused'));

  // ---- test controls (plain HTTP JSON, own port)

  const controlParse = <T>(schema: z.ZodType<T>, body: Buffer): T => controlInput(schema, body, {});
  const controls = createControlPort({
    log,
    refusal: (error) => (error instanceof ControlError || error instanceof ApiProblem ? error : undefined),
    routes: {
      'GET /control/channel': () => simulator.channel(),
      'GET /control/state': () => ({
        availability,
        slowMs,
        notifications: store.mode,
        pendingCallbacks: store.outbox.size,
      }),
      'POST /control/pay': ({ body }) => {
        const input = controlParse(controlPay, body);
        const payer = input.payer && {
          ...(input.payer.name !== undefined ? { nome: input.payer.name } : {}),
          ...(input.payer.cpf !== undefined ? { cpf: input.payer.cpf } : {}),
          ...(input.payer.cnpj !== undefined ? { cnpj: input.payer.cnpj } : {}),
        };
        const paid = provider.pay(input.txid, {
          ...(payer !== undefined ? { payer } : {}),
          ...(input.amount !== undefined ? { amount: input.amount } : {}),
        });
        return provider.view(paid);
      },
      'POST /control/remove': ({ body }) => provider.view(provider.removeByPsp(controlParse(controlTxid, body).txid)),
      'POST /control/notifications': ({ body }) => provider.setMode(controlParse(controlMode, body).mode),
      'POST /control/tokens/revoke': () => provider.revokeTokens(),
      'POST /control/availability': ({ body }) =>
        simulator.setAvailability(controlParse(controlAvailability, body).mode),
      'POST /control/slow': ({ body }) => simulator.setSlow(controlParse(controlSlow, body).ms),
    },
  });

  // ---- lifecycle

  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  let closed = false;

  const step = async () => {
    await notifier.deliverDue();
  };
  const loop = () => {
    if (closed) return;
    inFlight = step()
      .catch((error: unknown) => log.error({ err: error }, 'background step failed'))
      .finally(() => {
        if (!closed) timer = setTimeout(loop, config.tickMs);
      });
  };

  const hostPart = urlHost(config.host);

  const simulator: Simulator = {
    config,
    provider,
    notifier,
    store,
    credentials,
    tls,
    log,
    get url() {
      return `https://${hostPart}:${apiPort}`;
    },
    controlUrl: '',
    get availability() {
      return availability;
    },
    get slowMs() {
      return slowMs;
    },
    channel() {
      return {
        name: 'pix',
        kind: 'pix-api',
        methods: [{ currency: 'BRL', code: 'PIX' }],
        payouts: [],
        baseUrl: `${simulator.url}/api/v2`,
        tokenUrl: `${simulator.url}/oauth/token`,
        clientId: credentials.clientId,
        clientSecret: credentials.clientSecret,
        pixKey: credentials.pixKey,
        certFile: tls.clientCert,
        keyFile: tls.clientKey,
        caFile: tls.caCert,
      };
    },
    async listen() {
      apiPort = await listenOn(apiServer, config.port, config.host);
      provider.options.locationHost = `${hostPart}:${apiPort}`;
      (simulator as { controlUrl: string }).controlUrl = await controls.listen(config.controlPort, config.host);
      writeFileAtomic(join(config.dataDir, 'channel.json'), `${JSON.stringify(simulator.channel(), null, 2)}\n`);
      loop();
    },
    step,
    async setAvailability(next) {
      if (next === 'refuse' && availability !== 'refuse') await stopListening(apiServer);
      if (next !== 'refuse' && availability === 'refuse') await listenOn(apiServer, apiPort, config.host);
      availability = next;
      log.info({ availability }, 'availability changed');
    },
    setSlow(ms) {
      slowMs = ms;
      log.info({ slowMs }, 'answer delay changed');
    },
    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearTimeout(timer);
      await Promise.all([stopListening(apiServer), controls.close()]);
      await inFlight;
      notifier.close();
      store.close();
      lock.release();
    },
  };
  return simulator;
}
