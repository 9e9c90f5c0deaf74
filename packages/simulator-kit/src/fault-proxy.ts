/**
 * A TCP proxy that puts faults between a client and a server on loopback, for fault campaigns
 * and tests (`@paygate/simulator-kit/fault-proxy`, never loaded by a simulator). It forwards
 * bytes unchanged in both directions (TLS and SSH pass through it as they are) until told to
 * misbehave:
 *
 * - `pass`: forward;
 * - `delay`: every chunk, both ways, arrives `ms` later (order kept);
 * - `blackhole`: connections are accepted and bytes read, but nothing is forwarded either way
 *   and nothing answered, as when a link is cut without a word (the client waits for its own
 *   timeout); connections already open stop forwarding too;
 * - `reset`: connections open now and every new one are ended with a TCP reset (RST), as a
 *   firewall or a crashed peer's kernel does.
 *
 * `cut()` resets the connections open now and leaves the mode as it is. Back in `pass`, held
 * bytes of connections that survived are forwarded.
 */
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export type FaultMode =
  | { readonly kind: 'pass' }
  | { readonly kind: 'delay'; readonly ms: number }
  | { readonly kind: 'blackhole' }
  | { readonly kind: 'reset' };

export interface FaultProxyStats {
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Connections open now. */
  readonly open: number;
  /** Connections ended with a reset by the proxy (mode `reset` or `cut()`). */
  readonly reset: number;
}

export interface FaultProxy {
  /** The proxy's own port on its host (what the client is given instead of the server's). */
  readonly port: number;
  readonly host: string;
  /** The server behind it. */
  readonly target: { readonly host: string; readonly port: number };
  mode(): FaultMode;
  setMode(mode: FaultMode): void;
  /** Resets every connection open now. */
  cut(): number;
  stats(): FaultProxyStats;
  close(): Promise<void>;
}

/** One client connection and its upstream, with the bytes held while the mode holds them. */
interface Pair {
  readonly client: Socket;
  readonly upstream: Socket;
  /** Chunks waiting to go, per direction (blackhole), in order. */
  readonly held: { readonly toUpstream: Buffer[]; readonly toClient: Buffer[] };
}

export async function startFaultProxy(options: {
  readonly target: { readonly host?: string; readonly port: number };
  readonly host?: string;
  readonly port?: number;
}): Promise<FaultProxy> {
  const host = options.host ?? '127.0.0.1';
  const target = { host: options.target.host ?? '127.0.0.1', port: options.target.port };
  let current: FaultMode = { kind: 'pass' };
  const pairs = new Set<Pair>();
  let accepted = 0;
  let resets = 0;

  const reset = (pair: Pair) => {
    resets += 1;
    pairs.delete(pair);
    pair.client.resetAndDestroy();
    pair.upstream.destroy();
  };

  /** Sends `chunk` from one side to the other as the mode says (`to` is the receiving socket). */
  const forward = (pair: Pair, chunk: Buffer, to: Socket, queue: Buffer[]) => {
    const mode = current;
    if (mode.kind === 'blackhole' || queue.length > 0) {
      queue.push(chunk);
      return;
    }
    if (mode.kind === 'delay') {
      // A delayed chunk is held in the queue until its time, so later chunks cannot overtake it.
      queue.push(chunk);
      setTimeout(() => {
        if (queue[0] === chunk) flush(pair, to, queue);
      }, mode.ms).unref();
      return;
    }
    if (!to.destroyed) to.write(chunk);
  };

  /** Writes the held chunks of one direction while the mode lets them go. */
  const flush = (pair: Pair, to: Socket, queue: Buffer[]) => {
    while (queue.length > 0 && current.kind !== 'blackhole') {
      const chunk = queue.shift() as Buffer;
      if (!to.destroyed) to.write(chunk);
      if (current.kind === 'delay' && queue.length > 0) {
        const next = queue[0];
        const ms = current.ms;
        setTimeout(() => {
          if (queue[0] === next) flush(pair, to, queue);
        }, ms).unref();
        return;
      }
    }
  };

  const server: Server = createServer((client) => {
    accepted += 1;
    if (current.kind === 'reset') {
      resets += 1;
      client.resetAndDestroy();
      return;
    }
    const upstream = createConnection({ host: target.host, port: target.port });
    const pair: Pair = { client, upstream, held: { toUpstream: [], toClient: [] } };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => forward(pair, chunk, upstream, pair.held.toUpstream));
    upstream.on('data', (chunk: Buffer) => forward(pair, chunk, client, pair.held.toClient));
    // A half close is passed on once what was held has gone; an error ends both sides.
    client.on('end', () => (pair.held.toUpstream.length === 0 ? upstream.end() : end()));
    upstream.on('end', () => (pair.held.toClient.length === 0 ? client.end() : end()));
    client.on('error', end);
    upstream.on('error', () => {
      // The server refused or dropped us: the client sees a reset, as it would without the proxy.
      pairs.delete(pair);
      upstream.destroy();
      if (!client.destroyed) client.resetAndDestroy();
    });
    client.on('close', end);
    upstream.on('close', () => {
      if (pair.held.toClient.length === 0) client.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    host,
    target,
    mode: () => current,
    setMode(mode) {
      current = mode;
      if (mode.kind === 'reset') {
        for (const pair of [...pairs]) reset(pair);
      } else if (mode.kind !== 'blackhole') {
        for (const pair of pairs) {
          flush(pair, pair.upstream, pair.held.toUpstream);
          flush(pair, pair.client, pair.held.toClient);
        }
      }
    },
    cut() {
      const open = [...pairs];
      for (const pair of open) reset(pair);
      return open.length;
    },
    stats: () => ({ accepted, open: pairs.size, reset: resets }),
    async close() {
      for (const pair of [...pairs]) {
        pairs.delete(pair);
        pair.client.destroy();
        pair.upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
