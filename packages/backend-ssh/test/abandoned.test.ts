/**
 * What a writer leaves when it dies, and what others may plant where seamfs keeps its locks:
 * - a writer killed (SIGKILL) mid-write leaves its stage: hidden from listings, swept by the next
 *   writer in that directory, never blocking the directory's removal;
 * - an editor killed while it holds a target's lock: the next editor (same machine) takes it at once;
 * - hostile lock entries (garbage, an empty file, a directory, a link out of the root, a live
 *   holder that never lets go): taken over after the lease, or refused quickly and retryably,
 *   never followed, never removed when they are not files; nothing waits forever.
 * Every case is bounded and stops by itself.
 */
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { setTimeout as delay } from 'node:timers/promises'
import { describe, expect, inject, it } from 'vitest'
import { formatLeaseRecord, HOST_ID, isFsError } from '@seamfs/core/backend'
import { SftpFileSystem } from '@seamfs/backend-ssh'
import { titled } from './helpers.js'
import { suiteScratch, type RawSftp } from './raw.js'
import { startWorker } from './workers.js'

const server = inject('sftp')
const STAGE = /^\.seamfs-tmp-/
const LOCK = /^\.seamfs-lock-/
const lockOf = (name: string): string => `.seamfs-lock-${createHash('sha256').update(name).digest('hex').slice(0, 24)}`

/** Waits (polling the server's disk: the test sshd is local) until `dir` holds a name matching `pattern`; true when it did within `ms`. */
async function appears(dir: string, pattern: RegExp, ms: number): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (existsSync(dir) && readdirSync(dir).some((n) => pattern.test(n))) return true
    await delay(1)
  }
  return false
}

/** Waits until `dir` holds no name matching `pattern`; true when that happened within `ms`. */
async function gone(dir: string, pattern: RegExp, ms: number): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (!readdirSync(dir).some((n) => pattern.test(n))) return true
    await delay(20)
  }
  return false
}

