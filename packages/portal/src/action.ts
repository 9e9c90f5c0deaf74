import { useState } from 'react';
import { useAsync } from './components';

/** How `run` reports a write: the name the buttons show as running, and what to do on a refusal. */
export interface RunOptions {
  /** Which of several writes is running (an event id): its button says so. */
  readonly name?: string;
  /** Called after a refusal, for instance to load again what the write may have changed. */
  readonly onError?: () => void;
}

/**
 * The state of a page's or a section's writes, one at a time: whether one is running (`busy`,
 * and which, `running`), the error of the last one and the notice it left. The page shows them
 * with `<ActionStatus>`, and disables its buttons while `busy`.
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [running, setRunning] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState('');

  /**
   * Clears the last error and notice, runs `work` and shows the notice it returns (none when it
   * returns nothing). Resolves true when the write went through, false when it was refused.
   */
  const run = async (work: () => Promise<string | void>, options: RunOptions = {}): Promise<boolean> => {
    setBusy(true);
    setRunning(options.name);
    setError(undefined);
    setNotice('');
    try {
      const done = await work();
      if (done) setNotice(done);
      return true;
    } catch (caught) {
      setError(caught);
      options.onError?.();
      return false;
    } finally {
      setBusy(false);
      setRunning(undefined);
    }
  };

  /** Shows an error found before anything was sent (a form's own check). */
  const fail = (problem: unknown) => {
    setError(problem);
    setNotice('');
  };

  return { busy, running, error, notice, run, fail };
}

/**
 * Data loaded when a page opens, which the page's writes replace: the sessions, people, keys and
 * passkeys writes each answer with the whole new list, shown at once without loading again.
 * `write` runs one through `action` (its busy state, error and notice); with `reloadOnError`, a
 * refusal loads the data again, since it may come from a change made elsewhere meanwhile.
 */
export function useEditable<T>(load: () => Promise<T>, { reloadOnError }: { reloadOnError: boolean }) {
  const loaded = useAsync(load, []);
  const [current, setCurrent] = useState<T>();
  const action = useAction();
  const write = (work: () => Promise<T>, done: string) =>
    action.run(
      async () => {
        setCurrent(await work());
        return done;
      },
      reloadOnError ? { onError: loaded.reload } : {},
    );
  return { ...loaded, data: current ?? loaded.data, replace: setCurrent, action, write };
}
