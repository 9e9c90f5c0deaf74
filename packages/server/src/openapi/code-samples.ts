/**
 * The code samples of each operation (`x-codeSamples`, which the reference shows in place of
 * generated ones): the SDK (`PaygateClient`), the command line (`paygate-merchant request`) and
 * the Python reference client (examples/python), each with the operation's example request. A
 * generated curl cannot sign or seal, so the reference generates none (routes.ts, hiddenClients).
 */
import type { OperationExamples } from './examples.js';

/** One sample as Scalar (and Redocly) read `x-codeSamples`. */
export interface CodeSample {
  readonly lang: string;
  readonly label: string;
  readonly source: string;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** A value as a TypeScript literal: unquoted keys where they may be, two-space indent. */
function tsLiteral(value: Json, indent = ''): string {
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((item) => `${inner}${tsLiteral(item, inner)},`).join('\n')}\n${indent}]`;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) return '{}';
    const members = entries.map(
      ([key, item]) => `${inner}${IDENTIFIER.test(key) ? key : JSON.stringify(key)}: ${tsLiteral(item, inner)},`,
    );
    return `{\n${members.join('\n')}\n${indent}}`;
  }
  return typeof value === 'string' ? `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'` : String(value);
}

/** A value as a Python literal (True, False, None; JSON's string escapes are Python's). */
function pyLiteral(value: Json, indent = ''): string {
  const inner = `${indent}    `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((item) => `${inner}${pyLiteral(item, inner)},`).join('\n')}\n${indent}]`;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) return '{}';
    return `{\n${entries.map(([key, item]) => `${inner}${JSON.stringify(key)}: ${pyLiteral(item, inner)},`).join('\n')}\n${indent}}`;
  }
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  return JSON.stringify(value);
}

/** A shell word in single quotes. */
const shellQuote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

/** The SDK call of each operation, given its input as a TypeScript literal. */
const SDK_CALLS: Readonly<Record<string, (input: string) => string>> = {
  createPayment: (i) => `const payment = await paygate.payments.create(${i});`,
  getPayment: (i) => `const payment = await paygate.payments.query(${i});`,
  listPayments: (i) =>
    `const page = await paygate.payments.list(${i});\n// or: for await (const payment of paygate.payments.iterate(${i})) …`,
  cancelPayment: (i) => `const payment = await paygate.payments.cancel(${i});`,
  updatePayment: (i) => `const payment = await paygate.payments.update(${i});`,
  simulatePayment: (i) => `const payment = await paygate.sandbox.simulatePayment(${i});`,
  createPayout: (i) => `const payout = await paygate.payouts.create(${i});`,
  getPayout: (i) => `const payout = await paygate.payouts.query(${i});`,
  listPayouts: (i) =>
    `const page = await paygate.payouts.list(${i});\n// or: for await (const payout of paygate.payouts.iterate(${i})) …`,
  getPayoutReceipt: (i) => `const receipt = await paygate.payouts.receipt(${i});`,
  confirmPayout: (i) => `const payout = await paygate.payouts.confirm(${i});`,
  updatePayout: (i) => `const payout = await paygate.payouts.update(${i});`,
  simulatePayout: (i) => `const payout = await paygate.sandbox.simulatePayout(${i});`,
  returnPayout: (i) => `const payout = await paygate.sandbox.returnPayout(${i});`,
  getBalances: (i) => `const balances = await paygate.balances(${i});`,
  getRates: (i) => `const rates = await paygate.rates(${i});`,
  listLedgerEntries: (i) => `const page = await paygate.ledger.entries(${i});`,
  listEvents: (i) => `const page = await paygate.events.list(${i});`,
  resendEvent: (i) => `const event = await paygate.events.resend(${i});`,
  checkReceiver: (i) =>
    `const report = await paygate.sandbox.checkReceiver(${i}, { timeoutMs: 120_000, retries: 0 });\nfor (const c of report.cases) console.log(c.name, c.expected, c.observed, c.pass);`,
};

