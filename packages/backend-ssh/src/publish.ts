import { randomInt } from 'node:crypto'
import { posix } from 'node:path'
import { FsError, throwIfAborted, type LeaseHold } from '@seamfs/core/backend'
import { after, hunt, look, outsideSeen, placeVerdict, probe, settlePlace, SETTLE_ROUNDS, type Settled, type Sighting } from './checks.js'
import type { ServerClock } from './clock.js'
import { WRITE_AT_ONCE_BYTES, type Attrs, type Session } from './connection.js'
import { ensureDirectory, removeMade } from './directories.js'
import { STATUS, statusOf } from './errors.js'
import { release, tempName } from './names.js'
import { containsPath, kindOf } from './paths.js'
import type { StageKeeper } from './sweep.js'

/** The marker atime lies this far (at most) after the temp file's mtime: in the future, so no read moves it (relatime). */
const MARKER_SPAN_SECONDS = 2 ** 20

/** What one publication needs to know. */
export interface PublishRequest {
  /** Canonical remote path of the file to publish. */
  readonly key: string
  readonly displayPath: string
  /** The content when known from the start (written while `commit` runs); else `commit` returns it. */
  readonly bytes?: Uint8Array | undefined
  /** `link`: no-replace publication (`hardlink@openssh.com`) for `createIfAbsent`; `rename`: replace. */
  readonly mode: 'rename' | 'link'
  readonly verb: 'write' | 'edit'
  readonly signal?: AbortSignal | undefined
  /**
   * A version guard (an edit, `replaceIfVersion`): a publication replaced by another writer right
   * after it landed is reported stale. Unguarded, it happened (the last writer wins) and is reported so.
   */
  readonly guarded: boolean
  /** The cross-process lock held for the publication: checked (no I/O) right before the rename. */
  readonly hold?: LeaseHold | undefined
  /**
   * Sends the lock's release behind the rename (same round trip: the server removes the lock entry
   * after the commit), naming the entry through `via` (the stage's parent).
   */
  readonly release?: ((s: Session, via: string) => void) | undefined
  /**
   * Called right before the first request that changes the target's directory is sent: the
   * rename or link that publishes, or the MKDIR of a missing directory. A connection lost before
   * it leaves the publication undone for sure (a definite failure); after it, maybe done. It
   * throws (and nothing is sent) when the caller was already told the publication was aborted.
   */
  readonly committing?: (() => void) | undefined
}

/**
 * What the caller decides while the stage is made: its own first requests (a
 * `stat` of the target, an OPEN of it) go out in the stage's round trip.
 */
export interface PublishPlan {
  /** The permission bits of the new file, once the caller's first answers are in; a rejection publishes nothing. */
  readonly ready: Promise<number>
  /**
   * Called once `ready` settled and the stage is made: checks what must hold before publication
   * (a guard, on the content it reads) and returns the content when the request had none.
   * A rejection publishes nothing.
   */
  readonly commit: () => Promise<Uint8Array | undefined>
  /**
   * When the content known from the start is written: `send` writes it (its requests go out at the
   * call) and the plan calls it when it chooses (behind a lock entry's link: see overlap.ts). Absent:
   * at once, while `commit` runs.
   */
  readonly fill?: ((send: () => Promise<Attrs>) => Promise<Attrs>) | undefined
}

/** Where one publication stages: its private directory in the target's directory, and the temp file in it. */
interface Stage {
  readonly req: PublishRequest
  /** The target's directory (canonical). */
  readonly dir: string
  /** `dir/.seamfs-tmp-<hex>`, made by this write (mode 0700). */
  readonly stage: string
  /** `stage/.seamfs-tmp-<hex>`. */
  readonly temp: string
}

/** A stage with the temp file open. */
interface Staged extends Stage {
  readonly handle: Buffer
  /** Ends the keeping fresh of the stage (sweep.ts). */
  readonly unkeep: () => void
}

/** A failed rename or link of the temp file: its error (`reason`), and what the probes sent with it saw (undefined when they failed). */
interface NotPlaced {
  readonly burst: [string | undefined, Sighting] | undefined
  readonly reason: unknown
  /** The rmdir sent after it worked (a link's temp file was unlinked, and an empty staging directory removed: its name is random, so that was this write's). */
  readonly stageGone: boolean
}

