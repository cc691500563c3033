/**
 * The harness config: every wrong config gets one precise message (which key,
 * what was expected, what was found) and never echoes a secret; the good forms
 * (config objects and `--fs` URLs) give the expected BackendConfig; loadHarness
 * mounts what the config says and describes it without secrets.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ConfigError, describeBackend, loadHarness, parseFsUrl, validateConfig, type BackendConfig } from '@seamfs/cli'

const SECRET = 'hunter2-s3cr3t'
const TOOL_KEYS =
  'listMaxEntries, readLimit, readMaxLineLength, readMaxBytes, readImageMaxBytes, readStreamMinSize, globMaxResults, grepMaxMatches, grepMaxLineBytes, searchTimeoutMs, searchConcurrency'
const BACKEND_TYPES = 'one of "local", "memory", "s3", "sftp", "module"'
const PORT = 'a port number (1-65535)'

/** Runs `fn`, expects it to reject with a ConfigError, returns it. */
async function configError(fn: () => Promise<unknown>): Promise<ConfigError> {
  try {
    await fn()
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return err as ConfigError
  }
  throw new Error('expected a ConfigError, nothing was thrown')
}

const local = { type: 'local', root: '.' }

describe('validateConfig: a wrong config names the key, what was expected and what was found', () => {
  const cases: Array<[what: string, raw: unknown, key: string, message: string]> = [
    ['not an object', [], '(config)', 'expected an object, found an array'],
    ['null', null, '(config)', 'expected an object, found null'],
    ['a number', 3, '(config)', 'expected an object, found the number 3'],
    ['missing backend', {}, 'backend', 'expected a backend (an object with a "type", or a URL string), or "mounts" (mount point → backend), found nothing'],
    [
      'unknown top-level key',
      { backend: local, colour: 'red' },
      'colour',
      'expected one of the keys $schema, backend, mounts, cwd, sandbox, policy, tools, paths, audit, tracing, overlay, found an unknown key',
    ],
    ['backend a number', { backend: 42 }, 'backend', 'expected an object, found the number 42'],
    ['backend without a type', { backend: {} }, 'backend.type', `expected ${BACKEND_TYPES}, found nothing`],
    ['unknown backend.type', { backend: { type: 'ftp' } }, 'backend.type', `expected ${BACKEND_TYPES}, found the string "ftp"`],
    ['backend.type not a string', { backend: { type: true } }, 'backend.type', `expected ${BACKEND_TYPES}, found the boolean true`],
    ['local without root', { backend: { type: 'local' } }, 'backend.root', 'expected a non-empty string, found nothing'],
    ['backend.root not a string', { backend: { type: 'local', root: 5 } }, 'backend.root', 'expected a non-empty string, found the number 5'],
    ['backend.root blank', { backend: { type: 'local', root: '  ' } }, 'backend.root', 'expected a non-empty string, found the string "  "'],
    [
      'unknown key in a local backend',
      { backend: { ...local, bucket: 'b' } },
      'backend.bucket',
      'expected one of the keys type, root, newFileMode, found an unknown key',
    ],
    ['memory files not an object', { backend: { type: 'memory', files: ['a'] } }, 'backend.files', 'expected an object, found an array'],
    ['s3 without bucket', { backend: { type: 's3' } }, 'backend.bucket', 'expected a non-empty string, found nothing'],
    [
      's3 forcePathStyle a string',
      { backend: { type: 's3', bucket: 'b', forcePathStyle: 'true' } },
      'backend.forcePathStyle',
      'expected true or false, found the string "true"',
    ],
    [
      's3 endpoint a number',
      { backend: { type: 's3', bucket: 'b', endpoint: 7480 } },
      'backend.endpoint',
      'expected a non-empty string, found the number 7480',
    ],
    [
      's3 secret key in the config',
      { backend: { type: 's3', bucket: 'b', secretAccessKey: SECRET } },
      'backend.secretAccessKey',
      'expected no key in the config (use secretAccessKeyEnv), found a key',
    ],
    [
      's3 access key id in the config',
      { backend: { type: 's3', bucket: 'b', accessKeyId: SECRET } },
      'backend.accessKeyId',
      'expected no key in the config (use accessKeyIdEnv), found a key',
    ],
    ['sftp without host', { backend: { type: 'sftp', username: 'u' } }, 'backend.host', 'expected a non-empty string, found nothing'],
    ['sftp without username', { backend: { type: 'sftp', host: 'h' } }, 'backend.username', 'expected a non-empty string, found nothing'],
    ['sftp port 0', { backend: { type: 'sftp', host: 'h', username: 'u', port: 0 } }, 'backend.port', `expected ${PORT}, found the number 0`],
    ['sftp port too high', { backend: { type: 'sftp', host: 'h', username: 'u', port: 65536 } }, 'backend.port', `expected ${PORT}, found the number 65536`],
    ['sftp port fractional', { backend: { type: 'sftp', host: 'h', username: 'u', port: 22.5 } }, 'backend.port', `expected ${PORT}, found the number 22.5`],
    ['sftp port a string', { backend: { type: 'sftp', host: 'h', username: 'u', port: '22' } }, 'backend.port', `expected ${PORT}, found the string "22"`],
    [
      'sftp password in the config',
      { backend: { type: 'sftp', host: 'h', username: 'u', password: SECRET } },
      'backend.password',
      'expected no password in the config (use passwordEnv), found a password',
    ],
    [
      'sftp inline key',
      { backend: { type: 'sftp', host: 'h', username: 'u', privateKey: SECRET } },
      'backend.privateKey',
      'expected one of the keys type, host, port, username, root, privateKeyFile, passwordEnv, agent, hostKeySha256, knownHostsFile, insecureAcceptAnyHostKey, newFileMode, found an unknown key',
    ],
    ['module without module', { backend: { type: 'module' } }, 'backend.module', 'expected a non-empty string, found nothing'],
    ['backend URL of an unknown scheme', { backend: 'ftp://x/y' }, 'backend', 'expected file:, memory:, s3:// or sftp://, found the string "ftp://x/y"'],
    [
      'backend URL with a password',
      { backend: `sftp://u:${SECRET}@h/srv` },
      'backend',
      'expected no password in the URL (use an environment variable), found a password',
    ],
    ['sandbox not an object', { backend: local, sandbox: 'read-only' }, 'sandbox', 'expected an object, found the string "read-only"'],
    [
      'sandbox.mode a number',
      { backend: local, sandbox: { mode: 1 } },
      'sandbox.mode',
      'expected one of "read-only", "workspace-write", "full-access", found the number 1',
    ],
    [
      'sandbox.mode wrong',
      { backend: local, sandbox: { mode: 'rw' } },
      'sandbox.mode',
      'expected one of "read-only", "workspace-write", "full-access", found the string "rw"',
    ],
    [
      'sandbox.writableRoots with an empty root',
      { backend: local, sandbox: { mode: 'workspace-write', writableRoots: ['a', ''] } },
      'sandbox.writableRoots',
      'expected an array of non-empty strings, found an array',
    ],
    [
      'sandbox.confineReads a string',
      { backend: local, sandbox: { mode: 'read-only', confineReads: 'yes' } },
      'sandbox.confineReads',
      'expected true or false, found the string "yes"',
    ],
    [
      'unknown sandbox key',
      { backend: local, sandbox: { mode: 'read-only', root: '/' } },
      'sandbox.root',
      'expected one of the keys mode, workspaceRoot, writableRoots, confineReads, found an unknown key',
    ],
    ['policy a string', { backend: local, policy: 'off' }, 'policy', 'expected true or false, found the string "off"'],
    ['cwd empty', { backend: local, cwd: '' }, 'cwd', 'expected a non-empty string, found the string ""'],
    ['tools not an object', { backend: local, tools: 1 }, 'tools', 'expected an object, found the number 1'],
    ['tools.readLimit 0', { backend: local, tools: { readLimit: 0 } }, 'tools.readLimit', 'expected a positive integer, found the number 0'],
    ['tools.readLimit fractional', { backend: local, tools: { readLimit: 1.5 } }, 'tools.readLimit', 'expected a positive integer, found the number 1.5'],
    [
      'tools.grepMaxMatches a string',
      { backend: local, tools: { grepMaxMatches: '10' } },
      'tools.grepMaxMatches',
      'expected a positive integer, found the string "10"',
    ],
    ['unknown tools key', { backend: local, tools: { maxFiles: 3 } }, 'tools.maxFiles', `expected one of the keys ${TOOL_KEYS}, found an unknown key`],
  ]

  it.each(cases)('%s', async (_what, raw, key, message) => {
    const err = await configError(() => validateConfig(raw))
    expect(err.key).toBe(key)
    expect(err.message).toBe(`config: ${key}: ${message}`)
    expect(err.message).not.toContain(SECRET)
  })

  it('cuts a long found value', async () => {
    const err = await configError(() => validateConfig({ backend: { type: 'x'.repeat(100) } }))
    expect(err.message).toBe(`config: backend.type: expected ${BACKEND_TYPES}, found the string "${'x'.repeat(57)}..."`)
  })
})

