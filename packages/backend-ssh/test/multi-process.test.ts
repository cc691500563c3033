/**
 * Many agents, one store: several seamfs processes (plain `node` children on the BUILT package,
 * ./multi-process-worker.js) on one SFTP server, each with sessions of its own, doing read →
 * guarded edit, moves, removes and re-creations on the same few files; and an ordinary program
 * rewriting a file in place meanwhile. Each case is bounded (3–4 s of work, then the children
 * exit by themselves) and asserts what a lost update, a torn or emptied file, or a false alarm
 * would break. The figures (edits per second, failures by code) are printed.
 */
import { closeSync, fstatSync, openSync, readdirSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, inject, it } from 'vitest'
import { titled } from './helpers.js'
import { suiteScratch, type RawSftp } from './raw.js'
import { failures, startWorker, type WorkerResult } from './workers.js'

const server = inject('sftp')
const PROCESSES = 3
const DURATION_MS = 3_500

/** Every line of the files, by file, with the lines each edit that succeeded added. */
function checkEdits(files: Record<string, string>, results: readonly WorkerResult[], header: (file: string) => string): void {
  const present = new Map<string, string[]>()
  for (const [file, text] of Object.entries(files)) {
    expect(text.startsWith(header(file)), `${file} starts with its header`).toBe(true)
    expect(text.endsWith('END\n'), `${file} is whole (ends with END)`).toBe(true)
    present.set(file, text.slice(header(file).length, -'END\n'.length).split('\n').filter(Boolean))
  }
  const reported = results.flatMap((r) => r.ok)
  const lost = reported.filter(([file, line]) => !(present.get(file) ?? []).includes(line))
  expect(lost, 'edits reported successful but missing from their file').toEqual([])
  // And nothing but those edits: no line twice, none that was not reported (but an edit that failed
  // indeterminate, whose answer was lost on a loaded machine, may have landed).
  const lines = [...present.values()].flat()
  expect(new Set(lines).size, 'no line twice').toBe(lines.length)
  const known = new Set([...reported, ...results.flatMap((r) => r.maybe)].map(([, line]) => line))
  expect(
    lines.filter((line) => !known.has(line)),
    'lines of edits reported failed (not indeterminate)',
  ).toEqual([])
}

