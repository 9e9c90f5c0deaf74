import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * Scalar's standalone bundle, served from node_modules: the page loads nothing from another
 * origin (no CDN, no font service, no telemetry), and the CSP below enforces it.
 */
const SCALAR_BUNDLE = join(
  dirname(createRequire(import.meta.url).resolve('@scalar/api-reference')),
  'browser',
  'standalone.js',
);

/**
 * Scalar's options: system fonts instead of fonts.scalar.com, no telemetry, no hosted agent or
 * MCP features. No "try it" client and no "Test Request" button, and none of Scalar's generated
 * code samples: a request must be signed and sealed (see the signing recipe), which neither the
 * page nor a generated curl can do; each operation's own samples (`x-codeSamples`: the SDK, the
 * command line, the Python client) are shown instead. The server is the document's, relative to
 * where it was loaded from unless PAYGATE_PUBLIC_URL names one.
 */
const SCALAR_CONFIGURATION = {
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  hideTestRequestButton: true,
  hiddenClients: true,
  showDeveloperTools: 'never',
  agent: { disabled: true },
  mcp: { disabled: true },
  metaData: { title: 'Paygate merchant API reference' },
  // Scalar's default light theme has greys and method colours under WCAG AA contrast.
  customCss:
    '.light-mode{--scalar-color-2:#374151;--scalar-color-3:#4b5563;--scalar-color-green:#047857;--scalar-color-blue:#1d4ed8;--scalar-color-orange:#b45309;--scalar-color-red:#b91c1c;--scalar-color-purple:#6d28d9;--scalar-color-yellow:#854d0e} pre code.hljs,pre code.hljs *{white-space:pre-wrap!important;overflow-wrap:anywhere;overflow:visible!important} :not(pre)>code{white-space:normal!important;overflow-wrap:anywhere;word-break:break-word}',
  forceDarkModeState: 'light',
  hideDarkModeToggle: true,
};

/** Only this origin; Scalar sets inline styles and may start blob workers. */
const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const escapeAttribute = (text: string) => text.replaceAll('&', '&amp;').replaceAll("'", '&#39;');

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Paygate merchant API reference</title>
</head>
<body>
<script id="api-reference" data-url="/openapi.json" data-configuration='${escapeAttribute(JSON.stringify(SCALAR_CONFIGURATION))}'></script>
<script src="/docs/scalar.js"></script>
</body>
</html>
`;

const HOME_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Paygate</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#111827}a{color:#1d4ed8}</style>
</head>
<body>
<main>
<h1>Paygate</h1>
<ul>
<li><a href="/portal">Merchant portal</a></li>
<li><a href="/docs">API reference</a></li>
<li><a href="/openapi.json">OpenAPI document (JSON)</a></li>
</ul>
</main>
</body>
</html>
`;

function html(reply: FastifyReply, page: string, csp: string): FastifyReply {
  return reply
    .header('content-security-policy', csp)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .type('text/html; charset=utf-8')
    .send(page);
}

/** HEAD answers as GET does, without the body (the app turns automatic HEAD routes off). */
const WITH_HEAD = { exposeHeadRoute: true } as const;

/** `/` (links to the portal, the reference and the document) and the API reference at `/docs`. */
export function docsRoutes(app: FastifyInstance): void {
  const bundle = readFileSync(SCALAR_BUNDLE);
  app.get('/', WITH_HEAD, async (_request, reply) =>
    html(reply, HOME_PAGE, "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'"),
  );
  app.get('/docs', WITH_HEAD, async (_request, reply) => html(reply, DOCS_PAGE, DOCS_CSP));
  app.get('/docs/scalar.js', WITH_HEAD, async (_request, reply) =>
    reply
      .header('cache-control', 'public, max-age=3600')
      .header('x-content-type-options', 'nosniff')
      .type('text/javascript; charset=utf-8')
      .send(bundle),
  );
}
