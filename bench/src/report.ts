/**
 * What a bench prints around its figures: the machine it ran on, and a Markdown table. For new
 * benches (the older ones keep their own copies).
 */
import { availableParallelism, cpus, platform, release } from 'node:os'

/** The machine and the run, for the header line and a `--json` file. */
export interface Environment extends Readonly<Record<string, unknown>> {
  readonly node: string
  readonly platform: string
  readonly cpus: number
  readonly cpuModel: string
}

/** This machine, plus what the bench adds (`quick`, its data directory…). */
export function environment(extra: Readonly<Record<string, unknown>>): Environment {
  return { node: process.version, platform: `${platform()} ${release()}`, cpus: availableParallelism(), cpuModel: cpus()[0]?.model ?? 'unknown', ...extra }
}

/** `node v20 · linux 6.1 · 2 CPUs (model)`. */
export function machineLine(env: Environment): string {
  return `node ${env.node} · ${env.platform} · ${env.cpus} CPUs (${env.cpuModel})`
}

/** `header` and `rows` as a Markdown table, each column as wide as its widest cell. */
export function markdownTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const all = [header, ...rows]
  const widths = header.map((_, c) => Math.max(...all.map((row) => (row[c] ?? '').length)))
  const line = (row: readonly string[]): string => `| ${widths.map((w, c) => (row[c] ?? '').padEnd(w)).join(' | ')} |`
  const rule = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`
  return [line(header), rule, ...rows.map(line)].join('\n')
}
