/**
 * `npm start -w @paygate/example-shop`: reads the configuration once, opens the database,
 * builds the shop and listens. See README.md.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PaygateClient, PaygateConfigError, parseOnboarding, type SqlClient, WebhookVerifier } from '@paygate/merchant';
import pg from 'pg';
import { z } from 'zod';
import { createShop } from './app.js';

const envSchema = z.object({
  SHOP_HOST: z.string().min(1).default('127.0.0.1'),
  SHOP_PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  SHOP_PUBLIC_URL: z.url().optional(),
  SHOP_DATA_DIR: z.string().min(1).default('.shop-data'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'a postgres:// URL')
    .optional(),
  PAYGATE_URL: z.url().default('http://127.0.0.1:8080'),
  PAYGATE_ONBOARDING: z.string().min(1).default('merchant.json'),
  PAYGATE_PRIVATE_KEY: z.string().min(1).default('keys/private.pem'),
});

function read(file: string, what: string, how: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    throw new PaygateConfigError(`cannot read ${what} at ${resolve(file)}: ${how}`);
  }
}

async function main(): Promise<void> {
  const blankless = Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== ''));
  const parsed = envSchema.safeParse(blankless);
  if (!parsed.success) {
    throw new PaygateConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  }
  const env = parsed.data;
  const onboarding = parseOnboarding(
    JSON.parse(
      read(
        env.PAYGATE_ONBOARDING,
        'the onboarding JSON',
        'run `npx paygate merchant create --name "Example shop" --public-key @examples/shop/keys/public.pem --json > examples/shop/merchant.json` (see README.md), or set PAYGATE_ONBOARDING',
      ),
    ),
  );
  const privateKey = read(
    env.PAYGATE_PRIVATE_KEY,
    'the private key',
    'run `npx paygate-merchant keygen --out examples/shop/keys` (see README.md), or set PAYGATE_PRIVATE_KEY',
  );

  let db: SqlClient;
  let closeDb: () => Promise<void>;
  if (env.DATABASE_URL) {
    const pool = new pg.Pool({ connectionString: env.DATABASE_URL });
    db = pool;
    closeDb = () => pool.end();
  } else {
    const lite = new PGlite(env.SHOP_DATA_DIR);
    db = lite;
    closeDb = () => lite.close();
  }

  const client = new PaygateClient({
    baseUrl: env.PAYGATE_URL,
    accessKey: onboarding.accessKey,
    privateKey,
    bodyKey: onboarding.bodyKey,
  });
  const verifier = new WebhookVerifier({ webhookKeys: onboarding.webhookKeys });
  const publicUrl = (env.SHOP_PUBLIC_URL ?? `http://${env.SHOP_HOST}:${env.SHOP_PORT}`).replace(/\/$/, '');
  const { app } = await createShop({ client, verifier, db, publicUrl });
  const server = app.listen(env.SHOP_PORT, env.SHOP_HOST, () => {
    console.log(
      `Example shop on http://${env.SHOP_HOST}:${env.SHOP_PORT} (webhooks: ${publicUrl}/webhook/payment; Paygate: ${env.PAYGATE_URL})`,
    );
  });
  const stop = () => server.close(() => void closeDb().then(() => process.exit(0)));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof PaygateConfigError ? `shop: ${error.message}` : error);
  process.exit(1);
});
