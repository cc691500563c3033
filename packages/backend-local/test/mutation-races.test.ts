/**
 * remove, rename and createDirectory under races: guarded mutators in one process (across
 * instances), a destination created by another process (rename's `link(2)` never replaces it),
 * and a process swapping a workspace directory for a link to outside while the agent removes,
 * moves and makes directories through the sandbox. Every loop is bounded in count and time.
 */
import { spawn } from 'node:child_process'
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import { isFsError, SandboxedFileSystem, type FsErrorCode } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { DESCRIPTOR_PATHS } from '../src/anchor.js'
import type { LocalHooks } from '../src/options.js'

let root: string
let fs: LocalFileSystem
let other: LocalFileSystem

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-mutation-races-')))
  fs = new LocalFileSystem({ cwd: root })
  other = new LocalFileSystem({ cwd: root })
})

afterEach(async () => {
  await fs.close()
  await other.close()
  rmSync(root, { recursive: true, force: true })
})

async function codeOf(promise: Promise<unknown>): Promise<FsErrorCode | 'ok'> {
  try {
    await promise
    return 'ok'
  } catch (err) {
    if (!isFsError(err)) throw new Error(`not an FsError: ${String(err)}`, { cause: err })
    return err.code
  }
}

/** Runs `script` in a child node process with `args`; resolves to its exit code and output. */
function run(script: string, args: string[]): { done: Promise<{ code: number | null; out: string; err: string }> } {
  const child = spawn(process.execPath, ['-e', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (c: Buffer) => (out += c.toString()))
  child.stderr.on('data', (c: Buffer) => (err += c.toString()))
  return { done: new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err }))) }
}

const N = 12

describe('guarded mutators in one process (two instances share the locks)', () => {
  it('of N guarded removers of one version, exactly one wins; the others are FS_STALE_VERSION', async () => {
    for (let round = 0; round < 10; round++) {
      const { version } = await fs.writeText(await fs.resolve('r.txt'), `round ${round}`)
      const codes = await Promise.all(
        Array.from({ length: N }, async (_, i) => {
          const side = i % 2 === 0 ? fs : other
          return codeOf(side.remove(await side.resolve('r.txt'), { expected: { version } }))
        }),
      )
      expect(
        codes.filter((c) => c === 'ok'),
        codes.join(),
      ).toHaveLength(1)
      expect(
        codes.filter((c) => c !== 'ok' && c !== 'FS_STALE_VERSION'),
        codes.join(),
      ).toEqual([])
      expect(existsSync(join(root, 'r.txt'))).toBe(false)
    }
  })

  it('of N guarded renamers of one version to different names, exactly one wins; the file is under one name', async () => {
    for (let round = 0; round < 10; round++) {
      const { version } = await fs.writeText(await fs.resolve('src.txt'), `round ${round}`)
      const codes = await Promise.all(
        Array.from({ length: N }, async (_, i) => {
          const side = i % 2 === 0 ? fs : other
          return codeOf(side.rename(await side.resolve('src.txt'), await side.resolve(`out/${round}/dst${i}.txt`), { expected: { version } }))
        }),
      )
      const winner = codes.indexOf('ok')
      expect(
        codes.filter((c) => c === 'ok'),
        codes.join(),
      ).toHaveLength(1)
      expect(
        codes.filter((c) => c !== 'ok' && c !== 'FS_STALE_VERSION'),
        codes.join(),
      ).toEqual([])
      expect(readdirSync(join(root, `out/${round}`))).toEqual([`dst${winner}.txt`])
      expect(existsSync(join(root, 'src.txt'))).toBe(false)
    }
  })

  it('a guarded remove and a guarded rename of one version: exactly one wins', async () => {
    for (let round = 0; round < 20; round++) {
      const { version } = await fs.writeText(await fs.resolve('f.txt'), `round ${round}`)
      const [removed, moved] = await Promise.all([
        codeOf(fs.remove(await fs.resolve('f.txt'), { expected: { version } })),
        codeOf(other.rename(await other.resolve('f.txt'), await other.resolve('g.txt'), { expected: { version } })),
      ])
      expect(
        [removed, moved].filter((c) => c === 'ok'),
        `${removed} ${moved}`,
      ).toHaveLength(1)
      expect(existsSync(join(root, 'f.txt'))).toBe(false)
      expect(existsSync(join(root, 'g.txt'))).toBe(moved === 'ok')
      rmSync(join(root, 'g.txt'), { force: true })
    }
  })

  it('renames in opposite directions between two names never deadlock; one name is left', { timeout: 10_000 }, async () => {
    for (let round = 0; round < 50; round++) {
      writeFileSync(join(root, 'a.txt'), 'A')
      writeFileSync(join(root, 'b.txt'), 'B')
      const [a, b] = [await fs.resolve('a.txt'), await fs.resolve('b.txt')]
      const codes = await Promise.all([codeOf(fs.rename(a, b, { overwrite: true })), codeOf(other.rename(b, a, { overwrite: true }))])
      expect(
        codes.filter((c) => c !== 'ok' && c !== 'FS_NOT_FOUND'),
        codes.join(),
      ).toEqual([])
      expect(readdirSync(root)).toHaveLength(1)
      rmSync(join(root, 'a.txt'), { force: true })
      rmSync(join(root, 'b.txt'), { force: true })
    }
  })
})

