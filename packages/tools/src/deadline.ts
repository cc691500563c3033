import { getEventListeners } from 'node:events'
import { performance } from 'node:perf_hooks'
import { timedOut, ToolDeadline } from './results.js'
import type { FileTool, ToolContext, ToolResult } from './types.js'

/** Whether `signal` has aborted, read now (a function, so no earlier check narrows it). */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true
}

/** After the deadline, how long a tool body that ignores its signal may still take before the call returns anyway (ms). */
const HARD_STOP_MS = 1000

/**
 * Deadline controllers of calls that ended in time, for the next calls: building an
 * `AbortController` costs more than the rest of a small call's bookkeeping (about 10 µs against
 * 1 µs). A controller is reused only when its signal never aborted and nothing listens to it
 * any more, and by one call at a time: no call ever sees another call's deadline.
 */
const spare: AbortController[] = []
const MAX_SPARE = 32

function takeController(): AbortController {
  return spare.pop() ?? new AbortController()
}

function giveBack(controller: AbortController): void {
  if (spare.length < MAX_SPARE && !controller.signal.aborted && getEventListeners(controller.signal, 'abort').length === 0) spare.push(controller)
}

/**
 * Deadlines fall due in buckets of this many milliseconds: one timer a bucket, shared by every call
 * that falls due in it, where a timer a call cost a small call more than its own bookkeeping. A
 * deadline fires up to this much late.
 */
const BUCKET_MS = 50

interface Bucket {
  readonly timer: ReturnType<typeof setTimeout>
  /** What the calls due in it do at their deadline; a call that ends leaves. */
  readonly due: Set<() => void>
}

const buckets = new Map<number, Bucket>()

/**
 * Runs `fire` once `ms` have passed, unless the returned function is called first. The bucket's timer
 * holds the process open only while a call waits in it, as a timer of the call's own would.
 */
function atDeadline(ms: number, fire: () => void): () => void {
  const at = Math.ceil((performance.now() + ms) / BUCKET_MS) * BUCKET_MS
  let bucket = buckets.get(at)
  if (bucket === undefined) {
    const due = new Set<() => void>()
    const timer = setTimeout(
      () => {
        buckets.delete(at)
        for (const f of due) f()
      },
      Math.max(0, at - performance.now()),
    )
    bucket = { timer, due }
    buckets.set(at, bucket)
  }
  const { timer, due } = bucket
  if (due.size === 0) timer.ref()
  due.add(fire)
  return () => {
    if (due.delete(fire) && due.size === 0) timer.unref()
  }
}

/**
 * `tool` with a deadline on every call: the call's signal is the caller's, plus one that
 * aborts after `ms`. Core honours an abort at once, so a call on a frozen store ends at the deadline
 * with {@link timedOut} (the caller's own abort stays `FS_ABORTED`). A body that does not end within
 * a second of the deadline is left to finish on its own, and the call returns anyway.
 */
export function withDeadline<V>(tool: FileTool<V>, ms: number): FileTool<V> {
  const mutates = !tool.annotations.readOnlyHint
  const execute = async (args: unknown, context: ToolContext = {}): Promise<ToolResult<V>> => {
    const caller = context.signal
    if (caller?.aborted === true) return tool.execute(args, context)
    const deadline = takeController()
    let hardStop: ReturnType<typeof setTimeout> | undefined
    let stopNow: (result: ToolResult<never>) => void = () => undefined
    const stopped = new Promise<ToolResult<never>>((resolve) => (stopNow = resolve))
    const leave = atDeadline(ms, () => {
      deadline.abort(new ToolDeadline(ms))
      hardStop = setTimeout(() => stopNow(timedOut(ms, mutates)), HARD_STOP_MS)
    })
    const signal = caller === undefined ? deadline.signal : AbortSignal.any([caller, deadline.signal])
    try {
      const result = await Promise.race([tool.execute(args, { ...context, signal }), stopped])
      if (result.isError && result.code === 'FS_ABORTED' && deadline.signal.aborted && !isAborted(caller)) {
        return timedOut(ms, result.indeterminate === true)
      }
      return result
    } finally {
      leave()
      if (hardStop !== undefined) clearTimeout(hardStop)
      // A signal combined with the caller's may still be referenced by it: only a bare one is reused.
      if (caller === undefined) giveBack(deadline)
    }
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
