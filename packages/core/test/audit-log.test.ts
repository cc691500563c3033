/**
 * AuditLog: one JSON line per change; a writer killed mid-line leaves at most that line cut, ended by
 * the next opener; numbered across reopenings, rotated by size; exactly one line per committed change
 * under load.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { AuditLog, EventedFileSystem, actingAs, type AuditLine } from '@seamfs/core'

const dirs: string[] = []
const dir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'seamfs-audit-'))
  dirs.push(d)
  return d
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const linesOf = (path: string): AuditLine[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as AuditLine)

const parses = (line: string): boolean => {
  try {
    JSON.parse(line)
    return true
  } catch {
    return false
  }
}

describe('AuditLog', () => {
  it('a line per change and per refusal, numbered, naming the actor; no content', async () => {
    const path = join(dir(), 'audit.jsonl')
    const log = new AuditLog(path)
    const fs = new EventedFileSystem(new MemoryFileSystem({ cwd: '/w' }))
    fs.on(log.listener)
    const session = {}
    await actingAs(session, async () => {
      const a = await fs.resolve('a.txt')
      const { version } = await fs.writeText(a, 'secret content\n')
      await fs.editText(a, { oldString: 'secret', newString: 'public', replaceAll: false })
      await fs.remove(a, { expected: { version } }).catch(() => undefined)
    })
    await actingAs('agent-2', async () => fs.rename(await fs.resolve('a.txt'), await fs.resolve('b.txt')))
    log.close()
    const lines = linesOf(path)
    expect(lines.map((l) => [l.seq, l.kind, l.verb, l.actor, l.code])).toEqual([
      [1, 'create', 'write', 'session#1', undefined],
      [2, 'update', 'edit', 'session#1', undefined],
      [3, 'failed', 'remove', 'session#1', 'FS_STALE_VERSION'],
      [4, 'rename', 'rename', 'agent-2', undefined],
    ])
    expect(lines[0]).toMatchObject({ path: '/w/a.txt', bytes: 15, pid: process.pid })
    expect(lines[3]).toMatchObject({ to: '/w/b.txt' })
    expect(readFileSync(path, 'utf8')).not.toContain('secret')
  })

  it('reopened, it numbers on; a line cut by a crash of the machine is ended first', () => {
    const path = join(dir(), 'audit.jsonl')
    const event = { kind: 'create', verb: 'write', type: 'file', target: { path: '/x', key: '/x' }, at: Date.now(), durationMs: 1 } as const
    const first = new AuditLog(path)
    first.write(event as never)
    first.write(event as never)
    first.close()
    writeFileSync(path, `${readFileSync(path, 'utf8')}{"seq":3,"ti`)
    const second = new AuditLog(path)
    second.write(event as never)
    second.close()
    const raw = readFileSync(path, 'utf8').split('\n')
    expect(raw.at(-2)).toMatch(/^\{"seq":3,/)
    expect(raw[2]).toBe('{"seq":3,"ti')
    expect(JSON.parse(raw.at(-2) as string)).toMatchObject({ seq: 3 })
  })

  it('rotates before growing past maxBytes, keeping `keep` files, numbering on across them', () => {
    const path = join(dir(), 'audit.jsonl')
    const log = new AuditLog(path, { maxBytes: 4096, keep: 2 })
    const event = { kind: 'create', verb: 'write', type: 'file', target: { path: '/p'.padEnd(200, 'x'), key: '/k' }, at: Date.now(), durationMs: 1 } as const
    for (let i = 0; i < 100; i++) log.write(event as never)
    log.close()
    const files = [`${path}.2`, `${path}.1`, path]
    for (const f of files) expect(readFileSync(f).length).toBeLessThanOrEqual(4096)
    expect(existsSync(`${path}.3`)).toBe(false)
    const seqs = files.flatMap((f) => linesOf(f).map((l) => l.seq))
    expect(seqs.at(-1)).toBe(100)
    seqs.forEach((s, i) => i > 0 && expect(s, 'consecutive across the kept files').toBe((seqs[i - 1] as number) + 1))
  })

  it('a rotation that cannot move the file (a directory in the way) warns and the log goes on in place', () => {
    const path = join(dir(), 'audit.jsonl')
    mkdirSync(`${path}.1/blocker`, { recursive: true })
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined)
    try {
      const log = new AuditLog(path, { maxBytes: 4096, keep: 1 })
      const event = { kind: 'create', verb: 'write', type: 'file', target: { path: '/p'.padEnd(300, 'x'), key: '/k' }, at: Date.now(), durationMs: 1 } as const
      for (let i = 0; i < 30; i++) log.write(event as never)
      log.close()
      const messages = warn.mock.calls.map((c) => String(c[0]))
      // Tried again only after maxBytes more: a few warnings for 30 lines of ~400 bytes, no line lost.
      expect(messages.filter((m) => m.includes('could not be rotated')).length).toBeGreaterThanOrEqual(1)
      expect(messages.filter((m) => m.includes('could not be rotated')).length).toBeLessThanOrEqual(3)
      expect(messages.filter((m) => m.includes('lost a line'))).toEqual([])
    } finally {
      warn.mockRestore()
    }
    expect(linesOf(path).map((l) => l.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1))
  })

  it('a writer killed at any moment: at most its last line cut, ended by the next opener; numbering goes on (5 kills, bounded)', async () => {
    const path = join(dir(), 'audit.jsonl')
    // Lines of ~3 KB: most cross a page boundary of the file, where Linux may stop a killed writer's write.
    const child = `
      const { AuditLog } = await import('@seamfs/core')
      const log = new AuditLog(process.argv[1], { maxBytes: 1024 * 1024 * 1024 })
      const event = { kind: 'update', verb: 'edit', type: 'file', target: { path: '/p'.padEnd(3000, 'y'), key: '/k' }, at: Date.now(), durationMs: 1 }
      process.stdout.write('ready\\n')
      for (;;) log.write(event)
    `
    let cut = 0
    for (let round = 0; round < 5; round++) {
      const proc = spawn(process.execPath, ['--input-type=module', '-e', child, path], { stdio: ['ignore', 'pipe', 'inherit'], cwd: process.cwd() })
      await new Promise<void>((resolve, reject) => {
        proc.stdout.once('data', () => resolve())
        proc.once('exit', (code) => reject(new Error(`the writer ended first (${String(code)})`)))
      })
      await new Promise((resolve) => setTimeout(resolve, 20 + round * 15))
      const exited = new Promise((resolve) => proc.once('exit', resolve))
      proc.kill('SIGKILL')
      await exited
      const raw = readFileSync(path, 'utf8')
      const tail = raw.slice(raw.lastIndexOf('\n') + 1)
      // Whole lines, or whole lines and the start of one more: never a hole or a foreign byte.
      if (tail !== '') {
        // A page boundary may fall anywhere in a line, also inside its first bytes.
        const start = '{"seq":'
        expect(tail.startsWith(start) || start.startsWith(tail), 'a cut line is the start of a line').toBe(true)
        // Cut right before its newline, the line is whole: the next opener only ends it.
        if (!parses(tail)) cut++
      }
    }
    const event = { kind: 'create', verb: 'write', type: 'file', target: { path: '/after', key: '/after' }, at: Date.now(), durationMs: 1 } as const
    const next = new AuditLog(path)
    next.write(event as never)
    next.close()
    const raw = readFileSync(path, 'utf8')
    expect(raw.endsWith('\n'), 'the last line is whole').toBe(true)
    const parsed = raw
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => (parses(l) ? (JSON.parse(l) as AuditLine) : undefined))
    const lines = parsed.filter((l) => l !== undefined)
    expect(parsed.length - lines.length, 'a cut line only where a writer was killed mid-line').toBe(cut)
    expect(lines.length).toBeGreaterThan(5)
    expect(lines.at(-1)).toMatchObject({ path: '/after', pid: process.pid })
    lines.forEach((l, i) => i > 0 && expect(l.seq, 'numbered on from the last whole line').toBe((lines[i - 1] as AuditLine).seq + 1))
  }, 30_000)

  it('under load, exactly one line per committed change', async () => {
    const path = join(dir(), 'audit.jsonl')
    const log = new AuditLog(path)
    const fs = new EventedFileSystem(new MemoryFileSystem({ cwd: '/w' }))
    fs.on(log.listener)
    const files = ['a.txt', 'b.txt', 'c.txt']
    for (const f of files) await fs.writeText(await fs.resolve(f), '')
    let committed = 0
    await Promise.all(
      Array.from({ length: 8 }, (_, s) =>
        actingAs(`s${s}`, async () => {
          for (let i = 0; i < 50; i++) {
            const t = await fs.resolve(files[(s + i) % files.length] as string)
            const info = await fs.stat(t)
            const ok = await fs
              .writeText(t, `${s}-${i}\n`, { expected: { kind: 'replaceIfVersion', version: info!.version } })
              .then(() => true)
              .catch(() => false)
            if (ok) committed++
          }
        }),
      ),
    )
    log.close()
    const lines = linesOf(path)
    expect(lines.filter((l) => l.kind === 'update')).toHaveLength(committed)
    expect(lines.filter((l) => l.kind === 'failed').every((l) => l.code === 'FS_STALE_VERSION')).toBe(true)
    expect(lines.filter((l) => l.kind === 'create')).toHaveLength(3)
    expect(lines.length).toBe(3 + 8 * 50)
  })
})
