/**
 * The config's `mounts`: every wrong table gets one precise message naming the mount point (and
 * never a secret); the good forms come back typed; loadHarness opens each backend, composes them
 * under one tree behind the usual sandbox, describes each mount, protects the harness's files in
 * every local mount holding them, and closes every store.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { MountFileSystem } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { ConfigError, loadHarness, validateConfig, type Harness } from '@seamfs/cli'

const SECRET = 'hunter2-s3cr3t'
const BACKEND_TYPES = 'one of "local", "memory", "s3", "sftp", "module"'
const memory = { type: 'memory' }

async function configError(fn: () => Promise<unknown>): Promise<ConfigError> {
  try {
    await fn()
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return err as ConfigError
  }
  throw new Error('expected a ConfigError, nothing was thrown')
}

describe('validateConfig: a wrong mounts table names the key, what was expected and what was found', () => {
  const cases: Array<[what: string, raw: unknown, key: string, message: string]> = [
    ['both backend and mounts', { backend: memory, mounts: { '/': memory } }, '(config)', 'expected "backend" or "mounts", not both, found both'],
    ['neither', { cwd: '/' }, 'backend', 'expected a backend (an object with a "type", or a URL string), or "mounts" (mount point → backend), found nothing'],
    ['mounts an array', { mounts: [memory] }, 'mounts', 'expected an object, found an array'],
    ['mounts a string', { mounts: 'memory:' }, 'mounts', 'expected an object, found the string "memory:"'],
    ['no mount point', { mounts: {} }, 'mounts', 'expected a mount at "/" (the root of the tree), found no mount point'],
    ['no "/"', { mounts: { '/docs': memory, '/b': memory } }, 'mounts', 'expected a mount at "/" (the root of the tree), found only "/b", "/docs"'],
    ['a relative point', { mounts: { '/': memory, docs: memory } }, 'mounts', 'expected absolute mount points (like "/docs"), found the string "docs"'],
    ['an empty point', { mounts: { '/': memory, '': memory } }, 'mounts', 'expected absolute mount points (like "/docs"), found the string ""'],
    ['a trailing slash', { mounts: { '/': memory, '/docs/': memory } }, 'mounts', 'expected a normalized mount point ("/docs"), found the string "/docs/"'],
    ['a ".." segment', { mounts: { '/': memory, '/a/../b': memory } }, 'mounts', 'expected a normalized mount point ("/b"), found the string "/a/../b"'],
    ['a "." segment', { mounts: { '/': memory, '/a/./b': memory } }, 'mounts', 'expected a normalized mount point ("/a/b"), found the string "/a/./b"'],
    ['a double slash', { mounts: { '/': memory, '//x': memory } }, 'mounts', 'expected a normalized mount point ("/x"), found the string "//x"'],
    [
      'a NUL',
      { mounts: { '/': memory, '/a\0b': memory } },
      'mounts',
      'expected mount points without NUL characters or lone surrogates, found the string "/a\\u0000b"',
    ],
    [
      'a lone surrogate',
      { mounts: { '/': memory, '/a\ud800': memory } },
      'mounts',
      'expected mount points without NUL characters or lone surrogates, found the string "/a\\ud800"',
    ],
    ['a mount a number', { mounts: { '/': 3 } }, 'mounts["/"]', 'expected an object, found the number 3'],
    ['a mount without a type', { mounts: { '/': {} } }, 'mounts["/"].type', `expected ${BACKEND_TYPES}, found nothing`],
    ['an unknown type', { mounts: { '/': { type: 'ftp' } } }, 'mounts["/"].type', `expected ${BACKEND_TYPES}, found the string "ftp"`],
    ['local without root', { mounts: { '/': memory, '/docs': { type: 'local' } } }, 'mounts["/docs"].root', 'expected a non-empty string, found nothing'],
    [
      'readOnly a string',
      { mounts: { '/': memory, '/docs': { type: 'local', root: '.', readOnly: 'yes' } } },
      'mounts["/docs"].readOnly',
      'expected true or false, found the string "yes"',
    ],
    [
      'an unknown key in a mount',
      { mounts: { '/': { type: 'local', root: '.', colour: 'red' } } },
      'mounts["/"].colour',
      'expected one of the keys type, root, newFileMode, readOnly, found an unknown key',
    ],
    [
      'an unknown key in a module mount',
      { mounts: { '/': memory, '/x': { type: 'module', module: './m.js', colour: 'red' } } },
      'mounts["/x"].colour',
      'expected one of the keys type, module, readOnly, found an unknown key',
    ],
    [
      'an s3 secret in a mount',
      { mounts: { '/': memory, '/m': { type: 's3', bucket: 'b', secretAccessKey: SECRET } } },
      'mounts["/m"].secretAccessKey',
      'expected no key in the config (use secretAccessKeyEnv), found a key',
    ],
    [
      'an sftp password in a mount',
      { mounts: { '/': memory, '/m': { type: 'sftp', host: 'h', username: 'u', password: SECRET, readOnly: true } } },
      'mounts["/m"].password',
      'expected no password in the config (use passwordEnv), found a password',
    ],
    [
      'a mount URL with a password',
      { mounts: { '/': memory, '/m': `sftp://u:${SECRET}@h/srv` } },
      'mounts["/m"]',
      'expected no password in the URL (use an environment variable), found a password',
    ],
    [
      'a mount URL of an unknown scheme',
      { mounts: { '/': 'ftp://x/y' } },
      'mounts["/"]',
      'expected file:, memory:, s3:// or sftp://, found the string "ftp://x/y"',
    ],
  ]

  it.each(cases)('%s', async (_what, raw, key, message) => {
    const err = await configError(() => validateConfig(raw))
    expect(err.key).toBe(key)
    expect(err.message).toBe(`config: ${key}: ${message}`)
    expect(err.message).not.toContain(SECRET)
  })
})

describe('validateConfig: the good forms of mounts', () => {
  it('a table comes back typed: URL strings read, readOnly kept where given', async () => {
    const raw = {
      mounts: {
        '/': { type: 'local', root: '.' },
        '/memories': { type: 's3', bucket: 'b', prefix: 'm/', accessKeyIdEnv: 'K', secretAccessKeyEnv: 'S', readOnly: false },
        '/docs': { type: 'local', root: '../docs', readOnly: true },
        '/scratch': 'memory:',
        '/work': 'file:./work',
      },
      cwd: '/memories',
      sandbox: { writableRoots: ['/scratch'] },
    }
    expect(await validateConfig(raw)).toEqual({
      mounts: {
        '/': { type: 'local', root: '.' },
        '/memories': { type: 's3', bucket: 'b', prefix: 'm/', accessKeyIdEnv: 'K', secretAccessKeyEnv: 'S', readOnly: false },
        '/docs': { type: 'local', root: '../docs', readOnly: true },
        '/scratch': { type: 'memory' },
        '/work': { type: 'local', root: './work' },
      },
      cwd: '/memories',
      sandbox: { writableRoots: ['/scratch'] },
    })
  })
})

describe('loadHarness with mounts', () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-cli-mounts-')))
  afterAll(() => rmSync(base, { recursive: true, force: true }))
  const project = join(base, 'project')
  const docs = join(base, 'docs')
  const notes = join(base, 'notes')
  mkdirSync(join(project, 'src'), { recursive: true })
  mkdirSync(docs)
  mkdirSync(notes)
  writeFileSync(join(project, 'src/a.ts'), 'export const a = "TODO local"\n')
  writeFileSync(join(docs, 'guide.md'), '# Guide\nTODO docs\n')
  writeFileSync(join(notes, 'plan.md'), '# Plan\nTODO notes\n')
  writeFileSync(join(notes, 'session.json'), '{}\n')
  const config = {
    mounts: {
      '/': { type: 'local', root: './project' },
      '/docs': { type: 'local', root: './docs', readOnly: true },
      '/mem': { type: 'memory', files: { 'notes.md': 'TODO memory\n' } },
      '/rw-notes': { type: 'local', root: './notes' },
    },
  }
  const run = async (h: Harness, name: string, args: Record<string, unknown>): Promise<{ text: string; code?: string | undefined; isError: boolean }> =>
    h.tool(name).execute(args, { session: 't' })

  it('a mount whose backend cannot open is named by its point; the mounts opened before it are closed', async () => {
    const close = vi.spyOn(MemoryFileSystem.prototype, 'close')
    try {
      const err = await configError(() => loadHarness({ mounts: { '/': memory, '/docs': { type: 'local', root: 'nope' } } }, { baseDir: base }))
      expect(err.message).toBe('config: mounts["/docs"].root: expected an existing directory, found the string "nope"')
      expect(close).toHaveBeenCalledTimes(1)
    } finally {
      close.mockRestore()
    }
    const s3 = { type: 's3', bucket: 'b', accessKeyIdEnv: 'SEAMFS_TEST_KEY_ID', secretAccessKeyEnv: 'SEAMFS_TEST_SECRET' }
    expect((await configError(() => loadHarness({ mounts: { '/': memory, '/m': s3 } }, { env: {} }))).message).toBe(
      'config: mounts["/m"].accessKeyIdEnv: expected the variable SEAMFS_TEST_KEY_ID to be set, found nothing',
    )
    expect((await configError(() => loadHarness({ mounts: { '/': memory, '/x': { type: 'module', module: './missing.js' } } }, { baseDir: base }))).key).toBe(
      'mounts["/x"].module',
    )
  })

  it('describes each mount; the tools see one tree; a read-only mount refuses writes; closing closes every store', async () => {
    const h = await loadHarness(config, { baseDir: base })
    try {
      expect(h.description).toBe(
        `mounts / (local disk at ${project}), /docs (local disk at ${docs}, read-only), /mem (memory), /rw-notes (local disk at ${notes}); ` +
          'workspace-write in the root, reads confined to it; read-before-write on',
      )
      expect(h.backend).toBeInstanceOf(MountFileSystem)
      const list = await run(h, 'list', { path: '/' })
      expect(list.text).toBe(
        '<path>/</path>\n<type>directory</type>\n<content>\ndocs/\nmem/\nrw-notes/\nsrc/\n\n(4 entries: 4 directories, 0 files)\n</content>',
      )
      expect(await run(h, 'write', { file_path: '/mem/new.txt', content: 'm\n' })).toMatchObject({ isError: false })
      expect(await run(h, 'write', { file_path: 'src/b.ts', content: 'b\n' })).toMatchObject({ isError: false })
      expect(readFileSync(join(project, 'src/b.ts'), 'utf8')).toBe('b\n')
      const refused = await run(h, 'write', { file_path: '/docs/new.md', content: 'x\n' })
      expect(refused).toMatchObject({ isError: true, code: 'FS_PERMISSION_DENIED' })
      expect((await run(h, 'read', { file_path: '/docs/guide.md' })).text).toContain('1: # Guide')
      expect((await run(h, 'glob', { pattern: '**/*.md' })).text).toBe('docs/guide.md\nmem/notes.md\nrw-notes/plan.md')
      expect((await run(h, 'grep', { pattern: 'TODO', include: '*.{md,ts}' })).text).toBe(
        'Found 4 matches\n\ndocs/guide.md\nLine 2: TODO docs\n\nmem/notes.md\nLine 1: TODO memory\n\nrw-notes/plan.md\nLine 2: TODO notes\n\nsrc/a.ts\nLine 1: export const a = "TODO local"',
      )
      expect(h.warnings).toEqual([])
      expect(await run(h, 'move', { source_path: '/mem/new.txt', destination_path: '/src/new.txt' })).toMatchObject({ isError: true, code: 'FS_UNSUPPORTED' })
    } finally {
      const stores = (h.backend as MountFileSystem).mounts.map((m) => vi.spyOn(m.fs, 'close'))
      await h.close()
      for (const close of stores) expect(close).toHaveBeenCalledTimes(1)
    }
  })

  it('the harness files are protected in every local mount holding them (options.protect, found under /rw-notes)', async () => {
    const h = await loadHarness(config, { baseDir: base, protect: ['notes/session.json'] })
    try {
      const w = await run(h, 'write', { file_path: '/rw-notes/session.json', content: 'pwned\n' })
      expect(w).toMatchObject({ isError: true, code: 'FS_SANDBOX_DENIED' })
      expect(await run(h, 'write', { file_path: '/rw-notes/other.json', content: '{}\n' })).toMatchObject({ isError: false })
      expect(readFileSync(join(notes, 'session.json'), 'utf8')).toBe('{}\n')
    } finally {
      await h.close()
    }
  })
})

