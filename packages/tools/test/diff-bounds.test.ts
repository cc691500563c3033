/**
 * The diff shown after an edit or write, and the dry run, bounded: the diff
 * looks at the changed region only (never the whole file split into lines), caps the lines it
 * diffs and says when it cut, and gives the event loop turns; a dry run is core's bounded edit.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileTools, type EditValue, type FileTool } from '@seamfs/tools'
import { changeDiff, changeDiffAsync, DIFF_WINDOW_MAX_LINES } from '../src/diff.js'
import { busy, held } from '../../core/test/event-loop.js'

const MiB = 1024 * 1024

/**
 * The growth of this process's peak resident memory while `body` runs, in bytes: the kernel's
 * high-water mark (VmHWM) is reset first (Linux `clear_refs`), so earlier peaks do not hide it.
 * `undefined` where /proc is not there to ask.
 */
async function peakGrowth(body: (run: number) => unknown): Promise<number | undefined> {
  const hwm = (): number => Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) * 1024
  // The least of three runs: a garbage collection of earlier work that lands in one run (its timing
  // depends on the machine's load) is not the body's; a body that needs the memory needs it every time.
  let least: number | undefined
  for (let run = 0; run < 3; run++) {
    try {
      writeFileSync('/proc/self/clear_refs', '5')
    } catch {
      await body(run)
      return undefined
    }
    const start = process.memoryUsage.rss()
    await body(run)
    const growth = hwm() - start
    least = least === undefined ? growth : Math.min(least, growth)
  }
  return least
}

/** A text of `size` bytes in short numbered lines (the worst shape for a line split: many lines per byte), flat. */
function numbered(size: number, width = 8): { text: string; lines: number } {
  const parts: string[] = []
  let n = 0
  for (let total = 0; total < size; n++) {
    const line = `${String(n).padStart(width - 1, '0')}\n`
    parts.push(line)
    total += line.length
  }
  return { text: parts.join(''), lines: n }
}

/** `text` as one flat string (a concatenation is a rope until something flattens it). */
const flat = (text: string): string => Buffer.from(text, 'latin1').toString('latin1')

const tool = (tools: FileTool[], name: string): FileTool => tools.find((t) => t.name === name) as FileTool

describe('the diff of a one-line change of a 32 MiB file', () => {
  const { text: before, lines } = numbered(32 * MiB)
  const at = 4_000_000
  const line = `${String(at).padStart(7, '0')}\n`
  const after = flat(before.replace(line, 'CHANGED\n'))

  it('is computed on the changed region only: right line numbers, peak memory a fraction of the file', async () => {
    expect(lines).toBeGreaterThan(4_000_000)
    let diff: ReturnType<typeof changeDiff> | undefined
    const growth = await peakGrowth(() => (diff = changeDiff(before, after)))
    expect(diff?.text).toBe(
      [`@@ -${at - 2},7 +${at - 2},7 @@`, ' 3999997', ' 3999998', ' 3999999', '-4000000', '+CHANGED', ' 4000001', ' 4000002', ' 4000003'].join('\n'),
    )
    expect([diff?.added, diff?.removed, diff?.truncated]).toEqual([1, 1, false])
    // The whole-file line split took 17 times the file (4 million line strings and their arrays); the
    // bound leaves room for what else the process allocates meanwhile (the garbage collector runs late).
    if (growth !== undefined) expect(growth).toBeLessThan(32 * MiB)
  })

  it('through the edit tool: the result, the store and the peak memory (about the file: the new bytes)', async () => {
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'big.txt': before } })
    const edit = tool(createFileTools({ fs }), 'edit')
    let result: Awaited<ReturnType<FileTool['execute']>> | undefined
    // Runs 0 and 2 make the change, run 1 takes it back: the same edit each time.
    const growth = await peakGrowth(async (run) => {
      const [old_string, new_string] = run % 2 === 0 ? [line, 'CHANGED\n'] : ['CHANGED\n', line]
      result = await edit.execute({ file_path: 'big.txt', old_string, new_string })
    })
    expect(result?.isError).toBe(false)
    expect((result?.value as EditValue).diff).toMatch(new RegExp(`^@@ -${at - 2},7 \\+${at - 2},7 @@\n`))
    // Was above 17× (the diff alone), then 3× (both texts decoded for the diff); now the new bytes
    // only, the diff coming from the changed region of the bytes, with room for a late garbage collector.
    if (growth !== undefined) expect(growth).toBeLessThan(2 * 32 * MiB)
    // The texts are still there for a caller that asks.
    const value = result?.value as EditValue
    expect([value.before.length, value.after.length]).toEqual([before.length, after.length])
  })
})

