import { type BigIntStats, constants, fchmodSync, fchownSync, fstatSync, fsync as fsyncCallback, linkSync, lstatSync, mkdtempSync, readdirSync } from 'node:fs'
import { closeSync, openSync, renameSync, rmdirSync, rmSync, statSync, unlinkSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { threadId } from 'node:worker_threads'
import { FsError, pidIsAlive, processWide, throwIfAborted, type FsVerb } from '@seamfs/core/backend'
import { type DirAnchor, ensureAnchor, openAnchor, pathChanged, removeMadeDirectories } from './anchor.js'
import { doubleFault, errnoOf } from './errors.js'
import { clearIfStale, isLockName } from './leases.js'
import type { LocalHooks } from './options.js'

/**
 * Staging directories are named `.seamfs-stage-<pid>-XXXXXX`, or `.seamfs-stage-<pid>.<threadId>-XXXXXX`
 * from a worker thread (the suffix is mkdtemp's): threads share the pid but not the in-flight set.
 */
const STAGING_PREFIX = '.seamfs-stage-'
const STAGING_NAME = /^\.seamfs-stage-(\d+)(?:\.(\d+))?-[A-Za-z0-9]{6}$/
const STAGING_OWNER = threadId === 0 ? `${process.pid}` : `${process.pid}.${threadId}`

/**
 * Staging directories this process is using right now, as `<dev>:<ino of the parent>/<name>`,
 * shared by every instance and by every copy of this package loaded in the process (they share
 * one pid, so one copy's sweep must see the other's in-flight directories).
 */
const inFlight: Set<string> = processWide('backend-local:inFlight', () => new Set<string>())

/** True for the name of a staging directory; listings never show these. */
export function isStagingName(name: string): boolean {
  return STAGING_NAME.test(name)
}

/**
 * Whether the staging directory `name` in the directory of identity `owner` is residue: its
 * writer's pid is dead, or it is this thread's and no longer in use. Another thread of this
 * process keeps its own in-flight set: its directories are never residue here.
 */
function isAbandoned(name: string, owner: string): boolean {
  const match = STAGING_NAME.exec(name)
  if (match === null) return false
  const pid = Number(match[1])
  if (pid !== process.pid) return !pidIsAlive(pid)
  return Number(match[2] ?? 0) === threadId && !inFlight.has(`${owner}/${name}`)
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
  /**
   * Called with the file at the destination (`undefined`: none) in the same synchronous step as the
   * commit, right before it: it throws when that is no longer the file the caller checked. A
   * directory above renamed since the check (a different path, so a different lock) would otherwise
   * let this write land on a file another guarded writer has replaced meanwhile.
   */
  readonly recheck?: ((current: BigIntStats | undefined) => void) | undefined
}

/** The temp file: exclusive (never an existing file or a planted link), owner-only until published. */
function openTemp(temp: string): ReturnType<typeof open> {
  return open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600)
}

function fsyncFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fsyncCallback(fd, (err) => (err === null ? resolve() : reject(err)))
  })
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
  /** The staging directory's name in its parent. */
  readonly name: string
  /** The parent's canonical path when the stage was made (for removal, verified again then). */
  readonly parent: string
  /** The parent's identity (`dev:ino`): the key of this stage. */
  readonly owner: string
  users: number
  timer: ReturnType<typeof setTimeout> | undefined
}

/** One write's hold on a stage: the stage opened (no link followed) and a fresh temp name in it. */
export interface Lease {
  readonly stage: DirAnchor
  readonly temp: string
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
 * Staging directories, one per parent directory (by identity, not path), kept while writes keep
 * coming and removed after a second of quiet (or by `flush`, or at exit). Making and removing a
 * directory for every write cost more than the rest of a small durable write: a burst of writes
 * into one directory now shares one. Each write enters its stage afresh through the parent it
 * holds open, never through a link: a stage swapped for a link is abandoned for a new one.
 */
export class Stages {
  readonly #open = new Map<string, Stage>()
  #counter = 0

