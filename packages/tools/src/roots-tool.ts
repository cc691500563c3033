import { isFsError, SandboxedFileSystem, type FileSystem, type FsTarget, type SandboxMode } from '@seamfs/core'
import { FileSystemLayer } from '@seamfs/core/backend'
import { quotePath } from './quote.js'
import { ok } from './results.js'
import { BOOLEAN, NULLABLE_STRING, object, STRING } from './structured.js'
import { resolveIn, run, toolInput, type ToolInput } from './tool-kit.js'
import type { FileTool, StructuredOutput, ToolDeps } from './types.js'

/** One root of the fence, as `list_roots` tells it. */
export interface RootInfo {
  /** Its display path where it is pinned; as configured while it does not resolve. */
  readonly path: string
  /** The workspace root: the first root, where the fence's relative paths start. */
  readonly workspace: boolean
  /** Changes may land inside it (`workspace-write`, `full-access`). */
  readonly writable: boolean
  /** False while nothing is there (a directory not created yet, a root that does not resolve). */
  readonly found: boolean
}

/** Canonical value of `list_roots`. */
export interface ListRootsValue {
  /** False when the tools run on the store with no fence: everything is allowed. */
  readonly sandboxed: boolean
  /** The fence's mode; `null` without one. */
  readonly mode: SandboxMode | null
  /** Whether reads, stats and listings are confined to the roots. */
  readonly confineReads: boolean
  /** Where relative paths start for this call (the display path); `null` when it does not resolve. */
  readonly cwd: string | null
  readonly roots: readonly RootInfo[]
}

/** The checked arguments of `list_roots`: none. */
export type ListRootsArgs = Readonly<Record<string, never>>

export const listRootsStructured: StructuredOutput<ListRootsValue> = {
  schema: object({
    sandboxed: BOOLEAN,
    mode: { type: ['string', 'null'], enum: ['read-only', 'workspace-write', 'full-access', null] },
    confineReads: BOOLEAN,
    cwd: NULLABLE_STRING,
    roots: { type: 'array', items: object({ path: STRING, workspace: BOOLEAN, writable: BOOLEAN, found: BOOLEAN }) },
  }),
  content: (v) => ({
    sandboxed: v.sandboxed,
    mode: v.mode,
    confineReads: v.confineReads,
    cwd: v.cwd,
    roots: v.roots.map((r) => ({ path: r.path, workspace: r.workspace, writable: r.writable, found: r.found })),
  }),
}

export const listRootsInput = (): ToolInput<ListRootsArgs> =>
  toolInput({ type: 'object', properties: {}, additionalProperties: false }, (): ListRootsArgs => ({}))

/** The outermost fence `fs` is, or is a layer over; undefined when there is none. */
export function fenceOf(fs: FileSystem): SandboxedFileSystem | undefined {
  for (let at: FileSystem = fs; at instanceof FileSystemLayer; at = at.inner) if (at instanceof SandboxedFileSystem) return at
  return undefined
}

const MODE_TEXT: Record<SandboxMode, string> = {
  'read-only': 'read-only: no file may be changed',
  'workspace-write': 'workspace-write: files may be changed only inside the roots below',
  'full-access': 'full-access: files may be read and changed anywhere in the store',
}

function text(v: ListRootsValue): string {
  const lines: string[] = []
  if (v.mode === null) lines.push('Mode: no sandbox: files may be read and changed anywhere in the store.')
  else {
    lines.push(`Mode: ${MODE_TEXT[v.mode]}.`)
    lines.push(v.confineReads ? 'Reads: confined to the roots below.' : 'Reads: anywhere in the store.')
  }
  lines.push(`Relative paths start at: ${v.cwd === null ? 'a directory that does not resolve' : quotePath(v.cwd)}`)
  if (v.roots.length > 0) {
    lines.push('Roots:')
    for (const root of v.roots) {
      const notes = [...(root.workspace ? ['workspace'] : []), ...(root.found ? [] : ['does not exist yet'])]
      lines.push(`${quotePath(root.path)}${notes.length === 0 ? '' : ` (${notes.join(', ')})`}`)
    }
  }
  return lines.join('\n')
}

/**
 * The `list_roots` tool: the directories the model may use — the fence's workspace root and
 * writable roots, its mode and whether reads are confined — read from the fence itself
 * (`SandboxedFileSystem.describeFence`; the outermost one, where layers are stacked). On a store
 * with no fence it says the whole store is allowed. Protected paths and names (`.git`,
 * `node_modules`…) are not listed: a refusal names them. Reads nothing, records nothing.
 */
export function listRootsTool(deps: ToolDeps): FileTool<ListRootsValue> {
  const { inputSchema, parse } = listRootsInput()
  const fence = fenceOf(deps.fs)
  return {
    name: 'list_roots',
    description: 'List the directories you may use: the workspace and any other writable roots, and whether reads are confined to them.',
    inputSchema,
    structured: listRootsStructured,
    annotations: { title: 'List allowed directories', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    prompt:
      'Use the list_roots tool to learn which directories you may read and change before working outside the workspace, or when a path is refused as outside the sandbox. Relative paths start at the directory it names.',
    execute: (args, context = {}) =>
      run(async () => {
        parse(args)
        const signal = context.signal
        let cwd: string | null = null
        try {
          cwd = (await resolveIn(deps, '.', context)).displayPath
        } catch (err) {
          if (isFsError(err, 'FS_ABORTED')) throw err
        }
        if (fence === undefined) return ok(text(noFence(cwd)), noFence(cwd))
        const { mode, confineReads, roots } = await fence.describeFence({ signal })
        const found = await Promise.all(roots.map(async ({ target }) => target !== undefined && (await exists(deps, target, signal))))
        const value: ListRootsValue = {
          sandboxed: true,
          mode,
          confineReads,
          cwd,
          roots: roots.map((root, i) => ({
            path: root.target?.displayPath ?? root.configured,
            workspace: i === 0,
            writable: mode !== 'read-only',
            found: found[i] === true,
          })),
        }
        return ok(text(value), value)
      }),
  }
}

/** Whether something is at `target` (a `stat` that fails, but for an abort, says no). */
async function exists(deps: ToolDeps, target: FsTarget, signal: AbortSignal | undefined): Promise<boolean> {
  try {
    return (await deps.fs.stat(target, { signal })) !== undefined
  } catch (err) {
    if (isFsError(err, 'FS_ABORTED')) throw err
    return false
  }
}

const noFence = (cwd: string | null): ListRootsValue => ({ sandboxed: false, mode: null, confineReads: false, cwd, roots: [] })
