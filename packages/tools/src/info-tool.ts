import { FsError, isFsError, type FsInfo, type FsPathInfo, type FsTarget } from '@seamfs/core'
import { isoTime } from './list-tool.js'
import { quotePath } from './quote.js'
import { ok } from './results.js'
import { object, STRING } from './structured.js'
import { pathInput, run, type PathArgs, type ToolInput } from './tool-kit.js'
import type { FileTool, StructuredOutput, ToolDeps } from './types.js'

/** What a symbolic link leads to, as `info` tells it. */
export interface LinkInfo {
  /**
   * `file`, `directory` or `other`: what it resolves to; `missing`: a broken link (or one that does
   * not resolve: a loop); `outside`: a link leading outside the sandbox roots under confined reads,
   * whose target is not the model's to learn.
   */
  readonly type: 'file' | 'directory' | 'other' | 'missing' | 'outside'
  /** Byte size of the file it leads to; `null` otherwise, or where the store does not say. */
  readonly size: number | null
  /** Last modification of what it leads to (ms since the epoch); `null` where unknown. */
  readonly mtime: number | null
}

/** Canonical value of `info`. */
export interface InfoValue {
  readonly path: string
  /** The path itself: a final symbolic link is `symlink`, not followed (see `link`). */
  readonly type: 'file' | 'directory' | 'symlink' | 'other'
  /** Byte size of a file (of a link: of the file it leads to); `null` for anything else, or where the store does not say. */
  readonly size: number | null
  /** Last modification (ms since the epoch, the store's clock); `null` where the store does not say. Of a link: of what it leads to. */
  readonly mtime: number | null
  /** Of a symbolic link: what it leads to; `null` otherwise. */
  readonly link: LinkInfo | null
}

/** The checked arguments of `info`. */
export type InfoArgs = PathArgs

const SIZE = { type: ['integer', 'null'], minimum: 0 } as const
const TIME = { type: ['string', 'null'] } as const

export const infoStructured: StructuredOutput<InfoValue> = {
  schema: object({
    path: STRING,
    type: { type: 'string', enum: ['file', 'directory', 'symlink', 'other'] },
    size: SIZE,
    modified: TIME,
    link: {
      anyOf: [
        { type: 'null' },
        object({
          type: { type: 'string', enum: ['file', 'directory', 'other', 'missing', 'outside'] },
          size: SIZE,
          modified: TIME,
        }),
      ],
    },
  }),
  content: (v) => ({
    path: v.path,
    type: v.type,
    size: v.size,
    modified: isoTime(v.mtime),
    link: v.link === null ? null : { type: v.link.type, size: v.link.size, modified: isoTime(v.link.mtime) },
  }),
}

export const infoInput = (): ToolInput<InfoArgs> => pathInput('File or directory to describe, resolved by the filesystem backend.')

const sizeOf = (info: FsInfo | FsPathInfo): number | null => (info.type === 'file' && info.size !== undefined ? info.size : null)
const mtimeOf = (info: FsInfo | FsPathInfo): number | null => info.mtime ?? null

const LINK_TEXT: Record<LinkInfo['type'], string> = {
  file: 'a file',
  directory: 'a directory',
  other: 'a special file',
  missing: 'nothing (a broken link)',
  outside: 'a path outside the sandbox roots (not followed)',
}

function lines(v: InfoValue): string[] {
  const out: string[] = []
  const facts = (type: string, size: number | null, mtime: number | null): void => {
    if (type === 'file') out.push(`size: ${size === null ? 'unknown' : `${size} ${size === 1 ? 'byte' : 'bytes'}`}`)
    if (type === 'file' || type === 'directory') out.push(`modified: ${isoTime(mtime) ?? 'unknown'}`)
  }
  const link = v.link
  if (link === null) {
    if (v.type === 'other') out.push('a special file: not a regular file, a directory or a link')
    facts(v.type, v.size, v.mtime)
    return out
  }
  out.push(`links to: ${LINK_TEXT[link.type]}`)
  facts(link.type, link.size, link.mtime)
  return out
}

/**
 * The `info` tool: what a path is — file, directory, symbolic link or other — with a file's size
 * and the last modification (`stat`, and `lstat` for the path itself, so a link is told as one and
 * what it leads to is said). Reads no content, so it records nothing in the policy. Under confined
 * reads a path outside the roots is `FS_SANDBOX_DENIED`, and a link inside that leads out is told
 * as leading outside, its target unnamed.
 */
export function infoTool(deps: ToolDeps): FileTool<InfoValue> {
  const { inputSchema, parse } = infoInput()
  return {
    name: 'info',
    description: 'Tell what a path is (file, directory, symbolic link or other), with its size in bytes and its last modification time.',
    inputSchema,
    structured: infoStructured,
    annotations: { title: 'File info', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    prompt:
      'Use the info tool — not shell stat or ls -l — to learn whether a path exists, what it is, how large a file is and when it last changed, without reading it. It does not count as reading the file: read it before you edit it.',
    execute: (args, context = {}) =>
      run(async () => {
        const { path } = parse(args)
        const signal = context.signal
        const cwd = context.cwd ?? deps.cwd
        // lstat first: it is fenced as the path itself (a link inside may be looked at wherever it leads).
        const own = await deps.fs.lstat(path, { cwd, signal })
        const target = await resolveOrNone(deps, path, cwd, signal)
        const shown = target?.displayPath ?? path
        if (own === undefined) throw FsError.notFound('stat', shown)
        let value: InfoValue
        if (own.type === 'symlink') {
          const link = target === undefined ? { type: 'missing' as const, size: null, mtime: null } : await linkInfo(deps, target, signal)
          value = { path: shown, type: 'symlink', size: link.size, mtime: link.mtime, link }
        } else {
          // `stat` where it says more (`lstat` may leave out what a listing would not know cheaply).
          const lacking = own.mtime === undefined || (own.type === 'file' && own.size === undefined)
          const info = (lacking && target !== undefined ? await deps.fs.stat(target, { signal }) : undefined) ?? own
          value = { path: shown, type: own.type, size: sizeOf(info), mtime: mtimeOf(info), link: null }
        }
        const text = `<path>${quotePath(value.path)}</path>\n<type>${value.type}</type>\n<content>\n${lines(value).join('\n')}\n</content>`
        return ok(text, value)
      }, 'stat'),
  }
}

/** `path` resolved, or undefined where it does not resolve (a link loop, a path through a file); an abort is thrown. */
async function resolveOrNone(deps: ToolDeps, path: string, cwd: string | undefined, signal: AbortSignal | undefined): Promise<FsTarget | undefined> {
  try {
    return await deps.fs.resolve(path, { cwd, signal })
  } catch (err) {
    if (isFsError(err, 'FS_ABORTED')) throw err
    return undefined
  }
}

/**
 * What a link leads to, `target` being the link resolved: looked at through the fence, which
 * refuses an outside target. The contract has no `readlink`, and a target's key is opaque, so the
 * path it leads to is not told: only what is there.
 */
async function linkInfo(deps: ToolDeps, target: FsTarget, signal: AbortSignal | undefined): Promise<LinkInfo> {
  const none = { size: null, mtime: null }
  let info: FsInfo | undefined
  try {
    info = await deps.fs.stat(target, { signal })
  } catch (err) {
    if (isFsError(err, 'FS_SANDBOX_DENIED')) return { type: 'outside', ...none }
    throw err
  }
  if (info === undefined) return { type: 'missing', ...none }
  return { type: info.type, size: sizeOf(info), mtime: mtimeOf(info) }
}
