import { afterEach } from 'vitest'
import { MemoryFileSystem, type MemoryFileSystemOptions } from '@seamfs/backend-memory'
import { isFsError } from '@seamfs/core'

const opened: MemoryFileSystem[] = []

/** Closes every filesystem {@link memory} made, after each test of the file that calls it. */
export function closeAfterEach(): void {
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((fs) => fs.close()))
  })
}

/** A memory filesystem seeded with `files` (closed after the test, see {@link closeAfterEach}). */
export function memory(files: Record<string, string | null> = {}, options: Omit<MemoryFileSystemOptions, 'files'> = {}): MemoryFileSystem {
  const fs = new MemoryFileSystem({ ...options, files })
  opened.push(fs)
  return fs
}

/** What the filesystem reads at `path`, or the code of the `FsError` it fails with. */
export async function readAt(fs: MemoryFileSystem, path: string): Promise<string> {
  try {
    return await fs.readText(await fs.resolve(path))
  } catch (err) {
    if (isFsError(err)) return err.code
    throw err
  }
}
