import { execFileSync, spawn } from 'node:child_process'
import { closeSync, lstatSync, lutimesSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { isFsError, type FsErrorCode } from '@seamfs/core'
import { formatLeaseRecord, HOST_ID } from '@seamfs/core/backend'
import { LocalFileSystem } from '@seamfs/backend-local'
import { lockNameOf } from '../src/leases.js'
import { scratchDir } from './scratch.js'

// The children run the built package (npm test builds before it tests).
const DIST = pathToFileURL(fileURLToPath(new URL('../dist/index.js', import.meta.url))).href

/** A child that starts an edit of `file` and freezes inside it, holding the lock, until killed. */
const HOLDER = `
import { LocalFileSystem } from ${JSON.stringify(DIST)}
const fs = new LocalFileSystem({ cwd: process.argv[1], hooks: { beforeCommit: () => { process.stdout.write('holding\\n'); return new Promise(() => {}) } } })
await fs.editText(await fs.resolve('hot.txt'), { oldString: 'END', newString: 'NEVER\\nEND', replaceAll: false })
`

const tempDir = (): string => scratchDir('leases')

async function codeOf(work: Promise<unknown>): Promise<FsErrorCode | 'ok'> {
  try {
    await work
    return 'ok'
  } catch (err) {
    if (!isFsError(err)) throw err
    return err.code
  }
}

/** Spawns the holder and resolves once it is inside its critical section. */
function holdThenKill(dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', HOLDER, dir], { stdio: ['ignore', 'pipe', 'inherit'] })
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
    child.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('holding')) child.kill('SIGKILL')
    })
    child.on('error', reject)
    child.on('exit', (_code, signal) => {
      clearTimeout(timer)
      if (signal === 'SIGKILL') resolve()
      else reject(new Error(`the holder exited by itself (${String(_code)})`))
    })
  })
}

