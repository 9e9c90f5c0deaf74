import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';
import type { Logger } from 'pino';

/**
 * The test controls every simulator offers: plain JSON over HTTP without authentication, used by
 * demos and by independent tests. A control answers `{"ok": true}` (or the state it reports), or
 * a 4xx `{"error": "<reason>"}`. A simulator declares its controls as a table of routes; the
 * control port serves them on a port of its own, or a simulator that has one HTTP server for
 * everything hands its `/control/` requests to {@link ControlPort.handle}.
 */

/** A refused control: answered with its status and `{"error": message}`. */
export class ControlRefusal extends Error {
  override readonly name = 'ControlRefusal';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** What a route gets: the body's bytes (at most {@link MAX_CONTROL_BODY}) and the URL. */
export interface ControlRequest {
  readonly body: Buffer;
  readonly url: URL;
}

/** A route's answer: the JSON to send with 200 (undefined → `{"ok": true}`). */
export type ControlHandler = (request: ControlRequest) => unknown;

/** Routes by `"METHOD /path"`, e.g. `"POST /control/booking"`. */
export type ControlRoutes = Readonly<Record<`${'GET' | 'POST'} /${string}`, ControlHandler>>;

/** A schema with zod's `safeParse` (kept structural so the kit does not pin a zod version). */
export interface BodySchema<T> {
  safeParse(
    value: unknown,
  ):
    | { success: true; data: T }
    | { success: false; error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } };
}

export const MAX_CONTROL_BODY = 64 * 1024;

/**
 * Parses a control's JSON body against `schema`, refusing with 400 and the first issue
 * (`"reason: Required"`). `emptyAs` stands for an empty body (by default an empty body is not JSON).
 */
export function controlInput<T>(schema: BodySchema<T>, body: Buffer, emptyAs?: unknown): T {
  let value: unknown;
  try {
    value = body.length === 0 && emptyAs !== undefined ? emptyAs : JSON.parse(body.toString('utf8'));
  } catch {
    throw new ControlRefusal(400, 'the body must be JSON');
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ` : '';
    throw new ControlRefusal(400, `${where}${issue?.message ?? 'invalid'}`);
  }
  return result.data;
}

/** Reads a request body of at most `limit` bytes; a larger one rejects with `tooLarge()`. */
export function readBody(
  request: IncomingMessage,
  limit = MAX_CONTROL_BODY,
  tooLarge: () => Error = () => new ControlRefusal(413, 'the body is too large'),
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    request.on('data', (chunk: Buffer) => {
      if (refused) return; // the rest is read and dropped, so the refusal can still be answered
      size += chunk.length;
      if (size > limit) {
        refused = true;
        chunks.length = 0;
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

/** Sends `value` as JSON (not cached). */
export function sendJson(response: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  response.end(body);
}

export interface ControlPortOptions {
  readonly routes: ControlRoutes;
  readonly log: Logger;
  /**
   * Maps a simulator's own domain errors to a refusal (status and reason); undefined for an
   * error that is not a refusal (answered 500 and logged). {@link ControlRefusal} is always one.
   */
  readonly refusal?: (error: unknown) => { readonly status: number; readonly message: string } | undefined;
}

export interface ControlPort {
  /** The HTTP server of a control port of its own (unused when a simulator calls `handle`). */
  readonly server: Server;
  /** `http://HOST:PORT` once listening, else ''. */
  readonly url: string;
  /** Serves one control request whose body was already read (for a simulator with one server). */
  handle(method: string, url: URL, body: Buffer, response: ServerResponse): Promise<void>;
  listen(port: number, host: string): Promise<string>;
  close(): Promise<void>;
}

/** The host part of a URL for a listen address: a wildcard shows as the loopback, IPv6 in brackets. */
export function urlHost(host: string): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return shown.includes(':') ? `[${shown}]` : shown;
}

/** A control port: the routes, `GET /healthz`, 404 for anything else. */
export function createControlPort(options: ControlPortOptions): ControlPort {
  const routes = new Map<string, ControlHandler>(Object.entries(options.routes));
  const refusalOf = (error: unknown) =>
    error instanceof ControlRefusal ? { status: error.status, message: error.message } : options.refusal?.(error);

  async function handle(method: string, url: URL, body: Buffer, response: ServerResponse): Promise<void> {
    try {
      if (method === 'GET' && url.pathname === '/healthz') return sendJson(response, 200, { ok: true });
      const route = routes.get(`${method} ${url.pathname}`);
      if (!route) throw new ControlRefusal(404, 'not found');
      const answer = await route({ body, url });
      sendJson(response, 200, answer === undefined ? { ok: true } : answer);
    } catch (error) {
      const refusal = refusalOf(error);
      if (refusal) {
        if (!response.headersSent) sendJson(response, refusal.status, { error: refusal.message });
        return;
      }
      options.log.error({ err: error, method, url: url.pathname }, 'control request failed');
      if (!response.headersSent) sendJson(response, 500, { error: 'internal error' });
    }
  }

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://control.invalid');
    readBody(request).then(
      (body) => handle(request.method ?? 'GET', url, body, response),
      (error: unknown) => {
        const refusal = refusalOf(error);
        if (!response.headersSent)
          sendJson(response, refusal?.status ?? 400, { error: refusal?.message ?? 'bad body' });
      },
    );
  });

  const port: ControlPort = {
    server,
    url: '',
    handle,
    listen: (wanted, host) =>
      listenOn(server, wanted, host).then((bound) => {
        (port as { url: string }).url = `http://${urlHost(host)}:${bound}`;
        return port.url;
      }),
    close: () => stopListening(server),
  };
  return port;
}

/** Listens on `port` (0: any free one) and `host`; resolves the bound port. */
export function listenOn(server: Server | NetServer, port: number, host: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Stops listening and ends open connections; resolves once closed (at once when not listening). */
export function stopListening(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
