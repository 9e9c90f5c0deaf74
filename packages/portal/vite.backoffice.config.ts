import { dirname, join, resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

const SRC = resolve(import.meta.dirname, 'src');
const BACKOFFICE = join(SRC, 'backoffice');
/** The portal's modules that know their address: the shared components import them by these names. */
const BOUND = new Set(['api', 'router', 'session']);

/**
 * The back office shares the portal's components (components.tsx, table.tsx, lists.tsx,
 * stepup.tsx, the second-factor forms, the account page). Those import the portal's API client,
 * router and session (`./api`, `./router`, `./session`), which are bound to /portal; in this
 * build each such import from the portal's files resolves to the back office's module of the
 * same name and the same exports (src/backoffice/api.ts, router.tsx, session.tsx), bound to
 * /backoffice. The portal's own build is untouched.
 */
function backofficeBindings(): Plugin {
  return {
    name: 'paygate-backoffice-bindings',
    enforce: 'pre',
    async resolveId(source, importer) {
      if (!importer || importer.startsWith(BACKOFFICE) || !importer.startsWith(SRC)) return null;
      const match = /^\.{1,2}\/(api|router|session)$/.exec(source);
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
