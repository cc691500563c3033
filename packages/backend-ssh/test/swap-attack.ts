/**
 * The swap race, measured: while a server-side process (./swapper.ts) swaps the
 * directory `d` inside the root with a symlink to `outside/d`, one
 * SftpFileSystem writes new files, writes under new directories, edits with a
 * version guard, replaces, reads and lists below `d`. Afterwards the outside
 * tree and the root are inspected on the server's disk (the test sshd runs on
 * this machine) and the figures counted.
 */
import { chownSync, existsSync, lchownSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FileSystem } from '@seamfs/core'
import { runSwapper, type SwapReport } from './swapper.js'

const SECRET = 'OUTSIDE-SECRET'
const AGENT = 'AGENT-WROTE'
const WORKERS = 3
const KINDS = ['new', 'newdir', 'edit', 'replace', 'read', 'list', 'remove', 'rename'] as const
type Kind = (typeof KINDS)[number]

/** Where the attack happens, as paths on this machine. */
export interface Arena {
  /** The filesystem's root on this machine's disk. */
  readonly hostRoot: string
  /** A directory outside the root (and outside any chroot) the server's user can write. */
  readonly hostOutside: string
  readonly uid: number
  readonly gid: number
  /** The symlink's target as the server resolves it: the outside directory's absolute path on the host. */
  readonly linkTarget: string
}

/** The figures of one attack. */
export interface Figures {
  readonly swapper: SwapReport
  /** Operations attempted, by kind: [attempted, succeeded]. */
  readonly attempted: number
  readonly byKind: Record<string, [number, number]>
  /** Failures by code. */
  readonly codes: Record<string, number>
  /** Files outside holding bytes the client wrote, and those bytes (temp files excluded). */
  readonly writesOutside: number
  readonly bytesOutside: number
  /** Files the client created outside whose content it rolled back (empty), and directories it made there (staging excluded). */
  readonly emptyFilesOutside: number
  readonly dirsOutside: number
  /** Outside files (present before the attack) whose content changed. */
  readonly replacedOutside: number
  /** Outside files (present before the attack) that are gone: removed, or moved away. */
  readonly removedOutside: number
  readonly tempsOutside: number
  /** Where they are (relative to the outside directory; a trailing `/` for a staging directory), and the bytes the temp files hold. */
  readonly tempsOutsideAt: string[]
  readonly tempBytesOutside: number
  /** Results (reads, listings, `before` texts) that carried outside content or names, and their bytes. */
  readonly outsideResults: number
  readonly outsideBytesReturned: number
  /** Files in the root holding outside content afterwards (copied in). */
  readonly copiedIn: number
  /** Staging directories and temp files left in the root (hidden from listings; not a fence matter, but litter). */
  readonly tempsInside: number
}

interface Tally {
  attempted: number
  byKind: Record<string, [number, number]>
  codes: Record<string, number>
  outsideResults: number
  outsideBytesReturned: number
}

const ORIGINALS: Readonly<Record<string, string>> = Object.fromEntries([
  ['read.txt', `${SECRET} read\n`],
  ['outside-only.txt', `${SECRET} only\n`],
  ...Array.from({ length: WORKERS }, (_, w): [string, string] => [`edit-${w}.txt`, `${SECRET} edit\nvalue: \n`]),
  ...Array.from({ length: WORKERS }, (_, w): [string, string] => [`replace-${w}.txt`, `${SECRET} replace\n`]),
  // Names the removers and renamers use inside: a removal or move led out through the link would take these.
  ...Array.from({ length: WORKERS }, (_, w): [string, string] => [`victim-${w}.txt`, `${SECRET} victim\n`]),
  ...Array.from({ length: WORKERS }, (_, w): [string, string] => [`moved-${w}.txt`, `${SECRET} moved\n`]),
])

