import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ObservationPolicy, isFsError, type FileSystem, type FsErrorCode, type PolicyOwner } from '@seamfs/core/backend'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'

/** A backend plus a way to change a file behind its back. */
interface World {
  readonly fs: FileSystem
  externalWrite(path: string, text: string): void
  externalDelete(path: string): void
  dispose(): void
}

const worlds: Record<string, () => World> = {
  local: () => {
    const root = mkdtempSync(join(tmpdir(), 'seamfs-policy-'))
    return {
      fs: new LocalFileSystem({ cwd: root }),
      externalWrite: (path, text) => writeFileSync(join(root, path), text),
      externalDelete: (path) => unlinkSync(join(root, path)),
      dispose: () => rmSync(root, { recursive: true, force: true }),
    }
  },
  memory: () => {
    const fs = new MemoryFileSystem({ cwd: '/w' })
    return {
      fs,
      externalWrite: (path, text) => fs.volume.writeFileSync(`/w/${path}`, text),
      externalDelete: (path) => fs.volume.unlinkSync(`/w/${path}`),
      dispose: () => undefined,
    }
  },
}

/** What the tools do around each call: ask the policy for the guard, record what was observed. */
class Agent {
  constructor(
    readonly fs: FileSystem,
    readonly policy: ObservationPolicy,
    readonly owner: PolicyOwner,
  ) {}

  async read(path: string): Promise<string> {
    const target = await this.fs.resolve(path)
    const info = await this.fs.stat(target)
    if (info === undefined) {
      this.policy.recordAbsent(this.owner, target)
      throw new Error(`not found: ${path}`)
    }
    const text = await this.fs.readText(target)
    this.policy.recordPresent(this.owner, target, info.version)
    return text
  }

  async write(path: string, content: string): Promise<void> {
    const target = await this.fs.resolve(path)
    const outcome = await this.fs.writeText(target, content, { expected: this.policy.writeIntent(this.owner, target) })
    this.policy.recordPresent(this.owner, target, outcome.version)
  }

  async edit(path: string, oldString: string, newString: string): Promise<void> {
    const target = await this.fs.resolve(path)
    const expected = this.policy.editIntent(this.owner, target)
    const outcome = await this.fs.editText(target, { oldString, newString, replaceAll: false }, { expected })
    this.policy.recordPresent(this.owner, target, outcome.version)
  }
}

async function codeOf(promise: Promise<unknown>): Promise<FsErrorCode | 'ok' | 'other'> {
  try {
    await promise
    return 'ok'
  } catch (err) {
    return isFsError(err) ? err.code : 'other'
  }
}

for (const [name, make] of Object.entries(worlds)) {
  describe(`policy flows on ${name}`, () => {
    let world: World
    afterEach(() => world.dispose())
    const setup = async (files: Record<string, string>): Promise<Agent> => {
      world = make()
      for (const [path, text] of Object.entries(files)) await world.fs.writeText(await world.fs.resolve(path), text)
      return new Agent(world.fs, new ObservationPolicy(), { session: name })
    }

    it('a blind overwrite is refused; a new file needs no read; a read authorizes the overwrite', async () => {
      const agent = await setup({ 'a.txt': 'original' })
      expect(await codeOf(agent.write('a.txt', 'blind'))).toBe('FS_NOT_OBSERVED')
      expect(await agent.read('a.txt')).toBe('original')
      await agent.write('new.txt', 'fresh')
      await agent.write('a.txt', 'informed')
      expect(await world.fs.readText(await world.fs.resolve('a.txt'))).toBe('informed')
    })

    it('read → external change → write is stale → re-read → write succeeds', async () => {
      const agent = await setup({ 'a.txt': 'v1' })
      await agent.read('a.txt')
      world.externalWrite('a.txt', 'v2')
      expect(await codeOf(agent.write('a.txt', 'mine'))).toBe('FS_STALE_VERSION')
      expect(await codeOf(agent.edit('a.txt', 'v2', 'mine'))).toBe('FS_STALE_VERSION')
      expect(await agent.read('a.txt')).toBe('v2')
      await agent.write('a.txt', 'mine')
      expect(await world.fs.readText(await world.fs.resolve('a.txt'))).toBe('mine')
    })

    it('an edit needs a read first; after its own write or edit no re-read is needed', async () => {
      const agent = await setup({ 'a.txt': 'one two' })
      expect(await codeOf(agent.edit('a.txt', 'one', '1'))).toBe('FS_NOT_OBSERVED')
      await agent.read('a.txt')
      await agent.edit('a.txt', 'one', '1')
      await agent.edit('a.txt', 'two', '2')
      await agent.write('a.txt', 'rewritten')
      await agent.edit('a.txt', 'rewritten', 'edited')
      expect(await world.fs.readText(await world.fs.resolve('a.txt'))).toBe('edited')
    })

    it('two concurrent edits by one owner: one wins, the other is stale', async () => {
      const agent = await setup({ 'a.txt': 'alpha beta' })
      await agent.read('a.txt')
      const results = await Promise.all([codeOf(agent.edit('a.txt', 'alpha', 'A')), codeOf(agent.edit('a.txt', 'beta', 'B'))])
      expect([...results].sort()).toEqual(['FS_STALE_VERSION', 'ok'])
      const text = await world.fs.readText(await world.fs.resolve('a.txt'))
      expect(['A beta', 'alpha B']).toContain(text)
    })

    it('a deleted file: stale, then a re-read records absent, then write creates and edit is not found', async () => {
      const agent = await setup({ 'a.txt': 'here' })
      await agent.read('a.txt')
      world.externalDelete('a.txt')
      expect(await codeOf(agent.write('a.txt', 'x'))).toBe('FS_STALE_VERSION')
      await expect(agent.read('a.txt')).rejects.toThrow('not found')
      expect(await codeOf(agent.edit('a.txt', 'here', 'x'))).toBe('FS_NOT_FOUND')
      await agent.write('a.txt', 'recreated')
      expect(await agent.read('a.txt')).toBe('recreated')
    })

    it('a stale observation recorded last fails closed: the next guarded write is stale, not a lost update', async () => {
      const agent = await setup({ 'a.txt': 'v1' })
      const target = await world.fs.resolve('a.txt')
      const old = (await world.fs.stat(target))?.version
      await agent.read('a.txt')
      world.externalWrite('a.txt', 'v2')
      if (old !== undefined) agent.policy.recordPresent(agent.owner, target, old)
      expect(await codeOf(agent.write('a.txt', 'mine'))).toBe('FS_STALE_VERSION')
      expect(await world.fs.readText(target)).toBe('v2')
    })
  })
}
