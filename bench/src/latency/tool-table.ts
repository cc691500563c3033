/**
 * The table issue 31 is judged by: each row is one tool call the model makes (through
 * `createFileToolsByName`, as a harness mounts the tools), next to the bare client doing the same
 * job, at each round-trip time (RTT). Per call: requests, round trips as the proxy counts them, the
 * median wall time at each RTT, and `~RT`, the round trips the wall time implies: the median over
 * the repetitions of (ms at the RTT − ms at 0) / the measured RTT. Each row names the issue's
 * target and says whether `~RT` at the largest RTT meets it.
 */
import { performance } from 'node:perf_hooks'
import { median, table } from './measure.js'
import type { LatencyProxy } from './proxy.js'

/** One side of a row: an optional untimed, uncounted preparation (the read before an overwrite), then the measured call. */
export interface Step {
  readonly before?: (rep: number) => Promise<void>
  /** The call; throws unless its result is the right one, so a broken call cannot look fast. */
  readonly run: (rep: number) => Promise<void>
}

/** Requests of one client, counted by its own hook. */
export interface Counter {
  total(): number
  /** By type, e.g. `GET×1 PUT×1`. */
  detail(): string
  reset(): void
}

/** What the issue asks of a row at the largest RTT: a fixed number of round trips, or at most the bare client's. */
export interface Target {
  /** E.g. `S3 read: target ≤ 1 RT`. */
  readonly text: string
  /** The bound on the tool's round trips, given the bare client's at the same RTT. */
  bound(bare: number): number
}

export interface ToolRow {
  readonly name: string
  readonly tool: Step
  /** What the bare client does, e.g. `GetObject`. */
  readonly bareLabel: string
  readonly bare: Step
  readonly target?: Target | undefined
}

export interface ToolBackend {
  /** `S3` or `SFTP`. */
  readonly name: string
  readonly proxy: LatencyProxy
  readonly toolCounter: Counter
  readonly bareCounter: Counter
  readonly rows: readonly ToolRow[]
}

type Side = 'tool' | 'bare'

/** One side of one row at one RTT. */
export interface ToolCell {
  readonly backend: string
  readonly row: string
  readonly side: Side
  readonly rttMs: number
  /** Requests of the last repetition. */
  readonly requests: number
  readonly detail: string
  /** Median over the repetitions of the proxy's causal round-trip count. */
  readonly roundTrips: number
  readonly connections: number
  /** Median wall time, ms. */
  readonly wallMs: number
  readonly times: readonly number[]
  /** `~RT`: the median over the repetitions of (ms − ms of the same repetition at 0 ms) / measured RTT; undefined at 0 ms. */
  readonly impliedRoundTrips: number | undefined
}

/** `~RT` within this much of the target meets it: the proxy's timers and the event loop add a little to each wait. */
export const TOLERANCE_RT = 0.25

interface Runs {
  readonly times: number[]
  readonly roundTrips: number[]
  last: { requests: number; detail: string; connections: number }
}

/**
 * Runs `step` `reps` times at each RTT, the RTTs of one repetition back to back (a change in the
 * machine's load then hits a repetition's calls alike, and their difference is the network's).
 * `before` runs at 0 ms, uncounted; each call starts once nothing is on its way through the proxy.
 */
async function measureSide(
  proxy: LatencyProxy,
  counter: Counter,
  step: Step,
  measuredRtt: ReadonlyMap<number, number>,
  reps: number,
  nextRep: () => number,
): Promise<Omit<ToolCell, 'backend' | 'row' | 'side'>[]> {
  const runs = new Map<number, Runs>(
    [...measuredRtt.keys()].map((rtt) => [rtt, { times: [], roundTrips: [], last: { requests: 0, detail: '', connections: 0 } }]),
  )
  try {
    for (let i = 0; i < reps; i++) {
      for (const [rtt, run] of runs) {
        const rep = nextRep()
        proxy.delayMs = 0
        await step.before?.(rep)
        // What the last call sent behind its answer (a lock's release) lands first, as it would while the model thinks.
        await proxy.quiet()
        proxy.delayMs = rtt / 2
        counter.reset()
        proxy.reset()
        const start = performance.now()
        await step.run(rep)
        run.times.push(performance.now() - start)
        const counts = proxy.counts()
        run.roundTrips.push(counts.roundTrips)
        run.last = { requests: counter.total(), detail: counter.detail(), connections: counts.connections }
      }
    }
  } finally {
    proxy.delayMs = 0
  }
  const base = runs.get(0)?.times
  return [...runs].map(([rttMs, { times, roundTrips, last }]) => {
    const rtt = measuredRtt.get(rttMs) ?? 0
    const impliedRoundTrips = base === undefined || rttMs === 0 || rtt <= 0 ? undefined : median(times.map((t, i) => (t - (base[i] as number)) / rtt))
    return { rttMs, ...last, roundTrips: median(roundTrips), wallMs: median(times), times, impliedRoundTrips }
  })
}

