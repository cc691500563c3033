import { createHash } from 'node:crypto'
import { posix } from 'node:path'
import { MAX_LEASE_MS, parseLeaseRecord, processWide, staleReason, HOST_ID, type LeaseEntry, type LeaseStore } from '@seamfs/core/backend'
import { look, settle } from './checks.js'
import { sightClock, type ServerClock } from './clock.js'
import { STATUS, statusOf } from './errors.js'
import { isFile, LockFailure, makeStage, outsideRoot, ownRecord, readEntry, takeAway, type EntrySite, type Orphans } from './lease-entries.js'
import { lockName, release, tempName } from './names.js'
import { containsPath } from './paths.js'
import type { Behind } from './overlap.js'
import type { Attrs, Session } from './session.js'

export { LockFailure } from './lease-entries.js'

/**
 * The token of a lock whose directory does not exist (or cannot be written): no entry can be made
 * there, and the operation it guards cannot change anything there either (a write into a missing
 * directory can only create; a guarded one, an edit, a remove or a move finds nothing to act on).
 */
export const NO_ENTRY = '\0no-entry'
/** Consecutive exclusive creates that failed with nothing at the name (a full disk…) before the failure is thrown. */
const MAX_BLIND_FAILURES = 3

/**
 * Records of this process whose removal a lost connection stopped (every copy of this package):
 * such an entry is stale at once for this process's waiters, whatever its lease says.
 */
const abandonedTexts: Set<string> = processWide('backend-ssh:abandoned-leases', () => new Set<string>())

/** The lock entry of the target `key` (`/dir/name` → `/dir/.seamfs-lock-<24 hex>`). */
export function entryPath(key: string): string {
  return posix.join(posix.dirname(key), lockName(posix.basename(key)))
}

/** What the store needs of its filesystem. */
export interface LeaseSite {
  session(): Promise<Session>
  root(): string
  readonly clock: ServerClock
  /** The lease of this process's entries (ms): an entry not confirmed within half of it is removed only after a check. */
  readonly leaseMs: number
}

interface Held {
  readonly path: string
  readonly s: Session
  readonly handle: Buffer
  readonly text: string
  /** When the entry was last known to be this holder's (made or renewed), by this client's clock. */
  confirmedAt: number
}

const sha = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 32)

/**
 * The lock entries of core's `LeaseLocks` on an SFTP server: the entry of `/dir/name` is the file
 * `/dir/.seamfs-lock-<24 hex of sha256(name)>` (mode 0600), made whole (a temp file written, then
 * hard-linked to the name, which fails when an entry exists) and kept open by its holder, who
 * renews it by writing its record again through the handle (the server's clock sets the mtime; no
 * path is followed). Rules:
 * - an entry is only ever removed when it is provably the one judged: a holder removes its own
 *   (by name while its lease is surely its own, else after reading it); a stale entry is first
 *   renamed aside to a stage name, read there, and removed only when it is still the entry that
 *   was judged (its record, size and mtime), else put back with a hard link (which never replaces
 *   one made meanwhile); an entry that is not a regular file is never read, followed or removed;
 * - ages are by the server's clock ({@link ServerClock}, bounded from mtimes this client caused);
 *   an age that cannot be bounded counts as fresh;
 * - an entry is made through a stage (it cannot land out of the root: a stage made there through a
 *   swapped directory is found by the probes, removed, and the lock refused with
 *   `FS_SANDBOX_DENIED`), and read only with its directory's realpath looked at around the read.
 */
export class SftpLeaseStore implements LeaseStore {
  readonly #site: LeaseSite
  readonly #held = new Map<string, Held>()
  /** What the last create of an entry saw at its name when its link failed (inspect's first look, same round trip). */
  readonly #seen = new Map<string, { readonly attrs: Attrs; readonly at: number }>()
  /** The last record read per entry, with the size and mtime it was read at. */
  readonly #texts = new Map<string, { readonly size: number; readonly mtime: number; readonly text: string }>()
  readonly #blind = new Map<string, number>()
  /** Tokens released early (`releaseEarly`): their `remove` is done. */
  readonly #released = new Set<string>()
  /** What a lost connection may have left: stages of creates (with their temp file), and entries with this client's record. */
  readonly #orphans: Orphans = new Map()
  /** What the requests of lease-entries.ts need: the root, the clock and the orphans. */
  readonly #entries: EntrySite
  /** What the operation taking a key's lock sends right behind each link of its entry ({@link behindLink}). */
  readonly #behind = new Map<string, Behind>()

