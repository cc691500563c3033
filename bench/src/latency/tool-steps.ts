/**
 * The tool side of the tool table, the same on S3 and SFTP: the tools as a harness mounts them
 * (the CLI's `loadHarness`: the default fence, a read-before-write `ObservationPolicy`, the default
 * config), each call checked for the answer it must give.
 */
import { ObservationPolicy, type FileSystem } from '@seamfs/core'
import { createFileToolsByName, DEFAULT_CONFIG, type FileTool } from '@seamfs/tools'
import { NEEDLE, readFile, SMALL, TREE_DIRS, TREE_FILES_PER_DIR, WRITTEN } from './fixtures.js'
import type { Step } from './tool-table.js'

/** The rows, in table order. */
export const TOOL_ROWS = ['read 4 KiB', 'write new file', 'overwrite after read', 'edit after read', 'list 100', 'glob 200 files', 'grep 200 files'] as const
export type ToolRowName = (typeof TOOL_ROWS)[number]

/** Reads and listings a glob or grep keeps in flight: the tools' shipped default, which the harness keeps. */
export const SEARCH_CONCURRENCY = DEFAULT_CONFIG.searchConcurrency
export const TREE_FILES = TREE_DIRS * TREE_FILES_PER_DIR
/** Files of the tree whose first line holds {@link NEEDLE}. */
export const NEEDLE_FILES = TREE_FILES / 10
export const SMALL_LINES = SMALL.split('\n').length - (SMALL.endsWith('\n') ? 1 : 0)

/** Runs one tool call; throws unless it succeeded with a value `check` accepts. */
async function call<V>(tool: FileTool<V>, args: Record<string, unknown>, check: (value: V) => boolean): Promise<void> {
  const result = await tool.execute(args)
  if (result.isError || result.value === undefined) throw new Error(`${tool.name}: ${result.text}`)
  if (!check(result.value)) throw new Error(`${tool.name}: not the expected answer: ${result.text.slice(0, 300)}`)
}

/** The measured tool call of each row, over `fs` (its own files: `data/*-tools*`). */
export function toolSteps(fs: FileSystem): Record<ToolRowName, Step> {
  const tools = createFileToolsByName({ fs, policy: new ObservationPolicy() })
  const read = (path: string): Promise<void> => call(tools.read, { file_path: path }, (v) => v.lines.length > 0)
  let overwritten = false
  let mark = 'A'
  return {
    'read 4 KiB': {
      run: (rep) => call(tools.read, { file_path: readFile(rep) }, (v) => v.totalLines === SMALL_LINES && v.lines[0]?.text === 'MARK-A'),
    },
    'write new file': {
      run: (rep) => call(tools.write, { file_path: `data/new-tools-${rep}.txt`, content: WRITTEN }, (v) => v.operation === 'create'),
    },
    'overwrite after read': {
      before: () => read('data/over-tools.txt'),
      run: async () => {
        await call(
          tools.write,
          { file_path: 'data/over-tools.txt', content: overwritten ? SMALL : WRITTEN },
          (v) => v.operation === 'update' && v.diff !== null,
        )
        overwritten = !overwritten
      },
    },
    'edit after read': {
      before: () => read('data/edit-tools.txt'),
      run: async () => {
        const next = mark === 'A' ? 'B' : 'A'
        await call(tools.edit, { file_path: 'data/edit-tools.txt', old_string: `MARK-${mark}`, new_string: `MARK-${next}` }, (v) =>
          // The diff, as the model reads it (the whole text after is built only when asked for).
          v.diff.includes(`+MARK-${next}`),
        )
        mark = next
      },
    },
    'list 100': {
      run: () => call(tools.list, { path: 'list100' }, (v) => v.totalEntries === 100 && v.counts.files === 100),
    },
    'glob 200 files': {
      run: () => call(tools.glob, { pattern: '*.txt', path: 'tree' }, (v) => v.totalPaths === TREE_FILES),
    },
    'grep 200 files': {
      run: () => call(tools.grep, { pattern: NEEDLE, path: 'tree' }, (v) => v.totalMatches === NEEDLE_FILES),
    },
  }
}
