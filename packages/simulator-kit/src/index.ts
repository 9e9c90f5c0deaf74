/**
 * What the reference simulators (`paygate-psp`, `paygate-pix`, `paygate-bank`) share, so that
 * none of them carries its own copy: one owner per data directory, the journal store, the
 * start-up and the test-control port. Each simulator keeps its own records, routes and config.
 */
export {
  DirectoryInUseError,
  LOCK_FILE,
  lockDirectory,
  type DirectoryLock,
  type DirectoryOwner,
} from '@paygate/dir-lock';
export { ConfigError, envDuration, envInteger, envPort, envText } from './config.js';
export {
  ControlRefusal,
  controlInput,
  createControlPort,
  listenOn,
  MAX_CONTROL_BODY,
  readBody,
  sendJson,
  stopListening,
  urlHost,
  type BodySchema,
  type ControlHandler,
  type ControlPort,
  type ControlPortOptions,
  type ControlRequest,
  type ControlRoutes,
} from './control.js';
export { writeFileAtomic } from './files.js';
export { Journal, JournalStore, type JournalOptions, type JournalState } from './journal.js';
export { isStartRefusal, runSimulator, type Banner, type Runnable, type SimulatorProgram } from './main.js';
