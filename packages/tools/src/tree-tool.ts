import { FsError, isFsError, type FsDirEntry, type FsTarget, type FsTreeEntry } from '@seamfs/core'
import { compareNames } from '@seamfs/core/backend'
import { NON_BLANK } from './args.js'
import { composition, MARK, plural, RANK, type ListValue } from './list-tool.js'
import { errorText, quoteName, quotePath } from './quote.js'
import { ok } from './results.js'
import { BOOLEAN, COUNT, LINE_NUMBER, object, STRING } from './structured.js'
import { resolveIn, run, toolInput, type ToolInput } from './tool-kit.js'
import type { FileTool, StructuredOutput, ToolDeps } from './types.js'
import { VCS_DIRS } from './walk.js'

/** The default and the deepest `depth` of `tree`. */
export const TREE_DEFAULT_DEPTH = 3
export const TREE_MAX_DEPTH = 20

/** How many entries one `tree` call lists at most, as a multiple of what it shows (`listMaxEntries`). */
export const TREE_SCAN_FACTOR = 50

/** Of the call's deadline, the share a listing may take: what was found is still returned in time. */
const DEADLINE_SHARE = 0.9

/** What became of a directory in the tree shown. */
export type TreeDirState =
  /** Its entries are shown (none, for an empty directory). */
  | 'expanded'
  /** Its entries are not shown: past the depth, or more than the entries left to show. */
  | 'collapsed'
  /** A symbolic link to a directory: listed, never entered. */
  | 'link'
  /** A version-control directory (`.git`…): listed, never entered. */
  | 'not-entered'

/** One entry shown by `tree`. */
export interface TreeEntry {
  /** Its names below the listed directory, `/`-joined (`src/index.ts`). */
  readonly path: string
  readonly type: FsDirEntry['type']
  /** 1 for a direct child of the listed directory. */
  readonly depth: number
  /** For a directory: whether its entries are shown, and why not; `null` for a file or other entry. */
  readonly state: TreeDirState | null
  /** Of a collapsed directory: how many direct entries it holds that are not shown (as far as the listing got); else 0. */
  readonly hidden: number
}

/** Canonical value of `tree`. */
export interface TreeValue {
  readonly path: string
  readonly depth: number
  /** The entries shown, in the order of the text (each directory followed by its entries). */
  readonly entries: readonly TreeEntry[]
  /** Of the entries shown. */
  readonly counts: ListValue['counts']
  /** Entries found but not shown: inside collapsed directories, and direct entries of the listed directory past the cap. */
  readonly hiddenEntries: number
  /** Direct entries of the listed directory past the cap (then `list` with `offset` shows them); 0 when all are shown. */
  readonly rootHidden: number
  /** True when the listing reached every entry down to the depth; false when it stopped early (see `stopped`). */
  readonly complete: boolean
  /** Why the listing stopped early: too many entries, out of time, or a directory that could not be listed (its error text); `null` when complete. */
  readonly stopped: string | null
}

/** The checked arguments of `tree`, defaults filled in. */
export interface TreeArgs {
  /** The directory (default `.`). */
  readonly path: string
  /** Levels below it to show (default {@link TREE_DEFAULT_DEPTH}). */
  readonly depth: number
}

const TYPE = { type: 'string', enum: ['directory', 'file', 'other'] } as const
const STATE = { type: ['string', 'null'], enum: ['expanded', 'collapsed', 'link', 'not-entered', null] } as const

export const treeStructured: StructuredOutput<TreeValue> = {
  schema: object({
    path: STRING,
    depth: LINE_NUMBER,
    entries: { type: 'array', items: object({ path: STRING, type: TYPE, depth: LINE_NUMBER, state: STATE, hidden: COUNT }) },
    counts: object({ directories: COUNT, files: COUNT, other: COUNT }),
    hiddenEntries: COUNT,
    rootHidden: COUNT,
    complete: BOOLEAN,
    stopped: { type: ['string', 'null'] },
  }),
  content: (v) => ({
    path: v.path,
    depth: v.depth,
    entries: v.entries.map((e) => ({ path: e.path, type: e.type, depth: e.depth, state: e.state, hidden: e.hidden })),
    counts: { directories: v.counts.directories, files: v.counts.files, other: v.counts.other },
    hiddenEntries: v.hiddenEntries,
    rootHidden: v.rootHidden,
    complete: v.complete,
    stopped: v.stopped,
  }),
}

