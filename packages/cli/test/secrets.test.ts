/**
 * Secrets never reach stdout or stderr, whatever characters they hold: run as a user would, with
 * the secret in an `sftp://` or `s3://` password, in a query string, or in a config file. In
 * process through `runCli` for every character, and through the built bin for the worst ones.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli, type Io } from '../src/cli.js'
import { builtTitle, missingBuild, removeTempDirs, runBin, tempDir } from './support.js'

afterAll(removeTempDirs)

const SPECIALS = ['/', '@', ':', '?', '#', '%', '/@:?#%', 'a/b@c:d?e#f%g', '%2F', '&x=', ' ', "'"]
/** Secrets with recognizable halves: neither half may be printed. */
const SECRETS = SPECIALS.map((c) => `Zq9x${c}Wv7y`)

/** The `--fs` specs a user may put a secret in, raw and %-encoded. */
function specs(secret: string): string[] {
  return [secret, encodeURIComponent(secret)].flatMap((s) => [
    `sftp://user:${s}@files.example.com/srv`,
    `sftp://user:${s}@files.example.com:2222/srv?key=~/.ssh/id`,
    `sftp://user@files.example.com/srv?password=${s}`,
    `sftp://user@files.example.com/srv?hostKeySha256=SHA256:x&token=${s}`,
    `s3://AKIDEXAMPLE:${s}@bucket/prefix`,
    `s3://bucket/prefix?endpoint=http://127.0.0.1:7480&secretAccessKey=${s}`,
    `s3://bucket/prefix?token=${s}`,
    `s3://bucket/prefix?endpoint=http://admin:${s}@127.0.0.1:7480`,
  ])
}

interface Ran {
  readonly code: number
  readonly out: string
}

/** Runs the CLI in process with a captured Io; `out` is stdout and stderr together. */
async function run(argv: readonly string[], cwd: string): Promise<Ran> {
  let out = ''
  const io: Io = { stdout: (t) => void (out += t), stderr: (t) => void (out += t), stdin: async () => '', cwd, env: { HOME: cwd } }
  const code = await runCli(argv, io)
  return { code, out }
}

function expectNoSecret(out: string, secret: string): void {
  expect(out).not.toContain(secret)
  expect(out).not.toContain(encodeURIComponent(secret))
  expect(out).not.toContain('Zq9x')
  expect(out).not.toContain('Wv7y')
}

describe('seamfs never prints a secret', () => {
  it.each(SECRETS)('%s in a --fs URL: a config error (exit 2) without it', async (secret) => {
    const cwd = tempDir('secrets')
    for (const spec of specs(secret)) {
      const r = await run(['--fs', spec, 'ls'], cwd)
      expect({ spec, code: r.code }).toEqual({ spec, code: 2 })
      expect(r.out).toMatch(/^seamfs: config: /)
      expectNoSecret(r.out, secret)
    }
  })

  it.each(SECRETS)('%s in a config file: refused without it', async (secret) => {
    const cwd = tempDir('secrets')
    const configs = [
      ...specs(secret).map((backend) => ({ backend })),
      { backend: { type: 'sftp', host: 'h', username: 'u', password: secret } },
      { backend: { type: 's3', bucket: 'b', secretAccessKey: secret } },
      { backend: { type: 's3', bucket: 'b', endpoint: `http://u:${secret}@127.0.0.1:7480` } },
    ]
    for (const config of configs) {
      writeFileSync(join(cwd, 'seamfs.config.json'), JSON.stringify(config))
      const r = await run(['ls'], cwd)
      expect(r.code).toBe(2)
      expectNoSecret(r.out, secret)
    }
  })

  it('the messages say what to do instead', async () => {
    const cwd = tempDir('secrets')
    expect((await run(['--fs', 'sftp://user:Zq9x/Wv7y@h/srv', 'ls'], cwd)).out).toBe(
      'seamfs: config: --fs: expected a valid URL, found the string "sftp://user:***@h/srv"\n',
    )
    expect((await run(['--fs', 's3://bucket/p?token=Zq9xWv7y', 'ls'], cwd)).out).toBe(
      'seamfs: config: --fs: expected only the query keys endpoint, region, forcePathStyle, accessKeyIdEnv, secretAccessKeyEnv, found the unknown query key "token"\n',
    )
    writeFileSync(join(cwd, 'seamfs.config.json'), JSON.stringify({ backend: { type: 's3', bucket: 'b', accessKeyIdEnv: 'MY_KEY_ID' } }))
    expect((await run(['ls'], cwd)).out).toBe(
      'seamfs: config: backend.secretAccessKeyEnv: expected a variable name too, since accessKeyIdEnv is given (the two name one key), found nothing\n',
    )
  })
})

describe.skipIf(missingBuild.length > 0)(builtTitle('the built seamfs never prints a secret'), () => {
  it.each(['a/b@c:d?e#f%g', '/@:?#%'].map((c) => `Zq9x${c}Wv7y`))('%s in --fs: not on stdout or stderr', async (secret) => {
    const cwd = tempDir('secrets-bin')
    const home = tempDir('home')
    for (const spec of specs(secret)) {
      const r = await runBin(['--fs', spec, 'ls'], { cwd, home })
      expect({ spec, code: r.code }).toEqual({ spec, code: 2 })
      expectNoSecret(r.stdout + r.stderr, secret)
    }
  })
})
