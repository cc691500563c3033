/**
 * The agent run both AI SDK majors replay: read → edit → (the file changes behind the agent's
 * back) → edit, with the exact texts the model must receive.
 */
import { ObservationPolicy } from '@seamfs/core'
import { MemoryFileSystem } from '@seamfs/backend-memory'

/** The model's tool calls, in order. */
export const CALLS = [
  { toolName: 'read', input: { file_path: 'notes.txt' } },
  { toolName: 'edit', input: { file_path: 'notes.txt', old_string: 'alpha', new_string: 'ALPHA' } },
  { toolName: 'edit', input: { file_path: 'notes.txt', old_string: 'beta', new_string: 'BETA' } },
] as const

/** What the model receives for each call: the tool's text, the stale edit as an error. */
export const EXPECTED_OUTPUTS = [
  { type: 'text', value: '<path>/notes.txt</path>\n<type>file</type>\n<content>\n1: alpha\n2: beta\n\n(End of file - total 2 lines)\n</content>' },
  { type: 'text', value: 'The file /notes.txt has been updated successfully.\n\n@@ -1,2 +1,2 @@\n-alpha\n+ALPHA\n beta' },
  { type: 'error-text', value: 'Error: cannot edit "/notes.txt": file changed since it was read — re-read the file, then retry' },
]

/** The file after the agent's edit and the change behind its back; the stale edit must leave it so. */
export const CHANGED_BEHIND = 'gamma\nALPHA\nbeta\n'

/** A fresh store with `notes.txt` and a policy. */
export function setup(): { fs: MemoryFileSystem; policy: ObservationPolicy } {
  return { fs: new MemoryFileSystem({ files: { 'notes.txt': 'alpha\nbeta\n' } }), policy: new ObservationPolicy() }
}

/** Another process rewrites `notes.txt` (straight through the store, not through the tools). */
export async function changeBehindTheAgentsBack(fs: MemoryFileSystem): Promise<void> {
  await fs.writeText(await fs.resolve('notes.txt'), CHANGED_BEHIND)
}

/** The tool-result parts of a prompt, as the model received them. */
export function toolOutputs(prompt: ReadonlyArray<{ role: string; content: unknown }>): unknown[] {
  return prompt
    .filter((message) => message.role === 'tool')
    .flatMap((message) => message.content as Array<{ type: string; output?: unknown }>)
    .filter((part) => part.type === 'tool-result')
    .map((part) => part.output)
}

const b64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
/** A real 1×1 PNG, base64 and bytes. */
export const PNG = { base64: b64, bytes: Uint8Array.from(Buffer.from(b64, 'base64')) }
/** What `read` of {@link PNG} says in text, before the image. */
export const PNG_TEXT = '<path>/pixel.png</path>\n<type>image</type>\n<content>\n(image/png, 70 bytes, returned as image content)\n</content>'
