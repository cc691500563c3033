/** The generative tests (`clauses/generative.ts`), by the grammar each draws from. */
export const PATHS = 'generative › resolve: every path form*'
export const NAMES = 'generative › names: any name*'
export const CONTENTS = 'generative › contents: any bytes*'
export const GUARDS = 'generative › guards: a version from any source*'
export const TREES = 'generative › listings: every entry of a drawn tree*'
/** The argument grammar (`clauses/arguments.ts`): malformed options, and text with a NUL or a lone surrogate. */
export const ARGS = 'generative: arguments › any malformed option of any operation*'
export const TEXT = 'generative: arguments › text with a lone surrogate anywhere*'
export const LIMITS = 'generative: limits › any size around maxTextBytes*'
export const MODES = 'generative: modes › any mode*'
/** Overrides of the public methods, drawn (`clauses/final-methods.ts`). */
export const OVERRIDES = 'public methods are final › any public method answered by other code*'
/** close() at drawn moments of drawn operations in flight (`clauses/lifecycle.ts`). */
export const CLOSES = 'lifecycle › close() at any moment of operations in flight*'
/** Mutations on a store that does not write, drawn (`clauses/read-only.ts`). */
export const READ_ONLY = 'read-only store › any mutation, with any of its options*'
/** Drawn ends of opened files (`clauses/open-file.ts`). */
export const OPEN_ENDS = 'read/open: openFile › openFile: any mix of ends*'
/** The finer timing adversary (`clauses/interleavings.ts`): observers at every promise turn of an operation. */
export const TURNS_WRITE = 'interleavings › a read or a listing started at any promise turn of a write*'
export const TURNS_MOVE = 'interleavings › a look at both names at any promise turn of a move*'
export const TURNS_TREE = 'interleavings › a tree listing started at any promise turn of a recursive remove*'
export const TURNS_EDITS = 'interleavings › unguarded edits of one file started at every promise turn*'
export const TURNS_GUARDS = 'interleavings › guarded writers started at every promise turn*'
/** Capability claims probed (`clauses/capabilities.ts`). */
export const ATOMIC_GUARDS = 'capabilities: atomic guards › *'
/** Spellings of the store's root (`clauses/root.ts`). */
export const ROOTS = "the store's root › any spelling of the store's root*"
/** Bounded streams, drawn: file size, lines, multi-byte runs and the reader's pauses (`clauses/stream.ts`). */
export const BOUNDED = 'read/stream: streaming › * memory stays bounded by the chunk size*'
/** Guarded mutations drawn across processes (`clauses/cross-process.ts`): which one, which file, where its guard came from. */
export const PROCESSES = 'cross-instance races › * drawn guarded mutations from drawn guard sources*'
/** Aborts at drawn moments of every operation, on present and absent targets (`clauses/aborts.ts`). */
export const ABORTS = 'abort: at any moment › *'
/** The model-based run (`clauses/model.ts`): random sequences of every operation, with changes behind the store's back. */
export const MODEL = 'model-based › random command sequences agree with a plain model*'

/**
 * The rules the generative tests check over their whole input space, added to each rule's
 * hand-picked tests in {@link TRACE}; the README's table says which grammar covers a rule by the
 * test it names. Every rule line has an entry here: `conformance/test/trace.test.ts` fails on one
 * checked on hand-picked inputs only.
 */
