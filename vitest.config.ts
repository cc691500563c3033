import { defineConfig } from 'vitest/config'

export default defineConfig({
  // Tests import the packages' TypeScript sources through the "source" export condition.
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    globalSetup: ['test-servers/global-setup.ts'],
    include: ['packages/*/test/**/*.test.ts', 'conformance/test/**/*.test.ts', 'conformance/examples/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
})
