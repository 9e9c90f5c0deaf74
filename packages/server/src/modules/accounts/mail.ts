import { createTransport } from 'nodemailer';
import type { Config } from '../../config.js';

/** An invitation email's content. */
export interface InvitationMail {
  readonly to: string;
  /** What the person is invited to: "the Paygate merchant portal of Shop", "the Paygate back office". */
  readonly invitedTo: string;
  readonly role: string;
  /** A credential: it goes in this email to the person and nowhere else (never to a log). */
  readonly setupUrl: string;
  readonly expiresAt: number;
}

/**
 * Sends an invitation through the SMTP server of `PAYGATE_SMTP_URL` (nodemailer); answers false,
 * sending nothing, when none is configured.
 */
export async function sendInvitation(config: Pick<Config, 'smtpUrl' | 'smtpFrom'>, mail: InvitationMail) {
  if (config.smtpUrl === undefined) return false;
  const transport = createTransport(config.smtpUrl);
  try {
    await transport.sendMail({
      from: config.smtpFrom,
      to: mail.to,
      subject: `You are invited to ${mail.invitedTo}`,
      text: [
        `You have been invited to ${mail.invitedTo} as ${mail.role}.`,
        '',
        'Choose your password here (the link works once, until',
        `${new Date(mail.expiresAt).toISOString()}):`,
        '',
        mail.setupUrl,
        '',
        'If you did not expect this, ignore this email.',
      ].join('\n'),
    });
  } finally {
    transport.close();
  }
  return true;
}
