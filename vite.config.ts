import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { precompress } from './scripts/precompress.ts';

const gateway = process.env.SWITCHBOARD_DEV_GATEWAY ?? 'http://127.0.0.1:3000';

export default defineConfig({
  plugins: [react(), precompress()],
  resolve: {
    alias: { 'object.entries': fileURLToPath(new URL('./src/shims/objectEntries.cjs', import.meta.url)) },
  },
  build: {
    outDir: 'dist',
    rolldownOptions: {
      output: {
        // React's renderer changes only with React: its own long-cached file, and no chunk past Vite's size warning
        advancedChunks: { groups: [{ name: 'react-dom', test: /node_modules[\\/](?:react-dom|scheduler)[\\/]/ }] },
      },
    },
  },
  server: {
    port: 5173,
    proxy: {
      '/api': gateway,
      '/v1': gateway,
    },
  },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'console',
          environment: 'jsdom',
          include: ['tests/console/**/*.test.{ts,tsx}'],
          setupFiles: ['tests/console/setup.ts'],
          // a react-admin screen rendered in jsdom takes seconds on a busy 2-core machine: 5 s timed out healthy tests
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'server',
          environment: 'node',
          include: ['tests/server/**/*.test.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'e2e',
          environment: 'node',
          include: ['tests/e2e/**/*.e2e.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
