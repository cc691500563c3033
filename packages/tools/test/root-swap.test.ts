/**
 * The sandbox's roots are pinned where they first resolved: a workspace root swapped for a link to
 * a directory outside (after the agent began) must not carry the fence along. Before the pin,
 * every check re-resolved the root, so after such a swap writes landed outside and reads returned
 * outside bytes. On the local disk and in memory, through the contract and through the tools.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { isFsError, ObservationPolicy, SandboxedFileSystem, type FileSystem } from '@seamfs/core'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileToolsByName } from '@seamfs/tools'

const SECRET = 'OUTSIDE SECRET'

/** A store with `<top>/ws/a.txt` and `<top>/outside/secret.txt`, and how to swap `ws` for a link to `outside` and to look at `outside`. */
interface Store {
  readonly fs: FileSystem
  readonly top: string
  swapRootForLink(): void
  outside(): Record<string, string>
}

const base = realpathSync(mkdtempSync(join(tmpdir(), 'seamfs-root-swap-')))
afterAll(() => rmSync(base, { recursive: true, force: true }))
let made = 0

function local(): Store {
  const top = join(base, String(made++))
  mkdirSync(join(top, 'ws'), { recursive: true })
  mkdirSync(join(top, 'outside'))
  writeFileSync(join(top, 'ws/a.txt'), 'inside\n')
  writeFileSync(join(top, 'outside/secret.txt'), `${SECRET}\n`)
  return {
    fs: new LocalFileSystem({ cwd: top }),
    top,
    swapRootForLink: () => {
      renameSync(join(top, 'ws'), join(top, 'ws-old'))
      symlinkSync(join(top, 'outside'), join(top, 'ws'))
    },
    outside: () => Object.fromEntries(readdirSync(join(top, 'outside')).map((name) => [name, readFileSync(join(top, 'outside', name), 'utf8')])),
  }
}

function memory(): Store {
  const fs = new MemoryFileSystem({ cwd: '/t', files: { 'ws/a.txt': 'inside\n', 'outside/secret.txt': `${SECRET}\n` } })
  const vol = fs.volume
  return {
    fs,
    top: '/t',
    swapRootForLink: () => {
      vol.renameSync('/t/ws', '/t/ws-old')
      vol.symlinkSync('/t/outside', '/t/ws')
    },
    outside: () =>
      Object.fromEntries((vol.readdirSync('/t/outside') as string[]).map((name) => [name, vol.readFileSync(`/t/outside/${name}`, 'utf8') as string])),
  }
}

/** What `op` ended with: the value's JSON, or the error code. */
async function outcome(op: () => Promise<unknown>): Promise<string> {
  try {
    return JSON.stringify(await op())
  } catch (err) {
    return isFsError(err) ? err.code : String(err)
  }
}

describe.each([
  ['local', local],
  ['memory', memory],
])('a workspace root swapped for a link, on %s', (_name, make) => {
  it('after the first use, nothing the agent does reaches outside', async () => {
    const store = make()
    const ws = `${store.top}/ws`
    const fs = new SandboxedFileSystem(store.fs, { mode: 'workspace-write', workspaceRoot: ws })
    const tools = createFileToolsByName({ fs, cwd: ws, policy: new ObservationPolicy() })
    expect(await fs.readText(await fs.resolve('a.txt'))).toBe('inside\n')
    const before = store.outside()

    store.swapRootForLink()

    const results = {
      writeRelative: await outcome(async () => fs.writeText(await fs.resolve('new.txt'), 'agent\n')),
      writeAbsolute: await outcome(async () => fs.writeText(await fs.resolve(`${ws}/new2.txt`), 'agent\n')),
      overwrite: await outcome(async () => fs.writeText(await fs.resolve('secret.txt'), 'agent\n')),
      edit: await outcome(async () => fs.editText(await fs.resolve('secret.txt'), { oldString: 'OUTSIDE', newString: 'agent', replaceAll: false })),
      read: await outcome(async () => fs.readText(await fs.resolve('secret.txt'))),
      stat: await outcome(async () => fs.stat(await fs.resolve('secret.txt'))),
      list: await outcome(async () => fs.listDir(await fs.resolve('.'))),
      mkdir: await outcome(async () => fs.createDirectory(await fs.resolve('d'))),
      remove: await outcome(async () => fs.remove(await fs.resolve('secret.txt'))),
    }
    for (const [op, result] of Object.entries(results)) expect(result, op).toBe('FS_SANDBOX_DENIED')

    const read = await tools.read.execute({ file_path: 'secret.txt' })
    const grep = await tools.grep.execute({ pattern: 'SECRET' })
    const glob = await tools.glob.execute({ pattern: '**/*' })
    const list = await tools.list.execute({ path: '.' })
    const write = await tools.write.execute({ file_path: 'tool.txt', content: 'agent\n' })
    for (const result of [read, grep, glob, list, write]) {
      expect(result.isError, result.text).toBe(true)
      expect(result.text).not.toContain(SECRET)
    }
    // Names outside are not revealed either (the read's error only repeats the path it was given).
    for (const result of [grep, glob, list]) expect(result.text).not.toContain('secret.txt')
    expect(store.outside()).toEqual(before)
  })

  it('a root not yet resolved is pinned at first use: a sandbox made after the swap follows the link, as configured', async () => {
    const store = make()
    store.swapRootForLink()
    const fs = new SandboxedFileSystem(store.fs, { mode: 'workspace-write', workspaceRoot: `${store.top}/ws` })
    expect(await fs.readText(await fs.resolve('secret.txt'))).toBe(`${SECRET}\n`)
  })

  it('a root that cannot resolve yet (a file on its way) matches nothing, and is tried again at the next check', async () => {
    const store = make()
    const root = `${store.top}/blocker/ws`
    await store.fs.writeText(await store.fs.resolve(`${store.top}/blocker`), 'a file\n')
    const fs = new SandboxedFileSystem(store.fs, { mode: 'workspace-write', workspaceRoot: root })
    expect(await outcome(async () => fs.writeText(await fs.resolve(`${store.top}/ws/x.txt`), 'x\n'))).toBe('FS_SANDBOX_DENIED')
    await store.fs.remove(await store.fs.resolve(`${store.top}/blocker`))
    await store.fs.createDirectory(await store.fs.resolve(root))
    expect(await outcome(async () => (await fs.writeText(await fs.resolve('x.txt'), 'x\n')).operation)).toBe('"create"')
    expect(await outcome(async () => fs.writeText(await fs.resolve(`${store.top}/ws/y.txt`), 'y\n'))).toBe('FS_SANDBOX_DENIED')
  })
})