export function treeInput(): ToolInput<TreeArgs> {
  const inputSchema = {
    type: 'object',
    properties: {
      path: { type: ['string', 'null'], pattern: NON_BLANK, description: 'Directory to show. Defaults to the workspace.' },
      depth: {
        type: ['integer', 'null'],
        minimum: 1,
        maximum: TREE_MAX_DEPTH,
        description: `How many levels below the directory to show (1: its direct children). Defaults to ${TREE_DEFAULT_DEPTH}.`,
      },
    },
    additionalProperties: false,
  }
  return toolInput(inputSchema, (a): TreeArgs => ({ path: a.optionalString('path') ?? '.', depth: a.integer('depth', TREE_DEFAULT_DEPTH) }))
}

/** What the listing found: the entries down to the depth by directory, and how many entries each directory at the depth holds. */
interface Scan {
  readonly children: Map<string, FsTreeEntry[]>
  readonly beyond: Map<string, number>
  readonly stopped: string | null
}

const parentOf = (path: string): string => {
  const cut = path.lastIndexOf('/')
  return cut < 0 ? '' : path.slice(0, cut)
}
const depthOf = (path: string): number => path.split('/').length
const byKindThenName = (x: FsTreeEntry, y: FsTreeEntry): number => RANK[x.type] - RANK[y.type] || compareNames(x.name, y.name)

/** Why the listing stopped when time ran out (the tools' own budget). */
class TreeBudget extends Error {
  override readonly name = 'TreeBudget'
}

/**
 * Lists the tree below `target` with one `listTree` (VCS directories listed, never entered), keeping
 * the entries down to `depth` and counting those one level deeper by parent. Stops at `maxScan`
 * entries, at `budgetMs`, or at a directory below that cannot be listed, keeping what it found.
 */
async function scan(deps: ToolDeps, target: FsTarget, depth: number, maxScan: number, budgetMs: number, caller: AbortSignal | undefined): Promise<Scan> {
  const children = new Map<string, FsTreeEntry[]>()
  const beyond = new Map<string, number>()
  const budget = new AbortController()
  const signal = caller === undefined ? budget.signal : AbortSignal.any([caller, budget.signal])
  const timer = setTimeout(() => budget.abort(new TreeBudget()), budgetMs)
  const deadline = Date.now() + budgetMs
  let seen = 0
  let listed = false
  const outOfTime = (): string => `the listing stopped after ${budgetMs} ms`
  try {
    const pages = await deps.fs.listTree(target, { prune: [...VCS_DIRS], signal })
    listed = true
    for await (const page of pages) {
      for (const entry of page) {
        const at = depthOf(entry.path)
        if (at <= depth) {
          const parent = parentOf(entry.path)
          const kids = children.get(parent)
          if (kids === undefined) children.set(parent, [entry])
          else kids.push(entry)
        } else if (at === depth + 1) {
          const parent = parentOf(entry.path)
          beyond.set(parent, (beyond.get(parent) ?? 0) + 1)
        }
      }
      seen += page.length
      if (seen >= maxScan) return { children, beyond, stopped: `the listing stopped after ${seen} entries (the tree is too large)` }
      // A store in memory lists in microtasks only: no timer fires until it yields.
      if (Date.now() >= deadline) return { children, beyond, stopped: outOfTime() }
    }
    return { children, beyond, stopped: null }
  } catch (err) {
    if (caller?.aborted === true) throw err
    if (budget.signal.aborted) {
      if (!listed)
        throw new FsError('FS_IO_ERROR', `tree stopped after ${budgetMs} ms: the store did not answer in time; try again later`, {
          retryable: true,
          cause: err,
        })
      return { children, beyond, stopped: outOfTime() }
    }
    // The listed directory itself is the model's error; a directory below that fails ends the listing, not the answer.
    if (!listed || !isFsError(err)) throw err
    return { children, beyond, stopped: `the listing stopped at an error (${errorText(err)})` }
  } finally {
    clearTimeout(timer)
  }
}

