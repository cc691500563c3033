/** The drivers of the resumable edit steps (within a time budget, or in slices), their tuning, and the result they return. */
import { performance } from 'node:perf_hooks'
import { throwIfAborted, type FsVerb } from './errors.js'
import type { KeptBytes } from './edit-engine.js'
import { LineEndTally } from './line-ends.js'
import { normalizeLf, textOf } from './text.js'

/**
 * Result of `editTextBytes`: the bytes to publish, and the texts before and after, each
 * built when first read (from the input and output bytes, which must not change afterwards).
 * A class, not an object literal with getters: building one of those per edit cost more than
 * a small file's whole edit. Once `before` is built the input bytes are let go by the result
 * (an outcome that recorded them for `changedLines` keeps them while it lives).
 */
export class ByteEditResult {
  /** The bytes to publish (BOM kept when the file had one). */
  readonly bytes: Uint8Array
  /** The size of the bytes the edit read. */
  readonly inputLength: number
  #input: Uint8Array | undefined
  readonly #start: number
  #before: string | undefined
  #after: string | undefined
  /** What the edits left as it was at both ends, when the engine knows (see `Budget.kept`). */
  readonly kept: KeptBytes | undefined
  #tally: LineEndTally | undefined

  constructor(input: Uint8Array, start: number, bytes: Uint8Array, kept?: KeptBytes) {
    this.bytes = bytes
    this.inputLength = input.length
    this.#input = input
    this.#start = start
    this.kept = kept
  }

  /**
   * The line ends of the input ahead of the change, counted in the background from the first call
   * on (see {@link LineEndTally}): `editText` starts it as the store begins to write the result, so
   * that the diff's line numbers are ready when the write is. Only for an input without CRLF, the
   * one whose change `changedLines` locates on its bytes.
   */
  tally(): LineEndTally | undefined {
    if (this.#tally === undefined && this.#input !== undefined && this.kept?.lf === true) this.#tally = new LineEndTally(this.#input, this.kept.head)
    return this.#tally
  }

  /** The bytes the edit read (BOM included), until `before` is built. */
  get input(): Uint8Array | undefined {
    return this.#input
  }

  /** The text as read, LF-normalized, without BOM. */
  get before(): string {
    if (this.#before === undefined) {
      this.#before = normalizeLf(textOf(this.#input as Uint8Array, this.#start))
      this.#input = undefined
    }
    return this.#before
  }

  /** The text after the last edit, LF-normalized, without BOM. */
  get after(): string {
    return (this.#after ??= normalizeLf(textOf(this.bytes, this.#start)))
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
