/** One header as received: name (any case) and value. Repeated headers appear repeatedly. */
export type HeaderPair = readonly [name: string, value: string];

/** Headers as received, in either form: pairs, or Node's flat `rawHeaders` array. */
export type RawHeaders = readonly HeaderPair[] | readonly string[];

/** Header values grouped by lowercase name, keeping every occurrence. */
export type HeaderMultimap = ReadonlyMap<string, readonly string[]>;

/** Groups raw headers by lowercase name so that duplicates stay visible. */
export function collectHeaders(raw: RawHeaders): HeaderMultimap {
  const map = new Map<string, string[]>();
  const add = (name: string, value: string) => {
    const key = name.toLowerCase();
    const values = map.get(key);
    if (values) values.push(value);
    else map.set(key, [value]);
  };
  if (raw.length > 0 && typeof raw[0] === 'string') {
    const flat = raw as readonly string[];
    for (let i = 0; i + 1 < flat.length; i += 2) add(flat[i] as string, flat[i + 1] as string);
  } else {
    for (const [name, value] of raw as readonly HeaderPair[]) add(name, value);
  }
  return map;
}

/** Headers as pairs from a plain object (as `fetch` or a test builds them). */
export function headerPairs(headers: Readonly<Record<string, string>>): HeaderPair[] {
  return Object.entries(headers);
}

/**
 * Picks single-valued headers: each name in `names` must occur at most once. Returns the
 * values by name, or the name of the first header that occurs more than once.
 */
export function singleValued(
  headers: HeaderMultimap,
  names: readonly string[],
): { values: Record<string, string | undefined> } | { duplicate: string } {
  const values: Record<string, string | undefined> = {};
  for (const name of names) {
    const found = headers.get(name);
    if (found && found.length > 1) return { duplicate: name };
    values[name] = found?.[0];
  }
  return { values };
}
