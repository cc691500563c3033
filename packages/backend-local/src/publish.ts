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
import { FsError, processWide, throwIfAborted, type FsVerb } from '@seamfs/core/backend'
import { doubleFault, errnoOf } from './errors.js'
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
const inFlight: Set<string> = processWide('backend-local:inFlight', () => new Set<string>())

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

/** The temp file: exclusive (never an existing file or a planted link), owner-only until published. */
function openTemp(temp: string): ReturnType<typeof open> {
  return open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600)
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

/** How long an idle staging directory is kept for the next write in its directory. */
const STAGE_IDLE_MS = 1000

interface Stage {
  readonly path: string
  users: number
  timer: ReturnType<typeof setTimeout> | undefined
}

/** Every Stages of the process, so the exit handler can remove their idle directories. */
const allStages: Set<Stages> = processWide('backend-local:stages', () => {
  const set = new Set<Stages>()
  process.once('exit', () => {
    for (const stages of set) stages.flush()
  })
  return set
})

/**
 * Staging directories, one per parent directory, kept while writes keep coming
 * and removed after a second of quiet (or by `flush`, or at exit). Making and
 * removing a directory for every write cost more than the rest of a small
 * durable write: a burst of writes into one directory now shares one.
 */
export class Stages {
  readonly #open = new Map<string, Stage>()
  #counter = 0

  constructor() {
    allStages.add(this)
  }

  /** A staging directory in `dir`, held until `release`, and a fresh temp path inside it. */
  acquire(dir: string): { readonly stage: string; readonly temp: string } {
    let stage = this.#open.get(dir)
    if (stage === undefined) {
      stage = { path: mkdtempSync(join(dir, `${STAGING_PREFIX}${STAGING_OWNER}-`)), users: 0, timer: undefined }
      inFlight.add(stage.path)
      this.#open.set(dir, stage)
    }
    clearTimeout(stage.timer)
    stage.timer = undefined
    stage.users++
    return { stage: stage.path, temp: join(stage.path, `${++this.#counter}.tmp`) }
  }

  /** Lets go of `dir`'s stage; an unused one is removed `now`, or after the idle delay. */
  release(dir: string, now: boolean): void {
    const stage = this.#open.get(dir)
    if (stage === undefined || --stage.users > 0) return
    if (now) this.#remove(dir, stage)
    else stage.timer = setTimeout(() => this.#remove(dir, stage), STAGE_IDLE_MS).unref()
  }

  /** Forgets a stage that vanished (someone removed it); the next acquire makes a new one. */
  discard(dir: string): void {
    const stage = this.#open.get(dir)
    if (stage === undefined) return
    clearTimeout(stage.timer)
    this.#open.delete(dir)
    inFlight.delete(stage.path)
  }

  /** Removes every idle staging directory now. */
  flush(): void {
    for (const [dir, stage] of this.#open) if (stage.users === 0) this.#remove(dir, stage)
  }

  #remove(dir: string, stage: Stage): void {
    if (stage.users > 0 || this.#open.get(dir) !== stage) return
    clearTimeout(stage.timer)
    this.#open.delete(dir)
    try {
      rmdirSync(stage.path)
    } catch {
      // Not empty or gone: what is left is residue for the next sweep.
    } finally {
      inFlight.delete(stage.path)
    }
  }
}

/**
 * Publishes files atomically and durably, and clears the staging residue of
 * killed writers. One instance per filesystem; it remembers, per directory,
 * the directory's state as it last left it, so the residue sweep (a readdir)
 * runs only when someone else changed the directory since.
 */
export class Publisher {
  readonly #leftAt = new Map<string, string>()
  readonly #stages = new Stages()

  /** Removes this publisher's idle staging directories now. */
  flush(): void {
    this.#stages.flush()
  }

  /**
   * Staging dir (0700) + temp (`wx`, 0600) + write + fchmod + fsync, then
   * rename (or hard link, which never replaces), then fsync of the parent
   * directory. Returns the published inode's stat, taken through the still
   * open descriptor so no later writer can be mistaken for this one (and, when
   * the inode was written in place after the commit, the stat as this write
   * left it, whose version no later stat equals). Store failures are thrown
   * as they are, for the filesystem's error table.
   */
  async publish(req: PublishRequest): Promise<BigIntStats> {
    const dir = dirname(req.key)
    const made = this.#ensureDirectory(dir, req)
    let lease: { readonly stage: string; readonly temp: string }
    try {
      this.#sweep(dir)
      throwIfAborted(req.signal, req.verb)
      lease = this.#stages.acquire(dir)
    } catch (err) {
      removeMadeDirectories(dir, made)
      throw err
    }
    let temp = lease.temp
    let handle: Awaited<ReturnType<typeof open>> | undefined
    let written: BigIntStats | undefined
    try {
      await req.hooks?.afterStage?.(lease.stage)
      handle = await openTemp(temp).catch(async (err: unknown) => {
        if (errnoOf(err) !== 'ENOENT') throw err
        // The kept stage was removed behind our back: make a new one, once.
        this.#stages.release(dir, true)
        this.#stages.discard(dir)
        lease = this.#stages.acquire(dir)
        temp = lease.temp
        return openTemp(temp)
      })
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
        rmSync(temp, { force: true })
      } catch (cleanupErr) {
        this.#stages.release(dir, true)
        throw doubleFault(req.verb, req.displayPath, err, cleanupErr)
      }
      // A failed write leaves nothing: its stage goes now when no other write holds it.
      this.#stages.release(dir, true)
      removeMadeDirectories(dir, made)
      throw err
    }
    // Committed: from here on the write has happened; nothing below may report failure.
    try {
      if (req.mode === 'link') unlinkSync(temp)
    } catch {
      // Left in the stage; the stage goes when it is idle, its residue with the next sweep.
    }
    this.#stages.release(dir, false)
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
      if (existing !== undefined && !existing.isFile()) throw FsError.notRegularFile(req.verb, req.displayPath, err)
      throw FsError.notObserved(req.displayPath, err)
    }
  }

  /** Makes `dir` when missing; returns the first directory it made (the top of what it made), if any. */
  #ensureDirectory(dir: string, req: PublishRequest): string | undefined {
    const st = statSync(dir, { throwIfNoEntry: false })
    if (st?.isDirectory() === true) return undefined
    if (st !== undefined) throw FsError.throughFile(req.verb, req.displayPath)
    try {
      return mkdirSync(dir, { recursive: true })
    } catch (err) {
      const errno = errnoOf(err)
      if (errno === 'EEXIST' || errno === 'ENOTDIR') throw FsError.throughFile(req.verb, req.displayPath, err)
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
      const abandoned = pid !== process.pid ? !pidIsAlive(pid) : thread === threadId ? !inFlight.has(path) : false
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