describe.skipIf(server === null)(titled('several seamfs processes on one SFTP store', server, inject('sftpWhy')), () => {
  let raw: RawSftp
  let base: string
  suiteScratch(server, 'multi-', (scratch) => {
    raw = scratch.raw
    base = scratch.base
  })

  const contents = async (root: string, names: readonly string[]): Promise<Record<string, string>> =>
    Object.fromEntries(await Promise.all(names.map(async (n) => [n, (await raw.read(`${root}/${n}`)).toString()] as const)))
  const reserved = (root: string): string[] => readdirSync(root).filter((n) => n.startsWith('.seamfs-'))

  it(`${PROCESSES} processes × 3 sessions, read → guarded edit on 3 files: every edit reported successful is there`, { timeout: 60_000 }, async () => {
    const root = await raw.freshDir(base, 'edits-')
    const files = ['a.txt', 'b.txt', 'c.txt']
    for (const f of files) await raw.writeInPlace(`${root}/${f}`, Buffer.from('START\nEND\n'))
    const workers = Array.from({ length: PROCESSES }, (_, p) =>
      startWorker(server!, { root, mode: 'edit', name: `p${p}`, sessions: 3, durationMs: DURATION_MS, files }),
    )
    const results = await Promise.all(workers.map((w) => w.done))
    const codes = failures(results)
    const edits = results.reduce((n, r) => n + r.ok.length, 0)
    console.log(
      `${PROCESSES} processes × 3 sessions, 3 files, ${DURATION_MS} ms: ${edits} edits (${((edits / DURATION_MS) * 1000).toFixed(1)}/s); failures ${JSON.stringify(codes)}`,
    )
    expect(results.map((r) => r.crashed)).toEqual(results.map(() => undefined))
    expect(codes['FS_SANDBOX_DENIED'] ?? 0, results.flatMap((r) => r.messages).join('\n')).toBe(0)
    // Losers of a race are told to re-read (stale), or that the lock was busy (retryable): nothing else.
    expect(Object.keys(codes).filter((c) => c !== 'FS_STALE_VERSION' && c !== 'FS_IO_ERROR')).toEqual([])
    expect(
      edits,
      results
        .flatMap((r) => r.messages)
        .slice(0, 5)
        .join('\n'),
    ).toBeGreaterThan(20)
    checkEdits(await contents(root, files), results, () => 'START\n')
    expect(reserved(root), 'no stage or lock entry left').toEqual([])
  })

  it(
    'an ordinary program rewrites a file in place 20×/s while 2 processes edit it and another: nothing of it is ever truncated',
    { timeout: 60_000 },
    async () => {
      const root = await raw.freshDir(base, 'inplace-')
      const files = ['mine.txt', 'shared.txt']
      for (const f of files) await raw.writeInPlace(`${root}/${f}`, Buffer.from('START\nEND\n'))
      const workers = Array.from({ length: 2 }, (_, p) =>
        startWorker(server!, { root, mode: 'edit', name: `p${p}`, sessions: 2, durationMs: DURATION_MS, files }),
      )
      // The outside writer: open with O_TRUNC and write, as a shell's `>` does (same inode), then look
      // through its own descriptor before the next rewrite: a shorter file was truncated by someone else.
      const shared = join(root, 'shared.txt')
      let rewrites = 0
      const truncated: string[] = []
      let fd: number | undefined
      let wrote = 0
      const rewrite = (): void => {
        if (fd !== undefined) {
          const size = fstatSync(fd).size
          if (size < wrote) truncated.push(`rewrite ${rewrites}: ${size} of ${wrote} bytes left`)
          closeSync(fd)
        }
        const text = `START\noutside-${rewrites++}\nEND\n`
        fd = openSync(shared, 'w')
        wrote = writeSync(fd, text)
      }
      const timer = setInterval(rewrite, 50)
      let results: WorkerResult[]
      try {
        results = await Promise.all(workers.map((w) => w.done))
      } finally {
        clearInterval(timer)
        rewrite()
        if (fd !== undefined) closeSync(fd)
      }
      const codes = failures(results)
      console.log(`in-place writer: ${rewrites} rewrites; seamfs edits ${results.reduce((n, r) => n + r.ok.length, 0)}; failures ${JSON.stringify(codes)}`)
      expect(rewrites).toBeGreaterThan(40)
      expect(truncated, 'the outside writer found its file truncated').toEqual([])
      expect(codes['FS_SANDBOX_DENIED'] ?? 0, results.flatMap((r) => r.messages).join('\n')).toBe(0)
      // The file only seamfs writes keeps every edit; the shared one is whole (the outside writer's last rewrite, or an edit of it).
      const mine = results.map((r) => ({ ...r, ok: r.ok.filter(([f]) => f === 'mine.txt') }))
      checkEdits(await contents(root, ['mine.txt']), mine, () => 'START\n')
      const last = (await raw.read(`${root}/shared.txt`)).toString()
      expect(last).toMatch(/^START\n(?:.+\n)*END\n$/)
      expect(reserved(root)).toEqual([])
    },
  )

  it(
    `${PROCESSES} processes move, remove and re-create, and edit the same 3 files: each ends at exactly one name, whole, with every edit`,
    { timeout: 60_000 },
    async () => {
      const root = await raw.freshDir(base, 'shuffle-')
      const ids = ['f0', 'f1', 'f2']
      for (const id of ids) await raw.writeInPlace(`${root}/${id}-0.txt`, Buffer.from(`id: ${id}\nEND\n`))
      const workers = Array.from({ length: PROCESSES }, (_, p) =>
        startWorker(server!, { root, mode: 'shuffle', name: `p${p}`, sessions: 2, durationMs: DURATION_MS, files: ids }),
      )
      const results = await Promise.all(workers.map((w) => w.done))
      const codes = failures(results)
      const sum = (f: (r: WorkerResult) => number): number => results.reduce((n, r) => n + f(r), 0)
      console.log(
        `shuffle: ${sum((r) => r.moves)} moves, ${sum((r) => r.recreated)} removed and re-created, ${sum((r) => r.ok.length)} edits; failures ${JSON.stringify(codes)}`,
      )
      expect(results.flatMap((r) => r.lost)).toEqual([])
      expect(codes['FS_SANDBOX_DENIED'] ?? 0, results.flatMap((r) => r.messages).join('\n')).toBe(0)
      expect(sum((r) => r.moves)).toBeGreaterThan(0)
      expect(sum((r) => r.recreated)).toBeGreaterThan(0)
      const names = await raw.names(root)
      expect(names.filter((n) => !/^f[0-2]-[0-2]\.txt$/.test(n))).toEqual([])
      const at = Object.fromEntries(ids.map((id) => [id, names.filter((n) => n.startsWith(`${id}-`))]))
      for (const id of ids) expect(at[id], `${id} is at exactly one name`).toHaveLength(1)
      const texts = await contents(
        root,
        ids.map((id) => at[id]![0]!),
      )
      const byId = Object.fromEntries(ids.map((id) => [id, texts[at[id]![0]!]!]))
      checkEdits(byId, results, (id) => `id: ${id}\n`)
    },
  )
})
