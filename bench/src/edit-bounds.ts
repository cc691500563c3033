/**
 * The bounded edit and diff against a naive baseline, same shapes, same run.
 *
 * Shapes (sizes of the full run; `--quick` shrinks the large files):
 *   grow      1 MiB of "ab", one replace_all of "a" by 2,048 "x": a 2 KB request whose result
 *             would be 1 GiB (refused: above the 256 MiB maxTextBytes)
 *   chain     1 KiB of "a", 40 replace_all edits of "a" by "aa": each doubles the text (refused)
 *   flood     8 MiB of "ab", 10 replace_all edits swapping "a" and "b": 4 million matches each (refused)
 *   million   8 MB, 100,000 "ab" pairs, 10 replace_all edits swapping them back and forth:
 *             a million replacements in all (accepted)
 *   scan      64 MiB of "a" (16 MiB with --quick) and 16 edits whose oldString is "a" and a
 *             marker, found at the end: the slowest native search there is (a short needle whose
 *             first byte is everywhere: about 5 ns a byte), 1 GiB of text searched in all, the
 *             most one call may (accepted)
 *   line32    a one-line edit of a 32 MiB file of 8-byte lines (4 million lines), and the diff
 *             the edit tool shows (accepted)
 *   floor     a one-match edit at the end of a 256 MiB file (128 MiB with --quick): the
 *             unavoidable pass over the file (accepted)
 *
 * Three sides, each on the same content:
 * - lib: `MemoryFileSystem#editText` (for line32 the edit tool's `execute`, diff included), default limits;
 * - old: the edit engine before the bounds, copied here: per edit, matches counted on the bytes,
 *   the result allocated and spliced, the size checked only after the last edit; for line32 the
 *   texts decoded and diffed as the tools did, both split whole into lines (equal head and tail
 *   lines trimmed, the middle shown);
 * - naive: strings: `String#replaceAll` for each edit (matches counted first with `indexOf`, the
 *   size checked after each edit against 256 MiB), then `Buffer.from`; line32's diff as old's;
 *   floor is `Buffer#indexOf` + `Buffer.concat`.
 *
 * Method: each (shape, side) runs in a fresh child (`--expose-gc`), after its setup and a GC:
 * the wall time of the call; the peak RSS growth (the kernel's high-water mark, VmHWM, reset
 * through /proc/self/clear_refs just before the call, minus the RSS then; Linux only); and the
 * longest the event loop was held (the longest gap between the ticks of a 1 ms timer): for the
 * old and naive sides, synchronous, that is the whole call. Sides alternate, medians of `reps`
 * children each.
 *
 * Usage: node bench/dist/edit-bounds.js [--quick] [--json FILE]
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { isFsError, type FsEditRequest } from '@seamfs/core'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileTools, type FileTool } from '@seamfs/tools'
import { environment, machineLine, markdownTable, runNodeChild } from './report.js'

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    json: { type: 'string' },
    child: { type: 'boolean', default: false },
    shape: { type: 'string' },
    side: { type: 'string' },
  },
})

const MiB = 1024 * 1024
const LIMIT = 256 * MiB
const quick = args.quick === true
const SHAPES = ['grow', 'chain', 'flood', 'million', 'scan', 'line32', 'floor'] as const
type Shape = (typeof SHAPES)[number]
type Side = 'lib' | 'old' | 'naive'
const SIDES: readonly Side[] = ['lib', 'old', 'naive']
/** A child that runs longer is stopped and reported as such (`> N s`). */
const CHILD_TIMEOUT_MS = (quick ? 20 : 60) * 1000
const REPS: Record<Shape, number> = { grow: 3, chain: 3, flood: quick ? 1 : 3, million: 3, scan: quick ? 1 : 3, line32: 3, floor: quick ? 1 : 3 }

/** What a child reports. */
interface Report {
  readonly shape: Shape
  readonly side: Side
  readonly ms: number
  /** Peak RSS growth during the call, bytes (`null` where /proc cannot be asked). */
  readonly peak: number | null
  /** The longest the event loop was held, ms. */
  readonly block: number
  /** `ok`, or the error code (or message) the call ended with. */
  readonly outcome: string
}

