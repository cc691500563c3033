import { configDefaults, defineConfig } from 'vitest/config'

// Test files that need the live S3 (radosgw) and SFTP (sshd) servers. Only the `remote` project
// has the global setup that boots them, and vitest runs a project's global setup only when that
// project has files in the run: `vitest run --project unit` (or a path under a unit package) boots
// nothing. A new test file that mounts a live server goes here, or is named `*.remote.test.ts`.
const REMOTE = ['packages/backend-s3/test/**/*.test.ts', 'packages/backend-ssh/test/**/*.test.ts', 'packages/*/test/**/*.remote.test.ts']

export default defineConfig({
  // Tests import the packages' TypeScript sources through the "source" export condition.
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    // The `source` condition above is for our packages; Node must not follow it into dependencies that
    // also publish one (eventsource-parser's points at .ts, which Node 20 cannot load). The AI SDK and
    // what imports it are inlined, so vite resolves them, with their `default` entries.
    server: { deps: { inline: [/node_modules\/(ai|ai-v5|@ai-sdk\/[^/]+|eventsource-parser)\//] } },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['packages/*/test/**/*.test.ts', 'conformance/test/**/*.test.ts', 'conformance/examples/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...REMOTE],
        },
      },
      {
        extends: true,
        test: {
          name: 'remote',
          include: REMOTE,
          globalSetup: ['test-servers/global-setup.ts'],
        },
      },
    ],
  },
})
