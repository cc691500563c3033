import { FsError, isFsError, MUTATION_VERBS, type FsVerb } from './errors.js'

/** A hook's answer: its value, or a promise of it. */
type Awaitable<T> = T | PromiseLike<T>

/**
 * How long an aborted mutation's hook may still take to answer by itself (ms). A backend that
 * honours its signal answers within it, definitely (`FS_ABORTED` with nothing changed, or the
 * outcome of a publication that had begun); past it the caller is told `FS_ABORTED` with the
 * outcome unknown ({@link FsError.indeterminate}). Reads do not wait: their late answer changes nothing.
 */
export const ABORT_GRACE_MS = 20

/** What runs at each signal's abort, in the order added, with the one listener that runs it. */
const waiting = new WeakMap<AbortSignal, { readonly due: Set<() => void>; readonly listener: () => void }>()

/** Signals of {@link sharedAbortController}s: their one listener stays until they abort. */
const kept = new WeakSet<AbortSignal>()

/**
 * A controller whose signal many calls wait on (the deadline that tool calls due together share):
 * the listener {@link whenAborted} adds to it stays until it aborts, so a call's wait costs a set
 * entry, not an `addEventListener` and a `removeEventListener` (about 0.8 µs, several times a tool
 * call). Only for a plain controller its maker lets go of: a listener left on an `AbortSignal.any` or
 * `AbortSignal.timeout` signal keeps it alive in Node until it aborts.
 */
export function sharedAbortController(): AbortController {
  const controller = new AbortController()
  kept.add(controller.signal)
  return controller
}

/**
 * Runs `fn` once `signal` aborts (not when it already has); the returned function stops that. A
 * signal gets one listener however many store calls wait on it at once; it is removed when the last
 * wait stops, but on a {@link sharedAbortController}'s signal.
 */
export function whenAborted(signal: AbortSignal, fn: () => void): () => void {
  let entry = waiting.get(signal)
  if (entry === undefined) {
    const due = new Set<() => void>()
    const listener = (): void => {
      waiting.delete(signal)
      for (const f of due) f()
    }
    signal.addEventListener('abort', listener, { once: true })
    entry = { due, listener }
    waiting.set(signal, entry)
  }
  const { due, listener } = entry
  due.add(fn)
  return () => {
    if (!due.delete(fn) || due.size > 0 || kept.has(signal)) return
    signal.removeEventListener('abort', listener)
    if (waiting.get(signal)?.due === due) waiting.delete(signal)
  }
}

/** Whether a hook answered with a promise (or any thenable) rather than its value. */
export function isPromiseLike<T>(value: Awaitable<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function'
}

/**
 * Waits for a hook's answer, but no longer than `signal` allows: a store that hangs
 * mid-request (a frozen server, a dead link that no keepalive has noticed yet) cannot hold the
 * caller past its abort. After the abort the hook runs on; its late answer is consumed here (a
 * late failure is dropped; `onLate` gets a late value, to release what it holds), and what it
 * made is cleaned by the backend's own paths, as after any failure.
 *
 * A read is `FS_ABORTED` at once. A mutation gets {@link ABORT_GRACE_MS} to answer by itself,
 * then `FS_ABORTED` flagged `indeterminate`: its request may have reached the store. A hook that
 * fails with the signal's own reason (`signal.throwIfAborted()`) aborted by itself: `FS_ABORTED`.
 */
export function untilAborted<T>(answer: Awaitable<T>, signal: AbortSignal | undefined, verb: FsVerb, onLate?: (value: T) => void): Awaitable<T> {
  if (signal === undefined || !isPromiseLike(answer)) return answer
  const mutation = MUTATION_VERBS.has(verb)
  return new Promise<T>((resolve, reject) => {
    let settled = false
    let grace: ReturnType<typeof setTimeout> | undefined
    let stopWaiting = (): void => undefined
    const giveUp = (): void => {
      if (settled) return
      settled = true
      reject(FsError.aborted(verb, signal.reason, { indeterminate: mutation }))
    }
    const onAbort = (): void => {
      if (!mutation) return giveUp()
      grace = setTimeout(giveUp, ABORT_GRACE_MS)
    }
    const finish = (): boolean => {
      stopWaiting()
      if (grace !== undefined) clearTimeout(grace)
      if (settled) return false
      settled = true
      return true
    }
    answer.then(
      (value) => {
        if (finish()) resolve(value)
        else onLate?.(value)
      },
      (err: unknown) => {
        if (!finish()) return
        // A hook that checked its signal the standard way (`signal.throwIfAborted()`) threw the caller's own
        // reason: that is the hook's abort, as if it had thrown `FsError.aborted`, not a store failure.
        if (signal.aborted && err === signal.reason) reject(FsError.aborted(verb, signal.reason))
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a hook's own failure, passed on untouched: core translates it
        else reject(err)
      },
    )
    if (signal.aborted) onAbort()
    else stopWaiting = whenAborted(signal, onAbort)
  })
}

/**
 * `source`'s chunks, each waited for no longer than `signal` allows ({@link untilAborted}): a
 * stream whose store stops answering mid-file ends with `FS_ABORTED` at the abort. The source
 * is released once its pending chunk has come (or failed).
 */
export async function* abortableChunks<C>(source: AsyncIterable<C> | Iterable<C>, signal: AbortSignal | undefined, verb: FsVerb): AsyncGenerator<C> {
  if (signal === undefined || !(Symbol.asyncIterator in source)) {
    yield* source
    return
  }
  const chunks = source[Symbol.asyncIterator]()
  let pending: Promise<IteratorResult<C>> | undefined
  let done = false
  try {
    for (;;) {
      pending = Promise.resolve(chunks.next())
      const step = await untilAborted(pending, signal, verb)
      pending = undefined
      if (step.done === true) {
        done = true
        return
      }
      yield step.value
    }
  } finally {
    if (!done) {
      // Released after the chunk in flight (if any) settles: an iterator may not be re-entered.
      const release = (): Promise<unknown> => Promise.resolve(chunks.return?.()).catch(() => undefined)
      if (pending === undefined) await release()
      else void pending.then(release, release)
    }
  }
}

/**
 * `answer` of a hook that looks before a mutation changes anything (`rootTarget`, `prepareRename`, the
 * stat of a rename onto itself): its wait ends at the abort, and that abort is definite (nothing was
 * sent), under the mutation's own `verb`.
 */
export async function beforeChange<T>(answer: Awaitable<T>, signal: AbortSignal | undefined, verb: FsVerb, path: string): Promise<T> {
  try {
    return await untilAborted(answer, signal, 'resolve')
  } catch (err) {
    if (isFsError(err, 'FS_ABORTED') && signal?.aborted === true) throw FsError.aborted(verb, signal.reason, { path })
    throw err
  }
}

/** Releases what `openBytes` opened (`return()` on its iterator); a failure to is nobody's to report. */
export async function releaseChunks(source: AsyncIterable<unknown> | Iterable<unknown>): Promise<void> {
  try {
    const chunks = Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : source[Symbol.iterator]()
    await chunks.return?.()
  } catch {
    // nothing to report: the caller gets FS_ABORTED
  }
}
