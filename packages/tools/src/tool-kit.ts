/**
 * The kernel every tool builds on: how a call finds its session and resolves its paths, how a
 * tool body turns any failure into a result, and the shape of a tool's input check. Tools import
 * it; it imports no tool.
 */
import type { FsTarget, PolicyOwner } from '@seamfs/core'
import { argsParser, NON_BLANK, type ToolArgs } from './args.js'
import { failure, withRemedy } from './results.js'
import type { JsonSchema, ToolContext, ToolDeps, ToolResult } from './types.js'

/**
 * What a tool accepts: its JSON Schema, and the check that turns a call's arguments into the
 * tool's typed arguments (defaults filled in), throwing a `ToolInputError` for what the schema, or
 * a rule of the tool on its arguments alone, refuses. The tool's `execute` and the public
 * `parseArgs` run the same check.
 */
export interface ToolInput<A> {
  readonly inputSchema: JsonSchema
  readonly parse: (args: unknown) => A
}

/**
 * A tool's input from its schema and `read`, which takes the schema-checked arguments to the
 * tool's (and may refuse them). `first`, when given, sees the raw arguments before the schema
 * check: a rule between arguments that must be told before what the schema says of either (an
 * argument that should not be there at all is not worth describing the shape of).
 */
export function toolInput<A>(inputSchema: JsonSchema, read: (checked: ToolArgs) => A, first?: (raw: Readonly<Record<string, unknown>>) => void): ToolInput<A> {
  const check = argsParser(inputSchema)
  return {
    inputSchema,
    parse: (args) => {
      if (first !== undefined && typeof args === 'object' && args !== null && !Array.isArray(args)) first(args as Record<string, unknown>)
      return read(check(args))
    },
  }
}

/** The checked arguments of a tool that takes one path and nothing else (`delete`, `create_directory`). */
export interface PathArgs {
  readonly path: string
}

/** The input of a tool whose one argument is a required, non-blank `path`, described to the model as `description`. */
export function pathInput(description: string): ToolInput<PathArgs> {
  const inputSchema = {
    type: 'object',
    properties: { path: { type: 'string', pattern: NON_BLANK, description } },
    required: ['path'],
    additionalProperties: false,
  }
  return toolInput(inputSchema, (a) => ({ path: a.string('path') }))
}

/** The context of a call that gave none: one shared object, not one per call. */
export const NO_CONTEXT: ToolContext = Object.freeze({})

/** Whose observations a call reads and records: the call's own session, else the tools instance's default one. */
export function sessionOf(deps: ToolDeps, context: ToolContext): PolicyOwner {
  return context.session ?? deps.session
}

export function resolveIn(deps: ToolDeps, path: string, context: ToolContext): Promise<FsTarget> {
  return deps.fs.resolve(path, { cwd: context.cwd ?? deps.cwd, signal: context.signal })
}

/**
 * Runs a tool body; every failure, whatever it is, becomes an `isError` result, worded with
 * `toolVerb` (the tool's own verb: `delete`, not the contract's `remove`) where given.
 */
export function run<V>(body: () => Promise<ToolResult<V>>, toolVerb?: string): Promise<ToolResult<V>> {
  // The body's promise with its failure caught: no async frame of its own around it.
  const failed = (err: unknown): ToolResult<V> => failure(err, toolVerb)
  try {
    return body().then(undefined, failed)
  } catch (err) {
    return Promise.resolve(failed(err))
  }
}

/** Runs a mutation; its refusal (from the policy too) is restated for the model: a remedy, the tool's argument names. */
export async function remedied<T>(mutation: () => Promise<T>, restate: (err: unknown) => unknown = withRemedy): Promise<T> {
  try {
    return await mutation()
  } catch (err) {
    throw restate(err)
  }
}

/** The annotations every mutating tool shares. */
export const mutating = { readOnlyHint: false, openWorldHint: false } as const
