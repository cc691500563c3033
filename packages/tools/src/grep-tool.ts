import { FsError, isFsError } from '@seamfs/core'
import { decodeText } from '@seamfs/core/backend'
import { NON_BLANK } from './args.js'
import { inOrder, Limiter } from './bounded.js'
import { RegexWorker, type WorkerMatch } from './grep-worker.js'
import { IGNORE_REPORT_SCHEMA, ignoreContent, ignoreFooters, ignoreReport, INCLUDE_IGNORED, searchIgnores, type IgnoreReport } from './ignore-files.js'
import { quotePath } from './quote.js'
import { ReadAhead } from './read-ahead.js'
import { ok, ToolInputError } from './results.js'
import { cwdDisplay, showPaths } from './shown-path.js'
import { openRoot, resolveRoot, searchFiles } from './tree-walk.js'
import { COUNT, LINE_NUMBER, object, STRING } from './structured.js'
import { run, toolInput, type ToolInput } from './tool-kit.js'
import type { FileTool, StructuredOutput, ToolDeps } from './types.js'
import {
  fencedFooter,
  isSkippable,
  namedSkips,
  pathMatcher,
  SearchControl,
  SearchTimeout,
  Skipped,
  timeoutResult,
  type PathMatcher,
  type WalkedFile,
} from './walk.js'

/** One matching line: `text` is the preview exactly as shown after `Line <n>: `. */
export interface GrepMatch {
  /** A path any tool accepts unchanged: relative to the cwd when inside it (`/`-separated), else absolute. */
  readonly path: string
  /** 1-based line number. */
  readonly line: number
  readonly text: string
}

/** Canonical value of `grep`: the shown matches (path order, then line), the total, and the binary files skipped. */
export interface GrepValue extends IgnoreReport {
  /** Display path of the search root. */
  readonly root: string
  readonly pattern: string
  readonly matches: GrepMatch[]
  readonly totalMatches: number
  /** Files skipped as binary or not valid UTF-8 (`FS_NOT_TEXT`). */
  readonly skippedFiles: number
  /** Entries a fence kept out of (links pointing outside confined reads; files or directories it refused to read or list): skipped. */
  readonly fencedEntries: number
  /** The first of the binary files and of the fenced entries (at most five each, in path order), as the other tools accept them: the footers name them. */
  readonly skippedPaths: string[]
  readonly fencedPaths: string[]
}

/** The checked arguments of `grep`, defaults filled in: `pattern` compiles (with `flags`), `include` is one valid glob. */
export interface GrepArgs {
  readonly pattern: string
  /** The regular expression's flags: `u` when the pattern is valid in Unicode mode, else none; `i` with `ignore_case`. */
  readonly flags: string
  /** The directory or file to search (default `.`). */
  readonly path: string
  readonly include: string | undefined
  /** Search what `.gitignore` and `.ignore` files exclude too (default false). */
  readonly includeIgnored: boolean
}

export const grepStructured: StructuredOutput<GrepValue> = {
  schema: object(
    {
      root: STRING,
      pattern: STRING,
      matches: { type: 'array', items: object({ path: STRING, line: LINE_NUMBER, text: STRING }) },
      totalMatches: COUNT,
      skippedFiles: COUNT,
      fencedEntries: COUNT,
      skippedPaths: { type: 'array', items: STRING },
      fencedPaths: { type: 'array', items: STRING },
      ...IGNORE_REPORT_SCHEMA.properties,
    },
    IGNORE_REPORT_SCHEMA.optional,
  ),
  content: (v) => ({
    root: v.root,
    pattern: v.pattern,
    matches: v.matches.map((m) => ({ path: m.path, line: m.line, text: m.text })),
    totalMatches: v.totalMatches,
    skippedFiles: v.skippedFiles,
    fencedEntries: v.fencedEntries,
    skippedPaths: [...v.skippedPaths],
    fencedPaths: [...v.fencedPaths],
    ...ignoreContent(v),
  }),
}

