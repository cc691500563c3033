import { FsError } from '@seamfs/core'
import { messagePath } from './quote.js'
import { ok, withDeleteRemedy, withRemedy } from './results.js'
import { FILE_OR_DIRECTORY, object, STRING } from './structured.js'
import { mutating, pathInput, remedied, resolveIn, run, sessionOf, type PathArgs, type ToolInput } from './tool-kit.js'
import type { FileTool, StructuredOutput, ToolDeps } from './types.js'

/** Canonical value of `delete`. */
export interface DeleteValue {
  readonly path: string
  /** What was deleted: a file, or an empty directory. */
  readonly type: 'file' | 'directory'
}

/** The checked arguments of `delete`. */
export type DeleteArgs = PathArgs

export const deleteStructured: StructuredOutput<DeleteValue> = {
  schema: object({ path: STRING, type: FILE_OR_DIRECTORY }),
  content: (v) => ({ path: v.path, type: v.type }),
}

export const deleteInput = (): ToolInput<DeleteArgs> => pathInput('File or empty directory to delete, resolved by the filesystem backend.')

/**
 * The `delete` tool: one file, or one empty directory; never a tree (there is no recursive
 * option for the model). Offered only where the backend has `capabilities.remove`.
 *
 * With a policy, a file needs the session to have seen its current version: a blind delete is
 * `FS_NOT_OBSERVED` (read it first), a file changed since is `FS_STALE_VERSION` (read it again),
 * the version compared inside the store's critical section. A directory has no version to
 * observe: an empty one is deleted without a read (guarded by the version just seen, so a file swapped
 * in for it meanwhile is never deleted); one with entries is `FS_NOT_EMPTY` and stays.
 * A success records the path absent.
 */
export function deleteTool(deps: ToolDeps): FileTool<DeleteValue> {
  const { inputSchema, parse } = deleteInput()
  return {
    name: 'delete',
    description: 'Delete one file, or one empty directory.',
    inputSchema,
    structured: deleteStructured,
    annotations: { title: 'Delete file', destructiveHint: true, idempotentHint: true, ...mutating },
    prompt:
      'Use the delete tool — not shell rm — to delete one file or one empty directory; it never deletes a directory with entries. Read a file first (the default read-before-write policy requires it): a file that changed since you read it is not deleted.',
    execute: (args, context = {}) =>
      run(async () => {
        const { path } = parse(args)
        const target = await resolveIn(deps, path, context)
        const session = sessionOf(deps, context)
        const info = await deps.fs.stat(target, { signal: context.signal })
        if (info === undefined) throw FsError.notFound('remove', target.displayPath)
        if (info.type === 'other') throw FsError.notRegularFile('remove', target.displayPath)
        // A directory is guarded by the version just seen: a file put in its place since is never removed unread.
        const expected = info.type === 'file' ? await remedied(async () => deps.policy?.removeIntent(session, target), withRemedy) : { version: info.version }
        const outcome = await remedied(() => deps.fs.remove(target, { expected, signal: context.signal }), withDeleteRemedy)
        deps.policy?.recordAbsent(session, target)
        const text =
          outcome.type === 'file' ? `Deleted file ${messagePath(target.displayPath)}.` : `Deleted empty directory ${messagePath(target.displayPath)}.`
        return ok(text, { path: target.displayPath, type: outcome.type })
      }, 'delete'),
  }
}
