import {
  type BareItem,
  type InnerList,
  type Item,
  type Parameters,
  parseDictionary,
  serializeByteSequence,
  serializeDictionary,
  serializeInnerList,
  serializeKey,
} from 'structured-headers';
import { MAX_SIGNATURE_LIFETIME_SECONDS, SIGNATURE_ALG, UUID_V4 } from './constants.js';
import { err, ok, type Result } from './result.js';

/** A parameter of a signature in Signature-Input. */
export type SignatureParameter = 'created' | 'expires' | 'nonce' | 'keyid' | 'alg';

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
  /**
   * The order another signer wrote the parameters in, which the `@signature-params` line keeps;
   * absent for the specification's order (created, expires, nonce, keyid, alg).
   */
  readonly parameterOrder?: readonly SignatureParameter[];
}

/** What a Signature-Input header must look like: its label, its one list, whether keyid is required. */
export interface SignatureProfile {
  readonly label: string;
  readonly components: readonly (readonly string[])[];
  readonly keyid: boolean;
  /**
   * `any-signer`: the parameters in any order and the optional whitespace RFC 8941 allows, as
   * other RFC 9421 signers write them (requests). `canonical`: the canonical serialization in
   * the specification's order only (webhooks, which only the platform signs).
   */
  readonly form: 'any-signer' | 'canonical';
}

/** Why a Signature-Input or Signature header was refused. */
export interface SignatureHeaderError {
  readonly kind: 'invalid-signature-header';
  readonly reason: string;
}

const invalid = (reason: string) => err<SignatureHeaderError>({ kind: 'invalid-signature-header', reason });

/** The specification's parameter order, with or without keyid. */
function specifiedOrder(keyid: boolean): SignatureParameter[] {
  return ['created', 'expires', 'nonce', ...(keyid ? (['keyid'] as const) : []), 'alg'];
}

function toParameters(params: SignatureParams): Parameters {
  const values: Record<SignatureParameter, BareItem | undefined> = {
    created: params.created,
    expires: params.expires,
    nonce: params.nonce,
    keyid: params.keyid,
    alg: SIGNATURE_ALG,
  };
  const specified = specifiedOrder(params.keyid !== undefined);
  const order = params.parameterOrder ?? specified;
  if (order.length !== specified.length || !specified.every((name) => order.includes(name))) {
    throw new Error(`parameterOrder must name each of ${specified.join(', ')} once`);
  }
  return new Map(order.map((name) => [name, values[name] as BareItem]));
}

function toInnerList(params: SignatureParams): InnerList {
  return [params.components.map((name): Item => [name, new Map()]), toParameters(params)];
}

/**
 * The `@signature-params` value: the inner list with its parameters, without the label, in
 * canonical RFC 8941 form. Parameter order is `parameterOrder` when set, else created, expires,
 * nonce, keyid (webhooks), alg.
 */
export function serializeSignatureParams(params: SignatureParams): string {
  return serializeInnerList(toInnerList(params));
}

/**
 * The full Signature-Input header value: `<label>=<signature params>`, a dictionary of that one
 * member. A signer passes the `@signature-params` value it already serialized for the base.
 */
export function serializeSignatureInput(
  params: SignatureParams,
  signatureParams: string = serializeSignatureParams(params),
): string {
  return `${serializeKey(params.label)}=${signatureParams}`;
}

/** The Signature header value: `<label>=:<base64 signature>:`. */
export function serializeSignature(label: string, signature: Uint8Array): string {
  return `${serializeKey(label)}=${serializeByteSequence(toArrayBuffer(signature))}`;
}

function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

/** The text with every space and tab outside RFC 8941 strings removed. */
function withoutWhitespace(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (c !== ' ' && c !== '\t') {
      out += c;
    }
  }
  return out;
}

/**
 * The first parameter key a dictionary member repeats, read from the raw text: RFC 8941
 * parsing keeps only the last value of a repeated key, so the parsed form cannot show it.
 * Only member parameters count (those outside parentheses); `text` must already parse.
 */
function repeatedParameter(text: string): string | undefined {
  let seen = new Set<string>();
  let inString = false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) seen = new Set();
    else if (c === ';' && depth === 0) {
      const key = /^ *([a-z*][a-z0-9_.*-]*)/.exec(text.slice(i + 1))?.[1];
      if (key === undefined) continue;
      if (seen.has(key)) return key;
      seen.add(key);
    }
  }
  return undefined;
}

/**
 * Parses an RFC 8941 dictionary that is in canonical form, or (with `whitespace`) in canonical
 * form apart from the optional whitespace RFC 8941 allows. Anything else that parses (leading
 * zeros, a zero fraction, a repeated key) is refused, so that the header and the re-serialized
 * `@signature-params` line can never disagree about what was signed.
 */