describe('validateConfig: the good forms', () => {
  it('a full config comes back typed, without the keys it did not have', async () => {
    const raw = {
      $schema: './schema.json',
      backend: { type: 's3', bucket: 'b', prefix: '', region: 'eu-west-1', forcePathStyle: false, accessKeyIdEnv: 'K', secretAccessKeyEnv: 'S' },
      cwd: '/work',
      sandbox: { mode: 'workspace-write', writableRoots: ['/tmp'], confineReads: true },
      policy: false,
      tools: { readLimit: 100, grepMaxMatches: 5 },
    }
    expect(await validateConfig(raw)).toEqual({
      backend: { type: 's3', bucket: 'b', prefix: '', region: 'eu-west-1', forcePathStyle: false, accessKeyIdEnv: 'K', secretAccessKeyEnv: 'S' },
      cwd: '/work',
      sandbox: { mode: 'workspace-write', writableRoots: ['/tmp'], confineReads: true },
      policy: false,
      tools: { readLimit: 100, grepMaxMatches: 5 },
    })
  })

  it.each<[raw: unknown, backend: BackendConfig]>([
    [
      { type: 'local', root: './work' },
      { type: 'local', root: './work' },
    ],
    [{ type: 'memory' }, { type: 'memory' }],
    [
      { type: 'memory', files: { 'a.txt': 'x', d: null } },
      { type: 'memory', files: { 'a.txt': 'x', d: null } },
    ],
    [
      { type: 'sftp', host: 'h', username: 'u', port: 2222, privateKeyFile: '~/.ssh/id', passwordEnv: 'PW' },
      { type: 'sftp', host: 'h', username: 'u', port: 2222, privateKeyFile: '~/.ssh/id', passwordEnv: 'PW' },
    ],
    [
      { type: 'module', module: './my-backend.js' },
      { type: 'module', module: './my-backend.js' },
    ],
    ['memory:', { type: 'memory' }],
    ['file:./work', { type: 'local', root: './work' }],
    ['s3://bucket/p', { type: 's3', bucket: 'bucket', prefix: 'p' }],
  ])('backend %j', async (raw, backend) => {
    expect(await validateConfig({ backend: raw })).toEqual({ backend })
  })
})

