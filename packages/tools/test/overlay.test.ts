/**
 * OverlayFileSystem (issue 36): the overlay agrees with a plain store that took the same changes
 * (drawn sequences), the store under it is untouched until the commit and holds exactly those
 * changes after it; a change underneath blocks the commit and applies nothing; a store that fails
 * part way leaves what the report says; the changeset shows diffs and binary bytes; changes kept
 * in a store's directory survive a restart.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { isFsError, type FileSystem, type FsInfo } from '@seamfs/core'
import {
  FileSystemLayer,
  FsError,
  type FsRemoveOutcome,
  type FsTarget,
  type OpenedFile,
  type ReadRequest,
  type RemoveRequest,
  type WriteRequest,
  type WriteResult,
} from '@seamfs/core/backend'
import { OverlayFileSystem } from '@seamfs/tools'

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** Every entry under `/w` of `fs`: a file's text, `null` for a directory (a link is what it names). */
async function snapshot(fs: FileSystem): Promise<Record<string, string | null>> {
  const out: Record<string, string | null> = {}
  const root = await fs.resolve('/w')
  if ((await fs.stat(root))?.type !== 'directory') return out
  for await (const page of await fs.listTree(root)) {
    for (const entry of page) {
      out[entry.path] = entry.type === 'directory' ? null : entry.type === 'file' ? await fs.readText(await fs.resolve(`/w/${entry.path}`)) : '(other)'
    }
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)))
}

const SEED: Record<string, string | null> = { 'a.txt': 'alpha\n', 'b.txt': 'beta\n', 'd/c.txt': 'gamma\n', 'd/e/f.txt': 'delta\n', 'x/': null }
/** The seeded store, with two links in `d`: to the directory `x` and to the file `b.txt`. */
function seeded(): MemoryFileSystem {
  const fs = new MemoryFileSystem({ cwd: '/w', files: SEED })
  fs.volume.symlinkSync('/w/x', '/w/d/link')
  fs.volume.symlinkSync('/w/b.txt', '/w/d/flink')
  return fs
}

// Paths through the links, below a file that may become a directory, and below directories that may be removed.
const FILES = ['a.txt', 'b.txt', 'd/c.txt', 'd/e/f.txt', 'x/y.txt', 'n.txt', 'd/n.txt', 'a.txt/in.txt', 'd/link/y.txt', 'd/flink', 'd/e/f.txt/g']
const DIRS = ['d', 'd/e', 'x', 'z', 'z/q', 'a.txt', 'd/link/q', 'b.txt']

type Op =
  | { readonly op: 'write'; readonly path: string; readonly text: string }
  | { readonly op: 'edit'; readonly path: string; readonly text: string }
  | { readonly op: 'remove'; readonly path: string; readonly recursive: boolean }
  | { readonly op: 'rename'; readonly from: string; readonly to: string; readonly overwrite: boolean }
  | { readonly op: 'mkdir'; readonly path: string }

const anyPath = fc.constantFrom(...FILES, ...DIRS)
const OPS: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('write' as const), path: fc.constantFrom(...FILES), text: fc.constantFrom('one\n', 'two\n', 'x') }),
  fc.record({ op: fc.constant('edit' as const), path: fc.constantFrom(...FILES), text: fc.constantFrom('EDIT', 'z') }),
  fc.record({ op: fc.constant('remove' as const), path: anyPath, recursive: fc.boolean() }),
  fc.record({ op: fc.constant('rename' as const), from: fc.constantFrom(...FILES), to: fc.constantFrom(...FILES), overwrite: fc.boolean() }),
  fc.record({ op: fc.constant('mkdir' as const), path: fc.constantFrom(...DIRS) }),
)

/** What `path` (under `/w`) is in `fs`; a path that does not resolve is absent. */
async function typeOf(fs: FileSystem, path: string): Promise<string> {
  try {
    return (await fs.stat(await fs.resolve(`/w/${path}`)))?.type ?? 'absent'
  } catch {
    return 'absent'
  }
}

