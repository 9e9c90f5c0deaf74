/**
 * The merchants' webhook receivers: real HTTP servers on loopback that verify each delivery as
 * a shop would (the protocol package's verifyWebhook over the raw bytes) and record it, and that
 * misbehave on command: answer 5xx, never answer (the platform times out), or close the
 * connection in the middle of the answer's body.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { verifyWebhook } from '@paygate/protocol';

export type ReceiverMode = 'ok' | '5xx' | 'timeout' | 'cut';

/** One delivery attempt as the receiver saw it. */
export interface Delivery {
  readonly at: number;
  readonly eventId: string | undefined;
  readonly body: Buffer;
  readonly verified: boolean;
  /**
   * How it was answered: `ok` and `cut` said 2xx (`cut` then closed the connection mid-body, so
   * whether the platform counts it delivered is its choice), `5xx` and `timeout` did not.
   */
  readonly mode: ReceiverMode;
}

export class Receiver {
  readonly deliveries: Delivery[] = [];
  mode: ReceiverMode = 'ok';
  url = '';
  private server: Server | undefined;
  private readonly held = new Set<ServerResponse>();
  private readonly sockets = new Set<Socket>();

  constructor(
    readonly merchant: string,
    private readonly keys: { keyid: string; publicKey: string }[],
  ) {}

  async start(): Promise<void> {
    const server = createServer((req, res) => this.handle(req, res));
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** Sets the mode; back to `ok`, the answers held by `timeout` are given up (the platform has). */
  setMode(mode: ReceiverMode): void {
    this.mode = mode;
    if (mode !== 'timeout') {
      for (const res of this.held) res.destroy();
      this.held.clear();
    }
  }

  /** Event ids answered with a 2xx status so far. */
  acknowledged(): Set<string> {
    return new Set(
      this.deliveries.filter((d) => (d.mode === 'ok' || d.mode === 'cut') && d.eventId).map((d) => d.eventId as string),
    );
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      const target = req.url ?? '/';
      const mark = target.indexOf('?');
      const verdict = await verifyWebhook(
        {
          method: req.method ?? '',
          path: mark < 0 ? target : target.slice(0, mark),
          query: mark < 0 ? undefined : target.slice(mark + 1),
          headers: req.rawHeaders,
          body,
        },
        {
          now: Math.floor(Date.now() / 1000),
          publicKeys: new Map(this.keys.map((key) => [key.keyid, Buffer.from(key.publicKey, 'base64')])),
        },
      );
      const header = req.headers['webhook-event-id'];
      const mode = this.mode;
      this.deliveries.push({
        at: Date.now(),
        eventId: typeof header === 'string' ? header : undefined,
        body,
        verified: verdict.ok,
        // A delivery that fails verification is refused (4xx), as a shop must: never acknowledged.
        mode: verdict.ok ? mode : '5xx',
      });
      if (!verdict.ok) {
        res.writeHead(401, { 'content-type': 'text/plain' }).end('bad signature');
        return;
      }
      switch (mode) {
        case 'ok':
          res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
          return;
        case '5xx':
          res.writeHead(503, { 'content-type': 'text/plain' }).end('busy');
          return;
        case 'timeout':
          this.held.add(res);
          return;
        case 'cut':
          // The status line and part of the body, then the connection goes away mid-body.
          res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '64' });
          res.write('accepted, writing the rest of');
          setTimeout(() => res.socket?.destroy(), 10);
          return;
      }
    });
  }
}
