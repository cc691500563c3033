/**
 * `fileToolSet` driven by the real `generateText` of ai@6 and its mock model: what the model
 * receives (text only, errors as error-text), what the application keeps (the whole
 * `ToolResult`, the error's code), abort, images as media, and one session per tool set.
 */
import { generateText, stepCountIs, type ToolSet } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { describe, expect, it } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { fileToolSet, isFileToolError, FileToolError } from '@seamfs/ai-sdk'
import { createFileTools } from '@seamfs/tools'
import { CALLS, CHANGED_BEHIND, EXPECTED_OUTPUTS, PNG, PNG_TEXT, changeBehindTheAgentsBack, setup, toolOutputs } from './script.js'

const USAGE = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }

type Call = { readonly toolName: string; readonly input: unknown }

/** A mock model that makes `calls` one per step (running `before(step)` first), then answers `done`. */
function scriptedModel(calls: readonly Call[], before: (step: number) => Promise<void> | void = () => {}): MockLanguageModelV3 {
  let step = 0
  return new MockLanguageModelV3({
    doGenerate: async () => {
      await before(step)
      const call = calls[step++]
      if (call === undefined) return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: USAGE, warnings: [] }
      const part = { type: 'tool-call' as const, toolCallId: `call-${step}`, toolName: call.toolName, input: JSON.stringify(call.input) }
      return { content: [part], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: USAGE, warnings: [] }
    },
  })
}

describe('fileToolSet on ai@6', () => {
  it('read → edit → stale edit: the model gets the texts and the stale edit as error-text; the file keeps the change behind its back', async () => {
    const { fs, policy } = setup()
    const tools = fileToolSet({ fs, policy })
    const model = scriptedModel(CALLS, (step) => (step === 2 ? changeBehindTheAgentsBack(fs) : undefined))
    const result = await generateText({ model, tools, prompt: 'Capitalize the notes.', stopWhen: stepCountIs(6) })

    expect(model.doGenerateCalls).toHaveLength(4)
    expect(toolOutputs(model.doGenerateCalls[3]!.prompt)).toEqual(EXPECTED_OUTPUTS)
    expect(result.text).toBe('done')
    expect(fs.toJSON()).toEqual({ 'notes.txt': CHANGED_BEHIND })

    // The application keeps the whole ToolResult of a success…
    const edit = result.steps[1]!.toolResults[0]!
    expect(edit.output).toMatchObject({ isError: false, value: { before: 'alpha\nbeta\n', after: 'ALPHA\nbeta\n' } })
    // …and a failure is a tool-error part whose error carries the code.
    const failure = result.steps[2]!.content.find((part) => part.type === 'tool-error')
    expect(failure?.error).toBeInstanceOf(FileToolError)
    expect(isFileToolError(failure?.error)).toBe(true)
    expect(failure?.error).toMatchObject({ code: 'FS_STALE_VERSION', message: EXPECTED_OUTPUTS[2]!.value, result: { isError: true, code: 'FS_STALE_VERSION' } })
    expect(result.steps[2]!.toolResults).toEqual([])
  })

  it('is a ToolSet keyed by tool name, the optional tools where the backend allows them', () => {
    const fs = new MemoryFileSystem()
    const tools: ToolSet = fileToolSet({ fs })
    // Every tool the backend is offered (see @seamfs/tools), in its order.
    expect(Object.keys(tools)).toEqual(createFileTools({ fs }).map((t) => t.name))
    expect(tools['read']?.description).toMatch(/^Reads? /)
  })

  it('an argument error reaches the model as error-text naming the key, with no code', async () => {
    const { fs, policy } = setup()
    const model = scriptedModel([{ toolName: 'read', input: { filepath: 'notes.txt' } }])
    const result = await generateText({ model, tools: fileToolSet({ fs, policy }), prompt: 'read', stopWhen: stepCountIs(3) })
    const [output] = toolOutputs(model.doGenerateCalls[1]!.prompt) as Array<{ type: string; value: string }>
    expect(output?.type).toBe('error-text')
    expect(output?.value).toMatch(/^Error: .*unknown argument "filepath" \(allowed: file_path, offset, limit\)/)
    expect(result.steps[0]!.content.find((part) => part.type === 'tool-error')?.error).toMatchObject({ code: undefined })
  })

  it("the run's abortSignal is the call's signal: an aborted signal fails the call with FS_ABORTED", async () => {
    const { fs, policy } = setup()
    const tools = fileToolSet({ fs, policy })
    const call = tools.read.execute!({ file_path: 'notes.txt' }, { toolCallId: 'c', messages: [], abortSignal: AbortSignal.abort() })
    await expect(call).rejects.toMatchObject({ name: 'FileToolError', code: 'FS_ABORTED' })

    // Through generateText: the run is aborted as the tool call starts; the write fails with FS_ABORTED and does not happen.
    const controller = new AbortController()
    const model = scriptedModel([{ toolName: 'write', input: { file_path: 'new.txt', content: 'x' } }])
    const errors: unknown[] = []
    const run = generateText({
      model,
      tools,
      prompt: 'write',
      abortSignal: controller.signal,
      stopWhen: stepCountIs(3),
      experimental_onToolCallStart: () => controller.abort(),
      experimental_onToolCallFinish: (event) => void (event.success ? undefined : errors.push(event.error)),
    })
    await expect(run).rejects.toMatchObject({ name: 'AbortError' })
    expect(errors).toEqual([expect.objectContaining({ name: 'FileToolError', code: 'FS_ABORTED' })])
    expect(fs.toJSON()).toEqual({ 'notes.txt': 'alpha\nbeta\n' })
  })

  it('an image read reaches the model as media after the text; the application keeps the image', async () => {
    const fs = new MemoryFileSystem({ files: { 'pixel.png': PNG.bytes } })
    const model = scriptedModel([{ toolName: 'read', input: { file_path: 'pixel.png' } }])
    const result = await generateText({ model, tools: fileToolSet({ fs }), prompt: 'look', stopWhen: stepCountIs(3) })
    const [output] = toolOutputs(model.doGenerateCalls[1]!.prompt) as Array<{ type: string; value: unknown }>
    expect(output).toEqual({
      type: 'content',
      value: [
        { type: 'text', text: PNG_TEXT },
        { type: 'image-data', data: PNG.base64, mediaType: 'image/png' },
      ],
    })
    expect(result.steps[0]!.toolResults[0]!.output).toMatchObject({ image: { data: PNG.base64, mimeType: 'image/png' } })
  })

  it('each tool set has its own session: a read through one does not authorize an edit through another; a shared explicit session does', async () => {
    const { fs, policy } = setup()
    const options = { toolCallId: 'c', messages: [] }
    const edit = { file_path: 'notes.txt', old_string: 'alpha', new_string: 'ALPHA' }
    await fileToolSet({ fs, policy }).read.execute!({ file_path: 'notes.txt' }, options)
    await expect(fileToolSet({ fs, policy }).edit.execute!(edit, options)).rejects.toMatchObject({ code: 'FS_NOT_OBSERVED' })

    await fileToolSet({ fs, policy, session: 'run-1' }).read.execute!({ file_path: 'notes.txt' }, options)
    await expect(fileToolSet({ fs, policy, session: 'run-1' }).edit.execute!(edit, options)).resolves.toMatchObject({ isError: false })
    expect(fs.toJSON()).toEqual({ 'notes.txt': 'ALPHA\nbeta\n' })
  })
})
