/**
 * Change events of an EventedFileSystem under the tools: each names the session of the tool call
 * that made it (issue 35: an event says which agent run made it).
 */
import { describe, expect, it } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { EventedFileSystem, type FsEvent } from '@seamfs/core'
import { createFileToolsByName, ObservationPolicy } from '@seamfs/tools'

describe('change events through the tools', () => {
  it('read → edit → stale edit → move: the changes and the refusal, each naming the session of its call', async () => {
    const store = new MemoryFileSystem({ cwd: '/w', files: { 'a.txt': 'one\n' } })
    const fs = new EventedFileSystem(store)
    const events: FsEvent[] = []
    fs.on((e) => events.push(e))
    const tools = createFileToolsByName({ fs, policy: new ObservationPolicy() })
    const alice = { agent: 'alice' }
    expect((await tools.read.execute({ file_path: 'a.txt' }, { session: alice })).isError).toBe(false)
    expect((await tools.edit.execute({ file_path: 'a.txt', old_string: 'one', new_string: 'two' }, { session: alice })).isError).toBe(false)
    // Changed behind alice's back: her next edit is refused by its guard, in the store.
    store.volume.writeFileSync('/w/a.txt', 'theirs\n')
    const stale = await tools.edit.execute({ file_path: 'a.txt', old_string: 'theirs', new_string: 'mine' }, { session: alice })
    expect(stale.isError).toBe(true)
    expect((await tools.read.execute({ file_path: 'a.txt' }, { session: 'bob' })).isError).toBe(false)
    expect((await tools.move!.execute({ source_path: 'a.txt', destination_path: 'b.txt' }, { session: 'bob' })).isError).toBe(false)
    // The stale edit reached the store under the version alice read, and the store refused it.
    expect(events.map((e) => [e.kind, e.verb, e.actor, e.kind === 'failed' ? e.code : undefined])).toEqual([
      ['update', 'edit', alice, undefined],
      ['failed', 'edit', alice, 'FS_STALE_VERSION'],
      ['rename', 'rename', 'bob', undefined],
    ])
    // A call without a session runs as the tool set's own.
    await tools.write.execute({ file_path: 'new.txt', content: 'x' })
    expect(events.at(-1)?.actor).toBeTypeOf('object')
    expect(events.at(-1)?.actor).not.toBe(alice)
  })
})
