import { FsError, isFsError, type FsDirEntry } from '@seamfs/core'
import { NON_BLANK } from './args.js'
import { mapInOrder } from './bounded.js'
import { quoteName, quotePath } from './quote.js'
import { ok } from './results.js'
import { COUNT, LINE_NUMBER, object, STRING } from './structured.js'
import { resolveIn, run, toolInput, type ToolInput } from './tool-kit.js'
import type { FileTool, StructuredOutput, ToolDeps } from './types.js'

/** One entry of a `list` page. */
export interface ListEntry {
  readonly name: string
  readonly type: FsDirEntry['type']
  /** With `details` only: a file's byte size, `null` where unknown (and for anything but a file). */
  readonly size?: number | null | undefined
  /** With `details` only: the last modification (ms since the epoch, the store's clock), `null` where unknown. */
  readonly mtime?: number | null | undefined
}

/** Canonical value of `list`: one page, with totals of the whole directory. */
export interface ListValue {
  readonly path: string
  readonly offset: number
  readonly entries: readonly ListEntry[]
  readonly totalEntries: number
  readonly counts: { readonly directories: number; readonly files: number; readonly other: number }
}

/** The checked arguments of `list`, defaults filled in. */
export interface ListArgs {
  /** The directory (default `.`). */
  readonly path: string
  /** 1-based first entry (default 1). */
  readonly offset: number
  /** Show each entry's size and modification time (default false). */
  readonly details: boolean
}

/** `ms` as ISO 8601 (UTC, milliseconds); `null` for none, or a time no `Date` can hold. */
export function isoTime(ms: number | null | undefined): string | null {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || Math.abs(ms) > 8.64e15) return null
  return new Date(ms).toISOString()
}

export const listStructured: StructuredOutput<ListValue> = {
  schema: object({
    path: STRING,
    offset: LINE_NUMBER,
    entries: {
      type: 'array',
      items: object(
        {
          name: STRING,
          type: { type: 'string', enum: ['directory', 'file', 'other'] },
          size: { type: ['integer', 'null'], minimum: 0 },
          modified: { type: ['string', 'null'] },
        },
        // Present with `details` only.
        ['size', 'modified'],
      ),
    },
    totalEntries: COUNT,
    counts: object({ directories: COUNT, files: COUNT, other: COUNT }),
  }),
  content: (v) => ({
    path: v.path,
    offset: v.offset,
    entries: v.entries.map((e) => ({
      name: e.name,
      type: e.type,
      ...(e.size === undefined ? {} : { size: e.size }),
      ...(e.mtime === undefined ? {} : { modified: isoTime(e.mtime) }),
    })),
    totalEntries: v.totalEntries,
    counts: { directories: v.counts.directories, files: v.counts.files, other: v.counts.other },
  }),
}

/** The order of kinds in a listing: directories, then files, then other entries. */
export const RANK: Record<FsDirEntry['type'], number> = { directory: 0, file: 1, other: 2 }
/** The marker after a name in a listing: `name/` for a directory, `name@` for other entries. */
export const MARK: Record<FsDirEntry['type'], string> = { directory: '/', file: '', other: '@' }

export const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`

/** `D directories, F files` (`, N other` when there are any). */
export function composition(counts: ListValue['counts']): string {
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
      details: {
        type: ['boolean', 'null'],
        description: "Show each entry's size in bytes and last modification time (UTC) before its name. Defaults to false.",
      },
    },
    additionalProperties: false,
  }
  return toolInput(inputSchema, (a): ListArgs => ({
    path: a.optionalString('path') ?? '.',
    offset: a.integer('offset', 1),
    details: a.boolean('details', false),
  }))
}

/** The modification time as a listing shows it: ISO 8601 to the second (`2024-05-01T10:00:00Z`). */
const shortTime = (ms: number | null | undefined): string | undefined => isoTime(ms)?.replace(/\.\d{3}Z$/, 'Z')
const TIME_WIDTH = '2024-05-01T10:00:00Z'.length

/** The lines of a page with details: size (right-aligned; `-` for what is not a file, `?` unknown), time (`?` unknown), then the name. */
function detailLines(entries: readonly ListEntry[]): string[] {
  const sizes = entries.map((e) => (e.type !== 'file' ? '-' : e.size === null || e.size === undefined ? '?' : String(e.size)))
  const width = Math.max(1, ...sizes.map((s) => s.length))
  return entries.map((e, i) => {
    const time = e.type === 'other' ? '-' : (shortTime(e.mtime) ?? '?')
    return `${(sizes[i] as string).padStart(width)}  ${time.padEnd(TIME_WIDTH)}  ${quoteName(e.name)}${MARK[e.type]}`
  })
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
        const { path, offset, details } = parse(args)
        const target = await resolveIn(deps, path, context)
        // listDir returns names in code-point order; the stable sort keeps that order within each kind.
        const listed = (await deps.fs.listDir(target, { signal: context.signal })).sort((x, y) => RANK[x.type] - RANK[y.type])
        const all = listed.map((e) => ({ name: e.name, type: e.type }))
        if (offset > all.length && !(offset === 1 && all.length === 0)) {
          const shown = target.displayPath
          throw new FsError('FS_NOT_FOUND', `offset ${offset} is out of range for "${shown}" (${all.length} entries)`, { verb: 'list', path: shown })
        }
        const counts = {
          directories: all.filter((e) => e.type === 'directory').length,
          files: all.filter((e) => e.type === 'file').length,
          other: all.filter((e) => e.type === 'other').length,
        }
        const page = details ? await withDetails(deps, listed.slice(offset - 1, offset - 1 + max), context.signal) : all.slice(offset - 1, offset - 1 + max)
        const value: ListValue = { path: target.displayPath, offset, entries: page, totalEntries: all.length, counts }
        const lines = details ? detailLines(value.entries) : value.entries.map((e) => `${quoteName(e.name)}${MARK[e.type]}`)
        const footer = listFooter(value)
        const content = lines.length === 0 ? footer : `${lines.join('\n')}\n\n${footer}`
        return ok(`<path>${quotePath(target.displayPath)}</path>\n<type>directory</type>\n<content>\n${content}\n</content>`, value)
      }, 'list'),
  }
}

/**
 * The entries of a page with their size and modification time: what the listing carries, else a
 * `stat` of the entry (only for the page shown, `searchConcurrency` at a time, where the listing
 * left out a file's size, or a modification time the store keeps). Other entries (broken links,
 * special files, links leading outside a fence) are not looked at. A `stat` that fails, or finds
 * nothing (the entry went meanwhile), leaves the value unknown.
 */
async function withDetails(deps: ToolDeps, entries: readonly FsDirEntry[], signal: AbortSignal | undefined): Promise<ListEntry[]> {
  const keepsTimes = deps.fs.capabilities.mtime === true
  return mapInOrder(entries, deps.config.searchConcurrency, async (e): Promise<ListEntry> => {
    let size = e.type === 'file' ? e.size : undefined
    let mtime = e.mtime
    const lacking = e.type !== 'other' && ((e.type === 'file' && size === undefined) || (mtime === undefined && keepsTimes))
    if (lacking) {
      try {
        const info = await deps.fs.stat(e.target, { signal })
        if (info !== undefined && info.type === e.type) {
          if (e.type === 'file') size ??= info.size
          mtime ??= info.mtime
        }
      } catch (err) {
        if (isFsError(err, 'FS_ABORTED')) throw err
      }
    }
    return { name: e.name, type: e.type, size: e.type === 'file' ? (size ?? null) : null, mtime: e.type === 'other' ? null : (mtime ?? null) }
  })
}
