/** The drivers of the resumable edit steps (within a time budget, or in slices), their tuning, and the result they return. */
import { Buffer } from 'node:buffer'
import { performance } from 'node:perf_hooks'
import { throwIfAborted, type FsVerb } from './errors.js'
import type { KeptBytes } from './edit-engine.js'
import { LineEndTally } from './line-ends.js'
import { normalizeLf, textOf } from './text.js'

/**
 * What an edit's output keeps of its input once the input is let go ({@link ByteEditResult.detach}):
 * the input is the output's first `head` bytes, then `middle`, then the output's last `tail` bytes.
 */
export interface DetachedInput {
  readonly head: number
  readonly middle: Uint8Array
  readonly tail: number
  /** The BOM's length in the input (3 or 0), which `head` counts. */
  readonly start: number
}

/**
 * Result of `editTextBytes`: the bytes to publish, and the texts before and after, each
 * built when first read (from the input and output bytes, which must not change afterwards).
 * A class, not an object literal with getters: building one of those per edit cost more than
 * a small file's whole edit. Once `before` is built the input bytes are let go by the result
 * (an outcome that recorded them for `changedLines` keeps them while it lives). An input a
 * backend lent (`lendBytes`) is let go at once ({@link detach}).
 */
export class ByteEditResult {
  #bytes: Uint8Array
  /** The size of the bytes the edit read. */
  readonly inputLength: number
  #input: Uint8Array | undefined
  #detached: DetachedInput | undefined
  readonly #start: number
  #before: string | undefined
  #after: string | undefined
  /** What the edits left as it was at both ends, when the engine knows (see `Budget.kept`). */
  readonly kept: KeptBytes | undefined
  #tally: LineEndTally | undefined

  constructor(input: Uint8Array, start: number, bytes: Uint8Array, kept?: KeptBytes) {
    this.#bytes = bytes
    this.inputLength = input.length
    this.#input = input
    this.#start = start
    this.kept = kept
  }

  /** The bytes to publish (BOM kept when the file had one). */
  get bytes(): Uint8Array {
    return this.#bytes
  }

  /**
   * The line ends ahead of the change, counted in the background from the first call on (see
   * {@link LineEndTally}): `editText` starts it as the store begins to write the result, so that the
   * diff's line numbers are ready when the write is. Only for an input without CRLF, the one whose
   * change `changedLines` locates on its bytes. Counted on the output, whose first `kept.head` bytes
   * (and any further bytes both texts share from the start) are the input's.
   */
  tally(): LineEndTally | undefined {
    if (this.#tally === undefined && this.kept?.lf === true) this.#tally = new LineEndTally(this.bytes, this.kept.head)
    return this.#tally
  }

  /** The bytes the edit read (BOM included), until `before` is built or the input is let go ({@link detach}). */
  get input(): Uint8Array | undefined {
    return this.#input
  }

  /** The input as the output and a copy of its changed middle, once let go ({@link detach}). */
  get detached(): DetachedInput | undefined {
    return this.#detached
  }

  /**
   * Lets go of the input (lent by the backend, which overwrites it once `transform` returns): keeps
   * a copy of only its changed middle where the engine knows both ends the edits left (an input
   * without CRLF), else a copy of it all.
   */
  detach(): void {
    const input = this.#input
    if (input === undefined || this.#before !== undefined) return
    const kept = this.kept
    this.#input = undefined
    // The engine allocates its output; one that shared the input's memory would change with it.
    if (this.#bytes.buffer === input.buffer) this.#bytes = Buffer.from(this.#bytes)
    if (kept?.lf === true && kept.head + kept.tail <= Math.min(input.length, this.bytes.length)) {
      this.#detached = { head: kept.head, middle: Buffer.from(input.subarray(kept.head, input.length - kept.tail)), tail: kept.tail, start: this.#start }
    } else {
      this.#input = Buffer.from(input)
    }
  }

  /** The text as read, LF-normalized, without BOM. */
  get before(): string {
    if (this.#before === undefined) {
      this.#before = normalizeLf(textOf(this.#input ?? this.#rebuilt(), this.#start))
      this.#input = undefined
      this.#detached = undefined
    }
    return this.#before
  }

  /** The text after the last edit, LF-normalized, without BOM. */
  get after(): string {
    return (this.#after ??= normalizeLf(textOf(this.bytes, this.#start)))
  }

  /** The input's bytes again, from the output and the kept middle. */
  #rebuilt(): Uint8Array {
    const { head, middle, tail } = this.#detached as DetachedInput
    const out = this.bytes
    return Buffer.concat([out.subarray(0, head), middle, out.subarray(out.length - tail)])
  }
}

/**
 * The sizes of the edit engine's slices. Internal: tests shrink them to drive the sliced paths
 * with small inputs; nothing else changes them.
 */
export const editTuning = {
  /**
   * The work of one slice, in bytes searched, walked or copied (a match counts as
   * `MATCH_WORK` bytes): a few milliseconds at the slowest measured rates (a native search
   * over adversarial text, about 5 ns a byte; a walk over a text with CRLFs, 1–2 ns a byte).
   */
  slice: 1 << 20,
  /** Up to this size a text is checked, and an edit of it without CRLF done, in one run (about 1 ms of work at most). */
  small: 64 * 1024,
  /** The most matches the one-run path counts before it leaves the edit to the sliced one. */
  smallMatches: 4096,
  /** Text validation runs at several GB/s: its slices are larger. */
  validate: 8 << 20,
  /**
   * How long `editText` runs an edit inside the backend's critical section (its `transform`), in
   * milliseconds; an edit that needs longer is finished outside it, in slices.
   */
  sync: 25,
}

/** Work of the edit engine, resumable: each `yield` is a point where the driver may stop or give the event loop a turn. */
export type EditSteps<T = ByteEditResult> = Generator<void, T, void>

/**
 * Runs `steps` synchronously until they end or `budgetMs` has passed: the result, or `undefined`
 * when there is more to do (the steps keep their state: go on with {@link runEditSliced}).
 * Time is read between slices only, so it may run over by one slice (a few milliseconds).
 */
export function runEditFor<T>(steps: EditSteps<T>, budgetMs: number): { readonly value: T } | undefined {
  const started = performance.now()
  for (;;) {
    const step = steps.next()
    if (step.done === true) return { value: step.value }
    if (performance.now() - started >= budgetMs) return undefined
  }
}

/** The longest stretch {@link runEditSliced} runs before it gives the event loop a turn. */
export const EDIT_SLICE_MS = 10

/**
 * Runs `steps` to the end, giving the event loop a turn (`setImmediate`) whenever
 * {@link EDIT_SLICE_MS} have passed (and first, with `turnFirst`), and checking `signal` after
 * each turn: an abort is `FS_ABORTED` (`<verb> aborted`) and the steps are dropped.
 */
export async function runEditSliced<T>(steps: EditSteps<T>, signal: AbortSignal | undefined, verb: FsVerb = 'edit', turnFirst = false): Promise<T> {
  if (turnFirst) {
    // A whole turn of the loop (timers, I/O, immediates): the steps come from a synchronous run that used its budget.
    await new Promise<void>((resolve) => setTimeout(resolve, 0))
  }
  throwIfAborted(signal, verb)
  let started = performance.now()
  for (;;) {
    const step = steps.next()
    if (step.done === true) return step.value
    if (performance.now() - started >= EDIT_SLICE_MS) {
      await nextTurn()
      throwIfAborted(signal, verb)
      started = performance.now()
    }
  }
}

/** Resolves after the event loop has had a turn: run from an immediate, the next one comes after the timers and I/O. */
const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve))