export const GENERATIVE_TRACE: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  'FileSystem.resolve': {
    'names are exact: two names that differ in case or in Unicode normalization are two files (a store that folds either does not conform)': [NAMES],
    "a relative path resolves against `opts.cwd`, else the backend's cwd; an absolute path ignores both": [PATHS],
    "a relative `opts.cwd` is itself resolved against the backend's cwd": [PATHS],
    'aliases of one file (`..`, `.`, symlinks where supported) yield one `targetKey`': [PATHS, NAMES],
    'a missing path resolves (it may be created), with the same key before and after creation': [PATHS],
    'a path through a regular file is `FS_NOT_FOUND`': [PATHS],
    '`resolve(target.displayPath)` yields the same `targetKey` while nothing changed (the sandbox re-resolves by it)': [PATHS, NAMES],
    'a blank path, a NUL byte or a lone surrogate is `FS_NOT_FOUND`; a NUL or a lone surrogate in `cwd` too': [TEXT],
  },
  'FileSystem.contains': {
    'true when `child` is `parent` or a descendant of it; false otherwise (also for a mere name prefix)': [PATHS],
  },
  'FileSystem.lstat': {
    "path text and `cwd` follow `resolve`'s rules; an absent path is `undefined`": [PATHS],
    'a path through a regular file, or through a link loop, is `undefined` (absent), as in `stat`': [TREES],
  },
  'FileSystem.listDir': {
    "an entry's `target` is what `resolve` gives its path: a dangling link's is the missing path it names; a link that does not resolve (a loop, a path through a file) keeps its own path":
      [TREES],
    'entries are sorted by the Unicode code points of their names': [NAMES, TREES, MODEL],
    "a symlink's type is its target's; a broken one is `other` without metadata": [TREES],
    'missing is `FS_NOT_FOUND`; a non-directory is `FS_NOT_DIRECTORY`': [MODEL],
    'no file content is read; staging residue of in-flight writes is never listed': [TURNS_WRITE],
  },
  'FileSystem.listTree': {
    'each entry below the directory comes once, with `path` (its names below the directory, `/`-joined) and the fields `listDir` gives it': [TREES, MODEL],
    'a symlink to a directory is listed with `link: true` and never entered; a directory named in `prune` is listed and never entered': [TREES],
    'the signal is checked between pages; a `prune` that is not an array of strings is `FS_UNSUPPORTED` before any I/O': [ARGS],
    'missing is `FS_NOT_FOUND`; what `stat` reports as a file or other is `FS_NOT_DIRECTORY`; both reject the returned promise': [MODEL],
    'pages, and the entries of a page, come in any order; no file content is read; staging residue of in-flight writes is never listed': [TURNS_WRITE],
    'a directory below that is gone by the time it is listed is left out; any other failure is thrown by the iterator': [TURNS_TREE],
  },
  'FileSystem.stat': {
    '`version` is unchanged while the content is unchanged, and changes on every content change': [MODEL],
    'an absent target (or a broken symlink, a link loop, a path through a file) is `undefined`, not an error': [TREES],
    '`type` is `file`, `directory` or `other`; `size` is the byte size of a file': [NAMES, CONTENTS, TREES, MODEL],
  },
  'FileSystem.readText': {
    'a NUL in the first 8192 bytes, or invalid UTF-8 anywhere (also a truncated last sequence), is `FS_NOT_TEXT`': [CONTENTS, MODEL],
    'a leading UTF-8 BOM is not part of the text; line endings are returned as stored': [CONTENTS, MODEL],
    'missing is `FS_NOT_FOUND`; a directory or special file is `FS_NOT_REGULAR_FILE`': [MODEL],
    'a file above `maxTextBytes` (whose text may not fit one JavaScript string) is `FS_TOO_LARGE`': [LIMITS],
  },
  'FileSystem.streamText': {
    'the signal is checked between chunks; stopping early releases the file': [ABORTS],
    'chunk boundaries are meaningless: a multi-byte character is never split': [CONTENTS],
    'memory stays bounded by the chunk size, whatever the file size': [BOUNDED],
    'open-time failures reject the returned promise; later failures are thrown by the iterator': [MODEL],
  },
  'FileSystem.streamBytes': {
    'the signal is checked between chunks; stopping early releases the file': [ABORTS],
    "chunk boundaries are meaningless; concatenated, the chunks are the file's bytes": [CONTENTS],
    'memory stays bounded by the chunk size, whatever the file size': [BOUNDED],
    'open-time failures reject the returned promise (missing is `FS_NOT_FOUND`, a directory or special file `FS_NOT_REGULAR_FILE`); later failures are thrown by the iterator':
      [MODEL],
    "a chunk is the caller's until it asks for the next one: the backend may reuse its buffer afterwards, so copy a chunk to keep it (`new Uint8Array(chunk)`: a `Buffer`'s `slice` does not copy)":
      [CONTENTS],
  },
  'FileSystem.writeBytes': {
    "the outcome says `create` or `update`, and its `version` equals the next `stat`'s; `readBytes` returns the bytes unchanged": [CONTENTS, MODEL],
    'content that is not a `Uint8Array` is `FS_UNSUPPORTED`; above `maxTextBytes` it is `FS_TOO_LARGE`': [ARGS],
    'the bytes are copied before the call returns: changing the array afterwards changes nothing written': [CONTENTS],
  },
  'FileSystem.writeText': {
    'a failed or aborted write leaves the old content and no residue in a listing': [ABORTS, MODEL],
    "the outcome says `create` or `update`, and its `version` equals the next `stat`'s": [MODEL],
    '`replaceIfVersion` on a missing file, or another version, is `FS_STALE_VERSION`': [GUARDS, MODEL],
    'missing parent directories are created': [MODEL],
    'an existing directory or special file is `FS_NOT_REGULAR_FILE`': [MODEL],
    '`createIfAbsent` on an existing file is `FS_NOT_OBSERVED`; a concurrent creator is never overwritten': [MODEL],
    'content that begins with U+FEFF is stored as given; a read drops exactly one leading BOM': [MODEL],
    'a version of deleted content never guards a re-created file (where versions derive from content, equal content carries an equal version)': [MODEL],
    "the outcome's `before` is the previous text (LF-normalized, without BOM) or `null`; `after` is `content` LF-normalized, without a leading BOM": [MODEL],
    'an unknown guard kind is `FS_UNSUPPORTED`, never dropped': [ARGS],
    'content that is not a string, or holds a lone surrogate, is `FS_NOT_TEXT`; above `maxTextBytes` it is `FS_TOO_LARGE`': [ARGS, TEXT, LIMITS],
    "`before: false` makes the outcome's `before` `null` and asks the backend not to fetch the previous content (`beforeMaxBytes` 0); every other rule holds as without it; a `before` that is not a boolean is `FS_UNSUPPORTED` before any I/O":
      [ARGS],
    'a reader sees the old content or the new, whole, never a mix': [TURNS_WRITE],
    'of N concurrent guarded writers from one version, exactly one wins': [TURNS_GUARDS],
    'writing a symlink writes its target and keeps the link': [TREES],
    'where `capabilities.permissions`, an existing file whose mode grants write permission to no one (`mode & 0o222` is 0, e.g. 0444) is `FS_PERMISSION_DENIED` and keeps its content, mode and version; `createIfAbsent` on it is still `FS_NOT_OBSERVED`':
      [MODES],
  },
  'FileSystem.editText': {
    "inserted text takes the file's dominant line ending; untouched text keeps its bytes; a BOM stays": [MODEL],
    'a missing target is `FS_STALE_VERSION`, guarded or not; a non-file is `FS_NOT_REGULAR_FILE`': [GUARDS, MODEL],
    '`expected.version` is checked BEFORE matching: stale content is `FS_STALE_VERSION`, never a match error': [GUARDS, MODEL],
    '`edit` is one request or a list of them, applied in order (each to the text the previous one left) inside the one critical section, all or nothing: if any fails, nothing is written, and the error names it (`edit N of M: …`, `details.edit` its 0-based index); `before` is the file as read, `after` the text after the last edit':
      [MODEL],
    'a malformed request (an empty `oldString`, wrong types) is `FS_EDIT_NOT_FOUND` before any I/O': [MODEL, ARGS],
    'non-text content is `FS_NOT_TEXT`; a file above `maxTextBytes`, or a result that would be, is `FS_TOO_LARGE` and the file is left untouched': [
      MODEL,
      LIMITS,
    ],
    'matching is on LF-normalized text (`oldString` and `newString` are normalized too)': [MODEL],
    'an empty `oldString` or no match is `FS_EDIT_NOT_FOUND`': [MODEL],
    'several matches without `replaceAll` is `FS_AMBIGUOUS_EDIT` (`details.matches` says how many)': [MODEL],
    '`$` in `newString` is literal; an empty `newString` deletes the match': [MODEL],
    "the outcome's `before`/`after` are LF-normalized, without BOM": [MODEL],
    'an empty list, or one of more than 1,000 edits, is `FS_EDIT_NOT_FOUND` before any I/O': [ARGS],
    'a `newString` with a lone surrogate is `FS_NOT_TEXT`, as for `writeText`; such an `oldString` is `FS_EDIT_NOT_FOUND`': [TEXT],
    'a malformed `expected` (not `{ version: string }`) is `FS_UNSUPPORTED` before any I/O': [ARGS],
    'concurrent unguarded edits of one file are serialized: none is lost': [TURNS_EDITS],
    'where `capabilities.permissions`, a file whose mode grants write permission to no one (`mode & 0o222` is 0, e.g. 0444) is `FS_PERMISSION_DENIED` and keeps its content, mode and version':
      [MODES],
  },
  'FileSystem.remove': {
    "`expected.version` removes only that version of a file; another one is `FS_STALE_VERSION` and nothing is removed; the guard holds with `capabilities.removeIfVersion` strength (absent: `replaceIfVersion`'s), and of N concurrent guarded removers exactly one wins":
      [GUARDS, MODEL],
    'missing is `FS_NOT_FOUND` (`FS_STALE_VERSION` when guarded); a special file is `FS_NOT_REGULAR_FILE`': [MODEL],
    "`expected` may name a directory's version (as `stat` reports it): the directory goes only while it has it, and a file that took its place is `FS_STALE_VERSION` (so a caller that saw a directory never removes an unseen file); a malformed `expected` or `recursive` is `FS_UNSUPPORTED`":
      [MODEL, ARGS],
    'a directory with entries is `FS_NOT_EMPTY` unless `recursive`, and nothing is removed': [MODEL],
    '`recursive` removes the directory and everything below it; symlinks inside are removed, never followed; a tree of more than `maxRemoveEntries` (default 10,000) entries is `FS_TOO_LARGE` (`details.entries`) before anything is removed; a recursive remove is not atomic: one that fails part way leaves the entries it had not reached':
      [MODEL],
    "after a remove, `stat` is `undefined` and the parent's listing no longer shows the name; the outcome counts the entries removed": [MODEL],
    "a target resolved through a symlink names the link's target: that file is removed, the link stays (as writes write through links)": [TREES],
    "the store's root (the directory `rootTarget` names: `resolve('/')`, or a backend's `root` scope) is never removed: `FS_PERMISSION_DENIED` before any change, on every backend":
      [ROOTS],
  },
  'FileSystem.rename': {
    'a failed or aborted rename leaves both names as they were; of N concurrent renamers of one version exactly one wins': [ABORTS, MODEL],
    '`expected.version` moves only that version of the file; another one is `FS_STALE_VERSION` and nothing changes': [GUARDS, MODEL],
    "missing `from` is `FS_NOT_FOUND` (`FS_STALE_VERSION` when guarded); a special file is `FS_NOT_REGULAR_FILE`; a directory where `renameDirectories` is false is `FS_UNSUPPORTED`; `expected` may name a directory's version, as for `remove`; a directory never replaces anything: an existing `to` is `FS_NOT_OBSERVED`, or `FS_UNSUPPORTED` with `overwrite`":
      [MODEL],
    'an existing `to` is `FS_NOT_OBSERVED` unless `overwrite`; `overwrite: true` replaces a file there, `overwrite: { version }` only that version of it (else `FS_STALE_VERSION`); a missing `to` is created whatever `overwrite` says; a directory at `to` is never replaced (`FS_NOT_OBSERVED`, or `FS_NOT_REGULAR_FILE` with `overwrite`); a malformed `expected` or `overwrite` is `FS_UNSUPPORTED`':
      [MODEL, ARGS],
    'missing parent directories of `to` are created; `to` inside the directory `from` is `FS_UNSUPPORTED`': [MODEL],
    "`from` and `to` naming one file (one `targetKey`) changes nothing and reports the current version (a layer's fence still applies: it reaches layers through the `renameInPlace` hook)":
      [MODEL],
    'at every moment at least one of the two names holds the whole content; afterwards only `to` does': [MODEL, TURNS_MOVE],
    "the outcome's `version` equals the next `stat` of `to`": [MODEL],
    "the store's root is never moved, nor anything moved onto it: `FS_PERMISSION_DENIED`, as for `remove`": [ROOTS],
  },
  FileSystem: {
    "an aborted `signal` fails with `FS_ABORTED` and changes nothing, unless flagged `indeterminate`; the abort is honoured at once, also while the store has not answered (a change to SPEC's \"a mutation whose publication has begun completes instead\"): a read fails at the abort, a mutation's hook gets `ABORT_GRACE_MS` (20 ms) to answer by itself, then the call fails flagged `indeterminate` (it may still land), and the hook's late answer is consumed and dropped":
      [ABORTS],
    'a mutation that fails without `indeterminate` did not happen; one flagged `indeterminate` (its answer was lost: a connection died with it in flight, or the abort above) may have':
      [ABORTS, MODEL],
    'every failure is an `FsError` with a code of `FsErrorCode`; nothing else escapes': [MODEL],
    'every failure names its operation and path in the fields `verb` and `path`': [ARGS],
    "the public methods are final: a class that overrides one is refused at construction with a `TypeError` naming the method and its hook; `fileUrl`, `contains` and `close` are the backend's own":
      [OVERRIDES],
    'a store that does not write (`capabilities.readOnly`) refuses every mutation with `FS_PERMISSION_DENIED` before any I/O, and nothing changes': [READ_ONLY],
  },
  'FileSystem.readBytes': {
    'missing is `FS_NOT_FOUND`; a directory or special file is `FS_NOT_REGULAR_FILE`': [MODEL],
    '`maxBytes` that is not a non-negative integer is `FS_UNSUPPORTED` before any I/O': [ARGS],
    'a file above `maxBytes` (default and ceiling `maxTextBytes`) is `FS_TOO_LARGE`, refused before its content is read': [CONTENTS, LIMITS],
    "the bytes are the caller's: changing them changes nothing stored": [CONTENTS],
    "they are an array of their own: its `buffer` holds them and nothing else (`byteOffset` 0, no other bytes of the process beside them, as a view of Node's shared `Buffer` pool would show); core copies a store's answer that is not":
      [CONTENTS],
  },
  'FileSystem.createDirectory': {
    'an existing directory is success with `created: false`, and nothing changes (idempotent)': [MODEL],
    'a file (or other non-directory) at the path or on the way is `FS_NOT_DIRECTORY`': [MODEL],
    "afterwards `stat` says `directory`, its listing is empty, and the parent lists it, also where the store has no directories of its own (`createDirectory: 'marker'`), until it is removed":
      [MODEL],
  },
  'FileSystem.openFile': {
    '`info` is what `stat` says of the file (`type` is `file`, `size` its byte size) and its `version` never names newer content than `chunks` yields: a guard built on it fails `FS_STALE_VERSION` if the file changed since (a backend that needs two looks takes the version first)':
      [CONTENTS, MODEL],
    "`chunks` follow `streamBytes`' rules: concatenated they are the file's bytes; a chunk is the caller's until it asks for the next one; the signal is checked between chunks; later failures are thrown by the iterator":
      [CONTENTS],
    'missing is `FS_NOT_FOUND`; a directory or special file is `FS_NOT_REGULAR_FILE`; both reject the returned promise': [MODEL],
    'reading `chunks` to the end, stopping early or `close()` releases the file; `close()` is idempotent': [OPEN_ENDS],
  },
  GuardStrength: {
    '`atomic`: by the store itself, against any writer (a program that knows nothing of seamfs too)': [ATOMIC_GUARDS],
    '`seamfs`: among every seamfs writer of the store, in any process on any machine (lock entries with leases kept in the store); a writer that is not seamfs can still slip between check and commit':
      [PROCESSES],
    '`process`: only among the callers inside this process': [TURNS_GUARDS],
  },
  'FileSystem.processPath': {
    'throws `FS_UNSUPPORTED` when `capabilities.processPath` is false': [PATHS],
  },
  'FileSystem.close': {
    'a second `close()` resolves, at once': [CLOSES],
    'after `close()`, each operation works (a store with nothing to release) or fails with an `FsError` (`FS_IO_ERROR` where the connection is gone), and none hangs':
      [CLOSES],
  },
}
