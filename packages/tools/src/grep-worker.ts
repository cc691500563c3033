import { Worker } from 'node:worker_threads'
import type { SearchControl } from './walk.js'

/** One matching line as the worker reports it: `text` is cut to `maxUnits` UTF-16 units (never inside a pair). */
export interface WorkerMatch {
  readonly line: number
  readonly text: string
  /** The line was longer than `text`. */
  readonly cut: boolean
}

/** The worker's answer to one chunk: up to `keep` matches, and how many lines matched in all. */
export interface WorkerReply {
  readonly matches: WorkerMatch[]
  readonly count: number
}

/**
 * The worker, as plain JavaScript evaluated by `new Worker(code, { eval: true })`,
 * so it runs the same from the built dist and from the TypeScript sources under
 * a test runner. It compiles the pattern once, then takes a file as chunks:
 * `first` resets the line state, `final` flushes the last line. Lines are split
 * on `\n` with one trailing `\r` stripped; a final empty piece (after a last
 * newline) is not a line.
 */
export const WORKER_SOURCE = `'use strict'
const { parentPort, workerData } = require('node:worker_threads')
const re = new RegExp(workerData.source, workerData.flags)
const maxUnits = workerData.maxUnits
let carry = ''
let lineNo = 0
function cut(line) {
  if (line.length <= maxUnits) return { text: line, cut: false }
  let end = maxUnits
  const unit = line.charCodeAt(end - 1)
  if (unit >= 0xd800 && unit <= 0xdbff) end -= 1
  return { text: line.slice(0, end), cut: true }
}
parentPort.on('message', (m) => {
  if (m.first) { carry = ''; lineNo = 0 }
  const parts = (carry + m.text).split('\\n')
  carry = m.final ? '' : parts.pop()
  const matches = []
  let count = 0
  for (let i = 0; i < parts.length; i++) {
    let line = parts[i]
    if (m.final && i === parts.length - 1 && line === '') break
    lineNo++
    if (line.endsWith('\\r')) line = line.slice(0, -1)
    if (re.test(line)) {
      count++
      if (matches.length < m.keep) { const c = cut(line); matches.push({ line: lineNo, text: c.text, cut: c.cut }) }
    }
  }
  parentPort.postMessage({ matches, count })
})
`

interface Pending {
  readonly resolve: (reply: WorkerReply) => void
  readonly reject: (err: Error) => void
}

/**
 * Runs a regular expression over files' text in a worker thread, so a
 * catastrophically backtracking pattern can be stopped: every reply is raced
 * against the search's budget, and {@link dispose} terminates the thread.
 * Started lazily on the first chunk; one chunk in flight at a time.
 */
export class RegexWorker {
  #worker: Worker | undefined
  #pending: Pending | undefined

  constructor(
    readonly source: string,
    readonly flags: string,
    readonly maxUnits: number,
    readonly control: SearchControl,
  ) {}

  /** Matches one chunk of a file; `keep` bounds how many match texts come back. */
  match(text: string, first: boolean, final: boolean, keep: number): Promise<WorkerReply> {
    const worker = this.#start()
    const reply = new Promise<WorkerReply>((resolve, reject) => {
      this.#pending = { resolve, reject }
    })
    worker.postMessage({ text, first, final, keep })
    return this.control.race(reply, 'regex')
  }

  /** Stops the thread, whatever it is doing. Idempotent. */
  dispose(): void {
    const worker = this.#worker
    this.#worker = undefined
    this.#pending = undefined
    if (worker !== undefined) void worker.terminate().catch(() => undefined)
  }

  #start(): Worker {
    if (this.#worker !== undefined) return this.#worker
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { source: this.source, flags: this.flags, maxUnits: this.maxUnits },
    })
    worker.on('message', (reply: WorkerReply) => this.#settle()?.resolve(reply))
    worker.on('error', (err: Error) => this.#settle()?.reject(new Error(`regex worker failed: ${err.message}`)))
    worker.on('exit', (code) => {
      if (this.#worker === worker) this.#worker = undefined
      this.#settle()?.reject(new Error(`regex worker exited with code ${code}`))
    })
    this.#worker = worker
    return worker
  }

  #settle(): Pending | undefined {
    const pending = this.#pending
    this.#pending = undefined
    return pending
  }
}
