import { inspect } from 'node:util';
import { ConfigError } from '../config.js';

/** An operator's mistake the command line found: one line on stderr; exit code 1, or 2 for usage. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'CliError';
  }
}

/** `--debug` is taken from anywhere on the command line, before parsing, so that it works even when parsing fails. */
export function takeDebugFlag(argv: readonly string[]): { argv: string[]; debug: boolean } {
  return { argv: argv.filter((arg) => arg !== '--debug'), debug: argv.includes('--debug') };
}

/**
 * Errors of the database layer that are the operator's to fix (a DATABASE_URL nobody answers, a
 * schema newer than this build, an embedded database another process owns). Told by name, so that commands which never open a database do
 * not load its drivers to recognize them.
 */
const DEPLOYMENT_ERRORS = new Set(['DatabaseUnavailableError', 'SchemaError', 'DirectoryInUseError']);

/** A mistake of the operator's, as the one line to print and the exit code. */
interface Mistake {
  readonly message: string;
  readonly exitCode: number;
}

/**
 * Tells an operator's mistake from a fault of ours. Mistakes: our own refusals (CliError, what
 * the server answered), configuration that does not parse, flags that do not parse, an
 * unreachable database, and what the operating system refused (a file that is not there).
 */
function mistakeOf(error: unknown): Mistake | undefined {
  if (error instanceof CliError) return { message: error.message, exitCode: error.exitCode };
  if (!(error instanceof Error)) return undefined;
  if (error instanceof ConfigError || DEPLOYMENT_ERRORS.has(error.name)) return { message: error.message, exitCode: 1 };
  if (!('code' in error) || typeof error.code !== 'string') return undefined;
  if (error.code.startsWith('ERR_PARSE_ARGS')) {
    // Node's advice after the first sentence (on positionals after `--`) is not ours to give.
    const said = error.message.split('. ')[0] as string;
    return { message: `${said}; paygate --help shows the usage`, exitCode: 2 };
  }
  if ('syscall' in error && typeof error.syscall === 'string') return { message: error.message, exitCode: 1 };
  return undefined;
}

/**
 * Says on stderr why the command failed and returns the exit code: an operator's mistake is one
 * line, `paygate: <what is wrong>`; anything else is a fault of ours and says so. With `debug`,
 * the trace (and its causes) follows.
 */
export function reportFailure(
  error: unknown,
  debug: boolean,
  write: (text: string) => void = (text) => process.stderr.write(text),
): number {
  const mistake = mistakeOf(error);
  const message = mistake?.message ?? (error instanceof Error ? error.message : String(error));
  // One line, whatever the message holds.
  const line = message.replace(/\s*\n\s*/g, ' ').trim();
  write(
    mistake
      ? `paygate: ${line}\n`
      : `paygate: internal error: ${line}${debug ? '' : ' (run with --debug for the trace)'}\n`,
  );
  if (debug) write(`${inspect(error)}\n`);
  return mistake?.exitCode ?? 1;
}
