/**
 * What an overlay costs a call (issue 36): the same jobs on the bare store and through an
 * `OverlayFileSystem` over it (changes kept in memory), same run. The overlay holds 50 changed
 * files besides the measured ones, as after an agent's session, so that every lookup has entries
 * to check.
 *
 * Jobs, each a batch of calls on 50 files of 4 KiB: `readText` of a file the overlay did not change
 * (read through to the store), `readText` of one it changed (its own copy), `editText` of one line
 * (the first edit of a file copies it into the overlay: measured after a warm-up batch made that
 * copy), `stat`, and `listDir` of the directory of the 50 files.
 *
 * Method: one untimed warm-up batch per side, then the sides alternate, `reps` batches each (5,
 * `--quick` 3); the table shows the median per call (µs) and the ratio to the bare store.
 *
 * Usage: node bench/dist/overlay.js [--quick] [--json FILE]
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import type { FileSystem, FsTarget } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { OverlayFileSystem } from '@seamfs/tools'
import { environment, machineLine, markdownTable } from './report.js'

const { values: args } = parseArgs({ options: { quick: { type: 'boolean', default: false }, json: { type: 'string' } } })
const REPS = args.quick ? 3 : 5
const ROUNDS = args.quick ? 4 : 20
const LINE = 'the quick brown fox jumps over the lazy dog 0123456789 abcdefghijklmnopqrstuvwxyz\n'
const TEXT = LINE.repeat(Math.ceil(4096 / LINE.length))
const FILES = 50

interface Job {
  readonly name: string
  /** Which files: the ones the overlay did not change, or the ones it did. */
  readonly files: 'untouched' | 'changed'
  readonly run: (fs: FileSystem, targets: readonly FsTarget[], round: number) => Promise<unknown>
}

const JOBS: readonly Job[] = [
  { name: 'readText 4 KiB, unchanged', files: 'untouched', run: (fs, targets) => Promise.all(targets.map((t) => fs.readText(t))) },
  { name: 'readText 4 KiB, changed', files: 'changed', run: (fs, targets) => Promise.all(targets.map((t) => fs.readText(t))) },
  { name: 'stat', files: 'untouched', run: (fs, targets) => Promise.all(targets.map((t) => fs.stat(t))) },
  {
    name: 'editText one line',
    files: 'changed',
    run: (fs, targets, round) => Promise.all(targets.map((t) => fs.editText(t, { oldString: `${round}\n`, newString: `${round + 1}\n`, replaceAll: false }))),
  },
  {
    name: 'listDir (100 entries)',
    files: 'untouched',
    run: async (fs, targets) => fs.listDir(await fs.resolve(targets[0]!.displayPath.replace(/\/[^/]*$/, ''))),
  },
]

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN

async function measure(store: string, base: FileSystem): Promise<string[][]> {
  const rows: string[][] = []
  for (const job of JOBS) {
    const targets = {
      untouched: await Promise.all(Array.from({ length: FILES }, (_, i) => base.resolve(`d/u${i}.txt`))),
      changed: await Promise.all(Array.from({ length: FILES }, (_, i) => base.resolve(`d/c${i}.txt`))),
    }
    for (const t of [...targets.untouched, ...targets.changed]) await base.writeText(t, `0\n${TEXT}`)
    // A fresh overlay per job, holding 50 changes of its own elsewhere and a copy of each "changed" file.
    const overlay = await OverlayFileSystem.open(base)
    for (let i = 0; i < FILES; i++) await overlay.writeText(await overlay.resolve(`other/o${i}.txt`), TEXT)
    for (const t of targets.changed) await overlay.editText(t, { oldString: '0\n', newString: '0\n', replaceAll: false })
    const sides: Record<'bare' | 'overlay', FileSystem> = { bare: base, overlay }
    const times: Record<'bare' | 'overlay', number[]> = { bare: [], overlay: [] }
    const rounds: Record<'bare' | 'overlay', number> = { bare: 0, overlay: 0 }
    const batch = async (side: 'bare' | 'overlay'): Promise<number> => {
      const started = performance.now()
      for (let i = 0; i < ROUNDS; i++) await job.run(sides[side], targets[job.files], rounds[side]++)
      return ((performance.now() - started) * 1000) / (ROUNDS * (job.name.startsWith('listDir') ? 1 : FILES))
    }
    // The two sides edit their own copies: each counts its own rounds.
    if (job.name.startsWith('editText')) {
      for (const t of targets.changed) await base.writeText(t, `0\n${TEXT}`)
      for (const t of targets.changed) await overlay.writeText(t, `0\n${TEXT}`)
    }
    for (const side of ['bare', 'overlay'] as const) await batch(side)
    for (let r = 0; r < REPS; r++) for (const side of ['bare', 'overlay'] as const) times[side].push(await batch(side))
    const bare = median(times.bare)
    rows.push([
      store,
      job.name,
      ...(['bare', 'overlay'] as const).map((side) => `${median(times[side]).toFixed(1)} µs (×${(median(times[side]) / bare).toFixed(2)})`),
    ])
  }
  return rows
}

async function main(): Promise<void> {
  const tmp = await mkdtemp(join(fileURLToPath(new URL('../../', import.meta.url)), '.bench-tmp-overlay-'))
  try {
    const rows = [...(await measure('memory', new MemoryFileSystem({ cwd: '/b' }))), ...(await measure('local', new LocalFileSystem({ cwd: tmp })))]
    const env = environment({ rounds: ROUNDS, files: FILES, reps: REPS })
    console.log(`# Overlay: cost per call against the bare store\n\n${machineLine(env)}\n`)
    console.log(markdownTable(['store', 'job', 'bare store', 'overlay'], rows))
    if (args.json !== undefined) {
      const { writeFileSync } = await import('node:fs')
      writeFileSync(args.json, JSON.stringify({ env, rows }, null, 2))
    }
  } finally {
    await rm(tmp, { recursive: true, force: true })
  }
}

await main()
