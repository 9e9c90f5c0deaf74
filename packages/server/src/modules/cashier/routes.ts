import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { epcQrPayload, formatCreditorReference } from '@paygate/iso20022';
import { buildBrCode } from '@paygate/pix';
import QRCode from 'qrcode';
import { DomainError, type ErrorCode, type FieldError } from '../../errors.js';
import { withErrorStatus } from '../../http/errors.js';
import { withQuery } from '../../http/url.js';
import type { Config } from '../../config.js';
import type { Merchants } from '../merchants/service.js';
import { isFinalPayment, type Payments, type PaymentView } from '../payments/service.js';
import {
  chooseLocale,
  type Locale,
  type Messages,
  messagesFor,
  PAYER_LOCALES,
  supportedLocale,
  TRANSFER_LOCALES,
} from './i18n.js';
import { type CashierPage, COPY_SCRIPT, renderCashierPage, renderNotFoundPage, withLang } from './page.js';

const ORDER_NO = /^P[0-9]{18}$/;

/** The payer pages' icon: the Paygate mark, a white P on the page's blue. */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1e3a8a"/><path d="M11 25V7h7a6 6 0 0 1 0 12h-3v6z" fill="#fff"/><path d="M15 11v4h3a2 2 0 0 0 0-4z" fill="#1e3a8a"/></svg>
`;

/** The copy button's script, allowed by its hash alone. */
const SCRIPT_SOURCE = `'sha256-${createHash('sha256').update(COPY_SCRIPT).digest('base64')}'`;

/**
 * The page's own inline styles, its one script (by hash), its favicon and same-origin form posts; nothing else, and never framed. A
 * payment with a returnUrl may also post to that URL's origin: browsers hold the redirect that
 * follows the form post (303 to returnUrl) to form-action.
 */
function csp(payment?: PaymentView): string {
  const returnOrigin = payment?.returnUrl === undefined ? '' : ` ${formActionSource(payment.returnUrl)}`;
  return `default-src 'none'; style-src 'unsafe-inline'; script-src ${SCRIPT_SOURCE}; img-src 'self'; form-action 'self'${returnOrigin}; frame-ancestors 'none'; base-uri 'none'`;
}

/**
 * A CSP source for a returnUrl's origin: the origin itself (host names, as WHATWG normalized
 * them, are letters, digits, dots and hyphens), or just its scheme when the host cannot be
 * written as a CSP host source (an IPv6 literal).
 */
function formActionSource(returnUrl: string): string {
  const url = new URL(returnUrl);
  return /^[a-z0-9.-]+$/.test(url.hostname) ? url.origin : url.protocol;
}

/**
 * Where a payer goes back to once the payment is final: its returnUrl with orderNo,
 * merchantOrderNo and status appended after any query parameters the URL already has (kept as
 * they are). None without a returnUrl or while the payment can still move.
 */
export function returnLocation(payment: PaymentView): string | undefined {
  if (payment.returnUrl === undefined || !isFinalPayment(payment.status)) return undefined;
  return withQuery(payment.returnUrl, {
    orderNo: payment.orderNo,
    merchantOrderNo: payment.merchantOrderNo,
    status: payment.status,
  });
}

/** A page; with a failure code, the page answers that code's catalogue status. */
function htmlReply(
  reply: FastifyReply,
  failure: ErrorCode | undefined,
  html: string,
  messages: Messages,
  payment?: PaymentView,
): FastifyReply {
  return (failure === undefined ? reply : withErrorStatus(reply, failure))
    .header('content-language', messages.locale)
    .header('vary', 'Accept-Language')
    .header('content-security-policy', csp(payment))
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    .type('text/html; charset=utf-8')
    .send(html);
}

interface Loaded {
  readonly merchantId: bigint;
  readonly merchantName: string;
  readonly payment: PaymentView;
  readonly pix: CashierPage['pix'];
  readonly transfer: CashierPage['transfer'];
}

/** The Pix key of the sandbox's codes: a random-key (EVP) form no real account holds. */
const SANDBOX_PIX_KEY = '00000000-0000-4000-8000-000000000000';

/**
 * The sandbox's Pix code for a PIX payment of the built-in channel: a valid EMV BR Code (static,
 * one use, with the amount, the merchant's name and the order number as its reference, and its
 * CRC16), so a banking app at least reads it; no money can reach the sandbox key.
 */
export function sandboxPixCode(payment: PaymentView, merchantName: string): string {
  const plain = (text: string, max: number) =>
    text
      .normalize('NFD')
      .replace(/[^A-Za-z0-9 ]/g, '')
      .replace(/ +/g, ' ')
      .trim()
      .slice(0, max) || 'PAYGATE';
  return buildBrCode({
    account: { kind: 'key', key: SANDBOX_PIX_KEY, description: 'Paygate sandbox' },
    amount: payment.amount,
    merchantName: plain(merchantName, 25),
    merchantCity: 'SAO PAULO',
    txid: payment.orderNo,
    oneTime: true,
  });
}

/** The Pix code a payment's page shows, with its QR code (SVG from the `qrcode` library); none for other methods. */
async function pixOf(payment: PaymentView, merchantName: string): Promise<CashierPage['pix']> {
  const code =
    payment.payerAction.kind === 'pix'
      ? payment.payerAction.pixCode
      : payment.paymentMethod.code === 'PIX' && payment.payerAction.kind === 'redirect'
        ? sandboxPixCode(payment, merchantName)
        : undefined;
  if (code === undefined) return undefined;
  const qrSvg = await QRCode.toString(code, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return { code, qrSvg };
}

/**
 * A payment by bank transfer's block (kind sepa-sftp): the account, the beneficiary, the amount and
 * the reference as people read them, and the EPC QR code (EPC069-12, version 002, UTF-8) banking
 * apps scan: its payload is the guidelines' lines (`@paygate/iso20022`'s `epcQrPayload`), drawn
 * by the `qrcode` library at error correction level M, as the guidelines ask.
 */
async function transferOf(payment: PaymentView): Promise<CashierPage['transfer']> {
  const transfer = payment.bankTransfer;
  if (transfer === undefined) return undefined;
  const payload = epcQrPayload({
    beneficiary: { name: transfer.beneficiary, iban: transfer.iban, bic: transfer.bic },
    amount: payment.amount,
    reference: transfer.reference,
  });
  const qrSvg = await QRCode.toString(payload, { type: 'svg', errorCorrectionLevel: 'M', margin: 4 });
  return {
    iban: transfer.iban.replace(/(.{4})(?!$)/g, '$1 '),
    ...(transfer.bic !== undefined ? { bic: transfer.bic } : {}),
    beneficiary: transfer.beneficiary,
    reference: formatCreditorReference(transfer.reference),
    payload,
    qrSvg,
  };
}

/**
 * The sandbox cashier page at each payment's `cashierUrl` (`/cashier/:orderNo`): it shows the
 * amount, currency and method, and the payer pays (SUCCEEDED, with the payer's name and document
 * number) or makes the payment fail, exactly as the channel would report it — the order moves,
 * the ledger is credited and the webhook event is written in one transaction. With a returnUrl,
 * the payer is then sent back to the shop (303), as on opening a payment that is already final.
 *
 * A Pix payment shows its copy-and-paste code with a copy button and as a QR code: a channel's
 * (pix-api: the provider's `pixCopiaECola`), or for the built-in sandbox channel a BR Code of
 * the sandbox's own. A payment served by a channel is paid there: its page is the payer's code
 * only, with no pay or fail form; in production that is all the path serves (other payments
 * are not found there, and nothing is posted).
 */
/** The services the cashier pages use. */
export interface CashierServices {
  readonly config: Config;
  /** Milliseconds since the epoch. */
  readonly now: () => number;
  readonly payments: Payments;
  readonly merchants: Merchants;
}

export function cashierRoutes(app: FastifyInstance, services: CashierServices): void {
  const { payments } = services;
  const sandbox = services.config.environment === 'sandbox';
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 16 * 1024 },
    (_request, body, done) => done(null, new URLSearchParams(body as string)),
  );

  const load = async (orderNo: string): Promise<Loaded | undefined> => {
    if (!ORDER_NO.test(orderNo)) return undefined;
    const merchantId = await payments.ownerOf(orderNo);
    if (merchantId === undefined) return undefined;
    const payment = await payments.get(merchantId, { orderNo });
    // Production serves only a channel's payer page that points here: a Pix code (kind pix-api)
    // or a bank transfer's details (kind sepa-sftp).
    const here = `${services.config.publicUrl}/cashier/${orderNo}`;
    const served = payment.payerAction.kind === 'pix' || payment.payerAction.kind === 'bank';
    if (!sandbox && (!served || payment.payerAction.url !== here)) return undefined;
    const merchant = await services.merchants.profile(merchantId);
    const merchantName = merchant?.name ?? 'the merchant';
    return {
      merchantId,
      merchantName,
      payment,
      pix: await pixOf(payment, merchantName),
      transfer: await transferOf(payment),
    };
  };
  const isOpen = (payment: PaymentView) => payment.status === 'PENDING' && payment.expiresAt > services.now();
  /** The request's language (the link's `lang`, else Accept-Language) and the `lang` to carry on. */
  const languageOf = (request: FastifyRequest, loaded: Loaded | undefined) => {
    const query = request.query as Record<string, unknown>;
    const lang = typeof query.lang === 'string' ? query.lang : undefined;
    // A payment by SEPA bank transfer speaks the SEPA payers' languages too.
    const offered: readonly Locale[] =
      loaded?.transfer !== undefined || loaded?.payment.paymentMethod.code === 'SEPA'
        ? TRANSFER_LOCALES
        : PAYER_LOCALES;
    const messages = messagesFor(chooseLocale(request.headers['accept-language'], lang, offered), offered);
    // Only a parameter that chose the language is carried on to the form's post and its redirect.
    return { messages, lang: lang === undefined ? undefined : supportedLocale(lang, offered) };
  };
  type Language = ReturnType<typeof languageOf>;
  const page = (
    loaded: Loaded,
    language: Language,
    extra: { values?: { name: string; documentNumber: string }; errors?: FieldError[] },
  ) =>
    renderCashierPage({
      merchantName: loaded.merchantName,
      payment: loaded.payment,
      open: isOpen(loaded.payment),
      ...(loaded.pix ? { pix: loaded.pix } : {}),
      ...(loaded.transfer ? { transfer: loaded.transfer } : {}),
      payerOnly: loaded.payment.payerAction.kind !== 'redirect',
      messages: language.messages,
      lang: language.lang,
      ...extra,
    });
  /** The cashier page, or the payer sent back to the shop when the payment is final and has a returnUrl. */
  const show = (reply: FastifyReply, failure: ErrorCode | undefined, loaded: Loaded, language: Language) => {
    const location = returnLocation(loaded.payment);
    if (location !== undefined) return reply.header('cache-control', 'no-store').redirect(location, 303);
    return htmlReply(reply, failure, page(loaded, language, {}), language.messages, loaded.payment);
  };
  const notFound = (reply: FastifyReply, orderNo: string, language: Language) =>
    htmlReply(reply, 'ORDER_NOT_FOUND', renderNotFoundPage(orderNo, language.messages), language.messages);

  // The pages' icon (the CSP's img-src 'self' allows it), in the sandbox and in production.
  app.get('/favicon.svg', async (_request, reply) =>
    reply
      .type('image/svg+xml')
      .header('cache-control', 'public, max-age=86400')
      .header('x-content-type-options', 'nosniff')
      .send(FAVICON_SVG),
  );

  app.get('/cashier/:orderNo', async (request, reply) => {
    const { orderNo } = request.params as { orderNo: string };
    const loaded = await load(orderNo);
    const language = languageOf(request, loaded);
    if (!loaded) return notFound(reply, orderNo, language);
    return show(reply, undefined, loaded, language);
  });

  // Paying and failing are the sandbox channel's; a channel's payment is paid at the channel.
  if (!sandbox) return;
  app.post('/cashier/:orderNo', async (request: FastifyRequest, reply) => {
    const { orderNo } = request.params as { orderNo: string };
    const loaded = await load(orderNo);
    const language = languageOf(request, loaded);
    const m = language.messages;
    if (!loaded) return notFound(reply, orderNo, language);
    // A form posted from another site must not move the order (browsers send Origin on POST).
    const origin = request.headers.origin;
    const ownOrigins = [new URL(services.config.publicUrl).origin, `${request.protocol}://${request.headers.host}`];
    if (origin !== undefined && origin !== 'null' && !ownOrigins.includes(origin)) {
      return htmlReply(
        reply,
        'CSRF_REJECTED',
        page(loaded, language, { errors: [{ field: 'form', message: m.t('error.crossSite') }] }),
        m,
        loaded.payment,
      );
    }
    const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
    const action = form.get('action');
    const values = { name: (form.get('name') ?? '').trim(), documentNumber: (form.get('documentNumber') ?? '').trim() };
    if (!isOpen(loaded.payment) || loaded.payment.payerAction.kind !== 'redirect') {
      return show(reply, 'INVALID_STATE', loaded, language);
    }

    const errors: FieldError[] = [];
    if (action !== 'pay' && action !== 'fail') errors.push({ field: 'form', message: m.t('error.chooseAction') });
    if (action === 'pay' && values.name === '') errors.push({ field: 'name', message: m.t('error.enterName') });
    if (action === 'pay' && values.documentNumber === '') {
      errors.push({ field: 'documentNumber', message: m.t('error.enterDocument') });
    }
    if (errors.length > 0) {
      return htmlReply(reply, 'VALIDATION_FAILED', page(loaded, language, { values, errors }), m, loaded.payment);
    }

    const payer = {
      ...(values.name !== '' ? { name: values.name } : {}),
      ...(values.documentNumber !== '' ? { documentNumber: values.documentNumber } : {}),
    };
    let moved: PaymentView;
    try {
      moved = await payments.applyChannelReport(loaded.merchantId, {
        orderNo,
        status: action === 'pay' ? 'SUCCEEDED' : 'FAILED',
        ...(action === 'fail' ? { failureReason: 'The payer declined on the sandbox cashier page' } : {}),
        ...(Object.keys(payer).length > 0 ? { payer } : {}),
      });
    } catch (error) {
      if (error instanceof DomainError && error.code === 'VALIDATION_FAILED') {
        // The service's field errors are the API's (English); the page says them in its language.
        const fieldErrors = error.fieldErrors.map((e) => ({ field: e.field, message: m.t(fieldMessage(e.field)) }));
        return htmlReply(
          reply,
          'VALIDATION_FAILED',
          page(loaded, language, { values, errors: fieldErrors }),
          m,
          loaded.payment,
        );
      }
      if (error instanceof DomainError && error.code === 'INVALID_STATE') {
        return show(reply, 'INVALID_STATE', (await load(orderNo)) ?? loaded, language);
      }
      throw error;
    }
    // Post/redirect/get: back to the shop (returnUrl), or to the result page, which a reload does not post again.
    return reply.redirect(returnLocation(moved) ?? withLang(`/cashier/${orderNo}`, language.lang), 303);
  });
}

/** The catalogue's message for a field the service refused. */
function fieldMessage(field: string): string {
  if (field.endsWith('documentNumber')) return 'error.invalidDocument';
  if (field.endsWith('name')) return 'error.invalidName';
  return 'error.invalid';
}