  constructor() {
    allStages.add(this)
  }

  /** A staging directory in the directory `parent` holds, held until `release`, and a fresh temp name inside it. */
  acquire(parent: DirAnchor, owner: string): Lease {
    let stage = this.#open.get(owner)
    let entered = stage === undefined ? undefined : this.#enter(parent, stage)
    if (stage === undefined || entered === undefined) {
      if (stage !== undefined) this.discard(owner)
      const made = basename(mkdtempSync(parent.at(`${STAGING_PREFIX}${STAGING_OWNER}-`)))
      stage = { name: made, parent: parent.path, owner, users: 0, timer: undefined }
      inFlight.add(`${owner}/${made}`)
      this.#open.set(owner, stage)
      entered = this.#enter(parent, stage)
      if (entered === undefined) throw pathChanged('write', join(parent.path, made))
    }
    clearTimeout(stage.timer)
    stage.timer = undefined
    stage.users++
    return { stage: entered, temp: `${++this.#counter}.tmp` }
  }

  /** The stage opened through its parent, or undefined when it is gone or is no longer a directory (a link, a file). */
  #enter(parent: DirAnchor, stage: Stage): DirAnchor | undefined {
    try {
      return parent.child(stage.name)
    } catch (err) {
      if (['ELOOP', 'ENOTDIR'].includes(errnoOf(err) ?? '')) return undefined
      throw err
    }
  }

