import { FsError, isFsError, type FsInfo, type FsOpenFile, type FsTarget, type PolicyOwner } from '@seamfs/core'
import { decodeText, takeHeldBytes } from '@seamfs/core/backend'
import { NON_BLANK } from './args.js'
import { ImageReader, imageText, sniffImage, SNIFF_BYTES, toolImage, type ImageRead } from './image.js'
import { ByteLineWindow } from './line-scan.js'
import { quotePath } from './quote.js'
import { ChunkReader, readFooter, windowOfText, type ReadLine, type ReadWindow, type WindowLimits } from './read-window.js'
import { failure, ok } from './results.js'
import { COUNT, LINE_NUMBER, object, STRING } from './structured.js'
import { NO_CONTEXT, resolveIn, sessionOf, toolInput, type ToolInput } from './tool-kit.js'
import type { FileTool, StructuredOutput, ToolContext, ToolDeps, ToolImage, ToolResult, ToolsConfig } from './types.js'

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

/** The checked arguments of `read`, defaults filled in. */
export interface ReadArgs {
  readonly filePath: string
  /** 1-based first line (default 1). */
  readonly offset: number
  /** Lines to return (default and maximum `readLimit`). */
  readonly limit: number
}

export const readStructured: StructuredOutput<ReadValue> = {
  schema: object(
    {
      path: STRING,
      offset: LINE_NUMBER,
      lines: { type: 'array', items: object({ number: LINE_NUMBER, text: STRING }) },
      totalLines: COUNT,
      image: object({ mimeType: { type: 'string', enum: ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] }, size: COUNT }),
    },
    ['image'],
  ),
  // The lines are the window the text shows (capped by readLimit and readMaxBytes), not the file.
  content: (v) => ({
    path: v.path,
    offset: v.offset,
    lines: v.lines.map((l) => ({ number: l.number, text: l.text })),
    totalLines: v.totalLines,
    ...(v.image === undefined ? {} : { image: { mimeType: v.image.mimeType, size: v.image.size } }),
  }),
}

export function readInput(config: ToolsConfig): ToolInput<ReadArgs> {
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
  return toolInput(inputSchema, (a): ReadArgs => ({
    filePath: a.string('file_path'),
    offset: a.integer('offset', 1),
    limit: a.integer('limit', config.readLimit),
  }))
}

/** A read of a regular file the call has opened: what its image and text paths share. */
interface FileRead {
  readonly target: FsTarget
  readonly info: FsInfo
  readonly session: PolicyOwner
  readonly signal: AbortSignal | undefined
  /** The file's chunks, its first bytes looked at before the rest is read. */
  readonly chunks: ChunkReader
  /** What its first bytes say it is: an image type, or undefined. */
  readonly sniffed: ImageRead['mimeType'] | undefined
}

