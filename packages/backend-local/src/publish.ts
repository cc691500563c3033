import {
  type BigIntStats,
  constants,
  fchmodSync,
  fchownSync,
  fstatSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  unlinkSync,
} from 'node:fs'
import { open } from 'node:fs/promises'
import { fsync as fsyncCallback, openSync, closeSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { threadId } from 'node:worker_threads'
import { FsError, throwIfAborted, type FsVerb } from '@seamfs/core'
import { doubleFault, errnoOf, toFsError } from './errors.js'
import type { LocalHooks } from './options.js'
import { containsPath } from './paths.js'

/**
 * Staging directories are named `.seamfs-stage-<pid>-XXXXXX`, or `.seamfs-stage-<pid>.<threadId>-XXXXXX`
 * from a worker thread (the suffix is mkdtemp's): threads share the pid but not the in-flight set.
 */
const STAGING_PREFIX = '.seamfs-stage-'
const STAGING_NAME = /^\.seamfs-stage-(\d+)(?:\.(\d+))?-[A-Za-z0-9]{6}$/
const STAGING_OWNER = threadId === 0 ? `${process.pid}` : `${process.pid}.${threadId}`

/**
 * Staging directories this process is using right now, shared by every instance and by
 * every copy of this package loaded in the process (they share one pid, so one copy's
 * sweep must see the other's in-flight directories).
 */
const inFlight: Set<string> = processWide('inFlight', () => new Set<string>())

/** One value per process under `name`, whichever copy of this package asks first. */
export function processWide<T>(name: string, create: () => T): T {
  const registry = globalThis as unknown as Record<symbol, T | undefined>
  const key = Symbol.for(`@seamfs/backend-local:${name}`)
  return (registry[key] ??= create())
}

/** True for the name of a staging directory; listings never show these. */
export function isStagingName(name: string): boolean {
  return STAGING_NAME.test(name)
}

/** What one publication needs to know. */
export interface PublishRequest {
  /** Canonical path of the file to publish. */
  readonly key: string
  /** The path used in messages. */
  readonly displayPath: string
  readonly bytes: Uint8Array
  /** `link`: no-replace publication for `createIfAbsent`; `rename`: replace. */
  readonly mode: 'rename' | 'link'
  /** Permission bits of the published file. */
  readonly permissions: number
  /** Owner to carry over from the replaced file (best effort). */
  readonly owner?: { readonly uid: number; readonly gid: number } | undefined
  readonly verb: FsVerb
  readonly signal?: AbortSignal | undefined
  readonly hooks?: LocalHooks | undefined
}

function fsyncFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fsyncCallback(fd, (err) => (err === null ? resolve() : reject(err)))
  })
}

/**
 * Undoes `mkdir -p` of a failed write: removes `dir` and its ancestors up to `made`
 * (the first directory the write made), deepest first, while they are empty. A
 * directory someone else has put something in meanwhile stays.
 */
function removeMadeDirectories(dir: string, made: string | undefined): void {
  if (made === undefined || !containsPath(made, dir)) return
  for (let d = dir; ; d = dirname(d)) {
    try {
      rmdirSync(d)
    } catch {
      return
    }
    if (d === made) return
  }
}

function pidIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return errnoOf(err) === 'EPERM'
  }
}

/**
 * A directory's state as far as residue is concerned. The link count is in it
 * because a staging directory changes it even when the coarse kernel clock
 * leaves the mtime equal (two changes within one tick).
 */
function signature(st: BigIntStats): string {
  return `${st.ino}:${st.nlink}:${st.mtimeNs}:${st.ctimeNs}`
}

/**
 * Publishes files atomically and durably, and clears the staging residue of
 * killed writers. One instance per filesystem; it remembers, per directory,
 * the directory's state as it last left it, so the residue sweep (a readdir)
 * runs only when someone else changed the directory since.
 */
export class Publisher {
  readonly #leftAt = new Map<string, string>()

