/**
 * seamfs's side of every operation, the same on SFTP and S3: each resolves its path first, as a
 * tool call does; writes carry the guards the write tool sends under its read-before-write
 * policy; glob and grep run through the tools.
 */
import type { FileSystem, FsVersion } from '@seamfs/core'
import { createFileToolsByName } from '@seamfs/tools'
import { NEEDLE, WRITTEN } from './fixtures.js'
import type { Subject } from './measure.js'

/**
 * An overwrite of `path` as the write tool sends it: guarded by the version it knows from its
 * last write (a `stat` the first time), with `before` (the tool shows a diff) or without (a
 * caller that shows none).
 */
function policyOverwrite(fs: FileSystem, path: string): (before: boolean) => Promise<unknown> {
  let known: FsVersion | undefined
  return async (before) => {
    const target = await fs.resolve(path)
    known ??= (await fs.stat(target))?.version
    const expected = known === undefined ? undefined : ({ kind: 'replaceIfVersion', version: known } as const)
    const outcome = await fs.writeText(target, WRITTEN, { expected, before })
    known = outcome.version
    return outcome
  }
}

/** The operations of the table on `fs` (its own files under `w-seamfs/` and `data/edit-seamfs.txt`). */
export function seamfsOps(fs: FileSystem): Subject['ops'] {
  // No search timeout: at 50 ms a sequential walk of 200 files outlasts the default 30 s.
  const tools = createFileToolsByName({ fs, config: { searchTimeoutMs: 3_600_000 } })
  const at = (path: string): ReturnType<FileSystem['resolve']> => fs.resolve(path)
  const create = { expected: { kind: 'createIfAbsent' } } as const
  const overwrite = policyOverwrite(fs, 'data/over.txt')
  const tool = async (result: Promise<{ isError: boolean; text: string }>): Promise<void> => {
    const r = await result
    if (r.isError) throw new Error(r.text)
  }
  let mark = 'A'
  return {
    resolve: () => at('data/small.txt'),
    'read 4 KiB': async () => fs.readText(await at('data/small.txt')),
    'read 10 MiB': async () => fs.readText(await at('data/big.txt')),
    'write new': async (rep) => fs.writeText(await at(`w-seamfs/new-${rep}.txt`), WRITTEN, create),
    overwrite: () => overwrite(true),
    'overwrite, no before': () => overwrite(false),
    createIfAbsent: async (rep) => fs.writeText(await at(`w-seamfs/cia-${rep}.txt`), WRITTEN, create),
    edit: async () => {
      const next = mark === 'A' ? 'B' : 'A'
      await fs.editText(await at('data/edit-seamfs.txt'), { oldString: `MARK-${mark}`, newString: `MARK-${next}`, replaceAll: false })
      mark = next
    },
    'list 100': async () => fs.listDir(await at('list100')),
    'list 2,500': async () => fs.listDir(await at('list2500')),
    // A file this connection has not seen yet, so nothing is cached.
    stat: async (rep) => fs.stat(await at(`list2500/f${String(rep % 2500).padStart(4, '0')}.txt`)),
    'glob 200 files': () => tool(tools.glob.execute({ pattern: '*.txt', path: 'tree' })),
    'grep 200 files': () => tool(tools.grep.execute({ pattern: NEEDLE, path: 'tree' })),
  }
}
