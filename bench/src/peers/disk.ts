/**
 * The disk jobs of the peer table: durable writes, edits of 1 MiB files, a
 * 10,000-entry listing, many small reads and a 2,000-line window of a large file, each as the
 * limit (raw `node:fs/promises`), the seamfs contract (`LocalFileSystem`: resolve + the contract
 * call), the seamfs tools (`createFileToolsByName` over the same `LocalFileSystem`, as a harness
 * runs them: the default fence, a read-before-write `ObservationPolicy`, the model's text and the
 * value built), deepagents (`FilesystemBackend`, virtualMode), the MCP filesystem server's lib.js
 * helpers (validatePath + the helper its tool calls) and flystorage (`FileStorage` over
 * `LocalStorageAdapter`).
 */
import { mkdir, readdir, readFile, realpath, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { LocalFileSystem } from '@seamfs/backend-local'
import { ObservationPolicy } from '@seamfs/core'
import { createFileToolsByName, type FileToolsByName, type ListValue, type ReadValue, type ToolResult } from '@seamfs/tools'
import {
  checked,
  fileNames,
  filler,
  freshDir,
  rawDurableWrite,
  runRounds,
  spliceOnce,
  tryColumn,
  type Column,
  type JobResult,
  type Sizes,
  type Slot,
  type Unavailable,
} from './harness.js'
import { deepagents, flyLocal, mcpLib, type DeepAgentsBackend, type FlyStorage, type McpLib } from './load.js'

/** One handle per contender, all rooted at the job's data directory. */
interface Contenders {
  readonly root: string
  readonly seamfs: LocalFileSystem
  /** The tools over `seamfs`, with the default fence and a read-before-write policy. */
  readonly tools: FileToolsByName
  readonly deep: () => Promise<DeepAgentsBackend>
  readonly mcp: () => Promise<McpLib>
  readonly fly: () => Promise<FlyStorage>
}

async function contenders(dataDir: string): Promise<Contenders> {
  const root = await realpath(dataDir)
  const seamfs = new LocalFileSystem({ cwd: root })
  return {
    root,
    seamfs,
    tools: createFileToolsByName({ fs: seamfs, cwd: root, policy: new ObservationPolicy() }),
    deep: async () => new (await deepagents()).FilesystemBackend({ rootDir: root, virtualMode: true }),
    mcp: async () => {
      const lib = await mcpLib()
      lib.setAllowedDirectories([root]) // what the server's main module does with its command-line roots
      return lib
    },
    fly: () => flyLocal(root),
  }
}

/** The result of a tool call, or the call's error text thrown. */
function succeeded<V>(result: ToolResult<V>): ToolResult<V> {
  if (result.isError) throw new Error(result.text)
  return result
}

/** The path each peer takes: deepagents a virtual absolute path, flystorage a root-relative one, the rest absolute. */
const virtual = (c: Contenders, abs: string): string => `/${relative(c.root, abs)}`
const rel = (c: Contenders, abs: string): string => relative(c.root, abs)

/**
 * The same per-path operation for each contender. `columns` builds one column
 * per slot from a factory that gets the slot's "do it on this path" function.
 */
async function perSlot(
  c: Contenders,
  ops: {
    limit: (abs: string) => Promise<void>
    seamfs: (abs: string) => Promise<void>
    tools: (abs: string) => Promise<void>
    deepagents: (deep: DeepAgentsBackend, abs: string) => Promise<void>
    mcp: (lib: McpLib, abs: string) => Promise<void>
    flystorage: (fly: FlyStorage, abs: string) => Promise<void>
  },
  column: (slot: Slot, op: (abs: string) => Promise<void>, notDurable: boolean) => Column,
  durableJob: boolean,
): Promise<Array<Column | Unavailable>> {
  return [
    column('limit', ops.limit, false),
    column('seamfs', ops.seamfs, false),
    column('tools', ops.tools, false),
    await tryColumn('deepagents', undefined, async () => {
      const deep = await c.deep()
      return column('deepagents', (abs) => ops.deepagents(deep, abs), durableJob)
    }),
    await tryColumn('mcp', undefined, async () => {
      const lib = await c.mcp()
      return column('mcp', (abs) => ops.mcp(lib, abs), durableJob)
    }),
    await tryColumn('flystorage', undefined, async () => {
      const fly = await c.fly()
      return column('flystorage', (abs) => ops.flystorage(fly, abs), durableJob)
    }),
  ]
}

/** Job 1: `files` creates then `files` overwrites of 4 KiB in a fresh directory per column and round. */
export async function writeJob(dataDir: string, size: Sizes): Promise<JobResult> {
  const c = await contenders(dataDir)
  const names = fileNames(size.files)
  const contents = new Map<number, { create: string[]; overwrite: string[] }>()
  const contentsOf = (round: number): { create: string[]; overwrite: string[] } => {
    let entry = contents.get(round)
    if (entry === undefined) {
      entry = {
        create: names.map((_, i) => filler(`create round ${round} file ${i}`, 4096)),
        overwrite: names.map((_, i) => filler(`overwrite round ${round} file ${i}`, 4096)),
      }
      contents.set(round, entry)
    }
    return entry
  }
  let content = ''
  const ops = {
    limit: (abs: string) => rawDurableWrite(abs, content),
    seamfs: async (abs: string) => void (await c.seamfs.writeText(await c.seamfs.resolve(abs), content)),
    tools: async (abs: string) => void succeeded(await c.tools.write.execute({ file_path: abs, content })),
    deepagents: async (deep: DeepAgentsBackend, abs: string) => void checked(await deep.write(virtual(c, abs), content)),
    mcp: async (lib: McpLib, abs: string) => lib.writeFileContent(await lib.validatePath(abs), content),
    flystorage: (fly: FlyStorage, abs: string) => fly.write(rel(c, abs), content),
  }
  const column = (slot: Slot, op: (abs: string) => Promise<void>, notDurable: boolean): Column => {
    let paths: string[] = []
    return {
      slot,
      notDurable,
      async prepare(round) {
        const dir = await freshDir(join(c.root, 'write', `${slot}-${round}`))
        paths = names.map((name) => join(dir, name))
        contentsOf(round)
      },
      async run(round) {
        const { create, overwrite } = contentsOf(round)
        for (let i = 0; i < paths.length; i++) {
          content = create[i] as string
          await op(paths[i] as string)
        }
        for (let i = 0; i < paths.length; i++) {
          content = overwrite[i] as string
          await op(paths[i] as string)
        }
        const probe = paths.length - 1
        if ((await readFile(paths[probe] as string, 'utf8')) !== overwrite[probe]) throw new Error('last overwrite not on disk')
      },
    }
  }
  const title = `${size.files.toLocaleString('en')} creates + ${size.files.toLocaleString('en')} overwrites of 4 KiB, durable (temp + fsync + rename + dir fsync)`
  return runRounds('write', title, await perSlot(c, ops, column, true), size.rounds)
}

const marker = (k: number, generation: number): string => `@@EDIT-${k}-g${generation}@@`

/** Job 2: `editFiles × editsPerFile` unique edits in 1 MiB files; each column edits its own copy of the files. */
export async function editJob(dataDir: string, size: Sizes): Promise<JobResult> {
  const c = await contenders(dataDir)
  const { editFiles, editsPerFile } = size
  const chunk = (1024 * 1024) / editsPerFile
  let oldString = ''
  let newString = ''
  const ops = {
    async limit(abs: string) {
      await rawDurableWrite(abs, spliceOnce(await readFile(abs, 'utf8'), oldString, newString))
    },
    seamfs: async (abs: string) => void (await c.seamfs.editText(await c.seamfs.resolve(abs), { oldString, newString, replaceAll: false })),
    tools: async (abs: string) => void succeeded(await c.tools.edit.execute({ file_path: abs, old_string: oldString, new_string: newString })),
    deepagents: async (deep: DeepAgentsBackend, abs: string) => void checked(await deep.edit(virtual(c, abs), oldString, newString, false)),
    // edit_file's helper: first match replaced, no exactly-once check, a unified diff built for the answer.
    mcp: async (lib: McpLib, abs: string) => void (await lib.applyFileEdits(await lib.validatePath(abs), [{ oldText: oldString, newText: newString }], false)),
    // flystorage has no edit: its read + the limit's exactly-once splice + its write.
    flystorage: async (fly: FlyStorage, abs: string) => fly.write(rel(c, abs), spliceOnce(await fly.readToString(rel(c, abs)), oldString, newString)),
  }
  const column = (slot: Slot, op: (abs: string) => Promise<void>, notDurable: boolean): Column => {
    const dir = join(c.root, 'edit', slot)
    const paths = fileNames(editFiles).map((name) => join(dir, name))
    let generation = -1
    return {
      slot,
      notDurable,
      async prepare() {
        if (generation >= 0) return
        await mkdir(dir, { recursive: true })
        for (const [f, path] of paths.entries()) {
          const parts = Array.from({ length: editsPerFile }, (_, k) => filler(`file ${f} ${marker(k, 0)}`, chunk))
          await writeFile(path, parts.join(''), { mode: 0o600 })
          // The read-before-write policy lets the tools edit what they have read: read once, untimed.
          if (slot === 'tools') succeeded(await c.tools.read.execute({ file_path: path, limit: 1 }))
        }
        generation = 0
      },
      async run() {
        for (const path of paths) {
          for (let k = 0; k < editsPerFile; k++) {
            oldString = marker(k, generation)
            newString = marker(k, generation + 1)
            await op(path)
          }
        }
        generation++
      },
    }
  }
  const title = `${(editFiles * editsPerFile).toLocaleString('en')} unique edits, one per 1 MiB file, durable`
  return runRounds('edit', title, await perSlot(c, ops, column, true), size.rounds)
}

const LISTINGS_PER_RUN = 5

/** Job 3: list one directory of `listEntries` plain files, names + types, sorted. Time per listing. */
export async function listJob(dataDir: string, size: Sizes): Promise<JobResult> {
  const c = await contenders(dataDir)
  const dir = join(c.root, 'list')
  await mkdir(dir)
  const names = fileNames(size.listEntries)
  for (let i = 0; i < names.length; i += 100) await Promise.all(names.slice(i, i + 100).map((name) => writeFile(join(dir, name), 'x')))
  const expect = (count: number, first: string | undefined): void => {
    if (count !== names.length || !(first ?? '').endsWith(names[0] as string)) throw new Error(`listing saw ${count} entries, first ${first}`)
  }
  const byName = (a: { name: string }, b: { name: string }): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  const ops = {
    async limit(abs: string) {
      const dirents = await readdir(abs, { withFileTypes: true })
      dirents.sort(byName)
      const entries = dirents.map((d) => ({ name: d.name, type: d.isFile() ? 'file' : d.isDirectory() ? 'directory' : 'other' }))
      expect(entries.length, entries[0]?.name)
    },
    async seamfs(abs: string) {
      const entries = await c.seamfs.listDir(await c.seamfs.resolve(abs))
      expect(entries.length, entries[0]?.name)
    },
    // The list tool shows a page of the listing (sorted, counted whole): the count and the first name are checked.
    async tools(abs: string) {
      const value = succeeded(await c.tools.list.execute({ path: abs })).value as ListValue
      expect(value.totalEntries, value.entries[0]?.name)
    },
    async deepagents(deep: DeepAgentsBackend, abs: string) {
      const files = checked(await deep.ls(virtual(c, abs))).files ?? []
      expect(files.length, files[0]?.path)
    },
    // list_directory's handler: validatePath + readdir(withFileTypes) + "[FILE] name" lines. The tool does
    // not sort; the bench adds the limit's sort so that every column returns the same sorted listing.
    async mcp(lib: McpLib, abs: string) {
      const entries = await readdir(await lib.validatePath(abs), { withFileTypes: true })
      entries.sort(byName)
      const lines = entries.map((entry) => `${entry.isDirectory() ? '[DIR]' : '[FILE]'} ${entry.name}`)
      expect(lines.join('\n').split('\n').length, lines[0])
    },
    // toArray() sorts by default, with a natural-order Intl.Collator (not code-point order).
    async flystorage(fly: FlyStorage, abs: string) {
      const entries = await fly.list(rel(c, abs), { deep: false }).toArray()
      expect(entries.length, entries[0]?.path)
    },
  }
  const column = (slot: Slot, op: (abs: string) => Promise<void>): Column => ({
    slot,
    async run() {
      for (let n = 0; n < LISTINGS_PER_RUN; n++) await op(dir)
    },
  })
  const title = `list a ${size.listEntries.toLocaleString('en')}-entry directory, names + types, sorted`
  return runRounds('list', title, await perSlot(c, ops, column, false), size.rounds, LISTINGS_PER_RUN)
}

/** Rounds of the read job run it this many times and report the time of one: one run is a few ms, within a GC pause's reach. */
const READ_RUNS_PER_ROUND = 5

/** Job 5: `reads` reads of one 200 B file. */
export async function readJob(dataDir: string, size: Sizes): Promise<JobResult> {
  const c = await contenders(dataDir)
  const file = join(c.root, 'small.txt')
  const content = filler('small', 200)
  await writeFile(file, content)
  const expect = (text: unknown): void => {
    if (text !== content) throw new Error('read returned other content')
  }
  // The tools' lines are the file's lines, compared one by one: a check of the same strength as the
  // others', which builds nothing of its own to be timed with the tool.
  const contentLines = content.split('\n')
  const expectLines = (lines: readonly { readonly text: string }[]): void => {
    if (lines.length !== contentLines.length) throw new Error('read returned other lines')
    for (let i = 0; i < lines.length; i++) if (lines[i]?.text !== contentLines[i]) throw new Error('read returned other lines')
  }
  const ops = {
    limit: async (abs: string) => expect(await readFile(abs, 'utf8')),
    seamfs: async (abs: string) => expect(await c.seamfs.readText(await c.seamfs.resolve(abs))),
    // The model's text (line-numbered) and the value are built; the lines must be the file's.
    tools: async (abs: string) => expectLines((succeeded(await c.tools.read.execute({ file_path: abs })).value as ReadValue).lines),
    // read_file's backend call (offset 0, limit 500 lines: the whole file); the tool adds line numbers later.
    deepagents: async (deep: DeepAgentsBackend, abs: string) => expect(checked(await deep.read(virtual(c, abs))).content),
    mcp: async (lib: McpLib, abs: string) => expect(await lib.readFileContent(await lib.validatePath(abs))),
    flystorage: async (fly: FlyStorage, abs: string) => expect(await fly.readToString(rel(c, abs))),
  }
  const column = (slot: Slot, op: (abs: string) => Promise<void>): Column => ({
    slot,
    async run() {
      for (let run = 0; run < READ_RUNS_PER_ROUND; run++) for (let n = 0; n < size.reads; n++) await op(file)
    },
  })
  const title = `${size.reads.toLocaleString('en')} reads of one 200 B file`
  return runRounds('read', title, await perSlot(c, ops, column, false), size.rounds, READ_RUNS_PER_ROUND)
}
