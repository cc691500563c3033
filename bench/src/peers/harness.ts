/**
 * The measuring loop of the peer table: columns, rounds, and the pieces every
 * job shares (sizes, the raw durable write, filler text).
 */
import { mkdir, open, rename } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'

/** Where a column goes in the table. */
export type Slot = 'limit' | 'seamfs' | 'tools' | 'deepagents' | 'mcp' | 'flystorage' | 'other'

/** One contender for a job: the raw limit, seamfs, or a peer library. */
export interface Column {
  readonly slot: Slot
  /** Shown next to the ratio when a slot holds more than one column (e.g. 'state backend'). */
  readonly label?: string
  /** The column does not fsync the file and its directory (checked in the peer's code). */
  readonly notDurable?: boolean
  /** Untimed, before each round (round 0 is the warm-up). */
  prepare?(round: number): Promise<void>
  /** Timed: the whole job once. */
  run(round: number): Promise<void>
}

/** A column that could not be built (missing package, failed import). */
export interface Unavailable {
  readonly slot: Slot
  readonly label?: string
  readonly error: string
}

export interface ColumnResult {
  readonly slot: Slot
  readonly label?: string
  readonly notDurable: boolean
  /** Per measured round, ms for the whole job. Empty when `error` is set. */
  readonly ms: number[]
  readonly error?: string
}

export interface JobResult {
  readonly job: string
  readonly title: string
  readonly columns: ColumnResult[]
}

/** One row of the per-call breakdown: where a tool call's time goes, in microseconds (medians). */
export interface CallBreakdown {
  readonly call: string
  /** The whole tool call (`execute`). */
  readonly toolUs: number
  /** The contract call the tool makes (resolve included), alone. */
  readonly contractUs: number
  /** The diff the tool builds from the contract's outcome, alone (0 where the tool shows none). */
  readonly diffUs: number
}

/** Sizes of one run; `--quick` shrinks them. */
export interface Sizes {
  readonly files: number
  readonly editFiles: number
  readonly editsPerFile: number
  readonly listEntries: number
  readonly memoryFiles: number
  readonly reads: number
  /** Lines of the file the window job reads 2,000 lines of (60 B a line). */
  readonly windowLines: number
  readonly rounds: number
}

export const FULL: Sizes = {
  files: 1_000,
  editFiles: 20,
  editsPerFile: 10,
  listEntries: 10_000,
  memoryFiles: 10_000,
  reads: 1_000,
  windowLines: 1_000_000,
  rounds: 6,
}
export const QUICK: Sizes = { files: 100, editFiles: 4, editsPerFile: 5, listEntries: 1_000, memoryFiles: 1_000, reads: 200, windowLines: 100_000, rounds: 6 }

/** Builds a column, turning any failure into an `Unavailable` with the reason. */
export async function tryColumn(slot: Slot, label: string | undefined, build: () => Promise<Column>): Promise<Column | Unavailable> {
  try {
    return await build()
  } catch (error) {
    return { slot, ...(label === undefined ? {} : { label }), error: reason(error) }
  }
}

export function reason(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error)
  const line = text.split('\n')[0] ?? ''
  return line.length > 80 ? `${line.slice(0, 77)}...` : line
}

const isUnavailable = (c: Column | Unavailable): c is Unavailable => 'error' in c

/**
 * A full garbage collection, untimed, before each column runs (the worker runs with `--expose-gc`):
 * a column starts on a settled heap instead of paying for the garbage of the column before it. The
 * columns share one process, and V8 collects what one leaves (an edit's buffers count toward its next
 * full collection until then) during the next: measured on the edit job, the column after another
 * seamfs column ran up to twice the full collections it ran when first after the limit.
 */
function settle(): void {
  ;(globalThis as { gc?: () => void }).gc?.()
}

/**
 * One warm-up round and `rounds` measured rounds; within a round every column
 * runs once, each on a settled heap ({@link settle}), the starting column rotating
 * from round to round and the order reversed every other round: what a column
 * leaves V8 (its heap's sizing, the rates its next collection is planned by)
 * weighs on the column after it, and in a fixed order that is always the same
 * one (measured on the edit job: the seamfs column run third ran 20–50% more
 * full collections than run second, whichever of the two it was). With an even
 * `rounds` two adjacent columns (the contract's and the tools') run in each order
 * equally often. A column
 * that throws is dropped from later rounds and reported with its reason. A run
 * that repeats the job `perRun` times reports its time divided by that.
 */
export async function runRounds(job: string, title: string, entries: ReadonlyArray<Column | Unavailable>, rounds: number, perRun = 1): Promise<JobResult> {
  const results = entries.map((c): { slot: Slot; label?: string; notDurable: boolean; ms: number[]; error?: string } => ({
    slot: c.slot,
    ...(c.label === undefined ? {} : { label: c.label }),
    notDurable: !isUnavailable(c) && c.notDurable === true,
    ms: [],
    ...(isUnavailable(c) ? { error: c.error } : {}),
  }))
  for (let round = 0; round <= rounds; round++) {
    for (let k = 0; k < entries.length; k++) {
      const n = entries.length
      const i = round % 2 === 0 ? (round + k) % n : (round - k + n * n) % n
      const column = entries[i] as Column | Unavailable
      const result = results[i] as (typeof results)[number]
      if (isUnavailable(column) || result.error !== undefined) continue
      try {
        await column.prepare?.(round)
        settle()
        const start = performance.now()
        await column.run(round)
        const ms = (performance.now() - start) / perRun
        if (round > 0) result.ms.push(ms)
      } catch (error) {
        result.error = `threw: ${reason(error)}`
        result.ms.length = 0
      }
    }
  }
  return { job, title, columns: results }
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

/** The raw durable write: temp 'wx' + write + fsync + close + rename + fsync of the directory. */
export async function rawDurableWrite(path: string, content: string): Promise<void> {
  const dir = dirname(path)
  const temp = join(dir, `.${basename(path)}.${process.pid}.tmp`)
  const file = await open(temp, 'wx', 0o600)
  try {
    await file.writeFile(content)
    await file.sync()
  } finally {
    await file.close()
  }
  await rename(temp, path)
  const dirHandle = await open(dir, 'r')
  try {
    await dirHandle.sync()
  } finally {
    await dirHandle.close()
  }
}

/** The limit's edit rule: exactly one occurrence, spliced. Throws otherwise. */
export function spliceOnce(text: string, oldString: string, newString: string): string {
  const at = text.indexOf(oldString)
  if (at === -1 || text.indexOf(oldString, at + oldString.length) !== -1) throw new Error(`"${oldString}" does not occur exactly once`)
  return text.slice(0, at) + newString + text.slice(at + oldString.length)
}

/** Exactly `bytes` ASCII bytes starting with `tag`. */
export function filler(tag: string, bytes: number): string {
  const line = 'lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.\n'
  const head = `${tag}\n`
  return (head + line.repeat(Math.ceil(bytes / line.length))).slice(0, bytes)
}

export function fileNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `f${String(i).padStart(5, '0')}.txt`)
}

export async function freshDir(path: string): Promise<string> {
  await mkdir(path, { recursive: true })
  return path
}

/** Throws when a peer reports failure in its result instead of throwing (deepagents does). */
export function checked<T>(result: T): T {
  const error = (result as { error?: unknown } | null | undefined)?.error
  if (typeof error === 'string' && error.length > 0) throw new Error(error)
  return result
}
