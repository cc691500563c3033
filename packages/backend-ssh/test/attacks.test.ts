/**
 * Attacks on remove / rename over SFTP (real OpenSSH sshd): names a crashed client
 * left behind, a connection cut in the middle of a recursive remove (a TCP proxy on 127.0.0.1),
 * and a server-side process swapping a directory for a link out of the root while a recursive
 * remove takes the tree down (one bounded `renameat2(RENAME_EXCHANGE)` loop per round), and
 * concurrent recursive removers in separate processes.
 */
import { spawn } from 'node:child_process'
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { arch } from 'node:process'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it, vi } from 'vitest'
import { codeOf } from '@seamfs/conformance'
import { isFsError } from '@seamfs/core/backend'
import { SftpFileSystem } from '@seamfs/backend-ssh'
import { titled } from './helpers.js'
import { CuttingProxy } from './proxy.js'
import { suiteScratch, type RawSftp } from './raw.js'

const server = inject('sftp')
/** A name of the kind a crashed writer's or remover's stage has (`.seamfs-tmp-<16 hex>`). */
const LEFT_BEHIND = '.seamfs-tmp-0123456789abcdef'
const STAGE = /^\.seamfs-tmp-[0-9a-f]{16}$/

describe.skipIf(server === null)(titled('SftpFileSystem under attack: remove and rename', server, inject('sftpWhy')), () => {
  let raw: RawSftp
  let base: string
  let root: string
  let fs: SftpFileSystem

  suiteScratch(server, 'attacks-', (scratch) => {
    raw = scratch.raw
    base = scratch.base
  })
  beforeEach(async () => {
    if (server === null) return
    root = await raw.freshDir(base, 'root-')
    fs = new SftpFileSystem({ ...server, root })
    return async () => fs.close()
  })

  const names = async (path: string): Promise<string[]> => (await fs.listDir(await fs.resolve(path))).map((e) => e.name)

  /** Sets the mtime of `path` `seconds` in the past (by the server's clock, as near as the test's). */
  const age = async (path: string, seconds: number): Promise<void> => {
    const then = Math.floor(Date.now() / 1000) - seconds
    await raw.call((cb) => raw.sftp.utimes(path, then, then, cb))
  }

  it('a stage a crashed client left behind (listings hide it): a recursive remove clears it, and so does a plain remove of its directory', async () => {
    await raw.writeInPlace(`${root}/t/f.txt`, Buffer.from('f'))
    // A crashed writer's stage (with its temp file) and a crashed remover's (empty), both long abandoned.
    await raw.writeInPlace(`${root}/t/${LEFT_BEHIND}/${LEFT_BEHIND}`, Buffer.from('partial'))
    await raw.mkdirp(`${root}/e/${LEFT_BEHIND}`)
    for (const stage of [`${root}/t/${LEFT_BEHIND}`, `${root}/e/${LEFT_BEHIND}`]) await age(stage, 3600)
    expect(await names('t')).toEqual(['f.txt'])
    expect(await names('e'), 'the directory looks empty').toEqual([])
    expect(await fs.remove(await fs.resolve('t'), { recursive: true })).toMatchObject({ type: 'directory' })
    // Abandoned (an hour old, of an older version: no owner in its name): what listDir hid never blocks the delete.
    expect(await fs.remove(await fs.resolve('e'))).toMatchObject({ type: 'directory' })
    expect(await raw.names(root)).toEqual([])
  })

  it('rename never moves onto a directory or into its own subtree; a link to outside at `to` is never followed', async () => {
    const outside = await raw.freshDir(base, 'outside-')
    await raw.writeInPlace(`${outside}/keep.txt`, Buffer.from('outside'))
    await raw.writeInPlace(`${root}/a.txt`, Buffer.from('a'))
    await raw.writeInPlace(`${root}/d/x.txt`, Buffer.from('x'))
    await raw.symlink(`${root}/d/out`, outside)
    const [a, d] = [await fs.resolve('a.txt'), await fs.resolve('d')]
    expect(await codeOf(fs.rename(a, d))).toBe('FS_NOT_OBSERVED')
    expect(await codeOf(fs.rename(a, d, { overwrite: true }))).toBe('FS_NOT_REGULAR_FILE')
    expect(await codeOf(fs.rename(d, await fs.resolve('d/sub')))).toBe('FS_UNSUPPORTED')
    // `d/out/keep.txt` resolves through the link to outside the root: refused before anything moves.
    expect(await codeOf(fs.resolve('d/out/keep.txt').then(async (to) => fs.rename(a, to, { overwrite: true })))).toBe('FS_SANDBOX_DENIED')
    expect(await codeOf(fs.resolve('d/out').then(async (link) => fs.remove(link, { recursive: true })))).toBe('FS_SANDBOX_DENIED')
    // The link inside a tree is an entry of it: unlinked, never followed.
    expect(await fs.remove(d, { recursive: true })).toEqual({ type: 'directory', entries: 3 })
    expect(await raw.names(outside)).toEqual(['keep.txt'])
    expect((await raw.read(`${outside}/keep.txt`)).toString()).toBe('outside')
    expect((await raw.read(`${root}/a.txt`)).toString()).toBe('a')
  })

  /** `SftpFileSystem` as another process has it: a fresh copy of the package, with its own process-wide locks. */
  async function otherProcess(): Promise<typeof SftpFileSystem> {
    const registry = globalThis as unknown as Record<symbol, unknown>
    const key = Symbol.for('@seamfs/backend-ssh:locks')
    const mine = registry[key]
    delete registry[key]
    vi.resetModules()
    try {
      const copy = await import('@seamfs/backend-ssh')
      expect(copy.SftpFileSystem).not.toBe(SftpFileSystem)
      return copy.SftpFileSystem
    } finally {
      registry[key] = mine
    }
  }

  it('a live stage of another client (a write in progress) is never removed: a recursive remove waits briefly, then says FS_NOT_EMPTY', async () => {
    await raw.writeInPlace(`${root}/t/f.txt`, Buffer.from('f'))
    await raw.writeInPlace(`${root}/t/${LEFT_BEHIND}/${LEFT_BEHIND}`, Buffer.from('in progress'))
    const failed = await fs.remove(await fs.resolve('t'), { recursive: true }).catch((err: unknown) => err)
    expect(isFsError(failed, 'FS_NOT_EMPTY') && failed.retryable).toBe(true)
    expect(await raw.names(`${root}/t`)).toEqual([LEFT_BEHIND])
    expect((await raw.read(`${root}/t/${LEFT_BEHIND}/${LEFT_BEHIND}`)).toString()).toBe('in progress')
    // The write publishes (its stage goes): the remove now finishes the job.
    await raw.unlink(`${root}/t/${LEFT_BEHIND}/${LEFT_BEHIND}`)
    await raw.call((cb) => raw.sftp.rmdir(`${root}/t/${LEFT_BEHIND}`, cb))
    expect(await codeOf(fs.remove(await fs.resolve('t'), { recursive: true }))).toBe('ok')
    expect(await raw.names(root)).toEqual([])
  })

  it('4 processes (separate locks) remove one tree recursively at once: each round exactly one succeeds, the others find it gone (FS_NOT_FOUND, or a retryable error)', async () => {
    const REMOVERS = 4
    const ROUNDS = 5
    const classes: (typeof SftpFileSystem)[] = []
    for (let i = 0; i < REMOVERS; i++) classes.push(await otherProcess())
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < 3; i++) for (let j = 0; j < 20; j++) await raw.writeInPlace(`${root}/t/d${i}/f${j}.txt`, Buffer.from('x'))
      const systems = classes.map((Fs) => new Fs({ ...server!, root }))
      try {
        const targets = await Promise.all(systems.map((s) => s.resolve('t')))
        const errors = await Promise.all(
          systems.map((s, i) =>
            s.remove(targets[i]!, { recursive: true }).then(
              () => 'ok',
              (err: unknown) => err,
            ),
          ),
        )
        const codes = errors.map((e) => (e === 'ok' ? 'ok' : isFsError(e) ? e.code : String(e)))
        // A loser finds the tree gone; one whose survey kept changing under it may also give up, retryably.
        const odd = errors.find((e) => e !== 'ok' && !isFsError(e, 'FS_NOT_FOUND') && !(isFsError(e) && e.retryable))
        const shown = `${[...codes].sort().join(' ')}${odd === undefined ? '' : ` (${isFsError(odd) ? odd.message : JSON.stringify(odd)})`}`
        expect(
          codes.filter((c) => c === 'ok'),
          `round ${round}: ${shown}`,
        ).toHaveLength(1)
        expect(odd, `round ${round}: ${shown}`).toBeUndefined()
        // Each system's next operation sweeps what it left: nothing stays behind.
        await Promise.all(systems.map(async (s) => s.stat(await s.resolve('.'))))
        expect(await raw.names(root), `round ${round}: nothing is left behind`).toEqual([])
      } finally {
        await Promise.all(systems.map((s) => s.close()))
      }
    }
  })

  it('hostile names: a recursive remove and a rename handle every one, and count them', async () => {
    const hostile = ['🐂🍺中文.docx', "a  b !@#$%^&()_+-=;',.txt", 'x<\\y', 'new\nline', '..dots', ' lead', '-rf', '.seamfs-tmp-not-hex']
    for (const name of hostile) await raw.writeInPlace(`${root}/h/sub/${name}`, Buffer.from(name))
    for (const name of hostile) {
      const moved = await fs.rename(await fs.resolve(`h/sub/${name}`), await fs.resolve(`h/${name}`))
      expect(moved.type).toBe('file')
    }
    expect((await names('h')).sort()).toEqual([...hostile, 'sub'].sort())
    expect(await fs.remove(await fs.resolve('h'), { recursive: true })).toEqual({ type: 'directory', entries: hostile.length + 2 })
    expect(await raw.names(root)).toEqual([])
  })

  describe('a connection cut in the middle of a recursive remove', () => {
    let proxy: CuttingProxy
    let cut: SftpFileSystem

    beforeAll(async () => {
      if (server === null) return
      proxy = await CuttingProxy.start(server.port)
    })
    afterAll(async () => {
      await proxy?.close()
    })

    it('fails retryable, listings never show its stages, and the retry over a new connection finishes the job', async () => {
      cut = new SftpFileSystem({ ...server!, port: proxy.port, root })
      try {
        for (let i = 0; i < 4; i++) for (let j = 0; j < 60; j++) await raw.writeInPlace(`${root}/t/d${i}/f${j}.txt`, Buffer.from('x'))
        const t = await cut.resolve('t')
        await cut.stat(t)
        const connections = proxy.connections
        proxy.cutAfter('up', 9_000)
        const first = await cut.remove(t, { recursive: true }).then(
          () => 'ok',
          (err: unknown) => err,
        )
        expect(proxy.connections, 'the cut came mid-remove').toBe(connections)
        expect(isFsError(first, 'FS_IO_ERROR') && first.retryable).toBe(true)
        // Whatever is left: no listing shows a stage.
        const left = await raw.names(`${root}/t`).catch(() => [] as string[])
        for (const name of left.filter((n) => !STAGE.test(n))) expect((await names(`t/${name}`)).every((n) => !STAGE.test(n))).toBe(true)
        expect((await names('t')).every((n) => !STAGE.test(n))).toBe(true)
        const again = await codeOf(cut.remove(await cut.resolve('t'), { recursive: true }))
        await cut.stat(await cut.resolve('.'))
        expect({ again, onDisk: await raw.names(root) }).toEqual({ again: 'ok', onDisk: [] })
      } finally {
        await cut.close()
      }
    })
  })
})

