import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages'
import { fakeModel } from '@langchain/core/testing'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { ObservationPolicy, type FileSystem } from '@seamfs/core'
import { createDeepAgent } from 'deepagents'
import { afterEach, describe, expect, it } from 'vitest'
import { createSeamfsBackend } from '../src/index.js'

/** A store with `notes.md`, a way to change it behind the agent's back (synchronously: a fake model's reply is), and its text. */
interface Store {
  readonly fs: FileSystem
  readonly root: string
  change(text: string): void
  notes(): string
  dispose(): void
}

function memoryStore(): Store {
  const fs = new MemoryFileSystem({ files: { 'notes.md': 'hello world\nsecond line\n' } })
  return {
    fs,
    root: '.',
    change: (text) => fs.volume.writeFileSync('/notes.md', text),
    notes: () => String(fs.volume.readFileSync('/notes.md', 'utf8')),
    dispose: () => undefined,
  }
}

function localStore(): Store {
  const dir = mkdtempSync(join(tmpdir(), 'seamfs-deepagents-'))
  writeFileSync(join(dir, 'notes.md'), 'hello world\nsecond line\n')
  const fs = new LocalFileSystem({ cwd: dir })
  return {
    fs,
    root: dir,
    change: (text) => writeFileSync(join(dir, 'notes.md'), text),
    notes: () => readFileSync(join(dir, 'notes.md'), 'utf8'),
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  }
}

function toolMessages(messages: BaseMessage[]): Array<{ name: string | undefined; content: unknown }> {
  return messages.filter((m) => ToolMessage.isInstance(m)).map((m) => ({ name: m.name, content: m.content }))
}

const call = (name: string, args: Record<string, unknown>, id: string): AIMessage => new AIMessage({ content: '', tool_calls: [{ name, args, id }] })

const stores: Store[] = []
afterEach(() => {
  for (const s of stores.splice(0)) s.dispose()
})

describe.each([
  ['MemoryFileSystem', memoryStore],
  ['LocalFileSystem', localStore],
])('createDeepAgent over a seamfs backend (%s)', (_name, make) => {
  it('read → edit → stale edit: the stale edit is refused with FS_STALE_VERSION and the file keeps the other writer’s text', async () => {
    const store = make()
    stores.push(store)
    const backend = createSeamfsBackend({ fs: store.fs, root: store.root, policy: new ObservationPolicy() })
    const model = fakeModel()
      .respond(call('read_file', { file_path: '/notes.md' }, 'c1'))
      .respond(call('edit_file', { file_path: '/notes.md', old_string: 'hello', new_string: 'hi' }, 'c2'))
      .respond(() => {
        store.change('hi world\nchanged behind the back\n')
        return call('edit_file', { file_path: '/notes.md', old_string: 'world', new_string: 'there' }, 'c3')
      })
      .respond(call('write_file', { file_path: '/notes.md', content: 'overwritten\n' }, 'c4'))
      .respond(call('read_file', { file_path: '/notes.md', offset: 1, limit: 1 }, 'c5'))
      .respond(call('edit_file', { file_path: '/notes.md', old_string: 'world', new_string: 'there' }, 'c6'))
      .respond(new AIMessage('done'))
    const agent = createDeepAgent({ model, backend })
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'fix the notes' }] })
    expect(toolMessages(result.messages)).toEqual([
      { name: 'read_file', content: [{ type: 'text', text: '@@ lines 1-2 of 2 @@\nhello world\nsecond line' }] },
      { name: 'edit_file', content: "Successfully replaced 1 occurrence(s) in '/notes.md'" },
      { name: 'edit_file', content: 'Error: cannot edit "/notes.md": file changed since it was read — re-read the file, then retry' },
      { name: 'write_file', content: 'Error: cannot write "/notes.md": file changed since it was read — re-read the file, then retry' },
      { name: 'read_file', content: [{ type: 'text', text: '@@ lines 2-2 of 2 @@\nchanged behind the back' }] },
      { name: 'edit_file', content: "Successfully replaced 1 occurrence(s) in '/notes.md'" },
    ])
    expect(store.notes()).toBe('hi there\nchanged behind the back\n')
  })

  it("sessions follow the LangGraph thread: one thread's read does not let another thread edit", async () => {
    const store = make()
    stores.push(store)
    const backend = createSeamfsBackend({ fs: store.fs, root: store.root })
    const model = fakeModel()
      .respond(call('read_file', { file_path: '/notes.md' }, 'a1'))
      .respond(new AIMessage('read'))
      .respond(call('edit_file', { file_path: '/notes.md', old_string: 'hello', new_string: 'hi' }, 'b1'))
      .respond(new AIMessage('refused'))
      .respond(call('edit_file', { file_path: '/notes.md', old_string: 'hello', new_string: 'hi' }, 'a2'))
      .respond(new AIMessage('edited'))
    const agent = createDeepAgent({ model, backend })
    const run = async (thread: string): Promise<unknown[]> => {
      const result = await agent.invoke({ messages: [{ role: 'user', content: 'go' }] }, { configurable: { thread_id: thread } })
      return toolMessages(result.messages).map((m) => m.content)
    }
    expect(await run('a')).toEqual([[{ type: 'text', text: '@@ lines 1-2 of 2 @@\nhello world\nsecond line' }]])
    expect(await run('b')).toEqual(['Error: edit requires reading "/notes.md" first — read the file, then retry'])
    expect(await run('a')).toEqual(["Successfully replaced 1 occurrence(s) in '/notes.md'"])
    expect(store.notes()).toBe('hi world\nsecond line\n')
  })
})
