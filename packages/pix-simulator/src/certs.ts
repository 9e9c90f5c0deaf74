import 'reflect-metadata'; // @peculiar/x509's dependency injection (tsyringe) needs the Reflect polyfill
import { webcrypto } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { writeFileAtomic } from '@paygate/simulator-kit';

/** node's WebCrypto, typed as the library's provider parameter (the DOM's `Crypto`). */
const crypto = webcrypto as unknown as NonNullable<Parameters<typeof x509.X509CertificateGenerator.create>[1]>;
const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const YEAR_MS = 365 * 86_400_000;

/** The absolute paths of the simulator's TLS material, all PEM. */
export interface TlsFiles {
  readonly dir: string;
  /** The simulator's own CA: it signs every certificate below; the platform's `caFile`. */
  readonly caCert: string;
  readonly caKey: string;
  /** The API's server certificate: 127.0.0.1, ::1 and localhost. */
  readonly serverCert: string;
  readonly serverKey: string;
  /** The platform's client certificate and key (its `certFile` and `keyFile`). */
  readonly clientCert: string;
  readonly clientKey: string;
  /** The simulator's own client certificate, presented on https callbacks. */
  readonly callbackCert: string;
  readonly callbackKey: string;
}

export function tlsFiles(dataDir: string): TlsFiles {
  const dir = join(dataDir, 'tls');
  return {
    dir,
    caCert: join(dir, 'ca.pem'),
    caKey: join(dir, 'ca-key.pem'),
    serverCert: join(dir, 'server.pem'),
    serverKey: join(dir, 'server-key.pem'),
    clientCert: join(dir, 'client.pem'),
    clientKey: join(dir, 'client-key.pem'),
    callbackCert: join(dir, 'callback.pem'),
    callbackKey: join(dir, 'callback-key.pem'),
  };
}

async function privatePem(key: webcrypto.CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await crypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

function writeKey(path: string, pem: string): void {
  writeFileAtomic(path, pem);
  chmodSync(path, 0o600);
}

/**
 * Makes the TLS material on first start (ECDSA P-256, ten years): a CA, the server certificate,
 * a client certificate for the platform and one for the simulator's callbacks, all signed by the
 * CA. Existing files are kept, so the platform's configuration stays valid across restarts.
 */
export async function ensureCertificates(dataDir: string): Promise<TlsFiles> {
  const files = tlsFiles(dataDir);
  if (existsSync(files.caCert) && existsSync(files.callbackKey)) return files;
  mkdirSync(files.dir, { recursive: true, mode: 0o700 });
  const notBefore = new Date(Date.now() - 3_600_000);
  const notAfter = new Date(Date.now() + 10 * YEAR_MS);
  const caKeys = await crypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const ca = await x509.X509CertificateGenerator.createSelfSigned(
    {
      name: 'CN=paygate-pix simulator CA',
      keys: caKeys,
      notBefore,
      notAfter,
      signingAlgorithm: ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey, false, crypto),
      ],
    },
    crypto,
  );

  const issue = async (
    subject: string,
    usage: x509.ExtendedKeyUsage,
    names: { type: 'ip' | 'dns'; value: string }[],
  ) => {
    const keys = await crypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
    const cert = await x509.X509CertificateGenerator.create(
      {
        subject,
        issuer: ca.subject,
        publicKey: keys.publicKey,
        signingKey: caKeys.privateKey,
        notBefore,
        notAfter,
        signingAlgorithm: ALGORITHM,
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
          new x509.ExtendedKeyUsageExtension([usage], false),
          ...(names.length > 0 ? [new x509.SubjectAlternativeNameExtension(names, false)] : []),
          await x509.AuthorityKeyIdentifierExtension.create(ca, false, crypto),
        ],
      },
      crypto,
    );
    return { cert: cert.toString('pem'), key: await privatePem(keys.privateKey) };
  };

  const server = await issue('CN=127.0.0.1', x509.ExtendedKeyUsage.serverAuth, [
    { type: 'ip', value: '127.0.0.1' },
    { type: 'ip', value: '::1' },
    { type: 'dns', value: 'localhost' },
  ]);
  const client = await issue('CN=paygate platform', x509.ExtendedKeyUsage.clientAuth, []);
  const callback = await issue('CN=paygate-pix callbacks', x509.ExtendedKeyUsage.clientAuth, []);

  // Keys first, the CA certificate last: its presence (with the last key) marks the set complete.
  writeKey(files.caKey, await privatePem(caKeys.privateKey));
  writeKey(files.serverKey, server.key);
  writeKey(files.clientKey, client.key);
  writeFileAtomic(files.serverCert, server.cert);
  writeFileAtomic(files.clientCert, client.cert);
  writeFileAtomic(files.callbackCert, callback.cert);
  writeFileAtomic(files.caCert, ca.toString('pem'));
  writeKey(files.callbackKey, callback.key);
  return files;
}

export const readPem = (path: string): string => readFileSync(path, 'utf8');
