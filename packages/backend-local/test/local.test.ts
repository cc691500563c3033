import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync, lstatSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { isFsError, type FileSystem, type FsErrorCode } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { abortedThen } from './aborted.js'
import { localBackend } from '@seamfs/backend-local/config'

let root: string
let fs: LocalFileSystem

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'seamfs-local-'))
  fs = new LocalFileSystem({ cwd: root })
})

afterEach(() => {
  rmSync(root, { recursive: true, force: true })
})

async function codeOf(promise: Promise<unknown>): Promise<FsErrorCode | 'resolved'> {
  try {
    await promise
    return 'resolved'
  } catch (err) {
    if (!isFsError(err)) throw new Error(`not an FsError: ${String(err)}`, { cause: err })
    return err.code
  }
}

const modeOf = (path: string): number => statSync(path).mode & 0o777

describe('resolve', () => {
  it('resolves relative paths against cwd and opts.cwd; absolute paths ignore both', async () => {
    mkdirSync(join(root, 'sub'))
    expect((await fs.resolve('a.txt')).displayPath).toBe(join(root, 'a.txt'))
    expect((await fs.resolve('a.txt', { cwd: 'sub' })).displayPath).toBe(join(root, 'sub', 'a.txt'))
    expect((await fs.resolve('/etc/hostname', { cwd: 'sub' })).displayPath).toBe('/etc/hostname')
  })

  it('gives a missing path the same key before and after creation, under a symlinked parent', async () => {
    mkdirSync(join(root, 'real'))
    symlinkSync(join(root, 'real'), join(root, 'alias'))
    const before = await fs.resolve('alias/new/deep.txt')
    expect(before.targetKey).toBe(join(root, 'real', 'new', 'deep.txt'))
    await fs.writeText(before, 'x')
    expect((await fs.resolve('alias/new/deep.txt')).targetKey).toBe(before.targetKey)
    expect(readFileSync(join(root, 'real', 'new', 'deep.txt'), 'utf8')).toBe('x')
  })

  it('follows a dangling symlink to the path it names, so a write creates the target and keeps the link', async () => {
    symlinkSync('made-later.txt', join(root, 'link.txt'))
    const target = await fs.resolve('link.txt')
    await fs.writeText(target, 'through the link')
    expect(lstatSync(join(root, 'link.txt')).isSymbolicLink()).toBe(true)
    expect(readFileSync(join(root, 'made-later.txt'), 'utf8')).toBe('through the link')
  })

  it('rejects blank paths, NUL bytes, paths through a file and symlink loops with FS_NOT_FOUND', async () => {
    writeFileSync(join(root, 'file'), 'x')
    symlinkSync('loop-b', join(root, 'loop-a'))
    symlinkSync('loop-a', join(root, 'loop-b'))
    expect(await codeOf(fs.resolve('   '))).toBe('FS_NOT_FOUND')
    expect(await codeOf(fs.resolve('a\0b'))).toBe('FS_NOT_FOUND')
    expect(await codeOf(fs.resolve('file/child.txt'))).toBe('FS_NOT_FOUND')
    expect(await codeOf(fs.resolve('loop-a'))).toBe('FS_NOT_FOUND')
  })
})

describe('lstat', () => {
  it('a path through a regular file or through a link loop is undefined (absent), not an error', async () => {
    writeFileSync(join(root, 'file'), 'x')
    symlinkSync('loop-b', join(root, 'loop-a'))
    symlinkSync('loop-a', join(root, 'loop-b'))
    expect(await fs.lstat('file/child.txt')).toBeUndefined()
    expect(await fs.lstat('file/deeper/child.txt')).toBeUndefined()
    expect(await fs.lstat('loop-a/child.txt')).toBeUndefined()
    // The looping link itself exists: lstat reports it without following it.
    expect((await fs.lstat('loop-a'))?.type).toBe('symlink')
  })
})

