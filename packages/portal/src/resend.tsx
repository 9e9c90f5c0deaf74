import { useAction } from './action';
import { api } from './api';
import { RowButton } from './components';

/**
 * Loads the page's data now and twice more over the next seconds: the dispatcher picks a resent
 * event up within moments, and its new attempt shows when it lands.
 */
export function reloadSoon(reload: () => void): void {
  reload();
  for (const ms of [1_000, 3_000]) setTimeout(reload, ms);
}

/** Resending one webhook event at a time; `noticeOf` says what the page shows once it is queued. */
export function useResend(reload: () => void, noticeOf: (eventId: string) => string) {
  const action = useAction();
  const resend = (eventId: string) =>
    void action.run(
      async () => {
        await api.post(`/events/${encodeURIComponent(eventId)}/resend`);
        reloadSoon(reload);
        return noticeOf(eventId);
      },
      { name: eventId },
    );
  return { ...action, resend };
}

export type Resender = ReturnType<typeof useResend>;

/** An event's Resend button: every one waits while any resend runs; the running one says so. */
export function ResendButton({ eventId, resender }: { eventId: string; resender: Resender }) {
  return (
    <RowButton label={`Resend event ${eventId}`} disabled={resender.busy} onClick={() => resender.resend(eventId)}>
      {resender.running === eventId ? 'Resending…' : 'Resend'}
    </RowButton>
  );
}
