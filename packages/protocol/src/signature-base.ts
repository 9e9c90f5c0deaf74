import { err, ok, type Result } from './result.js';
import { type SignatureParams, serializeSignatureInput, serializeSignatureParams } from './signature-input.js';

/** The parts of an HTTP message that components are derived from, exactly as sent. */
export interface MessageParts {
  /** Request method; `@method` is its uppercase form. */
  readonly method: string;
  /** Request path exactly as sent, never decoded or normalized. */
  readonly path: string;
  /** Raw query string without its `?`; `undefined` or empty when there is none. */
  readonly query?: string | undefined;
  /** Header values by lowercase name, exactly as sent. */
  readonly headers: Readonly<Record<string, string | undefined>>;
}

/** Why a signature base could not be built. */
export interface SignatureBaseError {
  readonly kind: 'missing-component';
  readonly component: string;
}

/** Value of one covered component; `undefined` for a header the message lacks. */
export function componentValue(parts: MessageParts, component: string): string | undefined {
  switch (component) {
    case '@method':
      return parts.method.toUpperCase();
    case '@path':
      return parts.path;
    case '@query':
      return `?${parts.query ?? ''}`;
    default:
      return parts.headers[component];
  }
}

/**
 * The RFC 9421 signature base as the specification fixes it: one `"<name>": <value>` line per
 * covered component in order, then the `"@signature-params"` line, joined by LF with no
 * trailing newline. Returns the name of the first missing component instead when one is absent.
 * `signatureParams` is `serializeSignatureParams(params)`, given when the caller has it already.
 */
export function buildSignatureBase(
  parts: MessageParts,
  params: SignatureParams,
  signatureParams: string = serializeSignatureParams(params),
): Result<string, SignatureBaseError> {
  const lines: string[] = [];
  for (const component of params.components) {
    const value = componentValue(parts, component);
    // A header value with a line break would let one line pose as two.
    if (value === undefined || /[\r\n]/.test(value)) {
      return err({ kind: 'missing-component', component });
    }
    lines.push(`"${component}": ${value}`);
  }
  lines.push(`"@signature-params": ${signatureParams}`);
  return ok(lines.join('\n'));
}

/**
 * What a signer signs and sends, before the signature itself: the signature base, and the
 * Signature-Input header. The parameters are serialized once, the base's `@signature-params`
 * line and the Signature-Input member being the same text. Throws when a covered component is
 * missing (a signer's own fault, never the peer's).
 */
export function prepareSignature(
  parts: MessageParts,
  params: SignatureParams,
): { signatureBase: string; signatureInput: string } {
  const signatureParams = serializeSignatureParams(params);
  const base = buildSignatureBase(parts, params, signatureParams);
  if (!base.ok) throw new Error(`cannot sign: missing ${base.error.component}`);
  return { signatureBase: base.value, signatureInput: serializeSignatureInput(params, signatureParams) };
}