export function readTool(deps: ToolDeps): FileTool<ReadValue> {
  const { config } = deps
  const { inputSchema, parse } = readInput(config)
  const images = new ImageReader(deps.fs, config.readImageMaxBytes)
  /** The result of an image read: recorded like a text read. */
  const imageResult = ({ target, info, session }: Pick<FileRead, 'target' | 'info' | 'session'>, image: ImageRead): ToolResult<ReadValue> => {
    deps.policy?.recordPresent(session, target, info.version)
    const value: ReadValue = { path: target.displayPath, offset: 1, lines: [], totalLines: 0, image: { mimeType: image.mimeType, size: image.bytes.length } }
    return { ...ok(imageText(target.displayPath, image), value), image: toolImage(image) }
  }
  /** The file as an image, its first bytes saying it is one: returned whole up to the image limit, else `FS_TOO_LARGE`. */
  const imageOf = async (read: FileRead, mimeType: ImageRead['mimeType'], bytes?: Uint8Array): Promise<ImageRead> => {
    const { target, info } = read
    if (bytes === undefined && info.size !== undefined && info.size > images.maxBytes) throw images.tooLarge(target, info.size)
    const whole = bytes ?? (await read.chunks.all(images.maxBytes))
    // Not read to its end: its size is what the store said only where that says it is too large.
    if (whole === undefined) throw images.tooLarge(target, info.size !== undefined && info.size > images.maxBytes ? info.size : undefined)
    if (whole.length > images.maxBytes) throw images.tooLarge(target, whole.length)
    return { mimeType, bytes: whole }
  }
  /** `readText`'s size limit on a file of `size` bytes (as the store said, or as read): `FS_TOO_LARGE` above it. */
  const assertTextSize = (target: FsTarget, size: number | undefined): void => {
    const maxBytes = deps.fs.maxTextBytes
    if (size !== undefined && size > maxBytes) throw FsError.tooLarge('read', target.displayPath, size, maxBytes)
  }
  /** A small file's bytes, read whole through its chunks under `readText`'s size limit (bytes handed over at the open go to `readHeld`). */
  const readWhole = async ({ target, info, chunks }: FileRead): Promise<Uint8Array> => {
    assertTextSize(target, info.size)
    const bytes = await chunks.all(deps.fs.maxTextBytes)
    if (bytes === undefined) throw FsError.tooLarge('read', target.displayPath, deps.fs.maxTextBytes + 1, deps.fs.maxTextBytes)
    return bytes
  }
  /** Small files: decoded whole under `readText`'s rules (NUL sample, strict UTF-8, BOM), then windowed. */
  const scanText = (bytes: Uint8Array, path: string, limits: WindowLimits): ReadWindow => windowOfText(decodeText(bytes, path, 'read'), limits)
  /** Large files: lines counted on bytes, only the window decoded. */
  const scanBytes = async ({ target, chunks }: FileRead, limits: WindowLimits): Promise<ReadWindow> => {
    const window = new ByteLineWindow(limits, target.displayPath)
    for await (const chunk of chunks.rest()) window.push(chunk)
    return window.end()
  }
  /** The result of a text read: the window recorded as read, its lines numbered, and the footer. */
  const textResult = (target: FsTarget, info: FsInfo, session: PolicyOwner, offset: number, result: ReadWindow): ToolResult<ReadValue> => {
    const emptyFileStart = offset === 1 && result.totalLines === 0
    if (offset > result.totalLines && !emptyFileStart && !result.truncatedByBytes) {
      const shown = target.displayPath
      throw new FsError('FS_NOT_FOUND', `offset ${offset} is out of range for "${shown}" (${result.totalLines} lines)`, { verb: 'read', path: shown })
    }
    deps.policy?.recordPresent(session, target, info.version)
    // `<path>…</path>`, `<type>file</type>`, `<content>`, `N: text` lines, a blank line and the
    // footer when there are lines, `</content>`: joined once, into one flat string.
    const { lines } = result
    const parts = new Array<string>(5 + 4 * lines.length)
    parts[0] = '<path>'
    parts[1] = quotePath(target.displayPath)
    parts[2] = '</path>\n<type>file</type>\n<content>\n'
    let at = 3
    for (const line of lines) {
      parts[at++] = String(line.number)
      parts[at++] = ': '
      parts[at++] = line.text
      parts[at++] = '\n'
    }
    parts[at++] = lines.length === 0 ? '' : '\n'
    parts[at] = `${readFooter(offset, result)}\n</content>`
    return ok(parts.join(''), { path: target.displayPath, offset, lines, totalLines: result.totalLines })
  }
  /**
   * A small file the store handed over whole at the open (`takeHeldBytes`), read at once: the same
   * answers as the chunk lane below gives for it (a property test compares the two), without its
   * turns or its objects.
   */
  const readHeld = (target: FsTarget, info: FsInfo, session: PolicyOwner, bytes: Uint8Array, limits: WindowLimits): ToolResult<ReadValue> => {
    const sniffed = sniffImage(bytes)
    const named = images.named(target)
    const image = (mimeType: ImageRead['mimeType']): ToolResult<ReadValue> => {
      if (bytes.length > images.maxBytes) throw images.tooLarge(target, bytes.length)
      return imageResult({ target, info, session }, { mimeType, bytes })
    }
    if (named && sniffed !== undefined) {
      if (info.size !== undefined && info.size > images.maxBytes) throw images.tooLarge(target, info.size)
      return image(sniffed)
    }
    assertTextSize(target, info.size)
    assertTextSize(target, bytes.length)
    let result: ReadWindow
    try {
      result = scanText(bytes, target.displayPath, limits)
    } catch (err) {
      // Not text: an image under any name (a name that suggested one was decided above).
      if (named || sniffed === undefined || !isFsError(err, 'FS_NOT_TEXT')) throw err
      return image(sniffed)
    }
    return textResult(target, info, session, limits.offset, result)
  }
  /** A failed open: absent is recorded, and both refusals say what they said before the open was one look. */
  const openFailure = (err: unknown, target: FsTarget, session: PolicyOwner): unknown => {
    if (isFsError(err, 'FS_NOT_FOUND')) {
      deps.policy?.recordAbsent(session, target)
      // Core's shape, path raw: `failure` quotes it, as every filesystem message.
      return FsError.notFound('read', target.displayPath)
    }
    if (isFsError(err, 'FS_NOT_REGULAR_FILE')) return FsError.notRegularFile('read', target.displayPath)
    return err
  }
  return {
    name: 'read',
    description: 'Read a UTF-8 text file and return line-numbered content; a PNG, JPEG, GIF or WebP image is returned as an image.',
    inputSchema,
    structured: readStructured,
    annotations: { title: 'Read file', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    prompt:
      'Use the read tool — not shell commands like cat — to inspect text files. Results include line numbers. Use offset and limit to continue reading large files. Images (PNG, JPEG, GIF, WebP) come back as images; offset and limit do not apply to them.',
    execute: (args, context = NO_CONTEXT) => call(args, context),
  }
  /** One call: every failure becomes the result, caught in the call's own frame (no promise chained on it, as `run` would). */
  async function call(args: unknown, context: ToolContext): Promise<ToolResult<ReadValue>> {
    try {
      const { filePath, offset, limit } = parse(args)
      const target = await resolveIn(deps, filePath, context)
      const session = sessionOf(deps, context)
      const signal = context.signal
      let file: FsOpenFile
      try {
        file = await deps.fs.openFile(target, { signal })
      } catch (err) {
        throw openFailure(err, target, session)
      }
      const limits = { offset, limit, maxLineLength: config.readMaxLineLength, maxBytes: config.readMaxBytes }
      const size = file.info.size
      // A small file the store handed over whole: read at once (a larger one is windowed on its bytes below).
      if (size !== undefined && size < config.readStreamMinSize) {
        const held = takeHeldBytes(file)
        if (held !== undefined) return readHeld(target, file.info, session, held, limits)
      }
      return await readOpened(target, file, session, signal, limits)
    } catch (err) {
      return failure(err, 'read')
    }
  }
  /** An opened file read through its chunks: a large one windowed on its bytes, a small one decoded whole. */
  async function readOpened(
    target: FsTarget,
    file: FsOpenFile,
    session: PolicyOwner,
    signal: AbortSignal | undefined,
    limits: WindowLimits,
  ): Promise<ToolResult<ReadValue>> {
    let result: ReadWindow
    // A file the store handed over whole at the open has nothing to release.
    const chunks = ChunkReader.of(file)
    try {
      // The signatures are in the first SNIFF_BYTES: whole bytes are looked at as they are.
      const head = chunks.whole ?? (await chunks.head(SNIFF_BYTES))
      const read: FileRead = { target, info: file.info, session, signal, chunks, sniffed: sniffImage(head) }
      const named = images.named(target)
      // A name that suggests an image, and bytes that are one: the image, whatever else they might be.
      if (named && read.sniffed !== undefined) return imageResult(read, await imageOf(read, read.sniffed))
      const size = file.info.size
      const whole = size === undefined || size >= config.readStreamMinSize ? undefined : await readWhole(read)
      try {
        result = whole === undefined ? await scanBytes(read, limits) : scanText(whole, target.displayPath, limits)
      } catch (err) {
        // Not text: an image under any name (a name that suggested one was decided above).
        if (named || read.sniffed === undefined || !isFsError(err, 'FS_NOT_TEXT')) throw err
        if (whole !== undefined) return imageResult(read, await imageOf(read, read.sniffed, whole))
        // Streamed past its start: read again, as an image.
        await file.close()
        const image = await images.read(target, size, signal)
        if (image === undefined) throw err
        return imageResult(read, image)
      }
    } finally {
      if (chunks.whole === undefined) await file.close()
    }
    return textResult(target, file.info, session, limits.offset, result)
  }
}
