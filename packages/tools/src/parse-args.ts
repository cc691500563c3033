import { resolveConfig } from './config.js'
import { deleteInput, type DeleteArgs } from './delete-tool.js'
import { createDirectoryInput, type CreateDirectoryArgs } from './directory-tool.js'
import { editInput, type EditArgs } from './edit-tool.js'
import type { FileToolName } from './file-tools.js'
import { globInput, type GlobArgs } from './glob-tool.js'
import { grepInput, type GrepArgs } from './grep-tool.js'
import { infoInput, type InfoArgs } from './info-tool.js'
import { listInput, type ListArgs } from './list-tool.js'
import { moveInput, type MoveArgs } from './move-tool.js'
import { readFilesInput, type ReadFilesArgs } from './read-files-tool.js'
import { readInput, type ReadArgs } from './read-tool.js'
import { listRootsInput, type ListRootsArgs } from './roots-tool.js'
import { treeInput, type TreeArgs } from './tree-tool.js'
import { failure, ToolInputError } from './results.js'
import type { ToolInput } from './tool-kit.js'
import type { ToolResult, ToolsConfig } from './types.js'
import { writeInput, type WriteArgs } from './write-tool.js'

/** The checked arguments of each tool, as {@link parseArgs} returns them (defaults filled in). */
export interface FileToolArgs {
  readonly list: ListArgs
  readonly read: ReadArgs
  readonly write: WriteArgs
  readonly edit: EditArgs
  readonly glob: GlobArgs
  readonly grep: GrepArgs
  readonly read_files: ReadFilesArgs
  readonly tree: TreeArgs
  readonly info: InfoArgs
  readonly list_roots: ListRootsArgs
  readonly create_directory: CreateDirectoryArgs
  readonly move: MoveArgs
  readonly delete: DeleteArgs
}

/**
 * What {@link parseArgs} found: the tool's checked arguments, or the input error the tool would
 * answer, with the very result its `execute` returns for them (`isError`, no `code`, the text
 * `Error: <message>`).
 */
export type ArgsCheck<A> = { readonly ok: true; readonly args: A } | { readonly ok: false; readonly error: ToolInputError; readonly result: ToolResult<never> }

/** Options of {@link parseArgs}. */
export interface ParseArgsOptions {
  /** The tools' config, as given to `createFileTools` (caps such as `readLimit` bound some arguments). */
  readonly config?: Partial<ToolsConfig> | undefined
}

const INPUTS: { readonly [N in FileToolName]: (config: ToolsConfig) => ToolInput<FileToolArgs[N]> } = {
  list: listInput,
  read: readInput,
  write: writeInput,
  edit: editInput,
  glob: globInput,
  grep: grepInput,
  read_files: readFilesInput,
  tree: treeInput,
  info: infoInput,
  list_roots: listRootsInput,
  create_directory: createDirectoryInput,
  // Whether the backend moves directories words the schema's description only, never the check.
  move: () => moveInput(true),
  delete: deleteInput,
}

/**
 * Checks a call's arguments exactly as the tool named `toolName` does before it touches the
 * filesystem, without one: the same check its `execute` runs, against its `inputSchema` (an
 * unknown or missing key, a wrong type, a value out of bounds, `null` for an optional key meaning
 * absent) and its own rules on the arguments alone (`edit`'s two forms, `old_string` equal to
 * `new_string`; `glob`'s pattern and `grep`'s `include` as globs; `grep`'s pattern as a regular
 * expression). For a host that validates tool calls itself, and must answer a refused one in the
 * tool's words.
 *
 * - `{ ok: true, args }`: the checked arguments, defaults filled in (`read`'s `limit` is
 *   `config.readLimit` when absent);
 * - `{ ok: false, error, result }`: a {@link ToolInputError} whose message is the tool's
 *   (`unknown argument "x" (allowed: …)`, `offset must be a positive integer`, …), and `result`,
 *   what `execute` returns for these arguments (`{ isError: true, text: 'Error: <message>' }`);
 * - a `toolName` no tool has is a `TypeError`; so are an unknown config key and a config value
 *   that is not a positive integer (a `RangeError`), as for `createFileTools`.
 *
 * A tool the backend does not offer (`move` without `capabilities.rename`) is checked all the same.
 */
export function parseArgs<N extends FileToolName>(toolName: N, args: unknown, options?: ParseArgsOptions): ArgsCheck<FileToolArgs[N]>
export function parseArgs(toolName: string, args: unknown, options?: ParseArgsOptions): ArgsCheck<FileToolArgs[FileToolName]>
export function parseArgs(toolName: string, args: unknown, options: ParseArgsOptions = {}): ArgsCheck<FileToolArgs[FileToolName]> {
  if (!Object.hasOwn(INPUTS, toolName)) throw new TypeError(`tools: no tool is named ${JSON.stringify(toolName)}`)
  const input = INPUTS[toolName as FileToolName](resolveConfig(options.config))
  try {
    return { ok: true, args: input.parse(args) }
  } catch (err) {
    if (!(err instanceof ToolInputError)) throw err
    return { ok: false, error: err, result: failure(err) }
  }
}