describe('parseFsUrl', () => {
  it.each<[spec: string, backend: BackendConfig]>([
    ['file:./work', { type: 'local', root: './work' }],
    ['file:/srv/data', { type: 'local', root: '/srv/data' }],
    ['file:///tmp/a%20b', { type: 'local', root: '/tmp/a b' }],
    ['./work', { type: 'local', root: './work' }],
    ['work', { type: 'local', root: 'work' }],
    ['/abs/dir', { type: 'local', root: '/abs/dir' }],
    ['memory:', { type: 'memory' }],
    ['memory', { type: 'memory' }],
    [
      's3://bucket/prefix?endpoint=http://127.0.0.1:7480&region=us-east-1&forcePathStyle=true',
      { type: 's3', bucket: 'bucket', prefix: 'prefix', endpoint: 'http://127.0.0.1:7480', region: 'us-east-1', forcePathStyle: true },
    ],
    ['s3://bucket', { type: 's3', bucket: 'bucket' }],
    ['s3://bucket/a/b/?forcePathStyle=false', { type: 's3', bucket: 'bucket', prefix: 'a/b/', forcePathStyle: false }],
    ['sftp://user@host:2222/srv?key=~/.ssh/id', { type: 'sftp', host: 'host', port: 2222, username: 'user', root: '/srv', privateKeyFile: '~/.ssh/id' }],
    ['sftp://user@host', { type: 'sftp', host: 'host', username: 'user' }],
    // `/~/…`: relative to the login directory, as sftp URIs write it.
    ['sftp://user@host/~/data/x', { type: 'sftp', host: 'host', username: 'user', root: 'data/x' }],
    ['sftp://user@host/~', { type: 'sftp', host: 'host', username: 'user' }],
    ['sftp://us%40er@host/', { type: 'sftp', host: 'host', username: 'us@er' }],
    ['./my-backend.js', { type: 'module', module: './my-backend.js' }],
    ['backend.ts', { type: 'module', module: 'backend.ts' }],
  ])('%s', async (spec, backend) => {
    expect(await parseFsUrl(spec)).toEqual(backend)
  })

  it.each<[spec: string, message: string]>([
    ['ftp://host/x', 'expected file:, memory:, s3:// or sftp://, found the string "ftp://host/x"'],
    ['file:', 'expected file:<directory>, found the string "file:"'],
    ['s3:///prefix', 'expected s3://<bucket>/<prefix>, found the string "s3:///prefix"'],
    ['sftp://host/srv', 'expected sftp://<user>@<host>[:port]/<path>, found the string "sftp://host/srv"'],
    ['sftp://u@host:99999/srv', 'expected a valid URL, found the string "sftp://u@host:99999/srv"'],
    ['sftp://u@host:0/srv', `expected ${PORT}, found the number 0`],
    [`sftp://user:${SECRET}@host:2222/srv`, 'expected no password in the URL (use an environment variable), found a password'],
    [`s3://key:${SECRET}@bucket/p`, 'expected no password in the URL (use an environment variable), found a password'],
    [`sftp://u:${SECRET}@host:99999/srv`, 'expected a valid URL, found the string "sftp://u:***@host:99999/srv"'],
    [`ftp://u:${SECRET}@host/x`, 'expected file:, memory:, s3:// or sftp://, found the string "ftp://u:***@host/x"'],
    // A secret with a "/" (AWS secret keys have them) ends the authority early, so the URL does not parse.
    [`s3://key:${SECRET}/x@bucket/p`, 'expected a valid URL, found the string "s3://key:***@bucket/p"'],
    [`sftp://u:${SECRET}/x@host/srv`, 'expected a valid URL, found the string "sftp://u:***@host/srv"'],
  ])('%s is refused', async (spec, message) => {
    const err = await configError(() => parseFsUrl(spec))
    expect(err.key).toBe('--fs')
    expect(err.message).toBe(`config: --fs: ${message}`)
    expect(err.message).not.toContain(SECRET)
  })
})

