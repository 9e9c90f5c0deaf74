#!/usr/bin/env node
// One line, when this Node.js is not a line Paygate supports (22.12 or newer, 24, 26 or newer):
// which it needs and how to get one. `npm start` (prestart.mjs) says it before anything else,
// and `npm ci` / `npm install` (the root's prepare) say it after npm's EBADENGINE warnings, so
// the last thing a newcomer on another Node reads is what to do. It never stops anything: on a
// line past its end of life the platform starts and the server logs its warning.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const supported = (major === 22 && minor >= 12) || major === 24 || major >= 26;
if (!supported) {
  console.error(
    `paygate: Paygate needs Node.js 22 (22.12 or newer), 24 or 26 and this is ${process.version}; ` +
      `export PATH="$(scripts/node-line.sh 24):$PATH" puts Node 24 first (or use nvm, fnm, your system's packages)`,
  );
}
