/** Types of deploy/cluster.mjs (imported by the cluster tests). */
import type { ChildProcess } from 'node:child_process';

export declare const DEFAULT_DATABASE_URL: string;
export declare function freePort(): Promise<number>;
export declare function ensureDatabase(url: string): Promise<void>;
/** What `npm run cluster` needs before it starts anything, each missing one as one line. */
export declare function clusterPrerequisites(options: {
  databaseUrl: string;
  port: number;
  haproxy?: string;
}): Promise<string[]>;

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface ClusterProcess {
  readonly name: string;
  readonly kind: 'api' | 'worker' | 'haproxy';
  readonly port: number | undefined;
  readonly url: string | undefined;
  readonly child: ChildProcess | undefined;
  readonly running: boolean;
  /** Every exit so far, in order. */
  readonly exits: readonly Exit[];
  /** The last lines it wrote. */
  readonly tail: readonly string[];
  /** Resolves with the exit of the current run. */
  readonly exited: Promise<Exit>;
  start(timeoutMs?: number): Promise<void>;
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<Exit>;
}

/** One process of the cluster (exported for its tests). */
export declare class Proc implements ClusterProcess {
  constructor(options: {
    name: string;
    kind: 'api' | 'worker' | 'haproxy';
    command: string;
    args: string[];
    env: NodeJS.ProcessEnv;
    port?: number;
    logDir: string;
  });
  readonly name: string;
  readonly kind: 'api' | 'worker' | 'haproxy';
  readonly port: number | undefined;
  readonly url: string | undefined;
  readonly child: ChildProcess | undefined;
  readonly running: boolean;
  readonly exits: readonly Exit[];
  readonly tail: readonly string[];
  readonly exited: Promise<Exit>;
  start(timeoutMs?: number): Promise<void>;
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<Exit>;
}

export interface ClusterOptions {
  databaseUrl?: string;
  port?: number;
  apis?: number;
  workers?: number;
  source?: boolean;
  env?: Record<string, string>;
  workerEnv?: Record<string, string>;
  logDir?: string;
  stateDir?: string;
  haproxy?: string;
}

export interface Cluster {
  readonly url: string;
  readonly statsUrl: string;
  readonly databaseUrl: string;
  readonly adminToken: string;
  readonly masterKey: string;
  readonly logDir: string;
  readonly apis: readonly ClusterProcess[];
  readonly workers: readonly ClusterProcess[];
  readonly haproxy: ClusterProcess;
  backendStates(): Promise<Record<string, string>>;
  waitRouted(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export declare function startCluster(options?: ClusterOptions): Promise<Cluster>;
