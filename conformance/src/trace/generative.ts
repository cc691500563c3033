/** The generative tests (`clauses/generative.ts`), by the grammar each draws from. */
export const PATHS = 'generative › resolve: every path form*'
export const NAMES = 'generative › names: any name*'
export const CONTENTS = 'generative › contents: any bytes*'
export const GUARDS = 'generative › guards: a version from any source*'
export const TREES = 'generative › listings: every entry of a drawn tree*'
/** The model-based run (`clauses/model.ts`): random sequences of every operation, with changes behind the store's back. */
export const MODEL = 'model-based › random command sequences agree with a plain model*'

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
    'entries are sorted by the Unicode code points of their names': [NAMES, TREES, MODEL],
    "a symlink's type is its target's; a broken one is `other` without metadata": [TREES],
    'missing is `FS_NOT_FOUND`; a non-directory is `FS_NOT_DIRECTORY`': [MODEL],
  },
  'FileSystem.listTree': {
    'each entry below the directory comes once, with `path` (its names below the directory, `/`-joined) and the fields `listDir` gives it': [TREES],
    'a symlink to a directory is listed with `link: true` and never entered; a directory named in `prune` is listed and never entered': [TREES],
  },
  'FileSystem.stat': {
    'an absent target (or a broken symlink, a link loop, a path through a file) is `undefined`, not an error': [TREES],
    '`type` is `file`, `directory` or `other`; `size` is the byte size of a file': [NAMES, CONTENTS, TREES, MODEL],
  },
  'FileSystem.readText': {
    'a NUL in the first 8192 bytes, or invalid UTF-8 anywhere (also a truncated last sequence), is `FS_NOT_TEXT`': [CONTENTS, MODEL],
    'a leading UTF-8 BOM is not part of the text; line endings are returned as stored': [CONTENTS, MODEL],
    'missing is `FS_NOT_FOUND`; a directory or special file is `FS_NOT_REGULAR_FILE`': [MODEL],
  },
  'FileSystem.streamText': {
    'chunk boundaries are meaningless: a multi-byte character is never split': [CONTENTS],
  },
  'FileSystem.streamBytes': {
    "chunk boundaries are meaningless; concatenated, the chunks are the file's bytes": [CONTENTS],
  },
  'FileSystem.writeBytes': {
    "the outcome says `create` or `update`, and its `version` equals the next `stat`'s; `readBytes` returns the bytes unchanged": [CONTENTS, MODEL],
  },
  'FileSystem.writeText': {
    '`replaceIfVersion` on a missing file, or another version, is `FS_STALE_VERSION`': [GUARDS, MODEL],
    'missing parent directories are created': [MODEL],
    'an existing directory or special file is `FS_NOT_REGULAR_FILE`': [MODEL],
    '`createIfAbsent` on an existing file is `FS_NOT_OBSERVED`; a concurrent creator is never overwritten': [MODEL],
    'content that begins with U+FEFF is stored as given; a read drops exactly one leading BOM': [MODEL],
    'a version of deleted content never guards a re-created file (where versions derive from content, equal content carries an equal version)': [MODEL],
    "the outcome's `before` is the previous text (LF-normalized, without BOM) or `null`; `after` is `content` LF-normalized, without a leading BOM": [MODEL],
  },
  'FileSystem.editText': {
    'a missing target is `FS_STALE_VERSION`, guarded or not; a non-file is `FS_NOT_REGULAR_FILE`': [GUARDS, MODEL],
    '`expected.version` is checked BEFORE matching: stale content is `FS_STALE_VERSION`, never a match error': [GUARDS, MODEL],
    '`edit` is one request or a list of them, applied in order (each to the text the previous one left) inside the one critical section, all or nothing: if any fails, nothing is written, and the error names it (`edit N of M: …`, `details.edit` its 0-based index); `before` is the file as read, `after` the text after the last edit':
      [MODEL],
    'a malformed request (an empty `oldString`, wrong types) is `FS_EDIT_NOT_FOUND` before any I/O': [MODEL],
    'non-text content is `FS_NOT_TEXT`; a file above `maxTextBytes`, or a result that would be, is `FS_TOO_LARGE` and the file is left untouched': [MODEL],
    'matching is on LF-normalized text (`oldString` and `newString` are normalized too)': [MODEL],
    'an empty `oldString` or no match is `FS_EDIT_NOT_FOUND`': [MODEL],
    'several matches without `replaceAll` is `FS_AMBIGUOUS_EDIT` (`details.matches` says how many)': [MODEL],
    '`$` in `newString` is literal; an empty `newString` deletes the match': [MODEL],
    "the outcome's `before`/`after` are LF-normalized, without BOM": [MODEL],
  },
  'FileSystem.remove': {
    "`expected.version` removes only that version of a file; another one is `FS_STALE_VERSION` and nothing is removed; the guard holds with `capabilities.removeIfVersion` strength (absent: `replaceIfVersion`'s), and of N concurrent guarded removers exactly one wins":
      [GUARDS, MODEL],
    'missing is `FS_NOT_FOUND` (`FS_STALE_VERSION` when guarded); a special file is `FS_NOT_REGULAR_FILE`': [MODEL],
    "`expected` may name a directory's version (as `stat` reports it): the directory goes only while it has it, and a file that took its place is `FS_STALE_VERSION` (so a caller that saw a directory never removes an unseen file); a malformed `expected` or `recursive` is `FS_UNSUPPORTED`":
      [MODEL],
    'a directory with entries is `FS_NOT_EMPTY` unless `recursive`, and nothing is removed': [MODEL],
    '`recursive` removes the directory and everything below it; symlinks inside are removed, never followed; a tree of more than `maxRemoveEntries` (default 10,000) entries is `FS_TOO_LARGE` (`details.entries`) before anything is removed; a recursive remove is not atomic: one that fails part way leaves the entries it had not reached':
      [MODEL],
    "after a remove, `stat` is `undefined` and the parent's listing no longer shows the name; the outcome counts the entries removed": [MODEL],
  },
  'FileSystem.rename': {
    '`expected.version` moves only that version of the file; another one is `FS_STALE_VERSION` and nothing changes': [GUARDS, MODEL],
    "missing `from` is `FS_NOT_FOUND` (`FS_STALE_VERSION` when guarded); a special file is `FS_NOT_REGULAR_FILE`; a directory where `renameDirectories` is false is `FS_UNSUPPORTED`; `expected` may name a directory's version, as for `remove`; a directory never replaces anything: an existing `to` is `FS_NOT_OBSERVED`, or `FS_UNSUPPORTED` with `overwrite`":
      [MODEL],
    'an existing `to` is `FS_NOT_OBSERVED` unless `overwrite`; `overwrite: true` replaces a file there, `overwrite: { version }` only that version of it (else `FS_STALE_VERSION`); a missing `to` is created whatever `overwrite` says; a directory at `to` is never replaced (`FS_NOT_OBSERVED`, or `FS_NOT_REGULAR_FILE` with `overwrite`); a malformed `expected` or `overwrite` is `FS_UNSUPPORTED`':
      [MODEL],
    'missing parent directories of `to` are created; `to` inside the directory `from` is `FS_UNSUPPORTED`': [MODEL],
    "`from` and `to` naming one file (one `targetKey`) changes nothing and reports the current version (a layer's fence still applies: it reaches layers through the `renameInPlace` hook)":
      [MODEL],
    'at every moment at least one of the two names holds the whole content; afterwards only `to` does': [MODEL],
    "the outcome's `version` equals the next `stat` of `to`": [MODEL],
  },
  FileSystem: {
    'every failure is an `FsError` with a code of `FsErrorCode`; nothing else escapes': [MODEL],
  },
  'FileSystem.readBytes': {
    'missing is `FS_NOT_FOUND`; a directory or special file is `FS_NOT_REGULAR_FILE`': [MODEL],
  },
  'FileSystem.createDirectory': {
    'an existing directory is success with `created: false`, and nothing changes (idempotent)': [MODEL],
    'a file (or other non-directory) at the path or on the way is `FS_NOT_DIRECTORY`': [MODEL],
    "afterwards `stat` says `directory`, its listing is empty, and the parent lists it, also where the store has no directories of its own (`createDirectory: 'marker'`), until it is removed":
      [MODEL],
  },
}