/** Which entries are shown, which directories are collapsed (with how many entries each hides), and how many of the listed directory's are cut. */
interface Selection {
  readonly shown: ReadonlySet<string>
  readonly collapsed: ReadonlyMap<string, number>
  readonly rootHidden: number
}

/** The entries to show: breadth-first, a directory's entries all or none (but the listed directory's, cut at `max`). */
function select(found: Scan, depth: number, max: number): Selection {
  const shown = new Set<string>()
  const collapsed = new Map<string, number>()
  let rootHidden = 0
  const queue: string[] = ['']
  for (let at = 0; at < queue.length; at++) {
    const dir = queue[at] as string
    const kids = found.children.get(dir) ?? []
    let take = kids
    if (dir === '') {
      take = kids.slice(0, max)
      rootHidden = kids.length - take.length
    } else if (shown.size + kids.length > max || depthOf(dir) >= depth) {
      const hidden = depthOf(dir) >= depth ? (found.beyond.get(dir) ?? 0) : kids.length
      if (hidden > 0) collapsed.set(dir, hidden)
      continue
    }
    for (const kid of take) {
      shown.add(kid.path)
      if (kid.type === 'directory' && kid.link !== true && !VCS_DIRS.has(kid.name)) queue.push(kid.path)
    }
  }
  return { shown, collapsed, rootHidden }
}

/** The state of a directory shown: see {@link TreeDirState}. */
function stateOf(kid: FsTreeEntry, selected: Selection): TreeDirState {
  if (kid.link === true) return 'link'
  if (VCS_DIRS.has(kid.name)) return 'not-entered'
  return selected.collapsed.has(kid.path) ? 'collapsed' : 'expanded'
}

/** The entries shown, depth-first in listing order (each directory followed by its entries). */
function ordered(found: Scan, selected: Selection): TreeEntry[] {
  const out: TreeEntry[] = []
  const visit = (dir: string): void => {
    for (const kid of found.children.get(dir) ?? []) {
      if (!selected.shown.has(kid.path)) continue
      const state = kid.type === 'directory' ? stateOf(kid, selected) : null
      out.push({ path: kid.path, type: kid.type, depth: depthOf(kid.path), state, hidden: selected.collapsed.get(kid.path) ?? 0 })
      if (state === 'expanded') visit(kid.path)
    }
  }
  visit('')
  return out
}

const NOTE: Record<TreeDirState, (e: TreeEntry) => string> = {
  expanded: () => '',
  collapsed: (e) => ` (${plural(e.hidden, 'entry', 'entries')} not shown)`,
  link: () => ' (symbolic link, not entered)',
  'not-entered': () => ' (version control, not entered)',
}

/** One line of the text: indented two spaces a level, the name with its marker, and what became of a directory. */
function line(e: TreeEntry): string {
  const name = e.path.slice(e.path.lastIndexOf('/') + 1)
  return `${'  '.repeat(e.depth - 1)}${quoteName(name)}${MARK[e.type]}${e.state === null ? '' : NOTE[e.state](e)}`
}

/**
 * `(N entries: D directories, F files)` for a whole tree; else `(Showing N entries: …. <what was
 * left out, and how to see it>.)`; `(Empty directory)` for an empty one.
 */
