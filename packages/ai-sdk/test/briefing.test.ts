/**
 * The model is briefed through the adapter: the tools `generateText` hands the model (ai@6's mock
 * model records them as a provider gets them) carry each tool's usage guidance (`prompt`) after
 * its description, as the MCP server sends it; `includePrompt: false` leaves it out.
 */
import { generateText } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { describe, it } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { expectBriefed } from '../../tools/test/briefing.js'
import { fileToolSet } from '@seamfs/ai-sdk'

const USAGE = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }

/** The descriptions the model was given on its one call, by tool name. */
async function sentDescriptions(includePrompt?: boolean): Promise<Record<string, string | undefined>> {
  const model = new MockLanguageModelV3({
    doGenerate: async () => ({ content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: USAGE, warnings: [] }),
  })
  const tools = fileToolSet({ fs: new MemoryFileSystem(), ...(includePrompt === undefined ? {} : { includePrompt }) })
  await generateText({ model, tools, prompt: 'hello' })
  const sent = model.doGenerateCalls[0]?.tools ?? []
  return Object.fromEntries(sent.map((t) => [t.name, t.type === 'function' ? t.description : undefined]))
}

describe('fileToolSet briefs the model', () => {
  it('each tool the model is given carries its description, then its guidance; 9 tools, none without it', async () => {
    expectBriefed(await sentDescriptions(), true)
  })

  it('includePrompt: false: the descriptions alone (a host that briefs the model itself)', async () => {
    expectBriefed(await sentDescriptions(false), false)
  })
})
