import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The operator console UI (renderer/), built to dist/renderer, which `src/console` serves at `/`.
 * The console's CSP is `default-src 'self'; script-src 'self'; style-src 'self'`: the build must emit external
 * files only (no inline scripts, no <style>, no data: URLs), so nothing is inlined.
 */
export default defineConfig({
  root: 'renderer',
  base: './',
  plugins: [react()],
  build: {
    outDir: '../dist/renderer',
    emptyOutDir: true,
    // data: URLs would be blocked by `default-src 'self'`.
    assetsInlineLimit: 0,
    // The modulepreload polyfill would be one more script; every browser the console targets has it.
    modulePreload: { polyfill: false },
    target: 'es2022',
    sourcemap: false,
  },
});
