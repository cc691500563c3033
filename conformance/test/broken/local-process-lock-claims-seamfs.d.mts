import type { LocalFileSystem, LocalFileSystemOptions } from '@seamfs/backend-local'

export declare class ProcessLockedLocal extends LocalFileSystem {
  constructor(options: LocalFileSystemOptions)
}
export declare function open(descriptor: { readonly root: string }): ProcessLockedLocal
