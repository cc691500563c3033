import { Buffer } from 'node:buffer'
import { untilAborted } from './abort-wait.js'
import { recordDetachedOutcome, recordOutcomeBytes, type WriteBasis } from './changed-lines.js'
import { editSteps, editTuning, runEditFor, runEditSliced, type ByteEditResult, type EditSteps } from './edit.js'
import { FsError } from './errors.js'
import type { Awaitable, WriteResult } from './hooks.js'
import { isLent } from './lent-bytes.js'
import { hasUtf8Bom, isText, normalizeLf, textOf } from './text.js'
import type { FsEditOutcome, FsEditRequest, FsVersion, FsWriteOutcome } from './types.js'

/**
 * `writeText`'s outcome from what `publishBytes` reported: the previous text (the diff basis) when
 * the backend returned it within `beforeMaxBytes` (0: nobody wanted it) and it is text, LF-normalized;
 * `after` what a read returns next (a leading U+FEFF is stored, and read back as the BOM it is).
 * `bytes` are the bytes written: with the previous ones they let `changedLines` find the change.
 */
export function writeOutcome(result: WriteResult, content: string, bytes: Uint8Array, beforeMaxBytes: number, early?: WriteBasis): FsWriteOutcome {
  const previous = beforeMaxBytes === 0 || result.before === null || result.before.length > beforeMaxBytes || !isText(result.before) ? null : result.before
  const operation = result.created ? 'create' : 'update'
  const after = normalizeLf(content.charCodeAt(0) === 0xfeff ? content.slice(1) : content)
  if (previous === null) return { operation, version: result.version, before: null, after }
  let before: string | undefined
  const beforeText = (): string => (before ??= normalizeLf(textOf(previous, hasUtf8Bom(previous) ? 3 : 0)))
  // Like an edit's: a large previous text is decoded when first read (a diff from `changedLines` never reads it).
  const outcome: FsWriteOutcome =
    previous.length <= EAGER_OUTCOME_BYTES
      ? { operation, version: result.version, before: beforeText(), after }
      : {
          operation,
          version: result.version,
          get before() {
            return beforeText()
          },
          after,
        }
  const basis = early?.take(previous)
  recordOutcomeBytes(outcome, previous, bytes, 'each', basis?.kept, basis?.tally)
  return outcome
}

/**
 * Up to this many bytes before and after, an edit's outcome carries its two texts as plain
 * strings: building them costs less than the accessors that would defer them.
 */
const EAGER_OUTCOME_BYTES = 16 * 1024

/**
 * The outcome of an edit: plain data for a small file; above {@link EAGER_OUTCOME_BYTES} the
 * strings are built when first read, through enumerable accessors, so that every reader
 * (spread, `JSON.stringify`, `Object.keys`) still sees `before` and `after`.
 */
function editOutcome(version: FsVersion, done: ByteEditResult): FsEditOutcome {
  const input = done.input
  const detached = done.detached
  const outcome: FsEditOutcome =
    done.bytes.length <= EAGER_OUTCOME_BYTES && done.inputLength <= EAGER_OUTCOME_BYTES
      ? { version, before: done.before, after: done.after }
      : {
          version,
          get before() {
            return done.before
          },
          get after() {
            return done.after
          },
        }
  if (input !== undefined) recordOutcomeBytes(outcome, input, done.bytes, 'input', done.kept, done.tally())
  else if (detached !== undefined) recordDetachedOutcome(outcome, detached, done.bytes, done.tally())
  return outcome
}

/** How many times an edit computed outside the critical section is tried before the file, changing meanwhile, is reported stale. */
const MAX_EDIT_ATTEMPTS = 3

/** The state of one `editText` call across its `updateBytes` calls. */
interface EditRun {
  /** What the last transform returned. */
  done: ByteEditResult | undefined
  /** The steps of an edit that ran out of its synchronous budget, and the bytes they work on. */
  pending: { readonly input: Uint8Array; readonly steps: EditSteps } | undefined
  /** An edit finished outside the critical section, and the bytes it was computed from. */
  prepared: { readonly input: Uint8Array; readonly result: ByteEditResult } | undefined
}

/**
 * `editText`'s `transform`: the edit of `bytes`, run synchronously for at most `editTuning.sync`
 * (25 ms). A result prepared from these very bytes is published as it is. An edit
 * that needs longer leaves its steps in `run.pending` and throws, so the backend publishes nothing;
 * `editText` finishes it giving the event loop turns, then calls `updateBytes` again. Bytes the
 * backend lent (`lendBytes`) are not kept past the call: the result keeps a copy of what it needs,
 * and an edit left to finish goes on from the start on a copy.
 */
