/**
 * Review of the speculative read fence (`#reading`) and the new `openFile` / `listTree`: a second
 * process swaps a directory (and a file) inside the workspace for a link to a directory outside,
 * bounded in swaps and time, while the sandbox's public methods and the tools read through the
 * swapped path. No byte, name or size of the outside tree may reach the caller.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { SandboxedFileSystem, type FileSystem } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { createFileTools, type FileTool } from '@seamfs/tools'

const base = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-review-race-')))
afterAll(() => rmSync(base, { recursive: true, force: true }))

const SECRET = 'SECRET-OUTSIDE-CONTENT-0123456789-abcdefghijklmnop\n'
const SECRET_NAME = 'secretname'
const INSIDE = 'inside-content\n'

/** A second process: swaps `ws/d` (a directory) and `ws/file.txt` (a file) for links to `out` and back. */
const RACER = `
const fs = require('node:fs')
const [ws, out, maxMs, maxSwaps] = process.argv.slice(1)
const end = Date.now() + Number(maxMs)
let n = 0
for (; n < Number(maxSwaps) && Date.now() < end; n++) {
  try {
    fs.renameSync(ws + '/d', ws + '/d-real')
    fs.renameSync(ws + '/d-link', ws + '/d')
    fs.symlinkSync(out + '/f', ws + '/.f-link')
    fs.renameSync(ws + '/.f-link', ws + '/file.txt')
    fs.renameSync(ws + '/d', ws + '/d-link')
    fs.renameSync(ws + '/d-real', ws + '/d')
    fs.writeFileSync(ws + '/.f-real', ${JSON.stringify(INSIDE)})
    fs.renameSync(ws + '/.f-real', ws + '/file.txt')
  } catch (e) { process.stderr.write(String(e) + '\\n'); break }
}
process.stdout.write(String(n))
`

function setup(name: string): { ws: string; out: string } {
  const root = join(base, name)
  const ws = join(root, 'ws')
  const out = join(root, 'out')
  mkdirSync(join(out, 'sub'), { recursive: true })
  writeFileSync(join(out, 'f'), SECRET)
  writeFileSync(join(out, `${SECRET_NAME}.txt`), SECRET)
  writeFileSync(join(out, 'sub', 'g'), SECRET)
  mkdirSync(join(ws, 'd', 'sub'), { recursive: true })
  writeFileSync(join(ws, 'd', 'f'), INSIDE)
  writeFileSync(join(ws, 'd', 'sub', 'g'), INSIDE)
  writeFileSync(join(ws, 'file.txt'), INSIDE)
  symlinkSync(out, join(ws, 'd-link'))
  return { ws, out }
}

