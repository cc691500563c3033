/**
 * One lock entry on the server: its stage (a private directory made where the entry goes, checked
 * there), its record read with its directory's realpath watched, and its removal when it is
 * provably the entry judged. `SftpLeaseStore` (leases.ts) decides when.
 */
import { posix } from 'node:path'
import { FsError, type FsVerb } from '@seamfs/core/backend'
import { after, hunt, look, probe, settle, settlePlace } from './checks.js'
import type { ServerClock } from './clock.js'
import type { Attrs, Session } from './session.js'
import { STATUS, statusOf } from './errors.js'
import { release, tempName } from './names.js'
import { containsPath, kindOf } from './paths.js'

/** How much of an entry is read: a lease record is about 150 bytes; anything longer is not one. */
const MAX_ENTRY_BYTES = 1024

/** What a lost connection may have left, by path: stages of creates (with their temp file), and entries with this client's record. */
export type Orphans = Map<string, { readonly stage: string } | { readonly text: string }>

/** What the entries' requests need of their store: the root, the server's clock, and where to note what is left behind. */
export interface EntrySite {
  root(): string
  readonly clock: ServerClock
  readonly orphans: Orphans
}

/** What an entry to remove is known by: its size and mtime (when known), and its record. */
export interface Judged {
  readonly size?: number | undefined
  readonly mtime?: number | undefined
  readonly text: (text: string) => boolean
}

/** The judgement of a record of this client's own. */
export const ownRecord = (record: string): Judged => ({ size: Buffer.byteLength(record), text: (text) => text === record })
export const isFile = (a: Attrs | undefined): boolean => a !== undefined && kindOf(a.mode) === 'file'
const isDirectory = (a: Attrs | undefined): boolean => a !== undefined && kindOf(a.mode) === 'directory'

/**
 * Makes the stage `stage` (with the temp file `temp` opened exclusively in it, when given), both
 * checked where they should be; see `SftpLeaseStore`'s `#stageTemp`. Without a temp file, the handle is empty.
 */
export async function makeStage(site: EntrySite, s: Session, stage: string, temp: string | undefined): Promise<{ handle: Buffer } | undefined> {
  const where = `${stage}/.`
  const sent = Date.now()
  const before = look(s, stage)
  const made = s.mkdir(stage, { mode: 0o700 })
  const opened = temp === undefined ? Promise.resolve(Buffer.alloc(0)) : s.open(temp, 'wx', { mode: 0o600 })
  const sighting = probe(s, where, temp ?? stage, 'lstat')
  const burst = Promise.all([before, sighting])
  burst.catch(() => undefined)
  const [mkdir, open] = await Promise.allSettled([made, opened])
  const close = (): Promise<void> => (open.status === 'fulfilled' && temp !== undefined ? s.close(open.value).catch(() => undefined) : Promise.resolve())
  if (mkdir.status === 'rejected') {
    void close()
    const status = statusOf(mkdir.reason)
    if (status === STATUS.NO_SUCH_FILE || status === STATUS.PERMISSION_DENIED) return undefined
    throw mkdir.reason
  }
  const [b, seen] = await burst.catch(async (err: unknown) => {
    await close()
    throw err
  })
  const settled = await settlePlace(
    s,
    site.root(),
    { where, expected: stage, file: temp ?? stage },
    after([b], seen),
    temp === undefined ? isDirectory : isFile,
  )
  if (open.status === 'fulfilled' && settled.verdict === 'yes') {
    const createdAt = seen.attrs.findLast((a) => a !== undefined)?.mtime
    if (createdAt !== undefined) site.clock.observe(createdAt, sent, Date.now())
    return { handle: open.value }
  }
  await close()
  const name = posix.basename(stage)
  // The names are random: whatever answers to them is this create's (its temp file is empty).
  const removed = await hunt(
    [stage, ...settled.outside],
    async (p) => {
      const [, rmdir] = await Promise.allSettled([s.unlink(`${p}/${name}`), s.rmdir(p)])
      if (rmdir.status === 'rejected') throw rmdir.reason
    },
    { s, root: site.root(), dir: posix.dirname(stage) },
  )
  // Not found: tried again by its name over the next operations (a swap no probe caught may lead there once more).
  if (!removed) site.orphans.set(stage, { stage: name })
  if (settled.outside.length > 0) {
    const left = removed ? 'it was removed' : 'it was left, empty, where the link led'
    throw new LockFailure(
      'FS_SANDBOX_DENIED',
      `a directory on the path was swapped for a link (it led to ${JSON.stringify(settled.outside[0])}) while a lock entry was made or set aside; ${left}; nothing else was changed`,
    )
  }
  if (open.status === 'rejected') throw open.reason
  throw new LockFailure('FS_IO_ERROR', 'the staging directory of a lock entry was moved or removed by another process at once; nothing was changed, try again')
}

