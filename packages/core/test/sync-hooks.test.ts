/**
 * Hooks may answer synchronously: the memory backend does, to spare every call a turn
 * of the event loop. Core must treat a value like a resolved promise and a synchronous throw like a
 * rejection, through every public method and through the layers (sandbox, mounts), and the
 * outcome and byte rules that changed with it must hold on small and large files alike.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { FsError, MountFileSystem, SandboxedFileSystem } from '@seamfs/core'
import type { Awaitable, FileSystem, FsInfo, FsPathInfo, FsTarget, ReadRequest } from '@seamfs/core/backend'
import { expectFsErrorAsync } from './helpers.js'

type Fault = 'resolve' | 'stat' | 'lstat' | 'read' | 'write' | 'edit' | 'list' | undefined

/** memfs's own `ENOENT`/`EACCES` shape, thrown synchronously by a hook (never as a rejection). */
const foreign = (code: string): Error => Object.assign(new Error(`${code}: thrown synchronously`), { code })

class ThrowingMemory extends MemoryFileSystem {
  fault: Fault
  foreignCode = 'EACCES'
  readonly reads: boolean[] = []

  protected override resolvePath(path: string, cwd: string | undefined): Awaitable<FsTarget> {
    if (this.fault === 'resolve') throw foreign(this.foreignCode)
    return super.resolvePath(path, cwd)
  }
  protected override statTarget(target: FsTarget): Awaitable<FsInfo | undefined> {
    if (this.fault === 'stat') throw foreign(this.foreignCode)
    return super.statTarget(target)
  }
  protected override lstatPath(path: string, cwd: string | undefined): Awaitable<FsPathInfo | undefined> {
    if (this.fault === 'lstat') throw foreign(this.foreignCode)
    return super.lstatPath(path, cwd)
  }
  protected override loadBytes(target: FsTarget, request: ReadRequest): Awaitable<Uint8Array> {
    this.reads.push(request.transient === true)
    if (this.fault === 'read') throw foreign(this.foreignCode)
    return super.loadBytes(target, request)
  }
  protected override publishBytes(...args: Parameters<MemoryFileSystem['publishBytes']>): ReturnType<MemoryFileSystem['publishBytes']> {
    if (this.fault === 'write') throw foreign(this.foreignCode)
    return super.publishBytes(...args)
  }
  protected override updateBytes(...args: Parameters<MemoryFileSystem['updateBytes']>): ReturnType<MemoryFileSystem['updateBytes']> {
    if (this.fault === 'edit') throw foreign(this.foreignCode)
    return super.updateBytes(...args)
  }
  protected override listEntries(target: FsTarget): ReturnType<MemoryFileSystem['listEntries']> {
    if (this.fault === 'list') throw foreign(this.foreignCode)
    return super.listEntries(target)
  }
}

const opened: FileSystem[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((fs) => fs.close()))
})

/** The same store seen bare, through a sandbox, and through a mount table: every path must behave alike. */
function views(inner: ThrowingMemory): Array<[string, FileSystem]> {
  const sandbox = new SandboxedFileSystem(inner, { mode: 'workspace-write', workspaceRoot: '/w' })
  const mounts = new MountFileSystem({ '/': inner })
  opened.push(inner)
  return [
    ['bare', inner],
    ['sandbox', sandbox],
    ['mounts', mounts],
  ]
}

describe.each(['bare', 'sandbox', 'mounts'])('a hook that throws synchronously (%s)', (view) => {
  const setup = (): { inner: ThrowingMemory; fs: FileSystem } => {
    const inner = new ThrowingMemory({ files: { 'w/a.txt': 'alpha\n', 'w/d/b.txt': 'beta\n' } })
    const fs = (views(inner).find(([name]) => name === view) as [string, FileSystem])[1]
    return { inner, fs }
  }

  it('is a rejection with the backend table code, never an escaping throw', async () => {
    const { inner, fs } = setup()
    const file = await fs.resolve('/w/a.txt')
    const dir = await fs.resolve('/w/d')
    const calls: Array<[Exclude<Fault, undefined>, () => Promise<unknown>]> = [
      // A path not resolved before: the sandbox remembers what it resolved (resolveMemoryMs).
      ['resolve', () => fs.resolve('/w/d/b.txt')],
      ['read', () => fs.readText(file)],
      ['read', () => fs.readBytes(file)],
      ['write', () => fs.writeText(file, 'x')],
      ['edit', () => fs.editText(file, { oldString: 'alpha', newString: 'omega', replaceAll: false })],
      ['list', () => fs.listDir(dir)],
      ['stat', () => fs.stat(file)],
    ]
    for (const [fault, call] of calls) {
      inner.fault = fault
      let pending: Promise<unknown> | undefined
      expect(() => (pending = call()), `${fault} threw out of the call`).not.toThrow()
      // The sandbox fails closed where it cannot re-resolve what it fences.
      const expected = view === 'sandbox' && fault === 'resolve' ? 'FS_SANDBOX_DENIED' : 'FS_PERMISSION_DENIED'
      const err = await expectFsErrorAsync(pending as Promise<unknown>, expected)
      if (expected === 'FS_PERMISSION_DENIED') expect(err.message, fault).toContain('permission denied')
    }
    inner.fault = undefined
    expect(await fs.readText(file)).toBe('alpha\n')
  })

  it('stat and lstat of a synchronous "not found" are undefined; other failures are errors', async () => {
    const { inner, fs } = setup()
    const file = await fs.resolve('/w/a.txt')
    inner.foreignCode = 'ENOENT'
    inner.fault = 'stat'
    expect(await fs.stat(file)).toBeUndefined()
    inner.fault = 'lstat'
    expect(await fs.lstat('/w/a.txt')).toBeUndefined()
    inner.foreignCode = 'EACCES'
    await expectFsErrorAsync(fs.lstat('/w/a.txt'), 'FS_PERMISSION_DENIED')
  })

  it('a rename onto itself over a synchronous "not found" stat is FS_NOT_FOUND (FS_STALE_VERSION when guarded)', async () => {
    const { inner, fs } = setup()
    const file = await fs.resolve('/w/a.txt')
    const version = (await fs.stat(file))?.version
    expect(version).toBeDefined()
    inner.foreignCode = 'ENOENT'
    inner.fault = 'stat'
    await expectFsErrorAsync(fs.rename(file, file), 'FS_NOT_FOUND')
    await expectFsErrorAsync(fs.rename(file, file, { expected: { version: version as never } }), 'FS_STALE_VERSION')
  })

  it('an aborted signal is FS_ABORTED before a synchronous hook runs, and nothing changes', async () => {
    const { fs } = setup()
    const file = await fs.resolve('/w/a.txt')
    const signal = AbortSignal.abort()
    await expectFsErrorAsync(fs.writeText(file, 'changed', { signal }), 'FS_ABORTED')
    await expectFsErrorAsync(fs.editText(file, { oldString: 'alpha', newString: 'omega', replaceAll: false }, { signal }), 'FS_ABORTED')
    await expectFsErrorAsync(fs.readText(file, { signal }), 'FS_ABORTED')
    expect(await fs.readText(file)).toBe('alpha\n')
  })
})