/** A job: its setup (untimed) returns the call to time. */
type Job = () => Promise<() => Promise<unknown>>

const swaps = (n: number, a: string, b: string): FsEditRequest[] =>
  Array.from({ length: n }, (_, i) => (i % 2 === 0 ? { oldString: a, newString: b, replaceAll: true } : { oldString: b, newString: a, replaceAll: true }))

/** The edits of each shape, and the file they apply to. */
function shapeOf(shape: Shape): { content: () => string; edits: FsEditRequest[] } {
  switch (shape) {
    case 'grow':
      return { content: () => 'ab'.repeat(MiB / 2), edits: [{ oldString: 'a', newString: 'x'.repeat(2048), replaceAll: true }] }
    case 'chain':
      return { content: () => 'a'.repeat(1024), edits: Array.from({ length: 40 }, () => ({ oldString: 'a', newString: 'aa', replaceAll: true })) }
    case 'flood':
      return { content: () => 'ab'.repeat(4 * MiB), edits: swaps(10, 'a', 'b') }
    case 'million':
      return { content: () => `ab${'x'.repeat(78)}`.repeat(100_000), edits: swaps(10, 'ab', 'ba') }
    case 'scan': {
      const markers = Array.from({ length: 16 }, (_, i) => String(i).padStart(2, '0'))
      const size = (quick ? 16 : 64) * MiB - 5 * markers.length
      return {
        content: () => `${'a'.repeat(size)}${markers.map((m) => `a<${m}>`).join('')}`,
        edits: markers.map((m) => ({ oldString: `a<${m}>`, newString: `a(${m})`, replaceAll: false })),
      }
    }
    case 'line32':
      return { content: () => numbered(32 * MiB), edits: [{ oldString: '4000000\n', newString: 'CHANGED\n', replaceAll: false }] }
    case 'floor': {
      const size = (quick ? 128 : 256) * MiB
      return {
        content: () => `${Buffer.alloc(size - 16, 'line of text\n').toString('latin1')}the end\n`,
        edits: [{ oldString: 'the end', newString: 'THE END', replaceAll: false }],
      }
    }
  }
}

/** About `size` bytes of 8-byte numbered lines. */
function numbered(size: number): string {
  const parts: string[] = []
  for (let n = 0, total = 0; total < size; n++, total += 8) parts.push(`${String(n).padStart(7, '0')}\n`)
  return parts.join('')
}

function libJob(shape: Shape): Job {
  return async () => {
    const { content, edits } = shapeOf(shape)
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'f.txt': content() } })
    const target = await fs.resolve('f.txt')
    if (shape === 'line32') {
      const edit = createFileTools({ fs }).find((t) => t.name === 'edit') as FileTool
      const [e] = edits as [FsEditRequest]
      return async () => {
        const result = await edit.execute({ file_path: 'f.txt', old_string: e.oldString, new_string: e.newString })
        if (result.isError) throw Object.assign(new Error(result.text), { code: result.code })
        return result
      }
    }
    return () => fs.editText(target, edits.length === 1 ? (edits[0] as FsEditRequest) : edits)
  }
}

/** The naive diff: both texts split into lines, equal head and tail lines trimmed, the rest shown. */
function naiveDiff(before: string, after: string): string {
  const a = before.split(/(?<=\n)/)
  const b = after.split(/(?<=\n)/)
  let head = 0
  while (head < a.length && head < b.length && a[head] === b[head]) head++
  let tail = 0
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++
  const from = Math.max(0, head - 3)
  const removed = a.slice(head, a.length - tail).map((l) => `-${l}`)
  const added = b.slice(head, b.length - tail).map((l) => `+${l}`)
  return [`@@ -${from + 1} +${from + 1} @@`, ...removed, ...added].join('').slice(0, 8192)
}

/** Non-overlapping matches of `needle`, left to right. */
function countOf(text: string, needle: string): number {
  let n = 0
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) n++
  return n
}

