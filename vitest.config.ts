import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'adapters/**/*.test.ts', 'plugins/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: keep the pool small so end-to-end suites (Chromium, fakes) do not starve.
    maxWorkers: 2,
  },
});
