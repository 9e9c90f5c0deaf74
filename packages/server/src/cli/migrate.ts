import { migrate, schemaStatus } from '../db/migrate.js';
import { openCommandDatabase } from './database.js';

/**
 * `npx paygate migrate`: applies the migrations this build has and exits. On PostgreSQL it runs
 * while instances serve (migrations are additive and take the migration lock); the embedded
 * database belongs to one process, so while a server owns it this is refused with one line naming
 * the owner (that server migrated its database when it started).
 */
export async function runMigrate(env: NodeJS.ProcessEnv, print: (line: string) => void, json: boolean): Promise<void> {
  const db = await openCommandDatabase(env, 'paygate migrate');
  try {
    const applied = await migrate(db);
    const { pending } = await schemaStatus(db);
    if (json) print(JSON.stringify({ applied, pending }));
    else if (applied.length === 0) print('the schema is up to date');
    else for (const name of applied) print(`applied ${name}`);
  } finally {
    await db.close();
  }
}
