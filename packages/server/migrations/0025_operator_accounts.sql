-- One accounts machinery, two audiences (issue 45): the merchants' people of the portal and the
-- platform's operators of the back office sign in through the same tables and code
-- (modules/accounts). The tables keep the names they had when the portal was the only audience.
-- An operator belongs to no merchant: merchant_id is NULL exactly for the back office.
ALTER TABLE portal_users ADD COLUMN audience text NOT NULL DEFAULT 'portal'
  CHECK (audience IN ('portal', 'backoffice'));
ALTER TABLE portal_users ALTER COLUMN merchant_id DROP NOT NULL;
ALTER TABLE portal_users ADD CONSTRAINT portal_users_audience_merchant
  CHECK ((audience = 'portal') = (merchant_id IS NOT NULL));

-- Each audience has its own roles (modules/portal/access.ts, modules/backoffice/access.ts).
ALTER TABLE portal_users DROP CONSTRAINT portal_users_role_check;
ALTER TABLE portal_users ADD CONSTRAINT portal_users_role_check CHECK (
  (audience = 'portal' AND role IN ('owner', 'developer', 'finance', 'viewer'))
  OR (audience = 'backoffice' AND role IN ('admin', 'support', 'finance', 'auditor')));

-- One login per email, environment and audience: a merchant's person may also be an operator,
-- with another password and another second factor; neither account opens the other's door.
ALTER TABLE portal_users DROP CONSTRAINT portal_users_environment_email_key;
ALTER TABLE portal_users ADD CONSTRAINT portal_users_audience_email UNIQUE (audience, environment, email);
CREATE INDEX portal_users_backoffice ON portal_users (role) WHERE audience = 'backoffice';

ALTER TABLE portal_sessions ALTER COLUMN merchant_id DROP NOT NULL;

-- The lockout counts one audience's failures: failing at the portal does not lock an operator out.
ALTER TABLE login_attempts ADD COLUMN audience text NOT NULL DEFAULT 'portal'
  CHECK (audience IN ('portal', 'backoffice'));
DROP INDEX login_attempts_email;
CREATE INDEX login_attempts_email ON login_attempts (audience, email, created_at DESC);

-- A passkey sign-in's challenge (no user yet) is for one audience's door.
ALTER TABLE portal_webauthn_challenges ADD COLUMN audience text NOT NULL DEFAULT 'portal'
  CHECK (audience IN ('portal', 'backoffice'));
