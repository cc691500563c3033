import { randomBytes } from 'node:crypto'
import { posix } from 'node:path'
import { FsError, throwIfAborted } from '@seamfs/core/backend'
import { WRITE_AT_ONCE_BYTES, type Attrs, type Session } from './connection.js'
import { STATUS, statusOf } from './errors.js'
import { containsPath, kindOf, outsideRoot } from './paths.js'

const TEMP_PREFIX = '.seamfs-tmp-'
const TEMP_NAME = /^\.seamfs-tmp-[0-9a-f]{16}$/

/** True for the name of a temp file of an in-flight (or interrupted) write; listings never show these. */
export function isTempName(name: string): boolean {
  return TEMP_NAME.test(name)
}

/** What one publication needs to know. */
export interface PublishRequest {
  /** Canonical remote path of the file to publish. */
  readonly key: string
  readonly displayPath: string
  readonly bytes: Uint8Array
  /** `link`: no-replace publication (`hardlink@openssh.com`) for `createIfAbsent`; `rename`: replace. */
  readonly mode: 'rename' | 'link'
  /** Permission bits of the published file. */
  readonly permissions: number
  readonly verb: 'write' | 'edit'
  readonly signal?: AbortSignal | undefined
}

/**
 * Publishes files atomically: a temp file in the target's directory (so the
 * rename never crosses filesystems), written, `fsync@openssh.com`-ed and
 * closed, then `posix-rename@openssh.com` over the target, or
 * `hardlink@openssh.com` to it (which fails when the target exists, whoever
 * made it: the atomic create-if-absent). A temp file whose removal failed
 * because the connection dropped is removed over the next connection.
 */
export class Publisher {
  readonly #root: () => string
  readonly #orphans = new Set<string>()
  #sweptGeneration = 0

  constructor(root: () => string) {
    this.#root = root
  }

  /** Returns the temp file's attrs after its last write (the published file's, as this write left it). */
  async publish(s: Session, req: PublishRequest): Promise<Attrs> {
    const dir = posix.dirname(req.key)
    const made = await this.#ensureDirectory(s, dir, req)
    const temp = `${dir}/${TEMP_PREFIX}${randomBytes(8).toString('hex')}`
    let handle: Buffer | undefined
    let attrs: Attrs
    try {
      throwIfAborted(req.signal, req.verb)
      handle = await s.open(temp, 'wx', { mode: 0o600 })
      const open = handle
      const finish = (): Promise<[void, void, Attrs]> =>
        Promise.all([req.permissions === 0o600 ? undefined : s.fsetstat(open, { mode: req.permissions }), s.fsync(open), s.fstat(open)])
      // Small contents are all sent at once, so the fsync can go in the same round trip: OpenSSH answers in order.
      if (req.bytes.length <= WRITE_AT_ONCE_BYTES) [, , attrs] = (await Promise.all([s.writeAll(open, req.bytes), finish()]))[1]
      else {
        await s.writeAll(open, req.bytes)
        ;[, , attrs] = await finish()
      }
      handle = undefined
      throwIfAborted(req.signal, req.verb)
      if (req.mode === 'rename') await Promise.all([s.close(open), s.rename(temp, req.key)])
      else await this.#link(s, open, temp, req)
    } catch (err) {
      await this.#discard(s, handle, temp, dir, made)
      throw err
    }
    return attrs
  }

  async #link(s: Session, handle: Buffer, temp: string, req: PublishRequest): Promise<void> {
    const [closed, linked, unlinked] = await Promise.allSettled([s.close(handle), s.hardlink(temp, req.key), s.unlink(temp)])
    if (unlinked.status === 'rejected' && statusOf(unlinked.reason) === undefined) this.#orphans.add(temp)
    if (closed.status === 'rejected' && statusOf(closed.reason) === undefined) throw closed.reason
    if (linked.status === 'fulfilled') return
    if (statusOf(linked.reason) !== STATUS.FAILURE) throw linked.reason
    // The link exists already: whoever made it, this create lost.
    const existing = await s.lstat(req.key).catch(() => undefined)
    if (existing === undefined) throw linked.reason
    if (kindOf(existing.mode) !== 'file' && kindOf(existing.mode) !== 'symlink') {
      throw FsError.notRegularFile(req.verb, req.displayPath, linked.reason)
    }
    throw FsError.notObserved(req.displayPath, linked.reason)
  }

  /** Best-effort cleanup of a failed write; what cannot be removed now is removed over the next connection. */
  async #discard(s: Session, handle: Buffer | undefined, temp: string, dir: string, made: string | undefined): Promise<void> {
    const results = await Promise.allSettled([handle === undefined ? undefined : s.close(handle), s.unlink(temp)])
    const unlinked = results[1]
    if (unlinked.status === 'rejected' && statusOf(unlinked.reason) !== STATUS.NO_SUCH_FILE) {
      this.#orphans.add(temp)
      return
    }
    if (made === undefined) return
    for (let d = dir; containsPath(made, d); d = posix.dirname(d)) {
      try {
        await s.rmdir(d)
      } catch {
        return
      }
      if (d === made) return
    }
  }

  /** Removes the temp files a dropped connection left behind, once per new connection (free when there are none). */
  async sweep(s: Session): Promise<void> {
    if (this.#sweptGeneration === s.generation || this.#orphans.size === 0) return
    this.#sweptGeneration = s.generation
    const orphans = [...this.#orphans]
    const results = await Promise.allSettled(orphans.map((temp) => s.unlink(temp)))
    results.forEach((result, i) => {
      if (result.status === 'fulfilled' || statusOf(result.reason) !== undefined) this.#orphans.delete(orphans[i] as string)
    })
  }

  /**
   * Makes `dir` (and its missing parents) when missing; returns the first
   * directory it made. Each existing level is checked with the server's
   * realpath in the same round trip, so a symlink swapped in since `resolve`
   * cannot lead the write out of the root.
   */
  async #ensureDirectory(s: Session, dir: string, req: PublishRequest): Promise<string | undefined> {
    const [real, attrs] = await Promise.allSettled([s.realpath(dir), s.stat(dir)])
    if (real.status === 'fulfilled' && !containsPath(this.#root(), real.value)) {
      throw outsideRoot(req.verb, req.displayPath, this.#root())
    }
    if (attrs.status === 'fulfilled') {
      if (kindOf(attrs.value.mode) !== 'directory') throw FsError.throughFile(req.verb, req.displayPath)
      return undefined
    }
    if (statusOf(attrs.reason) !== STATUS.NO_SUCH_FILE) throw attrs.reason
    if (!containsPath(this.#root(), dir) || dir === this.#root()) throw attrs.reason
    const made = await this.#ensureDirectory(s, posix.dirname(dir), req)
    try {
      await s.mkdir(dir)
    } catch (err) {
      // Made meanwhile by someone else is fine; a file in the way is a parent that is not a directory.
      const now = await s.stat(dir).catch(() => undefined)
      if (now === undefined) throw statusOf(err) === STATUS.NO_SUCH_FILE ? FsError.throughFile(req.verb, req.displayPath, err) : err
      if (kindOf(now.mode) !== 'directory') throw FsError.throughFile(req.verb, req.displayPath, err)
      return made
    }
    return made ?? dir
  }
}
