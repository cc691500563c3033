import { FsError } from '@seamfs/core'
import { argsObject, optionalPath, requiredPath } from './args.js'
import { run } from './file-tools.js'
import { messagePath, quotePath } from './quote.js'
import { ok } from './results.js'
import type { FileTool, ToolDeps } from './types.js'
import { pathMatcher, SearchControl, SearchTimeout, searchRoot, timeoutResult, walkFiles } from './walk.js'

/** Canonical value of `glob`: the shown paths (relative to `root`, `/`-separated) and how many matched in all. */
export interface GlobValue {
  /** Display path of the search root. */
  readonly root: string
  readonly pattern: string
  readonly paths: string[]
  readonly totalPaths: number
}

export function globText(value: GlobValue): string {
  if (value.totalPaths === 0) return 'No files found'
  const lines = value.paths.map(quotePath).join('\n')
  if (value.paths.length === value.totalPaths) return lines
  return `${lines}\n\n(Showing ${value.paths.length} of ${value.totalPaths} paths. Narrow the pattern or path to see the rest.)`
}

export function globTool(deps: ToolDeps): FileTool<GlobValue> {
  const { config } = deps
  return {
    name: 'glob',
    description: 'Find files whose path matches a glob pattern, in path order.',
    inputSchema: {
      type: 'object',
      properties: {
        pattern: {
          type: 'string',
          description:
            'Glob matched against paths relative to the search root, like "src/**/*.ts" or "*.{js,json}". A pattern without "/" matches file names at any depth.',
        },
        path: { type: 'string', description: 'Directory to search. Defaults to the workspace.' },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    annotations: { title: 'Find files', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    prompt: `Use the glob tool — not shell find or ls -R — to find files by name or path pattern. A pattern without "/" (like "*.test.ts") matches file names at any depth; "src/**/*.ts" matches paths under src. Dotfiles are included; .git and other version-control directories are skipped. Results are in path order, at most ${config.globMaxResults}; when the footer says results were cut, narrow the pattern or path.`,
    execute: (args, context = {}) =>
      run(async () => {
        const a = argsObject(args)
        const pattern = requiredPath(a, 'pattern')
        const path = optionalPath(a, 'path') ?? '.'
        const accept = pathMatcher('pattern', pattern)
        const control = new SearchControl('glob', config.searchTimeoutMs, context.signal)
        try {
          const root = await searchRoot(deps, path, context, control)
          if (root.info.type !== 'directory') {
            throw new FsError('FS_NOT_DIRECTORY', `cannot search ${messagePath(root.target.displayPath)}: not a directory`)
          }
          const files = await walkFiles(deps.fs, root.target, control, accept)
          const value: GlobValue = {
            root: root.target.displayPath,
            pattern,
            paths: files.slice(0, config.globMaxResults).map((f) => f.path),
            totalPaths: files.length,
          }
          return ok(globText(value), value)
        } catch (err) {
          const final = control.translate(err)
          if (final instanceof SearchTimeout) return timeoutResult(final, 'the tree may be too large', 'narrow the pattern or path')
          throw final
        } finally {
          control.dispose()
        }
      }),
  }
}