describe.skipIf(server === null)(titled('SftpFileSystem: dead writers and hostile lock entries', server, inject('sftpWhy')), () => {
  let raw: RawSftp
  let base: string
  suiteScratch(server, 'abandoned-', (scratch) => {
    raw = scratch.raw
    base = scratch.base
  })

  /**
   * Starts a worker on `job` in `root`, kills it (SIGKILL) as soon as `dir` holds a name matching
   * `pattern`, and returns the killed pid and that name (tried again, at most 5 times, when the name
   * was gone by then).
   */
  async function killWhile(root: string, dir: string, pattern: RegExp, job: Record<string, unknown>): Promise<{ pid: number; name: string }> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const worker = startWorker(server!, { root, ...job })
      await worker.ready
      const seen = await appears(dir, pattern, 10_000)
      worker.child.kill('SIGKILL')
      await worker.done.catch(() => undefined)
      const name = readdirSync(dir).find((n) => pattern.test(n))
      if (seen && name !== undefined) return { pid: worker.child.pid!, name }
    }
    throw new Error(`no ${String(pattern)} left in ${dir} by a killed worker`)
  }

  it(
    'a writer killed mid-write: its stage is hidden, never blocks removing the directory, and the next writer there sweeps it',
    { timeout: 60_000 },
    async () => {
      const root = await raw.freshDir(base, 'killed-')
      for (const variant of ['remove', 'sweep'] as const) {
        const dir = `${root}/${variant}`
        await raw.mkdirp(dir)
        const { pid, name } = await killWhile(root, dir, STAGE, { mode: 'write-big', file: `${variant}/big.bin`, bytes: 8 * 1024 * 1024 })
        // The stage names its owner: this machine, the killed pid.
        expect(name).toMatch(new RegExp(`^\\.seamfs-tmp-[0-9a-f]{8}-${pid}-[0-9a-f]{16}$`))
        // Without the background sweep: only the removal of the directory clears it.
        const fs = new SftpFileSystem({ ...server!, root, sweepAbandoned: variant === 'sweep' })
        try {
          const listed = (await fs.listDir(await fs.resolve(variant))).map((e) => e.name)
          expect(
            listed.filter((n) => n.startsWith('.seamfs-')),
            'the listing hides it',
          ).toEqual([])
          if (variant === 'remove') {
            if (listed.includes('big.bin')) await fs.remove(await fs.resolve(`${variant}/big.bin`))
            expect(await fs.listDir(await fs.resolve(variant))).toEqual([])
            // Listed empty, removed as empty: the dead writer's stage goes first.
            expect(await fs.remove(await fs.resolve(variant))).toEqual({ type: 'directory', entries: 1 })
            expect(existsSync(dir)).toBe(false)
          } else {
            await fs.writeText(await fs.resolve(`${variant}/note.txt`), 'after\n')
            expect(await gone(dir, STAGE, 5_000), 'the next writer there swept the stage').toBe(true)
            expect((await fs.listDir(await fs.resolve(variant))).map((e) => e.name).sort()).toEqual([...listed, 'note.txt'].sort())
            expect(await fs.remove(await fs.resolve(variant), { recursive: true })).toMatchObject({ type: 'directory' })
          }
        } finally {
          await fs.close()
        }
      }
    },
  )

  it('an editor killed while it holds the lock: the next editor on this machine takes it at once', { timeout: 60_000 }, async () => {
    const root = await raw.freshDir(base, 'held-')
    // Large enough that an edit holds the lock for a while (read, replace, write of 4 MiB).
    const body = `START\n${'y'.repeat(4 * 1024 * 1024)}\nEND\n`
    await raw.writeInPlace(`${root}/l/x.txt`, Buffer.from(body))
    const { pid, name } = await killWhile(root, `${root}/l`, LOCK, { mode: 'edit-loop', file: 'l/x.txt' })
    expect(name).toBe(lockOf('x.txt'))
    const record = readFileSync(`${root}/l/${name}`, 'utf8')
    expect(record).toContain(` ${pid} `)
    const fs = new SftpFileSystem({ ...server!, root })
    try {
      const t = await fs.resolve('l/x.txt')
      const edit = async (mark: string): Promise<number> => {
        const started = performance.now()
        await fs.editText(t, { oldString: 'END\n', newString: `${mark}\nEND\n`, replaceAll: false })
        return performance.now() - started
      }
      const first = await edit('after-kill')
      const second = await edit('again')
      console.log(`edit after the holder was killed: ${first.toFixed(0)} ms; the next one: ${second.toFixed(0)} ms`)
      expect(first - second, 'the dead holder cost no lease').toBeLessThan(1_000)
      const text = (await raw.read(`${root}/l/x.txt`)).toString()
      expect(text.endsWith('after-kill\nagain\nEND\n')).toBe(true)
      expect(readdirSync(`${root}/l`).filter((n) => LOCK.test(n))).toEqual([])
      // The killed editor's stage (if it had one) goes with the background sweep.
      expect(await gone(`${root}/l`, STAGE, 5_000)).toBe(true)
    } finally {
      await fs.close()
    }
  })

  it(
    'hostile lock entries: garbage is taken over after the lease, an old empty file at once; a directory, a link out of the root and a live holder are refused, retryably, untouched',
    { timeout: 60_000 },
    async () => {
      const root = await raw.freshDir(base, 'hostile-')
      const outside = await raw.freshDir(base, 'outside-')
      await raw.writeInPlace(`${outside}/secret.txt`, Buffer.from('secret\n'))
      const names = ['garbage', 'empty', 'dir', 'link', 'busy']
      for (const n of names) await raw.writeInPlace(`${root}/${n}.txt`, Buffer.from('START\nEND\n'))
      const at = (n: string): string => `${root}/${lockOf(`${n}.txt`)}`
      await raw.writeInPlace(at('garbage'), Buffer.from('garbage, not a lock record\n'))
      await raw.writeInPlace(at('empty'), Buffer.alloc(0))
      const hourAgo = Math.floor(Date.now() / 1000) - 3600
      await raw.call((cb) => raw.sftp.utimes(at('empty'), hourAgo, hourAgo, cb))
      await raw.mkdirp(`${at('dir')}/inside`)
      await raw.symlink(at('link'), `${outside}/secret.txt`)
      // A holder alive on this machine (pid 1), with a long lease, that never lets go.
      await raw.writeInPlace(at('busy'), Buffer.from(formatLeaseRecord({ host: HOST_ID, pid: 1, nonce: 'ab'.repeat(12), leaseMs: 60_000 })))
      const patient = new SftpFileSystem({ ...server!, root, lockWaitMs: 20_000 })
      const hasty = new SftpFileSystem({ ...server!, root, lockWaitMs: 1_500 })
      try {
        const timed = async (fs: SftpFileSystem, n: string): Promise<{ code: string; ms: number; err: unknown }> => {
          const started = performance.now()
          const t = await fs.resolve(`${n}.txt`)
          const err = await fs.editText(t, { oldString: 'END\n', newString: `${n}\nEND\n`, replaceAll: false }).then(
            () => undefined,
            (e: unknown) => e,
          )
          return { code: err === undefined ? 'ok' : isFsError(err) ? err.code : 'not an FsError', ms: performance.now() - started, err }
        }
        const [garbage, empty, dir, link, busy] = await Promise.all([
          timed(patient, 'garbage'),
          timed(patient, 'empty'),
          timed(patient, 'dir'),
          timed(patient, 'link'),
          timed(hasty, 'busy'),
        ])
        console.log(
          `hostile lock entries (ms): garbage ${garbage.ms.toFixed(0)}, empty (old) ${empty.ms.toFixed(0)}, directory ${dir.ms.toFixed(0)}, link ${link.ms.toFixed(0)}, busy ${busy.ms.toFixed(0)}`,
        )
        // Garbage counts as held for core's default lease (10 s) by the server's clock, then is taken over.
        expect(garbage.code).toBe('ok')
        expect(garbage.ms).toBeGreaterThan(8_000)
        expect(garbage.ms).toBeLessThan(16_000)
        expect(empty.code).toBe('ok')
        expect(empty.ms).toBeLessThan(2_000)
        for (const [what, r] of [
          ['directory', dir],
          ['link', link],
        ] as const) {
          expect(isFsError(r.err, 'FS_IO_ERROR') && r.err.retryable, `${what}: ${String(r.err)}`).toBe(true)
          expect(String((r.err as Error).message)).toContain(lockOf(`${what === 'directory' ? 'dir' : 'link'}.txt`))
          expect(r.ms).toBeLessThan(2_000)
        }
        expect(isFsError(busy.err, 'FS_IO_ERROR') && busy.err.retryable, String(busy.err)).toBe(true)
        expect(String((busy.err as Error).message)).toContain('busy')
        expect(busy.ms).toBeGreaterThan(1_400)
        expect(busy.ms).toBeLessThan(5_000)
        // Untouched: the directory with its content, the link, what it points at; the live holder's record.
        expect(await raw.names(at('dir'))).toEqual(['inside'])
        expect(await raw.call<string>((cb) => raw.sftp.readlink(at('link'), cb))).toBe(`${outside}/secret.txt`)
        expect(await raw.names(outside)).toEqual(['secret.txt'])
        expect((await raw.read(`${outside}/secret.txt`)).toString()).toBe('secret\n')
        expect((await raw.read(at('busy'))).toString()).toContain(' 1 ')
        // The edits that got through, and only those; the entries taken over are gone.
        for (const n of names) {
          const text = (await raw.read(`${root}/${n}.txt`)).toString()
          expect(text, n).toBe(n === 'garbage' || n === 'empty' ? `START\n${n}\nEND\n` : 'START\nEND\n')
        }
        expect(existsSync(at('garbage'))).toBe(false)
        expect(existsSync(at('empty'))).toBe(false)
      } finally {
        await Promise.all([patient.close(), hasty.close()])
      }
    },
  )
})
