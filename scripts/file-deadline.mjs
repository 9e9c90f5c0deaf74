#!/usr/bin/env node
// Keeps one hung test file from holding a whole run. Node's test runner gives each test file a
// process of its own and times out tests inside that process (--test-timeout), so a file process
// whose thread is blocked for good (a deadlock in V8, say) stops the run until CI's own limit
// ends it, naming nothing. The watch here sees each file process from outside (Linux's /proc: a
// process with NODE_TEST_CONTEXT in its environment, as the runner starts it, whose parent has
// none) and, after PAYGATE_TEST_FILE_MINUTES (default 15; 0: never), SIGKILLs it with the processes
// it started, saying which file it was. The runner then reports that file as failed and goes on.
//   node scripts/file-deadline.mjs <command> [args...]   (runs the command under the watch)
// or, from a script that starts the runner itself: watchTestFiles(pid).
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const POLL_MS = 5_000;

/** The minutes a test file process may run, from PAYGATE_TEST_FILE_MINUTES (0: no limit). */
export function fileMinutes() {
  const value = process.env.PAYGATE_TEST_FILE_MINUTES;
  const minutes = value === undefined || value === '' ? 15 : Number(value);
  if (!Number.isFinite(minutes) || minutes < 0) throw new Error(`PAYGATE_TEST_FILE_MINUTES: ${value} is not minutes`);
  return minutes;
}

/** A file of /proc/<pid>, or undefined when the process is gone or not ours to read. */
function procFile(pid, name) {
  try {
    return readFileSync(`/proc/${pid}/${name}`, 'utf8');
  } catch {
    return undefined;
  }
}

/** Every process's children, and when each started (clock ticks since boot: with the pid, its identity). */
function processTable() {
  const children = new Map();
  const start = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procFile(entry, 'stat');
    if (stat === undefined) continue;
    // Fields after the command name in parentheses: state, ppid, ..., starttime (the 22nd field).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pid = Number(entry);
    const ppid = Number(fields[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
    start.set(pid, fields[19]);
  }
  return { children, start };
}

/** `pid` and every process under it, `pid` first. */
function subtree(children, pid) {
  const found = [pid];
  for (let i = 0; i < found.length; i++) found.push(...(children.get(found[i]) ?? []));
  return found;
}

const isTestFileProcess = (pid) =>
  (procFile(pid, 'environ') ?? '').split('\0').some((v) => v.startsWith('NODE_TEST_CONTEXT='));

/**
 * The processes under `pid` that run a test file: on each branch the topmost one with
 * NODE_TEST_CONTEXT, as the runner starts it (what it starts inherits the variable, and is not
 * looked into).
 */
function fileProcesses(children, pid) {
  const found = [];
  const queue = [...(children.get(pid) ?? [])];
  while (queue.length > 0) {
    const next = queue.shift();
    if (isTestFileProcess(next)) found.push(next);
    else queue.push(...(children.get(next) ?? []));
  }
  return found;
}

/** The test file a file process runs: its last argument that names a script. */
function fileOf(pid) {
  const args = (procFile(pid, 'cmdline') ?? '').split('\0').filter(Boolean);
  return args.findLast((arg) => /\.[cm]?[jt]s$/.test(arg)) ?? args.join(' ');
}

/**
 * Watches the test file processes under `rootPid` (the runner or what starts it) and kills any
 * that has run `minutes`, with its own processes. Returns a function that stops the watch, and
 * the files it killed (for the exit code).
 */
export function watchTestFiles(rootPid, minutes = fileMinutes(), log = (line) => console.error(line)) {
  const killed = [];
  if (minutes === 0 || !existsSync('/proc/self/stat')) return { stop: () => {}, killed };
  const limitMs = minutes * 60_000;
  const seen = new Map();
  const tick = () => {
    const { children, start } = processTable();
    const now = Date.now();
    const alive = new Set();
    for (const pid of fileProcesses(children, rootPid)) {
      const identity = `${pid}:${start.get(pid)}`;
      alive.add(identity);
      const since = seen.get(identity) ?? now;
      seen.set(identity, since);
      if (now - since < limitMs) continue;
      const file = fileOf(pid);
      const victims = subtree(children, pid);
      for (const victim of victims) {
        try {
          process.kill(victim, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
      killed.push(file);
      seen.delete(identity);
      const started = victims.length - 1;
      log(
        `# file-deadline: ${file} ran for ${minutes} min (PAYGATE_TEST_FILE_MINUTES): SIGKILLed it` +
          ` and the ${started} process${started === 1 ? '' : 'es'} it started; the runner reports it as failed`,
      );
    }
    for (const identity of seen.keys()) if (!alive.has(identity)) seen.delete(identity);
  };
  const timer = setInterval(tick, Math.min(POLL_MS, limitMs));
  timer.unref();
  return { stop: () => clearInterval(timer), killed };
}

/** Runs `command` under the watch; resolves its exit code (1 if it died of a signal or a file was killed). */
export function runWatched(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'inherit', ...options });
    const watch = watchTestFiles(child.pid);
    const forward = (signal) => child.kill(signal);
    process.on('SIGINT', forward).on('SIGTERM', forward);
    child.once('error', reject);
    child.once('exit', (code) => {
      watch.stop();
      process.off('SIGINT', forward).off('SIGTERM', forward);
      resolve(watch.killed.length > 0 ? code || 1 : (code ?? 1));
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [command, ...args] = process.argv.slice(2);
  if (!command) {
    console.error('usage: node scripts/file-deadline.mjs <command> [args...]');
    process.exit(2);
  }
  process.exit(await runWatched(command, args));
}
