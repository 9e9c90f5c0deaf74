import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';

/**
 * One owner per table (issue 11, item 1; docs/architecture.md): only the files of a table's
 * module hold SQL that touches it; every other module calls that module's service. A new table
 * needs an owner here, and SQL over a table outside its owner fails this test.
 */
const OWNERS: Readonly<Record<string, string>> = {
  merchants: 'modules/merchants/',
  merchant_keys: 'modules/merchants/',
  platform_keys: 'modules/platform-keys/',
  master_key_checks: 'modules/platform-keys/',
  request_nonces: 'modules/auth/',
  payments: 'modules/payments/',
  payouts: 'modules/payouts/',
  events: 'modules/webhooks/',
  delivery_attempts: 'modules/webhooks/',
  rejected_requests: 'modules/rejected-requests/',
  ledger_accounts: 'modules/ledger/',
  ledger_transactions: 'modules/ledger/',
  ledger_entries: 'modules/ledger/',
  portal_users: 'modules/accounts/',
  portal_sessions: 'modules/accounts/',
  login_attempts: 'modules/accounts/',
  portal_recovery_codes: 'modules/accounts/',
  portal_merchant_settings: 'modules/accounts/',
  portal_passkeys: 'modules/accounts/',
  portal_webauthn_challenges: 'modules/accounts/',
  channel_notifications: 'modules/channels/',
  channel_nonces: 'modules/channels/',
  sepa_files: 'modules/channels/',
  sepa_file_payouts: 'modules/channels/',
  sepa_inbox: 'modules/channels/',
  channel_exchanges: 'modules/channels/',
  channel_order_refs: 'modules/channels/',
  order_transitions: 'modules/orders/',
  balance_adjustments: 'modules/adjustments/',
  merchant_fee_plans: 'modules/fees/',
  fee_plan_changes: 'modules/fees/',
  sepa_statuses: 'modules/channels/',
  sepa_batch_bookings: 'modules/channels/',
  sepa_credits: 'modules/channels/',

  audit_entries: 'modules/audit/',
};

/**
 * Generic statement helpers that take the table from their caller (`countRows({ from: 'payments' })`,
 * `statusTotals(db, 'payouts', …)`): the caller, found by the literal it passes, must own the table.
 */
const GENERIC_HELPERS = [
  'db/paging.ts',
  'db/order-lookups.ts',
  'db/order-polls.ts',
  'db/order-search.ts',
  'db/vacuum.ts',
];

const SRC = new URL('../src/', import.meta.url).pathname;
const MIGRATIONS = new URL('../migrations/', import.meta.url).pathname;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return entry.endsWith('.ts') ? [path] : [];
  });
}

/** Line comments and block comments out, so prose ("reads from payments") is not SQL. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** The tables a source text touches: by SQL keyword, and by the literal it passes to a generic helper. */
export function tablesTouched(text: string, tables: readonly string[], sqlOnly = false): Set<string> {
  const code = withoutComments(text);
  const found = new Set<string>();
  for (const table of tables) {
    const sql = new RegExp(
      `\\b(FROM|JOIN|INTO|UPDATE|TABLE|TRUNCATE|(VACUUM|ANALYZE)(\\s*\\([^)]*\\))?)\\s+(ONLY\\s+)?"?${table}"?(?![A-Za-z0-9_])`,
      'i',
    );
    const helperArgument = new RegExp(
      `(\\b(from|table)\\s*:\\s*|\\b(statusTotals|claimDuePolls|countRows|keysetPage)\\([^,)]*,\\s*|\\bvacuumTables\\([^,)]*,\\s*\\[[^\\]]*)['"\`]${table}['"\`]`,
    );
    if (sql.test(code) || (!sqlOnly && helperArgument.test(code))) found.add(table);
  }
  return found;
}

/** A statement whose table is interpolated: only the generic helpers may build one. */
export function interpolatesTable(text: string): boolean {
  return /\b(FROM|JOIN|INTO|UPDATE|TABLE|TRUNCATE|(VACUUM|ANALYZE)(\s*\([^)]*\))?)\s+\$\{/.test(withoutComments(text));
}