/** The Python client's own method, where it has one; otherwise its generic `call`. */
const PYTHON_CALLS: Readonly<Record<string, (input: Json) => string>> = {
  createPayment: (i) => `payment = client.create_payment(${pyLiteral(i)})`,
  getPayment: (i) =>
    `payment = client.get_payment(${pyKeywords(i, { orderNo: 'order_no', merchantOrderNo: 'merchant_order_no' })})`,
  listPayments: (i) => `page = client.list_payments(${pyKeywords(i)})`,
  getBalances: (i) => `balances = client.balances(${pyKeywords(i)})`,
};

/** An object's members as Python keyword arguments (renamed where the method's names differ). */
function pyKeywords(input: Json, names: Record<string, string> = {}): string {
  const entries = Object.entries((input ?? {}) as Record<string, Json>);
  return entries.map(([key, value]) => `${names[key] ?? key}=${pyLiteral(value)}`).join(', ');
}

const SDK_PREAMBLE =
  "// paygate: new PaygateClient({ baseUrl, accessKey, privateKey, bodyKey }) from '@paygate/merchant'\n";
const PYTHON_PREAMBLE =
  '# client = paygate.Client.from_onboarding(base_url, private_key_pem, onboarding)  (examples/python)\n';
const CLI_PREAMBLE = '# PAYGATE_URL, PAYGATE_PRIVATE_KEY and PAYGATE_ONBOARDING set as in the quick start\n';

/**
 * The samples of a signed merchant operation: what its example request is through the SDK, the
 * command line and the Python client. `path` is the operation's path, `method` GET or POST.
 */
export function merchantCodeSamples(
  operationId: string,
  method: 'GET' | 'POST',
  path: string,
  examples: OperationExamples,
): CodeSample[] {
  const sdk = SDK_CALLS[operationId];
  if (sdk === undefined) throw new Error(`openapi code samples: no SDK call for ${operationId}`);
  let input: Json;
  let cli: string;
  let python: string;
  if (method === 'POST') {
    input = (examples.request ?? {}) as Json;
    cli = `npx paygate-merchant request POST ${path} --json ${shellQuote(JSON.stringify(input))}`;
    python =
      PYTHON_CALLS[operationId]?.(input) ??
      `result = client.call("POST", ${JSON.stringify(path)}, ${pyLiteral(input)})`;
  } else {
    input = Object.fromEntries(Object.entries(examples.parameters ?? {})) as Json;
    const query = new URLSearchParams(
      Object.entries(examples.parameters ?? {}).map(([k, v]): [string, string] => [k, String(v)]),
    ).toString();
    cli = `npx paygate-merchant request GET ${shellQuote(query ? `${path}?${query}` : path)}`;
    python =
      PYTHON_CALLS[operationId]?.(input) ??
      `result = client.call("GET", ${JSON.stringify(path)}, query=${pyLiteral(input)})`;
  }
  // resend takes the eventId itself.
  const sdkInput = operationId === 'resendEvent' ? tsLiteral((input as { eventId: string }).eventId) : tsLiteral(input);
  return [
    { lang: 'typescript', label: 'SDK (TypeScript)', source: `${SDK_PREAMBLE}${sdk(sdkInput)}` },
    { lang: 'shell', label: 'paygate-merchant', source: `${CLI_PREAMBLE}${cli}` },
    { lang: 'python', label: 'Python', source: `${PYTHON_PREAMBLE}${python}` },
  ];
}

/** The samples of the published webhook keys: an unauthenticated GET, so curl is right here. */
export const WEBHOOK_KEYS_SAMPLES: CodeSample[] = [
  {
    lang: 'typescript',
    label: 'SDK (TypeScript)',
    source:
      "import { WebhookVerifier } from '@paygate/merchant';\n\n// Fetches, caches and follows rotations of the published keys by itself.\nconst verifier = new WebhookVerifier({ publishedKeys: { baseUrl: process.env.PAYGATE_URL } });",
  },
  { lang: 'shell', label: 'curl', source: 'curl "$PAYGATE_URL/.well-known/paygate/webhook-keys"' },
];
