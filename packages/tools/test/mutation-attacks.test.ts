/**
 * Attacks on the mutating tools: `delete` and `move` under the read-before-write policy
 * while something else changes the tree between the tool's look and its mutation, the sandbox
 * fence through the tools, and `read` of huge or sparse files that claim to be images.
 */
import { closeSync, ftruncateSync, mkdirSync, mkdtempSync, openSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ObservationPolicy, SandboxedFileSystem, type FsInfo, type FsTarget } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileTools, type FileTool, type ToolResult } from '@seamfs/tools'

const S = { session: 'model' }

/** A memory store where another process acts right after the next `stat` answered (between a tool's look and its call). */
class RacedMemory extends MemoryFileSystem {
  afterStat: (() => void) | undefined
  protected override async statTarget(target: FsTarget): Promise<FsInfo | undefined> {
    const info = await super.statTarget(target)
    const act = this.afterStat
    this.afterStat = undefined
    act?.()
    return info
  }
}

function toolsOf(fs: ConstructorParameters<typeof SandboxedFileSystem>[0], policy?: ObservationPolicy): Record<string, FileTool> {
  return Object.fromEntries(createFileTools({ fs, policy }).map((t) => [t.name, t]))
}

describe('delete and move: the policy holds when the path changes kind between the look and the mutation', () => {
  it('delete of an empty directory swapped for an unread file never deletes that file', async () => {
    const fs = new RacedMemory({ cwd: '/w', files: { 'd/': null } })
    const tools = toolsOf(fs, new ObservationPolicy())
    fs.afterStat = () => {
      fs.volume.rmdirSync('/w/d')
      fs.volume.writeFileSync('/w/d', 'precious, never read\n')
    }
    const result = await tools.delete!.execute({ path: 'd' }, S)
    // The session never saw this file: a blind delete must be refused and the file must stay.
    expect(fs.volume.existsSync('/w/d')).toBe(true)
    expect(result.isError).toBe(true)
  })

  it('move of a directory swapped for an unread file never moves that file without a read', async () => {
    const fs = new RacedMemory({ cwd: '/w', files: { 'd/': null } })
    const tools = toolsOf(fs, new ObservationPolicy())
    fs.afterStat = () => {
      fs.volume.rmdirSync('/w/d')
      fs.volume.writeFileSync('/w/d', 'unread\n')
    }
    const result = await tools.move!.execute({ source_path: 'd', destination_path: 'e' }, S)
    expect(result.isError).toBe(true)
    expect(fs.volume.existsSync('/w/d')).toBe(true)
  })
})

describe('delete and move through the sandbox on the local disk', () => {
  let base: string | undefined
  afterEach(() => {
    if (base !== undefined) rmSync(base, { recursive: true, force: true })
    base = undefined
  })

  it('a link to an outside file is neither deleted through nor moved in; the outside stays', async () => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-adv19-tools-')))
    const [ws, out] = [join(base, 'ws'), join(base, 'out')]
    mkdirSync(ws)
    mkdirSync(out)
    writeFileSync(join(out, 'secret.txt'), 'secret\n')
    writeFileSync(join(ws, 'a.txt'), 'a\n')
    symlinkSync(join(out, 'secret.txt'), join(ws, 'link.txt'))
    symlinkSync(out, join(ws, 'out-dir'))
    const box = new SandboxedFileSystem(new LocalFileSystem({ cwd: ws }), { mode: 'workspace-write', workspaceRoot: ws })
    // Without a policy: nothing stops the tool but the fence.
    const tools = toolsOf(box)
    const results: ToolResult[] = [
      await tools.delete!.execute({ path: 'link.txt' }, S),
      await tools.move!.execute({ source_path: 'link.txt', destination_path: 'mine.txt' }, S),
      await tools.move!.execute({ source_path: 'a.txt', destination_path: 'out-dir/planted.txt' }, S),
      await tools.delete!.execute({ path: 'out-dir' }, S),
      await tools.create_directory!.execute({ path: 'out-dir/new' }, S),
    ]
    expect(results.map((r) => r.code)).toEqual(Array(results.length).fill('FS_SANDBOX_DENIED'))
    expect(readFileSync(join(out, 'secret.txt'), 'utf8')).toBe('secret\n')
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('a\n')
  })
})

describe('read of huge files that claim to be images', () => {
  let base: string | undefined
  afterEach(() => {
    if (base !== undefined) rmSync(base, { recursive: true, force: true })
    base = undefined
  })

  /** A sparse file of `size` bytes starting with `head`. */
  const sparse = (path: string, head: Uint8Array, size: number): void => {
    const fd = openSync(path, 'w')
    try {
      writeSync(fd, head)
      ftruncateSync(fd, size)
    } finally {
      closeSync(fd)
    }
  }
  const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13])

  it('a 2 GiB sparse file with PNG magic is FS_TOO_LARGE at once, under an image name or not', async () => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-adv19-img-')))
    sparse(join(base, 'huge.png'), PNG, 2 ** 31)
    sparse(join(base, 'huge.bin'), PNG, 2 ** 31)
    const tools = toolsOf(new LocalFileSystem({ cwd: base }))
    for (const name of ['huge.png', 'huge.bin']) {
      const started = Date.now()
      const result = await tools.read!.execute({ file_path: name }, S)
      expect(result.code).toBe('FS_TOO_LARGE')
      expect(result.image).toBeUndefined()
      expect(Date.now() - started).toBeLessThan(5000)
    }
  })

  it('a 2 GiB sparse file of zeros named .png is not read whole to find out it is no image', async () => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-adv19-img-')))
    sparse(join(base, 'zeros.png'), new Uint8Array(0), 2 ** 31)
    const tools = toolsOf(new LocalFileSystem({ cwd: base }))
    const started = Date.now()
    const result = await tools.read!.execute({ file_path: 'zeros.png' }, S)
    expect(result.image).toBeUndefined()
    expect(Date.now() - started).toBeLessThan(5000)
  })
})
