import { useEffect, useRef, useState } from 'react';
import { api, setStepUpHandler } from './api';
import { CodeForm } from './pages/second-factor';
import { useSession } from './session';

/**
 * The step-up dialog: a sensitive change (keys, people, roles, security) answered
 * STEP_UP_REQUIRED, so the person gives a code again; the change is then sent once more.
 */
export function StepUpDialog() {
  const session = useSession();
  const dialog = useRef<HTMLDialogElement>(null);
  const pending = useRef<((ok: boolean) => void) | undefined>(undefined);
  const [open, setOpen] = useState(false);

  useEffect(() => {
    setStepUpHandler(
      () =>
        new Promise<boolean>((resolve) => {
          pending.current = resolve;
          setOpen(true);
        }),
    );
    return () => setStepUpHandler(undefined);
  }, []);
  useEffect(() => {
    if (open) dialog.current?.showModal();
    else dialog.current?.close();
  }, [open]);

  const finish = (ok: boolean) => {
    pending.current?.(ok);
    pending.current = undefined;
    setOpen(false);
  };

  return (
    <dialog ref={dialog} className="step-up" aria-labelledby="step-up-title" onCancel={() => finish(false)}>
      <h2 id="step-up-title">Confirm it is you</h2>
      <p>This change needs your second factor again: your last check is older than 5 minutes.</p>
      {open ? (
        <CodeForm
          passkey={session?.secondFactor.passkeys ?? false}
          submitLabel="Confirm"
          onCode={async (body) => {
            await api.post('/session/second-factor', body);
            finish(true);
          }}
        />
      ) : null}
      <p>
        <button type="button" className="button button-small" onClick={() => finish(false)}>
          Cancel
        </button>
      </p>
    </dialog>
  );
}
