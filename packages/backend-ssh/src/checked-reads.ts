import type { FileEntryWithStats } from 'ssh2'
import { FsError, type FsVerb } from '@seamfs/core/backend'
import { after as seenAfter, handleVerdict, look, outsideSeen, probe, type Sighting } from './checks.js'
import type { Attrs, Session } from './connection.js'
import { outsideRoot } from './paths.js'
import { isTempName } from './publish.js'

/** Opens of one read that found the file replaced meanwhile before the read gives up (retryable). */
const OPEN_ATTEMPTS = 3

/** Who reads what, for the checks and their errors. */
export interface ReadSite {
  readonly root: string
  readonly key: string
  readonly verb: FsVerb
  readonly path: string
}

/** An open file and the `realpath`s of its path sent right before and after the open (same round trip). */
interface Opened {
  readonly handle: Buffer
  readonly around: Promise<(string | undefined)[]>
}

async function open(s: Session, key: string): Promise<Opened> {
  const before = look(s, key)
  const opened = s.open(key, 'r')
  const around = Promise.all([before, look(s, key)])
  around.catch(() => undefined)
  return { handle: await opened, around }
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

/**
 * Reads a file whole (at most `limit` bytes) with the attrs of the same
 * handle, and returns them only when the handle is shown to be the file at
 * its path inside the root: the check goes out with the reads, so it costs
 * requests, not round trips. A file replaced meanwhile is opened again.
 */
export async function readChecked(
  s: Session,
  site: ReadSite,
  sizeHint: number,
  signal: AbortSignal | undefined,
  limit: number,
): Promise<{ bytes: Buffer; attrs: Attrs }> {
  for (let attempt = 1; attempt <= OPEN_ATTEMPTS; attempt++) {
    const opened = await open(s, site.key)
    try {
      const checking = check(s, site, opened)
      const reading = s.readAll(opened.handle, sizeHint, site.verb, signal, limit)
      reading.catch(() => undefined)
      // One more burst behind the reads (same round trip for small files): more looks, no more waiting.
      const trailing = probe(s, site.key, site.key, 'stat')
      trailing.catch(() => undefined)
      const { verdict, attrs } = await judged(site, checking, trailing)
      if (verdict === 'outside') throw outsideRoot(site.verb, site.path, site.root)
      if (verdict === 'inside') return { bytes: await reading, attrs }
    } finally {
      s.close(opened.handle).catch(() => undefined)
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
  const opened = await open(s, site.key)
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

/**
 * The entries of a directory, read through a handle opened between probes of
 * `key/.` (which exists only as a directory, and leads where the directory
 * is), each READDIR between probes too (same round trips): a directory
 * swapped for an outward link at the open or at a READDIR (OpenSSH names the
 * entries through the path) is refused whenever a probe saw it. Directory
 * handles have no attrs to compare, so the directory is opened a second time,
 * one round trip later, and both must list the same names: a listing from a
 * swapped directory then needs two opens fooled, at independent moments. A
 * probe that found nothing, or two listings that differ (the directory
 * changed meanwhile), start over, up to 3 times, then a retryable `FS_IO_ERROR`.
 */
export async function readdirChecked(s: Session, site: ReadSite): Promise<FileEntryWithStats[]> {
  for (let attempt = 1; attempt <= OPEN_ATTEMPTS; attempt++) {
    const first = await openDir(s, site)
    // The second open goes out with the first READDIR: one round trip after the first open.
    const [entries, again] = await Promise.all([readDir(s, site, first), openDir(s, site).then((second) => readDir(s, site, second))])
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

async function openDir(s: Session, site: ReadSite): Promise<OpenDir> {
  const where = `${site.key}/.`
  const before = look(s, where)
  const opened = s.opendir(site.key)
  const around = Promise.all([before, probe(s, where, site.key, 'stat')]).then(([b, p]) => seenAfter([b], p).reals)
  around.catch(() => undefined)
  return { handle: await opened, around }
}

/**
 * Reads an open directory to its end, each READDIR between probes, and closes
 * it; undefined when a probe found nothing or another place (look again);
 * `FS_SANDBOX_DENIED` when a probe led out of the root.
 */
async function readDir(s: Session, site: ReadSite, { handle, around }: OpenDir): Promise<FileEntryWithStats[] | undefined> {
  const where = `${site.key}/.`
  let clean = true
  const judge = (reals: readonly (string | undefined)[]): void => {
    if (outsideSeen(site.root, { reals, attrs: [] }) !== undefined) throw outsideRoot(site.verb, site.path, site.root)
    if (reals.some((real) => real !== site.key)) clean = false
  }
  const read = (): Promise<[string | undefined, FileEntryWithStats[] | undefined, Sighting]> => {
    const chunk = Promise.all([look(s, where), s.readdirChunk(handle), probe(s, where, site.key, 'stat')])
    chunk.catch(() => undefined)
    return chunk
  }
  try {
    const entries: FileEntryWithStats[] = []
    let next = read()
    judge(await around)
    for (;;) {
      const [real, chunk, sighting] = await next
      judge([real, ...sighting.reals])
      if (chunk === undefined) return clean ? entries : undefined
      entries.push(...chunk)
      next = read()
    }
  } finally {
    s.close(handle).catch(() => undefined)
  }
}

/** True when two listings name the same entries, this client's in-flight staging aside. */
function sameNames(a: readonly FileEntryWithStats[], b: readonly FileEntryWithStats[]): boolean {
  const names = (list: readonly FileEntryWithStats[]): string[] =>
    list
      .map((e) => e.filename)
      .filter((name) => !isTempName(name))
      .sort()
  const [x, y] = [names(a), names(b)]
  return x.length === y.length && x.every((name, i) => name === y[i])
}
