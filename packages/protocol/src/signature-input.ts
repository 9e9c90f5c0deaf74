import {
  type BareItem,
  type InnerList,
  type Item,
  type Parameters,
  parseDictionary,
  serializeDictionary,
  serializeInnerList,
} from 'structured-headers';
import { MAX_SIGNATURE_LIFETIME_SECONDS, SIGNATURE_ALG, UUID_V4 } from './constants.js';
import { err, ok, type Result } from './result.js';

/** The parameters of one signature, as carried in Signature-Input. */
export interface SignatureParams {
  /** Dictionary key of the signature: `merchant` on requests, `platform` on webhooks. */
  readonly label: string;
  /** Covered component identifiers, in order. */
  readonly components: readonly string[];
  /** Signing time, Unix seconds. */
  readonly created: number;
  /** Expiry time, Unix seconds; at most `created + 300`. */
  readonly expires: number;
  /** UUID v4, fresh for every HTTP request. */
  readonly nonce: string;
  /** Key id; present on webhooks only. */
  readonly keyid?: string;
}

/** What a Signature-Input header must look like: its label, its one list, whether keyid is required. */
export interface SignatureProfile {
  readonly label: string;
  readonly components: readonly (readonly string[])[];
  readonly keyid: boolean;
}

/** Why a Signature-Input or Signature header was refused. */
export interface SignatureHeaderError {
  readonly kind: 'invalid-signature-header';
  readonly reason: string;
}

const invalid = (reason: string) => err<SignatureHeaderError>({ kind: 'invalid-signature-header', reason });

function toParameters(params: SignatureParams): Parameters {
  const parameters: Parameters = new Map<string, BareItem>([
    ['created', params.created],
    ['expires', params.expires],
    ['nonce', params.nonce],
  ]);
  if (params.keyid !== undefined) parameters.set('keyid', params.keyid);
  parameters.set('alg', SIGNATURE_ALG);
  return parameters;
}

function toInnerList(params: SignatureParams): InnerList {
  return [params.components.map((name): Item => [name, new Map()]), toParameters(params)];
}

/**
 * The `@signature-params` value: the inner list with its parameters, without the label.
 * Parameter order is created, expires, nonce, keyid (webhooks), alg.
 */
export function serializeSignatureParams(params: SignatureParams): string {
  return serializeInnerList(toInnerList(params));
}

/** The full Signature-Input header value: `<label>=<signature params>`. */
export function serializeSignatureInput(params: SignatureParams): string {
  return serializeDictionary(new Map([[params.label, toInnerList(params)]]));
}

/** The Signature header value: `<label>=:<base64 signature>:`. */
export function serializeSignature(label: string, signature: Uint8Array): string {
  return serializeDictionary(new Map([[label, [toArrayBuffer(signature), new Map()]]]));
}

function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

function parseCanonical(header: string): Result<Map<string, Item | InnerList>, SignatureHeaderError> {
  let dictionary: Map<string, Item | InnerList>;
  try {
    dictionary = parseDictionary(header);
  } catch {
    return invalid('not an RFC 8941 dictionary');
  }
  // Only the canonical serialization is accepted, so that the raw header text and the
  // re-serialized parameters can never disagree about what was signed.
  let canonical: string;
  try {
    canonical = serializeDictionary(dictionary);
  } catch {
    return invalid('not a serializable RFC 8941 dictionary');
  }
  if (canonical !== header) return invalid('not in canonical RFC 8941 form');
  return ok(dictionary);
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((name, i) => name === b[i]);
}

const isInteger = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value);

/**
 * Parses a Signature-Input header strictly against a profile: exactly one member with the
 * profile's label; an inner list of plain strings equal to one of the profile's component
 * lists; integer `created` and `expires` with `0 < expires - created <= 300`; a UUID v4
 * `nonce`; `alg` = "ed25519"; `keyid` exactly when the profile asks for it; nothing else; and
 * the parameters in the order created, expires, nonce, keyid, alg.
 */
export function parseSignatureInput(
  header: string,
  profile: SignatureProfile,
): Result<SignatureParams, SignatureHeaderError> {
  const parsed = parseCanonical(header);
  if (!parsed.ok) return parsed;
  const dictionary = parsed.value;
  if (dictionary.size !== 1) return invalid('exactly one signature is allowed');
  const member = dictionary.get(profile.label);
  if (member === undefined) return invalid(`no signature labelled ${profile.label}`);
  const [items, parameters] = member;
  if (!Array.isArray(items)) return invalid('the signature input is not an inner list');

  const components: string[] = [];
  for (const [name, itemParams] of items) {
    if (typeof name !== 'string' || itemParams.size !== 0) return invalid('components must be plain strings');
    components.push(name);
  }
  if (!profile.components.some((list) => sameList(list, components))) {
    return invalid('covered components are not the required list');
  }

  const allowed = new Set(['created', 'expires', 'nonce', 'alg', ...(profile.keyid ? ['keyid'] : [])]);
  for (const key of parameters.keys()) {
    if (!allowed.has(key)) return invalid(`parameter ${key} is not allowed`);
  }
  const created = parameters.get('created');
  const expires = parameters.get('expires');
  const nonce = parameters.get('nonce');
  const alg = parameters.get('alg');
  const keyid = parameters.get('keyid');
  if (!isInteger(created) || created < 0) return invalid('created must be a non-negative integer');
  if (!isInteger(expires)) return invalid('expires must be an integer');
  if (expires <= created) return invalid('expires must be after created');
  if (expires - created > MAX_SIGNATURE_LIFETIME_SECONDS) return invalid('expires - created exceeds 300 seconds');
  if (typeof nonce !== 'string' || !UUID_V4.test(nonce)) return invalid('nonce must be a UUID v4 string');
  if (alg !== SIGNATURE_ALG) return invalid('alg must be the string "ed25519"');
  if (profile.keyid && (typeof keyid !== 'string' || keyid.length === 0)) return invalid('keyid must be a string');

  // The verifier rebuilds the @signature-params line from these values in the specified order;
  // a header listing them in another order would not be the line that was signed. The header is
  // canonical and every value checked, so the order of the keys is all that could still differ.
  const order = ['created', 'expires', 'nonce', ...(profile.keyid ? ['keyid'] : []), 'alg'];
  if (!sameList([...parameters.keys()], order)) return invalid(`parameters must be in the order ${order.join(', ')}`);

  const params: SignatureParams = { label: profile.label, components, created, expires, nonce };
  return ok(typeof keyid === 'string' ? { ...params, keyid } : params);
}

/** Parses a Signature header: exactly one member, with the expected label, holding a 64-byte sequence. */
export function parseSignature(header: string, label: string): Result<Buffer, SignatureHeaderError> {
  const parsed = parseCanonical(header);
  if (!parsed.ok) return parsed;
  const dictionary = parsed.value;
  if (dictionary.size !== 1) return invalid('exactly one signature is allowed');
  const member = dictionary.get(label);
  if (member === undefined) return invalid(`no signature labelled ${label}`);
  const [value, parameters] = member;
  if (!(value instanceof ArrayBuffer) || parameters.size !== 0) return invalid('the signature is not a byte sequence');
  if (value.byteLength !== 64) return invalid('an Ed25519 signature is 64 bytes');
  return ok(Buffer.from(value));
}
