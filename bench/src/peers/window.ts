/**
 * The window job of the peer table: lines 500,001–502,000 of a 1,000,000-line file (60 B a line,
 * about 60 MB), the read an agent makes of a large log. Every column returns the same 2,000
 * lines (checked: first and last line):
 * - limit: `readFile` of the whole file, lines counted on the bytes with `Buffer#indexOf`, only
 *   the window decoded (no UTF-8 validation);
 * - seamfs contract: the same scan over `streamBytes` chunks (a line split across chunks carried);
 * - seamfs tools: the `read` tool with `offset`/`limit` (readMaxBytes raised so that the byte cap
 *   does not cut the 2,000 lines short), the numbered text and the value built;
 * - deepagents: `FilesystemBackend.read(path, offset, limit)`;
 * - MCP fs server: `readFileContent` then the window of its lines (its tools take only head/tail);
 * - flystorage: `readToString` then the window of its lines.
 */
import { createWriteStream } from 'node:fs'
import { readFile, realpath } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { LocalFileSystem } from '@seamfs/backend-local'
import { ObservationPolicy } from '@seamfs/core'
import { createFileToolsByName, type ReadValue } from '@seamfs/tools'
import { checked, runRounds, tryColumn, type Column, type JobResult, type Sizes, type Slot } from './harness.js'
import { deepagents, flyLocal, mcpLib } from './load.js'

const WINDOW = 2000
const LINE_BYTES = 60

/** Line `n` (1-based) of the file, without its `\n`: exactly LINE_BYTES - 1 characters. */
const lineText = (n: number): string => `line ${String(n).padStart(9, '0')} `.padEnd(LINE_BYTES - 1, 'x')

async function writeLines(path: string, lines: number): Promise<void> {
  const out = createWriteStream(path)
  const batch = 10_000
  for (let n = 1; n <= lines; n += batch) {
    const chunk = Array.from({ length: Math.min(batch, lines - n + 1) }, (_, i) => `${lineText(n + i)}\n`).join('')
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()))
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())))
}

/** Lines `[offset, offset + WINDOW)` (1-based) of the text whose bytes come in `chunks`: counted on bytes, the window decoded. */
async function byteWindow(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, offset: number): Promise<string[]> {
  const out: string[] = []
  let line = 1
  let carry: Buffer | undefined
  for await (const chunk of chunks) {
    let buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    if (carry !== undefined) buf = Buffer.concat([carry, buf])
    let start = 0
    for (let nl = buf.indexOf(10); nl !== -1; nl = buf.indexOf(10, start)) {
      if (line >= offset) out.push(buf.toString('utf8', start, nl))
      line++
      start = nl + 1
      if (out.length === WINDOW) return out
    }
    carry = start < buf.length ? buf.subarray(start) : undefined
  }
  return out
}

const windowOfText = (text: string, offset: number): string[] => text.split('\n').slice(offset - 1, offset - 1 + WINDOW)

/** Job: the 2,000-line window at the middle of a `windowLines`-line file, each column once per round. */
export async function windowJob(dataDir: string, size: Sizes): Promise<JobResult> {
  const root = await realpath(dataDir)
  const file = join(root, 'big.log')
  await writeLines(file, size.windowLines)
  const offset = size.windowLines / 2 + 1
  const expect = (lines: readonly string[]): void => {
    if (lines.length !== WINDOW || lines[0] !== lineText(offset) || lines.at(-1) !== lineText(offset + WINDOW - 1)) {
      throw new Error(`window has ${lines.length} lines, first ${lines[0]?.slice(0, 20)}`)
    }
  }
  const seamfs = new LocalFileSystem({ cwd: root })
  const tools = createFileToolsByName({ fs: seamfs, cwd: root, policy: new ObservationPolicy(), config: { readMaxBytes: 256 * 1024 } })
  const column = (slot: Slot, op: () => Promise<readonly string[]>): Column => ({ slot, run: async () => expect(await op()) })
  const columns = [
    column('limit', async () => byteWindow([await readFile(file)], offset)),
    column('seamfs', async () => byteWindow(await seamfs.streamBytes(await seamfs.resolve(file)), offset)),
    column('tools', async () => {
      const result = await tools.read.execute({ file_path: file, offset, limit: WINDOW })
      if (result.isError) throw new Error(result.text)
      return (result.value as ReadValue).lines.map((l) => l.text)
    }),
    await tryColumn('deepagents', undefined, async () => {
      const deep = new (await deepagents()).FilesystemBackend({ rootDir: root, virtualMode: true })
      // read_file's backend call, 0-based offset; the content comes back numbered ("     n\ttext").
      return column('deepagents', async () => {
        const content = checked(await deep.read(`/${relative(root, file)}`, offset - 1, WINDOW)).content
        const text = typeof content === 'string' ? content : String(content)
        return text.split('\n').map((l) => l.replace(/^\s*\d+\t/, ''))
      })
    }),
    await tryColumn('mcp', undefined, async () => {
      const lib = await mcpLib()
      lib.setAllowedDirectories([root])
      return column('mcp', async () => windowOfText(await lib.readFileContent(await lib.validatePath(file)), offset))
    }),
    await tryColumn('flystorage', undefined, async () => {
      const fly = await flyLocal(root)
      return column('flystorage', async () => windowOfText(await fly.readToString(relative(root, file)), offset))
    }),
  ]
  const title = `read lines ${offset.toLocaleString('en')}–${(offset + WINDOW - 1).toLocaleString('en')} of a ${size.windowLines.toLocaleString('en')}-line file`
  return runRounds('window', title, columns, size.rounds)
}
