import { FsError } from './errors.js'
import { type Budget, editStep, MAX_EDIT_MATCHES, spliceSmall } from './edit-engine.js'
import { applyLiteralEdit, findLiteral, STRING_CEILING, type LiteralEditResult } from './edit-literal.js'
import { assertEditRequest, assertEditRequests, MAX_EDITS } from './edit-requests.js'
import { ByteEditResult, EDIT_SLICE_MS, editTuning, runEditFor, runEditSliced, type EditSteps } from './edit-run.js'
import { assertText, assertTextSteps, hasUtf8Bom, normalizeLf } from './text.js'
import type { FsEditRequest } from './types.js'

export {
  applyLiteralEdit,
  assertEditRequest,
  assertEditRequests,
  ByteEditResult,
  EDIT_SLICE_MS,
  editTuning,
  findLiteral,
  MAX_EDIT_MATCHES,
  MAX_EDITS,
  runEditFor,
  runEditSliced,
  type EditSteps,
  type LiteralEditResult,
}

/**
 * The most bytes of text one `editText` call searches, over all its edits: each edit of a list
 * searches the whole text the previous one left, so a list costs its length times the file.
 * An edit that would pass it is `FS_TOO_LARGE` before it searches; the first edit of a call
 * always fits (a file is at most `maxTextBytes`, never above `MAX_STRING_LENGTH`, about 512 MiB).
 */
export const MAX_EDIT_SCAN_BYTES = 1024 ** 3

/**
 * The whole shared edit pipeline on a file's bytes, as resumable steps: text check
 * (`FS_NOT_TEXT`), BOM kept, the literal edit of `FileSystem.editText` for each edit in order
 * (each on the bytes the previous one left), every edit on the bytes (no string is built). A
 * failing edit of a list fails the whole call: its error says which (`edit N of M`,
 * `details.edit`) and nothing is returned to publish.
 *
 * The bounds, each checked BEFORE the work it bounds:
 * - a file above `maxBytes` is `FS_TOO_LARGE` before it is read;
 * - matches are counted first (their offsets kept, 4 bytes each), and counting stops as soon as
 *   the result would pass `maxBytes` (`FS_TOO_LARGE`, `details.size` the size it would at least
 *   have) or the call would pass {@link MAX_EDIT_MATCHES}; the result is allocated once, at its
 *   exact size (an upper bound on a file with CRLFs), and only when it fits: a `replaceAll` that
 *   would grow a file past the limit allocates nothing, and a list of growing edits is refused at
 *   the first edit that would pass it;
 * - an edit that would take the call past {@link MAX_EDIT_SCAN_BYTES} of text searched is `FS_TOO_LARGE` before it searches.
 *
 * Time and memory are thus linear in the file (the peak is the input, one intermediate text, the
 * output, and on a file with CRLFs an LF copy of the text), and the work is cut in slices of a few
 * milliseconds: run the steps with {@link runEditFor} (synchronously, within a time budget) or
 * {@link runEditSliced} (giving the event loop a turn between slices, checking a signal).
 *
 * While the text has no CRLF the matches of `oldString`'s bytes are the matches of the text (valid
 * UTF-8 is self-synchronizing) and the spliced bytes are the encoding of the spliced text. With a
 * CRLF, matching is on an LF copy of the bytes, and the splice walks the raw bytes: untouched
 * regions keep their bytes, inserted text takes the dominant line ending of the first 4096
 * characters — exactly what {@link applyLiteralEdit} does on strings.
 */
export function* editSteps(bytes: Uint8Array, edits: FsEditRequest | readonly FsEditRequest[], path: string, maxBytes = STRING_CEILING): EditSteps {
  if (bytes.length > maxBytes) throw FsError.tooLarge('edit', path, bytes.length, maxBytes)
  if (bytes.length <= editTuning.small) assertText(bytes, path, 'edit')
  else yield* assertTextSteps(bytes, path, 'edit', editTuning.validate)
  const start = hasUtf8Bom(bytes) ? 3 : 0
  const many = Array.isArray(edits)
  const count = many ? edits.length : 1
  const budget: Budget = { matches: MAX_EDIT_MATCHES, scan: MAX_EDIT_SCAN_BYTES, kept: { head: bytes.length, tail: bytes.length, lf: true } }
  let current = bytes
  for (let i = 0; i < count; i++) {
    const edit = many ? (edits[i] as FsEditRequest) : (edits as FsEditRequest)
    try {
      const oldLf = normalizeLf(edit.oldString)
      if (oldLf === '') throw new FsError('FS_EDIT_NOT_FOUND', 'oldString must be a non-empty string')
      const size = current.length - start
      if (i > 0 && size > budget.scan) {
        const scanned = MAX_EDIT_SCAN_BYTES - budget.scan
        throw FsError.at(
          'FS_TOO_LARGE',
          'edit',
          path,
          `this edit would take the call past ${MAX_EDIT_SCAN_BYTES} bytes of text searched (${scanned} so far, ${size} more; each edit searches the whole text): split the edits into several calls`,
          { details: { size: scanned + size, limit: MAX_EDIT_SCAN_BYTES } },
        )
      }
      budget.scan -= size
      const small = current.length <= editTuning.small ? spliceSmall(current, start, oldLf, edit, path, maxBytes, budget) : undefined
      current = small ?? (yield* editStep(current, start, oldLf, edit, path, maxBytes, budget))
    } catch (err) {
      throw many ? whichEdit(err, i, count, path) : err
    }
    // Between the edits of a list: a point where the driver may look at the clock.
    if (i + 1 < count) yield
  }
  return new ByteEditResult(bytes, start, current, budget.kept)
}

/** The edit pipeline of {@link editSteps}, run to the end synchronously, whatever it takes. */
export function editTextBytes(bytes: Uint8Array, edits: FsEditRequest | readonly FsEditRequest[], path: string, maxBytes = STRING_CEILING): ByteEditResult {
  const steps = editSteps(bytes, edits, path, maxBytes)
  for (;;) {
    const step = steps.next()
    if (step.done === true) return step.value
  }
}

/**
 * {@link editSteps} run with {@link runEditSliced}: the edit pipeline on bytes already read,
 * without holding the event loop, e.g. to show what an edit would do (the tools' dry run).
 * `maxBytes` is the `maxTextBytes` of the filesystem the bytes came from.
 */
export async function editTextBytesSliced(
  bytes: Uint8Array,
  edits: FsEditRequest | readonly FsEditRequest[],
  path: string,
  options: { readonly maxBytes: number; readonly signal?: AbortSignal | undefined },
): Promise<ByteEditResult> {
  assertEditRequests(edits)
  return runEditSliced(editSteps(bytes, edits, path, options.maxBytes), options.signal)
}

/** `err` of edit `i` of `n`, saying which: `cannot edit "<path>": edit 2 of 3: oldString was not found`. */
function whichEdit(err: unknown, i: number, n: number, path: string): unknown {
  if (!(err instanceof FsError)) return err
  // The error's own words (`reason`, set by `FsError.at`), else its whole message: never a parse of it.
  const reason = err.reason ?? err.message
  return FsError.at(err.code, 'edit', path, `edit ${i + 1} of ${n}: ${reason}`, {
    cause: err.cause,
    retryable: err.retryable,
    indeterminate: err.indeterminate,
    details: { ...err.details, edit: i },
  })
}
