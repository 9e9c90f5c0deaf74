// Bench only: a merchant's webhook receiver that verifies every delivery with the protocol
// package (as the SDK does) and answers 200, or 400 when a signature does not verify.
// Reads WEBHOOK_KEYS (JSON [{keyid, publicKey}]); GET /stats answers {verified, refused}.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook } from '@paygate/protocol';

const keys = JSON.parse(process.env.WEBHOOK_KEYS as string) as { keyid: string; publicKey: string }[];
const publicKeys = new Map(keys.map((key) => [key.keyid, Buffer.from(key.publicKey, 'base64')]));
let verified = 0;
let refused = 0;

const server = createServer((req, res) => {
  if (req.method === 'GET') {
    res.end(JSON.stringify({ verified, refused }));
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', async () => {
    const target = req.url ?? '/';
    const mark = target.indexOf('?');
    const result = await verifyWebhook(
      {
        method: req.method,
        path: mark < 0 ? target : target.slice(0, mark),
        query: mark < 0 ? undefined : target.slice(mark + 1),
        headers: req.rawHeaders,
        body: Buffer.concat(chunks),
      },
      { now: Math.floor(Date.now() / 1000), publicKeys },
    );
    if (result.ok) verified++;
    else refused++;
    res.writeHead(result.ok ? 200 : 400).end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
});