/** Runs `op` on `fs`: `ok`, or the failure's code. */
async function run(fs: FileSystem, op: Op): Promise<string> {
  const at = (p: string) => fs.resolve(`/w/${p}`)
  try {
    if (op.op === 'write') await fs.writeText(await at(op.path), op.text)
    if (op.op === 'edit') {
      const target = await at(op.path)
      const text = await fs.readText(target)
      if (text.length === 0) return 'empty'
      await fs.editText(target, { oldString: text.slice(0, 1), newString: op.text, replaceAll: false })
    }
    if (op.op === 'remove') await fs.remove(await at(op.path), { recursive: op.recursive })
    if (op.op === 'rename') await fs.rename(await at(op.from), await at(op.to), { overwrite: op.overwrite })
    if (op.op === 'mkdir') await fs.createDirectory(await at(op.path))
    return 'ok'
  } catch (err) {
    if (isFsError(err)) return err.code
    throw err
  }
}

describe('OverlayFileSystem', () => {
  it('agrees with a plain store that took the same changes; the store under it is untouched until the commit, then holds them (drawn)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(OPS, { minLength: 1, maxLength: 14 }), async (ops) => {
        const lower = seeded()
        const overlay = await OverlayFileSystem.open(lower)
        const plain = seeded()
        const before = await snapshot(lower)
        for (const op of ops) {
          // Directories move on the plain store; the overlay moves files only: such a move is left out of both.
          if (op.op === 'rename' && (await typeOf(plain, op.from)) === 'directory') continue
          expect(await run(overlay, op), JSON.stringify(op)).toBe(await run(plain, op))
          expect(await snapshot(overlay), JSON.stringify(op)).toEqual(await snapshot(plain))
        }
        expect(await snapshot(lower)).toEqual(before)
        const report = await overlay.commit()
        expect(report.outcome, JSON.stringify(report)).toBe('committed')
        expect(await snapshot(lower)).toEqual(await snapshot(plain))
        expect(overlay.size).toBe(0)
        expect(await snapshot(overlay)).toEqual(await snapshot(plain))
      }),
      { numRuns: Number(process.env['SEAMFS_OVERLAY_RUNS'] ?? 150), seed: Number(process.env['SEAMFS_OVERLAY_SEED'] ?? 36) },
    )
  })

  it('a change underneath blocks the commit: the conflicting paths are named, nothing is applied, the overlay keeps its changes', async () => {
    const lower = seeded()
    const overlay = await OverlayFileSystem.open(lower)
    await overlay.editText(await overlay.resolve('/w/a.txt'), { oldString: 'alpha', newString: 'ALPHA', replaceAll: false })
    await overlay.writeText(await overlay.resolve('/w/n.txt'), 'new\n')
    await overlay.remove(await overlay.resolve('/w/d'), { recursive: true })
    // Another writer, straight on the store: a.txt changes, and a file appears in the removed directory.
    await lower.writeText(await lower.resolve('/w/a.txt'), 'theirs\n')
    await lower.writeText(await lower.resolve('/w/d/theirs.txt'), 'keep me\n')
    const before = await snapshot(lower)
    const report = await overlay.commit()
    expect(report.outcome).toBe('conflict')
    expect(report.conflicts.map((c) => c.path).sort()).toEqual(['/w/a.txt', '/w/d'])
    expect(report.standing).toEqual([])
    expect(await snapshot(lower)).toEqual(before)
    expect((await overlay.changes()).map((c) => [c.path, c.kind])).toEqual([
      ['/w/a.txt', 'update'],
      ['/w/d', 'remove'],
      ['/w/n.txt', 'create'],
    ])
    // Only the paths that do not conflict: committed alone.
    const part = await overlay.commit({ paths: ['/w/n.txt'] })
    expect(part.outcome).toBe('committed')
    expect(await lower.readText(await lower.resolve('/w/n.txt'))).toBe('new\n')
    expect((await overlay.changes()).map((c) => c.path)).toEqual(['/w/a.txt', '/w/d'])
    // Discarded, the overlay shows the store again.
    expect(await overlay.discard()).toBe(2)
    expect(await snapshot(overlay)).toEqual(await snapshot(lower))
  })

  it('a store that fails part way: what was applied is undone where the guards allow, and the report says exactly what stands', async () => {
    for (const failAt of [1, 2, 3]) {
      const memory = seeded()
      const lower = new Failing(memory, { writes: failAt })
      const overlay = await OverlayFileSystem.open(lower)
      await overlay.writeText(await overlay.resolve('/w/a.txt'), 'A\n')
      await overlay.writeText(await overlay.resolve('/w/z/new.txt'), 'N\n')
      await overlay.writeText(await overlay.resolve('/w/b.txt'), 'B\n')
      const before = await snapshot(memory)
      const report = await overlay.commit()
      expect(report.outcome).toBe('failed')
      expect(report.failure?.error.code).toBe('FS_IO_ERROR')
      expect(report.standing, `failing write ${failAt}`).toEqual([])
      // Every write before the failing one was undone; the directory made for z/new.txt too.
      expect(await snapshot(memory), `failing write ${failAt}`).toEqual(before)
      expect(overlay.size).toBe(4)
      lower.heal()
      expect((await overlay.commit()).outcome).toBe('committed')
      expect(await snapshot(memory)).toMatchObject({ 'a.txt': 'A\n', 'b.txt': 'B\n', 'z/new.txt': 'N\n' })
    }
    // A removed directory cannot come back: a failure after it leaves it removed, and the report says so.
    const memory = seeded()
    const lower = new Failing(memory, { removes: 2 })
    const overlay = await OverlayFileSystem.open(lower)
    await overlay.remove(await overlay.resolve('/w/d'), { recursive: true })
    await overlay.remove(await overlay.resolve('/w/a.txt'))
    await overlay.writeText(await overlay.resolve('/w/b.txt'), 'B\n')
    const report = await overlay.commit()
    expect(report.outcome).toBe('failed')
    expect(report.failure?.step).toEqual({ path: '/w/a.txt', kind: 'remove' })
    expect(report.standing).toEqual([{ path: '/w/d', kind: 'remove' }])
    expect(report.undone).toEqual([{ path: '/w/b.txt', kind: 'update' }])
    expect(await snapshot(memory)).toEqual({ 'a.txt': 'alpha\n', 'b.txt': 'beta\n', x: null })
    // Run again once the store works: what stands is recognised as done, the rest is applied.
    lower.heal()
    const again = await overlay.commit()
    expect(again.outcome).toBe('committed')
    expect(again.already).toEqual([{ path: '/w/d', kind: 'remove' }])
    expect(await snapshot(memory)).toEqual({ 'b.txt': 'B\n', x: null })
  })

  it('changes(): kind, base version, a bounded diff for text, the bytes of a binary file', async () => {
    const lower = seeded()
    const baseVersion = (await lower.stat(await lower.resolve('/w/a.txt')))?.version
    const overlay = await OverlayFileSystem.open(lower)
    await overlay.editText(await overlay.resolve('/w/a.txt'), { oldString: 'alpha', newString: 'ALPHA', replaceAll: false })
    await overlay.writeBytes(await overlay.resolve('/w/img.bin'), Uint8Array.of(0, 1, 2, 255))
    await overlay.writeText(await overlay.resolve('/w/big.txt'), 'line\n'.repeat(5000))
    await overlay.createDirectory(await overlay.resolve('/w/newdir'))
    await overlay.rename(await overlay.resolve('/w/b.txt'), await overlay.resolve('/w/x/b.txt'))
    const changes = await overlay.changes()
    expect(changes.map((c) => [c.path, c.kind, c.type])).toEqual([
      ['/w/a.txt', 'update', 'file'],
      ['/w/b.txt', 'remove', 'absent'],
      ['/w/big.txt', 'create', 'file'],
      ['/w/img.bin', 'create', 'file'],
      ['/w/newdir', 'create directory', 'directory'],
      ['/w/x/b.txt', 'create', 'file'],
    ])
    const a = changes[0]!
    expect(a.base).toEqual({ type: 'file', version: baseVersion })
    expect(a.diff).toBe('@@ -1 +1 @@\n-alpha\n+ALPHA')
    expect(changes[3]!.bytes).toEqual(Uint8Array.of(0, 1, 2, 255))
    expect(changes[3]!.diff).toBeUndefined()
    // As bounded as the edit tool's diff.
    expect(Buffer.byteLength(changes[2]!.diff!)).toBeLessThan(9000)
    expect(changes[2]!.added).toBe(5000)
    // The store has not changed.
    expect(await snapshot(lower)).toEqual(await snapshot(seeded()))
  })

  it('changes kept in a store directory survive a restart and commit from the new process’s overlay', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seamfs-overlay-upper-'))
    dirs.push(dir)
    const upper = { fs: new LocalFileSystem({ cwd: dir }), dir }
    const lower = seeded()
    const first = await OverlayFileSystem.open(lower, { upper })
    await first.writeText(await first.resolve('/w/d/e/g.txt'), 'g\n')
    await first.remove(await first.resolve('/w/b.txt'))
    await first.editText(await first.resolve('/w/a.txt'), { oldString: 'alpha', newString: 'ALPHA', replaceAll: false })
    const second = await OverlayFileSystem.open(lower, { upper })
    expect(await snapshot(second)).toEqual(await snapshot(first))
    expect((await second.commit()).outcome).toBe('committed')
    expect(await snapshot(lower)).toEqual({
      'a.txt': 'ALPHA\n',
      d: null,
      'd/c.txt': 'gamma\n',
      'd/e': null,
      'd/e/f.txt': 'delta\n',
      'd/e/g.txt': 'g\n',
      // The link to the removed b.txt now leads nowhere.
      'd/flink': '(other)',
      'd/link': null,
      x: null,
    })
    expect((await OverlayFileSystem.open(lower, { upper })).size).toBe(0)
  })

  it('two overlays on one directory (as two processes): each sees the other’s changes, and concurrent ones are never lost', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seamfs-overlay-shared-'))
    dirs.push(dir)
    const lower = seeded()
    const open = () => OverlayFileSystem.open(lower, { upper: { fs: new LocalFileSystem({ cwd: dir }), dir } })
    const [a, b] = await Promise.all([open(), open()])
    await a.writeText(await a.resolve('/w/from-a.txt'), 'a\n')
    expect(await b.readText(await b.resolve('/w/from-a.txt'))).toBe('a\n')
    await b.remove(await b.resolve('/w/from-a.txt'))
    expect(await a.stat(await a.resolve('/w/from-a.txt'))).toBeUndefined()
    // 20 rounds of both writing at once: a write told to try again is tried again; none is lost.
    const write = async (o: OverlayFileSystem, name: string): Promise<void> => {
      for (;;) {
        try {
          await o.writeText(await o.resolve(`/w/n/${name}`), name)
          return
        } catch (err) {
          if (!(isFsError(err, 'FS_IO_ERROR') && err.retryable)) throw err
        }
      }
    }
    for (let i = 0; i < 20; i++) await Promise.all([write(a, `a${i}`), write(b, `b${i}`)])
    const third = await open()
    const names = (await third.listDir(await third.resolve('/w/n'))).map((e) => e.name)
    expect(names.sort()).toEqual([...Array.from({ length: 20 }, (_, i) => `a${i}`), ...Array.from({ length: 20 }, (_, i) => `b${i}`)].sort())
    expect((await third.commit()).outcome).toBe('committed')
    expect((await lower.listDir(await lower.resolve('/w/n'))).length).toBe(40)
  })
})