describe('writes', () => {
  it('creates new files owner-only (0600) and keeps an existing file mode', async () => {
    const fresh = await fs.resolve('fresh.txt')
    await fs.writeText(fresh, 'a')
    expect(modeOf(fresh.targetKey)).toBe(0o600)
    writeFileSync(join(root, 'script.sh'), '#!/bin/sh\n')
    chmodSync(join(root, 'script.sh'), 0o755)
    const script = await fs.resolve('script.sh')
    await fs.writeText(script, '#!/bin/sh\necho hi\n')
    expect(modeOf(script.targetKey)).toBe(0o755)
    await fs.editText(script, { oldString: 'hi', newString: 'there', replaceAll: false })
    expect(modeOf(script.targetKey)).toBe(0o755)
  })

  it('honours newFileMode', async () => {
    const wide = new LocalFileSystem({ cwd: root, newFileMode: 0o644 })
    const t = await wide.resolve('wide.txt')
    await wide.writeText(t, 'a')
    expect(modeOf(t.targetKey)).toBe(0o644)
  })

  it('takes newFileMode from the config ("0640"); without it new files are 0600', async () => {
    const open = async (raw: unknown): Promise<FileSystem> => localBackend.open(localBackend.parseConfig(raw, 'backend'), {}, root)
    const wide = await open({ type: 'local', root: '.', newFileMode: '0640' })
    const t = await wide.resolve('wide.txt')
    await wide.writeText(t, 'a')
    expect(modeOf(t.targetKey)).toBe(0o640)
    const plain = await open({ type: 'local', root: '.' })
    const p = await plain.resolve('plain.txt')
    await plain.writeText(p, 'a')
    expect(modeOf(p.targetKey)).toBe(0o600)
    await Promise.all([wide.close(), plain.close()])
    expect(() => localBackend.parseConfig({ type: 'local', root: '.', newFileMode: 420 }, 'backend')).toThrow(/backend\.newFileMode: expected permission bits/)
  })

  it('writes and edits through a symlink land on its target and keep the link', async () => {
    writeFileSync(join(root, 'real.txt'), 'one')
    symlinkSync('real.txt', join(root, 'link.txt'))
    const link = await fs.resolve('link.txt')
    expect(link.targetKey).toBe(join(root, 'real.txt'))
    await fs.writeText(link, 'two')
    await fs.editText(link, { oldString: 'two', newString: 'three', replaceAll: false })
    expect(lstatSync(join(root, 'link.txt')).isSymbolicLink()).toBe(true)
    expect(readFileSync(join(root, 'real.txt'), 'utf8')).toBe('three')
  })

  it('changes the version on a same-size rewrite whose mtime was restored', async () => {
    const t = await fs.resolve('same.txt')
    const { version } = await fs.writeText(t, 'aaaa')
    const st = statSync(t.targetKey, { bigint: true })
    writeFileSync(t.targetKey, 'bbbb')
    // Restore the mtime to the nanosecond, as `touch -r` or a careless tool would.
    const ns = st.mtimeNs % 1_000_000_000n
    const stamp = `@${st.mtimeNs / 1_000_000_000n}.${ns.toString().padStart(9, '0')}`
    execFileSync('touch', ['-m', '-d', stamp, t.targetKey])
    expect(statSync(t.targetKey, { bigint: true }).mtimeNs).toBe(st.mtimeNs)
    const now = await fs.stat(t)
    expect(now?.version).not.toBe(version)
    expect(await codeOf(fs.writeText(t, 'c', { expected: { kind: 'replaceIfVersion', version } }))).toBe('FS_STALE_VERSION')
    expect(readFileSync(t.targetKey, 'utf8')).toBe('bbbb')
  })

  it('returns the diff basis only for text below the cap', async () => {
    const small = new LocalFileSystem({ cwd: root, diffBasisMaxBytes: 8 })
    const t = await small.resolve('basis.txt')
    await small.writeText(t, 'a\r\nb')
    expect((await small.writeText(t, 'short')).before).toBe('a\nb')
    await small.writeText(t, 'much longer than eight bytes')
    expect((await small.writeText(t, 'x')).before).toBeNull()
    writeFileSync(t.targetKey, Buffer.from([0xff, 0xfe]))
    expect((await small.writeText(t, 'y')).before).toBeNull()
  })

  it('rejects writes onto a directory or a FIFO with FS_NOT_REGULAR_FILE and changes nothing', async () => {
    mkdirSync(join(root, 'dir'))
    mkfifoSyncCompat(join(root, 'fifo'))
    expect(await codeOf(fs.writeText(await fs.resolve('dir'), 'x'))).toBe('FS_NOT_REGULAR_FILE')
    expect(await codeOf(fs.writeText(await fs.resolve('fifo'), 'x'))).toBe('FS_NOT_REGULAR_FILE')
    expect(await codeOf(fs.readText(await fs.resolve('fifo')))).toBe('FS_NOT_REGULAR_FILE')
    expect(await codeOf(fs.editText(await fs.resolve('fifo'), { oldString: 'a', newString: 'b', replaceAll: false }))).toBe('FS_NOT_REGULAR_FILE')
    expect(readdirSync(root).sort()).toEqual(['dir', 'fifo'])
    expect(statSync(join(root, 'fifo')).isFIFO()).toBe(true)
  })

  it('createIfAbsent onto a dangling symlink or directory publishes nothing', async () => {
    mkdirSync(join(root, 'dir'))
    expect(await codeOf(fs.writeText(await fs.resolve('dir'), 'x', { expected: { kind: 'createIfAbsent' } }))).toBe('FS_NOT_REGULAR_FILE')
    expect(readdirSync(root)).toEqual(['dir'])
  })
})