  /** Lets go of a stage; an unused one is removed `now`, or after the idle delay. */
  release(owner: string, now: boolean): void {
    const stage = this.#open.get(owner)
    if (stage === undefined || --stage.users > 0) return
    if (now) this.#remove(stage)
    else stage.timer = setTimeout(() => this.#remove(stage), STAGE_IDLE_MS).unref()
  }

  /** Forgets a stage that vanished or was replaced; the next acquire makes a new one. */
  discard(owner: string): void {
    const stage = this.#open.get(owner)
    if (stage === undefined) return
    clearTimeout(stage.timer)
    this.#open.delete(owner)
    inFlight.delete(`${owner}/${stage.name}`)
  }

  /** Removes every idle staging directory now. */
  flush(): void {
    for (const stage of this.#open.values()) if (stage.users === 0) this.#remove(stage)
  }

  /** Removes the stage in the directory of identity `owner` now, when no write holds it. */
  flushOwner(owner: string): void {
    const stage = this.#open.get(owner)
    if (stage !== undefined && stage.users === 0) this.#remove(stage)
  }

  /** Removes an idle stage through its parent, opened verified and still the same directory; else it is residue. */
  #remove(stage: Stage): void {
    if (stage.users > 0 || this.#open.get(stage.owner) !== stage) return
    clearTimeout(stage.timer)
    this.#open.delete(stage.owner)
    let parent: DirAnchor | undefined
    try {
      parent = openAnchor(stage.parent, 'write', stage.parent)
      if (parent.identity() === stage.owner) rmdirSync(parent.at(stage.name))
    } catch {
      // Not empty, gone, or its parent moved: what is left is residue for the next sweep.
    } finally {
      parent?.close()
      inFlight.delete(`${stage.owner}/${stage.name}`)
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

  /**
   * Runs `change`, a change of this filesystem's own in the directory `dir` (a lock entry made or
   * removed): when the directory was as this publisher last left it before, it is remembered as it
   * is after, so the next write does not read the whole directory for residue that is not there. A
   * change by anyone else in between leaves the memory stale, and the sweep runs.
   */
  own<T>(dir: string, change: () => T): T {
    const before = statSync(dir, { bigint: true, throwIfNoEntry: false })
    const result = change()
    try {
      const owner = before === undefined ? undefined : `${before.dev}:${before.ino}`
      if (owner !== undefined && this.#leftAt.get(owner) === signature(before!)) {
        const after = statSync(dir, { bigint: true, throwIfNoEntry: false })
        if (after !== undefined && `${after.dev}:${after.ino}` === owner) this.#remember(owner, signature(after))
      }
    } catch {
      // Gone or unreadable: the next write in it sweeps as usual.
    }
    return result
  }

  /** Removes this publisher's idle staging directories now. */
  flush(): void {
    this.#stages.flush()
  }

  /**
   * Staging dir (0700) + temp (`wx`, 0600) + write + fchmod + fsync, then
   * rename (or hard link, which never replaces), then fsync of the parent
   * directory — all inside the parent directory held open and verified at its
   * canonical path ({@link ensureAnchor}), so a directory swapped for a link
   * meanwhile cannot carry the write elsewhere. Returns the published inode's
   * stat, taken through the still open descriptor so no later writer can be
   * mistaken for this one (and, when the inode was written in place after the
   * commit, the stat as this write left it, whose version no later stat
   * equals). Store failures are thrown as they are, for the filesystem's error table.
   */
  async publish(req: PublishRequest): Promise<BigIntStats> {
    const dir = dirname(req.key)
    const name = basename(req.key)
    const { anchor, made } = ensureAnchor(dir, req.verb, req.displayPath)
    let owner: string
    let lease: Lease
    try {
      owner = anchor.identity()
      this.#sweep(anchor, owner)
      throwIfAborted(req.signal, req.verb)
      lease = this.#stages.acquire(anchor, owner)
    } catch (err) {
      anchor.close()
      removeMadeDirectories(made)
      throw err
    }
    const stagePath = (): string => join(dir, basename(lease.stage.path))
    let handle: Awaited<ReturnType<typeof open>> | undefined
    let written: BigIntStats | undefined
    try {
      await req.hooks?.afterStage?.(stagePath())
      handle = await openTemp(lease.stage.at(lease.temp)).catch(async (err: unknown) => {
        if (errnoOf(err) !== 'ENOENT') throw err
        // The kept stage was removed behind our back: make a new one, once.
        lease.stage.close()
        this.#stages.release(owner, true)
        this.#stages.discard(owner)
        lease = this.#stages.acquire(anchor, owner)
        return openTemp(lease.stage.at(lease.temp))
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
      await req.hooks?.beforeCommit?.(join(stagePath(), lease.temp))
      throwIfAborted(req.signal, req.verb)
      req.recheck?.(statSync(anchor.at(name), { bigint: true, throwIfNoEntry: false }))
      if (req.mode === 'link') this.#link(lease.stage.at(lease.temp), anchor.at(name), req)
      else renameSync(lease.stage.at(lease.temp), anchor.at(name))
    } catch (err) {
      try {
        await handle?.close()
        rmSync(lease.stage.at(lease.temp), { force: true })
      } catch (cleanupErr) {
        this.#release(lease, owner, anchor, true)
        throw doubleFault(req.verb, req.displayPath, err, cleanupErr)
      }
      // A failed write leaves nothing: its stage goes now when no other write holds it.
      this.#release(lease, owner, anchor, true)
      removeMadeDirectories(made)
      throw err
    }
    // Committed: from here on the write has happened; nothing below may report failure.
    try {
      if (req.mode === 'link') unlinkSync(lease.stage.at(lease.temp))
    } catch {
      // Left in the stage; the stage goes when it is idle, its residue with the next sweep.
    }
    lease.stage.close()
    this.#stages.release(owner, false)
    try {
      await req.hooks?.afterCommit?.(req.key)
    } catch {
      // A test hook cannot undo a commit.
    }
    await this.#syncDirectory(anchor, owner)
    anchor.close()
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

  #release(lease: Lease, owner: string, anchor: DirAnchor, now: boolean): void {
    lease.stage.close()
    this.#stages.release(owner, now)
    anchor.close()
  }

  #link(temp: string, destination: string, req: PublishRequest): void {
    try {
      linkSync(temp, destination)
    } catch (err) {
      if (errnoOf(err) !== 'EEXIST') throw err
      const existing = lstatSync(destination, { throwIfNoEntry: false })
      if (existing !== undefined && !existing.isFile()) throw FsError.notRegularFile(req.verb, req.displayPath, err)
      throw FsError.notObserved(req.displayPath, err)
    }
  }

  /** Removes staging directories of dead writers (or this process's abandoned ones), through the directory held open. */
  #sweep(anchor: DirAnchor, owner: string): void {
    const state = (): string => signature(fstatOrStat(anchor))
    if (this.#leftAt.get(owner) === state()) return
    for (const entry of readdirSync(anchor.at(''), { withFileTypes: true })) {
      // A lock entry whose holder died (or whose lease ran out) goes; a live one stays.
      if (!entry.isDirectory() && isLockName(entry.name)) clearIfStale(anchor, entry.name)
      // Staging directories are directories: a file that merely has such a name is someone's data.
      if (!entry.isDirectory() || !isAbandoned(entry.name, owner)) continue
      removeStage(anchor, entry.name)
    }
    this.#remember(owner, state())
  }

  async #syncDirectory(anchor: DirAnchor, owner: string): Promise<void> {
    let fd: number | undefined
    try {
      fd = anchor.fd >= 0 ? anchor.fd : openSync(anchor.path, constants.O_RDONLY | constants.O_DIRECTORY)
      await fsyncFd(fd)
      this.#remember(owner, signature(fstatSync(fd, { bigint: true })))
    } catch {
      // The rename is visible; a directory that cannot be fsynced (some network
      // filesystems refuse) must not turn a completed write into a failure.
    } finally {
      if (fd !== undefined && fd !== anchor.fd) closeSync(fd)
    }
  }

  #remember(owner: string, state: string): void {
    if (this.#leftAt.size >= 4096) this.#leftAt.clear()
    this.#leftAt.set(owner, state)
  }
}

function fstatOrStat(anchor: DirAnchor): BigIntStats {
  return anchor.fd >= 0 ? fstatSync(anchor.fd, { bigint: true }) : statSync(anchor.path, { bigint: true })
}

/** The temp files a write makes in its stage (`Stages.acquire`). */
const TEMP_NAME = /^\d+\.tmp$/

/**
 * Removes the abandoned stage `name` of `dir`, and only what a write puts there: the stage is
 * entered without following a link (a link planted under a stage's name is left alone), its temp
 * files are unlinked through it (a link among them is unlinked, never followed), and it is removed
 * when that left it empty. Anything else inside (a directory, another name) was not made by a
 * write: it stays, and so does the stage. Best effort: residue that cannot be removed must not
 * fail the operation that found it.
 */
function removeStage(dir: DirAnchor, name: string): void {
  let stage: DirAnchor | undefined
  try {
    stage = dir.child(name)
  } catch {
    return
  }
  if (stage === undefined) return
  try {
    for (const entry of readdirSync(stage.at(''), { withFileTypes: true })) {
      if (entry.isDirectory() || !TEMP_NAME.test(entry.name)) continue
      try {
        unlinkSync(stage.at(entry.name))
      } catch {
        // Gone meanwhile, or not removable: the stage stays.
      }
    }
    rmdirSync(dir.at(name))
  } catch {
    // Not empty (something that is not a write's), or gone: it stays.
  } finally {
    stage.close()
  }
}

/**
 * Removes the staging directories in `dir` that no write is using: the idle ones of this process
 * (kept for the next write, but hiding nothing) and the residue of dead writers, so that a
 * directory whose listing is empty can be removed. One a write holds right now stays.
 */
export function clearStages(dir: DirAnchor): void {
  const owner = dir.identity()
  for (const stages of allStages) stages.flushOwner(owner)
  for (const entry of readdirSync(dir.at(''), { withFileTypes: true })) {
    if (entry.isDirectory() && isStagingName(entry.name) && isAbandoned(entry.name, owner)) removeStage(dir, entry.name)
  }
}