/** The memory store, failing its `writes`-th write or `removes`-th remove with a retryable I/O error until healed. */
class Failing extends FileSystemLayer {
  #writes = 0
  #removes = 0
  #healed = false
  readonly #at: { readonly writes?: number; readonly removes?: number }
  constructor(inner: FileSystem, at: { readonly writes?: number; readonly removes?: number }) {
    super(inner)
    this.#at = at
  }
  heal(): void {
    this.#healed = true
  }
  protected override publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> | WriteResult {
    if (!this.#healed && ++this.#writes === this.#at.writes) throw FsError.io('write', target.displayPath, 'the disk is gone', { retryable: true })
    return super.publishBytes(target, bytes, request)
  }
  protected override removeTarget(target: FsTarget, request: RemoveRequest): Promise<FsRemoveOutcome> | FsRemoveOutcome {
    if (!this.#healed && ++this.#removes === this.#at.removes) throw FsError.io('remove', target.displayPath, 'the disk is gone', { retryable: true })
    return super.removeTarget(target, request)
  }
}

/** A store whose next write waits for `gate` once set (another process's call caught mid-way). */
class Gated extends FileSystemLayer {
  gate: Promise<void> | undefined
  entered: (() => void) | undefined
  protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
    const gate = this.gate
    if (gate !== undefined) {
      this.gate = undefined
      this.entered?.()
      await gate
    }
    return super.publishBytes(target, bytes, request)
  }
}

/** A store where another writer changes a file right after the overlay read it. */
class SlipIn extends FileSystemLayer {
  armed = false
  readonly #memory: MemoryFileSystem
  constructor(memory: MemoryFileSystem) {
    super(memory)
    this.#memory = memory
  }
  protected override async openTarget(target: FsTarget, signal: AbortSignal | undefined): Promise<OpenedFile> {
    const opened = await super.openTarget(target, signal)
    const chunks: Uint8Array[] = []
    for await (const chunk of opened.chunks) chunks.push(new Uint8Array(chunk))
    if (this.armed) {
      this.armed = false
      await this.#memory.writeText(await this.#memory.resolve(target.displayPath), 'alpha\nTHEIRS\n')
    }
    return { info: opened.info, chunks }
  }
  protected override async loadBytes(target: FsTarget, request: ReadRequest): Promise<Uint8Array> {
    const bytes = await super.loadBytes(target, request)
    if (this.armed) {
      this.armed = false
      await this.#memory.writeText(await this.#memory.resolve(target.displayPath), 'alpha\nTHEIRS\n')
    }
    return bytes
  }
}

// Found by an adversarial review of the overlay: each failed before its fix.
describe('OverlayFileSystem: commits and records that hold', () => {
  it('a commit run again after a failure goes on from what stands (a directory replaced, a file turned into one)', async () => {
    for (const replace of [
      async (o: OverlayFileSystem) => {
        await o.remove(await o.resolve('/w/d'), { recursive: true })
        await o.writeText(await o.resolve('/w/d/n.txt'), 'N\n')
      },
      async (o: OverlayFileSystem) => {
        await o.remove(await o.resolve('/w/a.txt'))
        await o.createDirectory(await o.resolve('/w/a.txt'))
        await o.writeText(await o.resolve('/w/a.txt/in.txt'), 'IN\n')
      },
    ]) {
      const memory = seeded()
      const lower = new Failing(memory, { writes: 2 })
      const o = await OverlayFileSystem.open(lower)
      await replace(o)
      await o.writeText(await o.resolve('/w/z.txt'), 'Z\n')
      const view = await snapshot(o)
      expect((await o.commit()).outcome).toBe('failed')
      lower.heal()
      const again = await o.commit()
      expect(again.outcome, JSON.stringify(again)).toBe('committed')
      expect(await snapshot(memory)).toEqual(view)
    }
  })

  it('a commit of some paths below a replaced directory takes what that directory holds with it: the rest still commits', async () => {
    const lower = seeded()
    const o = await OverlayFileSystem.open(lower)
    await o.remove(await o.resolve('/w/d'), { recursive: true })
    await o.createDirectory(await o.resolve('/w/d'))
    await o.writeText(await o.resolve('/w/d/c.txt'), 'mine\n')
    await o.writeText(await o.resolve('/w/d/n.txt'), 'N\n')
    await o.writeText(await o.resolve('/w/elsewhere.txt'), 'E\n')
    const view = await snapshot(o)
    expect((await o.commit({ paths: ['/w/d/n.txt'] })).outcome).toBe('committed')
    expect((await o.changes()).map((c) => c.path)).toEqual(['/w/elsewhere.txt'])
    expect((await o.commit()).outcome).toBe('committed')
    expect(await snapshot(lower)).toEqual(view)
  })

  it('a change underneath that the overlay hid, then its directory removed: a conflict, not a silent delete', async () => {
    for (const first of ['write', 'remove'] as const) {
      const lower = seeded()
      const o = await OverlayFileSystem.open(lower)
      const c = await o.resolve('/w/d/c.txt')
      if (first === 'write') await o.writeText(c, 'mine\n')
      else await o.remove(c)
      await lower.writeText(await lower.resolve('/w/d/c.txt'), 'THEIRS\n')
      await o.remove(await o.resolve('/w/d'), { recursive: true })
      const report = await o.commit()
      expect(report.outcome, first).toBe('conflict')
      expect(await lower.readText(await lower.resolve('/w/d/c.txt'))).toBe('THEIRS\n')
    }
  })

  it('an edit is based on the look it read, never on a later one: another writer slipping in is a conflict', async () => {
    const memory = new MemoryFileSystem({ cwd: '/w', files: { 'a.txt': 'alpha\n' } })
    const lower = new SlipIn(memory)
    const o = await OverlayFileSystem.open(lower)
    lower.armed = true
    await o.editText(await o.resolve('/w/a.txt'), { oldString: 'alpha', newString: 'ALPHA', replaceAll: false })
    expect((await o.commit()).outcome).toBe('conflict')
    expect(await memory.readText(await memory.resolve('/w/a.txt'))).toBe('alpha\nTHEIRS\n')
  })

  it('a file of the store above maxTextBytes can be removed and replaced: the commit reports, never throws', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seamfs-overlay-large-'))
    dirs.push(dir)
    const lower = new LocalFileSystem({ cwd: dir, maxTextBytes: 1024 })
    writeFileSync(join(dir, 'big.bin'), new Uint8Array(4096).fill(7))
    writeFileSync(join(dir, 'big2.bin'), new Uint8Array(4096).fill(8))
    const o = await OverlayFileSystem.open(lower)
    await o.remove(await o.resolve('big.bin'))
    await o.writeText(await o.resolve('big2.bin'), 'small now')
    const report = await o.commit()
    expect(report.outcome).toBe('committed')
    expect(await lower.stat(await lower.resolve('big.bin'))).toBeUndefined()
    expect(await lower.readText(await lower.resolve('big2.bin'))).toBe('small now')
  })

  it('a damaged state, or one made over another store, is refused with an FsError', async () => {
    for (const text of ['{"format":1', '{"format":1}', '{"format":1,"nonce":"n","counter":0,"entries":[{"kind":"file"}]}', 'null']) {
      const upper = { fs: new MemoryFileSystem({ cwd: '/u', files: { 'o/overlay.json': text } }), dir: '/u/o' }
      const failure = await OverlayFileSystem.open(new MemoryFileSystem({ cwd: '/w' }), { upper }).catch((err: unknown) => err)
      expect(isFsError(failure), text).toBe(true)
    }
    const upper = { fs: new MemoryFileSystem({ cwd: '/u', files: { 'o/': null } }), dir: '/u/o' }
    const a = await OverlayFileSystem.open(new MemoryFileSystem({ cwd: '/a' }), { upper })
    await a.writeText(await a.resolve('/a/new.txt'), 'from A')
    const other = await OverlayFileSystem.open(new MemoryFileSystem({ cwd: '/b' }), { upper }).catch((err: unknown) => err)
    expect(isFsError(other, 'FS_UNSUPPORTED')).toBe(true)
  })

  it('a commit in one process racing a write in another: the commit lands, and the later write stays, based on it', async () => {
    const memory = new MemoryFileSystem({ cwd: '/w', files: { 'x.txt': 'v0\n' } })
    const lower = new Gated(memory)
    const upper = { fs: new MemoryFileSystem({ cwd: '/u', files: { 'o/': null } }), dir: '/u/o' }
    const agent = await OverlayFileSystem.open(lower, { upper })
    await agent.writeText(await agent.resolve('/w/x.txt'), 'v1\n')
    const person = await OverlayFileSystem.open(lower, { upper })
    let release!: () => void
    lower.gate = new Promise<void>((resolve) => (release = resolve))
    const entered = new Promise<void>((resolve) => (lower.entered = resolve))
    const committing = person.commit()
    await entered
    // The agent goes on while the person's commit writes x.txt = v1 to the store.
    await agent.writeText(await agent.resolve('/w/x.txt'), 'v2\n')
    release()
    expect((await committing).outcome).toBe('committed')
    expect(await memory.readText(await memory.resolve('/w/x.txt'))).toBe('v1\n')
    expect((await agent.changes()).map((c) => [c.path, c.kind, c.diff])).toEqual([['/w/x.txt', 'update', '@@ -1 +1 @@\n-v1\n+v2']])
    expect((await agent.commit()).outcome).toBe('committed')
    expect(await memory.readText(await memory.resolve('/w/x.txt'))).toBe('v2\n')
  })
})