/** Builds root/d (inside files), root/.swap-link (→ outside/d) and outside/d (secrets), owned by the server's user. */
function lay(arena: Arena): { dir: string; link: string } {
  const own = (p: string): void => chownSync(p, arena.uid, arena.gid)
  const dir = join(arena.hostRoot, 'd')
  const outsideDir = join(arena.hostOutside, 'd')
  for (const d of [arena.hostRoot, dir, arena.hostOutside, outsideDir]) {
    mkdirSync(d, { recursive: true })
    own(d)
  }
  for (const [name, text] of Object.entries(ORIGINALS)) {
    writeFileSync(join(outsideDir, name), text)
    own(join(outsideDir, name))
    if (name === 'outside-only.txt') continue
    const inside = name.startsWith('edit-') ? 'inside edit\nvalue: \n' : `inside ${name}\n`
    writeFileSync(join(dir, name), inside)
    own(join(dir, name))
  }
  const link = join(arena.hostRoot, '.swap-link')
  symlinkSync(join(arena.linkTarget, 'd'), link)
  lchownSync(link, arena.uid, arena.gid)
  return { dir, link }
}

function leaked(t: Tally, text: string | null | undefined): void {
  if (text === null || text === undefined || !text.includes(SECRET)) return
  t.outsideResults++
  t.outsideBytesReturned += Buffer.byteLength(text)
}

async function step(fs: FileSystem, kind: Kind, w: number, i: number, t: Tally): Promise<void> {
  const body = `${AGENT} ${w}/${i}\n`
  switch (kind) {
    case 'new':
      await fs.writeText(await fs.resolve(`d/new-${w}-${i}.txt`), body)
      return
    case 'newdir':
      await fs.writeText(await fs.resolve(`d/sub-${w}-${i}/deep/x.txt`), body)
      return
    case 'edit': {
      const target = await fs.resolve(`d/edit-${w}.txt`)
      const info = await fs.stat(target)
      if (info?.type !== 'file') throw Object.assign(new Error('absent'), { code: `edit target ${info?.type ?? 'absent'}` })
      const out = await fs.editText(target, { oldString: 'value: ', newString: `value: ${AGENT} `, replaceAll: false }, { expected: { version: info.version } })
      leaked(t, out.before)
      return
    }
    case 'replace': {
      const out = await fs.writeText(await fs.resolve(`d/replace-${w}.txt`), body)
      leaked(t, out.before)
      return
    }
    case 'read':
      leaked(t, await fs.readText(await fs.resolve('d/read.txt')))
      return
    // The remove or move is tried whether or not the write before it got through (most fail under the swapper).
    case 'remove': {
      const target = await fs.resolve(`d/victim-${w}.txt`)
      await fs.writeText(target, body).catch(() => undefined)
      await fs.remove(target)
      return
    }
    case 'rename': {
      const target = await fs.resolve(`d/victim-${w}.txt`)
      await fs.writeText(target, body).catch(() => undefined)
      await fs.rename(target, await fs.resolve(`d/moved-${w}.txt`), { overwrite: true })
      return
    }
    case 'list': {
      const names = (await fs.listDir(await fs.resolve('d'))).map((e) => e.name)
      if (names.includes('outside-only.txt')) leaked(t, `${SECRET} ${names.join('\n')}`)
      return
    }
  }
}

async function worker(fs: FileSystem, w: number, running: () => boolean, t: Tally): Promise<void> {
  for (let i = 0; running(); i++) {
    const kind = KINDS[i % KINDS.length] as Kind
    const row = (t.byKind[kind] ??= [0, 0])
    t.attempted++
    row[0]++
    try {
      await step(fs, kind, w, i, t)
      row[1]++
    } catch (err) {
      const code = (err as { code?: unknown }).code
      const key = typeof code === 'string' ? code : String(err)
      t.codes[key] = (t.codes[key] ?? 0) + 1
    }
  }
}

/** Every regular file and directory below `dir` (links not followed), as [path, isDirectory]. */
function walk(dir: string): [string, boolean][] {
  return readdirSync(dir).flatMap((name): [string, boolean][] => {
    const path = join(dir, name)
    const st = lstatSync(path)
    if (st.isDirectory()) return [[path, true], ...walk(path)]
    return st.isFile() ? [[path, false]] : []
  })
}

