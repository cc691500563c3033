/**
 * What a framework adapter's briefing test asserts of the descriptions a model was given, by tool
 * name: every seamfs tool there, each described with its guidance (its `prompt`, after its
 * description) or, with `includePrompt: false`, with its description alone.
 */
import { expect } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileTools } from '@seamfs/tools'

export function expectBriefed(got: Record<string, string | undefined>, includePrompt: boolean): void {
  const seamfs = createFileTools({ fs: new MemoryFileSystem() })
  expect(Object.keys(got).sort()).toEqual(seamfs.map((t) => t.name).sort())
  for (const t of seamfs) {
    expect(t.prompt.trim().length, t.name).toBeGreaterThan(0)
    expect(got[t.name], t.name).toBe(includePrompt ? `${t.description}\n\n${t.prompt.trim()}` : t.description)
  }
}
