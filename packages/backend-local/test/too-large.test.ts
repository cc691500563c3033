import { spawnSync } from 'node:child_process'
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DEFAULT_MAX_TEXT_BYTES } from '@seamfs/core/backend'
import { isFsError, type FsErrorCode } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'

// Size limits are checked on the open descriptor's size, before any content is read: a file far
// above maxTextBytes costs neither memory nor time, and is left exactly as it was.

const HUGE = 2.5 * 1024 ** 3
// Text in the first 8 KiB (the binary sample), so the size check, not a NUL, is what refuses it.
const HEAD = 'a'.repeat(8192)
const MIDDLE = 'middle marker'
const TAIL = 'end marker\n'
const EDIT = { oldString: 'a', newString: 'b', replaceAll: true }

let root: string

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'seamfs-too-large-'))
})

afterEach(() => {
  rmSync(root, { recursive: true, force: true })
})

async function failure(promise: Promise<unknown>): Promise<{ code: FsErrorCode | 'resolved'; details?: unknown }> {
  try {
    await promise
    return { code: 'resolved' }
  } catch (err) {
    if (!isFsError(err)) throw new Error(`not an FsError: ${String(err)}`, { cause: err })
    return { code: err.code, details: err.details }
  }
}

/** A sparse file of `size` bytes: markers at the start, the middle and the end; holes (NULs) between. */
function sparse(path: string, size: number): void {
  const fd = openSync(path, 'w')
  try {
    writeSync(fd, HEAD, 0)
    writeSync(fd, MIDDLE, Math.floor(size / 2))
    writeSync(fd, TAIL, size - TAIL.length)
  } finally {
    closeSync(fd)
  }
}

/** Everything that would move if the file were rewritten or materialized; content whole, or the markers of a huge file. */
function snapshot(path: string): Record<string, bigint | string> {
  const st = statSync(path, { bigint: true })
  const size = Number(st.size)
  const fd = openSync(path, 'r')
  const at = (position: number, length: number): string => {
    const buffer = Buffer.alloc(length)
    readSync(fd, buffer, 0, length, position)
    return buffer.toString('latin1')
  }
  try {
    const content =
      size <= 1024 * 1024
        ? { whole: at(0, size) }
        : { head: at(0, HEAD.length), middle: at(Math.floor(size / 2), MIDDLE.length), tail: at(size - TAIL.length, TAIL.length) }
    const { ino, mode, blocks, mtimeNs, ctimeNs } = st
    return { size: st.size, ino, mode, blocks, mtimeNs, ctimeNs, ...content }
  } finally {
    closeSync(fd)
  }
}

describe('a 2.5 GiB sparse file (far above the default maxTextBytes)', () => {
  let path: string
  beforeEach(() => {
    path = join(root, 'huge.txt')
    sparse(path, HUGE)
  })

  it('readText and editText are FS_TOO_LARGE with the fstat size, and the file is unchanged', async () => {
    const before = snapshot(path)
    expect(before).toMatchObject({ size: BigInt(HUGE), head: HEAD, middle: MIDDLE, tail: TAIL })
    const fs = new LocalFileSystem({ cwd: root })
    const target = await fs.resolve('huge.txt')
    const version = (await fs.stat(target))?.version
    if (version === undefined) throw new Error('the sparse file is missing')
    const refused = { code: 'FS_TOO_LARGE', details: { size: HUGE, limit: DEFAULT_MAX_TEXT_BYTES } }
    expect(await failure(fs.readText(target))).toEqual(refused)
    expect(await failure(fs.editText(target, EDIT))).toEqual(refused)
    expect(await failure(fs.editText(target, EDIT, { expected: { version } }))).toEqual(refused)
    await fs.close()
    expect(snapshot(path)).toEqual(before)
    expect((await fs.stat(target))?.version).toBe(version)
    expect(readdirSync(root)).toEqual(['huge.txt'])
  })

  // The child runs the built package (npm test builds before it tests).
  const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url))
  const CHILD = `
import { LocalFileSystem } from ${JSON.stringify(pathToFileURL(DIST).href)}
const fs = new LocalFileSystem({ cwd: process.argv[1] })
const target = await fs.resolve('huge.txt')
const { version } = await fs.stat(target)
const codeOf = async (run) => {
  try { await run(); return 'resolved' } catch (err) { return err.name === 'FsError' ? err.code : 'RAW ' + String(err) }
}
const edit = ${JSON.stringify(EDIT)}
const out = {
  read: await codeOf(() => fs.readText(target)),
  edit: await codeOf(() => fs.editText(target, edit)),
  guardedEdit: await codeOf(() => fs.editText(target, edit, { expected: { version } })),
}
await fs.close()
out.maxRssMiB = process.resourceUsage().maxRSS / 1024
process.stdout.write(JSON.stringify(out))
`

  it.skipIf(!existsSync(DIST))(
    'in a child process (needs the build from `tsc -b`): refused, the process survives with little memory, the file is unchanged',
    () => {
      const before = snapshot(path)
      const child = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD, root], { encoding: 'utf8', timeout: 60_000 })
      expect({ status: child.status, signal: child.signal, stderr: child.stderr }).toEqual({ status: 0, signal: null, stderr: '' })
      const out = JSON.parse(child.stdout) as Record<string, unknown>
      expect(out).toMatchObject({ read: 'FS_TOO_LARGE', edit: 'FS_TOO_LARGE', guardedEdit: 'FS_TOO_LARGE' })
      // Reading the content up to the 256 MiB limit would have touched that much memory.
      expect(out.maxRssMiB).toBeLessThan(200)
      expect(snapshot(path)).toEqual(before)
      expect(readdirSync(root)).toEqual(['huge.txt'])
    },
    60_000,
  )
})

