/**
 * Where a tool call's time goes: for read, write and edit on local disk, the whole tool call
 * (`execute` through `createFileToolsByName`, default fence, read-before-write policy), the
 * contract call it makes (resolve + `readText` / `writeText` / `editText` on the same
 * `LocalFileSystem`), and the diff the tool builds from such an outcome (`diffOutcome`, timed
 * alone on the contract's own outcomes). "rest" is tool − contract − diff: the fence's resolve,
 * argument checks, the policy, quoting and the result. The one-line edit and overwrite run on a
 * 1 MiB and a 64 MiB file (16 MiB with --quick): the diff's cost must not follow the file's size.
 *
 * Method: each row's three measures are interleaved call by call (tool, contract, diff) after its
 * warm-up calls (untimed), so that both paths run compiled: in a fresh process, the first 3,000 or so
 * small reads run partly unoptimized (tool 40 → 12 µs, contract 31 → 14 µs, per 500 pairs), so the
 * read row warms up with 5,000; a row of slow calls with one. A cell is the median in microseconds.
 */
import { writeFile, realpath } from 'node:fs/promises'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { LocalFileSystem } from '@seamfs/backend-local'
import { ObservationPolicy, type FsEditOutcome, type FsWriteOutcome } from '@seamfs/core'
import { createFileToolsByName, diffOutcome, type FileToolsByName, type ToolResult } from '@seamfs/tools'
import { filler, median, type CallBreakdown, type JobResult, type Sizes } from './harness.js'

const MiB = 1024 * 1024

interface Row {
  readonly call: string
  readonly reps: number
  /** Untimed calls first (default 1). */
  readonly warmups?: number
  /** One tool call (the i-th of the row). */
  tool(i: number): Promise<void>
  /** The contract call the tool makes, on the row's other file; its outcome when the tool diffs it. */
  contract(i: number): Promise<FsEditOutcome | FsWriteOutcome | undefined>
}

const succeeded = <V>(result: ToolResult<V>): void => {
  if (result.isError) throw new Error(result.text)
}

/** A text of `bytes` bytes in numbered 64-byte lines, with a marker line at the middle. */
function bigText(bytes: number): string {
  const lines = bytes / 64
  const out: string[] = []
  for (let i = 0; i < lines; i++) out.push(i === lines >> 1 ? `${'MARK-0'.padEnd(63, '.')}\n` : `${String(i).padStart(10, '0')} ${'.'.repeat(52)}\n`)
  return out.join('')
}

/** The one-line edit and the one-line overwrite of a `bytes`-byte file: tool on one copy, contract on another. */
async function bigRows(root: string, fs: LocalFileSystem, tools: FileToolsByName, bytes: number, reps: number): Promise<Row[]> {
  const label = `${bytes / MiB} MiB`
  const text = bigText(bytes)
  const files = { toolEdit: join(root, `edit-tool-${label}.txt`), contractEdit: join(root, `edit-contract-${label}.txt`) }
  for (const path of Object.values(files)) await writeFile(path, text)
  succeeded(await tools.read.execute({ file_path: files.toolEdit, limit: 1 }))
  const mark = (i: number): string => `MARK-${i}`
  const writes = { tool: join(root, `write-tool-${label}.txt`), contract: join(root, `write-contract-${label}.txt`) }
  const variant = (i: number): string => text.replace('MARK-0', mark(i % 2))
  for (const path of Object.values(writes)) await writeFile(path, variant(1))
  succeeded(await tools.read.execute({ file_path: writes.tool, limit: 1 }))
  return [
    {
      call: `edit: one line of a ${label} file`,
      reps,
      tool: async (i) => succeeded(await tools.edit.execute({ file_path: files.toolEdit, old_string: mark(i), new_string: mark(i + 1) })),
      contract: async (i) => fs.editText(await fs.resolve(files.contractEdit), { oldString: mark(i), newString: mark(i + 1), replaceAll: false }),
    },
    {
      call: `write: a ${label} file, one line changed`,
      reps,
      tool: async (i) => succeeded(await tools.write.execute({ file_path: writes.tool, content: variant(i) })),
      contract: async (i) => fs.writeText(await fs.resolve(writes.contract), variant(i)),
    },
  ]
}