/**
 * Every row, both sides, at every RTT of `measuredRtt` (nominal RTT → RTT measured through a
 * proxy; 0 among them), `reps` times. Each side first runs once untimed at 0 ms (connections
 * open, code warm, as a running agent has them). A side that fails is reported and left out.
 */
export async function runToolRows(backend: ToolBackend, measuredRtt: ReadonlyMap<number, number>, reps: number): Promise<ToolCell[]> {
  if (!measuredRtt.has(0)) throw new Error('the tool table needs a run at 0 ms to compare with')
  const cells: ToolCell[] = []
  let rep = 0
  const nextRep = (): number => rep++
  for (const row of backend.rows) {
    const sides = [
      ['tool', row.tool, backend.toolCounter],
      ['bare', row.bare, backend.bareCounter],
    ] as const
    for (const [side, step, counter] of sides) {
      try {
        backend.proxy.delayMs = 0
        const warm = nextRep()
        await step.before?.(warm)
        await step.run(warm)
        const measured = await measureSide(backend.proxy, counter, step, measuredRtt, reps, nextRep)
        cells.push(...measured.map((m) => ({ backend: backend.name, row: row.name, side, ...m })))
      } catch (err) {
        console.error(`${backend.name} ${row.name} (${side}) failed: ${err instanceof Error ? err.message : String(err)}`)
      }
    }
  }
  return cells
}

const cellOf = (cells: readonly ToolCell[], row: string, side: Side, rttMs: number): ToolCell | undefined =>
  cells.find((c) => c.row === row && c.side === side && c.rttMs === rttMs)

/**
 * The verdict of a row at the largest RTT, on `~RT` (the measure), with the proxy's count
 * beside it, e.g. `S3 read: target ≤ 1 RT · 1.03 (count 1) → meets`.
 */
export function verdict(row: ToolRow, cells: readonly ToolCell[]): { text: string; meets?: boolean } {
  if (row.target === undefined) return { text: '(no target)' }
  const top = Math.max(...cells.map((c) => c.rttMs))
  const tool = cellOf(cells, row.name, 'tool', top)
  const bare = cellOf(cells, row.name, 'bare', top)
  if (tool?.impliedRoundTrips === undefined || bare?.impliedRoundTrips === undefined) return { text: `${row.target.text} · not measured` }
  const bound = row.target.bound(bare.impliedRoundTrips)
  const meets = tool.impliedRoundTrips <= bound + TOLERANCE_RT
  const count = `count ${tool.roundTrips} vs ≤ ${row.target.bound(bare.roundTrips)}`
  return { text: `${row.target.text} · ${tool.impliedRoundTrips.toFixed(2)} vs ≤ ${bound.toFixed(2)} (${count}) → ${meets ? 'meets' : 'MISSES'}`, meets }
}

const clientOf = (row: ToolRow, side: Side): string => (side === 'tool' ? 'seamfs tools' : `bare: ${row.bareLabel}`)

/**
 * The backend's table: two lines per row (the tool call, then the bare client); `req` and `RT`
 * at the largest RTT, wall times and `~RT` at each.
 */
export function toolTable(backend: ToolBackend, cells: readonly ToolCell[]): string {
  const rtts = [...new Set(cells.map((c) => c.rttMs))].sort((a, b) => a - b)
  const top = Math.max(...rtts)
  const delayed = rtts.filter((r) => r > 0)
  const header = ['call', 'client', 'req', 'RT', ...rtts.map((r) => `ms @${r}`), ...delayed.map((r) => `~RT @${r}`), `target @${top} ms (~RT)`]
  const lines = backend.rows.flatMap((row) =>
    (['tool', 'bare'] as const).map((side) => {
      const last = cellOf(cells, row.name, side, top)
      return [
        side === 'tool' ? row.name : '',
        clientOf(row, side),
        last === undefined ? 'n/a' : String(last.requests),
        last === undefined ? 'n/a' : String(last.roundTrips),
        ...rtts.map((r) => cellOf(cells, row.name, side, r)?.wallMs.toFixed(1) ?? 'n/a'),
        ...delayed.map((r) => cellOf(cells, row.name, side, r)?.impliedRoundTrips?.toFixed(2) ?? 'n/a'),
        side === 'tool' ? verdict(row, cells).text : '',
      ]
    }),
  )
  return table([header, ...lines])
}

/** The requests of each call by type, at the largest RTT. */
export function detailTable(backend: ToolBackend, cells: readonly ToolCell[]): string {
  const top = Math.max(...cells.map((c) => c.rttMs))
  const rows = backend.rows.flatMap((row) =>
    (['tool', 'bare'] as const).map((side) => [side === 'tool' ? row.name : '', clientOf(row, side), cellOf(cells, row.name, side, top)?.detail ?? 'n/a']),
  )
  return table([['call', 'client', 'requests by type'], ...rows])
}
