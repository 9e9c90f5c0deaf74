/**
 * Reading and writing the XML itself, with `fast-xml-parser`: one strict front door for every
 * message read (UTF-8 only, well-formed, no DOCTYPE and so no entity of its own, namespaces
 * resolved on the root), small accessors that refuse a member that is missing or repeated, and one
 * builder for every message written.
 *
 * @module
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';

/** A message that cannot be read: `message` is one line saying where and why. */
export class ReadError extends Error {
  override name = 'ReadError';
}

/**
 * An error as one line of at most 300 characters: its message (white space runs, line breaks
 * included, made one space), or the thrown value as text.
 */
export function oneLine(error: unknown): string {
  const line = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').trim();
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}

/** What a reader answers for `error`: a {@link ReadError}'s message, anything else marked unreadable. */
export function readFailure(error: unknown): string {
  if (error instanceof ReadError) return oneLine(error);
  return oneLine(`unreadable: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
}

/** A leaf element read: its path, its text (entities decoded) and its attributes. */
export interface Leaf {
  readonly path: string;
  readonly text: string;
  readonly attributes: Readonly<Record<string, string>>;
}

/** What the parser makes of an element: text, an object of children (and `@_` attributes), or a list. */
export type XmlValue = string | XmlNode | XmlValue[];
export interface XmlNode {
  readonly [key: string]: XmlValue;
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  // Every value stays the text it was: amounts and identifiers are never turned into numbers.
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  // Entities are decoded by `decodeEntities` below, in one pass, with no limit to trip over on a
  // file of 10,000 names holding `&amp;`; a DOCTYPE (the only place an entity could be declared) is
  // refused before parsing.
  processEntities: false,
  // A CDATA section's text is taken as it is (no entity in it), so it is kept apart from the text.
  cdataPropName: '#cdata',
});

/** The five entities XML predefines. */
const PREDEFINED: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', apos: "'", quot: '"' };

/** Decodes predefined entities and character references in one pass; refuses any other `&`. */
function decodeEntities(text: string, where: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&([^;&\s]{0,10});?/g, (whole, name: string) => {
    if (!whole.endsWith(';')) throw new ReadError(`${where}: a bare '&' in text`);
    const predefined = PREDEFINED[name];
    if (predefined !== undefined) return predefined;
    const ref = /^#(?:x([0-9a-fA-F]{1,6})|([0-9]{1,7}))$/.exec(name);
    if (ref === null) throw new ReadError(`${where}: entity '&${name};' is not defined`);
    const code = ref[1] !== undefined ? parseInt(ref[1], 16) : Number(ref[2]);
    const allowed =
      code === 0x9 ||
      code === 0xa ||
      code === 0xd ||
      (code >= 0x20 && code <= 0xd7ff) ||
      (code >= 0xe000 && code <= 0xfffd) ||
      (code >= 0x10000 && code <= 0x10ffff);
    if (!allowed) throw new ReadError(`${where}: character reference '&${name};' is not an XML character`);
    return String.fromCodePoint(code);
  });
}

/** The document's text: bytes decoded as UTF-8 (strictly), a leading BOM dropped. */
function toText(xml: string | Uint8Array): string {
  if (typeof xml === 'string') return xml.replace(/^\uFEFF/, '');
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(xml);
  } catch {
    throw new ReadError('the file is not UTF-8');
  }
}

/** Characters XML 1.0 does not allow in a document: C0 controls but tab, LF and CR; U+FFFE, U+FFFF; lone surrogates. */
const NOT_XML_CHAR =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A parsed document: its root element, the root's namespace and the prefix its elements carry. */
export interface ParsedDocument {
  readonly namespace: string;
  readonly root: Element;
}

/**
 * Parses `xml` strictly: UTF-8 only (an encoding declaration naming anything else is refused), no
 * DOCTYPE or entity declaration (no XXE, no entity expansion), well-formed per `XMLValidator`, one
 * root element named `Document` whose namespace is declared on it (default or prefixed). Throws
 * {@link ReadError}.
 */
export function parseDocument(xml: string | Uint8Array): ParsedDocument {
  const text = toText(xml);
  const forbidden = NOT_XML_CHAR.exec(text);
  if (forbidden !== null) {
    const code = (forbidden[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
    throw new ReadError(`U+${code} at offset ${forbidden.index} is not an XML character`);
  }
  if (/<!DOCTYPE/i.test(text)) throw new ReadError('a DOCTYPE is refused (no DTD, no entities)');
  if (/<!ENTITY/i.test(text)) throw new ReadError('an entity declaration is refused');
  const declaration = /^\s*<\?xml\s[^>]*?encoding\s*=\s*["']([^"']*)["']/.exec(text);
  if (declaration !== null && !/^utf-?8$/i.test(declaration[1] ?? '')) {
    throw new ReadError(`encoding "${declaration[1]}" is not read: UTF-8 only`);
  }
  let parsed: unknown;
  try {
    const wellFormed = XMLValidator.validate(text);
    if (wellFormed !== true) {
      throw new ReadError(`malformed XML at line ${wellFormed.err.line}: ${wellFormed.err.msg}`);
    }
    parsed = parser.parse(text);
  } catch (error) {
    if (error instanceof ReadError) throw error;
    // The validator and the parser throw on some malformations (an unclosed processing
    // instruction) rather than report them.
    throw new ReadError(`malformed XML: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (typeof parsed !== 'object' || parsed === null) throw new ReadError('no root element');
  const roots = Object.entries(parsed as Record<string, unknown>).filter(([key]) => !key.startsWith('?'));
  if (roots.length !== 1) throw new ReadError(`expected one root element, found ${roots.length}`);
  const [rootName, rootValue] = roots[0] as [string, unknown];
  const colon = rootName.indexOf(':');
  const prefix = colon === -1 ? '' : rootName.slice(0, colon + 1);
  const local = rootName.slice(prefix.length);
  if (local !== 'Document') throw new ReadError(`the root element is <${rootName}>, not <Document>`);
  if (typeof rootValue !== 'object' || rootValue === null || Array.isArray(rootValue)) {
    throw new ReadError('<Document> is empty or repeated');
  }
  const node = rootValue as XmlNode;
  const xmlns = node[prefix === '' ? '@_xmlns' : `@_xmlns:${prefix.slice(0, -1)}`];
  if (typeof xmlns !== 'string' || xmlns === '') throw new ReadError('<Document> declares no namespace');
  return { namespace: xmlns, root: new Element(node, prefix, xmlns, 'Document') };
}

/**
 * One element of a parsed document, with accessors that name the path in what they throw. `prefix`
 * is the namespace prefix of the root (`''` for a default namespace); children are looked up with
 * it, and a child that binds the prefix to another namespace is refused (its elements are not the
 * ones they seem).
 */
export class Element {
  constructor(
    private readonly node: XmlNode,
    private readonly prefix: string,
    private readonly namespace: string,
    readonly path: string,
  ) {}

  /** Refuses `attributes` (of an element at `path`) that bind this element's prefix to another namespace. */
  private checkNamespace(attributes: XmlNode, path: string): void {
    const binding = attributes[this.prefix === '' ? '@_xmlns' : `@_xmlns:${this.prefix.slice(0, -1)}`];
    if (binding !== undefined && binding !== this.namespace) {
      throw new ReadError(`${path} binds its elements to another namespace`);
    }
  }

  /** Every `name` child, in order (none is an empty list). */
  all(name: string): Element[] {
    const value = this.node[this.prefix + name];
    if (value === undefined) return [];
    const list = Array.isArray(value) ? value : [value];
    return list.map((item, index) => {
      const path = list.length === 1 ? `${this.path}/${name}` : `${this.path}/${name}[${index + 1}]`;
      if (typeof item === 'string') {
        if (item !== '') throw new ReadError(`${path} holds text where elements are expected`);
        return new Element({}, this.prefix, this.namespace, path);
      }
      if (Array.isArray(item)) throw new ReadError(`${path} is malformed`);
      this.checkNamespace(item, path);
      return new Element(item, this.prefix, this.namespace, path);
    });
  }

  /** The `name` child, or `undefined`; refuses a repeated one. */
  optional(name: string): Element | undefined {
    const found = this.all(name);
    if (found.length > 1) throw new ReadError(`${this.path}/${name} appears ${found.length} times`);
    return found[0];
  }

  /** The `name` child; refuses a missing or repeated one. */
  one(name: string): Element {
    const found = this.optional(name);
    if (found === undefined) throw new ReadError(`${this.path}/${name} is missing`);
    return found;
  }

  /**
   * The text and attributes of the `name` child (a leaf such as `<InstdAmt Ccy="EUR">12.30</InstdAmt>`),
   * or `undefined` when there is none; refuses an empty, over-long or repeated one.
   */
  optionalLeaf(name: string, maxLength = 35): Leaf | undefined {
    const value = this.node[this.prefix + name];
    if (value === undefined) return undefined;
    const path = `${this.path}/${name}`;
    if (Array.isArray(value)) throw new ReadError(`${path} appears ${value.length} times`);
    let raw: XmlValue | undefined = value;
    let cdata: XmlValue | undefined;
    const attributes: Record<string, string> = {};
    if (typeof raw === 'object') {
      this.checkNamespace(raw, path);
      for (const [key, item] of Object.entries(raw)) {
        if (key === '#text' || key === '#cdata') continue;
        if (!key.startsWith('@_')) throw new ReadError(`${path} holds elements where text is expected`);
        if (typeof item !== 'string') throw new ReadError(`${path}/@${key.slice(2)} is malformed`);
        attributes[key.slice(2)] = decodeEntities(item, `${path}/@${key.slice(2)}`);
      }
      cdata = raw['#cdata'];
      raw = raw['#text'] ?? '';
    }
    if (typeof raw !== 'string') throw new ReadError(`${path} is malformed`);
    let text: string;
    if (cdata === undefined) text = decodeEntities(raw, path);
    else if (typeof cdata === 'string' && raw === '') text = cdata.trim();
    else throw new ReadError(`${path} mixes text and CDATA sections`);
    if (text === '') throw new ReadError(`${path} is empty`);
    if (text.length > maxLength) throw new ReadError(`${path} is longer than ${maxLength} characters`);
    return { path, text, attributes };
  }

  /**
   * The text of every `name` child, in order (a repeatable leaf such as `Ustrd`); refuses an
   * empty or over-long one, or one holding elements.
   */
  texts(name: string, maxLength = 35): string[] {
    const value = this.node[this.prefix + name];
    if (value === undefined) return [];
    const list = Array.isArray(value) ? value : [value];
    return list.map((item, index) => {
      const path = list.length === 1 ? `${this.path}/${name}` : `${this.path}/${name}[${index + 1}]`;
      const single = new Element({ [this.prefix + name]: item }, this.prefix, this.namespace, this.path);
      const leaf = single.optionalLeaf(name, maxLength);
      if (leaf === undefined) throw new ReadError(`${path} is empty`);
      return leaf.text;
    });
  }

  /** The `name` leaf; refuses a missing, empty or repeated one. */
  leaf(name: string, maxLength = 35): Leaf {
    const leaf = this.optionalLeaf(name, maxLength);
    if (leaf === undefined) throw new ReadError(`${this.path}/${name} is missing`);
    return leaf;
  }

  /** The text of the `name` child, or `undefined` when there is none; refuses an empty or repeated one. */
  optionalText(name: string, maxLength = 35): string | undefined {
    return this.optionalLeaf(name, maxLength)?.text;
  }

  /** The text of the `name` child; refuses a missing, empty or repeated one. */
  text(name: string, maxLength = 35): string {
    const text = this.optionalText(name, maxLength);
    if (text === undefined) throw new ReadError(`${this.path}/${name} is missing`);
    return text;
  }
}

/**
 * An element to write: its children by name in order (a list repeats the element), text as a
 * string, and a leaf with attributes as `{ '@_Ccy': 'EUR', '#text': '12.30' }`. `undefined`
 * members are left out.
 */
export type BuildValue = string | BuildNode | readonly BuildNode[];
export interface BuildNode {
  readonly [key: string]: BuildValue | undefined;
}

/**
 * `<?xml version="1.0" encoding="UTF-8"?>` and a `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:…">`
 * holding `body`, indented by two spaces, text and attribute values escaped. Written by hand rather
 * than with `fast-xml-parser`'s `XMLBuilder`: the shapes are fixed and small, and a 10,000-payout
 * file is written in a tenth of the time.
 */
export function buildDocument(namespace: string, body: BuildNode): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>\n'];
  writeElement(out, 'Document', { '@_xmlns': namespace, ...body }, '');
  return out.join('');
}