/** renameat2 by architecture; elsewhere the swap test skips. */
const RENAMEAT2: Readonly<Record<string, number>> = { x64: 316, arm64: 276 }
/** A bounded swapper: exchanges `dir` and `link` until `ms` pass, then at most 1,000 tries to put the directory back. */
const SWAPPER = String.raw`
use strict; use warnings; use Time::HiRes qw(time usleep);
my ($dir, $link, $ms, $hold, $nr) = @ARGV;
my $end = time + $ms / 1000; my $swaps = 0;
while (time < $end) { $swaps++ if syscall($nr, -100, $dir, -100, $link, 2) == 0; usleep($hold) if $hold > 0; }
for (my $i = 0; $i < 1000 && $swaps % 2; $i++) { $swaps++ if syscall($nr, -100, $dir, -100, $link, 2) == 0; }
print "$swaps\n";
`

function swap(dir: string, link: string, ms: number, uid: number, gid: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/perl', ['-e', SWAPPER, dir, link, String(ms), '50', String(RENAMEAT2[arch])], { uid, gid, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve(Number(out.trim())) : reject(new Error(`swapper exited with ${code}`))))
  })
}

describe.skipIf(server === null || RENAMEAT2[arch] === undefined || !existsSync('/usr/bin/perl'))(
  titled('a recursive remove under a server-side swapper', server, inject('sftpWhy')),
  () => {
    const ROUNDS = 6
    const FILES = 40
    const cleanups: (() => void)[] = []
    afterAll(() => cleanups.forEach((c) => c()))

    it(`${ROUNDS} rounds: a directory of the tree swapped for a link out of the root never costs an outside file`, { timeout: 60_000 }, async () => {
      const { uid, gid } = statSync(server!.root)
      const hostBase = mkdtempSync(join(server!.root, 'attack-swap-'))
      chownSync(hostBase, uid, gid)
      cleanups.push(() => rmSync(hostBase, { recursive: true, force: true }))
      const make = (path: string): void => {
        mkdirSync(path, { recursive: true })
        chownSync(path, uid, gid)
      }
      const outside = join(hostBase, 'outside')
      make(outside)
      for (let j = 0; j < FILES; j++) writeFileSync(join(outside, `f${j}.txt`), 'OUTSIDE')
      chownSync(outside, uid, gid)
      for (const f of readdirSync(outside)) chownSync(join(outside, f), uid, gid)
      const root = join(hostBase, 'root')
      make(root)
      const codes: Record<string, number> = {}
      let swaps = 0
      for (let round = 0; round < ROUNDS; round++) {
        const d = join(root, 't', 'd')
        make(d)
        for (let j = 0; j < FILES; j++) writeFileSync(join(d, `f${j}.txt`), 'INSIDE')
        // The link waits beside the tree (inside the root, outside `t`), so the remove never unlinks it while the swapper runs.
        const link = join(root, 'park')
        rmSync(link, { force: true, recursive: true })
        symlinkSync(outside, link)
        for (const p of [join(root, 't'), d, ...readdirSync(d).map((f) => join(d, f))]) chownSync(p, uid, gid)
        const fs = new SftpFileSystem({ ...server!, root })
        try {
          const t = await fs.resolve('t')
          const swapper = swap(d, link, 400, uid, gid)
          for (let attempt = 0; attempt < 8; attempt++) {
            const code = await codeOf(fs.remove(t, { recursive: true }))
            codes[code] = (codes[code] ?? 0) + 1
            if (code === 'ok') break
          }
          swaps += await swapper
        } finally {
          await fs.close()
        }
        const lost = Array.from({ length: FILES }, (_, j) => `f${j}.txt`).filter((f) => !existsSync(join(outside, f)))
        expect(lost, `round ${round}: outside files removed`).toEqual([])
        rmSync(join(root, 't'), { recursive: true, force: true })
      }
      console.log(`recursive remove under a swapper: ${swaps} swaps, outcomes ${JSON.stringify(codes)}`)
      expect(swaps).toBeGreaterThan(0)
    })
  },
)
