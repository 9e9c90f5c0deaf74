-- Webhook delivery state on the outbox, and a record of every attempt.
-- An event is claimed by one worker at a time through a lease: the claim commits before the HTTP
-- call, so a worker that dies mid-attempt only delays the event until its lease runs out.

ALTER TABLE events ADD COLUMN delivery_status text NOT NULL DEFAULT 'pending'
  CHECK (delivery_status IN ('pending', 'delivered', 'failed'));
ALTER TABLE events ADD COLUMN next_attempt_at timestamptz;
ALTER TABLE events ADD COLUMN attempt_count integer NOT NULL DEFAULT 0;
-- Attempts this event may make in all: 1 + the retry schedule, plus one per manual resend.
ALTER TABLE events ADD COLUMN attempt_budget integer;
ALTER TABLE events ADD COLUMN lease_owner text;
ALTER TABLE events ADD COLUMN lease_expires_at timestamptz;
ALTER TABLE events ADD COLUMN delivered_at timestamptz;
ALTER TABLE events ADD COLUMN last_status_code integer;
ALTER TABLE events ADD COLUMN last_error text;

UPDATE events SET next_attempt_at = created_at WHERE next_attempt_at IS NULL;

-- Claiming looks only at pending events, oldest due first.
CREATE INDEX events_due ON events (next_attempt_at, id) WHERE delivery_status = 'pending';
CREATE INDEX events_by_delivery_status ON events (merchant_id, delivery_status, created_at DESC, id DESC);

CREATE TABLE delivery_attempts (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id          text NOT NULL REFERENCES events (event_id),
  attempt           integer NOT NULL,
  worker            text NOT NULL,
  started_at        timestamptz NOT NULL,
  latency_ms        integer NOT NULL,
  status_code       integer,
  -- At most 1 KiB of the receiver's answer.
  response_excerpt  text,
  error             text,
  -- The nonce the attempt was signed with: every attempt is signed afresh.
  nonce             text NOT NULL,
  UNIQUE (event_id, attempt)
);
