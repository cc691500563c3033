/**
 * The CLI's bin on the live S3 test server: a command prints what it was asked for and nothing of
 * the AWS SDK's Node-version notice, unless the user asks for it.
 */
import { afterAll, describe, expect, inject, it } from 'vitest'
import { removeTempDirs, runBin, tempDir } from './support.js'

afterAll(removeTempDirs)

describe('seamfs on S3, as a person runs it', () => {
  const s3 = inject('s3')
  describe.skipIf(s3 === null)(`on the S3 test server${s3 === null ? ` — SKIPPED: ${inject('s3Why')}` : ''}`, () => {
    const fsUrl = (prefix: string): string =>
      `s3://${s3?.bucket}/${prefix}?endpoint=${s3?.endpoint}&region=${s3?.region}&forcePathStyle=true&accessKeyIdEnv=K&secretAccessKeyEnv=S`

    it('a command prints no SDK notice about Node versions; a user who sets the variable gets it', async () => {
      if (s3 === null) return
      const keys = { K: s3.accessKeyId, S: s3.secretAccessKey, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: undefined }
      const prefix = `cli-bin-${Date.now()}/`
      const cwd = tempDir('s3-bin')
      const quiet = await runBin(['--fs', fsUrl(prefix), 'write', 'a.txt'], { cwd, home: cwd, env: keys, input: 'hello\n' })
      expect(quiet.code).toBe(0)
      // The serving line, and nothing else.
      expect(quiet.stderr.split('\n').filter(Boolean)).toEqual([expect.stringMatching(/^seamfs: serving s3:\/\//)])
      const asked = await runBin(['--fs', fsUrl(prefix), 'ls'], { cwd, home: cwd, env: { ...keys, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'false' } })
      expect(asked.code).toBe(0)
      expect(asked.stdout).toContain('a.txt')
      // The SDK decides whether it warns (Node < 22); whatever it decides reaches the user.
      if (Number(process.versions.node.split('.')[0]) < 22) expect(asked.stderr).toContain('NodeVersionSupportWarning')
    })
  })
})
