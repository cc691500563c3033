/**
 * An agent on an overlay of a real directory (issue 36): the AI SDK's `generateText` with its mock
 * model edits, writes, moves and deletes through `fileToolSet` over an `OverlayFileSystem` of a
 * local directory. The directory is untouched until the commit; the changeset says what the agent
 * did; the commit makes exactly that of the directory.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateText, stepCountIs } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { afterAll, describe, expect, it } from 'vitest'
import { LocalFileSystem } from '@seamfs/backend-local'
import { fileToolSet } from '@seamfs/ai-sdk'
import { ObservationPolicy, OverlayFileSystem } from '@seamfs/tools'

const USAGE = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }
const CALLS = [
  { toolName: 'read', input: { file_path: 'src/app.ts' } },
  { toolName: 'edit', input: { file_path: 'src/app.ts', old_string: 'foo', new_string: 'bar', replace_all: true } },
  { toolName: 'write', input: { file_path: 'docs/notes.md', content: '# Notes\n' } },
  { toolName: 'read', input: { file_path: 'old.txt' } },
  { toolName: 'move', input: { source_path: 'old.txt', destination_path: 'archive/old.txt' } },
  { toolName: 'read', input: { file_path: 'tmp.log' } },
  { toolName: 'delete', input: { path: 'tmp.log' } },
]

function scriptedModel(): MockLanguageModelV3 {
  let step = 0
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const call = CALLS[step++]
      if (call === undefined) return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: USAGE, warnings: [] }
      const part = { type: 'tool-call' as const, toolCallId: `call-${step}`, toolName: call.toolName, input: JSON.stringify(call.input) }
      return { content: [part], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: USAGE, warnings: [] }
    },
  })
}

/** Every file under `dir`, relative path → content. */
function tree(dir: string, at = ''): Record<string, string> {
  const out: Record<string, string> = {}
  for (const entry of readdirSync(join(dir, at), { withFileTypes: true })) {
    const rel = at === '' ? entry.name : `${at}/${entry.name}`
    if (entry.isDirectory()) Object.assign(out, tree(dir, rel))
    else out[rel] = readFileSync(join(dir, rel), 'utf8')
  }
  return out
}

const made: string[] = []
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

describe('an AI SDK agent on an overlay of a real directory', () => {
  it('changes nothing on disk until the commit; the changeset is what it did; the commit makes it so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seamfs-overlay-agent-'))
    made.push(dir)
    mkdirSync(join(dir, 'src'))
    writeFileSync(join(dir, 'src/app.ts'), 'export const foo = 1\nfoo()\n')
    writeFileSync(join(dir, 'old.txt'), 'old\n')
    writeFileSync(join(dir, 'tmp.log'), 'log\n')
    const before = tree(dir)
    const overlay = await OverlayFileSystem.open(new LocalFileSystem({ cwd: dir }))
    const model = scriptedModel()
    const result = await generateText({
      model,
      tools: fileToolSet({ fs: overlay, policy: new ObservationPolicy() }),
      prompt: 'Tidy up.',
      stopWhen: stepCountIs(10),
    })
    expect(result.text).toBe('done')
    expect(result.steps.flatMap((s) => s.content.filter((p) => p.type === 'tool-error'))).toEqual([])

    expect(tree(dir)).toEqual(before)
    const changes = await overlay.changes()
    expect(changes.map((c) => [c.path.slice(dir.length + 1), c.kind])).toEqual([
      ['archive', 'create directory'],
      ['archive/old.txt', 'create'],
      ['docs', 'create directory'],
      ['docs/notes.md', 'create'],
      ['old.txt', 'remove'],
      ['src/app.ts', 'update'],
      ['tmp.log', 'remove'],
    ])
    expect(changes.find((c) => c.path.endsWith('src/app.ts'))?.diff).toBe('@@ -1,2 +1,2 @@\n-export const foo = 1\n-foo()\n+export const bar = 1\n+bar()')

    const report = await overlay.commit()
    expect(report.outcome).toBe('committed')
    expect(tree(dir)).toEqual({ 'archive/old.txt': 'old\n', 'docs/notes.md': '# Notes\n', 'src/app.ts': 'export const bar = 1\nbar()\n' })
  })
})