/**
 * Moves the entry into a stage of its own made in its directory (checked there, like a create's:
 * both names of the rename are then resolved through the stage, which exists only inside the root,
 * so a directory swapped for a link meanwhile makes the rename fail instead of moving the entry, or
 * a file of its name, out of the root) and removes it there when it is the entry `judged` describes
 * (its size and mtime, seen with the rename, then its record, read); otherwise puts it back with a
 * hard link, which never replaces an entry made meanwhile (should one have been, the entry set
 * aside lost its place either way and is removed). An entry that is not a regular file is put
 * back unread. The stage is removed after.
 */
export async function takeAway(site: EntrySite, s: Session, path: string, judged: Judged): Promise<boolean> {
  const name = tempName()
  const stage = posix.join(posix.dirname(path), name)
  const entry = `${stage}/../${posix.basename(path)}`
  const aside = `${stage}/${name}`
  let made = false
  try {
    made = (await makeStage(site, s, stage, undefined)) !== undefined
    if (!made) return false
    const moved = s.rename(entry, aside).then(
      () => true,
      () => false,
    )
    const seen = settle(s.lstat(aside))
    const [ok, attrs] = await Promise.all([moved, seen])
    if (!ok || attrs === undefined) return false
    if (!isFile(attrs)) {
      await s.renameNoReplace(aside, entry).catch(() => undefined)
      return false
    }
    const same = (judged.size === undefined || attrs.size === judged.size) && (judged.mtime === undefined || attrs.mtime === judged.mtime)
    const read = same ? await readEntry(s, aside, site.root()).catch(() => undefined) : undefined
    if (read !== undefined && judged.text(read.text)) {
      return await s.unlink(aside).then(
        () => true,
        () => false,
      )
    }
    // Not the entry that was judged (a new holder's, made in between): back under its name.
    const back = s.hardlink(aside, entry).then(
      () => true,
      () => false,
    )
    const unlinked = s.unlink(aside).catch(() => undefined)
    await Promise.all([back, unlinked])
    return false
  } finally {
    if (made) {
      // Whatever is left in it (a put-back that failed) goes with it; a stage that cannot be removed is tried again later.
      const [, rmdir] = await Promise.allSettled([s.unlink(aside), s.rmdir(stage)])
      if (rmdir.status === 'rejected') site.orphans.set(stage, { stage: name })
    }
    release(name)
  }
}

/**
 * A lock could not be taken for a reason of the operation's own path: a directory on it swapped
 * for a link out of the root (`FS_SANDBOX_DENIED`), or its stage moved by another process (a
 * retryable `FS_IO_ERROR`). The caller reports it with its operation's verb and path.
 */
export class LockFailure extends Error {
  readonly code: 'FS_SANDBOX_DENIED' | 'FS_IO_ERROR'

  constructor(code: 'FS_SANDBOX_DENIED' | 'FS_IO_ERROR', reason: string) {
    super(reason)
    this.code = code
  }

  /** The error of the operation that took the lock. */
  toFsError(verb: FsVerb, path: string): FsError {
    if (this.code === 'FS_IO_ERROR') return FsError.io(verb, path, this.message, { retryable: true })
    return FsError.sandboxDenied(verb, path, this.message)
  }
}

export function outsideRoot(outside: string): LockFailure {
  return new LockFailure(
    'FS_SANDBOX_DENIED',
    `a directory on the path led out of the root (to ${JSON.stringify(outside)}) while a lock entry was looked at; nothing was changed`,
  )
}

/**
 * The text of the regular file at `path` (at most MAX_ENTRY_BYTES) and the attrs of the handle it
 * was read through; its directory's realpath looked at with the OPEN and with the READ (a text read
 * through a link out of the root would leak into messages): one led out is refused.
 */
export async function readEntry(s: Session, path: string, root: string): Promise<{ text: string; attrs: Attrs } | undefined> {
  const dir = posix.dirname(path)
  const before = look(s, dir)
  const handle = await s.open(path, 'r').catch((err: unknown) => {
    if (statusOf(err) === STATUS.NO_SUCH_FILE) return undefined
    throw err
  })
  if (handle === undefined) return undefined
  try {
    const [bytes, attrs, reals] = await Promise.all([s.readAt(handle, 0, MAX_ENTRY_BYTES + 1), s.fstat(handle), Promise.all([before, look(s, dir)])])
    const outside = reals.find((real) => real !== undefined && !containsPath(root, real))
    if (outside !== undefined) throw outsideRoot(outside)
    if (!isFile(attrs)) return undefined
    return { text: bytes.subarray(0, MAX_ENTRY_BYTES).toString('utf8'), attrs }
  } finally {
    s.close(handle).catch(() => undefined)
  }
}
