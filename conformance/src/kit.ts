import { appendFileSync } from 'node:fs'
import { afterEach, beforeEach, describe, expect, it, type RunnerTask } from 'vitest'
import { isFsError, type FileSystem, type FsCapabilities, type FsErrorCode, type FsTarget, type FsWriteOutcome } from '@seamfs/core'
import { contractRefusal } from './clauses/final-methods.js'
import { failureNote } from './report.js'
import type { ConformanceOptions, ConformanceSubject, ConformanceTuning, CreateContext, CrossProcessHook, ExternalHooks } from './types.js'

type HookName = keyof ExternalHooks

/** What a gated group needs: capability flags that must be truthy, and external hooks. */
export interface Needs {
  readonly caps?: readonly (keyof FsCapabilities)[]
  readonly hooks?: readonly HookName[]
  /** The test makes the subject write: skipped on a store that does not (`capabilities.readOnly`). */
  readonly writes?: boolean
}

/** The resolved tuning: every field set. */
export type Tuning = Required<{ [K in keyof ConformanceTuning]: NonNullable<ConformanceTuning[K]> }>

/**
 * Lets the event loop turn once (timers, I/O, other tasks). A backend may complete
 * operations without an event-loop turn; a kit loop over such operations would
 * starve everything else, its own timeout included. Every loop of the kit awaits
 * this between operations (the {@link Env} helpers and {@link codeOf} already do).
 */
export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

/** Vitest's own timeout sits this much past the kit's, so the kit's clearer message wins. */
const VITEST_TIMEOUT_MARGIN_MS = 1_000

const seconds = (ms: number): string => String(Math.round(ms / 100) / 10)

/** One test's world: a fresh subject plus helpers that keep the clauses short. */
export class Env {
  readonly subject: ConformanceSubject
  readonly #external: ExternalHooks
  /** The subject does not write (`capabilities.readOnly`): fixtures go through the external hooks. */
  readonly #readOnly: boolean
  #ended: string | undefined

  constructor(subject: ConformanceSubject, external: ExternalHooks, readOnly = false) {
    this.subject = subject
    this.#external = external
    this.#readOnly = readOnly
  }

  /** The filesystem under test; throws once the test has ended (timed out), so work it left behind stops. */
  get fs(): FileSystem {
    return this.#live().fs
  }

  /** Closes this env to its test's leftover work (a runaway loop, a recursion): its next call throws `reason`. */
  end(reason: string): void {
    this.#ended ??= reason
  }

  async resolve(path: string): Promise<FsTarget> {
    await yieldToLoop()
    return this.fs.resolve(path)
  }