/**
 * Creates `to` exclusively (`wx`) again and again for `ms`, holds it about a millisecond, then
 * checks it still holds what it wrote before unlinking it. Prints `{ created, losses }`.
 */
const CREATOR = `
const { writeFileSync, readFileSync, unlinkSync } = require('node:fs')
const [to, ms] = [process.argv[1], Number(process.argv[2])]
let created = 0, losses = 0, i = 0
const end = Date.now() + ms
while (Date.now() < end) {
  const mine = 'theirs ' + ++i
  try {
    writeFileSync(to, mine, { flag: 'wx' })
  } catch (err) {
    if (err.code !== 'EEXIST') throw err
    continue
  }
  created++
  const spin = Date.now() + 1
  while (Date.now() < spin) {}
  let now
  try { now = readFileSync(to, 'utf8') } catch { now = '(gone)' }
  if (now === mine) unlinkSync(to)
  else losses++
}
process.stdout.write(JSON.stringify({ created, losses }))
`

describe('rename without overwrite against another process creating the destination', () => {
  it('never replaces the other process’s file: each rename either lands whole or is FS_NOT_OBSERVED with the source intact', { timeout: 30_000 }, async () => {
    const to = join(root, 'to.txt')
    const creator = run(CREATOR, [to, '2000'])
    let running = true
    void creator.done.then(() => (running = false))
    const counts = { moved: 0, refused: 0 }
    const problems: string[] = []
    for (let i = 0; running && i < 100_000; i++) {
      const src = join(root, 'src.txt')
      writeFileSync(src, `ours ${i}`)
      const code = await codeOf(fs.rename(await fs.resolve('src.txt'), await fs.resolve('to.txt')))
      if (code === 'ok') {
        counts.moved++
        // Nobody else can create `to` while it is there: it is ours until removed.
        if (readFileSync(to, 'utf8') !== `ours ${i}`) problems.push(`${i}: to does not hold the moved file`)
        if (existsSync(src)) problems.push(`${i}: the source is still there`)
        rmSync(to)
      } else if (code === 'FS_NOT_OBSERVED') {
        counts.refused++
        if (readFileSync(src, 'utf8') !== `ours ${i}`) problems.push(`${i}: a refused rename changed the source`)
      } else {
        problems.push(`${i}: ${code}`)
      }
    }
    const { code, out, err } = await creator.done
    expect(code, err).toBe(0)
    const theirs = JSON.parse(out) as { created: number; losses: number }
    console.log(`rename vs creator: ${counts.moved} moved, ${counts.refused} refused; the creator made ${theirs.created}, lost ${theirs.losses}`)
    expect(problems).toEqual([])
    expect(theirs.losses, 'a file of the other process was replaced').toBe(0)
    expect(theirs.created).toBeGreaterThan(0)
    expect(counts.moved).toBeGreaterThan(0)
    expect(counts.refused).toBeGreaterThan(0)
  })
})

const SWAP_MS = 3000

/**
 * Swaps `<ws>/sub` with a link to `<outside>` until `ms` have passed (as in swap-race.test.ts); prints the swap
 * count. A `sub` the agent made in the moment it was missing is moved aside (again, if it is made again).
 */
