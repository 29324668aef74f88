import tailwindcss from '@tailwindcss/vite';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The bundle is served by eng-console and by the console worker, at `/` or under a sub-path,
// so assets are addressed relative to the page (`base: './'`) and routes live in the hash.
export default defineConfig({
  base: './',
  plugins: [react(), tailwindcss()],
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
    // `npm run dev -w @eng/web` next to a running eng-console on 3113
    proxy: {
      '/ws': { target: 'ws://127.0.0.1:3113', ws: true },
      '/_console': { target: 'http://127.0.0.1:3113' },
    },
  },
});
