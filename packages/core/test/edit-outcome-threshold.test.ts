/**
 * Edit outcomes are plain data up to 16 KiB and lazy enumerable
 * accessors above. Both sides of the threshold, with and without BOM, LF/CRLF/mixed line endings,
 * must report `before` (the file as read) and `after` (what a read returns next), LF-normalized and
 * without BOM, to every reader (property access, spread, JSON, keys).
 */
import { afterEach, expect, it } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'

const lf = (s: string): string => s.replaceAll('\r\n', '\n')
const opened: MemoryFileSystem[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((fs) => fs.close()))
})

it('edit outcomes carry the same texts on both sides of 16 KiB, BOM and CRLF alike', async () => {
  const fs = new MemoryFileSystem({ cwd: '/w' })
  opened.push(fs)
  let n = 0
  for (const bom of [false, true]) {
    for (const eol of ['\n', '\r\n', 'mixed']) {
      for (const size of [16_380, 16_383, 16_384, 16_385, 16_390, 20_000]) {
        for (const grow of [-5, 0, 5]) {
          const line = (i: number): string => `line ${i}${eol === 'mixed' ? (i % 2 === 1 ? '\r\n' : '\n') : eol}`
          let body = ''
          for (let i = 0; body.length < size; i++) body += line(i)
          body = body.slice(0, size - 10) + 'NEEDLE\n'
          const path = `/w/f${n++}.txt`
          fs.volume.writeFileSync(path, (bom ? '\ufeff' : '') + body)
          const t = await fs.resolve(path)
          const newString = grow < 0 ? 'N' : 'N'.repeat(6 + grow) + '\nx'
          const out = await fs.editText(t, { oldString: 'NEEDLE', newString, replaceAll: false })
          const now = await fs.readText(t)
          expect(out.before).toBe(lf(body))
          expect(out.after).toBe(lf(now))
          expect((JSON.parse(JSON.stringify(out)) as { before: string }).before).toBe(lf(body))
          expect({ ...out }.after).toBe(lf(now))
          expect(Object.keys(out).sort()).toEqual(['after', 'before', 'version'])
          expect((await fs.readBytes(t))[0] === 0xef).toBe(bom)
        }
      }
    }
  }
})
