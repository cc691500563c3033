import { AsyncLocalStorage } from 'node:async_hooks'
import { isFsError, type FsErrorCode, type FsVerb } from './errors.js'
import type { FileSystem } from './file-system.js'
import type { Awaitable, RemoveRequest, RenameRequest, UpdateRequest, WriteRequest, WriteResult } from './hooks.js'
import { FileSystemLayer } from './layer.js'
import { translateError } from './translate.js'
import type { FsRemoveOutcome, FsRenameOutcome, FsTarget, FsTargetKey, FsVersion } from './types.js'

/**
 * Who is acting: a session id or object the caller names (an agent run, an MCP connection). The
 * tools run each call as its session ({@link actingAs}); a host can name its own around any call.
 */
export type FsActor = string | object

const acting = new AsyncLocalStorage<FsActor>()

/**
 * Whether anything in this process reads actors. Until something does, {@link actingAs} only runs
 * `fn`: on Node 20 the first `AsyncLocalStorage.run` turns on promise hooks for the whole process,
 * which roughly doubles the cost of every promise the host makes afterwards (a 200 B tool read went
 * from 20 to 37 µs), a tax for a name nobody reads.
 */
let tracked = false

/**
 * Starts carrying actors: from now on {@link actingAs} names its actor to the calls it runs. An
 * `EventedFileSystem` and a `TracedFileSystem` call it when they are made, and {@link currentActor}
 * the first time it is asked; a host with its own reader made before any call calls it once.
 */
export function trackActors(): void {
  tracked = true
}

/**
 * Runs `fn` as `actor`: the change events of the calls it makes (and their continuations) name it.
 * Actors are carried once something reads them ({@link trackActors}); calls already under way then
 * carry none.
 */
export function actingAs<T>(actor: FsActor | undefined, fn: () => T): T {
  return actor === undefined || !tracked ? fn() : acting.run(actor, fn)
}

/** The actor of the call running now, if one was named (see {@link actingAs}). */
export function currentActor(): FsActor | undefined {
  tracked = true
  return acting.getStore()
}

/** A place in the store: the path as the caller gave it (resolved) and the store's key for it. */
export interface FsEventTarget {
  readonly path: string
  readonly key: FsTargetKey
}

interface EventBase {
  /** The operation, as `FsError.verb` names it. */
  readonly verb: FsVerb
  readonly target: FsEventTarget
  /** The actor the call ran as ({@link actingAs}); absent when none was named. */
  readonly actor?: FsActor | undefined
  /** When the operation ended (ms since the epoch), and how long it took. */
  readonly at: number
  readonly durationMs: number
}

/**
 * A change the store made: a file created or updated (`write` of text or bytes, `edit`), removed,
 * renamed, or a directory created. Versions are the store's (`stat().version`): `versionAfter` is
 * always there for a file that exists afterwards; `versionBefore` only where the operation knew it
 * without another look (a guard named it, a remove or rename reported it).
 */
export interface FsChangeEvent extends EventBase {
  readonly kind: 'create' | 'update' | 'remove' | 'rename' | 'create directory'
  readonly type: 'file' | 'directory'
  /** For a rename: where it went. */
  readonly to?: FsEventTarget | undefined
  readonly versionBefore?: FsVersion | undefined
  readonly versionAfter?: FsVersion | undefined
  /** The bytes written: the new content's size (a write, an edit). */
  readonly bytes?: number | undefined
  /** For a remove: the entries removed (a file is 1). For a rename: whether it replaced a file at `to`. */
  readonly entries?: number | undefined
  readonly replaced?: boolean | undefined
}

/**
 * A mutation that failed or was refused (a fence, a guard, a missing file): its `FsError` code.
 * `indeterminate`: its answer was lost, so it may have happened all the same.
 */
export interface FsFailureEvent extends EventBase {
  readonly kind: 'failed'
  readonly code: FsErrorCode
  readonly indeterminate: boolean
  /** For a rename: where it was going. */
  readonly to?: FsEventTarget | undefined
}

export type FsEvent = FsChangeEvent | FsFailureEvent

/** Gets each event as it happens; called synchronously, after the store answered and before the caller hears. */
export type FsEventListener = (event: FsEvent) => void

/** Options of {@link EventedFileSystem}. */
export interface EventedOptions {
  /**
   * A listener that throws does not fail the operation (it happened): its error goes here. Default:
   * a process warning (`process.emitWarning`), never silence.
   */
  readonly onListenerError?: ((err: unknown, event: FsEvent) => void) | undefined
}

const at = (target: FsTarget): FsEventTarget => ({ path: target.displayPath, key: target.targetKey })

/**
 * A layer that tells listeners what changed in the store under it, whatever the store: every
 * write, edit, remove, rename and directory creation that lands, and every one that fails, with
 * its `FsError` code. Put it outside a sandbox to see the sandbox's refusals too; inside one to
 * see only what reached the store.
 *
 * Rules:
 * - an event is emitted once the store answered, before the caller's promise settles; a late
 *   answer of a call that was already reported aborted (`indeterminate`) is emitted when it comes;
 * - with no listener attached, the layer only forwards: no event is built, no clock is read;
 * - listeners are synchronous: a slow one slows every mutation (hand work to a queue); one that
 *   throws does not fail the operation ({@link EventedOptions.onListenerError});
 * - contents are never in an event: sizes and versions only;
 * - reads are not events (trace them with the tools' spans).
 */
export class EventedFileSystem extends FileSystemLayer {
  readonly #listeners = new Set<FsEventListener>()
  readonly #onListenerError: (err: unknown, event: FsEvent) => void