const SWAPPER = `
const { existsSync, renameSync, symlinkSync, rmSync, writeFileSync } = require('node:fs')
const [ws, outside, ms] = [process.argv[1], process.argv[2], Number(process.argv[3])]
const names = ['victim.txt', 'from.txt']
const link = ws + '/.swap-link', real = ws + '/.swap-real', sub = ws + '/sub'
let aside = 0
const move = (from, to) => {
  for (let tries = 0; ; tries++) {
    try {
      return renameSync(from, to)
    } catch (err) {
      if (tries > 100 || !['EISDIR', 'ENOTEMPTY', 'EEXIST', 'ENOTDIR'].includes(err.code)) throw err
      try {
        renameSync(to, ws + '/.aside-' + ++aside)
      } catch (again) {
        if (again.code !== 'ENOENT') throw again
      }
    }
  }
}
rmSync(link, { force: true })
symlinkSync(outside, link)
let swaps = 0
const end = Date.now() + ms
while (Date.now() < end) {
  try {
    move(sub, real)
    // The names the agent removes and moves, kept present inside so nearly every attempt has something to act on.
    for (const name of names) if (!existsSync(real + '/' + name)) writeFileSync(real + '/' + name, 'inside')
    move(link, sub)
    move(sub, link)
    move(real, sub)
    swaps++
  } catch (err) {
    process.stderr.write(String(err) + '\\n')
    process.exit(3)
  }
}
process.stdout.write(String(swaps))
`

/** Every path under `dir` with its content ('' for directories). */
function tree(dir: string, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) Object.assign(out, { [`${prefix}${name}/`]: '' }, tree(path, `${prefix}${name}/`))
    else out[`${prefix}${name}`] = readFileSync(path, 'utf8')
  }
  return out
}

// On tmpfs where there is one: fsync costs nothing there, so the agent gets many more operations into the race.
const base = realpathSync(mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'seamfs-mutation-swap-')))
afterAll(() => rmSync(base, { recursive: true, force: true }))

describe.skipIf(!DESCRIPTOR_PATHS)(
  `remove, rename and createDirectory against a directory-swapping process${DESCRIPTOR_PATHS ? '' : ' — SKIPPED: needs descriptor paths (/proc/self/fd, Linux)'}`,
  () => {
    it('for 3 s of swaps, nothing outside is removed, moved, replaced or made', { timeout: 60_000 }, async () => {
      const ws = join(base, 'ws')
      const outside = join(base, 'outside')
      mkdirSync(join(ws, 'sub'), { recursive: true })
      // The names the agent removes and moves inside exist outside too: a remove or a move carried outside would take them.
      for (const path of ['victim.txt', 'from.txt', 'onto.txt', 'tree/deep/keep.txt', 'dir/keep.txt']) {
        mkdirSync(join(outside, path, '..'), { recursive: true })
        writeFileSync(join(outside, path), `OUTSIDE ${path}\n`)
      }
      const outsideBefore = tree(outside)
      const sandboxed = new SandboxedFileSystem(new LocalFileSystem({ cwd: ws }), { mode: 'workspace-write', workspaceRoot: ws })
      const swapper = run(SWAPPER, [ws, outside, String(SWAP_MS)])
      let running = true
      void swapper.done.then(() => (running = false))
      const counts = { attempted: 0, succeeded: 0 }
      const attempt = async (op: () => Promise<unknown>): Promise<void> => {
        counts.attempted++
        if ((await codeOf(op())) === 'ok') counts.succeeded++
      }
      const at = (path: string) => sandboxed.resolve(path)
      await new Promise((resolve) => setTimeout(resolve, 100))
      for (let i = 0; running && i < 100_000; i++) {
        await attempt(async () => sandboxed.remove(await at('sub/victim.txt')))
        await attempt(async () => sandboxed.remove(await at('sub/victim.txt'), { recursive: true }))
        await attempt(async () => sandboxed.writeText(await at('sub/tree/deep/keep.txt'), `agent ${i}\n`))
        await attempt(async () => sandboxed.remove(await at('sub/tree'), { recursive: true }))
        await attempt(async () => sandboxed.rename(await at('sub/from.txt'), await at('sub/onto.txt'), { overwrite: true }))
        await attempt(async () => sandboxed.rename(await at('sub/onto.txt'), await at(`sub/moved/${i}.txt`)))
        await attempt(async () => sandboxed.createDirectory(await at(`sub/made-${i}/deeper`)))
        await attempt(async () => sandboxed.rename(await at(`sub/made-${i}`), await at('sub/dir')))
        await attempt(async () => sandboxed.remove(await at('sub/dir'), { recursive: true }))
      }
      const { code, out, err } = await swapper.done
      expect(code, err).toBe(0)
      await sandboxed.close()
      console.log(`mutation swap race: ${out} swaps in ${SWAP_MS} ms; ${counts.attempted} operations attempted, ${counts.succeeded} succeeded`)
      expect(Number(out)).toBeGreaterThanOrEqual(SWAP_MS)
      expect(counts.attempted).toBeGreaterThan(100)
      expect(counts.succeeded).toBeGreaterThan(0)
      expect(tree(outside), 'nothing removed, moved, replaced or made outside').toEqual(outsideBefore)
    })
  },
)

