/**
 * The tools as an MCP server (`@seamfs/mcp`). A package of its own, so hosts
 * that don't speak MCP never install the SDK.
 */
import { createRequire } from 'node:module'
import process from 'node:process'
import type { Readable, Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import type { PolicyOwner } from '@seamfs/core'
// The low-level `Server` (deprecated in favour of `McpServer`, which wants zod
// schemas) is the one that takes our JSON Schemas as they are.
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  RootsListChangedNotificationSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'
import { briefedDescription, type FileTool, type ToolResult } from '@seamfs/tools'
import { BoundedStdioTransport } from './mcp-stdio.js'
import { capStructuredContent } from './structured-cap.js'

/**
 * Default {@link McpServerOptions.maxResultBytes}: 1 MiB. The tools cap their
 * own output far below this (`read` at 50 KiB, `grep` at 250 matches); the cap
 * is the backstop for a host's own tools and raised configs.
 */
export const DEFAULT_MAX_RESULT_BYTES = 1024 * 1024
/** The smallest allowed result cap: room for the footer and some text. */
const MIN_RESULT_BYTES = 1024

/** The `_meta` key of a failed call's `FsError` code (`FS_NOT_OBSERVED`, `FS_STALE_VERSION`, …). */
export const MCP_CODE_META_KEY = 'seamfs/code'
/** The `_meta` key set to `true` on a failure that trying again may cure (a network drop, a timeout). */
export const MCP_RETRYABLE_META_KEY = 'seamfs/retryable'
/** The `_meta` key set to `true` on a failed mutation whose outcome is not known: it may have been made. */
export const MCP_INDETERMINATE_META_KEY = 'seamfs/indeterminate'

/**
 * The `_meta` key set when a success's `structuredContent` was over
 * `maxResultBytes`: `{ truncated: true, bytes }` when it was shrunk to fit,
 * `{ omitted: true, bytes }` when nothing could make it fit (`bytes`: its JSON
 * size before; the call is then an `FS_TOO_LARGE` failure). See {@link toMcpResult}.
 */
export const MCP_STRUCTURED_META_KEY = 'seamfs/structuredContent'

/** The structured output of a tool, as `FileTool.structured` declares it. */
export type ToolStructuredOutput = NonNullable<FileTool['structured']>

/** Options of {@link createMcpServer}. */
export interface McpServerOptions {
  /** The tools to expose, e.g. `createFileTools({ fs, policy })`; one MCP tool each, by its name. */
  readonly tools: readonly FileTool[]
  /** `serverInfo.name`; default `seamfs`. */
  readonly name?: string | undefined
  /** `serverInfo.version`; default this package's version. */
  readonly version?: string | undefined
  /**
   * The policy owner of every call, on every connection. Omit to get one fresh
   * session per connection (per transport), which is what one agent session is.
   */
  readonly session?: PolicyOwner | undefined
  /** Append each tool's `prompt` guidance to its MCP description (the only text a client shows the model); default true. */
  readonly includePrompt?: boolean | undefined
  /** Server `instructions` sent at initialization; default none. */
  readonly instructions?: string | undefined
  /**
   * The largest result text, and the largest `structuredContent` JSON, in
   * UTF-8 bytes (each on its own); a longer text is cut (see
   * {@link truncateResultText}), a larger structured content shrunk (see
   * {@link toMcpResult}). Default {@link DEFAULT_MAX_RESULT_BYTES}; at least
   * 1024, or `Infinity` for no cap.
   */
  readonly maxResultBytes?: number | undefined
  /**
   * The MCP roots protocol: when given and the client declares the `roots` capability, the roots it
   * lists become the fence of its calls. They are asked for once the connection is initialized, and
   * again on each `notifications/roots/list_changed`; a call waits for the answer (at most
   * {@link ROOTS_TIMEOUT_MS}). `within` gets the listed roots as paths of the store (the path of each
   * `file://` URI) and returns the tools fenced to them, by the same names as `tools` — a host builds
   * them over the fence it already has, so client roots can narrow it, never widen it.
   *
   * An empty list keeps `tools` (the client names nothing to narrow to). A list whose roots are not
   * `file://` URIs, an answer that fails or does not come in time, or a `within` that throws fails
   * every call closed, saying why, until a later list works. Without `within`, or from a client
   * without the capability, `tools` serve.
   */
  readonly roots?:
    | {
        readonly within: (roots: readonly McpRoot[]) => readonly FileTool[] | Promise<readonly FileTool[]>
        /** How long a call waits for the client's list; default {@link ROOTS_TIMEOUT_MS}. */
        readonly timeoutMs?: number | undefined
      }
    | undefined
}

/** A root the client listed: its URI, its name if any, and the store path it names. */
export interface McpRoot {
  readonly uri: string
  readonly name?: string | undefined
  /** The path of the `file://` URI (percent-decoded), as a path of the store. */
  readonly path: string
}

/** How long a call waits for the client's answer to `roots/list` before failing closed. */
export const ROOTS_TIMEOUT_MS = 10_000

let packageVersion: string | undefined

function ownVersion(): string {
  if (packageVersion === undefined) {
    try {
      // src/ and dist/ both sit one level below the package root.
      const pkg = createRequire(import.meta.url)('../package.json') as { version?: unknown }
      packageVersion = typeof pkg.version === 'string' ? pkg.version : '0.0.0'
    } catch {
      packageVersion = '0.0.0'
    }
  }
  return packageVersion
}

/**
 * One seamfs tool as an MCP tool definition; with `outputSchema` (the tool's
 * `structured.schema`) when the tool has structured output.
 */
export function toMcpTool(tool: FileTool, includePrompt = true): Tool {
  const a = tool.annotations
  return {
    name: tool.name,
    title: a.title,
    description: briefedDescription(tool, includePrompt),
    // Our schemas are JSON Schema objects with `type: 'object'` at the root, as MCP requires.
    inputSchema: tool.inputSchema as Tool['inputSchema'],
    ...(tool.structured === undefined ? {} : { outputSchema: tool.structured.schema as NonNullable<Tool['outputSchema']> }),
    annotations: {
      title: a.title,
      readOnlyHint: a.readOnlyHint,
      destructiveHint: a.destructiveHint,
      idempotentHint: a.idempotentHint,
      openWorldHint: a.openWorldHint,
    },
  }
}

function checkResultCap(maxBytes: number): number {
  if (maxBytes !== Number.POSITIVE_INFINITY && !(Number.isSafeInteger(maxBytes) && maxBytes >= MIN_RESULT_BYTES)) {
    throw new TypeError(`maxResultBytes must be an integer of at least ${MIN_RESULT_BYTES}, or Infinity; got ${String(maxBytes)}`)
  }
  return maxBytes
}

/**
 * `text` cut to at most `maxBytes` UTF-8 bytes, footer included, or `text` as
 * is when it fits. The cut falls on a character boundary, and on a line end
 * when one lies in the second half of what is kept; then a footer line:
 * `[output truncated at N bytes of M; narrow the request: …]`.
 */
export function truncateResultText(text: string, maxBytes: number = DEFAULT_MAX_RESULT_BYTES): string {
  // A UTF-16 code unit is at most 3 UTF-8 bytes: most texts fit without counting.
  if (text.length * 3 <= maxBytes) return text
  const total = Buffer.byteLength(text)
  if (total <= maxBytes) return text
  const footer = (kept: number): string => `\n[output truncated at ${kept} bytes of ${total}; narrow the request: use offset/limit, a narrower path or pattern]`
  const budget = Math.max(0, maxBytes - Buffer.byteLength(footer(maxBytes)))
  // encodeInto writes whole characters only, so `read` ends on a boundary.
  const { read } = new TextEncoder().encodeInto(text, new Uint8Array(budget))
  let kept = text.slice(0, read)
  const lineEnd = kept.lastIndexOf('\n')
  if (lineEnd >= kept.length / 2) kept = kept.slice(0, lineEnd)
  return kept + footer(Buffer.byteLength(kept))
}

/**
 * One tool result as an MCP `CallToolResult`: the text (cut at `maxResultBytes`
 * by {@link truncateResultText}), then the result's image as MCP image content
 * (`{ type: 'image', data, mimeType }`, not counted in the text cap: the tool
 * caps it), and a failure's code in `_meta`.
 *
 * With `structured` (the tool's structured output), a success with a value
 * also gets `structuredContent: structured.content(value)`; a failure never
 * does (the SDK's `Client` requires it of a success only). Structured content
 * whose JSON is over `maxResultBytes` is shrunk until it fits (arrays keep
 * their first items, strings over 64 characters their start), so it still
 * matches a schema that only types its members, and `_meta` says so under
 * {@link MCP_STRUCTURED_META_KEY}. If nothing makes it fit, the success
 * becomes a failure (`isError: true`, code `FS_TOO_LARGE`, the note
 * `{ omitted: true, bytes }`) whose text names `toolName`, the size and the cap:
 * the `Client` would reject a success without `structuredContent`.
 */
export function toMcpResult(
  result: ToolResult,
  maxResultBytes: number = DEFAULT_MAX_RESULT_BYTES,
  structured?: ToolStructuredOutput,
  toolName?: string,
): CallToolResult {
  const cap = checkResultCap(maxResultBytes)
  const text = truncateResultText(result.text, cap)
  const content: CallToolResult['content'] = [{ type: 'text', text }]
  if (result.image !== undefined) content.push({ type: 'image', data: result.image.data, mimeType: result.image.mimeType })
  const out: CallToolResult = { content, isError: result.isError }
  if (result.isError && result.code !== undefined) {
    out._meta = {
      [MCP_CODE_META_KEY]: result.code,
      ...(result.retryable === true ? { [MCP_RETRYABLE_META_KEY]: true } : {}),
      ...(result.indeterminate === true ? { [MCP_INDETERMINATE_META_KEY]: true } : {}),
    }
  }
  if (!result.isError && structured !== undefined && result.value !== undefined) {
    const capped = capStructuredContent(structured.content(result.value), cap)
    if (capped.content === undefined) return tooLargeResult(toolName, capped.overBytes ?? 0, cap)
    out.structuredContent = capped.content
    if (capped.overBytes !== undefined) out._meta = { ...out._meta, [MCP_STRUCTURED_META_KEY]: { truncated: true, bytes: capped.overBytes } }
  }
  return out
}

/** The failure sent for a success whose structured content cannot be shrunk under `maxResultBytes`. */
function tooLargeResult(toolName: string | undefined, bytes: number, maxResultBytes: number): CallToolResult {
  const what = toolName === undefined ? 'the result' : `the result of ${toolName}`
  const message = `${what} is too large: its structured content is ${bytes} bytes of JSON and cannot be shrunk under maxResultBytes (${maxResultBytes}); narrow the request: use offset/limit, a narrower path or pattern`
  return { ...errorResult(message, maxResultBytes), _meta: { [MCP_CODE_META_KEY]: 'FS_TOO_LARGE', [MCP_STRUCTURED_META_KEY]: { omitted: true, bytes } } }
}

function errorResult(message: string, maxResultBytes: number): CallToolResult {
  return { content: [{ type: 'text', text: truncateResultText(`Error: ${message}`, maxResultBytes) }], isError: true }
}

/**
 * An MCP server (not yet connected) exposing `tools`: `tools/list` returns
 * each tool's name, title, description, JSON Schema and annotations (and its
 * `outputSchema` when it has structured output);
 * `tools/call` runs `execute(arguments, { session, signal })` with the
 * request's abort signal (cancellation, or the connection closing) and returns
 * `{ content: [{ type: 'text', text }], isError }` (and an `image` block after
 * the text when the result has an image: `read` of a picture), plus
 * `structuredContent` on a success of a tool with structured output, and
 * `_meta: { 'seamfs/code': code }` on a failure with a code (plus `'seamfs/retryable': true` and
 * `'seamfs/indeterminate': true` where they hold: trying again may help; a mutation may have been
 * made although it failed, and the text says to read before retrying). An unknown tool is
 * an `isError` result, not a protocol error. A text over `maxResultBytes` is
 * cut, with a footer saying so and how to ask for less; a structured content
 * over it is shrunk, or the call fails with `FS_TOO_LARGE` when nothing makes
 * it fit (see {@link toMcpResult}).
 *
 * One connection is one agent session: unless `session` is given, the
 * read-before-write observations of a connection are kept under a session
 * object of that connection's transport, so they persist across its calls and
 * a new connection starts with none.
 */
export function createMcpServer(options: McpServerOptions): Server {
  const byName = new Map<string, FileTool>()
  for (const tool of options.tools) {
    if (byName.has(tool.name)) throw new TypeError(`duplicate tool name "${tool.name}"`)
    byName.set(tool.name, tool)
  }
  const includePrompt = options.includePrompt ?? true
  const maxResultBytes = checkResultCap(options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES)
  const listed = [...byName.values()].map((tool) => toMcpTool(tool, includePrompt))

  const server = new Server(
    { name: options.name ?? 'seamfs', version: options.version ?? ownVersion() },
    options.instructions === undefined ? { capabilities: { tools: {} } } : { capabilities: { tools: {} }, instructions: options.instructions },
  )

  // Sessions per connection: keyed weakly by transport, so a closed connection's record can go.
  const sessions = new WeakMap<Transport, object>()
  const detached = {}
  const sessionOf = (): PolicyOwner => {
    if (options.session !== undefined) return options.session
    const transport = server.transport
    if (transport === undefined) return detached
    let session = sessions.get(transport)
    if (session === undefined) sessions.set(transport, (session = {}))
    return session
  }

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }))

  // The tools a call runs: `tools`, or those fenced to the client's roots once it listed them.
  let serving: Promise<ReadonlyMap<string, FileTool> | string> = Promise.resolve(byName)
  let asked = false
  const roots = options.roots
  const declaresRoots = (): boolean => roots !== undefined && server.getClientCapabilities()?.roots !== undefined
  const refresh = (): void => {
    if (roots === undefined) return
    asked = true
    serving = rootedTools(server, byName, roots)
    // Settled here too: nothing waits on a list no call asks for.
    serving.catch(() => undefined)
  }
  if (roots !== undefined) {
    server.oninitialized = () => {
      if (declaresRoots()) refresh()
    }
    server.setNotificationHandler(RootsListChangedNotificationSchema, () => {
      if (declaresRoots()) refresh()
    })
  }

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: args } = request.params
    // A client that declared roots and calls before saying it is initialized still gets its fence.
    if (!asked && declaresRoots()) refresh()
    const fenced = await serving
    if (typeof fenced === 'string') return errorResult(fenced, maxResultBytes)
    const tool = fenced.get(name)
    if (tool === undefined) {
      const known = [...byName.keys()].join(', ')
      return errorResult(`unknown tool "${name}"${known === '' ? '' : ` (available: ${known})`}`, maxResultBytes)
    }
    try {
      return toMcpResult(await tool.execute(args ?? {}, { session: sessionOf(), signal: extra.signal }), maxResultBytes, tool.structured, tool.name)
    } catch (err) {
      // `execute` never throws; a tool from elsewhere might.
      return errorResult(`internal error: ${err instanceof Error ? err.message : String(err)}`, maxResultBytes)
    }
  })

  return server
}