function race(ws: string, out: string, maxMs: number, maxSwaps: number): { done: Promise<number>; running: () => boolean } {
  let running = true
  const child = spawn(process.execPath, ['-e', RACER, ws, out, String(maxMs), String(maxSwaps)], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
  const done = new Promise<number>((resolve) => {
    child.on('exit', () => {
      running = false
      resolve(Number(stdout))
    })
  })
  return { done, running: () => running }
}

/** Outside content or name, or the outside file's size (`"size":51`, or inside a local version `dev:ino:size:...`). */
const leaks = (text: string): boolean =>
  text.includes('SECRET') ||
  text.includes(SECRET_NAME) ||
  text.includes(`"size":${SECRET.length}`) ||
  text.includes(`:${SECRET.length}:`) ||
  text.includes(`${SECRET.length} bytes`)

async function drain(it: AsyncIterable<Uint8Array>): Promise<string> {
  const parts: Buffer[] = []
  for await (const c of it) parts.push(Buffer.from(c))
  return Buffer.concat(parts).toString('utf8')
}

describe('review: a directory or file swapped for a link to outside during reads (local disk)', () => {
  it('public methods of a SandboxedFileSystem never hand out outside bytes, names or sizes', async () => {
    const { ws, out } = setup('public')
    const fs: FileSystem = new SandboxedFileSystem(new LocalFileSystem({ cwd: ws }), { mode: 'workspace-write', workspaceRoot: ws })
    const racer = race(ws, out, 8_000, 100_000)
    const seen: string[] = []
    let served = 0
    const attempt = async (what: string, op: () => Promise<string>): Promise<void> => {
      try {
        const text = await op()
        served++
        if (leaks(text)) seen.push(`${what}: ${text.slice(0, 120)}`)
      } catch {
        // refused, missing, raced: all fine
      }
    }
    for (let i = 0; i < 40_000 && racer.running(); i++) {
      await attempt('readText d/f', async () => fs.readText(await fs.resolve('d/f')))
      await attempt('readText file.txt', async () => fs.readText(await fs.resolve('file.txt')))
      await attempt('openFile d/f', async () => {
        const f = await fs.openFile(await fs.resolve('d/f'))
        return `${f.info.size}:${await drain(f.chunks)}`
      })
      await attempt('openFile file.txt', async () => {
        const f = await fs.openFile(await fs.resolve('file.txt'))
        return `${f.info.size}:${await drain(f.chunks)}`
      })
      await attempt('streamBytes d/f', async () => drain(await fs.streamBytes(await fs.resolve('d/f'))))
      await attempt('stat d/f', async () => JSON.stringify(await fs.stat(await fs.resolve('d/f'))))
      await attempt('listDir d', async () => JSON.stringify(await fs.listDir(await fs.resolve('d'))))
      await attempt('listTree d', async () => {
        const pages: unknown[] = []
        for await (const page of await fs.listTree(await fs.resolve('d'))) pages.push(page)
        return JSON.stringify(pages)
      })
    }
    const swaps = await racer.done
    expect(swaps).toBeGreaterThan(100)
    expect(served).toBeGreaterThan(100)
    expect(seen).toEqual([])
  }, 30_000)

  it('the tools (read, list, glob, grep) never show outside bytes, names or sizes', async () => {
    const { ws, out } = setup('tools')
    const tools = Object.fromEntries(createFileTools({ fs: new LocalFileSystem({ cwd: ws }), cwd: ws }).map((t) => [t.name, t])) as Record<string, FileTool>
    const racer = race(ws, out, 8_000, 100_000)
    const seen: string[] = []
    let served = 0
    const call = async (name: string, args: unknown): Promise<void> => {
      const result = await (tools[name] as FileTool).execute(args, {})
      const text = JSON.stringify(result)
      if (!('isError' in result && result.isError === true)) served++
      // grep's own pattern is echoed; only what the store handed back counts
      const shown = name === 'grep' ? text.replaceAll('"SECRET', '"') : text
      if (leaks(shown)) seen.push(`${name} ${JSON.stringify(args)}: ${text.slice(0, 300)}`)
    }
    for (let i = 0; i < 20_000 && racer.running(); i++) {
      await call('read', { path: 'd/f' })
      await call('read', { path: 'file.txt' })
      await call('list', { path: 'd' })
      await call('glob', { pattern: '**/*' })
      await call('grep', { pattern: 'SECRET' })
    }
    const swaps = await racer.done
    expect(swaps).toBeGreaterThan(100)
    expect(served).toBeGreaterThan(100)
    expect(seen).toEqual([])
  }, 30_000)
})

describe('review: listTree, glob and grep with links leading out (no race)', () => {
  it.each(['local', 'memory'] as const)('%s: outside entries are `other` without metadata, never entered, never searched', async (kind) => {
    let inner: FileSystem
    let ws: string
    if (kind === 'local') {
      const made = setup('static')
      ws = made.ws
      symlinkSync(join(made.out, 'f'), join(ws, 'd', 'file-link'))
      symlinkSync(made.out, join(ws, 'd', 'dir-link'))
      inner = new LocalFileSystem({ cwd: ws })
    } else {
      ws = '/w'
      const mem = new (await import('@seamfs/backend-memory')).MemoryFileSystem({
        cwd: ws,
        files: { 'd/f': INSIDE, 'd/sub/g': INSIDE, 'd/file-link': { symlink: '/out/f' }, 'd/dir-link': { symlink: '/out' } },
      })
      mem.volume.mkdirSync('/out/sub', { recursive: true })
      mem.volume.writeFileSync('/out/f', SECRET)
      mem.volume.writeFileSync(`/out/${SECRET_NAME}.txt`, SECRET)
      mem.volume.writeFileSync('/out/sub/g', SECRET)
      inner = mem
    }
    const fs = new SandboxedFileSystem(inner, { mode: 'workspace-write', workspaceRoot: ws })
    const pages: unknown[] = []
    for await (const page of await fs.listTree(await fs.resolve('d'))) pages.push(page)
    const text = JSON.stringify(pages)
    expect(leaks(text)).toBe(false)
    const entries = pages.flat() as { name: string; type: string; size?: number; link?: boolean }[]
    expect(entries.find((e) => e.name === 'file-link')).toMatchObject({ type: 'other' })
    expect(entries.find((e) => e.name === 'dir-link')).toMatchObject({ type: 'other' })
    expect(entries.find((e) => e.name === 'dir-link')).not.toHaveProperty('version')
    const tools = Object.fromEntries(createFileTools({ fs: inner, cwd: ws }).map((t) => [t.name, t])) as Record<string, FileTool>
    for (const [name, args] of [
      ['glob', { pattern: '**/*' }],
      ['grep', { pattern: 'SECRET' }],
      ['list', { path: 'd' }],
      ['read', { path: 'd/file-link' }],
      ['read', { path: 'd/dir-link/f' }],
    ] as const) {
      const result = await (tools[name] as FileTool).execute(args, {})
      const shown = JSON.stringify(result).replaceAll('"SECRET', '"')
      expect(leaks(shown), `${name} ${JSON.stringify(args)}: ${shown.slice(0, 300)}`).toBe(false)
    }
  })
})