export const LINE_TRUNCATED = ' (line truncated)'

/**
 * The flags the pattern compiles with: Unicode mode (`u`) when the pattern is
 * valid there, else none; invalid in both is an input error.
 */
export function regexFlags(pattern: string): string {
  try {
    new RegExp(pattern, 'u')
    return 'u'
  } catch {
    // Not valid in Unicode mode; try the legacy grammar.
  }
  try {
    new RegExp(pattern)
    return ''
  } catch (err) {
    throw new ToolInputError(`invalid regular expression: ${regexSyntaxDetail(err)}`)
  }
}

/** The head V8 puts before what is wrong with a pattern: `Invalid regular expression: /(/: Unterminated group`. */
const REGEX_SYNTAX_HEAD = 'Invalid regular expression: '

/**
 * What the `SyntaxError` of `new RegExp` says is wrong with the pattern (`/(/: Unterminated group`).
 * The engine's error carries it in its message only, after a fixed head, which is dropped here: the
 * one message the tools read, and it is the JavaScript engine's, not one of seamfs's errors.
 */
function regexSyntaxDetail(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err)
  return message.startsWith(REGEX_SYNTAX_HEAD) ? message.slice(REGEX_SYNTAX_HEAD.length) : message
}

function utf8Length(codePoint: number): number {
  return codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4
}