const isFile = (a: Attrs | undefined): boolean => a !== undefined && kindOf(a.mode) === 'file'
const isDirectory = (a: Attrs | undefined): boolean => a !== undefined && kindOf(a.mode) === 'directory'

/**
 * Publishes files atomically: the content goes to a temp file in a private
 * staging directory made in the target's directory (so the rename never
 * crosses filesystems), `fsync@openssh.com`-ed, then renamed over the target
 * with `posix-rename@openssh.com`, or hard-linked to it with
 * `hardlink@openssh.com` (which fails when the target exists, whoever made
 * it: the atomic create-if-absent).
 *
 * Against a directory swapped for a symlink meanwhile (see checks.ts): every
 * path after the staging directory is made runs through it, and it exists
 * only where it was made, so a swapped directory on the way makes the request
 * fail instead of leading it elsewhere; the target is named
 * `stage/../<name>`, which the server's kernel resolves to the staging
 * directory's own parent, whatever the path to it leads to meanwhile. On top
 * of that, in the round trips the publication makes anyway: the staging
 * directory and temp file are checked to be where they should be right after
 * they are made (before a byte is written) and again with the content; the
 * published file is checked to be at the target's path (a random future atime
 * set through the handle marks it; restored after) with its directory where it
 * should be. A temp file found astray (never published: provably this
 * write's) has its content erased through the handle and is removed where it
 * can be found. A published file is erased only when a probe saw the path lead
 * out of the root: one merely not found at the target (another writer renamed
 * over it, rewrote it in place, moved it) may be someone's live file now and is
 * never touched. `FS_SANDBOX_DENIED` only when a probe saw the path lead out;
 * otherwise a retryable `FS_IO_ERROR`, or for a guarded publication replaced
 * right after it landed `FS_STALE_VERSION`. Staging that could not be removed
 * is removed over the next operation.
 */
export class Publisher {
  readonly #root: () => string
  readonly #keeper: StageKeeper
  readonly #clock: ServerClock
  readonly #orphans = new Set<string>()

  constructor(root: () => string, keeper: StageKeeper, clock: ServerClock) {
    this.#root = root
    this.#keeper = keeper
    this.#clock = clock
  }

  /**
   * Publishes the content: the stage is made in the target's directory at once, with the caller's
   * first requests (one round trip); the content is written while the caller's `commit` checks its
   * guard, when it is known and small (one more); then it is placed (one more). A missing directory
   * costs the round trips of making it. Returns the temp file's attrs after its last write (the
   * published file's, as this write left it) and the content published.
   */
  async publish(s: Session, req: PublishRequest, plan: PublishPlan): Promise<{ attrs: Attrs; bytes: Uint8Array }> {
    const stages: Staged[] = []
    try {
      return await this.#publish(s, req, plan, stages)
    } finally {
      for (const staged of stages) {
        staged.unkeep()
        release(posix.basename(staged.stage))
      }
    }
  }

