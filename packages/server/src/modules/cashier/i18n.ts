import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Every language of the payer pages; the first is the fallback. */
export const LOCALES = ['en', 'pt-BR', 'es-MX', 'de', 'fr', 'it', 'nl', 'es'] as const;
export type Locale = (typeof LOCALES)[number];

/** The languages every payer page speaks (Pix, boleto, SPEI, card), in the order a bare language matches. */
export const PAYER_LOCALES: readonly Locale[] = ['en', 'pt-BR', 'es-MX'];

/**
 * The languages of a payment by SEPA bank transfer (EUR): the SEPA payers' besides. A bare `es`
 * (or `es-ES`, `es-AR`) is Spain's Spanish here, `es-MX` still Mexico's.
 */
export const TRANSFER_LOCALES: readonly Locale[] = ['en', 'de', 'fr', 'it', 'nl', 'es', 'pt-BR', 'es-MX'];

/**
 * The time zone a locale's dates are shown in (with its name, so no reader mistakes it): the
 * server does not know the payer's, so each language takes its country's capital; English, UTC.
 */
const TIME_ZONES: Readonly<Record<Locale, string>> = {
  en: 'UTC',
  'pt-BR': 'America/Sao_Paulo',
  'es-MX': 'America/Mexico_City',
  de: 'Europe/Berlin',
  fr: 'Europe/Paris',
  it: 'Europe/Rome',
  nl: 'Europe/Amsterdam',
  es: 'Europe/Madrid',
};

/**
 * The message catalogues, one JSON file per locale, outside `src/` so that the same files serve
 * the sources and the build (`dist/modules/cashier` → `../../../locales`, as for the migrations).
 */
export const CATALOGUE_DIR = join(import.meta.dirname, '../../../locales/cashier');

/** A catalogue: message key → text, with `{name}` placeholders. */
export type Catalogue = Readonly<Record<string, string>>;

function loadCatalogues(): Readonly<Record<Locale, Catalogue>> {
  const read = (locale: Locale) =>
    JSON.parse(readFileSync(join(CATALOGUE_DIR, `${locale}.json`), 'utf8')) as Record<string, string>;
  const catalogues = Object.fromEntries(LOCALES.map((locale) => [locale, read(locale)])) as Record<Locale, Catalogue>;
  // Every catalogue has exactly the fallback's keys: a page never mixes two languages.
  const keys = Object.keys(catalogues.en).sort().join();
  for (const locale of LOCALES) {
    if (Object.keys(catalogues[locale]).sort().join() !== keys) {
      throw new Error(`${CATALOGUE_DIR}/${locale}.json has other message keys than en.json`);
    }
  }
  return catalogues;
}

const CATALOGUES = loadCatalogues();

/**
 * A locale of `offered` for a BCP 47 tag: the same tag (any case), else the same language (`pt`,
 * `pt-PT` → pt-BR), the first of `offered` that speaks it.
 */
export function supportedLocale(tag: string, offered: readonly Locale[] = PAYER_LOCALES): Locale | undefined {
  const lower = tag.trim().toLowerCase();
  if (lower === '' || lower === '*') return undefined;
  const exact = offered.find((locale) => locale.toLowerCase() === lower);
  if (exact) return exact;
  const language = lower.split('-')[0];
  return offered.find((locale) => locale.toLowerCase().split('-')[0] === language);
}

/**
 * The `Accept-Language` header's ranges (RFC 9110 §12.5.4) by preference: highest `q` first,
 * the header's order among equals; `q=0` ("not acceptable") and malformed entries left out.
 */
export function acceptedLanguages(header: string | undefined): string[] {
  if (header === undefined) return [];
  const ranges: { tag: string; q: number; at: number }[] = [];
  header.split(',').forEach((entry, at) => {
    const [tag = '', ...parameters] = entry.split(';').map((part) => part.trim());
    if (!/^(\*|[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*)$/.test(tag)) return;
    let q = 1;
    for (const parameter of parameters) {
      const match = /^q=(0(\.\d{0,3})?|1(\.0{0,3})?)$/i.exec(parameter);
      if (match) q = Number(match[1]);
      else return;
    }
    if (q > 0) ranges.push({ tag, q, at });
  });
  return ranges.sort((a, b) => b.q - a.q || a.at - b.at).map((range) => range.tag);
}

/**
 * The page's language among `offered`: the link's `lang` parameter when it names one of them,
 * else the first of the browser's `Accept-Language` preferences among them, else English.
 */
export function chooseLocale(
  acceptLanguage: string | undefined,
  lang: string | undefined,
  offered: readonly Locale[] = PAYER_LOCALES,
): Locale {
  const fromLink = lang === undefined ? undefined : supportedLocale(lang, offered);
  if (fromLink) return fromLink;
  for (const tag of acceptedLanguages(acceptLanguage)) {
    const locale = supportedLocale(tag, offered);
    if (locale) return locale;
  }
  return 'en';
}

/** A page's words, amounts and dates in one locale. */
export interface Messages {
  readonly locale: Locale;
  /** The message `key` with its `{name}` placeholders filled in (plain text: escape it for HTML). */
  t(key: string, values?: Readonly<Record<string, string>>): string;
  /** A decimal amount string in the locale's currency format (`R$ 10,00`), exactly: never through a float. */
  money(amount: string, currency: string): string;
  /** Unix ms as the locale writes a date and time, with the time zone's name. */
  dateTime(ms: number): string;
  /** Every locale the page offers with its own name, for the language links. */
  readonly languages: readonly { locale: Locale; name: string }[];
}

const LANGUAGES = LOCALES.map((locale) => ({ locale, name: CATALOGUES[locale].language as string }));

export function messagesFor(locale: Locale, offered: readonly Locale[] = PAYER_LOCALES): Messages {
  const catalogue = CATALOGUES[locale];
  const dates = new Intl.DateTimeFormat(locale, {
    dateStyle: 'medium',
    timeStyle: 'short',
    timeZone: TIME_ZONES[locale],
  });
  const zone = new Intl.DateTimeFormat(locale, { timeZone: TIME_ZONES[locale], timeZoneName: 'short' });
  return {
    locale,
    languages: LANGUAGES.filter((language) => offered.includes(language.locale)),
    t(key, values = {}) {
      const text = catalogue[key];
      if (text === undefined) throw new Error(`no message ${key}`);
      return text.replace(/\{(\w+)\}/g, (whole, name: string) => values[name] ?? whole);
    },
    // Intl formats a numeric string exactly (ECMA-402's decimal strings), with the currency's digits.
    money: (amount, currency) =>
      new Intl.NumberFormat(locale, { style: 'currency', currency }).format(amount as `${number}`),
    dateTime(ms) {
      const zoneName = zone.formatToParts(ms).find((part) => part.type === 'timeZoneName')?.value ?? '';
      return `${dates.format(ms)} ${zoneName}`.trim();
    },
  };
}