/**
 * The tools fenced to the roots the client lists now, by name; or, where that cannot be had, why
 * (every call then fails with it: a fence the client asked for is never silently dropped).
 */
async function rootedTools(
  server: Server,
  configured: ReadonlyMap<string, FileTool>,
  { within, timeoutMs = ROOTS_TIMEOUT_MS }: NonNullable<McpServerOptions['roots']>,
): Promise<ReadonlyMap<string, FileTool> | string> {
  let listed: { readonly uri: string; readonly name?: string | undefined }[]
  try {
    listed = (await server.listRoots(undefined, { timeout: timeoutMs })).roots
  } catch (err) {
    return `the client declares roots but did not list them (${err instanceof Error ? err.message : String(err)}); no call runs until it does`
  }
  if (listed.length === 0) return configured
  const roots: McpRoot[] = []
  for (const root of listed) {
    let path: string
    try {
      path = fileURLToPath(root.uri)
    } catch {
      return `the client's root ${JSON.stringify(root.uri)} names no path here (a file:// URI of another host); no call runs until its roots do`
    }
    roots.push({ uri: root.uri, ...(root.name === undefined ? {} : { name: root.name }), path })
  }
  try {
    const tools = await within(roots)
    const byName = new Map(tools.map((tool) => [tool.name, tool]))
    const missing = [...configured.keys()].filter((name) => !byName.has(name))
    if (missing.length > 0) return `internal error: the tools fenced to the client's roots lack ${missing.join(', ')}`
    return byName
  } catch (err) {
    return `the client's roots cannot be served (${err instanceof Error ? err.message : String(err)}); no call runs until they can`
  }
}

