import { FsError, isFsError, type FileSystem, type FsEditRequest, type FsTarget } from '@seamfs/core'
import { editTextBytesSliced } from '@seamfs/core/backend'

/** `text` with every CRLF as LF: the form core reports `before`/`after` in. */
function lf(text: string): string {
  return text.includes('\r\n') ? text.split('\r\n').join('\n') : text
}

function withoutBom(text: string): string {
  return text.startsWith('\uFEFF') ? text.slice(1) : text
}

/**
 * What `editText(target, edits)` would make of the file, without writing: the LF-normalized text
 * before and after. The file's bytes are read and edited by core's own edit engine, the one
 * `editText` runs: the same rules (CRLF-insensitive match, `$` literal, a missing match
 * `FS_EDIT_NOT_FOUND`, several without `replaceAll` `FS_AMBIGUOUS_EDIT`, a list's failing edit
 * with `details.edit`), the same bounds (a result above `maxTextBytes`, too many matches or too
 * much text searched is `FS_TOO_LARGE` before it is built), run a slice at a time so the event
 * loop keeps turning, and stopped by `signal`. The policy is not consulted: nothing is written.
 */
export async function previewEdit(
  fs: FileSystem,
  target: FsTarget,
  edits: FsEditRequest | readonly FsEditRequest[],
  signal: AbortSignal | undefined,
): Promise<{ before: string; after: string }> {
  const bytes = await fs.readBytes(target, { signal })
  const result = await editTextBytesSliced(bytes, edits, target.displayPath, { maxBytes: fs.maxTextBytes, signal })
  return { before: result.before, after: result.after }
}

/**
 * What `writeText(target, content)` would report, without writing: `create` when nothing is there,
 * else `update` with the current text (`null` when it is not text). A directory is refused as the
 * write would refuse it.
 */
export async function previewWrite(
  fs: FileSystem,
  target: FsTarget,
  content: string,
  signal: AbortSignal | undefined,
): Promise<{ operation: 'create' | 'update'; before: string | null; after: string }> {
  const after = lf(withoutBom(content))
  const info = await fs.stat(target, { signal })
  if (info === undefined) return { operation: 'create', before: null, after }
  if (info.type !== 'file') throw FsError.notRegularFile('write', target.displayPath)
  try {
    return { operation: 'update', before: lf(withoutBom(await fs.readText(target, { signal }))), after }
  } catch (err) {
    if (isFsError(err, 'FS_NOT_TEXT') || isFsError(err, 'FS_TOO_LARGE')) return { operation: 'update', before: null, after }
    throw err
  }
}