  async #publish(s: Session, req: PublishRequest, plan: PublishPlan, stages: Staged[]): Promise<{ attrs: Attrs; bytes: Uint8Array }> {
    const dir = posix.dirname(req.key)
    const track = (staged: Staged): Staged => {
      stages.push(staged)
      return staged
    }
    const staging = this.#stageIn(s, req, dir).then(track)
    staging.catch(() => undefined)
    let permissions: number
    try {
      permissions = await plan.ready
    } catch (err) {
      await staging.then((staged) => this.#discard(s, staged, undefined)).catch(() => undefined)
      throw err
    }
    let made: string | undefined
    let staged: Staged | undefined
    let placing: Staged | undefined
    try {
      staged = await staging
    } catch (err) {
      if (statusOf(err) !== STATUS.NO_SUCH_FILE) throw err
      // The directory is missing (or not one): made level by level, each checked, then staged again.
      made = await ensureDirectory(s, dir, { root: this.#root(), verb: req.verb, path: req.displayPath, making: req.committing })
      staged = await this.#stageIn(s, req, dir)
        .then(track)
        .catch(async (again: unknown) => {
          if (made !== undefined) await removeMade(s, dir, made)
          throw again
        })
    }
    try {
      throwIfAborted(req.signal, req.verb)
      // Small content known from the start is written while the caller checks its guard: a guard
      // that fails costs the temp file, not a round trip for every write that passes.
      const early = req.bytes !== undefined && req.bytes.length <= WRITE_AT_ONCE_BYTES ? req.bytes : undefined
      const at = staged
      const send = (): Promise<Attrs> => this.#fill(s, at, early as Uint8Array, permissions)
      const filling = early === undefined ? Promise.resolve(undefined) : plan.fill === undefined ? send() : plan.fill(send)
      const [filled, committed] = await Promise.allSettled([filling, plan.commit()])
      if (filled.status === 'rejected') throw filled.reason
      if (committed.status === 'rejected') throw committed.reason
      const bytes = committed.value ?? req.bytes
      if (bytes === undefined) throw new TypeError('a publication needs content')
      const written = filled.value ?? (await this.#fill(s, staged, bytes, permissions))
      throwIfAborted(req.signal, req.verb)
      // A lock whose lease may have run out (this process was frozen) commits nothing.
      req.hold?.assertHeld(req.verb, req.displayPath)
      // Nothing is awaited from here to the rename's sending (in `#place`): an abort cannot come between.
      req.committing?.()
      placing = staged
      // From here the placing owns the handle: it closes it, or erases the content and closes it.
      staged = undefined
      await this.#place(s, placing, written)
      return { attrs: written, bytes }
    } catch (err) {
      if (err instanceof Astray) throw err.error
      if (staged !== undefined) await this.#discard(s, staged, made)
      // The connection dropped while the file was placed: its stage (if still there) is swept over the next one.
      else if (placing !== undefined && !(err instanceof FsError) && statusOf(err) === undefined) this.#orphans.add(placing.stage)
      throw err
    }
  }

  /** Makes this write's stage in `dir` (its requests are sent now); its failures as `#stage` reports them. */
  async #stageIn(s: Session, req: PublishRequest, dir: string): Promise<Staged> {
    const name = tempName()
    const at: Stage = { req, dir, stage: `${dir}/${name}`, temp: `${dir}/${name}/${name}` }
    try {
      return await this.#stage(s, at)
    } catch (err) {
      release(name)
      if (err instanceof Astray) throw err.error
      // The connection dropped while the stage was being made: the sweep removes it, if it exists, over the next one.
      if (!(err instanceof FsError) && statusOf(err) === undefined) this.#orphans.add(at.stage)
      throw err
    }
  }

  /** Makes the staging directory and opens the temp file in it (one round trip); checks both before anything is written. */
  async #stage(s: Session, at: Stage): Promise<Staged> {
    const sent = Date.now()
    const before = look(s, at.stage)
    const made = s.mkdir(at.stage, { mode: 0o700 })
    const opened = s.open(at.temp, 'wx', { mode: 0o600 })
    const sighting = probe(s, `${at.stage}/.`, at.temp, 'lstat')
    const burst = Promise.all([before, sighting])
    burst.catch(() => undefined)
    const [mkdir, open] = await Promise.allSettled([made, opened])
    if (open.status === 'rejected') {
      const seen = await burst.catch(() => undefined)
      if (mkdir.status === 'rejected') throw mkdir.reason
      // Made, but not found by the open: a swapped directory may have led the mkdir, or the open, elsewhere.
      const outside = seen === undefined ? [] : [seen[0], ...seen[1].reals].filter((r): r is string => r !== undefined && !containsPath(this.#root(), r))
      if (!(await hunt([at.stage, ...outside], (p) => s.rmdir(p), { s, root: this.#root(), dir: at.dir }))) this.#orphans.add(at.stage)
      if (outside.length > 0)
        throw sandboxed(at.req, `a directory on the path was swapped for a link (it led to ${JSON.stringify(outside[0])}); nothing was written`)
      throw open.reason
    }
    const unkeep = this.#keeper.keep(s, at.stage)
    const staged = { ...at, handle: open.value, unkeep }
    try {
      await this.#check(s, staged, burst, isFile, 'while the temp file was created')
    } catch (err) {
      unkeep()
      throw err
    }
    // The temp file's mtime is the server's clock at its OPEN.
    const [, seen] = await burst
    const createdAt = seen.attrs.findLast((a) => a !== undefined)?.mtime
    if (createdAt !== undefined) this.#clock.observe(createdAt, sent, Date.now())
    return staged
  }

  /**
   * Writes the content, the mode, fsync, and reads the attrs after it all, then
   * checks the temp file once more, now by its size: one round trip for small contents.
   */
  async #fill(s: Session, staged: Staged, bytes: Uint8Array, permissions: number): Promise<Attrs> {
    const { handle, stage, temp } = staged
    if (bytes.length > WRITE_AT_ONCE_BYTES) await s.writeAll(handle, bytes)
    // Small contents are all sent at once, so the fsync can go in the same round trip: OpenSSH answers in order.
    const small = bytes.length > WRITE_AT_ONCE_BYTES ? undefined : s.writeAll(handle, bytes)
    const mode = permissions === 0o600 ? undefined : s.fsetstat(handle, { mode: permissions })
    const synced = s.fsync(handle)
    const stated = s.fstat(handle)
    const burst = Promise.all([look(s, `${stage}/.`), probe(s, `${stage}/.`, temp, 'lstat')])
    burst.catch(() => undefined)
    const [, , , attrs] = await Promise.all([small, mode, synced, stated])
    const size = bytes.length
    await this.#check(s, staged, burst, (a) => isFile(a) && a?.size === size, 'while the file was written')
    return attrs
  }

  /** Settles where the temp file is; one found astray is erased, closed and hunted down, and the write refused. */
  async #check(
    s: Session,
    staged: Staged,
    burst: Promise<[string | undefined, Sighting]>,
    mine: (a: Attrs | undefined) => boolean,
    when: string,
  ): Promise<void> {
    const where = `${staged.stage}/.`
    const settled = await this.#settleOrClose(s, staged, { where, expected: staged.stage, file: staged.temp }, burst, mine)
    if (settled.verdict !== 'yes') throw new Astray(await this.#astray(s, staged, settled, when))
  }

  async #settleOrClose(
    s: Session,
    { handle }: Staged,
    place: { where: string; expected: string; file: string },
    burst: Promise<[string | undefined, Sighting]>,
    mine: (a: Attrs | undefined) => boolean,
  ): Promise<Settled> {
    try {
      const [before, sighting] = await burst
      return await settlePlace(s, this.#root(), place, after([before], sighting), mine)
    } catch (err) {
      await s.close(handle).catch(() => undefined)
      throw err
    }
  }

  /** Erases a temp file found astray through its handle, closes it and removes its stage; the error that says so. */
  async #astray(s: Session, staged: Staged, settled: Settled, when: string): Promise<FsError> {
    const erased = await erase(s, staged.handle)
    const name = posix.basename(staged.temp)
    // The outside places seen are realpaths of `stage/.`: the staging directory there itself.
    const removed = await hunt(
      [staged.stage, ...settled.outside],
      async (p) => {
        const [, rmdir] = await Promise.allSettled([s.unlink(`${p}/${name}`), s.rmdir(p)])
        if (rmdir.status === 'rejected') throw rmdir.reason
      },
      { s, root: this.#root(), dir: staged.dir },
    )
    const left = removed ? 'removed' : `left${erased ? ' empty' : ''} at a place this client could not find`
    if (settled.outside.length === 0) {
      // Nothing seen leading out of the root: another process moved or removed this write's stage.
      const reason = `this write's temp file was moved or changed by another process ${when}; it was ${left}; nothing was published, try again`
      return FsError.io(staged.req.verb, staged.req.displayPath, reason, { retryable: true })
    }
    const where = ` (it led to ${JSON.stringify(settled.outside[0])})`
    return sandboxed(staged.req, `a directory on the path was swapped for a link ${when}${where}; the temp file was ${left}`)
  }

  /**
   * Renames (or links) the temp file to `stage/../<name>` (the staging
   * directory's own parent) and checks, in the same round trip, that the file
   * at the target's path is this one with its directory where it should be. A
   * violation erases the published content.
   */
  async #place(s: Session, staged: Staged, written: Attrs): Promise<void> {
    const { handle, req, dir, stage, temp } = staged
    const target = `${stage}/../${posix.basename(req.key)}`
    const marker = written.mtime + 1 + randomInt(MARKER_SPAN_SECONDS)
    const before = look(s, dir)
    const marked = s.fsetstat(handle, { atime: marker, mtime: written.mtime })
    const moved = req.mode === 'rename' ? s.rename(temp, target) : s.hardlink(temp, target)
    const unlinked = req.mode === 'link' ? s.unlink(temp) : Promise.resolve()
    const sighting = probe(s, dir, req.key, 'lstat')
    // The lock goes only once the probes looked (the server answers in order): no writer the lock
    // kept waiting can have replaced this file before they see it.
    req.release?.(s, `${stage}/..`)
    const removed = s.rmdir(stage)
    const burst = Promise.all([before, sighting])
    burst.catch(() => undefined)
    const [markedOk, movedOk, , removedOk] = await Promise.allSettled([marked, moved, unlinked, removed])
    if (movedOk.status === 'rejected') {
      return this.#notPlaced(s, staged, { burst: await burst.catch(() => undefined), reason: movedOk.reason, stageGone: removedOk.status === 'fulfilled' })
    }
    // Without the marker (a server that refused the times), the attrs the write left identify the file.
    const mine = (a: Attrs | undefined): boolean =>
      isFile(a) && (markedOk.status === 'fulfilled' ? a?.atime === marker && a.size === written.size : sameWritten(a, written))
    const settled = await this.#settleOrClose(s, staged, { where: dir, expected: dir, file: req.key }, burst, mine)
    // A stage that its rmdir missed (a swapped directory hid it) is removed with care.
    if (removedOk.status === 'rejected') await this.#tidy(s, staged)
    if (settled.verdict === 'yes') {
      // Not awaited: the next request on this session is answered after these.
      s.fsetstat(handle, { atime: written.atime, mtime: written.mtime }).catch(() => undefined)
      s.close(handle).catch(() => undefined)
      return
    }
    if (settled.outside.length === 0) {
      // Landed, and then not found at the target with no path seen leading out: another writer
      // renamed over it, rewrote it in place or moved it (or its directory) right after. Its
      // inode may be someone's live file now: never touched (not even its times).
      s.close(handle).catch(() => undefined)
      // Unguarded, the write happened and another came after it: the last writer wins.
      if (!req.guarded) return
      const detail = `the ${req.verb} was published, then replaced or changed by another writer at once (not by this client); nothing of theirs was touched`
      throw FsError.stale(req.verb, req.displayPath, 'changed', new Error(detail))
    }
    // A path seen leading out of the root: the directory was swapped for a link, and what this
    // handle holds is this write's own content, which may have landed out there.
    const erased = await erase(s, handle)
    const where = `at ${JSON.stringify(`${settled.outside[0]}/${posix.basename(req.key)}`)}`
    const lost = req.mode === 'rename' ? '; a file it replaced there, if any, is lost' : ''
    const what = erased ? 'its content was erased there (an empty file remains)' : 'its content could NOT be erased'
    throw sandboxed(
      req,
      `a directory on the path was swapped for a link while the file was published: it may have landed outside the root, ${where}; ${what}${lost}`,
    )
  }

  /**
   * The rename or link failed (`failure.reason`): the stage is removed (hunted down when astray)
   * and the failure reported.
   */
  async #notPlaced(s: Session, staged: Staged, failure: NotPlaced): Promise<never> {
    const { burst, reason, stageGone } = failure
    const { handle, req, stage, temp } = staged
    if (stageGone) await s.close(handle).catch(() => undefined)
    else {
      const where = `${stage}/.`
      const seen = Promise.all([look(s, where), probe(s, where, temp, 'lstat')])
      const settled = await this.#settleOrClose(s, staged, { where, expected: stage, file: temp }, seen, isFile)
      // A link whose temp file's unlink worked has none left: its stage is still where it should be.
      const linkedAway = req.mode === 'link' && settled.verdict === 'no'
      if (settled.verdict !== 'yes' && !linkedAway) throw await this.#astray(s, staged, settled, 'while the file was published')
      await s.close(handle).catch(() => undefined)
      await this.#tidy(s, staged)
    }
    const out = burst === undefined ? undefined : outsideSeen(this.#root(), after([burst[0]], burst[1]))
    if (out !== undefined) throw sandboxed(req, `a directory on the path was swapped for a link (it led to ${JSON.stringify(out)}); nothing was published`)
    if (req.mode === 'link') await linkFailed(s, req, reason)
    throw reason
  }

  /** Best-effort cleanup of a failed write; what cannot be removed now is removed over the next operation. */
  async #discard(s: Session, staged: Staged, made: string | undefined): Promise<void> {
    await s.close(staged.handle).catch(() => undefined)
    if ((await this.#tidy(s, staged)) && made !== undefined) await removeMade(s, staged.dir, made)
  }

  /**
   * Removes this write's stage (its temp file, then the directory) from `dir`,
   * where it was checked to be, making sure the directory was where it should
   * be when the answer said it was gone; true when it is gone. Kept for a later
   * sweep when that cannot be settled now.
   */
  async #tidy(s: Session, { dir, stage, temp }: Pick<Stage, 'dir' | 'stage' | 'temp'>): Promise<boolean> {
    for (let round = 0; round <= SETTLE_ROUNDS; round++) {
      const before = look(s, dir)
      const unlinked = s.unlink(temp)
      const removing = s.rmdir(stage)
      const sighting = probe(s, dir, stage, 'lstat')
      const [, removed, seen] = await Promise.allSettled([unlinked, removing, Promise.all([before, sighting])])
      // The name is random: a removal that worked removed this write's stage, wherever it was.
      if (removed.status === 'fulfilled') return true
      const status = statusOf(removed.reason)
      if (status === undefined || seen.status === 'rejected') break
      // Gone only when the directory was seen where it should be, without the stage, throughout.
      if (status === STATUS.NO_SUCH_FILE && placeVerdict(dir, after([seen.value[0]], seen.value[1]), isDirectory) === 'no') return true
    }
    this.#orphans.add(stage)
    return false
  }

  /** Takes over an empty staging directory another operation could not remove: the next sweep removes it. */
  adopt(stage: string): void {
    this.#orphans.add(stage)
  }

  /** Removes the stages failed writes left behind (free when there are none). */
  async sweep(s: Session): Promise<void> {
    if (this.#orphans.size === 0) return
    const orphans = [...this.#orphans]
    this.#orphans.clear()
    await Promise.all(
      orphans.map((stage) => {
        const at = { dir: posix.dirname(stage), stage, temp: `${stage}/${posix.basename(stage)}` }
        return this.#tidy(s, at).catch(() => this.#orphans.add(stage))
      }),
    )
  }
}

/** A temp file found astray, already dealt with (erased, closed, hunted): the publication only reports `error`. */
class Astray extends Error {
  readonly error: FsError

  constructor(error: FsError) {
    super(error.message)
    this.error = error
  }
}

/**
 * `createIfAbsent` lost: the name exists (whoever made it), or is not a file. OpenSSH answers a link
 * onto an existing name (EEXIST) with a bare FAILURE, and in the target's own directory, with the
 * temp file there, that is the one failure a link meets (no other device, no permission answer):
 * where the name is gone again by the time it is looked at (another process made it and removed it
 * right after), the create still lost to a file that was there, and says so.
 */
async function linkFailed(s: Session, req: PublishRequest, reason: unknown): Promise<void> {
  if (statusOf(reason) !== STATUS.FAILURE) return
  const existing = await s.lstat(req.key).catch(() => undefined)
  if (existing === undefined) {
    throw FsError.notObserved(
      req.displayPath,
      new Error('another process created this file while it was being created here (and removed it again)', { cause: reason }),
    )
  }
  if (kindOf(existing.mode) !== 'file' && kindOf(existing.mode) !== 'symlink') throw FsError.notRegularFile(req.verb, req.displayPath, reason)
  throw FsError.notObserved(req.displayPath, reason)
}

/** Truncates the file behind `handle` (wherever its names are) and closes it; true when the truncation worked. */
async function erase(s: Session, handle: Buffer): Promise<boolean> {
  const erased = await s.fsetstat(handle, { size: 0 }).then(
    () => true,
    () => false,
  )
  await s.close(handle).catch(() => undefined)
  return erased
}

/** The attrs a write left, as a later lstat of the published file shows them. */
function sameWritten(a: Attrs | undefined, written: Attrs): boolean {
  return a !== undefined && a.size === written.size && a.mtime === written.mtime && a.uid === written.uid
}

/** `FS_SANDBOX_DENIED` for a write that a swapped directory sent (or may have sent) out of the root. */
function sandboxed(req: PublishRequest, reason: string): FsError {
  return FsError.sandboxDenied(req.verb, req.displayPath, reason)
}
