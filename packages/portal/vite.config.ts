import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The portal is served by the platform under /portal (packages/server/src/modules/portal/static.ts).
// Everything is bundled: no fonts, scripts or styles from other origins.
export default defineConfig({
  base: '/portal/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    assetsInlineLimit: 0,
  },
  server: {
    // `npx vite` for UI work against a running platform on the default port.
    proxy: { '/portal/api': 'http://127.0.0.1:8080', '/cashier': 'http://127.0.0.1:8080' },
  },
});
