/**
 * The model is briefed through the adapter: what `createAgent` binds to the model (and what a
 * provider would be sent, in OpenAI's tool format) carries each tool's usage guidance (`prompt`)
 * after its description, as the MCP server sends it; `includePrompt: false` leaves it out.
 */
import { AIMessage, HumanMessage } from '@langchain/core/messages'
import { fakeModel } from '@langchain/core/testing'
import { convertToOpenAITool } from '@langchain/core/utils/function_calling'
import { createAgent } from 'langchain'
import { describe, expect, it } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { expectBriefed } from '../../tools/test/briefing.js'
import { fileTools } from '@seamfs/langchain'

/** The descriptions the model was bound with on its first call, by tool name, as a provider gets them. */
async function boundDescriptions(includePrompt?: boolean): Promise<Record<string, string | undefined>> {
  const tools = fileTools({ fs: new MemoryFileSystem(), ...(includePrompt === undefined ? {} : { includePrompt }) })
  const model = fakeModel().respond(new AIMessage('done'))
  // What the agent binds is what a provider's model would turn into its request.
  let bound: readonly unknown[] = []
  const bindTools = model.bindTools.bind(model)
  model.bindTools = (given) => {
    bound = given
    return bindTools(given)
  }
  await createAgent({ model, tools: Object.values(tools) }).invoke({ messages: [new HumanMessage('hello')] })
  expect(model.callCount).toBe(1)
  const sent = bound.map((t) => convertToOpenAITool(t as Parameters<typeof convertToOpenAITool>[0]))
  return Object.fromEntries(sent.map((t) => [t.function.name, t.function.description]))
}

describe('fileTools brief the model', () => {
  it('each tool the model is given carries its description, then its guidance; 9 tools, none without it', async () => {
    expectBriefed(await boundDescriptions(), true)
  })

  it('includePrompt: false: the descriptions alone (a host that briefs the model itself)', async () => {
    expectBriefed(await boundDescriptions(false), false)
  })
})
