/**
 * Reading a simulator's settings from the environment. Each simulator parses its environment
 * once into a frozen config (its own `parseConfig`); these helpers give every simulator the same
 * rules and the same one-line refusals, thrown as {@link ConfigError}.
 */

/** A setting refused at start; the start-up prints its message as one line and exits 1. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Env = NodeJS.ProcessEnv;

/** A whole number from `min` to `max`; empty or unset gives `fallback`. */
export function envInteger(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

/** A TCP port (0: any free port). */
export function envPort(env: Env, name: string, fallback: number): number {
  return envInteger(env, name, fallback, 0, 65_535);
}

/** Printable ASCII of at most `max` characters; empty or unset gives `fallback`. */
export function envText(env: Env, name: string, fallback: string, max: number): string {
  const value = env[name] || fallback;
  if (value.length > max || !/^[\x20-\x7e]+$/.test(value)) {
    throw new ConfigError(`${name} must be at most ${max} printable ASCII characters, got "${value}"`);
  }
  return value;
}

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/**
 * A duration as the platform writes them (`250ms`, `2s`, `5m`, `1h`; a bare number is
 * milliseconds), in milliseconds; empty or unset gives `fallback`.
 */
export function envDuration(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const match = /^([0-9]+)(ms|s|m|h)?$/.exec(raw.trim());
  const ms = match ? Number(match[1]) * (UNITS[match[2] ?? 'ms'] as number) : Number.NaN;
  if (!Number.isSafeInteger(ms)) {
    throw new ConfigError(`${name} must be a duration such as 2s, 500ms or 5m, got "${raw}"`);
  }
  return ms;
}
