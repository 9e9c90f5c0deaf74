import { mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import {
  ControlRefusal,
  controlInput,
  createControlPort,
  readBody,
  sendJson as json,
  writeFileAtomic,
} from '@paygate/simulator-kit';
import { pino, type Logger } from 'pino';
import { z } from 'zod';
import { NonceCache, verify } from './auth.js';
import type { SimulatorConfig } from './config.js';
import { METHODS } from './model.js';
import { Notifier } from './notifier.js';
import { PAGE_CSP, escapeHtml, pageCsp, renderPayPage } from './page.js';
import { Provider, ProviderError } from './provider.js';
import { Store } from './store.js';

const amount = z
  .string()
  .regex(/^(0|[1-9][0-9]{0,14})(\.[0-9]{1,8})?$/, 'a decimal string such as "10.50"')
  .refine((value) => /[1-9]/.test(value), 'greater than zero');
const reference = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, _ and -');
const currency = z.string().regex(/^[A-Z]{3}$/, 'an ISO 4217 code');
const notifyUrl = z
  .string()
  .max(2048)
  .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), 'an http(s) URL');
const text = (max: number) => z.string().min(1).max(max);

const chargeRequest = z.strictObject({
  reference,
  amount,
  currency,
  method: z.enum(METHODS),
  notifyUrl,
  expiresAt: z.number().int().positive().optional(),
  /** Where the hosted page sends the payer once the charge is paid or declined. */
  returnUrl: notifyUrl.optional(),
});
const transferRequest = z.strictObject({
  reference,
  amount,
  currency,
  payee: z.strictObject({
    name: text(200),
    accountNumber: text(140),
    bankCode: text(32).optional(),
    documentNumber: text(64).optional(),
  }),
  notifyUrl,
});
const payer = z.strictObject({ name: text(200).optional(), documentNumber: text(64).optional() });
const completePayment = z.strictObject({
  reference,
  status: z.enum(['SUCCEEDED', 'FAILED']),
  payer: payer.optional(),
  paidAmount: amount.optional(),
});
const completePayout = z.strictObject({ reference, status: z.enum(['SUCCEEDED', 'FAILED']) });
const returnPayout = z.strictObject({ reference });
const notificationMode = z.strictObject({ mode: z.enum(['normal', 'drop', 'duplicate', 'reverse']) });
const answerDelay = z.strictObject({ ms: z.int().min(0).max(600_000) });

function html(response: ServerResponse, status: number, body: string, csp = PAGE_CSP): void {
  response.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'content-security-policy': csp,
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
  });
  response.end(body);
}

export interface Simulator {
  readonly server: Server;
  readonly provider: Provider;
  readonly notifier: Notifier;
  readonly store: Store;
  readonly log: Logger;
  /** The base URL once listening. */
  url: string;
  /** Starts listening and the background loop (outbox delivery, expiries, settlement files). */
  listen(): Promise<string>;
  /** One pass of the background loop (tests call it directly). */
  step(): Promise<void>;
  /** Stops accepting requests, finishes the step in flight, compacts and closes the state. */
  close(): Promise<void>;
}

export interface SimulatorDeps {
  readonly log?: Logger;
  readonly clock?: () => number;
}

