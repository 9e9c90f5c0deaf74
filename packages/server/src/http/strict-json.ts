import type { FastifyInstance } from 'fastify';
import { DomainError, validationFailed } from '../errors.js';

/** Longest `field` a refusal echoes (member names can be as long as the body). */
const MAX_FIELD_LENGTH = 256;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/** Why a member of a JSON text is refused, and where: the dotted path zod would report. */
export interface BadMember {
  readonly path: string;
  readonly reason: 'duplicate' | 'prototype';
}

/**
 * Scans JSON text that `JSON.parse` has already accepted for a member name given twice in one
 * object (compared after unescaping, so `"a"` and `"\u0061"` are the same name), or a member that
 * could poison a prototype (`__proto__`, `constructor.prototype`). Returns the first one, or
 * `undefined`. Strings are skipped with `indexOf`, so the cost is one pass over the structure.
 * The text must be valid JSON: on anything else the answer is meaningless.
 */
export function findBadMember(text: string): BadMember | undefined {
  // One frame per open object or array: the names seen (objects) or null (arrays), and the
  // current member name or element index, for the path.
  const seen: (Set<string> | null)[] = [];
  const at: (string | number)[] = [];
  let depth = -1;
  let expectName = false;
  const length = text.length;
  const pathTo = () => at.slice(0, depth + 1).join('.');
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i + 1;
      let end = text.indexOf('"', start);
      for (;;) {
        let backslashes = 0;
        while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
        if (backslashes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      if (expectName) {
        const raw = text.slice(start, end);
        const name = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
        const names = seen[depth] as Set<string>;
        const duplicate = names.has(name);
        at[depth] = name;
        if (duplicate) return { path: pathTo(), reason: 'duplicate' };
        if (name === '__proto__' || (name === 'prototype' && depth > 0 && at[depth - 1] === 'constructor')) {
          return { path: pathTo(), reason: 'prototype' };
        }
        names.add(name);
        expectName = false;
      }
      i = end;
    } else if (c === OPEN_OBJECT) {
      depth++;
      seen[depth] = new Set();
      at[depth] = '';
      expectName = true;
    } else if (c === OPEN_ARRAY) {
      depth++;
      seen[depth] = null;
      at[depth] = 0;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
      expectName = false;
    } else if (c === COMMA) {
      if (seen[depth] === null) at[depth] = (at[depth] as number) + 1;
      else expectName = true;
    }
  }
  return undefined;
}

/**
 * `JSON.parse`, but a member name given twice in one object (at any depth) or a prototype-
 * poisoning member is VALIDATION_FAILED naming it; JSON.parse would silently keep the last
 * duplicate, so two readers of the same bytes could disagree. A text that is not JSON throws
 * JSON.parse's SyntaxError.
 */
export function parseStrictJson(text: string): unknown {
  const value: unknown = JSON.parse(text);
  // Scalars cannot hold members; most bodies are objects.
  if (typeof value !== 'object' || value === null) return value;
  const bad = findBadMember(text);
  if (bad) {
    throw validationFailed([
      {
        field: bad.path.length > MAX_FIELD_LENGTH ? `${bad.path.slice(0, MAX_FIELD_LENGTH)}…` : bad.path,
        message: bad.reason === 'duplicate' ? 'is given more than once' : 'is not allowed',
      },
    ]);
  }
  return value;
}

/**
 * Replaces a scope's `application/json` parser (Fastify's keeps the last of duplicated names)
 * with `parseStrictJson`. A body that is not JSON is 400 BAD_REQUEST.
 */
export function strictJsonBodies(scope: FastifyInstance): void {
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseStrictJson(body as string));
    } catch (error) {
      done(
        error instanceof SyntaxError ? new DomainError('BAD_REQUEST', 'the request is malformed') : (error as Error),
        undefined,
      );
    }
  });
}
