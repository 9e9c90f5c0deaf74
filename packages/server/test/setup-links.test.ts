/**
 * Setup links are credentials (issue 45): they go to the person who asked (the command line's
 * answer, the admin of the back office without SMTP) or to the person invited by email, and
 * never into the server's log, at any level, for portal people and operators alike.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMerchant, startTestPlatform, type TestPlatform } from './harness.js';
import { BACKOFFICE, inviteOperator, operator } from './backoffice-harness.js';
import { invite, PortalClient, portalUser } from './portal-harness.js';
import { type SmtpSink, startSmtpSink } from './smtp-sink.js';

/** Every setup token in a text (the fragment of a setup link, as the mail and the answers carry it). */
const tokensIn = (text: string) => [...text.matchAll(/#token=([A-Za-z0-9_-]{43})/g)].map((m) => m[1] as string);

describe('setup links never reach the log', () => {
  let platform: TestPlatform;
  let smtp: SmtpSink;
  before(async () => {
    smtp = await startSmtpSink();
    platform = await startTestPlatform({ captureLog: true, env: { PAYGATE_SMTP_URL: smtp.url } });
  });
  after(async () => {
    await platform.close();
    await smtp.close();
  });

  it('portal invitations (the command line, an owner, an admin of the back office) and operator invitations', async () => {
    const tokens: string[] = [];
    const shop = await createMerchant(platform, 'Log Shop');
    // `paygate user invite` and `paygate operator invite`: the link is the command's answer.
    tokens.push((await invite(platform, shop.accessKey, 'cli.owner@shop.example')).token);
    tokens.push((await inviteOperator(platform, 'cli.operator@ops.example', 'support')).token);
    // An owner invites from the portal: the link goes by email only.
    const owner = await portalUser(platform, shop);
    const portal = await PortalClient.signIn(platform, owner.email, owner.password);
    const invited = await portal.post('/portal/api/people', { email: 'teammate@shop.example', role: 'viewer' });
    assert.equal(invited.status, 200, invited.text);
    assert.deepEqual(tokensIn(invited.text), [], 'not in the answer to the inviter');
    // An admin invites an operator and a merchant's first owner: by email when SMTP is configured.
    const admin = await operator(platform, 'admin');
    const byAdmin = await admin.post(`${BACKOFFICE}/operators`, { email: 'new.operator@ops.example', role: 'finance' });
    assert.equal(byAdmin.status, 200, byAdmin.text);
    assert.deepEqual(tokensIn(byAdmin.text), [], 'emailed, so not answered');
    const other = await createMerchant(platform, 'Second Shop');
    const ownerInvite = await admin.post(`${BACKOFFICE}/merchants/${other.accessKey}/invite`, {
      email: 'first.owner@second.example',
    });
    assert.equal(ownerInvite.status, 200, ownerInvite.text);
    assert.deepEqual(tokensIn(ownerInvite.text), []);
    for (const mail of smtp.mails) tokens.push(...tokensIn(mail.data.replace(/=\r\n/g, '').replace(/=3D/g, '=')));
    assert.equal(tokens.length, 5, `links found: ${tokens.length}`);

    const log = platform.logText();
    assert.ok(log.length > 0 && /portal|backoffice/.test(log), 'the log was captured at every level');
    for (const token of tokens) assert.ok(!log.includes(token), `a setup token is in the log: ${token.slice(0, 6)}…`);
    assert.ok(!/#token=/.test(log), 'no setup link in the log');
  });
});