describe('loadHarness', () => {
  const base = mkdtempSync(join(tmpdir(), 'seamfs-cli-config-'))
  afterAll(() => rmSync(base, { recursive: true, force: true }))

  const rejects = async (config: unknown, env: Record<string, string> = {}): Promise<ConfigError> => {
    const err: unknown = await loadHarness(config, { baseDir: base, env }).then(
      () => new Error('expected a ConfigError'),
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(ConfigError)
    return err as ConfigError
  }

  it('a local root that does not exist is a ConfigError', async () => {
    const err = await rejects({ backend: { type: 'local', root: 'does-not-exist' } })
    expect(err.message).toBe('config: backend.root: expected an existing directory, found the string "does-not-exist"')
    writeFileSync(join(base, 'a-file'), 'x')
    expect((await rejects({ backend: 'file:a-file' })).message).toBe('config: backend.root: expected an existing directory, found the string "a-file"')
  })

  it('a wrong config is refused before anything is mounted', async () => {
    expect((await rejects({ backend: { type: 'memory' }, tools: { readLimit: 0 } })).message).toBe(
      'config: tools.readLimit: expected a positive integer, found the number 0',
    )
  })

  it('secrets named by environment variables must be set', async () => {
    const s3 = { type: 's3', bucket: 'b', accessKeyIdEnv: 'SEAMFS_TEST_KEY_ID', secretAccessKeyEnv: 'SEAMFS_TEST_SECRET' }
    expect((await rejects({ backend: s3 })).message).toBe('config: backend.accessKeyIdEnv: expected the variable SEAMFS_TEST_KEY_ID to be set, found nothing')
    expect((await rejects({ backend: s3 }, { SEAMFS_TEST_KEY_ID: 'id' })).message).toBe(
      'config: backend.secretAccessKeyEnv: expected the variable SEAMFS_TEST_SECRET to be set, found nothing',
    )
    const sftp = { type: 'sftp', host: '127.0.0.1', username: 'u', passwordEnv: 'SEAMFS_TEST_PW' }
    expect((await rejects({ backend: sftp })).message).toBe('config: backend.passwordEnv: expected the variable SEAMFS_TEST_PW to be set, found nothing')
    expect((await rejects({ backend: { ...sftp, passwordEnv: undefined, privateKeyFile: 'no-such-key' } })).message).toBe(
      'config: backend.privateKeyFile: expected a readable key file, found the string "no-such-key"',
    )
  })

  it('a backend module that cannot be imported, or exports no filesystem', async () => {
    const missing = await rejects({ backend: './missing-backend.js' })
    expect(missing.key).toBe('backend.module')
    expect(missing.message).toMatch(/^config: backend\.module: expected a module that can be imported, found the string "\.\/missing-backend\.js \(/)
    writeFileSync(join(base, 'empty-backend.mjs'), 'export default 42\n')
    expect((await rejects({ backend: { type: 'module', module: './empty-backend.mjs' } })).message).toBe(
      'config: backend.module: expected a module exporting a FileSystem, a factory, or conformance options, found the string "./empty-backend.mjs"',
    )
  })

  it('mounts memory with the tools; the description says what was mounted', async () => {
    const h = await loadHarness({ backend: { type: 'memory', files: { 'a.txt': 'one\ntwo\n' } } })
    try {
      expect(h.description).toBe('memory; workspace-write in the root, reads confined to it; read-before-write on')
      expect(h.policy).toBeDefined()
      expect(h.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['list', 'read', 'write', 'edit', 'glob', 'grep']))
      const r = await h.tool('read').execute({ file_path: 'a.txt' }, { session: 't' })
      expect(r.text).toBe('<path>/a.txt</path>\n<type>file</type>\n<content>\n1: one\n2: two\n\n(End of file - total 2 lines)\n</content>')
      expect(() => h.tool('nope')).toThrow('no tool named nope')
    } finally {
      await h.close()
    }
  })

  it('mounts local disk behind a sandbox, without the policy', async () => {
    const h = await loadHarness({ backend: { type: 'local', root: '.' }, sandbox: { mode: 'read-only' }, policy: false }, { baseDir: base })
    try {
      expect(h.description).toBe(`local disk at ${base}; read-only, reads confined to the root; read-before-write off`)
      expect(h.policy).toBeUndefined()
      const w = await h.tool('write').execute({ file_path: 'x.txt', content: 'x' }, { session: 't' })
      expect(w).toMatchObject({ isError: true, code: 'FS_SANDBOX_DENIED' })
    } finally {
      await h.close()
    }
  })

  it('descriptions never contain a secret', async () => {
    const configs: BackendConfig[] = [
      { type: 's3', bucket: 'b', prefix: 'p/', endpoint: 'http://127.0.0.1:7480', accessKeyIdEnv: 'KEY_ID', secretAccessKeyEnv: 'SECRET' },
      { type: 'sftp', host: 'h', port: 2222, username: 'u', root: '/srv', privateKeyFile: '/home/u/.ssh/id_ed25519', passwordEnv: 'PW' },
    ]
    expect(await describeBackend(configs[0] as BackendConfig)).toBe('s3://b/p/ at http://127.0.0.1:7480')
    expect(await describeBackend(configs[1] as BackendConfig)).toBe('sftp://u@h:2222/srv')
    for (const c of configs) expect(await describeBackend(c)).not.toMatch(/KEY_ID|SECRET|PW|id_ed25519/)
  })

  it('a password inside an S3 endpoint is refused like one in the outer URL, and never echoed', async () => {
    const err = await parseFsUrl('s3://b/p?endpoint=http://admin:hunter2@127.0.0.1:7480').then(
      () => undefined,
      (e: unknown) => e as Error,
    )
    expect(err?.message).toBe('config: --fs: expected no password in the URL (use an environment variable), found a password')
  })
})
