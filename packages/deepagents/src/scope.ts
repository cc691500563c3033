import { getConfig } from '@langchain/langgraph'
import { FsError, SandboxedFileSystem, type FileSystem, type FsTarget, type PolicyOwner } from '@seamfs/core'
import { deadlineSignal } from '@seamfs/tools'
import { parseVirtual, type VirtualPath } from './paths.js'

/** The most LangGraph threads whose sessions a backend keeps (least recently used dropped first). */
export const MAX_THREAD_SESSIONS = 1024

/** What one backend call runs with: whose observations, the run's abort signal, the root as the tools' cwd. */
export interface Call {
  readonly session: PolicyOwner
  readonly signal: AbortSignal | undefined
  readonly cwd: string
}

/** A deepagents path resolved in the filesystem, inside the root. */
export interface Resolved extends VirtualPath {
  readonly target: FsTarget
}

/** The LangGraph run this call belongs to, when there is one (a direct call has none). */
function currentRun(): { readonly threadId: string | undefined; readonly signal: AbortSignal | undefined } {
  try {
    const config = getConfig()
    const threadId: unknown = config.configurable?.['thread_id']
    return { threadId: typeof threadId === 'string' || typeof threadId === 'number' ? String(threadId) : undefined, signal: config.signal }
  } catch {
    return { threadId: undefined, signal: undefined }
  }
}

/**
 * The fence every operation of the backend runs through, the tools' walks included: a
 * `SandboxedFileSystem` whose only root is `root`, in `workspace-write` with reads confined, so a
 * symlink inside the root (a directory or a file) never carries a read, a listing, a walk or a
 * write outside it; the sandbox pins the root where it first resolved, so a root later swapped
 * for a link to elsewhere does not move the fence along. The sandbox's default protected names are
 * kept: `.git` stays read-only to the model (its hooks and config are code the host runs), as in
 * every seamfs host.
 */
export function fenced(fs: FileSystem, root: string): SandboxedFileSystem {
  return new SandboxedFileSystem(fs, { mode: 'workspace-write', workspaceRoot: root, confineReads: true })
}

/**
 * The agent's `/` in the filesystem: maps deepagents paths onto targets under the root (refusing
 * `..` and anything a symlink takes outside), and the filesystem's display paths back to the
 * agent's, so a message never shows the model a path it could not use. `fs` is the fenced
 * filesystem ({@link fenced}); the root is pinned where it first resolved, so a root swapped
 * for a link to elsewhere later is refused as every other path is.
 */
export class Scope {
  readonly fs: SandboxedFileSystem
  readonly root: string
  readonly #session: PolicyOwner | undefined
  readonly #ownSession = Object.freeze({ deepagents: 'default session' })
  readonly #threads = new Map<string, object>()

  constructor(
    fs: FileSystem,
    root: string,
    session: PolicyOwner | undefined,
    readonly callTimeoutMs: number,
  ) {
    this.fs = fenced(fs, root)
    this.root = root
    this.#session = session
  }

  /**
   * The session and signal of the current call: the configured session, else the thread's, else this
   * backend's own; the run's signal plus the tools' deadline (`callTimeoutMs`), so a listing or a
   * transfer on a store that stopped answering ends as a timeout, as a tool call does.
   */
  call(): Call {
    const run = currentRun()
    const session = this.#session ?? (run.threadId === undefined ? this.#ownSession : this.#threadSession(run.threadId))
    return { session, signal: deadlineSignal(run.signal, this.callTimeoutMs), cwd: this.root }
  }

  /**
   * The session object of a LangGraph thread. The policy keys objects weakly, so a thread's
   * observations live as long as its entry here: the {@link MAX_THREAD_SESSIONS} most recently used
   * threads are kept, and a long-running server does not grow without bound. A thread evicted
   * meanwhile must read again before it edits (`FS_NOT_OBSERVED`), which fails safe.
   */
  #threadSession(threadId: string): PolicyOwner {
    let session = this.#threads.get(threadId)
    if (session !== undefined) this.#threads.delete(threadId)
    else session = Object.freeze({ deepagentsThread: threadId })
    this.#threads.set(threadId, session)
    if (this.#threads.size > MAX_THREAD_SESSIONS) this.#threads.delete(this.#threads.keys().next().value as string)
    return session
  }

  /** The root's target, pinned by the sandbox where it first resolved: the pin every path is checked against. */
  rootTarget(signal: AbortSignal | undefined): Promise<FsTarget> {
    return this.fs.workspaceRootTarget({ signal })
  }

  /**
   * `path` resolved under the root: `..` is refused before any I/O, a target outside the pinned
   * root (through a link) after resolving afresh; the root itself too, so a search of `/` never
   * starts from a root that became a link to elsewhere.
   */
  async resolve(path: string, signal: AbortSignal | undefined): Promise<Resolved> {
    const parsed = parseVirtual(path)
    const root = await this.rootTarget(signal)
    const target = await this.fs.resolve(parsed.relative, { cwd: this.root, signal })
    if (!this.fs.contains(root, target)) throw FsError.sandboxDenied('resolve', parsed.virtual, "outside the agent's root")
    return { ...parsed, target }
  }

  /** `text` with the root's display path turned into the agent's `/` (a no-op where the root is the filesystem's `/`). */
  async virtualize(text: string): Promise<string> {
    let display: string
    try {
      display = (await this.rootTarget(undefined)).displayPath
    } catch {
      return text
    }
    if (display === '/' || display === '') return text
    const base = display.endsWith('/') ? display.slice(0, -1) : display
    return text.replaceAll(`"${base}"`, '"/"').replaceAll(`${base}/`, '/')
  }
}
