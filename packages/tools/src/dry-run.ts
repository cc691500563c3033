import { FsError, isFsError, type FileSystem, type FsEditRequest, type FsTarget } from '@seamfs/core'

/** `text` with every CRLF as LF: the form core reports `before`/`after` in. */
function lf(text: string): string {
  return text.includes('\r\n') ? text.split('\r\n').join('\n') : text
}

function withoutBom(text: string): string {
  return text.startsWith('\uFEFF') ? text.slice(1) : text
}

/** How many non-overlapping times `needle` occurs, left to right (as core's literal edit counts). */
function count(haystack: string, needle: string): number {
  let n = 0
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) n++
  return n
}

/** An edit's refusal as core words it, with `details.edit` when it is one of a list. */
function refusal(code: 'FS_EDIT_NOT_FOUND' | 'FS_AMBIGUOUS_EDIT', path: string, reason: string, index: number | undefined, matches?: number): FsError {
  const details = { ...(matches === undefined ? {} : { matches }), ...(index === undefined ? {} : { edit: index }) }
  return new FsError(code, `cannot edit "${path}": ${reason}`, { details })
}

/**
 * What `editText(target, edits)` would make of the file, without writing: the LF-normalized text
 * before and after, by the contract's literal-edit rules (CRLF-insensitive match, `$` literal, a
 * missing match `FS_EDIT_NOT_FOUND`, several without `replaceAll` `FS_AMBIGUOUS_EDIT`), each edit
 * on the text the previous one left. A list's failing edit carries `details.edit` (0-based), as
 * core's does. The policy is not consulted: nothing is written.
 */
export async function previewEdit(
  fs: FileSystem,
  target: FsTarget,
  edits: FsEditRequest | readonly FsEditRequest[],
  signal: AbortSignal | undefined,
): Promise<{ before: string; after: string }> {
  const path = target.displayPath
  const before = lf(withoutBom(await fs.readText(target, { signal })))
  const list = Array.isArray(edits) ? (edits as readonly FsEditRequest[]) : [edits as FsEditRequest]
  const index = (i: number): number | undefined => (Array.isArray(edits) ? i : undefined)
  let after = before
  list.forEach((edit, i) => {
    const oldLf = lf(edit.oldString)
    const matches = count(after, oldLf)
    if (matches === 0) throw refusal('FS_EDIT_NOT_FOUND', path, 'oldString was not found', index(i))
    if (matches > 1 && !edit.replaceAll) throw refusal('FS_AMBIGUOUS_EDIT', path, `oldString matched ${matches} times`, index(i), matches)
    after = lf(after.split(oldLf).join(lf(edit.newString)))
  })
  return { before, after }
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
