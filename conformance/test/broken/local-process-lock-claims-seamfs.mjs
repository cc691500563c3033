// Plain JavaScript: the kit's racing child processes import it with node itself.
import { LocalFileSystem } from '@seamfs/backend-local'

/**
 * Broken: the guards are held by a lock inside each process (`lockScope: 'process'`, no lock
 * entries in the store), but the store declares them `seamfs` strength (held among every seamfs
 * writer, in any process). Callers of one process never race; two processes on one directory do.
 */
export class ProcessLockedLocal extends LocalFileSystem {
  constructor(options) {
    super({ ...options, lockScope: 'process' })
    Object.defineProperty(this, 'capabilities', { value: Object.freeze({ ...this.capabilities, replaceIfVersion: 'seamfs' }) })
  }
}

/** Opens the store of a test's subject in another process, broken the same way. */
export function open(descriptor) {
  return new ProcessLockedLocal({ cwd: descriptor.root })
}
