/**
 * A self-signed certificate for `paygate-merchant listen --https`, made with node:crypto alone
 * (no openssl on the path, no dependency): an ECDSA P-256 key and an X.509 v3 certificate for the
 * loopback names, valid for 825 days, that is its own CA (so that a platform told to trust it,
 * `PAYGATE_WEBHOOK_EXTRA_CA`, verifies the receiver with it).
 */
import { createPublicKey, generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';

/** One DER element: tag, length, contents. */
function der(tag: number, ...contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  let length: Buffer;
  if (body.length < 0x80) length = Buffer.from([body.length]);
  else {
    const bytes: number[] = [];
    for (let n = body.length; n > 0; n >>= 8) bytes.unshift(n & 0xff);
    length = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), length, body]);
}

const sequence = (...contents: Buffer[]) => der(0x30, ...contents);
const set = (...contents: Buffer[]) => der(0x31, ...contents);

function oid(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split('.').map(Number) as [number, number, ...number[]];
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const groups: number[] = [arc & 0x7f];
    for (let n = arc >> 7; n > 0; n >>= 7) groups.unshift((n & 0x7f) | 0x80);
    bytes.push(...groups);
  }
  return der(0x06, Buffer.from(bytes));
}

/** X.509 time: UTCTime until 2049, GeneralizedTime after (RFC 5280, 4.1.2.5). */
function time(date: Date): Buffer {
  const iso = date.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return date.getUTCFullYear() < 2050 ? der(0x17, Buffer.from(`${iso.slice(2)}Z`)) : der(0x18, Buffer.from(`${iso}Z`));
}

function ipBytes(address: string): Buffer {
  if (isIP(address) === 4) return Buffer.from(address.split('.').map(Number));
  const [head = '', tail = ''] = address.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const left = groups(head);
  const right = groups(tail);
  const all = address.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return Buffer.concat(all.map((group) => Buffer.from(group.padStart(4, '0'), 'hex')));
}

const ECDSA_WITH_SHA256 = sequence(oid('1.2.840.10045.4.3.2'));

/** A new key and its self-signed certificate for `hosts` (IP addresses and DNS names), as PEM. */
export function selfSignedCertificate(hosts: readonly string[], now = new Date()): { cert: string; key: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const name = sequence(set(sequence(oid('2.5.4.3'), der(0x0c, Buffer.from('paygate-merchant listen')))));
  const altNames = [...new Set(hosts)].map((host) =>
    isIP(host) ? der(0x87, ipBytes(host)) : der(0x82, Buffer.from(host, 'ascii')),
  );
  const extensions = der(
    0xa3,
    sequence(
      // basicConstraints, critical: CA (it is its own trust anchor)
      sequence(oid('2.5.29.19'), der(0x01, Buffer.from([0xff])), der(0x04, sequence(der(0x01, Buffer.from([0xff]))))),
      // subjectAltName: the names TLS checks
      sequence(oid('2.5.29.17'), der(0x04, sequence(...altNames))),
      // extendedKeyUsage: serverAuth
      sequence(oid('2.5.29.37'), der(0x04, sequence(oid('1.3.6.1.5.5.7.3.1')))),
    ),
  );
  const serial = randomBytes(16);
  serial[0] = (serial[0] as number) & 0x7f; // a positive INTEGER
  const tbs = sequence(
    der(0xa0, der(0x02, Buffer.from([2]))), // v3
    der(0x02, serial),
    ECDSA_WITH_SHA256,
    name,
    sequence(time(new Date(now.getTime() - 86_400_000)), time(new Date(now.getTime() + 825 * 86_400_000))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    extensions,
  );
  const signature = sign('sha256', tbs, { key: privateKey, dsaEncoding: 'der' });
  const certificate = sequence(tbs, ECDSA_WITH_SHA256, der(0x03, Buffer.from([0]), signature));
  const lines = certificate.toString('base64').match(/.{1,64}/g) ?? [];
  const cert = `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
  // Checked before it is handed out: it parses, and its signature is its own key's.
  const parsed = new X509Certificate(cert);
  if (!parsed.verify(createPublicKey(cert))) throw new Error('the self-signed certificate does not verify');
  return { cert, key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
}
