import { FsError, type FsDirEntry } from '@seamfs/core'
import { NON_BLANK } from './args.js'
import { quoteName, quotePath } from './quote.js'
import { ok } from './results.js'
import { COUNT, LINE_NUMBER, object, STRING } from './structured.js'
import { resolveIn, run, toolInput, type ToolInput } from './tool-kit.js'
import type { FileTool, StructuredOutput, ToolDeps } from './types.js'

/** Canonical value of `list`: one page, with totals of the whole directory. */
export interface ListValue {
  readonly path: string
  readonly offset: number
  readonly entries: ReadonlyArray<{ readonly name: string; readonly type: FsDirEntry['type'] }>
  readonly totalEntries: number
  readonly counts: { readonly directories: number; readonly files: number; readonly other: number }
}

/** The checked arguments of `list`, defaults filled in. */
export interface ListArgs {
  /** The directory (default `.`). */
  readonly path: string
  /** 1-based first entry (default 1). */
  readonly offset: number
}

export const listStructured: StructuredOutput<ListValue> = {
  schema: object({
    path: STRING,
    offset: LINE_NUMBER,
    entries: { type: 'array', items: object({ name: STRING, type: { type: 'string', enum: ['directory', 'file', 'other'] } }) },
    totalEntries: COUNT,
    counts: object({ directories: COUNT, files: COUNT, other: COUNT }),
  }),
  content: (v) => ({
    path: v.path,
    offset: v.offset,
    entries: v.entries.map((e) => ({ name: e.name, type: e.type })),
    totalEntries: v.totalEntries,
    counts: { directories: v.counts.directories, files: v.counts.files, other: v.counts.other },
  }),
}

const RANK: Record<FsDirEntry['type'], number> = { directory: 0, file: 1, other: 2 }
const MARK: Record<FsDirEntry['type'], string> = { directory: '/', file: '', other: '@' }

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`

function composition(counts: ListValue['counts']): string {
  const parts = [plural(counts.directories, 'directory', 'directories'), plural(counts.files, 'file', 'files')]
  if (counts.other > 0) parts.push(`${counts.other} other`)
  return parts.join(', ')
}

export function listFooter(value: ListValue): string {
  const { totalEntries: total, offset, entries } = value
  if (total === 0) return '(Empty directory)'
  if (offset === 1 && entries.length === total) return `(${plural(total, 'entry', 'entries')}: ${composition(value.counts)})`
  const end = offset + entries.length - 1
  const more = end < total ? ` Use offset=${end + 1} to continue.` : ''
  return `(Showing entries ${offset}-${end} of ${total}: ${composition(value.counts)}.${more})`
}

export function listInput(): ToolInput<ListArgs> {
  const inputSchema = {
    type: 'object',
    properties: {
      path: { type: ['string', 'null'], pattern: NON_BLANK, description: 'Directory to list. Defaults to the workspace.' },
      offset: { type: ['integer', 'null'], minimum: 1, description: '1-based first entry to return. Defaults to 1.' },
    },
    additionalProperties: false,
  }
  return toolInput(inputSchema, (a): ListArgs => ({ path: a.optionalString('path') ?? '.', offset: a.integer('offset', 1) }))
}

export function listTool(deps: ToolDeps): FileTool<ListValue> {
  const max = deps.config.listMaxEntries
  const { inputSchema, parse } = listInput()
  return {
    name: 'list',
    description: 'List the direct children of a directory: directories first, then files, then other entries.',
    inputSchema,
    structured: listStructured,
    annotations: { title: 'List directory', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    prompt:
      'Use the list tool — not shell ls — to see what a directory contains. It returns the direct children of one directory, files and subdirectories alike, and defaults to the session workspace, so it is the first step for orienting in an unfamiliar project. When a result is capped, continue with the offset named in its footer.',
    execute: (args, context = {}) =>
      run(async () => {
        const { path, offset } = parse(args)
        const target = await resolveIn(deps, path, context)
        // listDir returns names in code-point order; the stable sort keeps that order within each kind.
        const all = (await deps.fs.listDir(target, { signal: context.signal }))
          .map((e) => ({ name: e.name, type: e.type }))
          .sort((x, y) => RANK[x.type] - RANK[y.type])
        if (offset > all.length && !(offset === 1 && all.length === 0)) {
          const shown = target.displayPath
          throw new FsError('FS_NOT_FOUND', `offset ${offset} is out of range for "${shown}" (${all.length} entries)`, { verb: 'list', path: shown })
        }
        const counts = {
          directories: all.filter((e) => e.type === 'directory').length,
          files: all.filter((e) => e.type === 'file').length,
          other: all.filter((e) => e.type === 'other').length,
        }
        const value: ListValue = {
          path: target.displayPath,
          offset,
          entries: all.slice(offset - 1, offset - 1 + max),
          totalEntries: all.length,
          counts,
        }
        const lines = value.entries.map((e) => `${quoteName(e.name)}${MARK[e.type]}`)
        const footer = listFooter(value)
        const content = lines.length === 0 ? footer : `${lines.join('\n')}\n\n${footer}`
        return ok(`<path>${quotePath(target.displayPath)}</path>\n<type>directory</type>\n<content>\n${content}\n</content>`, value)
      }, 'list'),
  }
}
