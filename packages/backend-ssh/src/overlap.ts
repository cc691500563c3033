/**
 * Writes and edits that take their target's lock while they stage: the lock entry's two round trips
 * and the publication's first ones go together, and what must happen under the lock is sent right
 * behind the entry's link (OpenSSH's sftp-server answers one session's requests in order, so the
 * server does it once the link took the lock).
 *
 * What may go before the lock: the stage and the temp file (reserved names no reader sees), the
 * stat of the target and, where its hash will be settled (see `VersionCache`), an OPEN of it and
 * its read. What goes behind the link: the content of the temp file (its mtime then falls after
 * the lock was taken, as when everything ran under it), and a stat of the target, or, where it is
 * to be read under the lock, its OPEN (a file replaced since an earlier OPEN would be read through
 * a stale handle). Once the lock is held, the read before it stands only for the very file it read,
 * vouched for by its settled hash; any other is read under the lock. A target found other than the
 * plan took it before the lock (gone, made, another kind or mode) has the whole write done again
 * the sequential way (`Overtaken`).
 */
import { checkGuard, FsError, type FsVersion, type FsWriteIntent } from '@seamfs/core/backend'
import { sameFile } from './checks.js'
import { dropOpening, sendOpen, type Opening } from './checked-reads.js'
import type { Attrs, Session } from './connection.js'
import { kindOf } from './paths.js'
import { absent } from './targets.js'
import { assertWritable, early, type Plan, type PlanSite } from './writes.js'

/** What a write or edit begun before its lock sends behind the lock entry's links. */
export interface Behind {
  /** Awaited by the lock before it links: the plan knows by then what to send behind. */
  gate(): Promise<void>
  /** Called on the session right after a link of the entry was sent. */
  send(s: Session): void
}

/** A plan begun before its lock: `behind` for the lock, and `abandon` for a publication that failed first (the gate opens). */
export interface OverlapPlan<T> extends Plan<T> {
  readonly behind: Behind
  readonly abandon: () => void
}

/** The plan found the target other than it was before the lock: the caller does the write again, the sequential way. */
export class Overtaken extends Error {
  constructor() {
    super('the target changed while its lock was being taken')
  }
}

/** A value settled from outside. */
interface Deferred<T> {
  readonly promise: Promise<T>
  resolve(value: T | Promise<T>): void
  reject(err: unknown): void
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T | Promise<T>) => void
  let reject!: (err: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  promise.catch(() => undefined)
  return { promise, resolve, reject }
}

/** True when `a` and `b` describe the same state of the target: both absent, or one file as SFTP can tell. */
function sameState(a: Attrs | undefined, b: Attrs | undefined): boolean {
  if (a === undefined || b === undefined) return a === b
  return kindOf(a.mode) === kindOf(b.mode) && sameFile(a, b)
}

/**
 * True when what the plan decided before the lock still holds of the target as it is under the
 * lock: it exists or not as it did, and a file keeps its kind and permissions (the temp file's
 * mode was taken from them). Its content may have changed: it is read under the lock then.
 */
function sameShape(a: Attrs | undefined, b: Attrs | undefined): boolean {
  if (a === undefined || b === undefined) return a === b
  return kindOf(a.mode) === kindOf(b.mode) && (a.mode & 0o7777) === (b.mode & 0o7777)
}

/**
 * The requests sent behind each link of the lock entry, and which link took the lock: the last
 * one (a failed link is followed by another attempt, or by the lock's failure).
 */
class Links {
  readonly #site: PlanSite
  readonly #stated: Promise<unknown>
  readonly #underOpen: () => boolean
  readonly #first: () => void
  #links = 0
  #locked = false
  #failed = false
  /** What was sent behind the last link: an OPEN of the target where it is to be read under the lock, else a stat of it. */
  #last: { readonly link: number; readonly stat: Promise<Attrs | undefined> | undefined; readonly opening: Opening | undefined } | undefined
  /** The publication's fill, once it asked for it; sent behind the first link (or once the lock is held). */
  #fill: { readonly send: () => Promise<Attrs>; sent: { readonly link: number; readonly done: Promise<Attrs> } | undefined } | undefined
  readonly #filled = deferred<Attrs>()
  readonly #asked = deferred<void>()

  /**
   * `fills`: the publication will ask to fill (small content known from the start); the lock waits for it.
   * `underOpen`: send an OPEN behind the link. `first`: run once the first link was sent (its reads then
   * follow the link's requests on the session, whatever answers come first).
   */
  constructor(site: PlanSite, stated: Promise<unknown>, fills: boolean, underOpen: () => boolean, first: () => void) {
    this.#site = site
    this.#stated = stated.catch(() => undefined)
    this.#underOpen = underOpen
    this.#first = first
    if (!fills) this.#asked.resolve()
  }

