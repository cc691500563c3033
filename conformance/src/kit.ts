import { describe, expect, it } from 'vitest'
import { isFsError, type FileSystem, type FsCapabilities, type FsErrorCode, type FsTarget, type FsWriteOutcome } from '@seamfs/core'
import type { ConformanceOptions, ConformanceSubject, ConformanceTuning, CreateContext, ExternalHooks } from './types.js'

type HookName = keyof ExternalHooks

/** What a gated group needs: capability flags that must be truthy, and external hooks. */
export interface Needs {
  readonly caps?: readonly (keyof FsCapabilities)[]
  readonly hooks?: readonly HookName[]
}

/** The resolved tuning: every field set. */
export type Tuning = Required<{ [K in keyof ConformanceTuning]: NonNullable<ConformanceTuning[K]> }>

/** One test's world: a fresh subject plus helpers that keep the clauses short. */
export class Env {
  readonly subject: ConformanceSubject
  readonly #external: ExternalHooks

  constructor(subject: ConformanceSubject, external: ExternalHooks) {
    this.subject = subject
    this.#external = external
  }

  get fs(): FileSystem {
    return this.subject.fs
  }

  resolve(path: string): Promise<FsTarget> {
    return this.fs.resolve(path)
  }

  async write(path: string, content: string): Promise<FsWriteOutcome> {
    return this.fs.writeText(await this.resolve(path), content)
  }

  async read(path: string): Promise<string> {
    return this.fs.readText(await this.resolve(path))
  }

  async stream(path: string): Promise<string[]> {
    const chunks: string[] = []
    for await (const chunk of await this.fs.streamText(await this.resolve(path))) chunks.push(chunk)
    return chunks
  }

  async names(dir = '.'): Promise<string[]> {
    return (await this.fs.listDir(await this.resolve(dir))).map((e) => e.name)
  }

  async writeBytes(path: string, bytes: Uint8Array | string): Promise<void> {
    const data = typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes
    await required(this.#external.writeBytes, 'writeBytes')(this.subject, path, data)
  }

  async readBytes(path: string): Promise<Uint8Array> {
    return required(this.#external.readBytes, 'readBytes')(this.subject, path)
  }

  async remove(path: string): Promise<void> {
    await required(this.#external.remove, 'remove')(this.subject, path)
  }

  async symlink(path: string, target: string): Promise<void> {
    await required(this.#external.symlink, 'symlink')(this.subject, path, target)
  }

  async dispose(): Promise<void> {
    try {
      await this.subject.dispose?.()
    } finally {
      await this.fs.close()
    }
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
  try {
    await (typeof operation === 'function' ? operation() : operation)
    return 'ok'
  } catch (err) {
    if (!isFsError(err)) {
      const shown = err instanceof Error ? `${err.name}: ${err.message}` : String(err)
      expect.fail(`a raw error escaped instead of an FsError: ${shown}`)
    }
    return err.code
  }
}

/** Registers the tests of one backend; clauses call `group` and `test`. */
export class Kit {
  readonly caps: FsCapabilities
  readonly tuning: Tuning
  readonly #options: ConformanceOptions
  readonly #external: ExternalHooks

  constructor(options: ConformanceOptions, caps: FsCapabilities, tuning: Tuning) {
    this.#options = options
    this.#external = options.external ?? {}
    this.caps = caps
    this.tuning = tuning
  }

  /** Why `needs` is not met, or undefined when it is. */
  unmet(needs: Needs): string | undefined {
    const missingCaps = (needs.caps ?? []).filter((c) => this.caps[c] === false)
    const missingHooks = (needs.hooks ?? []).filter((h) => this.#external[h] === undefined)
    const reasons = [...missingCaps.map((c) => `capabilities.${c} is false`), ...missingHooks.map((h) => `no external.${h} hook`)]
    return reasons.length === 0 ? undefined : reasons.join(', ')
  }

  /** A describe block; skipped as a whole, with the reason in its title, when `needs` is unmet. */
  group(title: string, needs: Needs, body: () => void): void {
    const reason = this.unmet(needs)
    if (reason === undefined) describe(title, body)
    else describe.skip(`${title} (skipped: ${reason})`, body)
  }

  /** A test with a fresh subject (built with `context`), disposed afterwards whatever happens. */
  test(name: string, body: (env: Env) => Promise<void>, timeoutMs = this.tuning.timeoutMs, context: CreateContext = {}): void {
    it(name, async () => this.withEnv(body, context), timeoutMs)
  }

  /** Runs `body` against a fresh subject (also used by the model-based test, once per run). */
  async withEnv<T>(body: (env: Env) => Promise<T>, context: CreateContext = {}): Promise<T> {
    const env = new Env(await this.#options.create(context), this.#external)
    try {
      return await body(env)
    } finally {
      await env.dispose()
    }
  }

  /** A test gated on its own needs; skipped with the reason in its title. */
  testIf(name: string, needs: Needs, body: (env: Env) => Promise<void>): void {
    const reason = this.unmet(needs)
    if (reason === undefined) this.test(name, body)
    else it.skip(`${name} (skipped: ${reason})`, () => undefined)
  }
}
