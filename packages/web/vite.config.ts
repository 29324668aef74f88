import tailwindcss from '@tailwindcss/vite';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The bundle is served by eng-console and by the console worker, at `/` or under a sub-path,
// so assets are addressed relative to the page (`base: './'`) and routes live in the hash.
const consoleOrigin = process.env.ENG_CONSOLE_ORIGIN ?? 'http://127.0.0.1:3113';

export default defineConfig({
  base: './',
  plugins: [react(), tailwindcss()],
  define: { __UI_BUILD_TIME__: JSON.stringify(new Date().toISOString()) },
  resolve: { conditions: ['browser'] },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    // 300 KB gzip budget for the initial JS (issue 6): heavy views are split out with import()
    chunkSizeWarningLimit: 700,
    assetsDir: 'assets',
  },
  server: {
    port: 3114,
    // `npm run dev -w @eng/web` next to a running eng-console (ENG_CONSOLE_ORIGIN, default :3113)
    proxy: {
      '/ws': { target: consoleOrigin.replace(/^http/, 'ws'), ws: true },
      '/_console': { target: consoleOrigin },
    },
  },
});
