import { argsParser, NON_BLANK } from './args.js'
import { resolveIn, run } from './file-tools.js'
import { messagePath } from './quote.js'
import { ok } from './results.js'
import type { FileTool, ToolDeps } from './types.js'
import { createDirectoryStructured } from './structured.js'

/** Canonical value of `create_directory`. */
export interface CreateDirectoryValue {
  readonly path: string
  /** False when the directory was already there (nothing changed). */
  readonly created: boolean
}

/**
 * The `create_directory` tool: `mkdir -p`, idempotent. Offered only where the backend has
 * `capabilities.createDirectory` (on a store without directories, a marker keeps the empty
 * directory listed). Needs no read: there is nothing to overwrite.
 */
export function createDirectoryTool(deps: ToolDeps): FileTool<CreateDirectoryValue> {
  const inputSchema = {
    type: 'object',
    properties: {
      path: { type: 'string', pattern: NON_BLANK, description: 'Directory to create, with any missing parents, resolved by the filesystem backend.' },
    },
    required: ['path'],
    additionalProperties: false,
  }
  const parse = argsParser(inputSchema)
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
        const target = await resolveIn(deps, parse(args).string('path'), context)
        const { created } = await deps.fs.createDirectory(target, { signal: context.signal })
        const shown = messagePath(target.displayPath)
        return ok(created ? `Created directory ${shown}.` : `Directory ${shown} already exists; nothing changed.`, { path: target.displayPath, created })
      }),
  }
}