/** Options of {@link serveStdio}; the streams default to the process's own. */
export interface ServeStdioOptions {
  readonly stdin?: Readable | undefined
  readonly stdout?: Writable | undefined
  /** Where dropped messages are reported, one line each. */
  readonly stderr?: Writable | undefined
  /** The largest incoming message in bytes; default {@link DEFAULT_MAX_MESSAGE_BYTES} (see {@link BoundedStdioTransport}). */
  readonly maxMessageBytes?: number | undefined
}

/**
 * Connects `server` to stdio and resolves when the connection closes: when
 * stdin ends (the client closed it or went away), stdout fails, or
 * `server.close()` is called. In-flight calls are aborted then. Nothing is left
 * listening, so a process with nothing else to do exits.
 *
 * A message over `maxMessageBytes` is not read: a request gets a JSON-RPC
 * error naming the limit, anything else a line on stderr. A line that is not
 * JSON gets the parse error `-32700`. Either way the server goes on serving.
 */
export async function serveStdio(server: Server, options: ServeStdioOptions = {}): Promise<void> {
  const transport = new BoundedStdioTransport(options.stdin ?? process.stdin, options.stdout ?? process.stdout, {
    stderr: options.stderr,
    maxMessageBytes: options.maxMessageBytes,
  })
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve))
  // `connect` chains its own close handler after ours.
  await server.connect(transport)
  await closed
}