describe('a changed region past the line cap', () => {
  it('two one-line changes 60,000 lines apart: the first is shown, and the diff says it was cut there', () => {
    const { text: before } = numbered(100_000 * 8)
    const after = before.replace('0000100\n', 'first\n').replace('0060100\n', 'second\n')
    const diff = changeDiff(before, after)
    const text = diff.text.split('\n')
    expect(text.slice(0, 9)).toEqual(['@@ -98,7 +98,7 @@', ' 0000097', ' 0000098', ' 0000099', '-0000100', '+first', ' 0000101', ' 0000102', ' 0000103'])
    expect(text.at(-1)).toBe('(Diff cut: the changed region is too large to diff whole; more changes may follow line 104: read the file to see them.)')
    expect(diff.truncated).toBe(true)
    // The counts of the changed region, its context included, as if replaced.
    expect([diff.added, diff.removed]).toEqual([60_007, 60_007])
  })

  it('every one of a million lines changed: the counts of the whole region, without splitting it', async () => {
    const n = 1_000_000
    const before = flat(Array.from({ length: n }, (_, i) => `a${i}\n`).join(''))
    const after = flat(Array.from({ length: n }, (_, i) => `b${i}\n`).join(''))
    let diff: ReturnType<typeof changeDiff> | undefined
    const growth = await peakGrowth(() => (diff = changeDiff(before, after)))
    expect(diff).toEqual({
      text: `(Too many changes to show a diff: lines 1-${n} replaced by ${n} lines; read the file to see them.)`,
      added: n,
      removed: n,
      truncated: true,
    })
    // Only the first lines of the region are split (the whole-text split held two million line strings).
    expect(DIFF_WINDOW_MAX_LINES).toBeLessThan(n / 10)
    if (growth !== undefined) expect(growth).toBeLessThan(32 * MiB)
  })
})

describe('the event loop keeps turning during a diff', () => {
  it('the measure sees a block (a synchronous busy loop of 150 ms of CPU)', async () => {
    const { maxMs } = await held(async () => busy(150))
    expect(maxMs).toBeGreaterThanOrEqual(150)
  })

  it('the worst shapes (every one of 400,000 lines changed; the slowest line search) hold it < 100 ms at a time', async () => {
    const n = 400_000
    const same = Array.from({ length: DIFF_WINDOW_MAX_LINES - 1000 }, () => 'a\n')
    const shapes: [string, string][] = [
      [Array.from({ length: n }, (_, i) => `a${i}\n`).join(''), Array.from({ length: n }, (_, i) => `b${i}\n`).join('')],
      // A diagonal of changes over equal lines, within the cap: the line diff's slowest search, until its bounds.
      [same.join(''), same.map((l, i) => (i % 24 === 0 ? 'b\n' : l)).join('')],
    ]
    for (const [before, after] of shapes) {
      const { value: diff, maxMs } = await held(() => changeDiffAsync(before, after))
      expect(diff.truncated).toBe(true)
      expect(maxMs).toBeLessThan(100)
    }
  }, 30_000)
})

describe('a dry run is the bounded edit', () => {
  it('a 2 KB replace_all that would build 1 GiB is FS_TOO_LARGE, quickly and without building it', async () => {
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'f.txt': 'ab'.repeat(MiB / 2) } })
    const edit = tool(createFileTools({ fs }), 'edit')
    const started = performance.now()
    let result: Awaited<ReturnType<FileTool['execute']>> | undefined
    const growth = await peakGrowth(async () => {
      result = await edit.execute({ file_path: 'f.txt', old_string: 'a', new_string: 'x'.repeat(2048), replace_all: true, dryRun: true })
    })
    expect(result).toMatchObject({ isError: true, code: 'FS_TOO_LARGE' })
    expect(performance.now() - started).toBeLessThan(1000)
    // String#split/join built the whole gigabyte string first.
    if (growth !== undefined) expect(growth).toBeLessThan(64 * MiB)
  })

  it('an abort stops a long dry run: FS_ABORTED', async () => {
    // 100,000 pairs in 8 MB swapped back and forth ten times: accepted, and long enough to abort.
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'f.txt': `ab${'x'.repeat(78)}`.repeat(100_000) } })
    const edit = tool(createFileTools({ fs }), 'edit')
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 20)
    const edits = Array.from({ length: 10 }, (_, i) => ({ old_string: i % 2 === 0 ? 'ab' : 'ba', new_string: i % 2 === 0 ? 'ba' : 'ab', replace_all: true }))
    const result = await edit.execute({ file_path: 'f.txt', edits, dryRun: true }, { signal: controller.signal })
    expect(result).toMatchObject({ isError: true, code: 'FS_ABORTED' })
  })
})
