/**
 * The structured output of each tool: a JSON Schema and the plain object it
 * describes, built from the tool's canonical value. Every member is required
 * and nothing else is allowed, so the schema says exactly what `content`
 * returns. Whole files never appear: `write` and `edit` keep the diff and drop
 * `before`/`after`.
 */
import type { CreateDirectoryValue } from './directory-tool.js'
import type { DeleteValue } from './delete-tool.js'
import type { EditValue } from './edit-tool.js'
import type { ReadValue } from './file-tools.js'
import type { GlobValue } from './glob-tool.js'
import type { GrepValue } from './grep-tool.js'
import type { ListValue } from './list-tool.js'
import type { MoveValue } from './move-tool.js'
import type { JsonSchema, StructuredOutput } from './types.js'
import type { WriteValue } from './write-tool.js'

const STRING = { type: 'string' } as const
const COUNT = { type: 'integer', minimum: 0 } as const
const LINE_NUMBER = { type: 'integer', minimum: 1 } as const
const BOOLEAN = { type: 'boolean' } as const
const NULLABLE_STRING = { type: ['string', 'null'] } as const
const FILE_OR_DIRECTORY = { type: 'string', enum: ['file', 'directory'] } as const

/** An object schema whose keys are all required (but `optional` ones) and no others allowed. */
function object(properties: Record<string, JsonSchema>, optional: readonly string[] = []): JsonSchema {
  return { type: 'object', properties, required: Object.keys(properties).filter((k) => !optional.includes(k)), additionalProperties: false }
}

export const listStructured: StructuredOutput<ListValue> = {
  schema: object({
    path: STRING,
    offset: LINE_NUMBER,
    entries: { type: 'array', items: object({ name: STRING, type: { type: 'string', enum: ['directory', 'file', 'other'] } }) },
    totalEntries: COUNT,
    counts: object({ directories: COUNT, files: COUNT, other: COUNT }),
  }),
  content: (v) => ({
    path: v.path,
    offset: v.offset,
    entries: v.entries.map((e) => ({ name: e.name, type: e.type })),
    totalEntries: v.totalEntries,
    counts: { directories: v.counts.directories, files: v.counts.files, other: v.counts.other },
  }),
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

export const writeStructured: StructuredOutput<WriteValue> = {
  schema: object({ path: STRING, operation: { type: 'string', enum: ['create', 'update'] }, diff: NULLABLE_STRING, dryRun: BOOLEAN }),
  content: (v) => ({ path: v.path, operation: v.operation, diff: v.diff, dryRun: v.dryRun }),
}

export const editStructured: StructuredOutput<EditValue> = {
  schema: object({ path: STRING, diff: STRING, dryRun: BOOLEAN }),
  content: (v) => ({ path: v.path, diff: v.diff, dryRun: v.dryRun }),
}

export const globStructured: StructuredOutput<GlobValue> = {
  schema: object({ root: STRING, pattern: STRING, paths: { type: 'array', items: STRING }, totalPaths: COUNT, fencedDirs: COUNT }),
  content: (v) => ({ root: v.root, pattern: v.pattern, paths: [...v.paths], totalPaths: v.totalPaths, fencedDirs: v.fencedDirs }),
}

export const grepStructured: StructuredOutput<GrepValue> = {
  schema: object({
    root: STRING,
    pattern: STRING,
    matches: { type: 'array', items: object({ path: STRING, line: LINE_NUMBER, text: STRING }) },
    totalMatches: COUNT,
    skippedFiles: COUNT,
    fencedEntries: COUNT,
  }),
  content: (v) => ({
    root: v.root,
    pattern: v.pattern,
    matches: v.matches.map((m) => ({ path: m.path, line: m.line, text: m.text })),
    totalMatches: v.totalMatches,
    skippedFiles: v.skippedFiles,
    fencedEntries: v.fencedEntries,
  }),
}

export const deleteStructured: StructuredOutput<DeleteValue> = {
  schema: object({ path: STRING, type: FILE_OR_DIRECTORY }),
  content: (v) => ({ path: v.path, type: v.type }),
}

export const moveStructured: StructuredOutput<MoveValue> = {
  schema: object({ from: STRING, to: STRING, type: FILE_OR_DIRECTORY, replaced: BOOLEAN }),
  content: (v) => ({ from: v.from, to: v.to, type: v.type, replaced: v.replaced }),
}

export const createDirectoryStructured: StructuredOutput<CreateDirectoryValue> = {
  schema: object({ path: STRING, created: BOOLEAN }),
  content: (v) => ({ path: v.path, created: v.created }),
}
