import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { processWide } from '@seamfs/core/backend'
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
 * One message to a pool thread: everything the chunk needs, so any thread can serve it (chunks of
 * different searches interleave on one thread). `text` is whole lines only: the search keeps the
 * unfinished last line itself ({@link RegexWorker}). Lines are split on `\n`, one trailing `\r`
 * stripped; in a `final` text, an empty last piece (after a last newline) is not a line.
 */
export interface ChunkMessage {
  readonly source: string
  readonly flags: string
  readonly maxUnits: number
  readonly text: string
  /** Lines of the file before `text`: the first line of `text` is `line + 1`. */
  readonly line: number
  readonly final: boolean
  readonly keep: number
}

/** A thread's answer to a {@link ChunkMessage}: the matches, and how many lines `text` held. */
export type ChunkReply = (WorkerReply & { readonly lines: number }) | { readonly error: string }

/**
 * The pool thread, as plain JavaScript evaluated by `new Worker(code, { eval: true })`, so it
 * runs the same from the built dist and from the TypeScript sources under a test runner; it loads
 * `worker_threads` by a dynamic `import()`, valid whether the thread evaluates it as CommonJS or
 * (a process started with `--input-type=module`, which threads inherit) as a module. It keeps
 * no state between messages but a small LRU of compiled patterns, keyed by (source, flags); the
 * patterns come from `regexFlags` (`u` or none), never `g` or `y`, so a cached RegExp has no
 * `lastIndex` to carry from one search into another.
 */
export const WORKER_SOURCE = `'use strict'
const CACHED = 16
const compiled = new Map()
function regex(source, flags) {
  const key = flags + '/' + source
  let re = compiled.get(key)
  if (re !== undefined) { compiled.delete(key); compiled.set(key, re); return re }
  re = new RegExp(source, flags)
  compiled.set(key, re)
  if (compiled.size > CACHED) compiled.delete(compiled.keys().next().value)
  return re
}
function cut(line, maxUnits) {
  if (line.length <= maxUnits) return { text: line, cut: false }
  let end = maxUnits
  const unit = line.charCodeAt(end - 1)
  if (unit >= 0xd800 && unit <= 0xdbff) end -= 1
  return { text: line.slice(0, end), cut: true }
}
import('node:worker_threads').then(({ parentPort }) => parentPort.on('message', (m) => {
  let reply
  try {
    const re = regex(m.source, m.flags)
    const parts = m.text.split('\\n')
    const matches = []
    let count = 0
    let lines = 0
    for (let i = 0; i < parts.length; i++) {
      let line = parts[i]
      if (m.final && i === parts.length - 1 && line === '') break
      lines++
      if (line.endsWith('\\r')) line = line.slice(0, -1)
      if (re.test(line)) {
        count++
        if (matches.length < m.keep) { const c = cut(line, m.maxUnits); matches.push({ line: m.line + lines, text: c.text, cut: c.cut }) }
      }
    }
    reply = { matches, count, lines }
  } catch (err) {
    reply = { error: err instanceof Error ? err.message : String(err) }
  }
  parentPort.postMessage(reply)
}))
`

/** A snapshot of a {@link RegexPool}'s threads and queue. */
export interface RegexPoolStats {
  /** The most threads the pool runs at once. */
  readonly maxThreads: number
  /** Threads alive now: busy, idle, and ending (terminated, not yet exited). */
  readonly threads: number
  readonly busy: number
  readonly idle: number
  /** Chunks waiting for a thread (at most one per search). */
  readonly queued: number
  /** The most threads alive at once since the pool began. */
  readonly peakThreads: number
  /** Threads started since the pool began. */
  readonly started: number
  /** Threads terminated because the search of their chunk was abandoned. */
  readonly killed: number
}

export interface RegexPoolOptions {
  /** Default `max(2, os.availableParallelism())`. */
  readonly maxThreads?: number | undefined
  /** How long an idle thread lives (ms); default 10 s. */
  readonly idleMs?: number | undefined
}

/** A chunk submitted to the pool, until its reply (or its abandonment). */
interface Job {
  readonly message: ChunkMessage
  readonly resolve: (reply: ChunkReply) => void
  readonly reject: (err: Error) => void
  readonly signal: AbortSignal | undefined
  readonly onAbort: () => void
  thread: Thread | undefined
  done: boolean
}

interface Thread {
  readonly worker: Worker
  job: Job | undefined
  timer: ReturnType<typeof setTimeout> | undefined
  /** Terminated or failed: never handed another job, counted until it exits. */
  ending: boolean
}

/** The error a chunk of an abandoned search settles with. */
export const ABANDONED = 'regex search abandoned'

/**
 * Threads that run regular expressions over chunks of text, shared by every search in the process
 * ({@link sharedRegexPool}): at most `maxThreads`, started when a chunk finds none idle, ended
 * after `idleMs` idle. A chunk waits in one FIFO queue until a thread is free; a thread holds one
 * chunk at a time, so terminating it (the chunk's search was abandoned: a catastrophic pattern)
 * loses nothing else. A thread that is terminated counts against `maxThreads` until it has exited,
 * so the pool's OS threads never exceed the bound. Idle threads are `unref`ed: an idle pool never
 * keeps the process alive.
 */
