/**
 * The sandbox's cost per path does not grow with depth (glob and grep over 800 nested folders
 * once took 23–26 s sandboxed against 141 ms bare). Counted, not timed: every call the
 * sandbox makes into the backend, on chains of nested directories of three depths, on the real
 * disk. Each entry walked must cost the same bounded number of backend calls at every depth (no
 * re-resolving of ancestors per entry); what each call costs at depth is the backend's (see
 * backend-local's `test/deep-paths.test.ts`). The timing is `bench/src/sandbox-depth.ts`.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { SandboxedFileSystem, type FsDirEntry, type FsInfo, type FsPathInfo, type FsTarget } from '@seamfs/core'
import type { Awaitable, ReadRequest } from '@seamfs/core/backend'
import { LocalFileSystem } from '@seamfs/backend-local'
import { createFileToolsByName } from '@seamfs/tools'

const base = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-sandbox-depth-')))
afterAll(() => rmSync(base, { recursive: true, force: true }))

/** The local backend, counting every hook the sandbox (or core) calls on it. */
class Counting extends LocalFileSystem {
  calls = 0
  protected override resolvePath(path: string, cwd: string | undefined): Awaitable<FsTarget> {
    this.calls++
    return super.resolvePath(path, cwd)
  }
  protected override statTarget(target: FsTarget): Awaitable<FsInfo | undefined> {
    this.calls++
    return super.statTarget(target)
  }
  protected override lstatPath(path: string, cwd: string | undefined): Awaitable<FsPathInfo | undefined> {
    this.calls++
    return super.lstatPath(path, cwd)
  }
  protected override listEntries(target: FsTarget): Promise<FsDirEntry[]> {
    this.calls++
    return super.listEntries(target)
  }
  protected override loadBytes(target: FsTarget, request: ReadRequest): Awaitable<Uint8Array> {
    this.calls++
    return super.loadBytes(target, request)
  }
}

/** A chain of `depth` nested directories, one matching file in each: `2 × depth` entries to walk. */
function chain(depth: number): string {
  const root = mkdtempSync(join(base, `d${depth}-`))
  let dir = root
  for (let i = 0; i < depth; i++) {
    dir = join(dir, 'd')
    mkdirSync(dir)
    writeFileSync(join(dir, 'f.txt'), `level ${i}: needle\n`)
  }
  return root
}

/** Backend calls of one search over a chain of `depth`, sandboxed (the default fence) and bare. */
async function callsOf(tool: 'glob' | 'grep', depth: number): Promise<{ sandboxed: number; bare: number }> {
  const root = chain(depth)
  const run = async (sandboxed: boolean): Promise<number> => {
    const inner = new Counting({ cwd: root })
    const fs = sandboxed ? new SandboxedFileSystem(inner, { mode: 'workspace-write', workspaceRoot: root }) : inner
    const tools = createFileToolsByName({ fs, cwd: root, ...(sandboxed ? {} : { sandbox: false }) })
    if (tool === 'glob') expect((await tools.glob.execute({ pattern: '**/*.txt' })).value?.totalPaths).toBe(depth)
    else expect((await tools.grep.execute({ pattern: 'needle' })).value?.totalMatches).toBe(depth)
    return inner.calls
  }
  return { sandboxed: await run(true), bare: await run(false) }
}

describe('the sandbox on deep trees', () => {
  for (const tool of ['glob', 'grep'] as const) {
    it(`${tool}: every entry walked costs the sandbox the same few backend calls, at depth 10, 40 and 160`, async () => {
      const [shallow, middle, deep] = [await callsOf(tool, 10), await callsOf(tool, 40), await callsOf(tool, 160)]
      // What one more level (a directory and its file: two entries) costs, between two depths.
      const perLevel = (
        a: { sandboxed: number; bare: number },
        b: { sandboxed: number; bare: number },
        levels: number,
      ): { sandboxed: number; bare: number } => ({
        sandboxed: (b.sandboxed - a.sandboxed) / levels,
        bare: (b.bare - a.bare) / levels,
      })
      const upper = perLevel(middle, deep, 120)
      expect(perLevel(shallow, middle, 30), 'calls per level do not depend on depth').toEqual(upper)
      // The fence adds at most one call for each call of the walk: the fresh resolve of its path.
      expect(upper.sandboxed).toBeLessThanOrEqual(2 * upper.bare)
    })
  }
})