  /** Reads go to the store as they are: its `keyBoundReads` holds here too. */
  protected override readsThrough(): boolean {
    return true
  }

  constructor(inner: FileSystem, options: EventedOptions = {}) {
    super(inner)
    trackActors()
    this.#onListenerError =
      options.onListenerError ??
      ((err) =>
        process.emitWarning(`a change listener of EventedFileSystem threw: ${err instanceof Error ? err.message : String(err)}`, 'SeamfsListenerWarning'))
  }

  // The fence of a write goes on to the store, as it would without this layer (S3 and SFTP send the write with the fence's check).
  protected override takesFence(): boolean {
    return this.innerTakesFence()
  }

  /** Adds a listener; returns what removes it. */
  on(listener: FsEventListener): () => void {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  /** How many listeners are attached. */
  get listenerCount(): number {
    return this.#listeners.size
  }

  #emit(event: FsEvent): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(event)
      } catch (err) {
        this.#onListenerError(err, event)
      }
    }
  }

  /** Runs a mutation's hook; emits what it changed, or its failure. */
  async #watched<T>(
    verb: FsVerb,
    target: FsTarget,
    run: () => Awaitable<T>,
    changed: (result: T) => Omit<FsChangeEvent, keyof EventBase> | undefined,
    to?: FsTarget,
  ): Promise<T> {
    const started = performance.now()
    const actor = currentActor()
    const base = (): EventBase => ({
      verb,
      target: at(target),
      ...(actor === undefined ? {} : { actor }),
      at: Date.now(),
      durationMs: performance.now() - started,
    })
    let result: T
    try {
      result = await run()
    } catch (err) {
      const error = isFsError(err) ? err : translateError(err, verb, target.displayPath, (e) => this.errorRow(e))
      this.#emit({ ...base(), kind: 'failed', code: error.code, indeterminate: error.indeterminate, ...(to === undefined ? {} : { to: at(to) }) })
      throw err
    }
    const change = changed(result)
    if (change !== undefined) this.#emit({ ...base(), ...change })
    return result
  }

  protected override publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Awaitable<WriteResult> {
    if (this.#listeners.size === 0) return super.publishBytes(target, bytes, request)
    const guarded = request.expected?.kind === 'replaceIfVersion' ? request.expected.version : undefined
    return this.#watched(
      'write',
      target,
      () => super.publishBytes(target, bytes, request),
      (result) => ({
        kind: result.created ? 'create' : 'update',
        type: 'file',
        ...(guarded === undefined ? {} : { versionBefore: guarded }),
        versionAfter: result.version,
        bytes: bytes.length,
      }),
    )
  }

  protected override updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Awaitable<FsVersion> {
    if (this.#listeners.size === 0) return super.updateBytes(target, request, transform)
    let written: number | undefined
    const measured = (bytes: Uint8Array): Uint8Array => {
      const next = transform(bytes)
      written = next.length
      return next
    }
    return this.#watched(
      'edit',
      target,
      () => super.updateBytes(target, request, measured),
      (version) => ({
        kind: 'update',
        type: 'file',
        ...(request.expected === undefined ? {} : { versionBefore: request.expected.version }),
        versionAfter: version,
        ...(written === undefined ? {} : { bytes: written }),
      }),
    )
  }

  protected override removeTarget(target: FsTarget, request: RemoveRequest): Awaitable<FsRemoveOutcome> {
    if (this.#listeners.size === 0) return super.removeTarget(target, request)
    return this.#watched(
      'remove',
      target,
      () => super.removeTarget(target, request),
      (outcome) => ({
        kind: 'remove',
        type: outcome.type,
        entries: outcome.entries,
        ...(request.expected === undefined ? {} : { versionBefore: request.expected.version }),
      }),
    )
  }

  protected override renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Awaitable<FsRenameOutcome> {
    if (this.#listeners.size === 0) return super.renameTarget(from, to, request)
    return this.#watched(
      'rename',
      from,
      () => super.renameTarget(from, to, request),
      (outcome) => ({
        kind: 'rename',
        type: outcome.type,
        to: at(to),
        replaced: outcome.replaced,
        ...(request.expected === undefined ? {} : { versionBefore: request.expected.version }),
        versionAfter: outcome.version,
      }),
      to,
    )
  }

  // A rename refused before it reaches the store (a fence checks here) is a failure too; one that
  // passes is told by renameTarget. A rename onto itself changes nothing: only its failure is told.
  protected override prepareRename(from: FsTarget, to: FsTarget, request: RenameRequest): Awaitable<readonly [FsTarget, FsTarget]> {
    if (this.#listeners.size === 0) return super.prepareRename(from, to, request)
    return this.#watched(
      'rename',
      from,
      () => super.prepareRename(from, to, request),
      () => undefined,
      to,
    )
  }

  protected override renameInPlace(target: FsTarget, request: RenameRequest): Awaitable<FsRenameOutcome> {
    if (this.#listeners.size === 0) return super.renameInPlace(target, request)
    return this.#watched(
      'rename',
      target,
      () => super.renameInPlace(target, request),
      () => undefined,
      target,
    )
  }

  protected override makeDirectory(target: FsTarget, signal: AbortSignal | undefined): Awaitable<boolean> {
    if (this.#listeners.size === 0) return super.makeDirectory(target, signal)
    // An existing directory is no change: nothing to tell (its failures still are).
    return this.#watched(
      'create directory',
      target,
      () => super.makeDirectory(target, signal),
      (created) => (created ? { kind: 'create directory', type: 'directory' } : undefined),
    )
  }
}
