import { DatabaseUnavailableError } from './db.js';

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * The one line a start prints when its PostgreSQL cannot be used: which database (server, port,
 * name; never the password) and what to run. `undefined` for any other failure.
 */
export function databaseStartFailure(error: unknown, databaseUrl: string | undefined): string | undefined {
  if (databaseUrl === undefined || !(error instanceof DatabaseUnavailableError)) return undefined;
  const url = new URL(databaseUrl);
  const host = url.hostname || 'localhost';
  const port = url.port || '5432';
  const name = decodeURIComponent(url.pathname.slice(1)) || decodeURIComponent(url.username) || 'postgres';
  const user = decodeURIComponent(url.username) || 'postgres';
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  const timedOut =
    typeof cause?.message === 'string' && cause.message.includes('timeout exceeded when trying to connect');
  const where = `PostgreSQL at ${host}:${port} (DATABASE_URL)`;
  if (code === '3D000') {
    return `database "${name}" does not exist on ${where}: create it with createdb -h ${host} -p ${port} -U ${user} ${name}, then start again`;
  }
  if (code === '28P01' || code === '28000') {
    return `${where} refused user "${user}" for database "${name}" (${code}): check the user and password in DATABASE_URL`;
  }
  if (timedOut || (code !== undefined && UNREACHABLE.has(code))) {
    return `cannot reach ${where} (${code ?? 'timed out'}) for database "${name}": start PostgreSQL or correct DATABASE_URL (without DATABASE_URL the embedded database is used)`;
  }
  const reason = typeof cause?.message === 'string' ? cause.message : error.message;
  return `cannot use database "${name}" on ${where}: ${reason}`;
}
