import { describeConformance } from '@seamfs/conformance'
import { memoryConformance } from '@seamfs/backend-memory/conformance'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import type { FsCapabilities } from '@seamfs/core'

/**
 * The kit on a store that does not write (`capabilities.readOnly`): a memory store that says so,
 * with hooks that would write. Its fixtures go through the external hooks, the read-only clause
 * checks every mutation is refused before any hook, and the clauses that need writes are skipped.
 */
// It declares none of the optional mutations: a store that does not write neither removes, moves nor makes directories.
const {
  remove: _remove,
  rename: _rename,
  removeIfVersion: _guard,
  renameDirectories: _dirs,
  createDirectory: _mkdir,
  ...reads
} = new MemoryFileSystem().capabilities

class ReadOnlyMemory extends MemoryFileSystem {
  override readonly capabilities: FsCapabilities = Object.freeze({ ...reads, readOnly: true })
}

const base = memoryConformance()
await describeConformance<MemoryFileSystem>({
  ...base,
  name: 'MemoryFileSystem (read-only)',
  create: ({ limits }) => ({ fs: new ReadOnlyMemory({ cwd: '/work', ...limits }) }),
})