  /**
   * Makes `path` hold `content`: through the subject, or, on a store that does not write, through
   * `external.writeBytes` (the outcome then is what a write would have said: its version the next `stat`'s).
   */
  async write(path: string, content: string): Promise<FsWriteOutcome> {
    if (!this.#readOnly) return this.fs.writeText(await this.resolve(path), content)
    const target = await this.resolve(path)
    const existed = (await this.fs.stat(target)) !== undefined
    await this.writeBytes(path, content)
    const version = (await this.fs.stat(target))?.version
    if (version === undefined) throw new Error(`external.writeBytes("${path}") left nothing the subject can stat`)
    const after = (content.charCodeAt(0) === 0xfeff ? content.slice(1) : content).replaceAll('\r\n', '\n')
    return { operation: existed ? 'update' : 'create', version, before: null, after }
  }

  async read(path: string): Promise<string> {
    return this.fs.readText(await this.resolve(path))
  }

  async stream(path: string): Promise<string[]> {
    const chunks: string[] = []
    for await (const chunk of await this.fs.streamText(await this.resolve(path))) {
      chunks.push(chunk)
      await yieldToLoop()
    }
    return chunks
  }

  async names(dir = '.'): Promise<string[]> {
    return (await this.fs.listDir(await this.resolve(dir))).map((e) => e.name)
  }

  async writeBytes(path: string, bytes: Uint8Array | string): Promise<void> {
    const data = typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes
    await required(this.#external.writeBytes, 'writeBytes')(this.#live(), path, data)
  }

  async readBytes(path: string): Promise<Uint8Array> {
    return required(this.#external.readBytes, 'readBytes')(this.#live(), path)
  }

  async remove(path: string): Promise<void> {
    await required(this.#external.remove, 'remove')(this.#live(), path)
  }

  async chmod(path: string, mode: number): Promise<void> {
    await required(this.#external.chmod, 'chmod')(this.#live(), path, mode)
  }

  async mode(path: string): Promise<number> {
    return required(this.#external.mode, 'mode')(this.#live(), path)
  }

  async symlink(path: string, target: string): Promise<void> {
    await required(this.#external.symlink, 'symlink')(this.#live(), path, target)
  }

  async dispose(): Promise<void> {
    try {
      await this.subject.dispose?.()
    } finally {
      await this.subject.fs.close()
    }
  }

  /** The subject, for a hook; throws once the test has ended. */
  #live(): ConformanceSubject {
    if (this.#ended !== undefined) throw new Error(this.#ended)
    return this.subject
  }
}

function required<T>(hook: T | undefined, name: string): T {
  if (hook === undefined) throw new Error(`the test needs external.${name}, which this backend does not provide`)
  return hook
}

/**
 * The code an operation failed with, or `'ok'`. Anything thrown that is not an
 * `FsError` fails the test: nothing may escape as a raw error.
 */
export async function codeOf(operation: Promise<unknown> | (() => Promise<unknown>)): Promise<FsErrorCode | 'ok'> {
  let code: FsErrorCode | 'ok' = 'ok'
  try {
    await (typeof operation === 'function' ? operation() : operation)
  } catch (err) {
    if (!isFsError(err)) {
      const shown = err instanceof Error ? `${err.name}: ${err.message}` : String(err)
      expect.fail(`a raw error escaped instead of an FsError: ${shown}`)
    }
    code = err.code
  }
  // After the operation settles, not before: a promise given here must have its handler at once.
  await yieldToLoop()
  return code
}

/** Registers the tests of one backend; clauses call `group` and `test`. */
export class Kit {
  readonly caps: FsCapabilities
  readonly tuning: Tuning
  readonly #options: ConformanceOptions
  readonly #external: ExternalHooks
  /** Envs of the running test (several for the model-based test): ended together when it times out. */
  readonly #live = new Set<Env>()
  /** How to open the subject's store in another process, when the backend gives it. */
  readonly crossProcess: CrossProcessHook | undefined

  constructor(options: ConformanceOptions, caps: FsCapabilities, tuning: Tuning) {
    this.#options = options
    this.crossProcess = options.crossProcess
    this.#external = options.external ?? {}
    this.caps = caps
    this.tuning = tuning
  }

  /** Why `needs` is not met, or undefined when it is. */
  unmet(needs: Needs): string | undefined {
    // An optional capability left out is not declared: its operation is FS_UNSUPPORTED.
    const missingCaps = (needs.caps ?? []).filter((c) => this.caps[c] === false || this.caps[c] === undefined)
    const missingHooks = (needs.hooks ?? []).filter((h) => this.#external[h] === undefined)
    const reasons = [
      ...(needs.writes === true && this.caps.readOnly === true ? ['the store does not write (capabilities.readOnly)'] : []),
      ...missingCaps.map((c) => `capabilities.${c} is ${this.caps[c] === undefined ? 'not declared' : 'false'}`),
      ...missingHooks.map((h) => `no external.${h} hook`),
    ]
    return reasons.length === 0 ? undefined : reasons.join(', ')
  }

  /** A describe block; skipped as a whole, with the reason in its title, when `needs` is unmet. */
  group(title: string, needs: Needs, body: () => void): void {
    const reason = this.unmet(needs)
    if (reason === undefined) describe(title, body)
    else describe.skip(`${title} (skipped: ${reason})`, body)
  }

  /** A describe block; skipped as a whole with `reason` in its title when there is one. */
  groupIf(title: string, reason: string | undefined, body: () => void): void {
    if (reason === undefined) describe(title, body)
    else describe.skip(`${title} (skipped: ${reason})`, body)
  }

  /**
   * A test with a fresh subject (built with `context`), disposed afterwards whatever happens.
   * It fails after `timeoutMs` with a message that says so; its envs are then ended, so
   * whatever it left running stops at its next call. The timer needs the event loop to
   * turn: a backend that never returns control is the runner's watchdog's to stop.
   */
  test(name: string, body: (env: Env) => Promise<void>, timeoutMs = this.tuning.timeoutMs, context: CreateContext = {}): void {
    it(name, async () => this.#withDeadline(() => this.withEnv(body, context), timeoutMs), timeoutMs + VITEST_TIMEOUT_MARGIN_MS)
  }

  /** Runs `body` against a fresh subject (also used by the model-based test, once per run). */
  async withEnv<T>(body: (env: Env) => Promise<T>, context: CreateContext = {}): Promise<T> {
    await yieldToLoop()
    const env = new Env(await this.#options.create(context), this.#external, this.caps.readOnly === true)
    // Every subject, not only the probe: a factory may build a different one per context.
    const refusal = contractRefusal(env.subject.fs)
    if (refusal !== undefined) {
      await env.dispose()
      throw new Error(refusal)
    }
    this.#live.add(env)
    try {
      return await body(env)
    } finally {
      this.#live.delete(env)
      await env.dispose()
    }
  }

  /** A test gated on its own needs; skipped with the reason in its title. */
  testIf(name: string, needs: Needs, body: (env: Env) => Promise<void>): void {
    const reason = this.unmet(needs)
    if (reason === undefined) this.test(name, body)
    else it.skip(`${name} (skipped: ${reason})`, () => undefined)
  }

  async #withDeadline<T>(work: () => Promise<T>, timeoutMs: number): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const reason = `timed out after ${seconds(timeoutMs)} s: an operation of the backend never settled, or is slower than the per-test timeout (options.timeoutMs, --timeout)`
        for (const env of this.#live) env.end(reason)
        reject(new Error(reason))
      }, timeoutMs)
    })
    try {
      return await Promise.race([work(), deadline])
    } finally {
      clearTimeout(timer)
    }
  }
}

/** One line of the progress log the runner's watchdog reads. */
export type ProgressEvent =
  | { readonly event: 'load'; readonly pid: number }
  | { readonly event: 'probe'; readonly timeoutMs: number }
  | { readonly event: 'registered' }
  | { readonly event: 'collected'; readonly tests: readonly CollectedTest[] }
  | { readonly event: 'start'; readonly id: string; readonly timeoutMs: number }
  | { readonly event: 'end'; readonly id: string; readonly state: string; readonly note?: string | undefined }

/** A registered test, as the progress log lists it before the first one runs. */
export interface CollectedTest {
  readonly id: string
  /** Titles of the enclosing groups, outermost first (the suite, then the clause). */
  readonly path: readonly string[]
  readonly name: string
  readonly mode: string
}

function collectedTests(tasks: readonly RunnerTask[], path: readonly string[] = []): CollectedTest[] {
  return tasks.flatMap((task) =>
    task.type === 'test'
      ? [{ id: task.id, path, name: task.name, mode: task.mode }]
      : task.type === 'suite'
        ? collectedTests(task.tasks, [...path, task.name])
        : [],
  )
}

/**
 * For the runner (not part of the kit's API): logs the run's progress to `file`,
 * one JSON line per event (the test list, each test's start and end). The writes are
 * synchronous, so the log is complete up to the moment a backend stops returning
 * control, which vitest's own reporting (batched, asynchronous) is not. Call it at the
 * top level of the test file; it returns the logger for the file's own events.
 */
export function logProgressTo(file: string): (event: ProgressEvent) => void {
  const log = (event: ProgressEvent): void => appendFileSync(file, `${JSON.stringify({ ...event, at: Date.now() })}\n`)
  let listed = false
  beforeEach(({ task }) => {
    if (!listed) log({ event: 'collected', tests: collectedTests(task.file.tasks) })
    listed = true
    log({ event: 'start', id: task.id, timeoutMs: task.timeout })
  })
  afterEach(({ task }) => log({ event: 'end', id: task.id, state: task.result?.state ?? 'run', note: failureNote(task.result?.errors?.[0]?.message) }))
  return log
}