describe('loadHarness: a read-only mount that a writable mount reaches is refused', () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-cli-overlap-')))
  afterAll(() => rmSync(base, { recursive: true, force: true }))
  const project = join(base, 'project')
  mkdirSync(join(project, 'docs'), { recursive: true })
  mkdirSync(join(project, 'src'))
  writeFileSync(join(project, 'README.md'), 'readme\n')
  writeFileSync(join(project, 'docs/guide.md'), 'guide\n')
  const expected =
    'expected a read-only mount that no writable mount reaches (mount stores beside each other, or a writable part exactly where the read-only mount shows it)'

  it.each([
    [
      'a writable "/" of the directory holding the read-only "/docs"',
      { '/': { type: 'local', root: './project' }, '/docs': { type: 'local', root: './project/docs', readOnly: true } },
      `config: mounts["/docs"]: ${expected}, found the writable mount "/" holding it (${project} holds ${join(project, 'docs')})`,
    ],
    [
      'one directory mounted read-only and writable, the writable one through a spelling with ..',
      { '/': memory, '/docs': { type: 'local', root: './project/docs', readOnly: true }, '/rw': { type: 'local', root: './project/src/../docs' } },
      `config: mounts["/docs"]: ${expected}, found the writable mount "/rw" holding it (${join(project, 'docs')} holds ${join(project, 'docs')})`,
    ],
    [
      'a writable mount inside a read-only one, mounted elsewhere than where it shows that directory',
      { '/': { type: 'local', root: './project', readOnly: true }, '/code': { type: 'local', root: './project/src' } },
      `config: mounts["/"]: ${expected}, found the writable mount "/code" inside it, mounted elsewhere than where "/" shows that directory (${project} holds ${join(project, 'src')})`,
    ],
  ])('%s: a ConfigError naming both, every store closed, nothing served', async (_what, mounts, message) => {
    const closes = [vi.spyOn(MemoryFileSystem.prototype, 'close'), vi.spyOn(LocalFileSystem.prototype, 'close')]
    try {
      const err = await configError(() => loadHarness({ mounts }, { baseDir: base }))
      expect(err.message).toBe(message)
      expect(closes.reduce((n, close) => n + close.mock.calls.length, 0)).toBe(Object.keys(mounts).length)
    } finally {
      for (const close of closes) close.mockRestore()
    }
    expect(readFileSync(join(project, 'docs/guide.md'), 'utf8')).toBe('guide\n')
  })

  it('a writable window exactly where the read-only mount shows that directory is served: writes land there only', async () => {
    const h = await loadHarness(
      { mounts: { '/': { type: 'local', root: './project', readOnly: true }, '/src': { type: 'local', root: './project/src' } } },
      { baseDir: base },
    )
    try {
      expect(h.warnings).toEqual([])
      const run = (name: string, args: Record<string, unknown>) => h.tool(name).execute(args, { session: 't' })
      expect(await run('write', { file_path: '/src/new.ts', content: 'x\n' })).toMatchObject({ isError: false })
      expect(readFileSync(join(project, 'src/new.ts'), 'utf8')).toBe('x\n')
      expect(await run('write', { file_path: '/docs/guide.md', content: 'pwned\n' })).toMatchObject({ isError: true, code: 'FS_PERMISSION_DENIED' })
      expect(readFileSync(join(project, 'docs/guide.md'), 'utf8')).toBe('guide\n')
    } finally {
      await h.close()
    }
  })
})
