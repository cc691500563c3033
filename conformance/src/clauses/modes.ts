import { expect } from 'vitest'
import { codeOf, type Env, type Kit } from '../kit.js'

const edit = { oldString: 'one', newString: 'uno', replaceAll: false }

/** What a refused mutation must leave as it was: content, mode bits, version and listing. */
async function state(env: Env, path: string): Promise<{ content: string; mode: string; version: unknown; names: string[] }> {
  const target = await env.resolve(path)
  return { content: await env.read(path), mode: (await env.mode(path)).toString(8), version: (await env.fs.stat(target))?.version, names: await env.names() }
}

/**
 * Mode bits survive every mutation of an existing file, and a file whose mode grants write
 * permission to no one is refused as an editor refuses it (where the store has modes).
 */
export function modeClauses(kit: Kit): void {
  kit.group('permissions', { caps: ['permissions'], hooks: ['chmod', 'mode'] }, () => {
    for (const mode of [0o640, 0o755]) {
      kit.testIf(`an edit and a write keep the file's mode bits (${mode.toString(8)})`, { writes: true }, async (env) => {
        await env.write('m.txt', 'one two')
        await env.chmod('m.txt', mode)
        await env.fs.editText(await env.resolve('m.txt'), { oldString: 'one', newString: 'uno', replaceAll: false })
        expect((await env.mode('m.txt')).toString(8), 'after an edit').toBe(mode.toString(8))
        await env.write('m.txt', 'three')
        expect((await env.mode('m.txt')).toString(8), 'after a write').toBe(mode.toString(8))
        expect(await env.read('m.txt')).toBe('three')
      })
    }

    for (const mode of [0o444, 0o400, 0o555]) {
      kit.test(`a write or an edit of a file without write permission (${mode.toString(8)}) is FS_PERMISSION_DENIED and changes nothing`, async (env) => {
        await env.write('ro.txt', 'one two')
        await env.chmod('ro.txt', mode)
        const target = await env.resolve('ro.txt')
        const before = await state(env, 'ro.txt')
        const version = (await env.fs.stat(target))?.version
        if (version === undefined) throw new Error('stat of the file just written is undefined')
        expect(await codeOf(env.fs.writeText(target, 'three')), 'an unguarded write').toBe('FS_PERMISSION_DENIED')
        expect(await codeOf(env.fs.writeText(target, 'three', { expected: { kind: 'replaceIfVersion', version } })), 'a guarded write').toBe(
          'FS_PERMISSION_DENIED',
        )
        expect(await codeOf(env.fs.editText(target, edit)), 'an unguarded edit').toBe('FS_PERMISSION_DENIED')
        expect(await codeOf(env.fs.editText(target, edit, { expected: { version } })), 'a guarded edit').toBe('FS_PERMISSION_DENIED')
        expect(await state(env, 'ro.txt'), 'content, mode, version and listing after the refusals').toEqual(before)
        // The refusal follows the mode, not a state the file is stuck in: writable again, it is written.
        await env.chmod('ro.txt', 0o644)
        await env.write('ro.txt', 'three')
        expect(await env.read('ro.txt')).toBe('three')
      })
    }

    kit.testIf('createIfAbsent on a file without write permission (444) stays FS_NOT_OBSERVED and changes nothing', { writes: true }, async (env) => {
      await env.write('ro.txt', 'one two')
      await env.chmod('ro.txt', 0o444)
      const before = await state(env, 'ro.txt')
      expect(await codeOf(env.fs.writeText(await env.resolve('ro.txt'), 'x', { expected: { kind: 'createIfAbsent' } }))).toBe('FS_NOT_OBSERVED')
      expect(await state(env, 'ro.txt')).toEqual(before)
    })
  })
}
