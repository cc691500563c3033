/**
 * Child processes running ./multi-process-worker.js (plain `node`, the BUILT package: run
 * `npx tsc -b` after changing the sources), for the tests of several seamfs processes on one store.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { SftpServerInfo } from '../../../test-servers/sftp.js'

export const WORKER = fileURLToPath(new URL('./multi-process-worker.js', import.meta.url))

/** What a worker reports when its job ends (see the worker's header). */
export interface WorkerResult {
  readonly pid: number
  /** [file, line] of every edit that succeeded. */
  readonly ok: [string, string][]
  /** [file, line] of every edit that failed flagged indeterminate: it may have landed. */
  readonly maybe: [string, string][]
  readonly failed: Record<string, number>
  readonly messages: string[]
  readonly moves: number
  readonly recreated: number
  readonly lost: string[]
  readonly crashed?: string
}

export interface Worker {
  readonly child: ChildProcess
  /** The first line the worker printed (`{ ready }` for the endless modes). */
  readonly ready: Promise<unknown>
  /** Its last line, parsed, once it exited. */
  readonly done: Promise<WorkerResult>
}

/** Starts a worker on `job` (the server's coordinates added). */
export function startWorker(server: SftpServerInfo, job: Record<string, unknown>): Worker {
  const coords = { host: server.host, port: server.port, username: server.username, privateKey: server.privateKey }
  const child = spawn(process.execPath, [WORKER], {
    env: { ...process.env, SEAMFS_WORKER: JSON.stringify({ server: coords, ...job }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  let onLine: ((line: string) => void) | undefined
  const ready = new Promise<unknown>((resolve) => (onLine = (line) => resolve(JSON.parse(line))))
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString()
    const first = out.split('\n')[0]
    if (out.includes('\n') && first !== undefined && onLine !== undefined) {
      onLine(first)
      onLine = undefined
    }
  })
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()))
  const done = new Promise<WorkerResult>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => {
      const last = out.trim().split('\n').at(-1)
      try {
        resolve(JSON.parse(last ?? '') as WorkerResult)
      } catch {
        reject(new Error(`worker exited (${code ?? signal}) without a result: ${out.slice(-500)} ${err.slice(-2000)}`))
      }
    })
  })
  done.catch(() => undefined)
  return { child, ready, done }
}

/** Sums the failures of several workers by code. */
export function failures(results: readonly WorkerResult[]): Record<string, number> {
  const all: Record<string, number> = {}
  for (const r of results) for (const [code, n] of Object.entries(r.failed)) all[code] = (all[code] ?? 0) + n
  return all
}