/** The edit engine before the bounds (text without CRLF): count, allocate the exact result, splice. */
function oldSplice(haystack: Buffer, edit: FsEditRequest): Buffer {
  const needleLength = Buffer.byteLength(edit.oldString)
  const first = haystack.indexOf(edit.oldString, 0, 'utf8')
  let count = 0
  for (let i = first; i !== -1; i = haystack.indexOf(edit.oldString, i + needleLength, 'utf8')) count++
  if (count === 0) throw Object.assign(new Error('not found'), { code: 'FS_EDIT_NOT_FOUND' })
  if (count > 1 && !edit.replaceAll) throw Object.assign(new Error('ambiguous'), { code: 'FS_AMBIGUOUS_EDIT' })
  const replacementLength = Buffer.byteLength(edit.newString)
  const out = Buffer.allocUnsafe(haystack.length + count * (replacementLength - needleLength))
  let from = 0
  let at = 0
  for (let i = first; i !== -1; i = count === 1 ? -1 : haystack.indexOf(edit.oldString, i + needleLength, 'utf8')) {
    at += haystack.copy(out, at, from, i)
    at += out.write(edit.newString, at, replacementLength, 'utf8')
    from = i + needleLength
  }
  haystack.copy(out, at, from)
  return out
}

function oldJob(shape: Shape): Job {
  return async () => {
    const { content, edits } = shapeOf(shape)
    const bytes = Buffer.from(content(), 'latin1')
    return async () => {
      let current: Buffer = bytes
      try {
        for (const e of edits) current = oldSplice(current, e)
      } catch (err) {
        if (err instanceof RangeError) throw Object.assign(new Error(err.message), { code: 'FS_TOO_LARGE' })
        throw err
      }
      if (current.length > LIMIT) throw Object.assign(new Error('too large'), { code: 'FS_TOO_LARGE' })
      return shape === 'line32' ? naiveDiff(bytes.toString('latin1'), current.toString('latin1')) : current
    }
  }
}

function naiveJob(shape: Shape): Job {
  return async () => {
    const { content, edits } = shapeOf(shape)
    const text = content()
    if (shape === 'floor') {
      const bytes = Buffer.from(text, 'latin1')
      const [e] = edits as [FsEditRequest]
      return async () => {
        const at = bytes.indexOf(e.oldString)
        if (at === -1 || bytes.indexOf(e.oldString, at + 1) !== -1) throw new Error('not exactly one match')
        return Buffer.concat([bytes.subarray(0, at), Buffer.from(e.newString), bytes.subarray(at + e.oldString.length)])
      }
    }
    return async () => {
      let after = text
      for (const e of edits) {
        const count = countOf(after, e.oldString)
        if (count === 0) throw Object.assign(new Error('not found'), { code: 'FS_EDIT_NOT_FOUND' })
        if (count > 1 && !e.replaceAll) throw Object.assign(new Error('ambiguous'), { code: 'FS_AMBIGUOUS_EDIT' })
        after = after.replaceAll(e.oldString, e.newString)
        if (Buffer.byteLength(after) > LIMIT) throw Object.assign(new Error('too large'), { code: 'FS_TOO_LARGE' })
      }
      const bytes = Buffer.from(after)
      return shape === 'line32' ? naiveDiff(text, after) : bytes
    }
  }
}

const hwm = (): number => Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) * 1024

async function child(shape: Shape, side: Side): Promise<Report> {
  const call = await (side === 'lib' ? libJob(shape) : side === 'old' ? oldJob(shape) : naiveJob(shape))()
  const gc = (globalThis as { gc?: () => void }).gc
  gc?.()
  await new Promise((resolve) => setTimeout(resolve, 20))
  let peakable = true
  try {
    writeFileSync('/proc/self/clear_refs', '5')
  } catch {
    peakable = false
  }
  // The longest gap between the ticks of a 1 ms timer: how long the event loop was held.
  let last = performance.now()
  let block = 0
  const ticker = setInterval(() => {
    const now = performance.now()
    block = Math.max(block, now - last)
    last = now
  }, 1)
  await new Promise((resolve) => setTimeout(resolve, 5))
  const start = process.memoryUsage.rss()
  block = 0
  let outcome = 'ok'
  const began = performance.now()
  try {
    await call()
  } catch (err) {
    outcome = isFsError(err) ? err.code : ((err as { code?: string }).code ?? (err instanceof Error ? err.message : String(err)))
  }
  const ms = performance.now() - began
  const peak = peakable ? Math.max(0, hwm() - start) : null
  // One more tick, so that a block that ended the call is measured.
  await new Promise((resolve) => setTimeout(resolve, 5))
  clearInterval(ticker)
  return { shape, side, ms, peak, block, outcome }
}

