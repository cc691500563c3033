/** The generative tests (`clauses/generative.ts`), by the grammar each draws from. */
export const PATHS = 'generative › resolve: every path form*'
export const NAMES = 'generative › names: any name*'
export const CONTENTS = 'generative › contents: any bytes*'
export const GUARDS = 'generative › guards: a version from any source*'
export const TREES = 'generative › listings: every entry of a drawn tree*'

/**
 * The rules the generative tests check over their whole input space, added to each rule's
 * hand-picked tests in {@link TRACE}; the README's table says which grammar covers a rule by the
 * test it names. Rules with no entry here are checked on hand-picked inputs only (issue 32 goes on).
 */
export const GENERATIVE_TRACE: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  'FileSystem.resolve': {
    "a relative path resolves against `opts.cwd`, else the backend's cwd; an absolute path ignores both": [PATHS],
    "a relative `opts.cwd` is itself resolved against the backend's cwd": [PATHS],
    'aliases of one file (`..`, `.`, symlinks where supported) yield one `targetKey`': [PATHS, NAMES],
    'a missing path resolves (it may be created), with the same key before and after creation': [PATHS],
    'a path through a regular file is `FS_NOT_FOUND`': [PATHS],
    '`resolve(target.displayPath)` yields the same `targetKey` while nothing changed (the sandbox re-resolves by it)': [PATHS, NAMES],
  },
  'FileSystem.contains': {
    'true when `child` is `parent` or a descendant of it; false otherwise (also for a mere name prefix)': [PATHS],
  },
  'FileSystem.lstat': {
    "path text and `cwd` follow `resolve`'s rules; an absent path is `undefined`": [PATHS],
    'a path through a regular file, or through a link loop, is `undefined` (absent), as in `stat`': [TREES],
  },
  'FileSystem.listDir': {
    'entries are sorted by the Unicode code points of their names': [NAMES, TREES],
    "a symlink's type is its target's; a broken one is `other` without metadata": [TREES],
  },
  'FileSystem.listTree': {
    'each entry below the directory comes once, with `path` (its names below the directory, `/`-joined) and the fields `listDir` gives it': [TREES],
    'a symlink to a directory is listed with `link: true` and never entered; a directory named in `prune` is listed and never entered': [TREES],
  },
  'FileSystem.stat': {
    'an absent target (or a broken symlink, a link loop, a path through a file) is `undefined`, not an error': [TREES],
    '`type` is `file`, `directory` or `other`; `size` is the byte size of a file': [NAMES, CONTENTS, TREES],
  },
  'FileSystem.readText': {
    'a NUL in the first 8192 bytes, or invalid UTF-8 anywhere (also a truncated last sequence), is `FS_NOT_TEXT`': [CONTENTS],
    'a leading UTF-8 BOM is not part of the text; line endings are returned as stored': [CONTENTS],
  },
  'FileSystem.streamText': {
    'chunk boundaries are meaningless: a multi-byte character is never split': [CONTENTS],
  },
  'FileSystem.streamBytes': {
    "chunk boundaries are meaningless; concatenated, the chunks are the file's bytes": [CONTENTS],
  },
  'FileSystem.writeBytes': {
    "the outcome says `create` or `update`, and its `version` equals the next `stat`'s; `readBytes` returns the bytes unchanged": [CONTENTS],
  },
  'FileSystem.writeText': {
    '`replaceIfVersion` on a missing file, or another version, is `FS_STALE_VERSION`': [GUARDS],
  },
  'FileSystem.editText': {
    'a missing target is `FS_STALE_VERSION`, guarded or not; a non-file is `FS_NOT_REGULAR_FILE`': [GUARDS],
    '`expected.version` is checked BEFORE matching: stale content is `FS_STALE_VERSION`, never a match error': [GUARDS],
  },
  'FileSystem.remove': {
    "`expected.version` removes only that version of a file; another one is `FS_STALE_VERSION` and nothing is removed; the guard holds with `capabilities.removeIfVersion` strength (absent: `replaceIfVersion`'s), and of N concurrent guarded removers exactly one wins":
      [GUARDS],
  },
  'FileSystem.rename': {
    '`expected.version` moves only that version of the file; another one is `FS_STALE_VERSION` and nothing changes': [GUARDS],
  },
}