function parseCanonical(
  header: string,
  whitespace: 'optional' | 'none' = 'none',
): Result<{ dictionary: Map<string, Item | InnerList>; canonical: string }, SignatureHeaderError> {
  let dictionary: Map<string, Item | InnerList>;
  try {
    dictionary = parseDictionary(header);
  } catch {
    return invalid('not an RFC 8941 dictionary');
  }
  let canonical: string | undefined;
  try {
    canonical = serializeDictionary(dictionary);
  } catch {
    canonical = undefined;
  }
  // What every signer following the specification sends. A repeated key cannot hide in it: the
  // parsed form keeps one value of a repeated key, which serializes to a different text.
  if (canonical === header) return ok({ dictionary, canonical });
  const repeated = repeatedParameter(header);
  if (repeated !== undefined) return invalid(`parameter ${repeated} is repeated`);
  if (canonical === undefined) return invalid('not a serializable RFC 8941 dictionary');
  if (whitespace === 'none') return invalid('not in canonical RFC 8941 form');
  // The parser has placed every space and tab, so the texts without them compare the rest.
  if (withoutWhitespace(canonical) !== withoutWhitespace(header)) {
    return invalid('not in canonical RFC 8941 form (apart from optional whitespace)');
  }
  return ok({ dictionary, canonical });
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((name, i) => name === b[i]);
}

const isInteger = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value);

/**
 * Parses a Signature-Input header strictly against a profile: exactly one member with the
 * profile's label; an inner list of plain strings equal to one of the profile's component
 * lists; integer `created` and `expires` with `0 < expires - created <= 300`; a UUID v4
 * `nonce`; `alg` = "ed25519"; `keyid` exactly when the profile asks for it; each parameter
 * once and nothing else. A `canonical` profile also requires the canonical serialization in
 * the order created, expires, nonce, keyid, alg; an `any-signer` profile takes the parameters
 * in any order, with optional whitespace, and records their order in `parameterOrder`.
 */
export function parseSignatureInput(
  header: string,
  profile: SignatureProfile,
): Result<SignatureParams, SignatureHeaderError> {
  const read = readSignatureInput(header, profile);
  return read.ok ? ok(read.value.params) : read;
}

/**
 * {@link parseSignatureInput}, with the `@signature-params` value a verifier's signature base
 * ends with: the member's canonical serialization, which the strict parse has just produced, so
 * that verifying does not serialize the parameters again. It equals
 * `serializeSignatureParams(params)`.
 */
export function readSignatureInput(
  header: string,
  profile: SignatureProfile,
): Result<{ params: SignatureParams; signatureParams: string }, SignatureHeaderError> {
  const parsed = parseCanonical(header, profile.form === 'any-signer' ? 'optional' : 'none');
  if (!parsed.ok) return parsed;
  const { dictionary, canonical } = parsed.value;
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

  // The verifier rebuilds the @signature-params line from these values: every value is checked
  // and the header canonical (apart from whitespace), so the order of the keys is all that could
  // still differ from the line that was signed. It is kept, or, on webhooks, must be the specified one.
  const specified = specifiedOrder(profile.keyid);
  const received = [...parameters.keys()] as SignatureParameter[];
  const inOrder = sameList(received, specified);
  if (!inOrder && profile.form === 'canonical') {
    return invalid(`parameters must be in the order ${specified.join(', ')}`);
  }

  const params: SignatureParams = {
    label: profile.label,
    components,
    created,
    expires,
    nonce,
    ...(typeof keyid === 'string' ? { keyid } : {}),
    ...(inOrder ? {} : { parameterOrder: received }),
  };
  // The one member, canonical: `<label>=<signature params>`.
  return ok({ params, signatureParams: canonical.slice(serializeKey(profile.label).length + 1) });
}

/**
 * Parses a Signature header: exactly one member, with the expected label, holding a 64-byte
 * sequence, returned as a `Uint8Array` (the Node entry's `parseSignature` returns a Buffer).
 */
export function parseSignatureBytes(header: string, label: string): Result<Uint8Array, SignatureHeaderError> {
  const parsed = parseCanonical(header);
  if (!parsed.ok) return parsed;
  const { dictionary } = parsed.value;
  if (dictionary.size !== 1) return invalid('exactly one signature is allowed');
  const member = dictionary.get(label);
  if (member === undefined) return invalid(`no signature labelled ${label}`);
  const [value, parameters] = member;
  if (!(value instanceof ArrayBuffer) || parameters.size !== 0) return invalid('the signature is not a byte sequence');
  if (value.byteLength !== 64) return invalid('an Ed25519 signature is 64 bytes');
  return ok(new Uint8Array(value));
}
