/**
 * The peers, loaded at run time so that a missing or broken package becomes an
 * "n/a (reason)" cell rather than a failed build. Each interface declares only
 * what the bench calls, checked against the package's own .d.ts / dist code.
 */

/** deepagents' BackendProtocolV2 methods the jobs call (FilesystemBackend, StateBackend, StoreBackend). */
export interface DeepAgentsBackend {
  write(path: string, content: string): WriteResultLike | Promise<WriteResultLike>
  read(path: string, offset?: number, limit?: number): { content?: unknown; error?: string } | Promise<{ content?: unknown; error?: string }>
  edit(path: string, oldString: string, newString: string, replaceAll?: boolean): WriteResultLike | Promise<WriteResultLike>
  ls(
    path: string,
  ): { files?: Array<{ path: string; is_dir?: boolean }>; error?: string } | Promise<{ files?: Array<{ path: string; is_dir?: boolean }>; error?: string }>
}

export interface WriteResultLike {
  error?: string
  filesUpdate?: Record<string, unknown> | null
}

export interface DeepAgentsModule {
  FilesystemBackend: new (options: { rootDir: string; virtualMode: boolean }) => DeepAgentsBackend
  /** Legacy runtime form: the caller applies `filesUpdate` to `state.files`, as the middleware's reducer does. */
  StateBackend: new (runtime: { state: { files: Record<string, unknown> } }) => DeepAgentsBackend
  StoreBackend: new (options: { store: unknown; namespace: string[] }) => DeepAgentsBackend
}

/** @modelcontextprotocol/server-filesystem's dist/lib.js: the helpers its tools call. */
export interface McpLib {
  setAllowedDirectories(directories: string[]): void
  validatePath(requested: string): Promise<string>
  readFileContent(path: string): Promise<string>
  writeFileContent(path: string, content: string): Promise<void>
  applyFileEdits(path: string, edits: Array<{ oldText: string; newText: string }>, dryRun?: boolean): Promise<string>
}

export interface FlyListing {
  toArray(sorted?: boolean): Promise<Array<{ path: string; type: 'file' | 'directory' }>>
}

export interface FlyStorage {
  write(path: string, contents: string): Promise<void>
  readToString(path: string): Promise<string>
  list(path: string, options?: { deep?: boolean }): FlyListing
}

export interface FlyStorageModule {
  FileStorage: new (adapter: unknown) => FlyStorage
}

export interface JustBashFs {
  writeFile(path: string, content: string): Promise<void>
  readFile(path: string): Promise<string>
  mkdir(path: string, options?: { recursive?: boolean }): Promise<void>
}

/** `import()` with a runtime specifier: types come from the interfaces above. */
export async function load<T>(specifier: string): Promise<T> {
  return (await import(specifier)) as T
}

export const deepagents = (): Promise<DeepAgentsModule> => load<DeepAgentsModule>('deepagents')
export const mcpLib = (): Promise<McpLib> => load<McpLib>('@modelcontextprotocol/server-filesystem/dist/lib.js')
export const flystorage = (): Promise<FlyStorageModule> => load<FlyStorageModule>('@flystorage/file-storage')

export async function flyLocal(root: string): Promise<FlyStorage> {
  const { FileStorage } = await flystorage()
  const { LocalStorageAdapter } = await load<{ LocalStorageAdapter: new (root: string) => unknown }>('@flystorage/local-fs')
  return new FileStorage(new LocalStorageAdapter(root))
}

export async function flyMemory(): Promise<FlyStorage> {
  const { FileStorage } = await flystorage()
  const { InMemoryStorageAdapter } = await load<{ InMemoryStorageAdapter: new () => unknown }>('@flystorage/in-memory')
  return new FileStorage(new InMemoryStorageAdapter())
}

export async function justBashFs(): Promise<JustBashFs> {
  const { InMemoryFs } = await load<{ InMemoryFs: new () => JustBashFs }>('just-bash')
  return new InMemoryFs()
}

/** deepagents' StoreBackend needs a LangGraph BaseStore; InMemoryStore comes with deepagents' own dependencies. */
export async function langGraphMemoryStore(): Promise<unknown> {
  const { InMemoryStore } = await load<{ InMemoryStore: new () => unknown }>('@langchain/langgraph-checkpoint')
  return new InMemoryStore()
}