  readonly behind: Behind = {
    gate: async () => {
      await Promise.all([this.#stated, this.#asked.promise])
    },
    send: (s) => {
      this.#links++
      // What went behind an earlier link (one that did not take the lock) is of no use now.
      const previous = this.#last
      this.#last = undefined
      if (previous?.opening !== undefined) dropOpening(this.#site.s, previous.opening)
      if (s !== this.#site.s || this.#failed) return
      const fill = this.#fill
      if (fill !== undefined && fill.sent === undefined) {
        const done = fill.send()
        done.catch(() => undefined)
        fill.sent = { link: this.#links, done }
      }
      if (this.#underOpen()) this.#last = { link: this.#links, stat: undefined, opening: sendOpen(s, this.#site.key) }
      else {
        const stat = s.stat(this.#site.key).catch(absent)
        stat.catch(() => undefined)
        this.#last = { link: this.#links, stat, opening: undefined }
      }
      if (this.#links === 1) this.#first()
    },
  }

  /** The publication's fill: behind the next link, or at once when the lock is held. */
  fill(send: () => Promise<Attrs>): Promise<Attrs> {
    if (this.#locked) return send()
    this.#fill = { send, sent: undefined }
    this.#asked.resolve()
    return this.#filled.promise
  }

  /** Once the lock is held: what the winning link's requests found, and the fill settled (sent again when it went behind a link that lost). */
  afterLock(): { stat: Promise<Attrs | undefined> | undefined; opening: Opening | undefined } {
    this.#locked = true
    const last = this.#last !== undefined && this.#last.link === this.#links ? this.#last : undefined
    const fill = this.#fill
    const sent = fill?.sent
    // Behind a link that lost, the content was written before the lock: written again now (after the first write ended).
    if (fill !== undefined) {
      const filling = sent === undefined ? fill.send() : sent.link === this.#links ? sent.done : sent.done.then(() => fill.send())
      filling.catch(() => undefined)
      this.#filled.resolve(filling)
    }
    return { stat: last?.stat, opening: last?.opening }
  }

  /** The plan failed (or the publication did): a fill waiting for the lock fails with it, and the lock's gate opens. */
  fail(err: unknown): void {
    if (this.#failed) return
    this.#failed = true
    // A fill under way ends first: the publication discards its temp file only once nothing else uses its handle.
    const sent = this.#fill?.sent
    if (sent === undefined) this.#filled.reject(err)
    else {
      const failing = sent.done.then(() => {
        throw err
      })
      failing.catch(() => undefined)
      this.#filled.resolve(failing)
    }
    this.#asked.resolve()
    if (this.#last?.opening !== undefined && !this.#locked) dropOpening(this.#site.s, this.#last.opening)
  }
}

/** What the two overlapped plans share: the target's key, the pre-lock OPEN and read, the links. */
interface Shared {
  readonly site: PlanSite
  readonly locked: Promise<unknown>
  readonly fence: Promise<void> | undefined
}

/**
 * A write that replaces (not `createIfAbsent`), begun before its lock (see the module's comment):
 * the guard and the diff basis as `planWrite` has them, decided once the lock is held.
 */
export function overlapWrite(
  { site, locked, fence }: Shared,
  expected: FsWriteIntent | undefined,
  beforeMaxBytes: number,
  fills: boolean,
): OverlapPlan<{ current: Attrs | undefined; read: { bytes: Buffer; version: FsVersion; attrs: Attrs } | undefined }> {
  const { verb, path } = site
  const wanted = (attrs: Attrs | undefined): attrs is Attrs =>
    attrs !== undefined && (expected !== undefined || (beforeMaxBytes > 0 && attrs.size <= beforeMaxBytes))
  // An OPEN before the lock only for a read a settled hash can vouch for: any other is read through an OPEN behind the link.
  const opening = early(
    site,
    site.hinted !== undefined &&
      site.hintedMtime !== undefined &&
      site.settles(site.hintedMtime) &&
      (expected !== undefined || (beforeMaxBytes > 0 && site.hinted <= beforeMaxBytes)),
  )
  let current: Attrs | undefined
  let read: { bytes: Buffer; version: FsVersion; attrs: Attrs } | undefined
  const stated = site.current().then((attrs) => {
    current = attrs
    if (current !== undefined) site.assertFile(current)
    if (current !== undefined && expected === undefined) assertWritable(current, verb, path)
    return current === undefined ? site.newFileMode : current.mode & 0o777
  })
  const ready = fence === undefined ? stated : Promise.all([stated, fence]).then(([mode]) => mode)
  ready.catch(opening.dispose)
  // Read while the lock is taken only what a settled hash can vouch for once it is held.
  let early_: Promise<{ bytes: Buffer; version: FsVersion; attrs: Attrs } | undefined> | undefined
  const readEarly = (): void => {
    if (!wanted(current) || !site.settles(current.mtime)) return opening.dispose()
    early_ = site.read(current, opening.take())
    early_.catch(() => undefined)
  }
  const links = new Links(site, stated, fills, () => wanted(current) && !site.settles(current.mtime), readEarly)
  const commit = async (): Promise<undefined> => {
    try {
      await locked
      const { stat, opening: under } = links.afterLock()
      let now: Attrs | undefined
      if (under !== undefined && wanted(current)) {
        // Read through the OPEN sent behind the link: its handle's attrs are the file under the lock.
        read = await site.read(current, under)
        now = read?.attrs
      } else {
        dropOpening(site.s, under)
        now = await (stat ?? site.current())
        if (sameShape(current, now) && wanted(now)) {
          const before = await early_?.then(
            (r) => r,
            () => undefined,
          )
          // The read before the lock stands only for the very file it read, vouched for by its settled hash.
          const vouched = before !== undefined && sameState(before.attrs, now) && site.settled(now) === before.version
          read = vouched ? before : await site.read(now, undefined)
          now = read?.attrs
        }
      }
      if (!sameShape(current, now)) throw new Overtaken()
      checkGuard(verb, path, expected, read?.version)
      if (now !== undefined) assertWritable(now, verb, path)
      return undefined
    } catch (err) {
      links.fail(err)
      throw err
    }
  }
  return {
    ready,
    commit,
    fill: (send) => links.fill(send),
    found: () => ({ current, read }),
    dispose: opening.dispose,
    behind: links.behind,
    abandon: () => links.fail(new Overtaken()),
  }
}

/** An edit begun before its lock (see the module's comment): `planEdit`'s checks and read, decided once the lock is held. */
export function overlapEdit(
  { site, locked, fence }: Shared,
  expected: { readonly version: FsVersion } | undefined,
  maxBytes: number,
  transform: (bytes: Uint8Array) => Uint8Array,
): OverlapPlan<undefined> {
  const { verb, path } = site
  const opening = early(site, site.hinted !== undefined && site.hinted <= maxBytes && site.hintedMtime !== undefined && site.settles(site.hintedMtime))
  let current: Attrs | undefined
  const stated = site.current().then((attrs) => {
    if (attrs === undefined) throw FsError.stale(verb, path, 'gone')
    site.assertFile(attrs)
    if (attrs.size > maxBytes) throw FsError.tooLarge(verb, path, attrs.size, maxBytes)
    current = attrs
    return attrs.mode & 0o777
  })
  const ready = fence === undefined ? stated : Promise.all([stated, fence]).then(([mode]) => mode)
  ready.catch(opening.dispose)
  let early_: Promise<{ bytes: Buffer; version: FsVersion; attrs: Attrs } | undefined> | undefined
  const readEarly = (): void => {
    if (current === undefined || !site.settles(current.mtime)) return opening.dispose()
    early_ = site.read(current, opening.take(), maxBytes)
    early_.catch(() => undefined)
  }
  const links = new Links(site, stated, false, () => current !== undefined && !site.settles(current.mtime), readEarly)
  const commit = async (): Promise<Uint8Array> => {
    try {
      await locked
      const { stat, opening: under } = links.afterLock()
      const was = current as Attrs
      let read: { bytes: Buffer; version: FsVersion; attrs: Attrs } | undefined
      if (under !== undefined) {
        // Read through the OPEN sent behind the link: its handle's attrs are the file under the lock.
        read = await site.read(was, under, maxBytes)
      } else {
        const now = await (stat ?? site.current())
        if (!sameShape(was, now) || now === undefined) throw new Overtaken()
        const before = await early_?.then(
          (r) => r,
          () => undefined,
        )
        // The read before the lock stands only for the very file it read, vouched for by its settled hash.
        const vouched = before !== undefined && sameState(before.attrs, now) && site.settled(now) === before.version
        read = vouched ? before : await site.read(now, undefined, maxBytes)
      }
      if (read !== undefined && !sameShape(was, read.attrs)) throw new Overtaken()
      if (read === undefined) throw FsError.stale(verb, path, 'gone')
      checkGuard(verb, path, expected, read.version)
      assertWritable(read.attrs, verb, path)
      return transform(read.bytes)
    } catch (err) {
      links.fail(err)
      throw err
    }
  }
  return { ready, commit, found: () => undefined, dispose: opening.dispose, behind: links.behind, abandon: () => links.fail(new Overtaken()) }
}