function editTransform(run: EditRun, bytes: Uint8Array, edit: FsEditRequest | readonly FsEditRequest[], path: string, maxBytes: number): Uint8Array {
  run.done = undefined
  run.pending = undefined
  if (bytes.length > maxBytes) throw FsError.tooLarge('edit', path, bytes.length, maxBytes)
  const prepared = run.prepared
  if (prepared !== undefined && sameBytes(prepared.input, bytes)) return published(run, prepared.result)
  const steps = editSteps(bytes, edit, path, maxBytes)
  const finished = editTextSync(() => runEditFor(steps, editTuning.sync), path, bytes.length, maxBytes)
  const lent = isLent(bytes)
  if (finished === undefined) {
    const input = lent ? Buffer.from(bytes) : bytes
    run.pending = { input, steps: lent ? editSteps(input, edit, path, maxBytes) : steps }
    throw FsError.io('edit', path, 'the edit is being finished outside the critical section')
  }
  if (lent) finished.value.detach()
  return published(run, finished.value)
}

/** The bytes of `result`, which the store is about to write: the diff's line count starts meanwhile. */
function published(run: EditRun, result: ByteEditResult): Uint8Array {
  run.done = result
  result.tally()
  return result.bytes
}

/** True when `a` and `b` hold the same bytes (a native compare: tens of GB/s). */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a === b || (a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b))
}

/** A string or buffer that outgrows what V8 can hold is `FS_TOO_LARGE`, not a crash (`size`: the bytes edited). */
function tooLargeFrom(err: unknown, path: string, size: number, maxBytes: number): unknown {
  if (!(err instanceof RangeError)) return err
  return FsError.at('FS_TOO_LARGE', 'edit', path, 'the edited text is too large to hold as one string', { cause: err, details: { size, limit: maxBytes } })
}

function editTextSync<T>(body: () => T, path: string, size: number, maxBytes: number): T {
  try {
    return body()
  } catch (err) {
    throw tooLargeFrom(err, path, size, maxBytes)
  }
}

async function editText<T>(body: () => Promise<T>, path: string, size: number, maxBytes: number): Promise<T> {
  try {
    return await body()
  } catch (err) {
    throw tooLargeFrom(err, path, size, maxBytes)
  }
}

/** What {@link editInAttempts} needs: the edit, where, its limit and signal, and the backend's `updateBytes` bound to the target. */
export interface EditAttempts {
  readonly edit: FsEditRequest | readonly FsEditRequest[]
  readonly path: string
  readonly maxBytes: number
  readonly signal: AbortSignal | undefined
  /** `updateBytes(target, request, transform)` of the backend, the target and request given. */
  readonly update: (transform: (bytes: Uint8Array) => Uint8Array) => Awaitable<FsVersion>
}

/**
 * `editText`'s work after validation: the edit run as the transform of the backend's critical section;
 * one that outgrows its synchronous budget is finished outside it and published by another critical
 * section onto the very bytes it was computed from, at most {@link MAX_EDIT_ATTEMPTS} times.
 */
export async function editInAttempts({ edit, path, maxBytes, signal, update }: EditAttempts): Promise<FsEditOutcome> {
  const run: EditRun = { done: undefined, pending: undefined, prepared: undefined }
  for (let attempt = 1; ; attempt++) {
    let version: FsVersion
    try {
      version = await untilAborted(
        update((bytes) => editTransform(run, bytes, edit, path, maxBytes)),
        signal,
        'edit',
      )
    } catch (err) {
      const pending = run.pending
      if (pending === undefined) throw err
      // The edit outgrew its synchronous budget: finish it outside the critical section, then publish it
      // if the file still holds the bytes it was computed from.
      if (attempt === MAX_EDIT_ATTEMPTS) {
        throw FsError.at('FS_STALE_VERSION', 'edit', path, 'file kept changing while a large edit was being computed', { retryable: true })
      }
      run.pending = undefined
      run.prepared = {
        input: pending.input,
        result: await editText(() => runEditSliced(pending.steps, signal, 'edit', true), path, pending.input.length, maxBytes),
      }
      continue
    }
    const done = run.done
    if (done === undefined) throw FsError.io('edit', path, 'the backend published without applying the edit')
    return editOutcome(version, done)
  }
}
