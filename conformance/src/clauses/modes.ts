import { expect } from 'vitest'
import type { Kit } from '../kit.js'

/** Mode bits survive every mutation of an existing file (where the store has them). */
export function modeClauses(kit: Kit): void {
  kit.group('permissions', { caps: ['permissions'], hooks: ['chmod', 'mode'] }, () => {
    for (const mode of [0o640, 0o755]) {
      kit.test(`an edit and a write keep the file's mode bits (${mode.toString(8)})`, async (env) => {
        await env.write('m.txt', 'one two')
        await env.chmod('m.txt', mode)
        await env.fs.editText(await env.resolve('m.txt'), { oldString: 'one', newString: 'uno', replaceAll: false })
        expect((await env.mode('m.txt')).toString(8), 'after an edit').toBe(mode.toString(8))
        await env.write('m.txt', 'three')
        expect((await env.mode('m.txt')).toString(8), 'after a write').toBe(mode.toString(8))
        expect(await env.read('m.txt')).toBe('three')
      })
    }
  })
}
