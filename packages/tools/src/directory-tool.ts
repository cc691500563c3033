import { messagePath } from './quote.js'
import { ok } from './results.js'
import { BOOLEAN, object, STRING } from './structured.js'
import { pathInput, resolveIn, run, type PathArgs, type ToolInput } from './tool-kit.js'
import type { FileTool, StructuredOutput, ToolDeps } from './types.js'

/** Canonical value of `create_directory`. */
export interface CreateDirectoryValue {
  readonly path: string
  /** False when the directory was already there (nothing changed). */
  readonly created: boolean
}

/** The checked arguments of `create_directory`. */
export type CreateDirectoryArgs = PathArgs

export const createDirectoryStructured: StructuredOutput<CreateDirectoryValue> = {
  schema: object({ path: STRING, created: BOOLEAN }),
  content: (v) => ({ path: v.path, created: v.created }),
}

export const createDirectoryInput = (): ToolInput<CreateDirectoryArgs> =>
  pathInput('Directory to create, with any missing parents, resolved by the filesystem backend.')

/**
 * The `create_directory` tool: `mkdir -p`, idempotent. Offered only where the backend has
 * `capabilities.createDirectory` (on a store without directories, a marker keeps the empty
 * directory listed). Needs no read: there is nothing to overwrite.
 */
export function createDirectoryTool(deps: ToolDeps): FileTool<CreateDirectoryValue> {
  const { inputSchema, parse } = createDirectoryInput()
  return {
    name: 'create_directory',
    description: 'Create a directory and any missing parents; an existing directory is left as it is.',
    inputSchema,
    structured: createDirectoryStructured,
    annotations: { title: 'Create directory', readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    prompt:
      'Use the create_directory tool — not shell mkdir — to create an empty directory (missing parents are created too). The write tool creates the parent directories of a file itself, so this is needed only for an empty directory.',
    execute: (args, context = {}) =>
      run(async () => {
        const target = await resolveIn(deps, parse(args).path, context)
        const { created } = await deps.fs.createDirectory(target, { signal: context.signal })
        const shown = messagePath(target.displayPath)
        return ok(created ? `Created directory ${shown}.` : `Directory ${shown} already exists; nothing changed.`, { path: target.displayPath, created })
      }),
  }
}
