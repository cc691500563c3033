import { FsError } from '@seamfs/core'
import { NON_BLANK } from './args.js'
import { IGNORE_REPORT_SCHEMA, ignoreContent, ignoreFooters, ignoreReport, INCLUDE_IGNORED, searchIgnores, type IgnoreReport } from './ignore-files.js'
import { quotePath } from './quote.js'
import { ok } from './results.js'
import { cwdDisplay, showPaths } from './shown-path.js'
import { COUNT, object, STRING } from './structured.js'
import { run, toolInput, type ToolInput } from './tool-kit.js'
import type { FileTool, StructuredOutput, ToolDeps } from './types.js'
import { openRoot, resolveRoot, searchFiles } from './tree-walk.js'
import { fencedFooter, pathMatcher, SearchControl, SearchTimeout, timeoutResult } from './walk.js'

/**
 * Canonical value of `glob`: the shown paths and how many matched in all. Each path is one any tool
 * accepts unchanged: relative to the cwd when inside it (`/`-separated), else absolute.
 */
export interface GlobValue extends IgnoreReport {
  /** Display path of the search root. */
  readonly root: string
  readonly pattern: string
  readonly paths: string[]
  readonly totalPaths: number
  /**
   * Entries below the root a fence kept out of, skipped: links pointing outside confined reads (to
   * a file or a directory: the fence does not say which) and directories it refused to list.
   */
  readonly fencedDirs: number
  /** The first of those entries (at most five, in path order), each a path the other tools accept: the footer names them. */
  readonly fencedPaths: string[]
}

/** The checked arguments of `glob`, defaults filled in; `pattern` compiles as a glob. */
export interface GlobArgs {
  readonly pattern: string
  /** The directory to search (default `.`). */
  readonly path: string
  /** Search what `.gitignore` and `.ignore` files exclude too (default false). */
  readonly includeIgnored: boolean
}

export const globStructured: StructuredOutput<GlobValue> = {
  schema: object(
    {
      root: STRING,
      pattern: STRING,
      paths: { type: 'array', items: STRING },
      totalPaths: COUNT,
      fencedDirs: COUNT,
      fencedPaths: { type: 'array', items: STRING },
      ...IGNORE_REPORT_SCHEMA.properties,
    },
    IGNORE_REPORT_SCHEMA.optional,
  ),
  content: (v) => ({
    root: v.root,
    pattern: v.pattern,
    paths: [...v.paths],
    totalPaths: v.totalPaths,
    fencedDirs: v.fencedDirs,
    fencedPaths: [...v.fencedPaths],
    ...ignoreContent(v),
  }),
}

export function globText(value: GlobValue): string {
  const fenced = fencedFooter(value.fencedDirs, 'linked file or directory', 'linked files or directories', value.fencedPaths)
  const footers: string[] = []
  if (value.paths.length < value.totalPaths)
    footers.push(`(Showing ${value.paths.length} of ${value.totalPaths} paths. Narrow the pattern or path to see the rest.)`)
  if (fenced !== undefined) footers.push(fenced)
  footers.push(...ignoreFooters(value))
  const body = value.totalPaths === 0 ? 'No files found' : value.paths.map(quotePath).join('\n')
  return footers.length === 0 ? body : `${body}\n\n${footers.join('\n')}`
}

export function globInput(): ToolInput<GlobArgs> {
  const inputSchema = {
    type: 'object',
    properties: {
      pattern: {
        type: 'string',
        pattern: NON_BLANK,
        description:
          'Glob matched against paths relative to the search root, like "src/**/*.ts" or "*.{js,json}". A pattern without "/" matches file names at any depth.',
      },
      path: { type: ['string', 'null'], pattern: NON_BLANK, description: 'Directory to search. Defaults to the workspace.' },
      include_ignored: { type: ['boolean', 'null'], description: INCLUDE_IGNORED },
    },
    required: ['pattern'],
    additionalProperties: false,
  }
  return toolInput(inputSchema, (a): GlobArgs => {
    const pattern = a.string('pattern')
    const path = a.optionalString('path') ?? '.'
    pathMatcher('pattern', pattern)
    return { pattern, path, includeIgnored: a.boolean('include_ignored', false) }
  })
}

export function globTool(deps: ToolDeps): FileTool<GlobValue> {
  const { config } = deps
  const { inputSchema, parse } = globInput()
  return {
    name: 'glob',
    description: 'Find files whose path matches a glob pattern, in path order.',
    inputSchema,
    structured: globStructured,
    annotations: { title: 'Find files', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    prompt: `Use the glob tool — not shell find or ls -R — to find files by name or path pattern. A pattern without "/" (like "*.test.ts") matches file names at any depth; "src/**/*.ts" matches paths under src. Dotfiles are included; .git and other version-control directories are skipped, and so are paths that .gitignore or .ignore files exclude (the footer counts them; set include_ignored to true to search them). Results are in path order, at most ${config.globMaxResults}, each a path the other tools accept as it is; when the footer says results were cut, narrow the pattern or path.`,
    execute: (args, context = {}) =>
      run(async () => {
        const { pattern, path, includeIgnored } = parse(args)
        const accept = pathMatcher('pattern', pattern)
        const control = new SearchControl('glob', config.searchTimeoutMs, context.signal)
        try {
          const target = await resolveRoot(deps, path, context, control)
          const cwd = cwdDisplay(deps, context, control.signal)
          const ignores = includeIgnored ? undefined : searchIgnores(deps.fs, control, cwd, target)
          const root = await openRoot(deps, target, control)
          if (root.info.type !== 'directory') {
            const shown = root.target.displayPath
            throw new FsError('FS_NOT_DIRECTORY', `cannot search "${shown}": not a directory`, { verb: 'list', path: shown })
          }
          const show = showPaths(await control.race(cwd), root.target)
          const { files, fenced, fencedPaths } = await searchFiles({ fs: deps.fs, root, control, accept, concurrency: config.searchConcurrency, ignores })
          const value: GlobValue = {
            root: root.target.displayPath,
            pattern,
            paths: files.slice(0, config.globMaxResults).map((f) => show(f.path)),
            totalPaths: files.length,
            fencedDirs: fenced,
            fencedPaths: fencedPaths.map(show),
            ...ignoreReport(ignores, show),
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