  constructor(site: LeaseSite) {
    this.#site = site
    this.#entries = { root: () => site.root(), clock: site.clock, orphans: this.#orphans }
  }

  describe(key: string): string {
    return entryPath(key)
  }

  /**
   * Sets (or, with undefined, clears) what the operation now taking `key`'s lock sends right behind
   * each link of the entry, on the same session: the server answers in order, so it is done after
   * the link (the lock, when the link took it).
   */
  behindLink(key: string, behind: Behind | undefined): void {
    if (behind === undefined) this.#behind.delete(key)
    else this.#behind.set(key, behind)
  }

  /**
   * Two round trips, the way a write stages (publish.ts): a private stage directory made in the
   * target's directory with a temp file opened exclusively in it, both checked where they should
   * be; then the record written, hard-linked to `<stage>/../<entry name>` (the stage's own parent,
   * whatever the path to it leads to meanwhile; the link fails when an entry exists, whoever made
   * it), the entry lstat-ed there, the temp file and the stage removed. An entry is thus never
   * seen torn or empty, never made out of the root, and after a connection lost mid-way it is
   * known by its record.
   */
  async create(key: string, text: string): Promise<string | undefined> {
    const s = await this.#site.session()
    const path = entryPath(key)
    const name = tempName()
    const stage = posix.join(posix.dirname(path), name)
    const temp = `${stage}/${name}`
    let handle: Buffer | undefined
    // What a connection lost mid-way may have left: removed over the next one.
    let left: { stage: boolean; entry: boolean } = { stage: true, entry: false }
    try {
      handle = await this.#stageTemp(s, stage, temp)
      if (handle === undefined) {
        left = { stage: false, entry: false }
        return NO_ENTRY
      }
      // What goes behind the link is ready by now (it waits for its first answers, as this create did).
      const behind = this.#behind.get(key)
      if (behind !== undefined) await behind.gate()
      left = { stage: true, entry: true }
      const sent = Date.now()
      const written = s.writeAll(handle, Buffer.from(text))
      const linked = s.hardlink(temp, `${stage}/../${posix.basename(path)}`).then(
        () => undefined,
        (err: unknown) => ({ err }),
      )
      behind?.send(s)
      const seen = settle(s.lstat(`${stage}/../${posix.basename(path)}`))
      const cleared = Promise.all([s.unlink(temp), s.rmdir(stage)]).then(
        () => true,
        () => false,
      )
      const [link, attrs] = await Promise.all([linked, seen, written])
      left = { stage: !(await cleared), entry: false }
      // A swap of the directory at that moment sends the removal elsewhere: tried again over the next operations.
      if (left.stage) this.#orphans.set(stage, { stage: name })
      if (link === undefined) {
        if (attrs !== undefined) this.#site.clock.observe(attrs.mtime, sent, Date.now())
        this.#blind.delete(path)
        this.#held.set(text, { path, s, handle, text, confirmedAt: Date.now() })
        handle = undefined
        return text
      }
      if (attrs !== undefined) {
        this.#blind.delete(path)
        this.#seen.set(path, { attrs, at: Date.now() })
        return undefined
      }
      // Removed between the link and the lstat (or the stage went): the caller looks again, a few times.
      const blind = (this.#blind.get(path) ?? 0) + 1
      this.#blind.set(path, blind)
      if (statusOf(link.err) === undefined || blind >= MAX_BLIND_FAILURES) {
        this.#blind.delete(path)
        throw link.err
      }
      return undefined
    } catch (err) {
      // The connection dropped: what may exist is removed over the next one.
      if (statusOf(err) === undefined && !(err instanceof LockFailure)) {
        if (left.stage) this.#orphans.set(stage, { stage: name })
        if (left.entry) this.#abandon(path, text)
      }
      throw err
    } finally {
      if (handle !== undefined) s.close(handle).catch(() => undefined)
      release(name)
    }
  }

  /**
   * Makes the stage and opens the temp file in it (one round trip), checked where they should be
   * (checks.ts); undefined when the directory is missing or not writable (no entry can be made, and
   * nothing changed there either). Made out of the root (a directory swapped for a link): removed
   * where a probe saw it, and refused.
   */
  async #stageTemp(s: Session, stage: string, temp: string): Promise<Buffer | undefined> {
    const made = await makeStage(this.#entries, s, stage, temp)
    return made === undefined ? undefined : made.handle
  }

  /** An entry of this client's whose removal a lost connection stopped: removed over the next one; stale at once meanwhile. */
  #abandon(path: string, text: string): void {
    abandonedTexts.add(text)
    this.#orphans.set(path, { text })
  }

