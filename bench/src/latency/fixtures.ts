/**
 * The files every backend's run starts from, the same on SFTP and S3, written straight to the
 * store (not through the proxy), so the measured operations find them in place.
 */

/** A text of `bytes` bytes whose first line is `MARK-A` (the edit toggles it). */
export function text(bytes: number, mark = 'MARK-A'): string {
  const line = 'lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.\n'
  const head = `${mark}\n`
  return head + line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes - head.length)
}

export const SMALL = text(4096)
export const BIG = text(10 * 1024 * 1024)
/** What the write operations write: 4 KiB. */
export const WRITTEN = text(4096, 'WRITTEN')
export const TREE_DIRS = 10
export const TREE_FILES_PER_DIR = 20
/** grep's pattern: on the first line of every tenth file of the tree. */
export const NEEDLE = 'NEEDLE'
export const EDITORS = ['seamfs', 'ssh2-sftp-client', 'sdk', 'flystorage', 'tools', 'bare'] as const
/** Files of 4 KiB the read rows take one at a time, so that no read finds its file in a cache. */
export const READ_FILES = 64
/** The path of the `n`-th of the {@link READ_FILES}. */
export const readFile = (n: number): string => `read/r${String(n % READ_FILES).padStart(2, '0')}.txt`

/** Relative path → content, for a run: data files, the two listed directories, the 200-file tree. */
export function fixtureFiles(listed: readonly number[]): Map<string, string> {
  const files = new Map<string, string>([
    ['data/small.txt', SMALL],
    ['data/big.txt', BIG],
    ['data/over.txt', SMALL],
  ])
  // Each subject edits its own file, toggling MARK-A and MARK-B.
  for (const subject of EDITORS) files.set(`data/edit-${subject}.txt`, SMALL)
  // The tool table's overwrites: each side its own file.
  for (const side of ['tools', 'bare']) files.set(`data/over-${side}.txt`, SMALL)
  for (let n = 0; n < READ_FILES; n++) files.set(readFile(n), SMALL)
  for (const n of listed) for (let i = 0; i < n; i++) files.set(`list${n}/f${String(i).padStart(4, '0')}.txt`, `file ${i}\n`)
  for (let d = 0; d < TREE_DIRS; d++) {
    for (let f = 0; f < TREE_FILES_PER_DIR; f++) {
      const first = (d * TREE_FILES_PER_DIR + f) % 10 === 0 ? `${NEEDLE} ${d}/${f}\n` : `plain ${d}/${f}\n`
      files.set(`tree/d${d}/f${f}.txt`, first + 'some text of a source file\n'.repeat(40))
    }
  }
  return files
}

/** Runs `fn` over `items`, at most `limit` at a time. */
export async function bounded<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++] as T)
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}
