/**
 * The in-memory job of the peer table: `memoryFiles` files of 200 B in 100
 * directories, each written, then read, then edited once (a unique marker
 * replaced); one run is all three passes on a fresh store (made untimed,
 * with its directories).
 *
 * limit: raw memfs `Volume` (writeFileSync / readFileSync(utf8) / readFileSync
 * + exactly-once indexOf + splice + writeFileSync); seamfs: `MemoryFileSystem`
 * writeText / readText / editText after resolve; deepagents: `StateBackend`
 * (legacy runtime form; the bench merges each `filesUpdate` into the state in
 * place, where LangGraph's reducer would copy the whole map per update) and
 * `StoreBackend` over LangGraph's `InMemoryStore`; flystorage over
 * `InMemoryStorageAdapter` and just-bash's `InMemoryFs` (neither has an edit:
 * their read + the limit's splice + their write).
 *
 * Two floors under memfs, in the "other" slot: memfs's lower layer (the
 * `Superblock` the `Volume` calls: writeFile / getResolvedLinkOrThrow + the
 * node's string), and memfs's nodes with no API at all (the memory backend's
 * own node helpers: a walk by name, a new link and node, a buffer swapped in;
 * no version, guard, check or text rule). The second is what storing in memfs
 * costs before any contract; the goal is seamfs at ≤ 0.30× raw memfs.
 */
import { Volume } from 'memfs'
import type { Link, Superblock } from '@jsonjoy.com/fs-core'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { checked, runRounds, spliceOnce, tryColumn, type Column, type JobResult, type Sizes, type Slot, type Unavailable } from './harness.js'
import { deepagents, flyMemory, justBashFs, langGraphMemoryStore, type DeepAgentsBackend } from './load.js'

/** open(2) flags of a create-or-truncate write: O_WRONLY | O_CREAT | O_TRUNC. */
const WRITE_FLAGS = 0o1101

/** The memory backend's node helpers (not part of its package API: loaded from its build for this floor only). */
interface NodeHelpers {
  walk(root: Link, path: string): Link | null | undefined
  bytesOf(node: Link['node']): Uint8Array
  createFileLink(core: Superblock, dir: Link, name: string, mode: number, owner: { uid: number; gid: number }, at: Date): Link
  replaceContent(core: Superblock, link: Link, bytes: Uint8Array, at: Date): void
}

async function memfsNodes(): Promise<NodeHelpers> {
  return (await import(new URL('../../../packages/backend-memory/dist/nodes.js', import.meta.url).href)) as NodeHelpers
}

function fail(path: string): never {
  throw new Error(`${path}: not a plain path`)
}

/** The three passes on one store, each a per-file operation. */
interface Store {
  write(path: string, content: string): unknown
  read(path: string): unknown
  edit(path: string, oldString: string, newString: string): unknown
}

