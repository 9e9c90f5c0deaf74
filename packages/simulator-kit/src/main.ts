import { DirectoryInUseError } from '@paygate/dir-lock';
import type { Logger } from 'pino';
import { ConfigError } from './config.js';

/** What the start-up needs of a simulator: a log, listening, and a graceful close. */
export interface Runnable {
  readonly log: Logger;
  listen(): Promise<unknown>;
  close(): Promise<void>;
}

/** What a simulator shows once listening. */
export interface Banner {
  /** Lines printed as they are on stdout, for the developer (snippets, fingerprints). */
  readonly lines?: readonly string[];
  /** Fields of the JSON `"<name> listening"` log line (never a secret). */
  readonly fields: Readonly<Record<string, unknown>>;
}

export interface SimulatorProgram<Config, Simulator extends Runnable> {
  /** The program's name, as `npx` runs it (`paygate-psp`): prefix of refusals, message of the listening line. */
  readonly name: string;
  /** Parses and validates the environment once, throwing {@link ConfigError} for a bad setting. */
  parseConfig(env: NodeJS.ProcessEnv): Config;
  /** Builds the simulator (takes the data directory's lock, loads its state). */
  create(config: Config): Simulator | Promise<Simulator>;
  /** What to print and log once listening. */
  banner(simulator: Simulator, config: Config): Banner;
  /** How long a graceful stop may take before the process exits anyway (default {@link STOP_DEADLINE_MS}). */
  readonly stopDeadlineMs?: number;
}

/**
 * How long a simulator's graceful stop may take: its close waits for the requests being served
 * and the step in flight (a notification to a platform that does not answer, say), and a
 * simulator left running by a stop that never ends keeps its port, its data directory's lock and,
 * in tests, a CI machine's processes.
 */
export const STOP_DEADLINE_MS = 10_000;

/** An error the start-up reports as one line (`<name>: <message>`) rather than a stack. */
export function isStartRefusal(error: unknown): error is Error {
  return error instanceof ConfigError || error instanceof DirectoryInUseError;
}

/**
 * A simulator's `main`: parse the config once, build, listen, print the banner and log
 * `"<name> listening"`, and stop gracefully on SIGINT/SIGTERM (exit 0, or 1 when the close
 * fails). A stop that has not ended after the program's `stopDeadlineMs`, or a second signal
 * during it, exits at once with code 1 and a log line saying so. A bad setting or a data
 * directory in use ends the start with one line on stderr (`<name>: <reason>`) and exit code 1;
 * anything else prints the error.
 */
export async function runSimulator<Config, Simulator extends Runnable>(
  program: SimulatorProgram<Config, Simulator>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  try {
    const config = program.parseConfig(env);
    const simulator = await program.create(config);
    await simulator.listen();
    // The handlers come before the banner: whoever reads "listening" may stop it at once.
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) {
        simulator.log.warn({ signal }, 'second signal during the stop: exiting now');
        process.exit(1);
      }
      stopping = true;
      simulator.log.info({ signal }, 'shutting down');
      const deadlineMs = program.stopDeadlineMs ?? STOP_DEADLINE_MS;
      setTimeout(() => {
        simulator.log.error({ deadlineMs }, 'the stop did not end in time: exiting now');
        process.exit(1);
      }, deadlineMs).unref();
      try {
        await simulator.close();
        simulator.log.info('stopped');
        process.exit(0);
      } catch (error) {
        simulator.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      }
    };
    process.on('SIGINT', () => void stop('SIGINT'));
    process.on('SIGTERM', () => void stop('SIGTERM'));
    const banner = program.banner(simulator, config);
    for (const line of banner.lines ?? []) console.log(line);
    simulator.log.info(banner.fields, `${program.name} listening`);
  } catch (error) {
    console.error(isStartRefusal(error) ? `${program.name}: ${error.message}` : error);
    process.exit(1);
  }
}
