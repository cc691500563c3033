/**
 * The sandbox against a racing process, on the local disk: a child process swaps a directory of
 * the workspace with a symlink to a directory outside, many times a millisecond, for 5 s, while
 * the agent works through `SandboxedFileSystem(workspace-write)` (reads confined, the default) and
 * the tools: writes of new files, writes under new directories, edits with and without the
 * read-before-write policy, reads, listings and grep. Afterwards not one byte, file, directory or
 * staging file may have appeared outside, and no tool output may hold an outside byte.
 *
 * Holds on Linux (descriptor paths, see src/anchor.ts); elsewhere the suite is skipped with the reason.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ObservationPolicy, SandboxedFileSystem } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { createFileTools, type FileTool } from '@seamfs/tools'
import { DESCRIPTOR_PATHS } from '../src/anchor.js'

const SECRET = 'OUTSIDE SECRET'
const SWAP_MS = 5000

/**
 * Swaps `<ws>/sub` with a link to `<outside>` (atomic renames both ways) until `ms` have passed;
 * prints the swap count. A `sub` the agent's mkdir made in the moment it was missing is moved aside.
 */
const SWAPPER = `
const { renameSync, symlinkSync, rmSync } = require('node:fs')
const [ws, outside, ms] = [process.argv[1], process.argv[2], Number(process.argv[3])]
const link = ws + '/.swap-link', real = ws + '/.swap-real', sub = ws + '/sub'
let aside = 0
const IN_THE_WAY = ['EISDIR', 'ENOTEMPTY', 'EEXIST', 'ENOTDIR']
// The agent's mkdir may make 'sub' again between moving one aside and the rename: try again, a bounded number of times.
const move = (from, to) => {
  for (let tries = 0; ; tries++) {
    try {
      return renameSync(from, to)
    } catch (err) {
      if (tries >= 100 || !IN_THE_WAY.includes(err.code)) throw err
      try {
        renameSync(to, ws + '/.aside-' + ++aside)
      } catch (gone) {
        if (gone.code !== 'ENOENT') throw gone
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

const base = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-swap-')))
afterAll(() => rmSync(base, { recursive: true, force: true }))

describe.skipIf(!DESCRIPTOR_PATHS)(
  `the local sandbox against a directory-swapping process${DESCRIPTOR_PATHS ? '' : ' — SKIPPED: needs descriptor paths (/proc/self/fd, Linux)'}`,
  () => {
    it('writes, edits, reads, lists and grep for 5 s of swaps: nothing outside changes, nothing outside is returned', { timeout: 60_000 }, async () => {
      const ws = join(base, 'ws')
      const outside = join(base, 'outside')
      mkdirSync(join(ws, 'sub'), { recursive: true })
      mkdirSync(outside)
      writeFileSync(join(ws, 'sub/f.txt'), 'inside text\n')
      writeFileSync(join(outside, 'f.txt'), `${SECRET}\n`)
      const outsideBefore = tree(outside)

      const inner = new LocalFileSystem({ cwd: ws })
      const fs = new SandboxedFileSystem(inner, { mode: 'workspace-write', workspaceRoot: ws })
      const withPolicy = createFileTools({ fs, policy: new ObservationPolicy(), cwd: ws })
      const tool = (name: string): FileTool => withPolicy.find((t) => t.name === name) as FileTool

      const child = spawn(process.execPath, ['-e', SWAPPER, ws, outside, String(SWAP_MS)], { stdio: ['ignore', 'pipe', 'pipe'] })
      let swaps = ''
      let swapErr = ''
      child.stdout.on('data', (c: Buffer) => (swaps += c.toString()))
      child.stderr.on('data', (c: Buffer) => (swapErr += c.toString()))
      const done = new Promise<number | null>((resolve) => child.on('close', resolve))
      let running = true
      void done.then(() => (running = false))

      const counts = { attempted: 0, succeeded: 0 }
      const outputs: string[] = []
      const attempt = async (op: () => Promise<string>): Promise<void> => {
        counts.attempted++
        try {
          outputs.push(await op())
          counts.succeeded++
        } catch (err) {
          outputs.push(String(err))
        }
      }
      const text = (r: { text: string }): string => r.text
      let i = 0
      // Let the swapper start before counting on it.
      await new Promise((resolve) => setTimeout(resolve, 100))
      while (running) {
        i++
        await attempt(async () => JSON.stringify(await fs.writeText(await fs.resolve(`sub/new-${i}.txt`), `agent ${i}\n`)))
        await attempt(async () => JSON.stringify(await fs.writeText(await fs.resolve(`sub/d${i}/e/g.txt`), `deep ${i}\n`)))
        await attempt(async () => text(await tool('write').execute({ file_path: `sub/t${i}.txt`, content: `tool ${i}\n` })))
        await attempt(async () => {
          await tool('read').execute({ file_path: 'sub/f.txt' })
          return text(await tool('edit').execute({ file_path: 'sub/f.txt', old_string: 'text', new_string: 'text' }))
        })
        await attempt(async () =>
          JSON.stringify(await fs.editText(await fs.resolve('sub/f.txt'), { oldString: 'inside', newString: 'inside', replaceAll: false })),
        )
        await attempt(async () => text(await tool('read').execute({ file_path: 'sub/f.txt' })))
        await attempt(async () => await fs.readText(await fs.resolve('sub/f.txt')))
        await attempt(async () => JSON.stringify(await fs.listDir(await fs.resolve('sub'))))
        await attempt(async () => text(await tool('list').execute({ path: 'sub' })))
        await attempt(async () => text(await tool('grep').execute({ pattern: 'SECRET|inside', path: 'sub' })))
        await attempt(async () => {
          let all = ''
          for await (const chunk of await fs.streamText(await fs.resolve('sub/f.txt'))) all += chunk
          return all
        })
      }
      expect(await done, swapErr).toBe(0)
      await fs.close()
      console.log(`swap race: ${swaps} swaps in ${SWAP_MS} ms; ${counts.attempted} operations attempted, ${counts.succeeded} succeeded`)

      expect(Number(swaps)).toBeGreaterThanOrEqual(SWAP_MS) // at least one swap per millisecond
      expect(counts.attempted).toBeGreaterThan(100)
      expect(counts.succeeded).toBeGreaterThan(0)
      expect(tree(outside), 'nothing written, made or staged outside').toEqual(outsideBefore)
      expect(
        outputs.filter((o) => o.includes(SECRET)),
        'no outside byte returned',
      ).toEqual([])
    })
  },
)
