import type { FileEntryWithStats } from 'ssh2'
import { FsError, type FsVerb } from '@seamfs/core/backend'
import { after as seenAfter, handleVerdict, look, outsideSeen, probe, type Sighting } from './checks.js'
import { Session, type Attrs } from './connection.js'
import { outsideRoot } from './paths.js'
import { isReservedName } from './names.js'

/** Opens of one read that found the file replaced meanwhile before the read gives up (retryable). */
const OPEN_ATTEMPTS = 3

/** Who reads what, for the checks and their errors. */
export interface ReadSite {
  readonly root: string
  readonly key: string
  readonly verb: FsVerb
  readonly path: string
}

/** An OPEN sent with the `realpath`s of its path right before and after it (same round trip). */
export interface Opening {
  readonly handle: Promise<Buffer>
  readonly around: Promise<(string | undefined)[]>
}

/** An open file and the realpaths around its OPEN. */
interface Opened {
  readonly handle: Buffer
  readonly around: Promise<(string | undefined)[]>
}

/**
 * Sends `realpath`, OPEN (read) and `realpath` of `key` now, without waiting: a
 * caller that knows the file is a regular one sends it with its own first
 * requests (an OPEN of a FIFO would block the server's single sftp-server
 * process). Hand it to `readChecked`, or to `dropOpening` when it is not needed.
 */
export function sendOpen(s: Session, key: string): Opening {
  const before = look(s, key)
  const handle = s.open(key, 'r')
  handle.catch(() => undefined)
  const around = Promise.all([before, look(s, key)])
  around.catch(() => undefined)
  return { handle, around }
}

/** Closes the handle of an opening that is not needed after all (sent now, not awaited). */
export function dropOpening(s: Session, opening: Opening | undefined): void {
  opening?.handle.then(
    (handle) => s.close(handle).catch(() => undefined),
    () => undefined,
  )
}

async function open(s: Session, opening: Opening): Promise<Opened> {
  return { handle: await opening.handle, around: opening.around }
}

/**
 * Sends `fstat` of the handle and a burst of probes of its path (checks.ts)
 * now, before the caller's reads, and judges them when they are in: whether
 * the handle is the file at `key`, inside the root.
 */
async function check(s: Session, site: ReadSite, { handle, around }: Opened): Promise<{ verdict: 'inside' | 'outside' | 'unsure'; attrs: Attrs }> {
  const stated = s.fstat(handle)
  const probed = probe(s, site.key, site.key, 'stat')
  const [attrs, sighting, reals] = await Promise.all([stated, probed, around])
  return { verdict: handleVerdict(site.root, seenAfter(reals, sighting), attrs), attrs }
}

/** The verdict of a check, with a trailing burst's sighting folded in. */
async function judged(site: ReadSite, checking: ReturnType<typeof check>, trailing: Promise<Sighting>): Promise<Awaited<ReturnType<typeof check>>> {
  const [{ verdict, attrs }, later] = await Promise.all([checking, trailing])
  if (verdict !== 'inside') return { verdict, attrs }
  return { verdict: handleVerdict(site.root, later, attrs), attrs }
}

function changed(site: ReadSite, attempts: number): FsError {
  const reason = `the file was replaced or changed while it was being opened (${attempts} times); try again`
  return FsError.io(site.verb, site.path, reason, { retryable: true })
}

/** How `readChecked` reads: the size a stat gave, the most bytes it reads, its signal, and an OPEN already sent. */
export interface CheckedRead {
  readonly sizeHint: number
  readonly limit: number
  readonly signal: AbortSignal | undefined
  /** An OPEN of the file the caller already sent (see `sendOpen`). */
  readonly first?: Opening | undefined
}

/**
 * Reads a file whole (at most `limit` bytes) with the attrs of the same
 * handle, and returns them only when the handle is shown to be the file at
 * its path inside the root: the check goes out with the reads, so it costs
 * requests, not round trips. A file that fits one window of reads is read
 * with every request sent at once and the CLOSE right behind them (one round
 * trip after the OPEN); `first` is an OPEN the caller already sent. A file
 * replaced or changed meanwhile is opened again.
 */