/**
 * The same swap, made deterministic: the `beforeMutate` hook swaps `<ws>/sub` for a link to
 * `<outside>` right after the operation checked its entry and before it unlinks, removes or moves.
 * Bound to the directories it verified, the operation finishes in the real directory (now at
 * `<ws>/.real`); nothing outside changes.
 */
describe.skipIf(!DESCRIPTOR_PATHS)('a directory swapped for a link between the check and the mutation', () => {
  const NAMES = ['victim.txt', 'from.txt', 'onto.txt', 'empty/', 'tree/deep/keep.txt']

  function arena(swap: (ws: string, outside: string) => void = swapSub): {
    fs: SandboxedFileSystem
    ws: string
    outside: string
    before: Record<string, string>
  } {
    const dir = mkdtempSync(join(base, 'arena-'))
    const [ws, outside] = [join(dir, 'ws'), join(dir, 'outside')]
    for (const top of [join(ws, 'sub'), outside]) {
      for (const name of NAMES) {
        mkdirSync(join(top, name.endsWith('/') ? name : join(name, '..')), { recursive: true })
        if (!name.endsWith('/')) writeFileSync(join(top, name), top === outside ? `OUTSIDE ${name}` : `inside ${name}`)
      }
    }
    let swapped = false
    const hooks: LocalHooks = {
      beforeMutate: () => {
        if (swapped) return
        swapped = true
        swap(ws, outside)
      },
    }
    const fs = new SandboxedFileSystem(new LocalFileSystem({ cwd: ws, hooks }), { mode: 'workspace-write', workspaceRoot: ws })
    return { fs, ws, outside, before: tree(outside) }
  }

  function swapSub(ws: string, outside: string): void {
    renameSync(join(ws, 'sub'), join(ws, '.real'))
    symlinkSync(outside, join(ws, 'sub'))
  }

  it('remove of a file, of an empty directory and of a tree: done in the verified directory, never outside', async () => {
    for (const [path, recursive] of [
      ['sub/victim.txt', false],
      ['sub/empty', false],
      ['sub/tree', true],
    ] as const) {
      const { fs, ws, outside, before } = arena()
      expect(await codeOf(fs.remove(await fs.resolve(path), { recursive })), path).toBe('ok')
      expect(tree(outside), path).toEqual(before)
      expect(existsSync(join(ws, '.real', path.slice('sub/'.length))), path).toBe(false)
    }
  })

  it('a recursive remove whose nested directory is swapped for a link unlinks the link and never enters it', async () => {
    const { fs, ws, outside, before } = arena((ws, outside) => {
      renameSync(join(ws, 'sub/tree/deep'), join(ws, '.deep'))
      symlinkSync(join(outside, 'tree/deep'), join(ws, 'sub/tree/deep'))
    })
    expect(await codeOf(fs.remove(await fs.resolve('sub/tree'), { recursive: true }))).toBe('ok')
    expect(tree(outside)).toEqual(before)
    expect(existsSync(join(ws, 'sub/tree'))).toBe(false)
  })

  it('rename with and without overwrite, and into new directories: done in the verified directories, never outside', async () => {
    for (const [to, overwrite] of [
      ['sub/onto.txt', true],
      ['sub/new.txt', false],
      ['sub/new/deeper/x.txt', false],
    ] as const) {
      const { fs, ws, outside, before } = arena()
      expect(await codeOf(fs.rename(await fs.resolve('sub/from.txt'), await fs.resolve(to), { overwrite })), to).toBe('ok')
      expect(tree(outside), to).toEqual(before)
      expect(readFileSync(join(ws, '.real', to.slice('sub/'.length)), 'utf8'), to).toBe('inside from.txt')
      expect(lstatSync(join(ws, 'sub')).isSymbolicLink()).toBe(true)
    }
  })
})
