/**
 * Child agent processes for the multi-process tests: plain `node` on `fixtures/agent.js`, which
 * imports the BUILT package (`dist`, so run `npx tsc -b` after changing `src`), with the server's
 * coordinates passed in the environment. Each agent prints JSON lines; `done` resolves with its
 * result, and every agent is killed when its time limit runs out, so no test waits forever.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readdirSync, statSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { S3ServerInfo } from '../../../test-servers/s3.js'

const AGENT = fileURLToPath(new URL('./fixtures/agent.js', import.meta.url))
const SRC = fileURLToPath(new URL('../src/', import.meta.url))
const DIST = fileURLToPath(new URL('../dist/', import.meta.url))

/** A line an agent printed. */
export interface AgentEvent {
  readonly event: string
  readonly pid: number
  readonly result?: unknown
  readonly error?: string
}

export interface Agent {
  readonly child: ChildProcess
  readonly events: AgentEvent[]
  /** The agent's result (its `done` line); rejects when it failed, died or ran out of time. */
  readonly done: Promise<unknown>
  /** Resolves at the agent's first line of this event. */
  waitFor(event: string): Promise<AgentEvent>
  /** Sends one line to the agent's stdin. */
  send(line: string): void
  /** SIGKILL, and resolves once it has exited. */
  kill(): Promise<void>
}

/** Throws unless every `src/*.ts` of the package has a newer `dist/*.js`: the agents run the built package. */
export function assertBuilt(): void {
  for (const name of readdirSync(SRC).filter((n) => n.endsWith('.ts'))) {
    const built = `${DIST}${name.replace(/\.ts$/, '.js')}`
    let stale: boolean
    try {
      stale = statSync(built).mtimeMs < statSync(`${SRC}${name}`).mtimeMs
    } catch {
      stale = true
    }
    if (stale) throw new Error(`packages/backend-s3/dist is older than src/${name}: run \`npx tsc -b\` first (the agents run the built package)`)
  }
}

/** Starts one agent on `scenario`; it is killed after `limitMs`. */
export function startAgent(server: S3ServerInfo, bucket: string, prefix: string, scenario: string, params: object, limitMs: number): Agent {
  const env = { ...process.env, SEAMFS_AGENT: JSON.stringify({ server, bucket, prefix, scenario, params }) }
  const child = spawn(process.execPath, [AGENT], { env, stdio: ['pipe', 'pipe', 'pipe'] })
  const events: AgentEvent[] = []
  const waiters: { event: string; resolve: (e: AgentEvent) => void }[] = []
  let stderr = ''
  let buffered = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += String(chunk)
  })
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += String(chunk)
    for (let at = buffered.indexOf('\n'); at >= 0; at = buffered.indexOf('\n')) {
      const line = buffered.slice(0, at)
      buffered = buffered.slice(at + 1)
      if (line.trim() === '') continue
      const event = JSON.parse(line) as AgentEvent
      events.push(event)
      for (const w of waiters.filter((x) => x.event === event.event)) w.resolve(event)
    }
  })
  // 'close', not 'exit': the last events are read only once the pipes are closed.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
  const timer = setTimeout(() => child.kill('SIGKILL'), limitMs)
  const done = exited.then((code) => {
    clearTimeout(timer)
    const last = events.find((e) => e.event === 'done')
    if (last !== undefined) return last.result
    const failed = events.find((e) => e.event === 'failed')
    throw new Error(`agent ${scenario} (pid ${child.pid}) ended without a result (exit ${code}): ${failed?.error ?? ''}\n${stderr.slice(-2000)}`)
  })
  // A test that only kills the agent does not look at `done`.
  done.catch(() => undefined)
  return {
    child,
    events,
    done,
    waitFor: (event) => {
      const seen = events.find((e) => e.event === event)
      if (seen !== undefined) return Promise.resolve(seen)
      return Promise.race([
        new Promise<AgentEvent>((resolve) => waiters.push({ event, resolve })),
        exited.then(() => {
          throw new Error(`agent ${scenario} exited before "${event}": ${stderr.slice(-2000)}`)
        }),
      ])
    },
    send: (line) => {
      child.stdin?.write(`${line}\n`)
    },
    kill: async () => {
      child.kill('SIGKILL')
      await exited
    },
  }
}

/** The lock object of an object key (the naming `leases.ts` documents): `/.seamfs-locks/<sha256 hex of the key>`. */
export function lockObjectKey(objectKey: string): string {
  return `/.seamfs-locks/${createHash('sha256').update(objectKey).digest('hex')}`
}
