/**
 * `rename` on the local disk. Both ends are named through their parent directories held open and
 * verified (see `anchor.ts`), so a directory swapped for a link meanwhile cannot carry the move
 * elsewhere; the missing parents of the destination are made the same way (`ensureAnchor`).
 *
 * - a file without `overwrite` is moved by `link(2)` then `unlink(2)`: `link` never replaces, so a
 *   destination created by any process meanwhile wins cleanly (`FS_NOT_OBSERVED`); for that moment
 *   both names hold the file, never neither. A store without hard links falls back to `rename(2)`
 *   after the check (exact against this process only);
 * - a file with `overwrite` is moved by `rename(2)`, which replaces atomically and keeps the inode
 *   (mode, owner, content) of the file moved;
 * - a directory is moved by `rename(2)` after checking that nothing is at the destination. Linux's
 *   `rename(2)` refuses to replace a non-empty directory, but an EMPTY directory another process
 *   makes at the destination between the check and the move is replaced: a window this module
 *   cannot close without `renameat2(RENAME_NOREPLACE)`, which Node does not expose.
 */
import { type BigIntStats, linkSync, renameSync, unlinkSync } from 'node:fs'
import { basename, dirname } from 'node:path'
import { checkGuard, FsError, throwIfAborted, type FsRenameOutcome, type FsTarget, type RenameRequest } from '@seamfs/core/backend'
import { type DirAnchor, ensureAnchor, pathChanged, removeMadeDirectories } from './anchor.js'
import { errnoOf } from './errors.js'
import { absent, assertUnreserved, lstatIn, NOT_EMPTY, openParent, syncQuietly, type Held } from './mutate.js'
import { assertWritable, typeOf, versionOf } from './stats.js'

/** `link(2)` errnos of a store (or a file) that cannot be hard-linked, where `rename(2)` may still work. */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EMLINK'])

/** One end of a move: its parent held open, and its name there. */
interface End {
  readonly dir: DirAnchor
  readonly name: string
  readonly path: string
}

/**
 * Whether the entry at the destination (`existing`) may be replaced by a `type` under `overwrite`
 * (true: it is a file that will be replaced); throws the refusal otherwise.
 */
function checkDestination(to: End, existing: BigIntStats | undefined, type: 'file' | 'directory', overwrite: RenameRequest['overwrite']): boolean {
  if (existing === undefined) return false
  if (overwrite === false) throw FsError.destinationExists('rename', to.path)
  if (existing.isSymbolicLink()) throw pathChanged('rename', to.path)
  if (!existing.isFile()) throw FsError.notRegularFile('rename', to.path)
  if (type === 'directory') throw FsError.unsupported('rename', to.path, 'a directory never replaces a file')
  if (overwrite !== true && versionOf(existing) !== overwrite.version) throw FsError.stale('rename', to.path, 'changed')
  assertWritable(to.dir.at(to.name), existing, 'rename', to.path)
  return true
}

function unlinkQuietly(end: End): void {
  try {
    unlinkSync(end.dir.at(end.name))
  } catch {
    // The undo of a link that raced: what is left is a second name of the file, never a loss.
  }
}

/**
 * Moves the file `from` (of stat `st`) to the absent `to` with `link(2)` then `unlink(2)`. If the
 * name `from` stopped naming that inode meanwhile, or went, the link is undone and nothing moved.
 */
function linkThenUnlink(from: End, to: End, st: BigIntStats, expected: RenameRequest['expected']): void {
  try {
    linkSync(from.dir.at(from.name), to.dir.at(to.name))
  } catch (err) {
    const errno = errnoOf(err) ?? ''
    if (errno === 'EEXIST') throw FsError.destinationExists('rename', to.path, err)
    if (!NO_HARD_LINKS.has(errno)) throw err
    renameSync(from.dir.at(from.name), to.dir.at(to.name))
    return
  }
  const now = lstatIn(from.dir, from.name)
  if (now === undefined || now.dev !== st.dev || now.ino !== st.ino) {
    unlinkQuietly(to)
    if (now === undefined) absent('rename', from.path, expected)
    throw pathChanged('rename', from.path)
  }
  try {
    unlinkSync(from.dir.at(from.name))
  } catch (err) {
    unlinkQuietly(to)
    if (errnoOf(err) === 'ENOENT') absent('rename', from.path, expected, err)
    throw err
  }
}

/** The commit: one of the three moves of the module comment. */
function commit(from: End, to: End, st: BigIntStats, type: 'file' | 'directory', request: RenameRequest): void {
  if (type === 'file' && request.overwrite === false) {
    linkThenUnlink(from, to, st, request.expected)
    return
  }
  const there = type === 'file' ? lstatIn(to.dir, to.name) : undefined
  if (there !== undefined && there.dev === st.dev && there.ino === st.ino) {
    // Two names of one inode: rename(2) would do nothing and report success. The destination
    // already names the file, so the move is the removal of the source name.
    unlinkSync(from.dir.at(from.name))
    return
  }
  try {
    renameSync(from.dir.at(from.name), to.dir.at(to.name))
  } catch (err) {
    // A directory that appeared at the destination since the check, with entries.
    if (NOT_EMPTY.has(errnoOf(err) ?? '')) throw FsError.destinationExists('rename', to.path, err)
    if (errnoOf(err) === 'ENOENT') absent('rename', from.path, request.expected, err)
    throw err
  }
}

/**
 * `rename` of canonical `from` to canonical `to` (two different keys, `to` not inside `from`; the
 * caller holds both locks, in this process and in the store): source checked (type, guard), destination parents made, destination
 * checked (`overwrite`), then one commit. A failure before the commit leaves both names as they
 * were and removes the parents it made.
 */
export async function moveEntry(from: FsTarget, to: FsTarget, request: RenameRequest, { hold, hooks }: Held): Promise<FsRenameOutcome> {
  const { expected, signal } = request
  assertUnreserved(from.targetKey, 'rename', from.displayPath)
  assertUnreserved(to.targetKey, 'rename', to.displayPath)
  const source: End = {
    dir: openParent(from.targetKey, 'rename', from.displayPath, expected),
    name: basename(from.targetKey),
    path: from.displayPath,
  }
  try {
    const st = lstatIn(source.dir, source.name)
    if (st === undefined) absent('rename', source.path, expected)
    if (st.isSymbolicLink()) throw pathChanged('rename', source.path)
    const type = typeOf(st)
    if (type === 'other') throw FsError.notRegularFile('rename', source.path)
    checkGuard('rename', source.path, expected, versionOf(st))
    const { anchor, made } = ensureAnchor(dirname(to.targetKey), 'rename', to.displayPath)
    const destination: End = { dir: anchor, name: basename(to.targetKey), path: to.displayPath }
    try {
      let replaced: boolean
      try {
        replaced = checkDestination(destination, lstatIn(destination.dir, destination.name), type, request.overwrite)
        if (hooks?.beforeMutate !== undefined) await hooks.beforeMutate(from.targetKey)
        throwIfAborted(signal, 'rename')
        hold.assertHeld('rename', from.displayPath)
        commit(source, destination, st, type, request)
      } catch (err) {
        removeMadeDirectories(made)
        throw err
      }
      // Committed: nothing below may report failure.
      const after = lstatIn(destination.dir, destination.name)
      await syncQuietly(destination.dir)
      await syncQuietly(source.dir)
      return { type, replaced, version: versionOf(after ?? st) }
    } finally {
      destination.dir.close()
    }
  } finally {
    source.dir.close()
  }
}