/** The simulator as a factory: `main.ts` only parses config, listens and handles signals. */
export function buildSimulator(config: SimulatorConfig, deps: SimulatorDeps = {}): Simulator {
  const clock = deps.clock ?? Date.now;
  const log = deps.log ?? pino({ name: 'paygate-psp', level: config.logLevel });
  const store = new Store(config.dataDir);
  const provider = new Provider(
    store,
    {
      publicUrl: config.publicUrl ?? `http://${config.host}:${config.port}`,
      chargeTtlMs: config.chargeTtlMs,
      autoCompleteMs: config.autoCompleteMs,
      feeBps: config.feeBps,
    },
    clock,
  );
  const notifier = new Notifier(
    store,
    {
      secret: config.secret,
      batch: config.batch,
      retryBaseMs: config.retryBaseMs,
      retryMaxMs: config.retryMaxMs,
      timeoutMs: config.notifyTimeoutMs,
    },
    log,
    clock,
  );
  const nonces = new NonceCache(clock);
  const settlementDir = join(config.dataDir, 'settlements');
  mkdirSync(settlementDir, { recursive: true });

  const writeSettlement = (date: string): string => {
    const csv = provider.settlement(date);
    writeFileAtomic(join(settlementDir, `${date}.csv`), csv, { mode: 0o666 });
    return csv;
  };

  function authenticate(request: IncomingMessage, body: Buffer): void {
    const result = verify(
      config.secret,
      { method: request.method ?? 'GET', path: request.url ?? '/', body, headers: request.headers },
      { now: clock(), nonceSeen: nonces.seen },
    );
    if (!result.ok) {
      log.warn({ method: request.method, url: request.url, reason: result.reason }, 'request refused');
      throw new ControlRefusal(401, 'unauthorized');
    }
  }

  const chargeFor = (ref: string) => {
    const charge = provider.chargeByReference(ref);
    if (!charge) throw new ControlRefusal(404, `no charge with reference ${ref}`);
    return charge;
  };
  const transferFor = (ref: string) => {
    const transfer = provider.transferByReference(ref);
    if (!transfer) throw new ControlRefusal(404, `no transfer with reference ${ref}`);
    return transfer;
  };

  /** How long each API call waits before it is served (`POST /control/slow`). */
  let slowMs = 0;
  /** The calls served after that wait: each is logged once served (a test waits for it). */
  const slowed = new WeakSet<IncomingMessage>();
  const controls = createControlPort({
    log,
    refusal: (error) => (error instanceof ProviderError ? error : undefined),
    routes: {
      'POST /control/payments/complete': ({ body }) => {
        const input = controlInput(completePayment, body);
        provider.settleCharge(
          chargeFor(input.reference),
          input.status === 'SUCCEEDED'
            ? {
                paid: true,
                ...(input.paidAmount !== undefined ? { paidAmount: input.paidAmount } : {}),
                ...(input.payer !== undefined ? { payer: input.payer } : {}),
              }
            : { paid: false },
        );
      },
      'POST /control/payouts/complete': ({ body }) => {
        const input = controlInput(completePayout, body);
        provider.completeTransfer(transferFor(input.reference), input.status === 'SUCCEEDED');
      },
      'POST /control/payouts/return': ({ body }) => {
        provider.returnTransfer(transferFor(controlInput(returnPayout, body).reference));
      },
      'POST /control/notifications': ({ body }) => {
        provider.setMode(controlInput(notificationMode, body).mode);
      },
      'POST /control/slow': ({ body }) => {
        slowMs = controlInput(answerDelay, body).ms;
        log.info({ slowMs }, 'answer delay changed');
      },
    },
  });

  async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const method = request.method ?? 'GET';
    const url = new URL(request.url ?? '/', 'http://psp');
    const path = url.pathname;
    const body = await readBody(request);
    let match: RegExpExecArray | null;

    if (method === 'GET' && path === '/healthz') return json(response, 200, { ok: true });

    // The provider's API: every call signed with the shared secret.
    if (path.startsWith('/v1/')) {
      // A slow provider still does what it was asked, after the caller may have stopped waiting.
      if (slowMs > 0) {
        await delay(slowMs);
        slowed.add(request);
      }
      authenticate(request, body);
      if (method === 'POST' && path === '/v1/charges') {
        const { charge, created } = provider.createCharge(controlInput(chargeRequest, body));
        return json(response, created ? 201 : 200, provider.chargeView(charge));
      }
      if (method === 'GET' && path === '/v1/charges') {
        return json(response, 200, provider.chargeView(chargeFor(url.searchParams.get('reference') ?? '')));
      }
      if (method === 'GET' && (match = /^\/v1\/charges\/([A-Za-z0-9_]+)$/.exec(path))) {
        return json(response, 200, provider.chargeView(provider.getCharge(match[1] as string)));
      }
      if (method === 'POST' && (match = /^\/v1\/charges\/([A-Za-z0-9_]+)\/cancel$/.exec(path))) {
        const canceled = provider.cancelCharge(provider.getCharge(match[1] as string));
        return json(response, 200, provider.chargeView(canceled));
      }
      if (method === 'POST' && path === '/v1/transfers') {
        const { transfer, created } = provider.createTransfer(controlInput(transferRequest, body));
        return json(response, created ? 201 : 200, provider.transferView(transfer));
      }
      if (method === 'GET' && path === '/v1/transfers') {
        return json(response, 200, provider.transferView(transferFor(url.searchParams.get('reference') ?? '')));
      }
      if (method === 'GET' && (match = /^\/v1\/transfers\/([A-Za-z0-9_]+)$/.exec(path))) {
        return json(response, 200, provider.transferView(provider.getTransfer(match[1] as string)));
      }
      if (method === 'POST' && (match = /^\/v1\/transfers\/([A-Za-z0-9_]+)\/cancel$/.exec(path))) {
        const canceled = provider.cancelTransfer(provider.getTransfer(match[1] as string));
        return json(response, 200, provider.transferView(canceled));
      }
      if (method === 'GET' && (match = /^\/v1\/settlements\/([0-9]{4}-[0-9]{2}-[0-9]{2})\.csv$/.exec(path))) {
        const csv = writeSettlement(match[1] as string);
        response.writeHead(200, { 'content-type': 'text/csv; charset=utf-8', 'cache-control': 'no-store' });
        response.end(csv);
        return;
      }
      throw new ControlRefusal(404, 'not found');
    }

    // The hosted payer page: what the payer's browser opens (no authentication, like a real checkout link).
    if ((match = /^\/pay\/(ch_[a-f0-9]{24})(\/pay|\/decline)?$/.exec(path))) {
      const charge = provider.store.charges.get(match[1] as string);
      if (!charge) return html(response, 404, notFoundPage);
      if (method === 'GET' && match[2] === undefined)
        return html(response, 200, renderPayPage(charge, clock()), pageCsp(charge));
      if (method === 'POST' && match[2] !== undefined) {
        const form = new URLSearchParams(body.toString('utf8'));
        const name = form.get('name')?.trim().slice(0, 200);
        const documentNumber = form.get('documentNumber')?.trim().slice(0, 64);
        const payer = { ...(name ? { name } : {}), ...(documentNumber ? { documentNumber } : {}) };
        try {
          provider.settleCharge(
            charge,
            match[2] === '/pay' ? { paid: true, ...(Object.keys(payer).length > 0 ? { payer } : {}) } : { paid: false },
          );
        } catch (error) {
          // Paid, declined or expired meanwhile: the page shows what it is now.
          if (!(error instanceof ProviderError)) throw error;
        }
        // Like a real checkout: with a returnUrl the payer goes back to the shop, else sees the result here.
        const settled = provider.store.charges.get(charge.id) ?? charge;
        const location = settled.status !== 'open' && settled.returnUrl ? settled.returnUrl : `/pay/${charge.id}`;
        response.writeHead(303, { location, 'cache-control': 'no-store' });
        response.end();
        return;
      }
      throw new ControlRefusal(405, 'method not allowed');
    }

    // Test controls: plain JSON POSTs without authentication (decisions.md, "Channels").
    if (path.startsWith('/control/')) return controls.handle(method, url, body, response);
    throw new ControlRefusal(404, 'not found');
  }

  const server = createServer((request, response) => {
    route(request, response)
      .finally(() => {
        if (slowed.has(request)) {
          log.info({ method: request.method, url: request.url, callerGone: response.destroyed }, 'slow call served');
        }
      })
      .catch((error: unknown) => {
        if (error instanceof ControlRefusal || error instanceof ProviderError) {
          if (!response.headersSent) json(response, error.status, { error: error.message });
          return;
        }
        log.error({ err: error, method: request.method, url: request.url }, 'request failed');
        if (!response.headersSent) json(response, 500, { error: 'internal error' });
      });
  });

  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  let settledVersion = -1;
  let settledDay = '';
  let closed = false;

  async function step(): Promise<void> {
    provider.tick();
    await notifier.deliverDue();
    // Keep today's settlement file current; on a new day, finish yesterday's first.
    const today = new Date(clock()).toISOString().slice(0, 10);
    if (settledDay !== today && settledDay !== '') writeSettlement(settledDay);
    if (settledVersion !== store.version || settledDay !== today) {
      settledVersion = store.version;
      settledDay = today;
      writeSettlement(today);
    }
  }

  const loop = () => {
    if (closed) return;
    inFlight = step()
      .catch((error: unknown) => log.error({ err: error }, 'background step failed'))
      .finally(() => {
        if (!closed) timer = setTimeout(loop, config.tickMs);
      });
  };

  const simulator: Simulator = {
    server,
    provider,
    notifier,
    store,
    log,
    url: '',
    async listen() {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, () => resolve());
      });
      const { port } = server.address() as AddressInfo;
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      simulator.url = `http://${host}:${port}`;
      if (config.publicUrl === undefined) provider.options.publicUrl = simulator.url;
      loop();
      return simulator.url;
    },
    step,
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await inFlight;
      store.close();
    },
  };
  return simulator;
}

const notFoundPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Not found · PSP simulator</title></head>
<body><main><h1>${escapeHtml('No such payment')}</h1></main></body></html>
`;
