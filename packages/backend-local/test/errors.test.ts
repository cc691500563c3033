import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { FS_ERROR_CODES, isFsError, type FsError, type FsVerb } from '@seamfs/core'
import { translateError } from '@seamfs/core/backend'
import { ERRNO_TABLE, errnoRow } from '../src/errors.js'

/** What core does with anything the backend throws: translation through the backend's one table. */
const toFsError = (err: unknown, verb: FsVerb, path: string): FsError => translateError(err, verb, path, errnoRow)

describe('the errno table', () => {
  it.each(Object.entries(ERRNO_TABLE))('%s maps to a seamfs code with its reason', (errno, row) => {
    const foreign = Object.assign(new Error(`raw ${errno} text that must not leak`), { code: errno })
    const mapped = toFsError(foreign, 'write', '/x/y.txt')
    expect(FS_ERROR_CODES).toContain(mapped.code)
    expect(mapped.code).toBe(row.code)
    expect(mapped.message).toBe(`cannot write "/x/y.txt": ${row.reason}`)
    expect(mapped.cause).toBe(foreign)
  })

  it('maps the errnos the contract names', () => {
    const code = (errno: string): string => toFsError(Object.assign(new Error(), { code: errno }), 'read', 'p').code
    expect(code('ENOENT')).toBe('FS_NOT_FOUND')
    expect(code('ENOTDIR')).toBe('FS_NOT_FOUND')
    expect(code('ELOOP')).toBe('FS_NOT_FOUND')
    expect(code('EISDIR')).toBe('FS_NOT_REGULAR_FILE')
    expect(code('EACCES')).toBe('FS_PERMISSION_DENIED')
    expect(code('EPERM')).toBe('FS_PERMISSION_DENIED')
    expect(code('ENOSPC')).toBe('FS_IO_ERROR')
    expect(toFsError(Object.assign(new Error(), { code: 'EMFILE' }), 'read', 'p').retryable).toBe(true)
  })

  it('maps aborts and unknown errors without reading message text', () => {
    const abort = new DOMException('The operation was aborted', 'AbortError')
    expect(toFsError(abort, 'edit', 'p').code).toBe('FS_ABORTED')
    expect(toFsError(abort, 'edit', 'p').message).toBe('edit aborted')
    const weird = toFsError(new Error('ENOENT: looks like not found'), 'read', 'p')
    expect(weird.code).toBe('FS_IO_ERROR')
    expect(isFsError(toFsError('a string', 'read', 'p'), 'FS_IO_ERROR')).toBe(true)
  })
})

// Permission denial needs a process the kernel refuses: as root, a child running as `nobody`.
const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url))
const isRoot = process.getuid?.() === 0

const PROBE = `
import { LocalFileSystem } from ${JSON.stringify(pathToFileURL(DIST).href)}
const fs = new LocalFileSystem({ cwd: process.argv[1] })
const out = {}
const ops = {
  read: async () => fs.readText(await fs.resolve('locked/file.txt')),
  stream: async () => fs.streamText(await fs.resolve('locked/file.txt')),
  list: async () => fs.listDir(await fs.resolve('locked')),
  write: async () => fs.writeText(await fs.resolve('locked/file.txt'), 'new'),
  create: async () => fs.writeText(await fs.resolve('locked/new.txt'), 'new', { expected: { kind: 'createIfAbsent' } }),
  edit: async () => fs.editText(await fs.resolve('locked/file.txt'), { oldString: 'old', newString: 'x', replaceAll: false }),
  writeReadOnlyFile: async () => fs.writeText(await fs.resolve('open/ro.txt'), 'new'),
}
for (const [name, op] of Object.entries(ops)) {
  try { await op(); out[name] = 'resolved' } catch (err) { out[name] = err.name === 'FsError' ? err.code : 'RAW ' + err.code }
}
process.stdout.write(JSON.stringify(out))
`

describe.skipIf(!existsSync(DIST) || !isRoot)('permission errors (as a non-root child; needs root and the build)', () => {
  let root: string
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'seamfs-perm-'))
    chmodSync(root, 0o755)
    // Searchable but not readable or writable: resolve succeeds, the operations themselves are refused.
    mkdirSync(join(root, 'locked'))
    chmodSync(join(root, 'locked'), 0o711)
    writeFileSync(join(root, 'locked', 'file.txt'), 'old', { mode: 0o600 })
    mkdirSync(join(root, 'open'), { mode: 0o755 })
    writeFileSync(join(root, 'open', 'ro.txt'), 'old', { mode: 0o644 })
    chmodSync(join(root, 'open', 'ro.txt'), 0o644)
  })
  afterEach(() => {
    rmSync(root, { recursive: true, force: true })
  })

  it('every operation the kernel refuses is FS_PERMISSION_DENIED, and nothing changes', () => {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', PROBE, root], {
      uid: 65534,
      gid: 65534,
      cwd: '/',
      encoding: 'utf8',
    })
    expect(JSON.parse(out)).toEqual({
      read: 'FS_PERMISSION_DENIED',
      stream: 'FS_PERMISSION_DENIED',
      list: 'FS_PERMISSION_DENIED',
      write: 'FS_PERMISSION_DENIED',
      create: 'FS_PERMISSION_DENIED',
      edit: 'FS_PERMISSION_DENIED',
      writeReadOnlyFile: 'FS_PERMISSION_DENIED',
    })
    expect(readFileSync(join(root, 'locked', 'file.txt'), 'utf8')).toBe('old')
    expect(readFileSync(join(root, 'open', 'ro.txt'), 'utf8')).toBe('old')
    expect(readdirSync(join(root, 'open'))).toEqual(['ro.txt'])
  })
})