describe('lock entries on the local disk (needs the build from `tsc -b`)', () => {
  it('a holder SIGKILLed inside its edit: the next edit proceeds at once, nothing is torn or left behind, the directory can be removed', async () => {
    const root = tempDir()
    mkdirSync(join(root, 'd'))
    writeFileSync(join(root, 'd', 'hot.txt'), 'head\nEND')
    await holdThenKill(join(root, 'd'))
    // The dead holder's lock entry and stage are still there, hidden from the listing.
    expect(readdirSync(join(root, 'd')).filter((n) => n.startsWith('.seamfs-')).length).toBeGreaterThan(0)
    const fs = new LocalFileSystem({ cwd: join(root, 'd') })
    const started = Date.now()
    await fs.editText(await fs.resolve('hot.txt'), { oldString: 'END', newString: 'after\nEND', replaceAll: false })
    expect(Date.now() - started, 'a dead holder on this host costs no lease').toBeLessThan(2_000)
    expect(readFileSync(join(root, 'd', 'hot.txt'), 'utf8')).toBe('head\nafter\nEND')
    expect((await fs.listDir(await fs.resolve('.'))).map((e) => e.name)).toEqual(['hot.txt'])
    await fs.close()
    expect(readdirSync(join(root, 'd')), 'no stage or lock entry is left once another writer touched the directory').toEqual(['hot.txt'])
    await fs.remove(await fs.resolve('hot.txt'))
    await fs.remove(await fs.resolve(join(root, 'd')))
    expect(readdirSync(root)).toEqual([])
  })

  it('a dead holder leaves a lock entry only: removing its directory clears it', async () => {
    const root = tempDir()
    mkdirSync(join(root, 'd'))
    writeFileSync(join(root, 'd', 'hot.txt'), 'head\nEND')
    await holdThenKill(join(root, 'd'))
    rmSync(join(root, 'd', 'hot.txt'))
    for (const name of readdirSync(join(root, 'd'))) if (name.startsWith('.seamfs-stage-')) rmSync(join(root, 'd', name), { recursive: true })
    const fs = new LocalFileSystem({ cwd: root })
    expect((await fs.listDir(await fs.resolve('d'))).length).toBe(0)
    await fs.remove(await fs.resolve('d'))
    await fs.close()
    expect(readdirSync(root)).toEqual([])
  })

  describe('hostile or broken entries at the lock name', () => {
    const lease = 300
    const setup = (): { root: string; lock: string; fs: LocalFileSystem } => {
      const root = tempDir()
      writeFileSync(join(root, 'f.txt'), 'one\n')
      return { root, lock: join(root, lockNameOf('f.txt')), fs: new LocalFileSystem({ cwd: root, lockLeaseMs: lease, lockWaitMs: 5_000 }) }
    }

    const victims: string[] = []
    const victimOutside = (): string => {
      const victim = join(tempDir(), 'victim.txt')
      writeFileSync(victim, 'precious\n')
      victims.push(victim)
      return victim
    }
    for (const [what, plant] of [
      ['a file of garbage', (lock: string) => writeFileSync(lock, 'not a lock at all\u0000\u00ff')],
      ['an empty file', (lock: string) => writeFileSync(lock, '')],
      [
        'a file holding a whole record',
        (lock: string) => writeFileSync(lock, formatLeaseRecord({ host: HOST_ID, pid: process.pid, nonce: 'c'.repeat(16), leaseMs: 1000 })),
      ],
      [
        'a truncated record',
        (lock: string) => symlinkSync(formatLeaseRecord({ host: HOST_ID, pid: 1, nonce: '0'.repeat(16), leaseMs: 1000 }).slice(0, 20), lock),
      ],
      ['a symlink to a file outside the root', (lock: string) => symlinkSync(victimOutside(), lock)],
      ['a dangling symlink', (lock: string) => symlinkSync('/nonexistent/seamfs', lock)],
    ] as const) {
      it(`${what} is held for one lease after it was last touched, then taken over, never followed`, async () => {
        const { root, lock, fs } = setup()
        plant(lock)
        const started = Date.now()
        await fs.editText(await fs.resolve('f.txt'), { oldString: 'one', newString: 'two', replaceAll: false })
        const waited = Date.now() - started
        expect(waited).toBeGreaterThanOrEqual(lease - 50)
        expect(waited).toBeLessThan(3_000)
        expect(readFileSync(join(root, 'f.txt'), 'utf8')).toBe('two\n')
        await fs.close()
        expect(readdirSync(root).sort(), 'the broken entry was replaced by a lock, then released').toEqual(['f.txt'])
        for (const victim of victims.splice(0)) expect(readFileSync(victim, 'utf8'), 'a link planted at the name is never followed').toBe('precious\n')
      })
    }

    it('a record claiming a huge lease from a live process on another host waits no longer than lockWaitMs, then says who holds it', async () => {
      const { lock, fs } = setup()
      symlinkSync(formatLeaseRecord({ host: 'abcdef012345', pid: process.pid, nonce: 'a'.repeat(16), leaseMs: 999_999_999 }), lock)
      const short = new LocalFileSystem({ cwd: fs.cwd, lockWaitMs: 400 })
      const started = Date.now()
      const err: unknown = await short
        .editText(await short.resolve('f.txt'), { oldString: 'one', newString: 'two', replaceAll: false })
        .catch((e: unknown) => e)
      expect(Date.now() - started).toBeLessThan(2_000)
      expect(isFsError(err, 'FS_IO_ERROR') && err.retryable).toBe(true)
      expect(String((err as Error).message)).toMatch(/busy: .*seamfs-lock-.* is held by pid \d+ on host abcdef012345/)
      expect(readFileSync(join(fs.cwd, 'f.txt'), 'utf8')).toBe('one\n')
    })

    it('a time in the future does not block: it is taken over', async () => {
      const { lock, fs } = setup()
      symlinkSync(formatLeaseRecord({ host: 'abcdef012345', pid: process.pid, nonce: 'a'.repeat(16), leaseMs: 1000 }), lock)
      const future = new Date(Date.now() + 3_600_000)
      lutimesSync(lock, future, future)
      await fs.editText(await fs.resolve('f.txt'), { oldString: 'one', newString: 'two', replaceAll: false })
      expect(readFileSync(join(fs.cwd, 'f.txt'), 'utf8')).toBe('two\n')
    })

    it('an abort ends the wait with FS_ABORTED and changes nothing', async () => {
      const { lock, fs } = setup()
      symlinkSync(formatLeaseRecord({ host: HOST_ID, pid: process.pid, nonce: 'b'.repeat(16), leaseMs: 60_000 }), lock)
      const slow = new LocalFileSystem({ cwd: fs.cwd, lockWaitMs: 60_000 })
      const started = Date.now()
      const code = await codeOf(
        slow.editText(await slow.resolve('f.txt'), { oldString: 'one', newString: 'two', replaceAll: false }, { signal: AbortSignal.timeout(200) }),
      )
      expect(code).toBe('FS_ABORTED')
      expect(Date.now() - started).toBeLessThan(2_000)
      expect(readFileSync(join(fs.cwd, 'f.txt'), 'utf8')).toBe('one\n')
    })

    for (const kind of ['a directory', 'a FIFO'] as const) {
      it(`${kind} is never opened nor removed: a clear retryable FS_IO_ERROR at once`, async () => {
        const { root, lock, fs } = setup()
        if (kind === 'a directory') {
          mkdirSync(lock)
          writeFileSync(join(lock, 'inside.txt'), 'kept\n')
        } else execFileSync('mkfifo', [lock])
        const started = Date.now()
        const t = await fs.resolve('f.txt')
        for (const op of [
          () => fs.editText(t, { oldString: 'one', newString: 'two', replaceAll: false }),
          () => fs.remove(t),
          () => fs.writeText(t, 'three\n'),
        ]) {
          const err: unknown = await op().catch((e: unknown) => e)
          expect(isFsError(err, 'FS_IO_ERROR'), String(err)).toBe(true)
          expect((err as Error).message).toContain('is not a file')
        }
        expect(Date.now() - started).toBeLessThan(2_000)
        expect(readFileSync(join(root, 'f.txt'), 'utf8')).toBe('one\n')
        expect(lstatSync(lock).isSymbolicLink()).toBe(false)
        if (kind === 'a directory') expect(readFileSync(join(lock, 'inside.txt'), 'utf8')).toBe('kept\n')
      })
    }
  })

  it('an outside program rewriting a file in place while seamfs edits it: seamfs never truncates it, every edit it reports is in the content it published', async () => {
    const root = tempDir()
    const path = join(root, 'live.txt')
    writeFileSync(path, 'OUTSIDE 0\nEND\n')
    const fs = new LocalFileSystem({ cwd: root })
    const target = await fs.resolve('live.txt')
    let writing = true
    let rewrites = 0
    const outsider = (async () => {
      while (writing) {
        // As a shell's `>` does: same inode, O_TRUNC, write.
        const fd = openSync(path, 'w')
        writeSync(fd, `OUTSIDE ${++rewrites}\nEND\n`)
        closeSync(fd)
        await new Promise((r) => setTimeout(r, 50))
      }
    })()
    let ok = 0
    const deadline = Date.now() + 1500
    for (let i = 0; Date.now() < deadline; i++) {
      const code = await codeOf(fs.editText(target, { oldString: 'END\n', newString: `edit ${i}\nEND\n`, replaceAll: false }))
      if (code === 'ok') ok++
      else expect(['FS_STALE_VERSION', 'FS_EDIT_NOT_FOUND']).toContain(code)
      await new Promise((r) => setTimeout(r, 5))
    }
    writing = false
    await outsider
    const content = readFileSync(path, 'utf8')
    expect(ok).toBeGreaterThan(0)
    expect(rewrites).toBeGreaterThan(5)
    expect(content).toMatch(/^OUTSIDE \d+\n(edit \d+\n)*END\n$/)
  })
})
