import type { Db } from '../../db/db.js';
import { vacuumTable, type Vacuumed } from '../../db/vacuum.js';

/**
 * The embedded database only: vacuums request_nonces, which the sweeper purges every few seconds,
 * when it has dead rows (see vacuumTable). Without it the table's file grows by a signature
 * window's worth of rows every window, since space freed by the purge is never reused.
 */
export function vacuumNonces(db: Db): Promise<Vacuumed | undefined> {
  return vacuumTable(db, { table: 'request_nonces' });
}
