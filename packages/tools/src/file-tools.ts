import { FsError, isFsError, type FsInfo, type FsTarget, type PolicyOwner } from '@seamfs/core'
import { argsParser, NON_BLANK } from './args.js'
import { messagePath, quotePath } from './quote.js'
import { ByteReader } from './byte-source.js'
import { ImageReader, imageText, toolImage } from './image.js'
import { ByteLineWindow } from './line-scan.js'
import { LineWindow, readFooter, type ReadLine, type ReadWindow, type WindowLimits } from './read-window.js'
import { failure, ok, withRemedy } from './results.js'
import type { FileTool, ToolContext, ToolDeps, ToolImage, ToolResult } from './types.js'
import { readStructured } from './structured.js'

/** Canonical value of `read`. */
export interface ReadValue {
  readonly path: string
  readonly offset: number
  /** The lines read; none for an image. */
  readonly lines: ReadLine[]
  readonly totalLines: number
  /** Set when the file is an image, returned as the result's `image` (then `lines` is empty, `totalLines` 0). */
  readonly image?: { readonly mimeType: ToolImage['mimeType']; readonly size: number } | undefined
}

/** Whose observations a call reads and records: the call's own session, else the tools instance's default one. */
export function sessionOf(deps: ToolDeps, context: ToolContext): PolicyOwner {
  return context.session ?? deps.session
}

export function resolveIn(deps: ToolDeps, path: string, context: ToolContext): Promise<FsTarget> {
  return deps.fs.resolve(path, { cwd: context.cwd ?? deps.cwd, signal: context.signal })
}

/** Runs a tool body; every failure, whatever it is, becomes an `isError` result. */
export async function run<V>(body: () => Promise<ToolResult<V>>): Promise<ToolResult<V>> {
  try {
    return await body()
  } catch (err) {
    return failure(err)
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

/** The file as an image result when its bytes are an image (else undefined); recorded like a text read. */
async function imageRead(
  deps: ToolDeps,
  images: ImageReader,
  target: FsTarget,
  info: FsInfo,
  session: PolicyOwner,
  signal: AbortSignal | undefined,
): Promise<ToolResult<ReadValue> | undefined> {
  const image = await images.read(target, info.size, signal)
  if (image === undefined) return undefined
  deps.policy?.recordPresent(session, target, info.version)
  const value: ReadValue = { path: target.displayPath, offset: 1, lines: [], totalLines: 0, image: { mimeType: image.mimeType, size: image.bytes.length } }
  return { ...ok(imageText(target.displayPath, image), value), image: toolImage(image) }
}

export function readTool(deps: ToolDeps): FileTool<ReadValue> {
  const { config } = deps
  const inputSchema = {
    type: 'object',
    properties: {
      file_path: { type: 'string', pattern: NON_BLANK, description: 'Path to read, resolved by the filesystem backend.' },
      offset: { type: ['integer', 'null'], minimum: 1, description: '1-based first line to return. Defaults to 1.' },
      limit: {
        type: ['integer', 'null'],
        minimum: 1,
        maximum: config.readLimit,
        description: `Maximum number of lines to return. Defaults to ${config.readLimit}.`,
      },
    },
    required: ['file_path'],
    additionalProperties: false,
  }
  const parse = argsParser(inputSchema)
  const bytes = new ByteReader(deps.fs)
  const images = new ImageReader(deps.fs, bytes, config.readImageMaxBytes)
  /** Large files: lines counted on bytes, only the window decoded. */
  const scanBytes = async (target: FsTarget, limits: WindowLimits, signal: AbortSignal | undefined): Promise<ReadWindow> => {
    const window = new ByteLineWindow(limits, target.displayPath)
    for await (const chunk of await bytes.streamBytes(target, signal)) window.push(chunk)
    return window.end()
  }
  const scanText = async (target: FsTarget, limits: WindowLimits, signal: AbortSignal | undefined): Promise<ReadWindow> => {
    const window = new LineWindow(limits)
    window.push(await deps.fs.readText(target, { signal }))
    return window.end()
  }
  return {
    name: 'read',
    description: 'Read a UTF-8 text file and return line-numbered content; a PNG, JPEG, GIF or WebP image is returned as an image.',
    inputSchema,
    structured: readStructured,
    annotations: { title: 'Read file', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    prompt:
      'Use the read tool — not shell commands like cat — to inspect text files. Results include line numbers. Use offset and limit to continue reading large files. Images (PNG, JPEG, GIF, WebP) come back as images; offset and limit do not apply to them.',
    execute: (args, context = {}) =>
      run(async () => {
        const a = parse(args)
        const filePath = a.string('file_path')
        const offset = a.integer('offset', 1)
        const limit = a.integer('limit', config.readLimit)
        const target = await resolveIn(deps, filePath, context)
        const shown = quotePath(target.displayPath)
        const session = sessionOf(deps, context)
        const info = await deps.fs.stat(target, { signal: context.signal })
        if (info === undefined) {
          deps.policy?.recordAbsent(session, target)
          // Core's shape, path raw: `failure` quotes it, as every filesystem message.
          throw FsError.notFound('read', target.displayPath)
        }
        if (info.type !== 'file') throw FsError.notRegularFile('read', target.displayPath)
        const asImage = (): Promise<ToolResult<ReadValue> | undefined> => imageRead(deps, images, target, info, session, context.signal)
        const named = images.named(target)
        const first = named ? await asImage() : undefined
        if (first !== undefined) return first
        const limits = { offset, limit, maxLineLength: config.readMaxLineLength, maxBytes: config.readMaxBytes }
        let result: ReadWindow
        try {
          result =
            info.size === undefined || info.size >= config.readStreamMinSize
              ? await scanBytes(target, limits, context.signal)
              : await scanText(target, limits, context.signal)
        } catch (err) {
          // Not text: an image under any name (a name that suggested one was tried above).
          const image = !named && isFsError(err, 'FS_NOT_TEXT') ? await asImage() : undefined
          if (image === undefined) throw err
          return image
        }
        const emptyFileStart = offset === 1 && result.totalLines === 0
        if (offset > result.totalLines && !emptyFileStart && !result.truncatedByBytes) {
          throw new FsError('FS_NOT_FOUND', `offset ${offset} is out of range for ${messagePath(target.displayPath)} (${result.totalLines} lines)`)
        }
        deps.policy?.recordPresent(session, target, info.version)
        const body = result.lines.map((line) => `${line.number}: ${line.text}`)
        const footer = readFooter(offset, result)
        const content = body.length === 0 ? footer : `${body.join('\n')}\n\n${footer}`
        const text = `<path>${shown}</path>\n<type>file</type>\n<content>\n${content}\n</content>`
        return ok(text, { path: target.displayPath, offset, lines: result.lines, totalLines: result.totalLines })
      }),
  }
}