function mkfifoSyncCompat(path: string): void {
  execFileSync('mkfifo', [path])
}

describe('reads', () => {
  it('reads a file that grows after fstat without truncating it', async () => {
    const t = await fs.resolve('grow.txt')
    writeFileSync(t.targetKey, 'x'.repeat(200_000))
    expect((await fs.readText(t)).length).toBe(200_000)
  })

  it('streams a file in bounded chunks and never splits a character', async () => {
    const t = await fs.resolve('big.txt')
    const text = '🐂中é'.repeat(600_000)
    writeFileSync(t.targetKey, text)
    const chunks: string[] = []
    for await (const chunk of await fs.streamText(t)) chunks.push(chunk)
    expect(chunks.length).toBeGreaterThan(10)
    expect(chunks.every((c) => c.isWellFormed())).toBe(true)
    expect(chunks.join('')).toBe(text)
  })

  it('an unconsumed stream holds no descriptor', async () => {
    const t = await fs.resolve('s.txt')
    writeFileSync(t.targetKey, 'x')
    const before = readdirSync('/proc/self/fd').length
    for (let i = 0; i < 50; i++) await fs.streamText(t)
    expect(readdirSync('/proc/self/fd').length).toBeLessThanOrEqual(before)
  })
})

describe('listing', () => {
  it('reports plain entries from readdir alone and follows only symlinks', async () => {
    writeFileSync(join(root, 'f.txt'), 'abc')
    mkdirSync(join(root, 'd'))
    symlinkSync('f.txt', join(root, 'to-file'))
    symlinkSync('d', join(root, 'to-dir'))
    symlinkSync('nowhere', join(root, 'broken'))
    const entries = await fs.listDir(await fs.resolve('.'))
    expect(entries.map((e) => [e.name, e.type])).toEqual([
      ['broken', 'other'],
      ['d', 'directory'],
      ['f.txt', 'file'],
      ['to-dir', 'directory'],
      ['to-file', 'file'],
    ])
    const byName = new Map(entries.map((e) => [e.name, e]))
    // Plain entries carry no stat-derived metadata: proof that no stat was made for them.
    expect(byName.get('f.txt')?.version).toBeUndefined()
    expect(byName.get('to-file')?.size).toBe(3)
    expect(byName.get('to-file')?.target.targetKey).toBe(join(root, 'f.txt'))
    expect(byName.get('broken')?.version).toBeUndefined()
  })

  it('never lists staging directories', async () => {
    mkdirSync(join(root, `.seamfs-stage-${process.pid}-abcdef`))
    writeFileSync(join(root, 'a'), '')
    expect((await fs.listDir(await fs.resolve('.'))).map((e) => e.name)).toEqual(['a'])
  })
})

