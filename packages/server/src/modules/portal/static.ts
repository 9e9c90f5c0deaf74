import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { DomainError } from '../../errors.js';
import { withErrorStatus } from '../../http/errors.js';

/**
 * The portal web app's build (`vite build` in packages/portal). The same relative location holds
 * from `src/modules/portal` and from `dist/modules/portal`.
 */
export const PORTAL_DIST = join(import.meta.dirname, '../../../../portal/dist');
/** The back office web app's build (`vite build -c vite.backoffice.config.ts` in packages/portal). */
export const BACKOFFICE_DIST = join(import.meta.dirname, '../../../../portal/dist-backoffice');

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json',
};

/**
 * Everything the app needs comes from this server: no inline scripts, no other origins. Styles
 * are files too (React sets no style attributes the app relies on).
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY');
}

const notBuilt = (app: string, apis: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Paygate ${app} not built</title></head>
<body><main><h1>The ${app} has not been built</h1>
<p>Build it with <code>npm run build</code> at the repository root (or <code>npm run build -w @paygate/portal</code>)
and reload this page. ${apis} work without it.</p></main></body></html>
`;

const noSuchFile = () => new DomainError('NOT_FOUND', 'no such file');

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** A single-page app served under `prefix` from its build directory. */
interface WebApp {
  /** `/portal` or `/backoffice`. */
  readonly prefix: string;
  readonly distDir: string;
  /** The page of the app in its build (`index.html`, `backoffice.html`). */
  readonly index: string;
  /** The page shown when there is no build. */
  readonly notBuilt: string;
}

/**
 * Serves a single-page app under its prefix: its files, and its page for every other page path
 * (the app routes on the client); `<prefix>/api/…` is its API's, never a page. Hashed assets are
 * cached for good; the page itself never. Without a build, a page explains how to make one (the
 * server still runs).
 */
function webAppRoutes(app: FastifyInstance, web: WebApp): void {
  const root = normalize(web.distDir + sep);
  const sendIndex = async (reply: FastifyReply) => {
    const index = join(root, web.index);
    if (!(await isFile(index)))
      return securityHeaders(withErrorStatus(reply, 'PORTAL_NOT_BUILT'))
        .type(TYPES['.html'] as string)
        .send(web.notBuilt);
    return securityHeaders(reply)
      .header('cache-control', 'no-cache')
      .type(TYPES['.html'] as string)
      .send(await readFile(index));
  };

  app.get(web.prefix, async (_request, reply) => reply.redirect(`${web.prefix}/`, 302));
  app.get(`${web.prefix}/*`, async (request, reply) => {
    const path = (request.raw.url ?? '').split('?')[0] ?? '';
    if (path.startsWith(`${web.prefix}/api/`)) throw new DomainError('NOT_FOUND', 'no such endpoint');
    let relative: string;
    try {
      relative = decodeURIComponent(path.slice(`${web.prefix}/`.length));
    } catch {
      throw noSuchFile();
    }
    const file = normalize(join(root, relative));
    const inside = file.startsWith(root) && !relative.includes('\0');
    if (inside && relative !== '' && relative !== web.index && (await isFile(file))) {
      const type = TYPES[extname(file)] ?? 'application/octet-stream';
      const immutable = relative.startsWith('assets/');
      return securityHeaders(reply)
        .header('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
        .type(type)
        .send(await readFile(file));
    }
    // A missing file is 404; any other path is a page of the app.
    if (!inside || (extname(relative) !== '' && relative !== web.index)) throw noSuchFile();
    return sendIndex(reply);
  });
}

/** The portal's single-page app under `/portal` (packages/portal, index.html). */
export function portalStaticRoutes(app: FastifyInstance, distDir: string = PORTAL_DIST): void {
  webAppRoutes(app, {
    prefix: '/portal',
    distDir,
    index: 'index.html',
    notBuilt: notBuilt('merchant portal', 'The merchant API and the portal API'),
  });
}

/**
 * The back office's single-page app under `/backoffice` (packages/portal, backoffice.html): the
 * same headers and policy as the portal's; its setup page `/backoffice/setup` is one of its pages.
 */
export function backofficeStaticRoutes(app: FastifyInstance, distDir: string = BACKOFFICE_DIST): void {
  webAppRoutes(app, {
    prefix: '/backoffice',
    distDir,
    index: 'backoffice.html',
    notBuilt: notBuilt('back office', "The back office's API"),
  });
}