describe('a small maxTextBytes', () => {
  const LIMIT = 1000

  it('read and edit of a file one byte above it are FS_TOO_LARGE and leave it unchanged', async () => {
    const path = join(root, 'over.txt')
    writeFileSync(path, 'a'.repeat(LIMIT + 1))
    const before = snapshot(path)
    const fs = new LocalFileSystem({ cwd: root, maxTextBytes: LIMIT })
    const target = await fs.resolve('over.txt')
    const version = (await fs.stat(target))?.version
    if (version === undefined) throw new Error('the file is missing')
    const refused = { code: 'FS_TOO_LARGE', details: { size: LIMIT + 1, limit: LIMIT } }
    expect(await failure(fs.readText(target))).toEqual(refused)
    expect(await failure(fs.editText(target, EDIT))).toEqual(refused)
    expect(await failure(fs.editText(target, EDIT, { expected: { version } }))).toEqual(refused)
    expect(snapshot(path)).toEqual(before)
    // At the limit, both work.
    writeFileSync(path, 'a'.repeat(LIMIT))
    expect(await fs.readText(target)).toHaveLength(LIMIT)
    expect((await fs.editText(target, EDIT)).after).toBe('b'.repeat(LIMIT))
  })

  it('a write of content above it is FS_TOO_LARGE and changes and creates nothing', async () => {
    const path = join(root, 'kept.txt')
    writeFileSync(path, 'kept')
    const before = snapshot(path)
    const fs = new LocalFileSystem({ cwd: root, maxTextBytes: LIMIT })
    const content = 'a'.repeat(LIMIT + 1)
    const refused = { code: 'FS_TOO_LARGE', details: { size: LIMIT + 1, limit: LIMIT } }
    expect(await failure(fs.writeText(await fs.resolve('kept.txt'), content))).toEqual(refused)
    expect(await failure(fs.writeText(await fs.resolve('new.txt'), content))).toEqual(refused)
    await fs.close()
    expect(snapshot(path)).toEqual(before)
    expect(readdirSync(root)).toEqual(['kept.txt'])
  })

  // A /proc file reports size 0 yet has content: the read must stop at limit + 1 bytes, as for a file that grows.
  it.skipIf(!existsSync('/proc/self/maps'))('a file longer than its fstat size is read to at most limit + 1 bytes, then refused', async () => {
    const fs = new LocalFileSystem({ cwd: root, maxTextBytes: 100 })
    const target = await fs.resolve('/proc/self/maps')
    expect(await failure(fs.readText(target))).toEqual({ code: 'FS_TOO_LARGE', details: { size: 101, limit: 100 } })
  })
})
