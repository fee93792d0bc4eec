import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'adapters/**/*.test.ts', 'plugins/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Limits for a loaded two-core machine (another test run beside this one): a table of
    // thousands of cases that takes 10 s alone can take four times that. Tests wait on
    // conditions; a limit only decides how long a broken one hangs.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Two cores: keep the pool small so end-to-end suites (Chromium, fakes) do not starve.
    maxWorkers: 2,
  },
});