  /**
   * Removes what a connection lost mid-way left (free when nothing): stages of creates (their
   * names are random: whatever is at one is this client's), and entries known by this client's
   * record (removed only when they still hold it).
   */
  async sweepOrphans(s: Session): Promise<void> {
    if (this.#orphans.size === 0) return
    const orphans = [...this.#orphans]
    this.#orphans.clear()
    await Promise.all(
      orphans.map(async ([path, what]) => {
        try {
          if ('stage' in what) {
            const [, rmdir] = await Promise.allSettled([s.unlink(`${path}/${what.stage}`), s.rmdir(path)])
            if (rmdir.status === 'rejected' && statusOf(rmdir.reason) !== STATUS.NO_SUCH_FILE) throw rmdir.reason
          } else await this.#removeOwn(s, path, what.text)
        } catch {
          this.#orphans.set(path, what)
        }
      }),
    )
  }

  async inspect(key: string): Promise<LeaseEntry | undefined> {
    const path = entryPath(key)
    const s = await this.#site.session()
    const cached = this.#seen.get(path)
    this.#seen.delete(path)
    const attrs = cached !== undefined && Date.now() - cached.at < 1_000 ? cached.attrs : await this.#lstat(s, path)
    return attrs === undefined ? undefined : this.entryAt(s, path, attrs)
  }

  /** True while this store holds the entry at `path` (a sweep leaves it alone, unread). */
  holds(path: string): boolean {
    for (const own of this.#held.values()) if (own.path === path) return true
    return false
  }

  /** The entry at `path` as `inspect` gives it, from its lstat `attrs` (the sweep's way in too). */
  async entryAt(s: Session, path: string, attrs: Attrs): Promise<LeaseEntry | undefined> {
    // Never opened: a link could lead anywhere, a FIFO would block the server.
    if (!isFile(attrs)) return { text: undefined, token: `other:${attrs.mode}:${attrs.mtime}`, ageMs: 0 }
    // A record read before with this size and mtime is taken as it was (a waiter polls at one round trip),
    // unless it is judged stale: another holder's record may have the same size and second.
    const known = this.#texts.get(path)
    if (known !== undefined && known.size === attrs.size && known.mtime === attrs.mtime) {
      const entry = { text: known.text, token: `${attrs.size}:${attrs.mtime}:${sha(known.text)}`, ageMs: await this.#ageOf(s, path, known.text, attrs) }
      if (staleReason(entry) === undefined) return entry
    }
    const read = await readEntry(s, path, this.#site.root())
    if (read === undefined) return undefined
    const { text, attrs: at } = read
    this.#texts.set(path, { size: at.size, mtime: at.mtime, text })
    return { text, token: `${at.size}:${at.mtime}:${sha(text)}`, ageMs: await this.#ageOf(s, path, text, at) }
  }

  async remove(key: string, token: string): Promise<void> {
    if (token === NO_ENTRY || this.#released.delete(token)) return
    const own = this.#held.get(token)
    if (own !== undefined) {
      this.#held.delete(token)
      const { s, path, handle } = own
      try {
        // Surely still this holder's (no one may take it over within the lease): removed by its name.
        if (Date.now() - own.confirmedAt < this.#site.leaseMs / 2) await s.unlink(path)
        else await this.#removeOwn(s, path, own.text)
      } catch (err) {
        // The connection dropped, or the entry was not at its name (a swapped directory led the
        // request elsewhere): removed over the next operation, if it still holds this record.
        if (statusOf(err) === undefined || statusOf(err) === STATUS.NO_SUCH_FILE) this.#abandon(path, own.text)
      } finally {
        s.close(handle).catch(() => undefined)
      }
      return
    }
    await this.removeIfSame(await this.#site.session(), entryPath(key), token)
  }

  /**
   * Sends the removal of this store's entry of `key` now, on `s`, behind the requests already sent
   * (the commit they carry is done before the server removes the entry), when it is surely still
   * this holder's and was made on `s`; the later `remove` of its token is then a no-op. `via`: the
   * directory to name it through (a stage's `<stage>/..`, which cannot lead elsewhere). Nothing is
   * waited for; a removal that did not get through is retried over the next operation.
   */
  releaseEarly(s: Session, key: string, via = posix.dirname(key)): void {
    const path = entryPath(key)
    for (const [token, own] of this.#held) {
      if (own.path !== path || own.s !== s || Date.now() - own.confirmedAt >= this.#site.leaseMs / 2) continue
      this.#held.delete(token)
      this.#released.add(token)
      s.unlink(`${via}/${posix.basename(path)}`).catch((err: unknown) => {
        // Not where it was (a swapped directory led the request elsewhere), or the connection dropped:
        // removed over the next operation, if it still holds this record.
        if (statusOf(err) === undefined || statusOf(err) === STATUS.NO_SUCH_FILE) this.#abandon(path, own.text)
      })
      s.close(own.handle).catch(() => undefined)
    }
  }

  /** Removes the entry at `path` when it is still the one `token` (from {@link entryAt}) names; true when it did. */
  async removeIfSame(s: Session, path: string, token: string): Promise<boolean> {
    this.#texts.delete(path)
    const [size, mtime, hash] = token.split(':')
    return takeAway(this.#entries, s, path, { size: Number(size), mtime: Number(mtime), text: (text) => sha(text) === hash })
  }

  async renew(key: string, token: string): Promise<void> {
    const own = this.#held.get(token)
    if (own === undefined) return
    const sent = Date.now()
    const written = own.s.writeAll(own.handle, Buffer.from(own.text))
    const [mine, there] = await Promise.all([own.s.fstat(own.handle), settle(own.s.lstat(own.path)), written])
    this.#site.clock.observe(mine.mtime, sent, Date.now())
    if (there === undefined || !isFile(there) || there.size !== mine.size || there.mtime !== mine.mtime) {
      throw new Error(`the lock entry ${own.path} is no longer this holder's`)
    }
    own.confirmedAt = Date.now()
  }

  /** The entry's lstat, its directory's realpath looked at around it (an entry read through a link out of the root would leak). */
  async #lstat(s: Session, path: string): Promise<Attrs | undefined> {
    const dir = posix.dirname(path)
    const [before, attrs, after] = await Promise.all([look(s, dir), settle(s.lstat(path)), look(s, dir)])
    const outside = [before, after].find((real) => real !== undefined && !containsPath(this.#site.root(), real))
    if (outside !== undefined) throw outsideRoot(outside)
    return attrs
  }

  /**
   * The age to judge an entry by (ms, by the server's clock): a conservative bound, 0 when the
   * bounds straddle now. A record of this process that it no longer holds is a leftover of a
   * release that did not get through: stale at once.
   */
  async #ageOf(s: Session, path: string, text: string, attrs: Attrs): Promise<number> {
    const record = parseLeaseRecord(text)
    if (record !== undefined && record.host === HOST_ID && record.pid === process.pid && abandonedTexts.has(text)) return MAX_LEASE_MS + 1
    if (!this.#site.clock.known) await sightClock(s, this.#site.root(), this.#site.clock)
    const { lo, hi } = this.#site.clock.age(attrs.mtime)
    if (hi < 0) return hi
    return lo > 0 ? lo : 0
  }

  /**
   * Removes this client's entry at `path` when it still holds `record`: looked at first (an entry
   * that is someone else's by now is never even set aside), then taken away as a stale one is.
   */
  async #removeOwn(s: Session, path: string, record: string): Promise<void> {
    const attrs = await this.#lstat(s, path)
    if (attrs === undefined || !isFile(attrs) || attrs.size !== Buffer.byteLength(record)) return
    const read = await readEntry(s, path, this.#site.root())
    if (read?.text === record) await takeAway(this.#entries, s, path, ownRecord(record))
  }
}