export function treeFooter(v: TreeValue): string {
  const total = v.entries.length
  if (total === 0 && v.hiddenEntries === 0 && v.complete) return '(Empty directory)'
  const notes: string[] = []
  const collapsed = v.entries.filter((e) => e.state === 'collapsed')
  const inside = collapsed.reduce((n, e) => n + e.hidden, 0)
  if (inside > 0) {
    const where = collapsed.length === 1 ? '1 collapsed directory: pass it' : `${collapsed.length} collapsed directories: pass one`
    notes.push(`${plural(inside, 'more entry', 'more entries')} in ${where} as path to see inside`)
  }
  if (v.rootHidden > 0) {
    const next = v.entries.filter((e) => e.depth === 1).length + 1
    notes.push(`${plural(v.rootHidden, 'more entry', 'more entries')} directly in this directory: use the list tool with offset=${next} to see them`)
  }
  if (v.stopped !== null) notes.push(`${v.stopped}, so directories may hold more than shown; narrow the path`)
  const shown = `${plural(total, 'entry', 'entries')}: ${composition(v.counts)}`
  if (notes.length === 0) return `(${shown})`
  return `(Showing ${shown}. ${notes.map((n) => `${n.charAt(0).toUpperCase()}${n.slice(1)}`).join('. ')}.)`
}

/**
 * The `tree` tool: the directories and files below a directory, down to `depth`, from one
 * `listTree` of the contract (a prefix listing on stores that list subtrees at once; core's walk
 * elsewhere), behind the same fence as every tool: under confined reads a link leading out is an
 * `other` entry, never followed; a link to a directory inside is listed, never entered;
 * version-control directories are listed, never entered. At most `listMaxEntries` entries are
 * shown, breadth-first: a directory's entries all or none, a collapsed one saying how many it
 * holds. The listing stops at {@link TREE_SCAN_FACTOR} × `listMaxEntries` entries, and at
 * `searchTimeoutMs` (or nine tenths of `callTimeoutMs`): what it found is shown, with a footer
 * saying so. Records nothing in the policy.
 */
export function treeTool(deps: ToolDeps): FileTool<TreeValue> {
  const { config } = deps
  const max = config.listMaxEntries
  const maxScan = max * TREE_SCAN_FACTOR
  const budgetMs = Math.max(1, Math.min(config.searchTimeoutMs, Math.floor(config.callTimeoutMs * DEADLINE_SHARE)))
  const { inputSchema, parse } = treeInput()
  return {
    name: 'tree',
    description: 'Show the directories and files below a directory as an indented tree, down to a given depth.',
    inputSchema,
    structured: treeStructured,
    annotations: { title: 'Directory tree', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    prompt: `Use the tree tool — not shell find or tree — to see the layout of a project or a directory several levels deep in one call; use list for a single directory and glob to find files by name. It shows up to ${max} entries, ${TREE_DEFAULT_DEPTH} levels deep unless you pass depth; a directory whose entries did not fit is marked with how many it holds, so pass it as path to look inside.`,
    execute: (args, context = {}) =>
      run(async () => {
        const { path, depth } = parse(args)
        const target = await resolveIn(deps, path, context)
        const found = await scan(deps, target, depth, maxScan, budgetMs, context.signal)
        for (const kids of found.children.values()) kids.sort(byKindThenName)
        const selected = select(found, depth, max)
        const entries = ordered(found, selected)
        const counts = {
          directories: entries.filter((e) => e.type === 'directory').length,
          files: entries.filter((e) => e.type === 'file').length,
          other: entries.filter((e) => e.type === 'other').length,
        }
        const hiddenEntries = [...selected.collapsed.values()].reduce((n, h) => n + h, 0) + selected.rootHidden
        const value: TreeValue = {
          path: target.displayPath,
          depth,
          entries,
          counts,
          hiddenEntries,
          rootHidden: selected.rootHidden,
          complete: found.stopped === null,
          stopped: found.stopped,
        }
        const lines = entries.map(line)
        const footer = treeFooter(value)
        const content = lines.length === 0 ? footer : `${lines.join('\n')}\n\n${footer}`
        return ok(`<path>${quotePath(target.displayPath)}</path>\n<type>directory</type>\n<content>\n${content}\n</content>`, value)
      }),
  }
}
