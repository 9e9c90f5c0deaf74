import { inspect } from 'node:util';
import { PaygateError } from '../errors.js';
import { CliError } from './config.js';

/** `--debug` is taken from anywhere on the command line, before parsing, so that it works even when parsing fails. */
export function takeDebugFlag(argv: readonly string[]): { argv: string[]; debug: boolean } {
  return { argv: argv.filter((arg) => arg !== '--debug'), debug: argv.includes('--debug') };
}

/** A mistake of the user's, as the one line to print and the exit code. */
interface Mistake {
  readonly message: string;
  readonly exitCode: number;
}

/**
 * Tells a user's mistake from a fault of ours. Mistakes: our own refusals (CliError), the SDK's
 * (bad key, bad URL, no answer from the platform), flags that do not parse, and what the
 * operating system refused (a file that is not there, a port in use), which always concerns a
 * path or an address the user gave.
 */
function mistakeOf(error: unknown): Mistake | undefined {
  if (error instanceof CliError) return { message: error.message, exitCode: error.exitCode };
  if (error instanceof PaygateError) return { message: error.message, exitCode: 1 };
  if (!(error instanceof Error) || !('code' in error) || typeof error.code !== 'string') return undefined;
  if (error.code.startsWith('ERR_PARSE_ARGS')) {
    // Node's advice after the first sentence (on positionals after `--`) is not ours to give.
    const said = error.message.split('. ')[0] as string;
    return { message: `${said}; paygate-merchant --help shows the usage`, exitCode: 2 };
  }
  if ('syscall' in error && typeof error.syscall === 'string') return { message: error.message, exitCode: 1 };
  return undefined;
}

/**
 * Says on stderr why the command failed and returns the exit code: a mistake of the user's is one
 * line, `paygate-merchant: <what is wrong>`; anything else is a fault of ours and says so. With
 * `debug`, the trace (and its causes) follows.
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
      ? `paygate-merchant: ${line}\n`
      : `paygate-merchant: internal error: ${line}${debug ? '' : ' (run with --debug for the trace)'}\n`,
  );
  if (debug) write(`${inspect(error)}\n`);
  return mistake?.exitCode ?? 1;
}