describe('table ownership', () => {
  const files = sourceFiles(SRC).map((path) => ({ path: relative(SRC, path), text: readFileSync(path, 'utf8') }));
  const tables = Object.keys(OWNERS);

  it('every table the migrations create has an owning module', () => {
    const created = readdirSync(MIGRATIONS)
      .filter((name) => name.endsWith('.sql'))
      .flatMap((name) =>
        [
          ...readFileSync(join(MIGRATIONS, name), 'utf8').matchAll(/CREATE TABLE (?:IF NOT EXISTS )?"?([a-z_]+)"?/gi),
        ].map((m) => m[1] as string),
      );
    assert.ok(created.length >= tables.length, 'the migrations were read');
    assert.deepEqual(
      created.filter((table) => !(table in OWNERS)),
      [],
      'give each new table an owner in OWNERS (and docs/architecture.md)',
    );
  });

  it('only the owning module holds SQL that touches a table', () => {
    const trespasses = files.flatMap(({ path, text }) =>
      // A generic helper names tables only in its parameter's type: its own SQL is what counts.
      [...tablesTouched(text, tables, GENERIC_HELPERS.includes(path))]
        .filter((table) => !path.startsWith(OWNERS[table] as string))
        .map((table) => `${path} touches ${table} (owned by ${OWNERS[table]}): call its service instead`),
    );
    assert.deepEqual(trespasses, []);
  });

  it('only the generic statement helpers interpolate a table name', () => {
    const builders = files.filter(({ path, text }) => interpolatesTable(text) && !GENERIC_HELPERS.includes(path));
    assert.deepEqual(
      builders.map(({ path }) => path),
      [],
    );
  });

  it('each owner is a module that exists and touches its tables', () => {
    for (const [table, owner] of Object.entries(OWNERS)) {
      const own = files.filter(({ path }) => path.startsWith(owner));
      assert.ok(own.length > 0, `${owner} exists`);
      assert.ok(
        own.some(({ text }) => tablesTouched(text, [table]).has(table)),
        `${owner} touches ${table}`,
      );
    }
  });

  it('the scanner sees SQL in every shape the code writes it, and not prose', () => {
    const seen = (text: string) => [...tablesTouched(text, tables)].sort();
    assert.deepEqual(seen("db.query('SELECT name FROM merchants WHERE id = $1')"), ['merchants']);
    assert.deepEqual(seen('`INSERT INTO rejected_requests (merchant_id) VALUES ($1)`'), ['rejected_requests']);
    assert.deepEqual(seen('`UPDATE events SET x = 1`'), ['events']);
    assert.deepEqual(seen('`SELECT 1 FROM portal_users u JOIN merchants m ON m.id = u.merchant_id`'), [
      'merchants',
      'portal_users',
    ]);
    assert.deepEqual(seen('`DELETE FROM\n  ledger_entries`'), ['ledger_entries']);
    assert.deepEqual(seen("countRows(this.db, { from: 'payouts', equals })"), ['payouts']);
    assert.deepEqual(seen("statusTotals(this.db, 'payments', merchantId, range)"), ['payments']);
    assert.deepEqual(seen("claimDuePolls(this.db, 'payouts', order, claim)"), ['payouts']);
    assert.deepEqual(seen('`VACUUM (ANALYZE) events`'), ['events']);
    assert.deepEqual(seen('`ANALYZE payouts`'), ['payouts']);
    assert.deepEqual(seen("vacuumTable(this.db, { table: 'request_nonces' })"), ['request_nonces']);
    assert.deepEqual(seen("vacuumTables(this.db, ['portal_sessions', 'login_attempts'])").sort(), [
      'login_attempts',
      'portal_sessions',
    ]);
    // Prose and look-alike names are not SQL.
    assert.deepEqual(seen('// reads from payments and updates events\n/* FROM payouts */'), []);
    assert.deepEqual(seen("`SELECT * FROM payments_archive`; const kind = 'payments';"), []);
    assert.equal(interpolatesTable('`SELECT merchant_id FROM ${table} WHERE order_no = $1`'), true);
    assert.equal(interpolatesTable('`SELECT * FROM payments WHERE ${where}`'), false);
    assert.equal(interpolatesTable('`VACUUM (ANALYZE) ${table}`'), true);
  });
});