export async function readChecked(s: Session, site: ReadSite, { sizeHint, limit, signal, first }: CheckedRead): Promise<{ bytes: Buffer; attrs: Attrs }> {
  for (let attempt = 1; attempt <= OPEN_ATTEMPTS; attempt++) {
    const opened = await open(s, attempt === 1 && first !== undefined ? first : sendOpen(s, site.key))
    // Planned only on the first attempt: a file that changed under it is read the careful way next.
    const planned = attempt === 1 && sizeHint < limit && Session.plannable(sizeHint)
    try {
      const checking = check(s, site, opened)
      const reading = planned ? s.readPlanned(opened.handle, sizeHint) : s.readAll(opened.handle, { sizeHint, verb: site.verb, signal, limit })
      reading.catch(() => undefined)
      // One more burst behind the reads (same round trip for small files): more looks, no more waiting.
      const trailing = probe(s, site.key, site.key, 'stat')
      trailing.catch(() => undefined)
      if (planned) s.close(opened.handle).catch(() => undefined)
      const { verdict, attrs } = await judged(site, checking, trailing)
      if (verdict === 'outside') throw outsideRoot(site.verb, site.path, site.root)
      const bytes = verdict === 'inside' ? await reading : undefined
      if (bytes !== undefined) return { bytes, attrs }
    } finally {
      if (!planned) s.close(opened.handle).catch(() => undefined)
    }
  }
  throw changed(site, OPEN_ATTEMPTS)
}

/**
 * Opens a file for a stream and checks it as `readChecked` does; `first`
 * sends the stream's first reads between the check's requests and its
 * verdict, so the check costs no round trip. One attempt: a file replaced
 * meanwhile is a retryable `FS_IO_ERROR`.
 */
export async function openChecked(s: Session, site: ReadSite, first: (handle: Buffer) => void): Promise<Buffer> {
  const opened = await open(s, sendOpen(s, site.key))
  try {
    const checking = check(s, site, opened)
    first(opened.handle)
    const { verdict } = await judged(site, checking, probe(s, site.key, site.key, 'stat'))
    if (verdict === 'outside') throw outsideRoot(site.verb, site.path, site.root)
    if (verdict === 'unsure') throw changed(site, 1)
    return opened.handle
  } catch (err) {
    s.close(opened.handle).catch(() => undefined)
    throw err
  }
}

/** READDIRs sent at once on a directory handle in the first round, doubling each round after (up to `MAX_WINDOW`). */
const FIRST_WINDOW = 4
const MAX_WINDOW = 32

/**
 * The entries of a directory, read through a handle opened between probes of
 * `key/.` (which exists only as a directory, and leads where the directory
 * is), each window of READDIRs between probes too: a directory swapped for an
 * outward link at the open or at a READDIR (OpenSSH names the entries through
 * the path) is refused whenever a probe saw it. Directory handles have no
 * attrs to compare, so the directory is opened twice, the second OPENDIR
 * behind a burst of probes, and both must list the same names: a listing from
 * a swapped directory needs both opens fooled. READDIRs are sent several at a
 * time (OpenSSH answers at most 100 names each, then EOF), so a listing of n
 * names costs 1 + about log2(n / 400) round trips. The OPENDIRs are sent now,
 * with the caller's own first requests; `gate` is the caller's verdict on
 * them (a rejection drops the handles). A probe that found nothing, or two
 * listings that differ (the directory changed meanwhile), start over, up to 3
 * times, then a retryable `FS_IO_ERROR`.
 */
export async function readdirChecked(s: Session, site: ReadSite, gate: Promise<unknown>): Promise<FileEntryWithStats[]> {
  for (let attempt = 1; attempt <= OPEN_ATTEMPTS; attempt++) {
    const opens = [openDir(s, site), openDir(s, site)]
    for (const o of opens) o.catch(() => undefined)
    if (attempt === 1) {
      try {
        await gate
      } catch (err) {
        for (const o of opens)
          o.then(
            (d) => s.close(d.handle).catch(() => undefined),
            () => undefined,
          )
        throw err
      }
    }
    const settled = await Promise.allSettled(opens)
    const failed = settled.find((r) => r.status === 'rejected')
    if (failed !== undefined) {
      for (const r of settled) if (r.status === 'fulfilled') s.close(r.value.handle).catch(() => undefined)
      throw failed.reason
    }
    const [entries, again] = await readDirs(
      s,
      site,
      settled.map((r) => (r as PromiseFulfilledResult<OpenDir>).value),
    )
    if (entries !== undefined && again !== undefined && sameNames(entries, again)) return entries
  }
  throw FsError.io(site.verb, site.path, `the directory was replaced or moved while it was being listed (${OPEN_ATTEMPTS} times); try again`, {
    retryable: true,
  })
}

