import { dirname, join, resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

const SRC = resolve(import.meta.dirname, 'src');
const BACKOFFICE = join(SRC, 'backoffice');
/** The portal's modules bound to the app: where it is served (site) and whose session it holds. */
const BOUND = new Set(['site', 'session']);

/**
 * The back office shares the portal's API client, router and components (components.tsx,
 * table.tsx, lists.tsx, stepup.tsx, the sign-in and second-factor pages and the gate before the
 * app in door.tsx, the top bar in shell.tsx, the account page). Those read where
 * the app is served from `./site` and the signed-in person from `./session`; in this build each
 * such import from the portal's files resolves to the back office's module of the same name and
 * exports (src/backoffice/site.ts: /backoffice; session.tsx: the operator), so the client calls
 * /backoffice/api and the router lives under /backoffice. The portal's own build is untouched.
 */
function backofficeBindings(): Plugin {
  return {
    name: 'paygate-backoffice-bindings',
    enforce: 'pre',
    async resolveId(source, importer) {
      if (!importer || importer.startsWith(BACKOFFICE) || !importer.startsWith(SRC)) return null;
      const match = /^\.{1,2}\/(site|session)$/.exec(source);
      if (!match || !BOUND.has(match[1] as string)) return null;
      // Only the portal's own modules (src/api.ts…), not a page's file of the same name.
      if (resolve(dirname(importer), source) !== join(SRC, match[1] as string)) return null;
      return this.resolve(join(BACKOFFICE, match[1] as string), importer, { skipSelf: true });
    },
  };
}

// The back office is served by the platform under /backoffice (packages/server/src/modules/portal/static.ts).
// Like the portal, everything is bundled: no fonts, scripts or styles from other origins.
export default defineConfig({
  base: '/backoffice/',
  plugins: [backofficeBindings(), react()],
  build: {
    outDir: 'dist-backoffice',
    emptyOutDir: true,
    sourcemap: false,
    assetsInlineLimit: 0,
    rollupOptions: { input: { backoffice: resolve(import.meta.dirname, 'backoffice.html') } },
  },
  server: {
    // `npx vite -c vite.backoffice.config.ts` for UI work against a running platform on the default port.
    proxy: { '/backoffice/api': 'http://127.0.0.1:8080' },
  },
});