describe('OverlayFileSystem: waiting and text', () => {
  it('a change aborted while it waits behind another leaves the queue at once, and never lands', async () => {
    class Held extends FileSystemLayer {
      gate: Promise<void> | undefined
      protected override async statTarget(target: FsTarget, signal: AbortSignal | undefined): Promise<FsInfo | undefined> {
        const gate = this.gate
        this.gate = undefined
        if (gate !== undefined) await gate
        return super.statTarget(target, signal)
      }
    }
    const lower = new Held(seeded())
    const o = await OverlayFileSystem.open(lower)
    let release!: () => void
    lower.gate = new Promise<void>((resolve) => (release = resolve))
    const first = o.writeText(await o.resolve('/w/a.txt'), 'first\n')
    const controller = new AbortController()
    const second = o.writeText(await o.resolve('/w/n.txt'), 'second\n', { signal: controller.signal }).catch((err: unknown) => err)
    controller.abort()
    expect(await second).toMatchObject({ code: 'FS_ABORTED' })
    release()
    await first
    // A change queued after both: once it is done, the aborted one would have run, had it stayed in the queue.
    await o.writeText(await o.resolve('/w/last.txt'), 'last\n')
    expect(await o.stat(await o.resolve('/w/n.txt'))).toBeUndefined()
    expect((await o.changes()).map((c) => c.path)).toEqual(['/w/a.txt', '/w/last.txt'])
  })

  it('a diff reads text as readText does: the BOM dropped, CRLF as LF', async () => {
    const lower = new MemoryFileSystem({ cwd: '/w' })
    lower.volume.writeFileSync('/w/bom.txt', '\ufeffone\r\ntwo\r\n')
    const o = await OverlayFileSystem.open(lower)
    await o.editText(await o.resolve('/w/bom.txt'), { oldString: 'two', newString: 'TWO', replaceAll: false })
    expect((await o.changes())[0]?.diff).toBe('@@ -1,2 +1,2 @@\n one\n-two\n+TWO')
  })
})
