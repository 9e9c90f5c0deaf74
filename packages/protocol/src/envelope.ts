import { decodeCanonicalBase64, encodeBase64 } from './base64.js';
import { ENVELOPE_ALG, ENVELOPE_VERSION, MAX_PLAINTEXT_BYTES, MAX_WIRE_BODY_BYTES } from './constants.js';
import type { BoxKeyPair } from './keys.js';
import { asBuffer } from './keys.js';
import { type BodyPublicKey, type EnvelopeError, envelopeText } from './request-parts.js';
import { err, ok, type Result } from './result.js';
import { BOX_PUBLIC_KEY_BYTES, SEAL_BYTES, sodium } from './sodium.js';

/** The sealed-box envelope, the wire body of every POST. */
export interface Envelope {
  readonly version: 1;
  readonly alg: typeof ENVELOPE_ALG;
  /** Id of the platform body key the box was sealed to. */
  readonly keyId: string;
  /** The raw `crypto_box_seal` output (ephemeral public key, tag and ciphertext). */
  readonly ciphertext: Buffer;
}

export type { BodyPublicKey, EnvelopeError } from './request-parts.js';

const invalid = (reason: string) => err<EnvelopeError>({ kind: 'invalid-envelope', reason });

/**
 * Seals business JSON bytes to the platform body key and returns the envelope's wire bytes.
 * Every call produces a different ciphertext. Plaintext over 1 MiB is refused.
 */
export function sealEnvelope(plaintext: Uint8Array, key: BodyPublicKey): Result<Buffer, EnvelopeError> {
  if (plaintext.length > MAX_PLAINTEXT_BYTES) return invalid('plaintext exceeds 1 MiB');
  if (key.publicKey.length !== BOX_PUBLIC_KEY_BYTES) return invalid('body public key is not 32 bytes');
  const ciphertext = sodium.boxSeal(asBuffer(plaintext), asBuffer(key.publicKey));
  // libsodium refuses a small-order public key.
  if (!ciphertext) return invalid('the body public key is a small-order point');
  return ok(Buffer.from(envelopeText(key.keyId, encodeBase64(ciphertext)), 'utf8'));
}

// --- strict parsing -------------------------------------------------------------------------
// JSON.parse keeps the last of duplicate keys and accepts any value type, so the envelope,
// which is a flat object of four known members, is scanned by hand: members are strings or
// integers, no key repeats, and nothing but JSON whitespace surrounds the object.

type Scalar = { kind: 'string'; value: string } | { kind: 'integer'; text: string };

const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const INTEGER_TOKEN = /-?(?:0|[1-9][0-9]*)(?![.eE0-9])/y;
/** A string token without escapes or control characters: its value is the text between the quotes. */
const PLAIN_STRING = /"([^"\\\u0000-\u001f]*)"/y;

class Scanner {
  private pos = 0;
  constructor(private readonly text: string) {}

  skipWhitespace(): void {
    while (this.pos < this.text.length && WHITESPACE.has(this.text.charCodeAt(this.pos))) this.pos++;
  }

  take(char: string): boolean {
    this.skipWhitespace();
    if (this.text[this.pos] !== char) return false;
    this.pos++;
    return true;
  }

  string(): string | undefined {
    this.skipWhitespace();
    // The common case (base64 ciphertext, key ids) in one regular-expression match instead of a
    // loop over every character and a JSON.parse of the token.
    PLAIN_STRING.lastIndex = this.pos;
    const plain = PLAIN_STRING.exec(this.text);
    if (plain) {
      this.pos = PLAIN_STRING.lastIndex;
      return plain[1];
    }
    if (this.text[this.pos] !== '"') return undefined;
    let end = this.pos + 1;
    for (;;) {
      const code = this.text.charCodeAt(end);
      if (Number.isNaN(code) || code < 0x20) return undefined;
      if (code === 0x22) break;
      end += code === 0x5c ? 2 : 1;
    }
    const token = this.text.slice(this.pos, end + 1);
    this.pos = end + 1;
    try {
      // The token is delimited; JSON.parse validates its escapes.
      return JSON.parse(token) as string;
    } catch {
      return undefined;
    }
  }

  scalar(): Scalar | undefined {
    this.skipWhitespace();
    if (this.text[this.pos] === '"') {
      const value = this.string();
      return value === undefined ? undefined : { kind: 'string', value };
    }
    INTEGER_TOKEN.lastIndex = this.pos;
    const match = INTEGER_TOKEN.exec(this.text);
    if (!match) return undefined;
    this.pos = INTEGER_TOKEN.lastIndex;
    return { kind: 'integer', text: match[0] };
  }

