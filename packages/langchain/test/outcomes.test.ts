/**
 * Honest outcomes reach the model and the application through langchain: a failed call's `retryable`, and a mutation's
 * `indeterminate` (its answer was lost: it may have been made), travel from the tool result through
 * the AI SDK tool (its `FileToolError`), the LangChain tool (the `ToolMessage` artifact and the
 * error), MCP (`_meta`) and deepagents (the text the model reads), each with the text that tells the
 * model to read before retrying. The store is memory frozen mid-call; the deadline ends the call.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { ToolMessage } from '@langchain/core/messages'
import { fileTools } from '../src/index.js'
import { frozenStores } from '../../backend-memory/test/frozen-store.js'

const CONFIG = { callTimeoutMs: 200 }
const REMEDY = /may or may not have been made: read the file/
const stores = frozenStores()

afterEach(stores.cleanup)

describe('an edit whose store stops answering', () => {
  it('LangChain: the ToolMessage is an error whose artifact says retryable and indeterminate', async () => {
    const fs = stores.make()
    const tools = fileTools({ fs, cwd: '/w', config: CONFIG })
    const call = (name: string, args: Record<string, unknown>) => ({ type: 'tool_call' as const, id: `id-${name}`, name, args })
    await tools.read.invoke(call('read', { file_path: 'notes.txt' }))
    fs.freeze()
    const message = (await tools.edit.invoke(call('edit', { file_path: 'notes.txt', old_string: 'alpha', new_string: 'beta' }))) as ToolMessage
    expect(message).toBeInstanceOf(ToolMessage)
    expect(message.status).toBe('error')
    expect(message.artifact).toMatchObject({ isError: true, code: 'FS_IO_ERROR', retryable: true, indeterminate: true })
    expect(JSON.stringify(message.content)).toMatch(REMEDY)
  })
})
