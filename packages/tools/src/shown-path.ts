import type { FsTarget } from '@seamfs/core'
import { messagePath } from './quote.js'
import { ToolInputError } from './results.js'
import type { ToolContext, ToolDeps } from './types.js'
import { VCS_DIRS } from './walk.js'

/** Turns a path relative to a search root into the path the tools print. */
export type ShowPath = (relative: string) => string

/**
 * The display path of the cwd the tools resolve relative paths against (the call's, else the
 * tools', else the backend's), or undefined when it cannot be resolved (then paths print absolute).
 */
export async function cwdDisplay(deps: ToolDeps, context: ToolContext, signal: AbortSignal | undefined): Promise<string | undefined> {
  try {
    return (await deps.fs.resolve(context.cwd ?? deps.cwd ?? '.', { signal })).displayPath
  } catch {
    return undefined
  }
}

/** `display` relative to `cwd` when it is `cwd` or below it (`''` for `cwd` itself), else undefined. */
export function relativeTo(cwd: string | undefined, display: string): string | undefined {
  if (cwd === undefined) return undefined
  if (display === cwd) return ''
  const base = cwd.endsWith('/') ? cwd : `${cwd}/`
  return display.startsWith(base) ? display.slice(base.length) : undefined
}

function joined(base: string, relative: string): string {
  if (base === '') return relative === '' ? '.' : relative
  if (relative === '') return base
  return base.endsWith('/') ? `${base}${relative}` : `${base}/${relative}`
}

/**
 * How glob and grep print the paths they find, so the model can pass each one back to any tool
 * unchanged: relative to the cwd when the search root is inside it (`src/index.ts`, whatever
 * `path` was), else absolute (the root's display path joined with the relative path).
 *
 * Refuses a search root inside a version-control directory (`.git`, `.hg`, …) with an input
 * error: the walk never enters those, and the prompt says they are not searched. Only the
 * segments below the cwd count when the root is inside it, so a workspace that itself lives
 * under such a name still works.
 */
export async function pathShower(deps: ToolDeps, context: ToolContext, root: FsTarget, signal: AbortSignal | undefined): Promise<ShowPath> {
  return showPaths(await cwdDisplay(deps, context, signal), root)
}

/** {@link pathShower} with the cwd's display path ({@link cwdDisplay}) already known. */
export function showPaths(cwd: string | undefined, root: FsTarget): ShowPath {
  const display = root.displayPath
  const inside = relativeTo(cwd, display)
  const base = inside ?? display
  const vcs = base.split('/').find((segment) => VCS_DIRS.has(segment))
  if (vcs !== undefined) {
    throw new ToolInputError(`cannot search ${messagePath(joined(base, ''))}: it is inside a version-control directory (${vcs}), and those are not searched`)
  }
  return (relative) => joined(base, relative)
}
