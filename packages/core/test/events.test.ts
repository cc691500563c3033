/**
 * EventedFileSystem: what changed in a store, from any backend, told to listeners — on memory and
 * on the local disk, through the contract and through a sandbox.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { actingAs, currentActor, EventedFileSystem, isFsError, SandboxedFileSystem, type FileSystem, type FsEvent } from '@seamfs/core'

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const STORES: Record<string, () => { fs: FileSystem; outside: (path: string, text: string) => void }> = {
  memory: () => {
    const fs = new MemoryFileSystem({ cwd: '/w' })
    return { fs, outside: (path, text) => fs.volume.writeFileSync(`/w/${path}`, text) }
  },
  local: () => {
    const dir = mkdtempSync(join(tmpdir(), 'seamfs-events-'))
    dirs.push(dir)
    return { fs: new LocalFileSystem({ cwd: dir }), outside: (path, text) => writeFileSync(join(dir, path), text) }
  },
}

/** The events without their clock fields, for comparing. */
const plain = (events: readonly FsEvent[]): unknown[] =>
  events.map(({ at, durationMs, ...rest }) => {
    expect(at).toBeGreaterThan(0)
    expect(durationMs).toBeGreaterThanOrEqual(0)
    return rest
  })

describe.each(Object.keys(STORES))('EventedFileSystem on %s', (kind) => {
  const open = (): { fs: EventedFileSystem; events: FsEvent[]; outside: (path: string, text: string) => void } => {
    const { fs: inner, outside } = STORES[kind]!()
    const fs = new EventedFileSystem(inner)
    const events: FsEvent[] = []
    fs.on((e) => events.push(e))
    return { fs, events, outside }
  }

  it('a write, an edit, a stale edit, a move, a directory and a remove: one event each, with versions and sizes', async () => {
    const { fs, events } = open()
    const a = await fs.resolve('a.txt')
    const created = await fs.writeText(a, 'one\n')
    const updated = await fs.writeText(a, 'one\ntwo\n', { expected: { kind: 'replaceIfVersion', version: created.version } })
    const edited = await fs.editText(a, { oldString: 'two', newString: 'TWO!', replaceAll: false })
    const stale = await fs
      .editText(a, { oldString: 'one', newString: '1', replaceAll: false }, { expected: { version: created.version } })
      .catch((err: unknown) => err)
    expect(isFsError(stale, 'FS_STALE_VERSION')).toBe(true)
    const b = await fs.resolve('d/b.txt')
    const moved = await fs.rename(a, b)
    const made = await fs.createDirectory(await fs.resolve('e'))
    expect(made.created).toBe(true)
    await fs.createDirectory(await fs.resolve('e'))
    await fs.remove(b, { expected: { version: moved.version } })
    const target = (t: { displayPath: string; targetKey: string }): unknown => ({ path: t.displayPath, key: t.targetKey })
    const e = await fs.resolve('e')
    expect(plain(events)).toEqual([
      { verb: 'write', target: target(a), kind: 'create', type: 'file', versionAfter: created.version, bytes: 4 },
      { verb: 'write', target: target(a), kind: 'update', type: 'file', versionBefore: created.version, versionAfter: updated.version, bytes: 8 },
      { verb: 'edit', target: target(a), kind: 'update', type: 'file', versionAfter: edited.version, bytes: 9 },
      { verb: 'edit', target: target(a), kind: 'failed', code: 'FS_STALE_VERSION', indeterminate: false },
      { verb: 'rename', target: target(a), kind: 'rename', type: 'file', to: target(b), replaced: false, versionAfter: moved.version },
      { verb: 'create directory', target: target(e), kind: 'create directory', type: 'directory' },
      // The second createDirectory changed nothing: no event.
      { verb: 'remove', target: target(b), kind: 'remove', type: 'file', entries: 1, versionBefore: moved.version },
    ])
    // An event is told before the caller hears: the last one was there when remove resolved.
    expect(events.at(-1)?.verb).toBe('remove')
  })

  it('writeBytes is a write; a failed write (a directory in the way) is a failure event, and nothing else', async () => {
    const { fs, events } = open()
    await fs.createDirectory(await fs.resolve('dir'))
    events.length = 0
    await fs.writeBytes(await fs.resolve('bin'), new Uint8Array([0, 1, 2]))
    await expect(fs.writeText(await fs.resolve('dir'), 'x')).rejects.toMatchObject({ code: 'FS_NOT_REGULAR_FILE' })
    expect(plain(events).map((e) => (e as { kind: string }).kind)).toEqual(['create', 'failed'])
    expect(events[0]).toMatchObject({ bytes: 3 })
    expect(events[1]).toMatchObject({ verb: 'write', code: 'FS_NOT_REGULAR_FILE' })
  })

  it('through a sandbox, its refusals are failure events with FS_SANDBOX_DENIED, and nothing is written', async () => {
    const { fs: inner } = STORES[kind]!()
    const inside = await inner.resolve('.')
    await inner.createDirectory(await inner.resolve('ws'))
    const fs = new EventedFileSystem(new SandboxedFileSystem(inner, { mode: 'workspace-write', workspaceRoot: `${inside.displayPath}/ws` }))
    const events: FsEvent[] = []
    fs.on((e) => events.push(e))
    await expect(fs.writeText(await inner.resolve('out.txt'), 'x')).rejects.toMatchObject({ code: 'FS_SANDBOX_DENIED' })
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ kind: 'failed', verb: 'write', code: 'FS_SANDBOX_DENIED' })
    expect(await inner.stat(await inner.resolve('out.txt'))).toBeUndefined()
  })

  it('moves a fence refuses before the store (into a read-only fence, onto itself) are failure events too', async () => {
    const { fs: inner } = STORES[kind]!()
    await inner.writeText(await inner.resolve('a.txt'), 'x')
    const fs = new EventedFileSystem(new SandboxedFileSystem(inner, { mode: 'read-only', workspaceRoot: '.' }))
    const events: FsEvent[] = []
    fs.on((e) => events.push(e))
    const a = await fs.resolve('a.txt')
    await expect(fs.rename(a, await fs.resolve('b.txt'))).rejects.toMatchObject({ code: 'FS_SANDBOX_DENIED' })
    await expect(fs.rename(a, a)).rejects.toMatchObject({ code: 'FS_SANDBOX_DENIED' })
    expect(events.map((e) => [e.kind, e.verb, e.kind === 'failed' ? e.code : undefined])).toEqual([
      ['failed', 'rename', 'FS_SANDBOX_DENIED'],
      ['failed', 'rename', 'FS_SANDBOX_DENIED'],
    ])
    expect(events[0]?.to?.path).toMatch(/b\.txt$/)
  })

  it('the actor a call runs as is named, also across awaits; a call without one names none', async () => {
    const { fs, events } = open()
    await actingAs('agent-7', async () => {
      await new Promise((resolve) => setTimeout(resolve, 1))
      expect(currentActor()).toBe('agent-7')
      await fs.writeText(await fs.resolve('a.txt'), 'x')
    })
    // Two calls at once, one as a session object and one as nobody: each event names its own.
    const session = {}
    await Promise.all([actingAs(session, async () => fs.writeText(await fs.resolve('b.txt'), 'y')), fs.writeText(await fs.resolve('c.txt'), 'z')])
    expect(events.find((e) => e.target.path.endsWith('a.txt'))?.actor).toBe('agent-7')
    expect(events.find((e) => e.target.path.endsWith('b.txt'))?.actor).toBe(session)
    expect(events.find((e) => e.target.path.endsWith('c.txt'))).not.toHaveProperty('actor')
  })

  it('a listener that throws does not fail the operation; its error is reported; removing a listener stops its events', async () => {
    const { fs: inner } = STORES[kind]!()
    const reported: unknown[] = []
    const fs = new EventedFileSystem(inner, { onListenerError: (err) => reported.push(err) })
    const off = fs.on(() => {
      throw new Error('listener bug')
    })
    const seen: FsEvent[] = []
    const offSeen = fs.on((e) => seen.push(e))
    await fs.writeText(await fs.resolve('a.txt'), 'x')
    expect(await fs.readText(await fs.resolve('a.txt'))).toBe('x')
    expect(reported).toHaveLength(1)
    expect(seen).toHaveLength(1)
    off()
    offSeen()
    expect(fs.listenerCount).toBe(0)
    await fs.writeText(await fs.resolve('a.txt'), 'y')
    expect(seen).toHaveLength(1)
  })

  it('a change made behind the layer is no event: it tells what went through it', async () => {
    const { fs, events, outside } = open()
    await fs.writeText(await fs.resolve('a.txt'), 'x')
    outside('a.txt', 'theirs')
    expect(events).toHaveLength(1)
    expect(await fs.readText(await fs.resolve('a.txt'))).toBe('theirs')
  })
})
