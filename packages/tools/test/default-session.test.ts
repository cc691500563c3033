/**
 * Sessions that cannot be forgotten: a tools instance has a default session,
 * used by every call whose context names none, so `execute(args)` read → edit
 * works with a policy. Each createFileTools call has its own; an explicit
 * session still wins.
 */
import { describe, expect, it } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileTools, ObservationPolicy, type FileTool } from '@seamfs/tools'

const UNREAD = 'Error: edit requires reading "/w/a.txt" first — read the file, then retry'

function byName(tools: FileTool[]): Record<string, FileTool> {
  return Object.fromEntries(tools.map((t) => [t.name, t]))
}

function setup(): { fs: MemoryFileSystem; policy: ObservationPolicy; make: () => Record<string, FileTool> } {
  const fs = new MemoryFileSystem({ cwd: '/w', files: { 'a.txt': 'one\ntwo\n' } })
  const policy = new ObservationPolicy()
  return { fs, policy, make: () => byName(createFileTools({ fs, policy })) }
}

const peek = (fs: MemoryFileSystem): string => String(fs.volume.readFileSync('/w/a.txt', 'utf8'))

describe('the default session of a tools instance', () => {
  it('read → edit → write with no context at all succeeds', async () => {
    const { fs, make } = setup()
    const t = make()
    expect((await t['read']!.execute({ file_path: 'a.txt' })).isError).toBe(false)
    const edit = await t['edit']!.execute({ file_path: 'a.txt', old_string: 'two', new_string: 'TWO' })
    expect(edit.isError).toBe(false)
    expect(edit.text).toMatch(/^The file \/w\/a\.txt has been updated successfully\.\n\n@@ /)
    // the edit recorded the version it produced: the overwrite needs no re-read
    expect((await t['write']!.execute({ file_path: 'a.txt', content: 'three\n' }, {})).isError).toBe(false)
    expect(peek(fs)).toBe('three\n')
  })

  it('still guards: an edit before any read is refused, and so is one after a change behind its back', async () => {
    const { fs, make } = setup()
    const t = make()
    expect(await t['edit']!.execute({ file_path: 'a.txt', old_string: 'two', new_string: 'TWO' })).toEqual({
      isError: true,
      text: UNREAD,
      code: 'FS_NOT_OBSERVED',
    })
    await t['read']!.execute({ file_path: 'a.txt' })
    fs.volume.writeFileSync('/w/a.txt', 'one\ntwo\nthree\n')
    expect((await t['edit']!.execute({ file_path: 'a.txt', old_string: 'two', new_string: 'TWO' })).code).toBe('FS_STALE_VERSION')
    expect(peek(fs)).toBe('one\ntwo\nthree\n')
  })

  it('two instances over one policy do not share observations', async () => {
    const { fs, make } = setup()
    const first = make()
    const second = make()
    await first['read']!.execute({ file_path: 'a.txt' })
    expect(await second['edit']!.execute({ file_path: 'a.txt', old_string: 'two', new_string: 'TWO' })).toMatchObject({ text: UNREAD })
    expect((await second['write']!.execute({ file_path: 'a.txt', content: 'x' })).code).toBe('FS_NOT_OBSERVED')
    expect(peek(fs)).toBe('one\ntwo\n')
    expect((await first['edit']!.execute({ file_path: 'a.txt', old_string: 'two', new_string: 'TWO' })).isError).toBe(false)
    expect(peek(fs)).toBe('one\nTWO\n')
  })

  it('an explicit session wins, and is separate from the default one and from other sessions', async () => {
    const { policy, make } = setup()
    const t = make()
    const agent = { id: 'agent-1' }
    await t['read']!.execute({ file_path: 'a.txt' }, { session: agent })
    // the default session saw nothing, nor did another explicit one
    expect(await t['edit']!.execute({ file_path: 'a.txt', old_string: 'two', new_string: 'TWO' })).toMatchObject({ text: UNREAD })
    expect(await t['edit']!.execute({ file_path: 'a.txt', old_string: 'two', new_string: 'TWO' }, { session: 'agent-2' })).toMatchObject({ text: UNREAD })
    expect((await t['edit']!.execute({ file_path: 'a.txt', old_string: 'two', new_string: 'TWO' }, { session: agent })).isError).toBe(false)
    // and the default session's reads do not count for an explicit one
    await t['read']!.execute({ file_path: 'a.txt' }, { session: undefined })
    expect(await t['edit']!.execute({ file_path: 'a.txt', old_string: 'one', new_string: 'ONE' }, { session: 'agent-2' })).toMatchObject({ text: UNREAD })
    expect(policy.snapshot('agent-2').entries).toEqual([])
    expect(policy.snapshot(agent).entries).toHaveLength(1)
  })

  it('without a policy nothing is recorded and nothing is guarded', async () => {
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'a.txt': 'one\ntwo\n' } })
    const t = byName(createFileTools({ fs }))
    expect((await t['edit']!.execute({ file_path: 'a.txt', old_string: 'two', new_string: 'TWO' })).isError).toBe(false)
    expect(peek(fs)).toBe('one\nTWO\n')
  })
})
