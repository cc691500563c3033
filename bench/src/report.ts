/**
 * What a bench prints around its figures: the machine it ran on, and a Markdown table. For new
 * benches (the older ones keep their own copies).
 */
import { spawn } from 'node:child_process'
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

/** How a bench's child process ended: its exit code or signal, and what it printed on stdout. */
export interface ChildRun {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly out: string
}

/**
 * Runs `node <args>` (stderr passed through, stdout collected), SIGKILLed after `timeoutMs`: each
 * side of a bench runs in a fresh process, and none runs past its time.
 */
export function runNodeChild(args: readonly string[], timeoutMs: number): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    proc.stdout.setEncoding('utf8')
    proc.stdout.on('data', (chunk: string) => (out += chunk))
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs)
    proc.on('error', reject)
    proc.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, out })
    })
  })
}
