#!/usr/bin/env node
// `npm start` runs this before it rebuilds anything (npm's prestart): a second `npm start` on an
// embedded data directory that a running server owns is refused at once, with the line the
// server itself would print, instead of after a full build. It asks the same kernel lock the
// server holds (@paygate/dir-lock) and lets go of it at once; the server takes it for good when
// it starts. Nothing to check on PostgreSQL (DATABASE_URL), for a directory that does not exist
// yet, or before the first build (the server checks again when it starts, in any case).
//
// Before anything else it says, in one line, when this Node.js is not a line Paygate supports
// (check-node.mjs); the start goes on.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import './check-node.mjs';

const databaseUrl = process.env.DATABASE_URL ?? '';
const configured = process.env.PAYGATE_DATA_DIR || '.paygate';
const directory = resolve(configured);

if (databaseUrl === '' && configured !== 'memory://' && existsSync(directory)) {
  let lockDirectory;
  let DirectoryInUseError;
  try {
    ({ lockDirectory, DirectoryInUseError } = await import('@paygate/dir-lock'));
  } catch {
    process.exit(0); // not built yet: the server checks when it starts
  }
  try {
    lockDirectory(directory, 'npm start').release();
  } catch (error) {
    if (!(error instanceof DirectoryInUseError)) throw error;
    console.error(`paygate: ${error.message}`);
    process.exit(1);
  }
}