  atEnd(): boolean {
    this.skipWhitespace();
    return this.pos === this.text.length;
  }
}

function scanFlatObject(text: string): Map<string, Scalar> | string {
  const scanner = new Scanner(text);
  const members = new Map<string, Scalar>();
  if (!scanner.take('{')) return 'not a JSON object';
  if (!scanner.take('}')) {
    do {
      const key = scanner.string();
      if (key === undefined) return 'expected a member name';
      if (members.has(key)) return `duplicate member ${key}`;
      if (!scanner.take(':')) return 'expected a colon';
      const value = scanner.scalar();
      if (value === undefined) return `member ${key} is not a string or an integer`;
      members.set(key, value);
    } while (scanner.take(','));
    if (!scanner.take('}')) return 'expected the end of the object';
  }
  if (!scanner.atEnd()) return 'trailing content after the object';
  return members;
}

// ignoreBOM keeps a leading byte order mark in the text, where the scanner refuses it like any
// other content outside the object; the default would drop it silently.
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const ENVELOPE_FIELDS = ['version', 'alg', 'keyId', 'ciphertext'] as const;

/**
 * Parses envelope wire bytes strictly: UTF-8 JSON holding exactly `version` (the integer 1),
 * `alg`, `keyId` and `ciphertext` (canonical standard base64), no duplicate or unknown
 * members, no trailing content, at most 2 MiB. `contentEncryption` is the request's
 * Content-Encryption header, which `alg` must equal.
 */
export function parseEnvelope(body: Uint8Array, contentEncryption: string): Result<Envelope, EnvelopeError> {
  if (body.length > MAX_WIRE_BODY_BYTES) return invalid('wire body exceeds 2 MiB');
  let text: string;
  try {
    text = decoder.decode(body);
  } catch {
    return invalid('body is not UTF-8');
  }
  const members = scanFlatObject(text);
  if (typeof members === 'string') return invalid(members);
  if (members.size !== ENVELOPE_FIELDS.length || !ENVELOPE_FIELDS.every((field) => members.has(field))) {
    return invalid('the envelope must have exactly version, alg, keyId and ciphertext');
  }
  const version = members.get('version');
  const alg = members.get('alg');
  const keyId = members.get('keyId');
  const ciphertext = members.get('ciphertext');
  if (version?.kind !== 'integer' || version.text !== String(ENVELOPE_VERSION)) return invalid('version must be 1');
  if (alg?.kind !== 'string' || alg.value !== ENVELOPE_ALG) return invalid('unknown alg');
  if (alg.value !== contentEncryption) return invalid('alg differs from Content-Encryption');
  if (keyId?.kind !== 'string' || keyId.value.length === 0) return invalid('keyId must be a non-empty string');
  if (ciphertext?.kind !== 'string') return invalid('ciphertext must be a string');
  const sealed = decodeCanonicalBase64(ciphertext.value);
  if (!sealed) return invalid('ciphertext is not canonical standard base64');
  if (sealed.length < SEAL_BYTES) return invalid('ciphertext is shorter than a sealed box');
  return ok({ version: ENVELOPE_VERSION, alg: ENVELOPE_ALG, keyId: keyId.value, ciphertext: sealed });
}

/** Opens a raw sealed box with an X25519 key pair; `undefined` when it does not open. */
export function openSealedBox(ciphertext: Uint8Array, key: BoxKeyPair): Buffer | undefined {
  return sodium.boxSealOpen(asBuffer(ciphertext), key.publicKey, key.secretKey);
}

/**
 * Opens a parsed envelope with the body key its `keyId` selects. `lookup` returns the key
 * pair for a key id, or `undefined` for an unknown or retired id. The 1 MiB plaintext limit is
 * the caller's to enforce (`verifyRequest` does).
 */
export function openEnvelope(
  envelope: Envelope,
  lookup: (keyId: string) => BoxKeyPair | undefined,
): Result<Buffer, EnvelopeError> {
  const key = lookup(envelope.keyId);
  if (!key) return invalid('unknown keyId');
  const plaintext = openSealedBox(envelope.ciphertext, key);
  if (!plaintext) return invalid('the sealed box does not open');
  return ok(plaintext);
}