export class RegexPool {
  readonly maxThreads: number
  readonly idleMs: number
  readonly #threads = new Set<Thread>()
  /** Idle threads, most recently used last (reused first, so the others age out). */
  readonly #idle: Thread[] = []
  readonly #queue: Job[] = []
  #peak = 0
  #started = 0
  #killed = 0

  constructor(options: RegexPoolOptions = {}) {
    this.maxThreads = Math.max(1, options.maxThreads ?? Math.max(2, availableParallelism()))
    this.idleMs = options.idleMs ?? 10_000
  }

  /**
   * Runs one chunk. When `signal` aborts before the reply, the promise rejects with
   * {@link ABANDONED}: a queued chunk leaves the queue, a running one ends its thread.
   */
  run(message: ChunkMessage, signal?: AbortSignal): Promise<ChunkReply> {
    if (signal?.aborted === true) return Promise.reject(new Error(ABANDONED))
    return new Promise<ChunkReply>((resolve, reject) => {
      const job: Job = { message, resolve, reject, signal, onAbort: () => this.#abandon(job), thread: undefined, done: false }
      signal?.addEventListener('abort', job.onAbort, { once: true })
      this.#queue.push(job)
      this.#pump()
    })
  }

  stats(): RegexPoolStats {
    let busy = 0
    for (const thread of this.#threads) if (thread.job !== undefined) busy++
    return {
      maxThreads: this.maxThreads,
      threads: this.#threads.size,
      busy,
      idle: this.#idle.length,
      queued: this.#queue.length,
      peakThreads: this.#peak,
      started: this.#started,
      killed: this.#killed,
    }
  }

  /** Ends every thread and fails every chunk (a private pool's end; the shared one never closes). */
  close(): void {
    for (const job of this.#queue.splice(0)) this.#settle(job, new Error('regex pool closed'))
    for (const thread of this.#threads) {
      if (thread.job !== undefined) this.#settle(thread.job, new Error('regex pool closed'))
      this.#end(thread)
    }
  }

  /** Hands queued chunks to idle threads, starting threads while under the bound. */
  #pump(): void {
    while (this.#queue.length > 0) {
      let thread = this.#idle.pop()
      if (thread === undefined) {
        if (this.#threads.size >= this.maxThreads) return
        thread = this.#start()
        // Could not start one: the chunk it was for has failed; try the next.
        if (thread === undefined) continue
      }
      const job = this.#queue.shift() as Job
      clearTimeout(thread.timer)
      thread.timer = undefined
      thread.job = job
      job.thread = thread
      thread.worker.ref()
      thread.worker.postMessage(job.message)
    }
  }

  #start(): Thread | undefined {
    let worker: Worker
    try {
      worker = new Worker(WORKER_SOURCE, { eval: true })
    } catch (err) {
      // Cannot start one at all: the waiting chunk fails, as a failed thread's would.
      const job = this.#queue.shift() as Job
      this.#settle(job, new Error(`regex worker failed: ${err instanceof Error ? err.message : String(err)}`))
      return undefined
    }
    const thread: Thread = { worker, job: undefined, timer: undefined, ending: false }
    worker.unref()
    worker.on('message', (reply: ChunkReply) => this.#reply(thread, reply))
    worker.on('error', (err: Error) => {
      // The thread is ending: no more chunks for it; its place is freed when it exits.
      thread.ending = true
      clearTimeout(thread.timer)
      this.#drop(thread)
      this.#fail(thread, new Error(`regex worker failed: ${err.message}`))
    })
    worker.on('exit', (code: number) => {
      this.#fail(thread, new Error(`regex worker exited with code ${code}`))
      clearTimeout(thread.timer)
      this.#drop(thread)
      this.#threads.delete(thread)
      this.#pump()
    })
    this.#threads.add(thread)
    this.#started++
    this.#peak = Math.max(this.#peak, this.#threads.size)
    return thread
  }

  #reply(thread: Thread, reply: ChunkReply): void {
    const job = thread.job
    thread.job = undefined
    if (job !== undefined && !job.done) {
      job.done = true
      job.signal?.removeEventListener('abort', job.onAbort)
      job.resolve(reply)
    }
    if (thread.ending) return
    thread.worker.unref()
    this.#idle.push(thread)
    thread.timer = setTimeout(() => this.#end(thread), this.idleMs)
    thread.timer.unref()
    this.#pump()
  }

  /** Fails the chunk `thread` was running, if any. */
  #fail(thread: Thread, err: Error): void {
    const job = thread.job
    thread.job = undefined
    if (job !== undefined) this.#settle(job, err)
  }

  #abandon(job: Job): void {
    if (job.done) return
    this.#settle(job, new Error(ABANDONED))
    const thread = job.thread
    if (thread === undefined) {
      const at = this.#queue.indexOf(job)
      if (at !== -1) this.#queue.splice(at, 1)
    } else if (thread.job === job) {
      // Its chunk may never end (catastrophic backtracking): the thread goes, a new one starts when needed.
      thread.job = undefined
      this.#killed++
      this.#end(thread)
    }
  }

  #settle(job: Job, err: Error): void {
    if (job.done) return
    job.done = true
    job.signal?.removeEventListener('abort', job.onAbort)
    job.reject(err)
  }