export async function memoryJob(size: Sizes): Promise<JobResult> {
  const count = size.memoryFiles
  const paths = Array.from({ length: count }, (_, i) => `/p/d${String(i % 100).padStart(2, '0')}/f${String(i).padStart(5, '0')}.txt`)
  const dirs = [...new Set(paths.map((p) => p.slice(0, p.lastIndexOf('/'))))]
  const markers = paths.map((_, i) => `marker-${String(i).padStart(5, '0')}`)
  const contents = markers.map((m) => `${m} `.padEnd(200, 'lorem ipsum dolor sit amet '))
  const edited = paths.map((_, i) => `edited-${i}`)

  /** A column whose store is rebuilt before every round; `sync` stores are called without `await`. */
  const column = (slot: Slot, label: string | undefined, fresh: () => Promise<Store>, sync: boolean): Column => {
    let store: Store
    return {
      slot,
      ...(label === undefined ? {} : { label }),
      async prepare() {
        store = await fresh()
      },
      async run() {
        let last: unknown
        if (sync) {
          for (let i = 0; i < count; i++) store.write(paths[i] as string, contents[i] as string)
          for (let i = 0; i < count; i++) last = store.read(paths[i] as string)
          for (let i = 0; i < count; i++) store.edit(paths[i] as string, markers[i] as string, edited[i] as string)
        } else {
          for (let i = 0; i < count; i++) await store.write(paths[i] as string, contents[i] as string)
          for (let i = 0; i < count; i++) last = await store.read(paths[i] as string)
          for (let i = 0; i < count; i++) await store.edit(paths[i] as string, markers[i] as string, edited[i] as string)
        }
        if (last !== contents[count - 1]) throw new Error('read returned other content')
        const after = await store.read(paths[count - 1] as string)
        if (typeof after !== 'string' || !after.startsWith(edited[count - 1] as string)) throw new Error('edit not visible')
      },
    }
  }

  const limit = async (): Promise<Store> => {
    const vol = new Volume()
    for (const dir of dirs) vol.mkdirSync(dir, { recursive: true })
    return {
      write: (p, c) => vol.writeFileSync(p, c),
      read: (p) => vol.readFileSync(p, 'utf8'),
      edit: (p, o, n) => vol.writeFileSync(p, spliceOnce(vol.readFileSync(p, 'utf8') as string, o, n)),
    }
  }
  const seamfs = async (): Promise<Store> => {
    const fs = new MemoryFileSystem()
    for (const dir of dirs) fs.volume.mkdirSync(dir, { recursive: true })
    return {
      write: async (p, c) => fs.writeText(await fs.resolve(p), c),
      read: async (p) => fs.readText(await fs.resolve(p)),
      edit: async (p, o, n) => fs.editText(await fs.resolve(p), { oldString: o, newString: n, replaceAll: false }),
    }
  }
  const superblock = async (): Promise<Store> => {
    const vol = new Volume()
    for (const dir of dirs) vol.mkdirSync(dir, { recursive: true })
    const core = vol._core
    const text = (p: string): string => core.getResolvedLinkOrThrow(p).getNode().getString()
    return {
      write: (p, c) => core.writeFile(p, Buffer.from(c), WRITE_FLAGS, 0o644),
      read: text,
      edit: (p, o, n) => core.writeFile(p, Buffer.from(spliceOnce(text(p), o, n)), WRITE_FLAGS, 0o644),
    }
  }
  const nodes = async (): Promise<Store> => {
    const helpers = await memfsNodes()
    const fs = new MemoryFileSystem()
    for (const dir of dirs) fs.volume.mkdirSync(dir, { recursive: true })
    const core = fs.volume._core
    const owner = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 }
    const found = (p: string): Link => helpers.walk(core.root, p) ?? fail(p)
    const text = (p: string): string => {
      const bytes = helpers.bytesOf(found(p).node)
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString()
    }
    return {
      write: (p, c) => {
        const at = new Date()
        const slash = p.lastIndexOf('/')
        const link = helpers.createFileLink(core, found(p.slice(0, slash)), p.slice(slash + 1), 0o644, owner, at)
        helpers.replaceContent(core, link, Buffer.from(c), at)
      },
      read: text,
      edit: (p, o, n) => helpers.replaceContent(core, found(p), Buffer.from(spliceOnce(text(p), o, n)), new Date()),
    }
  }
  const deepStore = (backend: DeepAgentsBackend, apply: (update: Record<string, unknown> | null | undefined) => void): Store => ({
    write: async (p, c) => apply(checked(await backend.write(p, c)).filesUpdate),
    read: async (p) => checked(await backend.read(p)).content,
    edit: async (p, o, n) => apply(checked(await backend.edit(p, o, n, false)).filesUpdate),
  })
  const deepState = async (): Promise<Store> => {
    const { StateBackend } = await deepagents()
    const state = { files: {} as Record<string, unknown> }
    return deepStore(new StateBackend({ state }), (update) => void (update && Object.assign(state.files, update)))
  }
  const deepStoreBackend = async (): Promise<Store> => {
    const { StoreBackend } = await deepagents()
    return deepStore(new StoreBackend({ store: await langGraphMemoryStore(), namespace: ['bench'] }), () => undefined)
  }
  const fly = async (): Promise<Store> => {
    const storage = await flyMemory()
    const key = (p: string): string => p.slice(1)
    return {
      write: (p, c) => storage.write(key(p), c),
      read: (p) => storage.readToString(key(p)),
      edit: async (p, o, n) => storage.write(key(p), spliceOnce(await storage.readToString(key(p)), o, n)),
    }
  }
  const justBash = async (): Promise<Store> => {
    const fs = await justBashFs()
    for (const dir of dirs) await fs.mkdir(dir, { recursive: true })
    return {
      write: (p, c) => fs.writeFile(p, c),
      read: (p) => fs.readFile(p),
      edit: async (p, o, n) => fs.writeFile(p, spliceOnce(await fs.readFile(p), o, n)),
    }
  }

  /** Builds one store up front so that a missing package shows as n/a before any round. */
  const probe = (slot: Slot, label: string | undefined, fresh: () => Promise<Store>, sync = false): Promise<Column | Unavailable> =>
    tryColumn(slot, label, async () => {
      await fresh()
      return column(slot, label, fresh, sync)
    })

  const entries = [
    await probe('limit', undefined, limit, true),
    await probe('seamfs', undefined, seamfs),
    await probe('deepagents', 'state', deepState),
    await probe('deepagents', 'store', deepStoreBackend),
    await probe('flystorage', undefined, fly),
    await probe('other', 'just-bash', justBash),
    await probe('other', 'memfs Superblock (lower layer)', superblock, true),
    await probe('other', 'memfs nodes, no API (store floor)', nodes, true),
  ]
  const title = `memory: ${count.toLocaleString('en')} × 200 B files, write + read + edit`
  return runRounds('memory', title, entries, size.rounds)
}