/** A directory handle and what the probes around its OPENDIR saw. */
interface OpenDir {
  readonly handle: Buffer
  readonly around: Promise<readonly (string | undefined)[]>
}

function openDir(s: Session, site: ReadSite): Promise<OpenDir> {
  const where = `${site.key}/.`
  const before = look(s, where)
  const opened = s.opendir(site.key)
  const around = Promise.all([before, probe(s, where, site.key, 'stat')]).then(([b, p]) => seenAfter([b], p).reals)
  around.catch(() => undefined)
  return opened.then((handle) => ({ handle, around }))
}

/** What one window of READDIRs on one handle brought: the realpaths before each, the chunks, the burst behind them. */
type Window = [(string | undefined)[], (FileEntryWithStats[] | undefined)[], Sighting]

/**
 * Reads open directories to their ends in step: per round trip, a window of
 * READDIRs on each handle not at its end (each after a realpath probe, a
 * burst behind them), and closes each at its end (sent, not waited for).
 * Per handle: its entries, or undefined when a probe found nothing or another
 * place (look again); `FS_SANDBOX_DENIED` when a probe led out of the root.
 */
async function readDirs(s: Session, site: ReadSite, dirs: readonly OpenDir[]): Promise<(FileEntryWithStats[] | undefined)[]> {
  const where = `${site.key}/.`
  const clean = dirs.map(() => true)
  const judge = (i: number, reals: readonly (string | undefined)[]): void => {
    if (outsideSeen(site.root, { reals, attrs: [] }) !== undefined) throw outsideRoot(site.verb, site.path, site.root)
    if (reals.some((real) => real !== site.key)) clean[i] = false
  }
  const read = (handle: Buffer, window: number): Promise<Window> => {
    const reals: Promise<string | undefined>[] = []
    const chunks: Promise<FileEntryWithStats[] | undefined>[] = []
    for (let i = 0; i < window; i++) {
      reals.push(look(s, where))
      chunks.push(s.readdirChunk(handle))
    }
    const burst = Promise.all([Promise.all(reals), Promise.all(chunks), probe(s, where, site.key, 'stat')])
    burst.catch(() => undefined)
    return burst
  }
  const entries: FileEntryWithStats[][] = dirs.map(() => [])
  const open = new Set(dirs.keys())
  try {
    let window = FIRST_WINDOW
    let next = dirs.map((d) => read(d.handle, window))
    for (const [i, d] of dirs.entries()) judge(i, await d.around)
    while (open.size > 0) {
      const windows = await Promise.all(next)
      window = Math.min(window * 2, MAX_WINDOW)
      for (const [i, [reals, chunks, sighting]] of [...open].map((i, k) => [i, windows[k] as Window] as const)) {
        judge(i, [...reals, ...sighting.reals])
        const end = chunks.indexOf(undefined)
        for (const chunk of end === -1 ? chunks : chunks.slice(0, end)) entries[i]?.push(...(chunk as FileEntryWithStats[]))
        if (end === -1) continue
        open.delete(i)
        s.close((dirs[i] as OpenDir).handle).catch(() => undefined)
      }
      next = [...open].map((i) => read((dirs[i] as OpenDir).handle, window))
    }
    return entries.map((list, i) => (clean[i] === true ? list : undefined))
  } finally {
    for (const i of open) s.close((dirs[i] as OpenDir).handle).catch(() => undefined)
  }
}

/** True when two listings name the same entries, stages and lock entries aside (any writer's: they come and go). */
function sameNames(a: readonly FileEntryWithStats[], b: readonly FileEntryWithStats[]): boolean {
  const names = (list: readonly FileEntryWithStats[]): string[] =>
    list
      .map((e) => e.filename)
      .filter((name) => !isReservedName(name))
      .sort()
  const [x, y] = [names(a), names(b)]
  return x.length === y.length && x.every((name, i) => name === y[i])
}
