import { FsError, isFsError, type FsTarget, type PolicyOwner, type RenameOptions } from '@seamfs/core'
import { NON_BLANK } from './args.js'
import { messagePath } from './quote.js'
import { ok, withMoveRemedy, withRemedy } from './results.js'
import { BOOLEAN, FILE_OR_DIRECTORY, object, STRING } from './structured.js'
import { mutating, remedied, resolveIn, run, sessionOf, toolInput, type ToolInput } from './tool-kit.js'
import type { FileTool, StructuredOutput, ToolDeps } from './types.js'

/** Canonical value of `move`. */
export interface MoveValue {
  /** Display paths of the source and the destination. */
  readonly from: string
  readonly to: string
  readonly type: 'file' | 'directory'
  /** True when a file at the destination was replaced (one the session had read). */
  readonly replaced: boolean
}

/** The checked arguments of `move`. */
export interface MoveArgs {
  readonly sourcePath: string
  readonly destinationPath: string
}

export const moveStructured: StructuredOutput<MoveValue> = {
  schema: object({ from: STRING, to: STRING, type: FILE_OR_DIRECTORY, replaced: BOOLEAN }),
  content: (v) => ({ from: v.from, to: v.to, type: v.type, replaced: v.replaced }),
}

/** A move's two ends, resolved, and the call's signal. */
interface Move {
  readonly from: FsTarget
  readonly to: FsTarget
  readonly signal: AbortSignal | undefined
}

/** The guards of a move of a file: the policy's, else none (a host without a policy moves unconditionally, as it writes). */
function fileGuards(deps: ToolDeps, session: PolicyOwner, from: FsTarget, to: FsTarget): RenameOptions {
  if (deps.policy === undefined) return { overwrite: true }
  return deps.policy.renameIntent(session, from, to)
}

/** For a move refused because a directory is at the destination: the path inside it the model may have meant. */
async function intoPath(deps: ToolDeps, { from, to, signal }: Move, err: unknown): Promise<string | undefined> {
  if (!isFsError(err, 'FS_NOT_OBSERVED') && !isFsError(err, 'FS_NOT_REGULAR_FILE')) return undefined
  const info = await deps.fs.stat(to, { signal }).catch(() => undefined)
  if (info?.type !== 'directory') return undefined
  const name = from.displayPath.slice(from.displayPath.lastIndexOf('/') + 1)
  return `${to.displayPath.replace(/\/+$/, '')}/${name}`
}

function successText(from: FsTarget, to: FsTarget, type: MoveValue['type'], replaced: boolean): string {
  const [a, b] = [messagePath(from.displayPath), messagePath(to.displayPath)]
  if (from.targetKey === to.targetKey) return `${a} and ${b} are the same ${type}; nothing was moved.`
  return `Moved ${type} ${a} to ${b}${replaced ? ', replacing the file that was there' : ''}.`
}

/**
 * The `move` tool: renames a file (or, where the backend has `capabilities.renameDirectories`, a
 * directory), creating missing parents of the destination. Offered only where the backend has
 * `capabilities.rename`.
 *
 * With a policy, a file moves only at the version the session saw (`FS_NOT_OBSERVED` unread,
 * `FS_STALE_VERSION` changed since), and an existing destination is replaced only when the session
 * read it, at that version; an unread one is `FS_NOT_OBSERVED` and nothing moves. A directory has no
 * version to observe: it moves without a read, and never onto anything that exists. A success
 * records the source absent and the destination present. Without a policy a file move replaces an
 * existing destination file, as `write` does.
 */
/** The input of `move`; `directories` (the backend moves directories too) words the schema, never the check. */
export function moveInput(directories: boolean): ToolInput<MoveArgs> {
  const inputSchema = {
    type: 'object',
    properties: {
      source_path: {
        type: 'string',
        pattern: NON_BLANK,
        description: `${directories ? 'File or directory' : 'File'} to move, resolved by the filesystem backend.`,
      },
      destination_path: { type: 'string', pattern: NON_BLANK, description: 'New path; missing parent directories are created.' },
    },
    required: ['source_path', 'destination_path'],
    additionalProperties: false,
  }
  return toolInput(inputSchema, (a): MoveArgs => ({ sourcePath: a.string('source_path'), destinationPath: a.string('destination_path') }))
}

export function moveTool(deps: ToolDeps): FileTool<MoveValue> {
  const directories = deps.fs.capabilities.renameDirectories === true
  const { inputSchema, parse } = moveInput(directories)
  const what = directories ? 'a file or a directory' : 'a file'
  return {
    name: 'move',
    description: `Move or rename ${what}; an existing destination is never replaced unread.`,
    inputSchema,
    structured: moveStructured,
    annotations: { title: 'Move file', destructiveHint: true, idempotentHint: false, ...mutating },
    prompt: `Use the move tool — not shell mv, and not read + write + delete — to move or rename ${what}. Read a file before moving it (the default read-before-write policy requires it). An existing file at destination_path is replaced only if you read it first${directories ? '; a directory never replaces anything' : ''}.`,
    execute: (args, context = {}) =>
      run(async () => {
        const { sourcePath, destinationPath } = parse(args)
        const from = await resolveIn(deps, sourcePath, context)
        const to = await resolveIn(deps, destinationPath, context)
        const session = sessionOf(deps, context)
        const signal = context.signal
        const info = await deps.fs.stat(from, { signal })
        if (info === undefined) throw FsError.notFound('rename', from.displayPath)
        if (info.type === 'other') throw FsError.notRegularFile('rename', from.displayPath)
        if (info.type === 'directory' && !directories) throw FsError.unsupported('rename', from.displayPath, 'this store moves files only, not directories')
        // A directory is guarded by the version just seen: a file swapped in for it is never moved unread.
        const guards: RenameOptions =
          info.type === 'file'
            ? await remedied(async () => fileGuards(deps, session, from, to), withRemedy)
            : { expected: { version: info.version }, overwrite: false }
        const outcome = await deps.fs.rename(from, to, { ...guards, signal }).catch(async (err: unknown) => {
          throw withMoveRemedy(err, to.displayPath, await intoPath(deps, { from, to, signal }, err))
        })
        // A directory's version guards nothing: only the source's absence is worth recording.
        if (outcome.type === 'file') deps.policy?.recordRenamed(session, from, to, outcome.version)
        else if (from.targetKey !== to.targetKey) deps.policy?.recordAbsent(session, from)
        const value: MoveValue = { from: from.displayPath, to: to.displayPath, type: outcome.type, replaced: outcome.replaced }
        return ok(successText(from, to, outcome.type, outcome.replaced), value)
      }, 'move'),
  }
}
