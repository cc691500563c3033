/**
 * Keys that other tools wrote with `.`, `..` or empty segments (`a/../b.txt`, `./c`, `//d`) are
 * not listed: no path reaches them (a path is normalized before it becomes a key), and a listed
 * `..` would show a display path that resolves somewhere else. So a walk (what glob and grep do)
 * never yields a phantom path, also under a sandbox with confined reads.
 */
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import { SandboxedFileSystem, type FileSystem, type FsTarget } from '@seamfs/core'
import { S3FileSystem } from '@seamfs/backend-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshPrefix, purge, rawClient, server, serverWhy } from './support.js'

/** Every path below `root` that a walk through `listDir` reaches, files and directories, as `glob` walks. */
async function walk(fs: FileSystem, root: FsTarget): Promise<string[]> {
  const out: string[] = []
  const visit = async (dir: FsTarget, rel: string, depth: number): Promise<void> => {
    if (depth > 10) throw new Error(`the walk went more than 10 levels deep at "${rel}": a listing loops`)
    for (const entry of await fs.listDir(dir)) {
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`
      out.push(`${path}${entry.type === 'directory' ? '/' : ''}`)
      expect(entry.target.displayPath.split('/').slice(1), `display path of ${path}`).not.toContain('..')
      if (entry.type === 'directory') await visit(entry.target, path, depth + 1)
    }
  }
  await visit(root, '', 0)
  return out
}

describe.skipIf(server === null)(`S3FileSystem: keys with dot segments${server === null ? ` (skipped: ${serverWhy})` : ''}`, () => {
  const bucket = server?.bucket ?? ''
  const prefix = freshPrefix('dots')
  let client: S3Client
  let fs: S3FileSystem

  beforeAll(async () => {
    if (server === null) return
    client = rawClient(server)
    fs = await S3FileSystem.open({ client, bucket, prefix, cwd: '/ws' })
    const keys = {
      'ws/real.txt': 'real',
      'ws/src/a.txt': 'a',
      'ws/a/../b.txt': 'phantom up',
      'ws/./c.txt': 'phantom here',
      'ws//d.txt': 'phantom empty',
      'ws/src/./e.txt': 'phantom in src',
      'ws/src/..': 'file named ..',
      'ws/src/.': 'file named .',
      'ws/x/../../outside.txt': 'phantom outside',
      'ws/y/..': 'only a dot-dot under y',
      'secret.txt': 'outside the workspace',
    }
    for (const [key, body] of Object.entries(keys)) await client.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}${key}`, Body: body }))
  })
  afterAll(async () => {
    if (server === null) return
    await purge(client, bucket, prefix)
    client.destroy()
  })

  it('listings skip `.`, `..` and empty names; a directory holding only such keys lists empty', async () => {
    expect((await fs.listDir(await fs.resolve('.'))).map((e) => `${e.name}:${e.type}`)).toEqual([
      'a:directory',
      'real.txt:file',
      'src:directory',
      'x:directory',
      'y:directory',
    ])
    expect((await fs.listDir(await fs.resolve('src'))).map((e) => e.name)).toEqual(['a.txt'])
    expect(await fs.listDir(await fs.resolve('a'))).toEqual([])
    expect(await fs.listDir(await fs.resolve('y'))).toEqual([])
  })

  it('a walk of the workspace yields only real paths, bare and under a sandbox with confined reads', async () => {
    const expected = ['a/', 'real.txt', 'src/', 'src/a.txt', 'x/', 'y/']
    expect((await walk(fs, await fs.resolve('.'))).sort()).toEqual(expected)
    const sandboxed = new SandboxedFileSystem(fs, { mode: 'workspace-write', workspaceRoot: '/ws' })
    expect((await walk(sandboxed, await sandboxed.resolve('.'))).sort()).toEqual(expected)
    for (const path of await walk(sandboxed, await sandboxed.resolve('.'))) {
      if (!path.endsWith('/')) expect(await sandboxed.readText(await sandboxed.resolve(path))).not.toMatch(/phantom|outside/)
    }
  })

  it('paths that spell the phantoms name the real places they normalize to', async () => {
    expect(await fs.readText(await fs.resolve('a/../real.txt'))).toBe('real')
    expect((await fs.resolve('a/../b.txt')).displayPath).toBe('/ws/b.txt')
    expect(await fs.stat(await fs.resolve('a/../b.txt'))).toBeUndefined()
    expect((await fs.resolve('x/../../secret.txt')).displayPath).toBe('/secret.txt')
  })
})