describe('what core asks of loadBytes, and what it hands out', () => {
  it('readText asks for transient bytes, readBytes for bytes of their own', async () => {
    const fs = new ThrowingMemory({ files: { 'a.txt': 'alpha' } })
    opened.push(fs)
    const file = await fs.resolve('/a.txt')
    await fs.readText(file)
    await fs.readBytes(file)
    expect(fs.reads).toEqual([true, false])
  })

  it('readBytes returns an array of its own: not a view into a shared pool, and changing it changes nothing', async () => {
    const fs = new MemoryFileSystem({ files: { 'a.txt': 'alpha' } })
    opened.push(fs)
    const file = await fs.resolve('/a.txt')
    const bytes = await fs.readBytes(file)
    expect(bytes.byteOffset).toBe(0)
    expect(bytes.buffer.byteLength).toBe(bytes.length)
    bytes.fill(0x7a)
    expect(await fs.readText(file)).toBe('alpha')
  })

  it('a write whose bytes sit in Node’s pool stores exactly them, next to other pooled writes', async () => {
    const fs = new MemoryFileSystem()
    opened.push(fs)
    const names = Array.from({ length: 64 }, (_, i) => `/f${i}.txt`)
    for (const [i, name] of names.entries()) await fs.writeText(await fs.resolve(name), `file ${i} ${'é'.repeat(i)}`)
    for (const [i, name] of names.entries()) {
      expect(await fs.readText(await fs.resolve(name))).toBe(`file ${i} ${'é'.repeat(i)}`)
      expect(fs.volume.readFileSync(name, 'utf8')).toBe(`file ${i} ${'é'.repeat(i)}`)
    }
  })
})

describe('an edit outcome carries before and after as data, small file or large', () => {
  it.each([
    ['small', 'x\n'.repeat(10)],
    ['large (lazy)', 'x\n'.repeat(40_000)],
  ])('%s: plain enumerable properties, LF-normalized, without BOM', async (_size, body) => {
    const fs = new MemoryFileSystem({ files: { 'a.txt': `\ufeffhead\r\n${body}` } })
    opened.push(fs)
    const file = await fs.resolve('/a.txt')
    const outcome = await fs.editText(file, { oldString: 'head', newString: 'top', replaceAll: false })
    expect(Object.keys(outcome).sort()).toEqual(['after', 'before', 'version'])
    const copy = { ...outcome }
    expect(copy.before).toBe(`head\n${body}`)
    expect(copy.after).toBe(`top\n${body}`)
    expect(JSON.parse(JSON.stringify(outcome))).toEqual({ version: outcome.version, before: `head\n${body}`, after: `top\n${body}` })
    expect(outcome.version).toBe((await fs.stat(file))?.version)
    // The stored bytes keep the BOM and the CRLF of the untouched line.
    expect(Buffer.from(await fs.readBytes(file)).toString('utf8')).toBe(`\ufefftop\r\n${body}`)
  })

  it('a failing edit of a list publishes nothing, on a pooled small file too', async () => {
    const fs = new MemoryFileSystem({ files: { 'a.txt': 'one two' } })
    opened.push(fs)
    const file = await fs.resolve('/a.txt')
    const before = await fs.stat(file)
    const err = await expectFsErrorAsync(
      fs.editText(file, [
        { oldString: 'one', newString: '1', replaceAll: false },
        { oldString: 'three', newString: '3', replaceAll: false },
      ]),
      'FS_EDIT_NOT_FOUND',
    )
    expect(err).toBeInstanceOf(FsError)
    expect(err.details?.edit).toBe(1)
    expect(await fs.readText(file)).toBe('one two')
    expect((await fs.stat(file))?.version).toBe(before?.version)
  })
})
