/**
 * Honest outcomes reach the model and the application through deepagents: a failed call's `retryable`, and a mutation's
 * `indeterminate` (its answer was lost: it may have been made), travel from the tool result through
 * the AI SDK tool (its `FileToolError`), the LangChain tool (the `ToolMessage` artifact and the
 * error), MCP (`_meta`) and deepagents (the text the model reads), each with the text that tells the
 * model to read before retrying. The store is memory frozen mid-call; the deadline ends the call.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { SeamfsBackend } from '../src/index.js'
import { frozenStores } from '../../backend-memory/test/frozen-store.js'

const CONFIG = { callTimeoutMs: 200 }
const REMEDY = /may or may not have been made: read the file/
const stores = frozenStores()

afterEach(stores.cleanup)

describe('an edit whose store stops answering', () => {
  it('deepagents: the error the model reads says the edit may have been made', async () => {
    const fs = stores.make()
    const backend = new SeamfsBackend({ fs, root: '/w', config: CONFIG })
    expect((await backend.read('/notes.txt')).error).toBeUndefined()
    fs.freeze()
    const result = await backend.edit('/notes.txt', 'alpha', 'beta')
    expect(result.error).toMatch(/timed out after 200 ms/)
    expect(result.error).toMatch(REMEDY)
  })

  it('deepagents: a listing and a binary read, which call the contract directly, end at the deadline too', async () => {
    const fs = stores.make({ files: { 'notes.txt': 'alpha\n', 'pixel.png': new Uint8Array([0x89, 0x50, 0x4e, 0x47]) }, cwd: '/w' })
    const backend = new SeamfsBackend({ fs, root: '/w', config: CONFIG })
    fs.freeze()
    const started = performance.now()
    const listing = await backend.ls('/')
    expect(listing.error).toMatch(/timed out after 200 ms: the store did not answer/)
    const download = await backend.readRaw('/pixel.png')
    expect(download.error).toMatch(/timed out after 200 ms/)
    expect(performance.now() - started).toBeLessThan(5000)
  })
})
