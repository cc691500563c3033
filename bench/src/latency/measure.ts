/**
 * The shared shape of the latency bench: a subject (seamfs or an alternative) is a set of
 * operations plus a request counter; each operation is measured through a {@link LatencyProxy}.
 */
import { performance } from 'node:perf_hooks'
import type { LatencyProxy } from './proxy.js'

/** The operations measured, in table order. */
export const OPERATIONS = [
  'resolve',
  'read 4 KiB',
  'read 10 MiB',
  'write new',
  'overwrite',
  'overwrite, no before',
  'createIfAbsent',
  'edit',
  'list 100',
  'list 2,500',
  'stat',
  'glob 200 files',
  'grep 200 files',
] as const
export type Operation = (typeof OPERATIONS)[number]

/** The operations `--quick` keeps. */
export const QUICK_OPERATIONS: readonly Operation[] = [
  'resolve',
  'read 4 KiB',
  'write new',
  'overwrite',
  'createIfAbsent',
  'edit',
  'list 100',
  'stat',
  'grep 200 files',
]

/** One implementation under test; `rep` gives fresh names to operations that need them. */
export interface Subject {
  readonly name: string
  /** Requests (SFTP packets or HTTP attempts) sent since the last reset. */
  requests(): number
  /** The requests since the last reset, by type, e.g. `OPEN×1 READ×1`. */
  detail(): string
  reset(): void
  readonly ops: Partial<Record<Operation, (rep: number) => Promise<unknown>>>
  close(): Promise<void>
}

/** One cell group of the table: one operation of one subject at one RTT. */
export interface Measured {
  readonly backend: string
  /** Round-trip time the proxy added (half of it each way). */
  readonly rttMs: number
  readonly operation: Operation
  readonly subject: string
  readonly requests: number
  readonly detail: string
  readonly roundTrips: number
  readonly connections: number
  /** Median wall time of the repetitions, ms. */
  readonly wallMs: number
}

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

/** Runs `op` `reps` times through `proxy`, each once nothing is on its way through it; counts come from the last repetition. */
export async function measure(
  proxy: LatencyProxy,
  subject: Subject,
  op: (rep: number) => Promise<unknown>,
  reps: number,
  firstRep: number,
): Promise<Omit<Measured, 'backend' | 'rttMs' | 'operation' | 'subject'>> {
  const times: number[] = []
  let counted = { requests: 0, detail: '', roundTrips: 0, connections: 0 }
  for (let rep = 0; rep < reps; rep++) {
    await proxy.quiet()
    subject.reset()
    proxy.reset()
    const start = performance.now()
    await op(firstRep + rep)
    times.push(performance.now() - start)
    const counts = proxy.counts()
    counted = { requests: subject.requests(), detail: subject.detail(), roundTrips: counts.roundTrips, connections: counts.connections }
  }
  return { ...counted, wallMs: median(times) }
}

/** A counter of requests by type, shared by the subjects' hooks. */
export class RequestCounter {
  private readonly counts = new Map<string, number>()

  add(type: string): void {
    this.counts.set(type, (this.counts.get(type) ?? 0) + 1)
  }

  total(): number {
    return [...this.counts.values()].reduce((a, b) => a + b, 0)
  }

  detail(): string {
    return [...this.counts.entries()].map(([type, n]) => `${type.replace('@openssh.com', '@')}×${n}`).join(' ')
  }

  reset(): void {
    this.counts.clear()
  }
}

/** A markdown table, columns padded. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => (row[c] ?? '').length)))
  const line = (row: readonly string[]): string => `| ${row.map((cell, c) => cell.padEnd(widths[c] as number)).join(' | ')} |`
  return [line(rows[0]!), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n')
}

/**
 * One backend at one RTT: a row per operation, and per subject its requests, round trips
 * and wall time (`n/a` where a subject has no such operation). With an RTT and a 0 ms run to
 * compare, `~RT` is the round trips the wall time implies: (ms − ms at 0 ms) / `measuredRtt`.
 */
export function delayTable(results: readonly Measured[], subjects: readonly string[], baseline: readonly Measured[] = [], measuredRtt = 0): string {
  const operations = OPERATIONS.filter((op) => results.some((r) => r.operation === op))
  const implied = measuredRtt > 0 && baseline.length > 0
  const header = ['operation', ...subjects.flatMap((s) => [`${s} req`, `${s} RT`, ...(implied ? [`${s} ~RT`] : []), `${s} ms`])]
  const rows = operations.map((operation) => [
    operation,
    ...subjects.flatMap((subject) => {
      const r = results.find((m) => m.operation === operation && m.subject === subject)
      if (r === undefined) return implied ? ['n/a', 'n/a', 'n/a', 'n/a'] : ['n/a', 'n/a', 'n/a']
      const base = baseline.find((m) => m.operation === operation && m.subject === subject)
      const rt = base === undefined ? 'n/a' : ((r.wallMs - base.wallMs) / measuredRtt).toFixed(1)
      return [String(r.requests), String(r.roundTrips), ...(implied ? [rt] : []), r.wallMs.toFixed(1)]
    }),
  ])
  return table([header, ...rows])
}