  /** Terminates `thread`; it keeps its place in the bound until it has exited. */
  #end(thread: Thread): void {
    if (thread.ending) return
    thread.ending = true
    clearTimeout(thread.timer)
    this.#drop(thread)
    void thread.worker.terminate().catch(() => undefined)
  }

  /** Takes `thread` off the idle list. */
  #drop(thread: Thread): void {
    const at = this.#idle.indexOf(thread)
    if (at !== -1) this.#idle.splice(at, 1)
  }
}

/** The {@link processWide} name of the shared pool (a bench installs its baseline under it). */
export const REGEX_POOL_KEY = 'tools:regex-pool'

/** The pool every search in this process shares, whichever copy of `@seamfs/tools` asks. */
export function sharedRegexPool(): RegexPool {
  return processWide(REGEX_POOL_KEY, () => new RegexPool())
}

/** A read-only snapshot of the shared pool. */
export function regexPoolStats(): RegexPoolStats {
  return sharedRegexPool().stats()
}

/** What a {@link RegexWorker} runs. */
export interface RegexWorkerOptions {
  /** The pattern and its flags. */
  readonly source: string
  readonly flags: string
  /** The longest match text a reply carries, in UTF-16 units (longer ones are cut). */
  readonly maxUnits: number
  /** The search's stop and budget: every reply is raced against it. */
  readonly control: Pick<SearchControl, 'signal' | 'race'>
  /** Default: the process-wide pool. */
  readonly pool?: RegexPool | undefined
}

/**
 * One search's regular expression over files' text, run on the shared {@link RegexPool}, so a
 * catastrophically backtracking pattern can be stopped: every reply is raced against the search's
 * budget, and when the search stops (its `control` aborts) or is disposed with a chunk in flight,
 * the thread running that chunk is terminated. One chunk in flight at a time; the unfinished last
 * line of a streamed file stays here, so the threads keep no state between chunks.
 */
export class RegexWorker {
  readonly #pool: RegexPool
  /** Aborts when the search stops or is disposed: its chunk in flight is abandoned. */
  readonly #abandon = new AbortController()
  readonly #onStop = (): void => this.#abandon.abort()
  /** The current file's unfinished last line. */
  #carry = ''
  /** Lines of the current file sent so far. */
  #line = 0
  #busy = false

  readonly source: string
  readonly flags: string
  readonly maxUnits: number
  readonly control: Pick<SearchControl, 'signal' | 'race'>

  constructor(options: RegexWorkerOptions) {
    this.source = options.source
    this.flags = options.flags
    this.maxUnits = options.maxUnits
    this.control = options.control
    this.#pool = options.pool ?? sharedRegexPool()
    if (this.control.signal.aborted) this.#abandon.abort()
    else this.control.signal.addEventListener('abort', this.#onStop, { once: true })
  }

  /** Matches one chunk of a file (`first` starts the file, `final` ends it); `keep` bounds how many match texts come back. */
  match(text: string, first: boolean, final: boolean, keep: number): Promise<WorkerReply> {
    if (this.#abandon.signal.aborted) return this.control.race(Promise.reject(new Error(ABANDONED)), 'regex')
    if (this.#busy) return Promise.reject(new Error('RegexWorker: one chunk at a time'))
    if (first) {
      this.#carry = ''
      this.#line = 0
    }
    let body: string
    if (final) {
      body = this.#carry + text
      this.#carry = ''
    } else {
      const end = text.lastIndexOf('\n')
      // No line ends in this chunk: nothing to match yet.
      if (end === -1) {
        this.#carry += text
        return this.control.race(Promise.resolve({ matches: [], count: 0 }), 'regex')
      }
      body = this.#carry + text.slice(0, end)
      this.#carry = text.slice(end + 1)
    }
    const message: ChunkMessage = { source: this.source, flags: this.flags, maxUnits: this.maxUnits, text: body, line: this.#line, final, keep }
    this.#busy = true
    const reply = this.#pool.run(message, this.#abandon.signal).then(
      (answer): WorkerReply => {
        this.#busy = false
        if ('error' in answer) throw new Error(`regex worker failed: ${answer.error}`)
        this.#line += answer.lines
        return { matches: answer.matches, count: answer.count }
      },
      (err: unknown) => {
        this.#busy = false
        throw err
      },
    )
    return this.control.race(reply, 'regex')
  }

  /** Ends the search: a chunk still in flight is abandoned, its thread terminated. Idempotent. */
  dispose(): void {
    this.control.signal.removeEventListener('abort', this.#onStop)
    this.#abandon.abort()
    this.#carry = ''
  }
}