  /**
   * Staging dir (0700) + temp (`wx`, 0600) + write + fchmod + fsync, then
   * rename (or hard link, which never replaces), then fsync of the parent
   * directory. Returns the published inode's stat, taken through the still
   * open descriptor so no later writer can be mistaken for this one (and, when
   * the inode was written in place after the commit, the stat as this write
   * left it, whose version no later stat equals).
   */
  async publish(req: PublishRequest): Promise<BigIntStats> {
    const dir = dirname(req.key)
    const made = this.#ensureDirectory(dir, req)
    let stage: string
    try {
      this.#sweep(dir)
      throwIfAborted(req.signal, req.verb)
      stage = mkdtempSync(join(dir, `${STAGING_PREFIX}${STAGING_OWNER}-`))
    } catch (err) {
      removeMadeDirectories(dir, made)
      throw err
    }
    inFlight.add(stage)
    const temp = join(stage, 'content')
    let handle: Awaited<ReturnType<typeof open>> | undefined
    let written: BigIntStats | undefined
    try {
      await req.hooks?.afterStage?.(stage)
      handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600)
      if (req.bytes.length > 0) await handle.writeFile(req.bytes, req.signal === undefined ? {} : { signal: req.signal })
      if (req.owner !== undefined) {
        try {
          fchownSync(handle.fd, req.owner.uid, req.owner.gid)
        } catch {
          // Only root may give a file away; everyone else keeps their own ownership.
        }
      }
      if (req.permissions !== 0o600) fchmodSync(handle.fd, req.permissions)
      await handle.sync()
      written = fstatSync(handle.fd, { bigint: true })
      await req.hooks?.beforeCommit?.(temp)
      throwIfAborted(req.signal, req.verb)
      if (req.mode === 'link') this.#link(temp, req)
      else renameSync(temp, req.key)
    } catch (err) {
      try {
        await handle?.close()
        rmSync(stage, { recursive: true, force: true })
        removeMadeDirectories(dir, made)
      } catch (cleanupErr) {
        throw doubleFault(req.verb, req.displayPath, err, cleanupErr)
      } finally {
        // No longer ours: whatever is left is residue for the next sweep.
        inFlight.delete(stage)
      }
      throw toFsError(err, req.verb, req.displayPath)
    }
    // Committed: from here on the write has happened; nothing below may report failure.
    try {
      if (req.mode === 'link') unlinkSync(temp)
      rmdirSync(stage)
    } catch {
      // Left for the next sweep: the name is private and never listed.
    } finally {
      inFlight.delete(stage)
    }
    try {
      await req.hooks?.afterCommit?.(req.key)
    } catch {
      // A test hook cannot undo a commit.
    }
    await this.#syncDirectory(dir)
    const published = fstatSync(handle.fd, { bigint: true })
    await handle.close().catch(() => undefined)
    // Publishing moves only the ctime (rename, link). A moved size or mtime means someone wrote
    // this inode in place since the commit: its stat is theirs, not ours, and a version made from
    // it would let a guard built on this outcome overwrite their change. The stat as written is
    // returned instead; its version equals no later stat, so such a guard is stale.
    if (written !== undefined && (published.size !== written.size || published.mtimeNs !== written.mtimeNs)) {
      return written
    }
    return published
  }

  #link(temp: string, req: PublishRequest): void {
    try {
      linkSync(temp, req.key)
    } catch (err) {
      if (errnoOf(err) !== 'EEXIST') throw err
      const existing = lstatSync(req.key, { throwIfNoEntry: false })
      if (existing !== undefined && !existing.isFile()) {
        throw new FsError('FS_NOT_REGULAR_FILE', `cannot ${req.verb} "${req.displayPath}": not a regular file`, {
          cause: err,
        })
      }
      throw new FsError(
        'FS_NOT_OBSERVED',
        `cannot overwrite existing "${req.displayPath}" without reading it first`,
        { cause: err },
      )
    }
  }

  /** Makes `dir` when missing; returns the first directory it made (the top of what it made), if any. */
  #ensureDirectory(dir: string, req: PublishRequest): string | undefined {
    const st = statSync(dir, { throwIfNoEntry: false })
    if (st?.isDirectory() === true) return undefined
    if (st !== undefined) {
      throw new FsError('FS_NOT_FOUND', `cannot ${req.verb} "${req.displayPath}": a parent path segment is not a directory`)
    }
    try {
      return mkdirSync(dir, { recursive: true })
    } catch (err) {
      const errno = errnoOf(err)
      if (errno === 'EEXIST' || errno === 'ENOTDIR') {
        throw new FsError(
          'FS_NOT_FOUND',
          `cannot ${req.verb} "${req.displayPath}": a parent path segment is not a directory`,
          { cause: err },
        )
      }
      throw err
    }
  }

  /** Removes staging directories of dead writers (or this process's abandoned ones). */
  #sweep(dir: string): void {
    if (this.#leftAt.get(dir) === signature(statSync(dir, { bigint: true }))) return
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      // Staging directories are directories: a file that merely has such a name is someone's data.
      const match = entry.isDirectory() ? STAGING_NAME.exec(entry.name) : null
      if (match === null) continue
      const pid = Number(match[1])
      const thread = Number(match[2] ?? 0)
      const path = join(dir, entry.name)
      // Another thread of this process keeps its own in-flight set: its directories are left alone.
      const abandoned =
        pid !== process.pid ? !pidIsAlive(pid) : thread === threadId ? !inFlight.has(path) : false
      try {
        if (abandoned) rmSync(path, { recursive: true, force: true })
      } catch {
        // Best effort: someone else's residue that cannot be removed must not fail this write.
      }
    }
    this.#remember(dir, signature(statSync(dir, { bigint: true })))
  }

  async #syncDirectory(dir: string): Promise<void> {
    let fd: number | undefined
    try {
      fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY)
      await fsyncFd(fd)
      this.#remember(dir, signature(fstatSync(fd, { bigint: true })))
    } catch {
      // The rename is visible; a directory that cannot be fsynced (some network
      // filesystems refuse) must not turn a completed write into a failure.
    } finally {
      if (fd !== undefined) closeSync(fd)
    }
  }

  #remember(dir: string, state: string): void {
    if (this.#leftAt.size >= 4096) this.#leftAt.clear()
    this.#leftAt.set(dir, state)
  }
}