/** The breakdown rows of one run; `size.rounds` is not used: each row runs its own repetitions. */
export async function callsJob(dataDir: string, size: Sizes): Promise<JobResult & { readonly breakdown: CallBreakdown[] }> {
  const root = await realpath(dataDir)
  const fs = new LocalFileSystem({ cwd: root })
  const tools = createFileToolsByName({ fs, cwd: root, policy: new ObservationPolicy() })
  const quick = size.reads < 1000
  const small = filler('small', 200)
  await writeFile(join(root, 'small.txt'), small)
  const page = (i: number): string => filler(`page ${i % 2}`, 4096)
  for (const name of ['w-tool.txt', 'w-contract.txt']) await writeFile(join(root, name), page(1))
  succeeded(await tools.read.execute({ file_path: join(root, 'w-tool.txt') }))
  const rows: Row[] = [
    {
      call: 'read: a 200 B file',
      reps: quick ? 200 : 1000,
      warmups: quick ? 1000 : 5000,
      tool: async () => succeeded(await tools.read.execute({ file_path: join(root, 'small.txt') })),
      contract: async () => void (await fs.readText(await fs.resolve(join(root, 'small.txt')))),
    },
    {
      call: 'write: overwrite a 4 KiB file (durable)',
      reps: quick ? 100 : 300,
      warmups: quick ? 20 : 100,
      tool: async (i) => succeeded(await tools.write.execute({ file_path: join(root, 'w-tool.txt'), content: page(i) })),
      contract: async (i) => fs.writeText(await fs.resolve(join(root, 'w-contract.txt')), page(i)),
    },
    ...(await bigRows(root, fs, tools, MiB, quick ? 10 : 30)),
    ...(await bigRows(root, fs, tools, quick ? 16 * MiB : 64 * MiB, quick ? 3 : 7)),
  ]
  const breakdown: CallBreakdown[] = []
  for (const row of rows) {
    const tool: number[] = []
    const contract: number[] = []
    const diff: number[] = []
    const warmups = row.warmups ?? 1
    for (let i = 1 - warmups; i <= row.reps; i++) {
      let start = performance.now()
      await row.tool(i)
      const toolMs = performance.now() - start
      start = performance.now()
      const outcome = await row.contract(i)
      const contractMs = performance.now() - start
      start = performance.now()
      if (outcome !== undefined && !('operation' in outcome && outcome.before === null)) await diffOutcome(outcome)
      const diffMs = outcome === undefined ? 0 : performance.now() - start
      if (i <= 0) continue // the warm-up
      tool.push(toolMs * 1000)
      contract.push(contractMs * 1000)
      diff.push(diffMs * 1000)
    }
    breakdown.push({ call: row.call, toolUs: median(tool), contractUs: median(contract), diffUs: median(diff) })
  }
  return { job: 'calls', title: 'per tool call: contract / diff / rest', columns: [], breakdown }
}

/** The breakdown as a markdown table. */
export function breakdownTable(rows: readonly CallBreakdown[]): string {
  const us = (v: number): string => (v >= 1000 ? `${(v / 1000).toFixed(2)} ms` : `${v.toFixed(0)} µs`)
  const lines = ['| call | tool | contract | diff | rest | tool / contract |', '|---|---|---|---|---|---|']
  for (const r of rows) {
    const rest = r.toolUs - r.contractUs - r.diffUs
    lines.push(`| ${r.call} | ${us(r.toolUs)} | ${us(r.contractUs)} | ${us(r.diffUs)} | ${us(rest)} | ×${(r.toolUs / r.contractUs).toFixed(2)} |`)
  }
  return lines.join('\n')
}
