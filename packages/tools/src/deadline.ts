import { setMaxListeners } from 'node:events'
import { performance } from 'node:perf_hooks'
import { sharedAbortController } from '@seamfs/core/backend'
import { timedOut, ToolDeadline } from './results.js'
import { NO_CONTEXT } from './tool-kit.js'
import type { FileTool, ToolContext, ToolResult } from './types.js'

/** Whether `signal` has aborted, read now (a function, so no earlier check narrows it). */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true
}

/** After the deadline, how long a tool body that ignores its signal may still take before the call returns anyway (ms). */
const HARD_STOP_MS = 1000

/**
 * Deadlines fall due in buckets of this many milliseconds: the calls of one deadline (`ms`) that fall
 * due in one bucket share its timer and its signal, where a timer and a signal a call cost a small
 * call more than its own bookkeeping (a fresh `AbortController` that a store call listens to costs
 * about 10 µs; a set entry in a bucket, well under one). A deadline fires up to this much late.
 */
const BUCKET_MS = 50

interface Bucket {
  /** Aborts, with a {@link ToolDeadline} of the bucket's `ms`, when the bucket falls due. */
  readonly signal: AbortSignal
  /** Adds a call: `stop` ends it at the hard stop ({@link HARD_STOP_MS} after the bucket falls due). Returns its place, for `leave`. */
  enter(stop: () => void): number
  /** The call that entered at `place` with `stop` has ended (again: nothing). */
  leave(place: number, stop: () => void): void
}

/** The open buckets, by deadline (`ms`) then by when they fall due. */
const buckets = new Map<number, Map<number, Bucket>>()

/**
 * The bucket a call with deadline `ms` starting now falls due in. Its timer holds the process open
 * only while a call waits in it, as a timer of the call's own would; the bucket stays until it falls
 * due, for the calls that start after this one within it, and its signal then aborts whether or not a
 * call is still in it. No call sees another deadline than its own: a bucket holds one `ms` and one
 * due time.
 */
function bucketFor(ms: number): Bucket {
  const at = Math.ceil((performance.now() + ms) / BUCKET_MS) * BUCKET_MS
  // Calls in a row mostly share a deadline and a bucket: the last one found is tried first.
  if (last !== undefined && last.ms === ms && last.at === at && !last.bucket.signal.aborted) return last.bucket
  const bucket = openBucket(ms, at)
  last = { ms, at, bucket }
  return bucket
}

/** The bucket {@link bucketFor} found last. */
let last: { readonly ms: number; readonly at: number; readonly bucket: Bucket } | undefined

/** The open bucket of deadline `ms` falling due at `at`, made if there is none. */
function openBucket(ms: number, at: number): Bucket {
  let byTime = buckets.get(ms)
  if (byTime === undefined) {
    byTime = new Map()
    buckets.set(ms, byTime)
  }
  const open = byTime
  const found = open.get(at)
  if (found !== undefined) return found
  // Every call due in the bucket waits on this one signal (core keeps one listener on it for all of
  // them), and a store under each may listen to it too.
  const controller = sharedAbortController()
  setMaxListeners(0, controller.signal)
  // The calls in the bucket, by place: an ended call's place is emptied (its result is not held), and
  // the places are used again from the first once none is left. No set: one that empties and refills
  // a call at a time reallocates its table each time.
  const due: ((() => void) | undefined)[] = []
  let places = 0
  let waiting = 0
  let hardStop: ReturnType<typeof setTimeout> | undefined
  const timer = setTimeout(
    () => {
      open.delete(at)
      if (open.size === 0 && buckets.get(ms) === open) buckets.delete(ms)
      controller.abort(new ToolDeadline(ms))
      if (waiting > 0) hardStop = setTimeout(() => due.slice(0, places).forEach((stop) => stop?.()), HARD_STOP_MS)
    },
    Math.max(0, at - performance.now()),
  )
  timer.unref()
  const bucket: Bucket = {
    signal: controller.signal,
    enter(stop) {
      if (waiting === 0) timer.ref()
      waiting++
      due[places] = stop
      return places++
    },
    leave(place, stop) {
      if (due[place] !== stop) return
      due[place] = undefined
      if (--waiting > 0) return
      places = 0
      timer.unref()
      if (hardStop !== undefined) clearTimeout(hardStop)
    },
  }
  open.set(at, bucket)
  return bucket
}

/**
 * `tool` with a deadline on every call: the call's signal is the caller's, plus one that
 * aborts after `ms`. Core honours an abort at once, so a call on a frozen store ends at the deadline
 * with {@link timedOut} (the caller's own abort stays `FS_ABORTED`). A body that does not end within
 * a second of the deadline is left to finish on its own, and the call returns anyway.
 */
export function withDeadline<V>(tool: FileTool<V>, ms: number): FileTool<V> {
  const mutates = !tool.annotations.readOnlyHint
  // One promise a call, settled by the body or by the hard stop, whichever comes first: no race of
  // two promises and no async frame around it (a small call's tool layer is mostly such costs).
  const execute = (args: unknown, context: ToolContext = NO_CONTEXT): Promise<ToolResult<V>> => {
    const caller = context.signal
    if (caller?.aborted === true) return tool.execute(args, context)
    const bucket = bucketFor(ms)
    const signal = caller === undefined ? bucket.signal : AbortSignal.any([caller, bucket.signal])
    return new Promise<ToolResult<V>>((resolve, reject) => {
      const stop = (): void => {
        bucket.leave(place, stop)
        resolve(timedOut(ms, mutates))
      }
      const answered = (result: ToolResult<V>): void => {
        bucket.leave(place, stop)
        if (result.isError && result.code === 'FS_ABORTED' && bucket.signal.aborted && !isAborted(caller)) resolve(timedOut(ms, result.indeterminate === true))
        else resolve(result)
      }
      const failed = (err: unknown): void => {
        bucket.leave(place, stop)
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the body's own failure, passed on as it is
        reject(err)
      }
      const place = bucket.enter(stop)
      try {
        tool.execute(args, { ...context, signal }).then(answered, failed)
      } catch (err) {
        failed(err)
      }
    })
  }
  return Object.freeze({ ...tool, execute })
}

/**
 * The caller's signal plus the tools' deadline: aborts with a {@link ToolDeadline} after `ms`, so a
 * failure it causes reads as a timeout ({@link timedOut}), not as the caller's abort. For hosts that
 * call the contract next to the tools (the deepagents backend's listings and transfers). The timer
 * never holds the process open.
 */
export function deadlineSignal(caller: AbortSignal | undefined, ms: number): AbortSignal {
  const deadline = new AbortController()
  setTimeout(() => deadline.abort(new ToolDeadline(ms)), ms).unref()
  return caller === undefined ? deadline.signal : AbortSignal.any([caller, deadline.signal])
}
