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
import { FsError, throwIfAborted, type FsVerb } from '@seamfs/core'
import { doubleFault, errnoOf, toFsError } from './errors.js'
import type { LocalHooks } from './options.js'

/** Staging directories are named `.seamfs-stage-<pid>-XXXXXX` (the suffix is mkdtemp's). */
const STAGING_PREFIX = '.seamfs-stage-'
const STAGING_NAME = /^\.seamfs-stage-(\d+)-[A-Za-z0-9]{6}$/

/** Staging directories this process is using right now (shared by every instance). */
const inFlight = new Set<string>()

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
   * open descriptor so no later writer can be mistaken for this one.
   */
  async publish(req: PublishRequest): Promise<BigIntStats> {
    const dir = dirname(req.key)
    this.#ensureDirectory(dir, req)
    this.#sweep(dir)
    throwIfAborted(req.signal, req.verb)
    const stage = mkdtempSync(join(dir, `${STAGING_PREFIX}${process.pid}-`))
    inFlight.add(stage)
    const temp = join(stage, 'content')
    let handle: Awaited<ReturnType<typeof open>> | undefined
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
      await req.hooks?.beforeCommit?.(temp)
      throwIfAborted(req.signal, req.verb)
      if (req.mode === 'link') this.#link(temp, req)
      else renameSync(temp, req.key)
    } catch (err) {
      try {
        await handle?.close()
        rmSync(stage, { recursive: true, force: true })
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
    await this.#syncDirectory(dir)
    const published = fstatSync(handle.fd, { bigint: true })
    await handle.close().catch(() => undefined)
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

  #ensureDirectory(dir: string, req: PublishRequest): void {
    const st = statSync(dir, { throwIfNoEntry: false })
    if (st?.isDirectory() === true) return
    if (st !== undefined) {
      throw new FsError('FS_NOT_FOUND', `cannot ${req.verb} "${req.displayPath}": a parent path segment is not a directory`)
    }
    try {
      mkdirSync(dir, { recursive: true })
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
    for (const name of readdirSync(dir)) {
      const match = STAGING_NAME.exec(name)
      if (match === null) continue
      const pid = Number(match[1])
      const path = join(dir, name)
      const abandoned = pid === process.pid ? !inFlight.has(path) : !pidIsAlive(pid)
      if (abandoned) rmSync(path, { recursive: true, force: true })
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