async function runChild(shape: Shape, side: Side): Promise<Report> {
  const self = fileURLToPath(import.meta.url)
  const args = ['--expose-gc', '--max-old-space-size=8192', self, '--child', '--shape', shape, '--side', side, ...(quick ? ['--quick'] : [])]
  // The old engine can run for hours (a chain of doubling edits): a child past its time is stopped.
  const { code, signal, out } = await runNodeChild(args, CHILD_TIMEOUT_MS)
  if (signal === 'SIGKILL') {
    return { shape, side, ms: Number.POSITIVE_INFINITY, peak: null, block: Number.POSITIVE_INFINITY, outcome: `stopped after ${CHILD_TIMEOUT_MS / 1000} s` }
  }
  if (code !== 0) return { shape, side, ms: Number.NaN, peak: null, block: Number.NaN, outcome: `child exited with ${code}` }
  return JSON.parse(out) as Report
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

if (args.child === true) {
  process.stdout.write(JSON.stringify(await child(args.shape as Shape, args.side as Side)))
} else {
  const command = `node bench/dist/edit-bounds.js${quick ? ' --quick' : ''}${args.json !== undefined ? ` --json ${args.json}` : ''}`
  const env = environment({ quick, command })
  console.log(machineLine(env))
  console.log(`$ ${command}\n`)
  const reports: Report[] = []
  const rows: string[][] = [
    [
      'shape',
      'lib ms',
      'old ms',
      'naive ms',
      'lib/naive',
      'lib peak MiB',
      'old peak',
      'naive peak',
      'lib/naive',
      'lib block ms',
      'old block',
      'naive block',
      'lib / old / naive',
    ],
  ]
  const fmt = (n: number, digits = 0): string => (n === Number.POSITIVE_INFINITY ? `> ${CHILD_TIMEOUT_MS}` : Number.isFinite(n) ? n.toFixed(digits) : '–')
  const ratio = (a: number, b: number): string =>
    b === Number.POSITIVE_INFINITY && Number.isFinite(a) ? '< 0.01×' : Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : '–'
  for (const shape of SHAPES) {
    process.stdout.write(`${shape}: ${REPS[shape]} children per side ... `)
    const bySide: Record<Side, Report[]> = { lib: [], old: [], naive: [] }
    for (let rep = 0; rep < REPS[shape]; rep++) {
      for (const side of SIDES) {
        // A side that was stopped once is not run again: it would only be stopped again.
        if (bySide[side].some((r) => r.ms === Number.POSITIVE_INFINITY)) continue
        const report = await runChild(shape, side)
        bySide[side].push(report)
        reports.push(report)
      }
    }
    const m = (side: Side, pick: (r: Report) => number | null): number => median(bySide[side].map((r) => pick(r) ?? Number.NaN))
    const ms = (side: Side): number => m(side, (r) => r.ms)
    const peak = (side: Side): number => m(side, (r) => r.peak) / MiB
    const block = (side: Side): number => m(side, (r) => r.block)
    rows.push([
      shape,
      fmt(ms('lib')),
      fmt(ms('old')),
      fmt(ms('naive')),
      ratio(ms('lib'), ms('naive')),
      fmt(peak('lib')),
      fmt(peak('old')),
      fmt(peak('naive')),
      ratio(peak('lib'), peak('naive')),
      fmt(block('lib')),
      fmt(block('old')),
      fmt(block('naive')),
      SIDES.map((side) => bySide[side][0]?.outcome).join(' / '),
    ])
    console.log('done')
  }
  console.log(`\n${markdownTable(rows[0] as string[], rows.slice(1))}\n`)
  console.log('medians of fresh children; peak: growth of the peak RSS during the call; block: the longest the event loop was held.')
  if (args.json !== undefined) writeFileSync(args.json, `${JSON.stringify({ environment: env, reports }, null, 2)}\n`)
}
