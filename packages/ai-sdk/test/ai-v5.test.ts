/**
 * The same adapter under ai@5: `ai` is mocked by the installed `ai-v5` (npm:ai@5), so
 * `fileToolSet` builds its tools with ai@5's `tool()` and `jsonSchema()`, exactly as in a
 * project that has ai@5 installed, and ai@5's `generateText` drives them.
 */
import { generateText, stepCountIs, type ToolSet } from 'ai-v5'
import { MockLanguageModelV2 } from 'ai-v5/test'
import { describe, expect, it, vi } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { fileToolSet } from '@seamfs/ai-sdk'
import { CALLS, CHANGED_BEHIND, EXPECTED_OUTPUTS, PNG, PNG_TEXT, changeBehindTheAgentsBack, setup, toolOutputs } from './script.js'

vi.mock('ai', async () => await import('ai-v5'))

const USAGE = { inputTokens: 1, outputTokens: 1, totalTokens: 2 }

type Call = { readonly toolName: string; readonly input: unknown }

/** An ai@5 mock model that makes `calls` one per step (running `before(step)` first), then answers `done`. */
function scriptedModel(calls: readonly Call[], before: (step: number) => Promise<void> | void = () => {}): MockLanguageModelV2 {
  let step = 0
  return new MockLanguageModelV2({
    doGenerate: async () => {
      await before(step)
      const call = calls[step++]
      if (call === undefined) return { content: [{ type: 'text', text: 'done' }], finishReason: 'stop', usage: USAGE, warnings: [] }
      const part = { type: 'tool-call' as const, toolCallId: `call-${step}`, toolName: call.toolName, input: JSON.stringify(call.input) }
      return { content: [part], finishReason: 'tool-calls', usage: USAGE, warnings: [] }
    },
  })
}

/** The tool set as ai@5's types see it: the package is type-checked against ai@6, whose `Tool` type differs. */
const v5Tools = (tools: ReturnType<typeof fileToolSet>): ToolSet => tools as unknown as ToolSet

describe('fileToolSet on ai@5', () => {
  it("builds its tools with ai@5's jsonSchema (the mock of 'ai' is in effect)", () => {
    const schema = fileToolSet({ fs: new MemoryFileSystem() }).read.inputSchema as object
    expect(Object.getOwnPropertySymbols(schema).map(String)).toContain('Symbol(vercel.ai.validator)')
  })

  it('read → edit → stale edit: the model gets the texts and the stale edit as error-text; the file keeps the change behind its back', async () => {
    const { fs, policy } = setup()
    const model = scriptedModel(CALLS, (step) => (step === 2 ? changeBehindTheAgentsBack(fs) : undefined))
    const result = await generateText({ model, tools: v5Tools(fileToolSet({ fs, policy })), prompt: 'Capitalize the notes.', stopWhen: stepCountIs(6) })

    expect(model.doGenerateCalls).toHaveLength(4)
    expect(toolOutputs(model.doGenerateCalls[3]!.prompt)).toEqual(EXPECTED_OUTPUTS)
    expect(fs.toJSON()).toEqual({ 'notes.txt': CHANGED_BEHIND })
    expect(result.steps[1]!.toolResults[0]!.output).toMatchObject({ isError: false, value: { after: 'ALPHA\nbeta\n' } })
    expect(result.steps[2]!.content.find((part) => part.type === 'tool-error')?.error).toMatchObject({ name: 'FileToolError', code: 'FS_STALE_VERSION' })
  })

  it('an image read reaches the model as a media part (ai@5 has no image-data)', async () => {
    const fs = new MemoryFileSystem({ files: { 'pixel.png': PNG.bytes } })
    const model = scriptedModel([{ toolName: 'read', input: { file_path: 'pixel.png' } }])
    await generateText({ model, tools: v5Tools(fileToolSet({ fs })), prompt: 'look', stopWhen: stepCountIs(3) })
    expect(toolOutputs(model.doGenerateCalls[1]!.prompt)).toEqual([
      {
        type: 'content',
        value: [
          { type: 'text', text: PNG_TEXT },
          { type: 'media', data: PNG.base64, mediaType: 'image/png' },
        ],
      },
    ])
  })

  it("passes ai@5's abortSignal through: an aborted signal fails the call with FS_ABORTED", async () => {
    const { fs, policy } = setup()
    const read = fileToolSet({ fs, policy }).read
    await expect(read.execute!({ file_path: 'notes.txt' }, { toolCallId: 'c', messages: [], abortSignal: AbortSignal.abort() })).rejects.toMatchObject({
      code: 'FS_ABORTED',
    })
  })
})
