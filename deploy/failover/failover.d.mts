/** Types of deploy/failover/failover.mjs (imported by the failover test). */
import type { ChildProcess } from 'node:child_process';

export declare const PG_BIN: string;
/** Why the recipe cannot run on this machine, or false when it can. */
export declare function failoverSkip(): string | false;

export interface Daemon {
  readonly name: string;
  readonly child: ChildProcess | undefined;
  readonly running: boolean;
  readonly tail: readonly string[];
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<void>;
}

export interface PostgresNode {
  readonly name: string;
  readonly pgPort: number;
  readonly apiPort: number;
  readonly apiUrl: string;
  readonly dataDir: string;
  /** The superuser on this node directly (database postgres). */
  readonly superuserUrl: string;
  readonly patroni: Daemon;
  postmasterPid(): number | undefined;
}

export interface PatroniMember {
  readonly name: string;
  readonly role: string;
  readonly state: string;
  readonly timeline?: number;
  readonly lag?: number | string;
}

export interface PostgresHa {
  readonly base: string;
  readonly logDir: string;
  readonly nodes: readonly PostgresNode[];
  readonly etcd: Daemon;
  readonly haproxy: Daemon;
  readonly haproxyPort: number;
  readonly statsUrl: string;
  /** The platform's connection through HAProxy (role and database paygate). */
  readonly databaseUrl: string;
  readonly superuserUrl: string;
  node(name: string): PostgresNode | undefined;
  members(): Promise<PatroniMember[]>;
  leader(): Promise<string | undefined>;
  waitHealthy(timeoutMs?: number): Promise<string>;
  routedTo(): Promise<string | undefined>;
  killPostmaster(name: string): number;
  switchover(leader: string, candidate: string): Promise<string>;
  stop(): Promise<void>;
}

export interface PostgresHaOptions {
  logDir?: string;
  baseDir?: string;
  keep?: boolean;
}

export declare function startPostgresHa(options?: PostgresHaOptions): Promise<PostgresHa>;
