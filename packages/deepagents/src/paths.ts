import { FsError } from '@seamfs/core'

/** A deepagents path, checked and split: what the seamfs filesystem resolves, and what the model is shown. */
export interface VirtualPath {
  /** Relative to the backend's root, `/`-separated, without `.` segments; `.` for the root itself. */
  readonly relative: string
  /** Absolute in the agent's view (`/notes.md`, `/` for the root). */
  readonly virtual: string
}

/**
 * Reads a deepagents path (`/notes.md`; a relative one is taken from the root too) as a path
 * under the backend's root. A `..` segment, a leading `~` or a backslash is refused before any
 * I/O (`FS_SANDBOX_DENIED`): the agent's tree has no parent to climb to, whatever the store.
 */
export function parseVirtual(path: unknown): VirtualPath {
  const text = typeof path === 'string' ? path : ''
  const segments = text.split('/').filter((s) => s !== '' && s !== '.')
  if (segments.includes('..') || segments[0]?.startsWith('~') === true || text.includes('\\')) {
    throw FsError.sandboxDenied('resolve', text, 'path traversal is not allowed (no "..", "~" or "\\")')
  }
  if (segments.length === 0) return { relative: '.', virtual: '/' }
  const relative = segments.join('/')
  return { relative, virtual: `/${relative}` }
}

/** The agent's path of a path relative to the root (`.` or `''` is `/`). */
export function toVirtual(relative: string): string {
  return relative === '' || relative === '.' ? '/' : `/${relative}`
}

/** `name` inside the agent's directory `dir`. */
export function childOf(dir: string, name: string): string {
  return dir.endsWith('/') ? `${dir}${name}` : `${dir}/${name}`
}