/** Runs the swapper for `durationMs` while the workers hammer `fs`; then counts. */
export async function attack(fs: FileSystem, arena: Arena, durationMs: number, holdUs: number): Promise<Figures> {
  const { dir, link } = lay(arena)
  const t: Tally = { attempted: 0, byKind: {}, codes: {}, outsideResults: 0, outsideBytesReturned: 0 }
  let running = true
  const swapping = runSwapper({ dir, link, durationMs, holdUs, uid: arena.uid, gid: arena.gid }).finally(() => (running = false))
  const [swapper] = await Promise.all([swapping, ...Array.from({ length: WORKERS }, (_, w) => worker(fs, w, () => running, t))])
  // One more operation, as a client that goes on working would make: it sweeps the temp files failed writes could not remove.
  await fs.listDir(await fs.resolve('.'))
  return { swapper, ...t, ...inspect(arena) }
}

function inspect(arena: Arena): Omit<Figures, 'swapper' | keyof Tally> {
  const f = {
    writesOutside: 0,
    bytesOutside: 0,
    emptyFilesOutside: 0,
    dirsOutside: 0,
    replacedOutside: 0,
    removedOutside: 0,
    tempsOutside: 0,
    tempsOutsideAt: [] as string[],
    tempBytesOutside: 0,
    copiedIn: 0,
    tempsInside: 0,
  }
  const outsideDir = join(arena.hostOutside, 'd')
  for (const name of Object.keys(ORIGINALS)) if (!existsSync(join(outsideDir, name))) f.removedOutside++
  for (const [path, isDir] of walk(arena.hostOutside)) {
    if (isDir) {
      // A staging directory of a write counts as a temp file left outside.
      if (/\/\.seamfs-tmp-[^/]*$/.test(path)) {
        f.tempsOutside++
        f.tempsOutsideAt.push(`${path.slice(arena.hostOutside.length + 1)}/`)
      } else if (path !== outsideDir) f.dirsOutside++
      continue
    }
    const name = path.slice(outsideDir.length + 1)
    const bytes = readFileSync(path)
    if (/(^|\/)\.seamfs-tmp-/.test(name)) {
      f.tempsOutside++
      f.tempsOutsideAt.push(path.slice(arena.hostOutside.length + 1))
      f.tempBytesOutside += bytes.length
    } else if (bytes.includes(AGENT)) {
      f.writesOutside++
      f.bytesOutside += bytes.length
      if (ORIGINALS[name] !== undefined) f.replacedOutside++
    } else if (ORIGINALS[name] !== undefined) {
      if (bytes.toString() !== ORIGINALS[name]) f.replacedOutside++
    } else if (bytes.length === 0) f.emptyFilesOutside++
    else f.writesOutside++
  }
  for (const [path, isDir] of walk(arena.hostRoot)) {
    if (/\/\.seamfs-tmp-[^/]*$/.test(path) && (isDir || !/\/\.seamfs-tmp-[^/]*\/[^/]*$/.test(path))) f.tempsInside++
    if (!isDir && readFileSync(path).includes(SECRET)) f.copiedIn++
  }
  return f
}

/** One line per figure, for the test's output. */
export function report(title: string, f: Figures): string {
  const rate = f.swapper.swaps / f.swapper.elapsedMs
  const kinds = Object.entries(f.byKind)
    .map(([k, [n, ok]]) => `${k} ${ok}/${n}`)
    .join(', ')
  return [
    `${title}: swapper ${f.swapper.swaps} swaps in ${f.swapper.elapsedMs.toFixed(0)} ms (${rate.toFixed(2)}/ms)`,
    `  operations attempted ${f.attempted} (succeeded/attempted: ${kinds}); failures ${JSON.stringify(f.codes)}`,
    `  writes landed outside: ${f.writesOutside} files, ${f.bytesOutside} bytes; replaced outside files ${f.replacedOutside}; removed ${f.removedOutside}; ` +
      `emptied files left outside ${f.emptyFilesOutside}; directories made outside ${f.dirsOutside}; temp files outside ${f.tempsOutside}${f.tempsOutside > 0 ? ` (${f.tempsOutsideAt.join(', ')}: ${f.tempBytesOutside} bytes)` : ''}`,
    `  outside content returned: ${f.outsideResults} results, ${f.outsideBytesReturned} bytes; files in the root holding outside content ${f.copiedIn}; temp files left inside ${f.tempsInside}`,
  ].join('\n')
}