function escapeText(text: string): string {
  return text.replace(/[&<>]/g, (char) => (char === '&' ? '&amp;' : char === '<' ? '&lt;' : '&gt;'));
}

function escapeAttribute(text: string): string {
  return escapeText(text).replace(/"/g, '&quot;');
}

function writeElement(out: string[], name: string, value: BuildValue, indent: string): void {
  if (isNodeList(value)) {
    for (const item of value) writeElement(out, name, item, indent);
    return;
  }
  if (typeof value === 'string') {
    out.push(`${indent}<${name}>${escapeText(value)}</${name}>\n`);
    return;
  }
  let attributes = '';
  let text: string | undefined;
  const children: [string, BuildValue][] = [];
  for (const [key, member] of Object.entries(value)) {
    if (member === undefined) continue;
    if (key === '#text' && typeof member === 'string') text = member;
    else if (key.startsWith('@_') && typeof member === 'string')
      attributes += ` ${key.slice(2)}="${escapeAttribute(member)}"`;
    else children.push([key, member]);
  }
  if (text !== undefined) {
    out.push(`${indent}<${name}${attributes}>${escapeText(text)}</${name}>\n`);
  } else if (children.length === 0) {
    out.push(`${indent}<${name}${attributes}></${name}>\n`);
  } else {
    out.push(`${indent}<${name}${attributes}>\n`);
    for (const [key, member] of children) writeElement(out, key, member, `${indent}  `);
    out.push(`${indent}</${name}>\n`);
  }
}

function isNodeList(value: BuildValue): value is readonly BuildNode[] {
  return Array.isArray(value);
}

/** The time at second precision in UTC, as ISO 20022's `ISODateTime` takes it: `2026-11-27T21:30:00Z`. */
export function isoDateTime(at: Date): string {
  if (Number.isNaN(at.getTime())) throw new RangeError('the date is not a valid date');
  return at.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Reads an `ISODateTime` (`xs:dateTime`: with `Z`, an offset, or local time, read as UTC). */
export function readDateTime(text: string, path: string): Date {
  const match = /^(-?\d{4,})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/.exec(text);
  if (match === null) throw new ReadError(`${path} "${text}" is not an ISODateTime`);
  const at = new Date(match[8] === undefined ? `${text}Z` : text);
  if (Number.isNaN(at.getTime())) throw new ReadError(`${path} "${text}" is not a valid time`);
  return at;
}

/** Whether `text` is an `ISODate` (`YYYY-MM-DD`) naming a real day. */
export function isIsoDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const at = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(at.getTime()) && at.toISOString().slice(0, 10) === text;
}
