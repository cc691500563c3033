/**
 * Honest outcomes reach the model and the application through ai-sdk: a failed call's `retryable`, and a mutation's
 * `indeterminate` (its answer was lost: it may have been made), travel from the tool result through
 * the AI SDK tool (its `FileToolError`), the LangChain tool (the `ToolMessage` artifact and the
 * error), MCP (`_meta`) and deepagents (the text the model reads), each with the text that tells the
 * model to read before retrying. The store is memory frozen mid-call; the deadline ends the call.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { fileToolSet } from '../src/index.js'
import { frozenStores } from '../../backend-memory/test/frozen-store.js'

const CONFIG = { callTimeoutMs: 200 }
const REMEDY = /may or may not have been made: read the file/
const stores = frozenStores()

afterEach(stores.cleanup)

describe('an edit whose store stops answering', () => {
  it('AI SDK: the FileToolError carries code, retryable and indeterminate; its message tells the model to read first', async () => {
    const fs = stores.make()
    const tools = fileToolSet({ fs, cwd: '/w', config: CONFIG })
    const options = { toolCallId: 'c', messages: [] }
    await tools.read.execute!({ file_path: 'notes.txt' }, options)
    fs.freeze()
    const failure: unknown = await (
      tools.edit.execute!({ file_path: 'notes.txt', old_string: 'alpha', new_string: 'beta' }, options) as Promise<unknown>
    ).catch((e: unknown) => e)
    expect(failure).toMatchObject({ name: 'FileToolError', code: 'FS_IO_ERROR', retryable: true, indeterminate: true })
    expect((failure as Error).message).toMatch(REMEDY)
  })
})