describe('staging residue', () => {
  const deadPid = 2 ** 22 + 1 // above Linux's PID_MAX_LIMIT: never alive

  it('is removed by the next mutation in the directory when its writer is dead', async () => {
    const residue = join(root, `.seamfs-stage-${deadPid}-Ab12Cd`)
    mkdirSync(residue)
    writeFileSync(join(residue, '1.tmp'), 'half') // a temp file, as a killed writer leaves it
    const live = join(root, `.seamfs-stage-1-Ab12Cd`) // pid 1 is alive: its writer may still be working
    mkdirSync(live)
    await fs.writeText(await fs.resolve('a.txt'), 'a')
    expect(existsSync(residue)).toBe(false)
    expect(existsSync(live)).toBe(true)
  })

  it('is detected again after the directory changed behind this instance', async () => {
    const t = await fs.resolve('a.txt')
    await fs.writeText(t, '1')
    const residue = join(root, `.seamfs-stage-${deadPid}-zzzzzz`)
    mkdirSync(residue)
    await fs.writeText(t, '2')
    expect(existsSync(residue)).toBe(false)
    await fs.close() // this instance's own idle staging directory goes now, not after a second
    expect(readdirSync(root)).toEqual(['a.txt'])
  })

  for (const point of ['afterStage', 'beforeCommit'] as const) {
    it(`a fault at ${point} leaves the old content and no residue`, async () => {
      const faulty = new LocalFileSystem({
        cwd: root,
        hooks: {
          [point]: () => {
            throw Object.assign(new Error('injected'), { code: 'ENOSPC' })
          },
        },
      })
      const t = await faulty.resolve('f.txt')
      writeFileSync(t.targetKey, 'old')
      expect(await codeOf(faulty.writeText(t, 'new'))).toBe('FS_IO_ERROR')
      expect(await codeOf(faulty.editText(t, { oldString: 'old', newString: 'x', replaceAll: false }))).toBe('FS_IO_ERROR')
      expect(readFileSync(t.targetKey, 'utf8')).toBe('old')
      expect(readdirSync(root)).toEqual(['f.txt'])
    })
  }

  it.skipIf(process.getuid?.() !== 0)(
    'a fault whose cleanup fails too is FS_IO_ERROR naming both, and the old content stays (needs root for chattr)',
    async () => {
      let pinned: string | undefined
      const faulty = new LocalFileSystem({
        cwd: root,
        hooks: {
          beforeCommit: (temp) => {
            pinned = temp
            execFileSync('chattr', ['+i', temp]) // immutable: even root cannot remove it
            throw Object.assign(new Error('injected'), { code: 'ENOSPC' })
          },
        },
      })
      const t = await faulty.resolve('f.txt')
      writeFileSync(t.targetKey, 'old')
      try {
        const err = await faulty.writeText(t, 'new').then(
          () => undefined,
          (e: unknown) => e,
        )
        expect(isFsError(err, 'FS_IO_ERROR')).toBe(true)
        expect((err as Error).message).toMatch(/no space left on device \(and cleanup failed: /)
        expect(readFileSync(t.targetKey, 'utf8')).toBe('old')
        expect((await faulty.listDir(await faulty.resolve('.'))).map((e) => e.name)).toEqual(['f.txt'])
      } finally {
        if (pinned !== undefined) execFileSync('chattr', ['-i', pinned])
      }
      // Once removable, the abandoned staging directory goes with the next write.
      await fs.writeText(t, 'next')
      await fs.close()
      expect(readdirSync(root)).toEqual(['f.txt'])
    },
  )

  it('an abort that lands just before commit leaves the old content and no residue', async () => {
    const controller = new AbortController()
    const aborting = new LocalFileSystem({ cwd: root, hooks: { beforeCommit: () => controller.abort() } })
    const t = await aborting.resolve('f.txt')
    writeFileSync(t.targetKey, 'old')
    await abortedThen(aborting.writeText(t, 'new', { signal: controller.signal }), () => {
      expect(readFileSync(t.targetKey, 'utf8')).toBe('old')
      expect(readdirSync(root)).toEqual(['f.txt'])
    })
  })
})