/** `text` cut to at most `maxBytes` UTF-8 bytes on a character boundary, marked when anything was cut (`cut`: the line was already longer). */
export function previewLine(text: string, cut: boolean, maxBytes: number): string {
  let bytes = 0
  let end = 0
  for (const ch of text) {
    bytes += utf8Length(ch.codePointAt(0) ?? 0)
    if (bytes > maxBytes) return text.slice(0, end) + LINE_TRUNCATED
    end += ch.length
  }
  return cut ? text + LINE_TRUNCATED : text
}

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`

export function grepText(value: GrepValue): string {
  const shown = value.matches.length
  const total = value.totalMatches
  const footers: string[] = []
  if (shown < total) footers.push(`(Showing ${shown} of ${total} matches. Narrow the pattern, path or include to see the rest.)`)
  if (value.skippedFiles > 0) {
    footers.push(
      `(${plural(value.skippedFiles, 'binary or non-UTF-8 file', 'binary or non-UTF-8 files')} skipped${namedSkips(value.skippedFiles, value.skippedPaths)})`,
    )
  }
  const fenced = fencedFooter(value.fencedEntries, 'linked file or directory', 'linked files or directories', value.fencedPaths)
  if (fenced !== undefined) footers.push(fenced)
  footers.push(...ignoreFooters(value))
  let body: string
  if (total === 0) {
    body = 'No matches found'
  } else {
    const groups: string[] = []
    let current: string | undefined
    let lines: string[] = []
    for (const match of value.matches) {
      if (match.path !== current) {
        if (current !== undefined) groups.push(lines.join('\n'))
        current = match.path
        lines = [quotePath(match.path)]
      }
      lines.push(`Line ${match.line}: ${match.text}`)
    }
    if (current !== undefined) groups.push(lines.join('\n'))
    const header = shown < total ? `Found ${shown} of ${total} matches` : `Found ${plural(total, 'match', 'matches')}`
    body = `${header}\n\n${groups.join('\n\n')}`
  }
  return footers.length === 0 ? body : `${body}\n\n${footers.join('\n')}`
}

type FileOutcome = { readonly matches: WorkerMatch[]; readonly count: number } | 'binary' | 'fenced' | 'skipped'

/** What {@link fetchFile} got ahead of the matcher: a file's whole text, or word that it must be streamed. */
type Fetched = { readonly text: string } | 'stream' | 'skipped'

/** The most bytes of whole-read files one grep holds ahead of the matcher (reads in flight included). */
const PREFETCH_BYTES = 8 * 1024 * 1024

/** A skipped file's outcome, or `err` rethrown (the stopping error when the search was stopped). */
function skipOutcome(err: unknown, control: SearchControl): 'binary' | 'fenced' | 'skipped' {
  if (control.stopped) throw control.error()
  if (isFsError(err, 'FS_NOT_TEXT')) return 'binary'
  if (isFsError(err, 'FS_SANDBOX_DENIED')) return 'fenced'
  if (isSkippable(err)) return 'skipped'
  throw err
}

/** The bytes {@link fetchFile} may hold for `file`: its size below `readStreamMinSize` (unknown counts as that much), else none. */
function prefetchCost(file: WalkedFile, streamMin: number): number {
  if (file.size === undefined) return streamMin
  return file.size < streamMin ? file.size : 0
}

/**
 * A file read whole when below `readStreamMinSize` (stat first when the walk did not say its size), decoded by
 * `readText`'s rules; larger ones, and any whose bytes turn out larger than its size said, are left to stream in turn.
 */
async function fetchFile(deps: ToolDeps, file: WalkedFile, control: SearchControl): Promise<Fetched> {
  const opts = { signal: control.signal }
  let size = file.size
  if (size === undefined) {
    const info = await control.race(deps.fs.stat(file.target, opts))
    if (info?.type !== 'file') return 'skipped'
    size = info.size
  }
  if (size === undefined || size >= deps.config.readStreamMinSize) return 'stream'
  // Read with a cap, not readText: a backend whose listing or stat says "small" for a large file must
  // not make `searchConcurrency` whole-file reads of up to `maxTextBytes` each. Above the cap, stream it.
  let bytes: Uint8Array
  try {
    bytes = await control.race(deps.fs.readBytes(file.target, { ...opts, maxBytes: deps.config.readStreamMinSize - 1 }))
  } catch (err) {
    if (isFsError(err, 'FS_TOO_LARGE')) return 'stream'
    throw err
  }
  return { text: decodeText(bytes, file.target.displayPath) }
}

/** What one grep scans with: the tools' deps, its regex worker, and its budget and stop. */
interface Scan {
  readonly deps: ToolDeps
  readonly worker: RegexWorker
  readonly control: SearchControl
}

/** One fetched file through the worker (a large one streamed now, in search order); `keep`: how many match texts are still wanted. */
async function scanFile({ deps, worker, control }: Scan, file: WalkedFile, fetched: Fetched, keep: number): Promise<FileOutcome> {
  if (fetched === 'skipped') return 'skipped'
  const matches: WorkerMatch[] = []
  let count = 0
  const feed = async (text: string, first: boolean, final: boolean): Promise<void> => {
    const reply = await worker.match(text, first, final, Math.max(0, keep - matches.length))
    matches.push(...reply.matches)
    count += reply.count
  }
  try {
    if (fetched !== 'stream') {
      await feed(fetched.text, true, true)
    } else {
      let first = true
      for await (const chunk of await control.race(deps.fs.streamText(file.target, { signal: control.signal }))) {
        control.check()
        await feed(chunk, first, false)
        first = false
      }
      await feed('', first, true)
    }
  } catch (err) {
    return skipOutcome(err, control)
  }
  return { matches, count }
}

/** How far the reads may run ahead of the matcher, in files, per read in flight. */
const LOOKAHEAD_PER_READ = 4

/** grep's reads ahead of its matcher (see {@link ReadAhead}): within {@link PREFETCH_BYTES}, and with the walk under `limiter`. */
function readAhead(deps: ToolDeps, control: SearchControl, limiter: Limiter): ReadAhead<WalkedFile, Fetched> {
  const streamMin = deps.config.readStreamMinSize
  return new ReadAhead({
    limiter,
    budget: PREFETCH_BYTES,
    files: LOOKAHEAD_PER_READ * deps.config.searchConcurrency,
    cost: (file) => prefetchCost(file, streamMin),
    read: (file) => fetchFile(deps, file, control),
    check: () => control.check(),
  })
}

/**
 * Every file through the worker in search order, while the next ones are read ahead: up to
 * `searchConcurrency` reads in flight (the walk's calls included, while it runs: the first reads
 * start as it finds their files), a read that ends starting the next at once (behind a slow file,
 * and while the worker matches), at most {@link LOOKAHEAD_PER_READ} files per read ahead of the
 * matcher and {@link PREFETCH_BYTES} held (one file is always let through), so a remote store pays
 * about one round trip per `searchConcurrency` small files.
 */
async function* scanFiles(scan: Scan, files: readonly WalkedFile[], keep: () => number, ahead: ReadAhead<WalkedFile, Fetched>): AsyncGenerator<FileOutcome> {
  const { deps, control } = scan
  const concurrency = deps.config.searchConcurrency
  let index = 0
  for await (const fetched of inOrder(files, concurrency, (file) => ahead.read(file), ahead.inOrder(LOOKAHEAD_PER_READ * concurrency))) {
    const file = files[index++] as WalkedFile
    control.check()
    yield fetched.ok ? await scanFile(scan, file, fetched.value, keep()) : skipOutcome(fetched.error, control)
  }
}

/** Whether `glob` holds a comma outside braces (a backslash escapes the next character). */
function commaOutsideBraces(glob: string): boolean {
  let depth = 0
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]
    if (c === '\\') i++
    else if (c === '{') depth++
    else if (c === '}') depth = Math.max(0, depth - 1)
    else if (c === ',' && depth === 0) return true
  }
  return false
}

/**
 * Refuses a comma-separated list as `include` (`"*.ts,*.js"` would silently match nothing),
 * suggesting the brace form: `*.{ts,js}` when every item is `*.<ext>`, else `{a,b}`.
 */
export function checkInclude(include: string): void {
  if (!commaOutsideBraces(include)) return
  const items = include.split(',').map((item) => item.trim())
  const exts = items.map((item) => /^\*\.([^/*?[\]{},]+)$/.exec(item)?.[1])
  const braced = exts.every((ext) => ext !== undefined) ? `*.{${exts.join(',')}}` : `{${items.join(',')}}`
  throw new ToolInputError(`include takes one glob, not a comma-separated list; use braces, like ${JSON.stringify(braced)}`)
}

function lastSegment(displayPath: string): string {
  return displayPath.slice(displayPath.lastIndexOf('/') + 1)
}

export function grepInput(): ToolInput<GrepArgs> {
  const inputSchema = {
    type: 'object',
    properties: {
      pattern: {
        type: 'string',
        minLength: 1,
        description: 'JavaScript regular expression matched against each line (Unicode mode when the pattern allows it).',
      },
      path: { type: ['string', 'null'], pattern: NON_BLANK, description: 'Directory or file to search. Defaults to the workspace.' },
      include: {
        type: ['string', 'null'],
        pattern: NON_BLANK,
        description:
          'One glob the file path must match, like "*.ts" or "src/**/*.{js,jsx}" (several alternatives go in braces, not a comma list). A glob without "/" matches file names at any depth.',
      },
      include_ignored: { type: ['boolean', 'null'], description: INCLUDE_IGNORED },
      ignore_case: { type: ['boolean', 'null'], description: "Match letters in either case (the regular expression's i flag). Defaults to false." },
    },
    required: ['pattern'],
    additionalProperties: false,
  }
  return toolInput(inputSchema, (a): GrepArgs => {
    const pattern = a.string('pattern')
    const path = a.optionalString('path') ?? '.'
    const include = a.optionalString('include')
    if (include !== undefined) {
      checkInclude(include)
      pathMatcher('include', include)
    }
    // `i` with the flags the pattern compiles with: `(?i)` is refused by Node 20's RegExp.
    const flags = regexFlags(pattern) + (a.boolean('ignore_case', false) ? 'i' : '')
    return { pattern, flags, path, include, includeIgnored: a.boolean('include_ignored', false) }
  })
}

export function grepTool(deps: ToolDeps): FileTool<GrepValue> {
  const { config } = deps
  const { inputSchema, parse } = grepInput()
  return {
    name: 'grep',
    description: 'Search file contents with a regular expression; returns matching lines grouped by file, in path order.',
    inputSchema,
    structured: grepStructured,
    annotations: { title: 'Search file contents', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    prompt: `Use the grep tool — not shell grep or rg — to search file contents. The pattern is a JavaScript regular expression matched line by line; use include (a glob such as "*.ts") and path to narrow the search. Results list each file's matching lines with line numbers (each file path as the other tools accept it), at most ${config.grepMaxMatches} matches; binary files are skipped, and .git and other version-control directories are not searched, nor are files that .gitignore or .ignore files exclude (the footer counts them; set include_ignored to true to search them). Read a file to see the context around a match.`,
    execute: (args, context = {}) =>
      run(async () => {
        const { pattern, flags, path, include, includeIgnored } = parse(args)
        const accept: PathMatcher = include === undefined ? () => true : pathMatcher('include', include)
        const control = new SearchControl('grep', config.searchTimeoutMs, context.signal)
        const worker = new RegexWorker({ source: pattern, flags, maxUnits: config.grepMaxLineBytes, control })
        try {
          const target = await resolveRoot(deps, path, context, control)
          const cwd = cwdDisplay(deps, context, control.signal)
          const ignores = includeIgnored ? undefined : searchIgnores(deps.fs, control, cwd, target)
          const root = await openRoot(deps, target, control)
          const rootPath = root.target.displayPath
          const show = showPaths(await control.race(cwd), root.target)
          let files: WalkedFile[]
          const fenced = new Skipped()
          const limiter = new Limiter(config.searchConcurrency)
          const ahead = readAhead(deps, control, limiter)
          if (root.info.type === 'directory') {
            const found = (file: WalkedFile): void => ahead.offer(file)
            const walk = await searchFiles({
              fs: deps.fs,
              root,
              control,
              accept,
              concurrency: config.searchConcurrency,
              found,
              gate: (call) => limiter.first(call),
              ignores,
            })
            files = walk.files
            fenced.addAll(walk.fenced, walk.fencedPaths)
          } else if (root.info.type === 'file') {
            files = accept(lastSegment(rootPath)) ? [{ path: '', target: root.target, size: root.info.size }] : []
          } else {
            throw new FsError('FS_NOT_REGULAR_FILE', `cannot search "${rootPath}": not a directory or regular file`, { verb: 'read', path: rootPath })
          }
          const matches: GrepMatch[] = []
          let totalMatches = 0
          const skipped = new Skipped()
          let index = 0
          for await (const outcome of scanFiles({ deps, worker, control }, files, () => config.grepMaxMatches - matches.length, ahead)) {
            const file = files[index++] as WalkedFile
            if (outcome === 'binary') skipped.add(file.path)
            if (outcome === 'fenced') fenced.add(file.path)
            if (typeof outcome !== 'object') continue
            totalMatches += outcome.count
            for (const m of outcome.matches) {
              matches.push({ path: show(file.path), line: m.line, text: previewLine(m.text, m.cut, config.grepMaxLineBytes) })
            }
          }
          const value: GrepValue = {
            root: rootPath,
            pattern,
            matches,
            totalMatches,
            skippedFiles: skipped.count,
            fencedEntries: fenced.count,
            skippedPaths: skipped.paths().map(show),
            fencedPaths: fenced.paths().map(show),
            ...ignoreReport(root.info.type === 'directory' ? ignores : undefined, show),
          }
          return ok(grepText(value), value)
        } catch (err) {
          const final = control.translate(err)
          if (final instanceof SearchTimeout) {
            const cause = final.slowPart === 'pattern' ? 'the pattern is too slow on this text' : 'the tree is too large to search in time'
            return timeoutResult(final, cause, 'narrow pattern, path or include')
          }
          throw final
        } finally {
          worker.dispose()
          control.dispose()
        }
      }),
  }
}
