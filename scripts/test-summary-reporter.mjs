// A node:test reporter that writes one JSON line per result (tests, skipped suites, failed hooks)
// for scripts/test.mjs to summarize after the TAP stream: {file, name, status, failureType?, error?,
// stderr?}.
// `name` is the full path of the test inside its file ("suite > test"). A test file whose process
// ended early (a signal, or an exit before its tests finished) fails as a whole with only "test
// failed"; its result carries how the process ended and the last lines it wrote to stderr, so a
// CI log that shows only the summary still says what happened.

import { resolve } from 'node:path';

/** Names of the tests in progress per file, by nesting level. */
const stacks = new Map();
/** The last lines each test file's process wrote to stderr. */
const stderrTails = new Map();
const STDERR_LINES = 8;

function fullName(data) {
  const stack = stacks.get(data.file) ?? [];
  return [...stack.slice(0, data.nesting), data.name].join(' > ');
}

/** Whether a skip or todo option is set (true or a message). */
function marked(option) {
  return option !== undefined && option !== false;
}

function shortMessage(error) {
  const cause = error?.cause ?? error;
  const message = String(cause?.message ?? cause ?? '');
  // Assertion messages put the values after a heading line ("Expected values to be …:").
  const lines = message.split('\n').map((part) => part.trim());
  const line = lines
    .filter((part) => part !== '')
    .slice(0, 3)
    .join(' ');
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

export default async function* summaryReporter(source) {
  for await (const event of source) {
    const data = event.data;
    if (event.type === 'test:stderr') {
      // Output events name the file as given on the command line, results by its absolute path.
      const file = resolve(data.file);
      const lines = [...(stderrTails.get(file) ?? []), ...String(data.message).split('\n').filter(Boolean)];
      stderrTails.set(file, lines.slice(-STDERR_LINES));
      continue;
    }
    if (event.type === 'test:start') {
      const stack = stacks.get(data.file) ?? [];
      stack.length = data.nesting;
      stack[data.nesting] = data.name;
      stacks.set(data.file, stack);
      continue;
    }
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const suite = data.details?.type === 'suite';
    const failureType = data.details?.error?.failureType;
    let status;
    if (marked(data.todo) || (event.type === 'test:pass' && marked(data.skip))) {
      status = 'skipped'; // a failing todo test does not fail the run either
    } else if (event.type === 'test:pass') {
      if (suite) continue; // its tests are counted one by one
      status = 'pass';
    } else {
      // A suite failing because tests inside it failed adds nothing; a failed hook does.
      if (suite && failureType === 'subtestsFailed') continue;
      status = 'fail';
    }
    const result = { file: data.file ?? data.name, name: fullName(data), status };
    if (status === 'fail') {
      const error = data.details?.error;
      const ended = processEnd(error);
      Object.assign(result, { failureType, error: ended ? `${shortMessage(error)} (${ended})` : shortMessage(error) });
      const tail = ended ? stderrTails.get(resolve(result.file)) : undefined;
      if (tail?.length) result.stderr = tail;
    }
    yield `${JSON.stringify(result)}\n`;
  }
}

/** How a test file's process ended, when the runner failed the file for it ("exit code 1", "signal SIGKILL"). */
function processEnd(error) {
  if (error?.signal) return `signal ${error.signal}`;
  return error?.exitCode === null || error?.exitCode === undefined ? undefined : `exit code ${error.exitCode}`;
}
