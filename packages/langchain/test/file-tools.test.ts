/**
 * `fileTools` with the real @langchain/core tools, driven by `createAgent` (langchain v1) on
 * @langchain/core's fake chat model: what the model receives (the texts; a failure as a
 * ToolMessage with status 'error'), what the application keeps (the artifact), abort, images,
 * and one session per set of tools.
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages'
import { fakeModel } from '@langchain/core/testing'
import type { ToolCall } from '@langchain/core/messages/tool'
import { createAgent } from 'langchain'
import { describe, expect, it, vi } from 'vitest'
import { ObservationPolicy } from '@seamfs/core'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileTools } from '@seamfs/tools'
import { fileTools, isFileToolError, type FileLangChainTool } from '@seamfs/langchain'

const NOTES = 'alpha\nbeta\n'
const CHANGED_BEHIND = 'gamma\nALPHA\nbeta\n'
const READ = '<path>/notes.txt</path>\n<type>file</type>\n<content>\n1: alpha\n2: beta\n\n(End of file - total 2 lines)\n</content>'
const EDITED = 'The file /notes.txt has been updated successfully.\n\n@@ -1,2 +1,2 @@\n-alpha\n+ALPHA\n beta'
const STALE = 'Error: cannot edit "/notes.txt": file changed since it was read — re-read the file, then retry'
const PNG_TEXT = '<path>/pixel.png</path>\n<type>image</type>\n<content>\n(image/png, 70 bytes, returned as image content)\n</content>'
const UNKNOWN_KEY = 'Error: unknown argument "filepath" (allowed: file_path, offset, limit); file_path must be a non-empty string'
const WRONG_TYPE = 'Error: content must be a string'
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='

const setup = (): { fs: MemoryFileSystem; policy: ObservationPolicy } => ({
  fs: new MemoryFileSystem({ files: { 'notes.txt': NOTES } }),
  policy: new ObservationPolicy(),
})
const call = (name: string, args: Record<string, unknown>, id = 'call-1'): ToolCall => ({ name, args, id, type: 'tool_call' })
const toolMessages = (messages: readonly BaseMessage[]): ToolMessage[] => messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m))

describe('fileTools with createAgent', () => {
  it('read → edit → stale edit: the model gets the texts, the stale edit as status error; the file keeps the change behind its back', async () => {
    const { fs, policy } = setup()
    const tools = fileTools({ fs, policy })
    const model = fakeModel()
      .respondWithTools([{ name: 'read', args: { file_path: 'notes.txt' }, id: 'c1' }])
      .respondWithTools([{ name: 'edit', args: { file_path: 'notes.txt', old_string: 'alpha', new_string: 'ALPHA' }, id: 'c2' }])
      .respond(() => {
        fs.volume.writeFileSync('/notes.txt', CHANGED_BEHIND) // another process, after the agent's edit
        return new AIMessage({ content: '', tool_calls: [call('edit', { file_path: 'notes.txt', old_string: 'beta', new_string: 'BETA' }, 'c3')] })
      })
      .respond(new AIMessage('done'))
    const agent = createAgent({ model, tools: Object.values(tools) })
    const result = await agent.invoke({ messages: [new HumanMessage('Capitalize the notes.')] })

    expect(model.calls).toHaveLength(4)
    const received = toolMessages(model.calls[3]!.messages)
    expect(received.map((m) => [m.tool_call_id, m.status, m.content])).toEqual([
      ['c1', 'success', READ],
      ['c2', 'success', EDITED],
      ['c3', 'error', STALE],
    ])
    expect(fs.toJSON()).toEqual({ 'notes.txt': CHANGED_BEHIND })

    // The application keeps the whole ToolResult as the artifact, with the code of a failure.
    const [, edit, stale] = toolMessages(result.messages)
    expect(edit?.artifact).toMatchObject({ isError: false, value: { before: NOTES, after: 'ALPHA\nbeta\n' } })
    expect(stale?.artifact).toEqual({ text: STALE, isError: true, code: 'FS_STALE_VERSION' })
    expect(result.messages.at(-1)?.content).toBe('done')
  })

  it('is keyed by tool name; Object.values is the array hosts take', () => {
    const fs = new MemoryFileSystem()
    const tools = fileTools({ fs })
    // Every tool the backend is offered (see @seamfs/tools), in its order.
    expect(Object.keys(tools)).toEqual(createFileTools({ fs }).map((t) => t.name))
    expect(Object.values(tools).map((t) => t.name)).toEqual(Object.keys(tools))
    expect(tools.read.schema).toMatchObject({ type: 'object', additionalProperties: false, required: ['file_path'] })
  })

  it('invoked with bare arguments: the content on success, a FileToolError with the code on failure', async () => {
    const { fs, policy } = setup()
    const tools = fileTools({ fs, policy })
    await expect(tools.read.invoke({ file_path: 'notes.txt' })).resolves.toBe(READ)
    const failure: unknown = await (tools.read.invoke({ file_path: 'missing.txt' }) as Promise<unknown>).catch((e: unknown) => e)
    expect(isFileToolError(failure)).toBe(true)
    expect(failure).toMatchObject({ code: 'FS_NOT_FOUND', message: 'Error: cannot read "/missing.txt": not found' })
  })

  it("passes the run's signal through to the filesystem, and an aborted run fails the call", async () => {
    const { fs, policy } = setup()
    const tools = fileTools({ fs, policy })
    const resolve = vi.spyOn(fs, 'resolve')
    const controller = new AbortController()
    await tools.read.invoke(call('read', { file_path: 'notes.txt' }), { signal: controller.signal })
    const signal = resolve.mock.calls[0]?.[1]?.signal
    expect(signal?.aborted).toBe(false)
    controller.abort()
    expect(signal?.aborted).toBe(true)
    await expect(tools.write.invoke(call('write', { file_path: 'new.txt', content: 'x' }), { signal: AbortSignal.abort() })).rejects.toThrow(/abort/i)
    expect(fs.toJSON()).toEqual({ 'notes.txt': NOTES })
  })

  it('an image read is a text block and a standard image block', async () => {
    const fs = new MemoryFileSystem({ files: { 'pixel.png': Uint8Array.from(Buffer.from(PNG_BASE64, 'base64')) } })
    const message = (await fileTools({ fs }).read.invoke(call('read', { file_path: 'pixel.png' }))) as ToolMessage
    expect(message.status).toBe('success')
    expect(message.content).toEqual([
      { type: 'text', text: PNG_TEXT },
      { type: 'image', mimeType: 'image/png', data: PNG_BASE64 },
    ])
  })

  it('each set of tools has its own session; a shared explicit session authorizes across sets', async () => {
    const { fs, policy } = setup()
    const edit = call('edit', { file_path: 'notes.txt', old_string: 'alpha', new_string: 'ALPHA' })
    await fileTools({ fs, policy }).read.invoke(call('read', { file_path: 'notes.txt' }))
    const refused = (await fileTools({ fs, policy }).edit.invoke(edit)) as ToolMessage
    expect([refused.status, (refused.artifact as { code?: string }).code]).toEqual(['error', 'FS_NOT_OBSERVED'])

    await fileTools({ fs, policy, session: 'run-1' }).read.invoke(call('read', { file_path: 'notes.txt' }))
    const done = (await fileTools({ fs, policy, session: 'run-1' }).edit.invoke(edit)) as ToolMessage
    expect(done.status).toBe('success')
    expect(fs.toJSON()).toEqual({ 'notes.txt': 'ALPHA\nbeta\n' })
  })

  it("schema violations reach the model in the tool's words as error ToolMessages, no stack trace, nothing touched", async () => {
    const { fs, policy } = setup()
    const tools = fileTools({ fs, policy })
    const resolve = vi.spyOn(fs, 'resolve')
    const model = fakeModel()
      .respondWithTools([
        { name: 'read', args: { filepath: 'notes.txt' }, id: 'c1' },
        { name: 'write', args: { file_path: 'notes.txt', content: 42 }, id: 'c2' },
      ])
      .respond(new AIMessage('done'))
    const agent = createAgent({ model, tools: Object.values(tools) })
    await agent.invoke({ messages: [new HumanMessage('Read the notes.')] })

    const received = toolMessages(model.calls[1]!.messages)
    expect(received.map((m) => [m.tool_call_id, m.name, m.status, m.content])).toEqual([
      ['c1', 'read', 'error', UNKNOWN_KEY],
      ['c2', 'write', 'error', WRONG_TYPE],
    ])
    for (const m of received) expect(m.content).not.toMatch(/^\s*at |node_modules|ToolInputParsingException|did not match expected schema/m)
    expect(resolve).not.toHaveBeenCalled()
    expect(fs.toJSON()).toEqual({ 'notes.txt': NOTES })
    // The schema the model is shown is LangChain's JSON Schema, unchanged.
    expect(tools.read.schema).toEqual(createFileTools({ fs }).find((t) => t.name === 'read')?.inputSchema)
  })

  it.each([
    ['unknown key', 'read', { filepath: 'notes.txt' }, UNKNOWN_KEY],
    ['missing required key', 'write', { file_path: 'notes.txt' }, WRONG_TYPE],
    ['wrong type', 'write', { file_path: 'notes.txt', content: 42 }, WRONG_TYPE],
    ['out of range', 'read', { file_path: 'notes.txt', limit: 0 }, 'Error: limit must be a positive integer'],
    ['above the maximum', 'read', { file_path: 'notes.txt', offset: 1, limit: 100_000 }, 'Error: limit must be less than or equal to 2000'],
  ])("a tool call with a schema violation (%s) answers the tool's input error and does no I/O", async (_, name, args, text) => {
    const { fs, policy } = setup()
    const tools = fileTools({ fs, policy }) as unknown as Record<string, FileLangChainTool>
    const resolve = vi.spyOn(fs, 'resolve')
    const stat = vi.spyOn(fs, 'stat')
    const message = (await tools[name]!.invoke(call(name, args, 'v1'))) as ToolMessage
    expect([message.tool_call_id, message.name, message.status, message.content]).toEqual(['v1', name, 'error', text])
    expect(message.artifact).toEqual({ text, isError: true })
    expect([resolve.mock.calls.length, stat.mock.calls.length]).toEqual([0, 0])
    expect(fs.toJSON()).toEqual({ 'notes.txt': NOTES })
  })

  it("with bare arguments a schema violation throws a FileToolError with the tool's text", async () => {
    const failure: unknown = await (fileTools(setup()).read.invoke({ filepath: 'notes.txt' }) as Promise<unknown>).catch((e: unknown) => e)
    expect(isFileToolError(failure)).toBe(true)
    expect(failure).toMatchObject({ code: undefined, message: UNKNOWN_KEY })
  })

  it('where LangChain refuses what the seamfs parser would accept, the answer is a generic input error and nothing runs', async () => {
    const { fs, policy } = setup()
    const resolve = vi.spyOn(fs, 'resolve')
    // An `undefined` value: absent for the seamfs parser, an extra property for LangChain's validator.
    const message = (await fileTools({ fs, policy }).write.invoke(call('write', { file_path: 'new.txt', content: 'x', extra: undefined }))) as ToolMessage
    expect([message.status, message.content]).toEqual(['error', 'Error: the arguments do not match the input schema of the write tool'])
    expect(resolve).not.toHaveBeenCalled()
    expect(fs.toJSON()).toEqual({ 'notes.txt': NOTES })
  })
})

describe('fileTools: fenced by default, as createFileTools is', () => {
  it('no ../x and no absolute path outside the cwd; `sandbox: false` widens it, explicitly', async () => {
    const fs = new MemoryFileSystem({ cwd: '/w', files: { '/secret.txt': 'SECRET\n', '/w/a.txt': 'a\n' } })
    const tools = fileTools({ fs, policy: false })
    for (const file_path of ['../secret.txt', '/secret.txt']) {
      const failure: unknown = await (tools.read.invoke({ file_path }) as Promise<unknown>).catch((e: unknown) => e)
      expect(failure, file_path).toMatchObject({ code: 'FS_SANDBOX_DENIED' })
    }
    const written: unknown = await (tools.write.invoke({ file_path: '/x.txt', content: 'x\n' }) as Promise<unknown>).catch((e: unknown) => e)
    expect(written).toMatchObject({ code: 'FS_SANDBOX_DENIED' })
    // Nothing written, inside (the hook) or out.
    expect(fs.toJSON()).toEqual({ 'a.txt': 'a\n' })
    expect(await fs.stat(await fs.resolve('/x.txt'))).toBeUndefined()
    const wide = fileTools({ fs, policy: false, sandbox: false })
    await expect(wide.read.invoke({ file_path: '../secret.txt' })).resolves.toContain('SECRET')
  })
})
