import { MODEL, type OwnerTraces } from './rule-trace.js'

/** The rules common to every method, and those of the methods that only look: resolve, stat, read, stream, list. */
export const READ_TRACE: OwnerTraces = {
  FileSystem: {
    'every failure is an `FsError` with a code of `FsErrorCode`; nothing else escapes': [
      'errors › *',
      'lifecycle › after close(), every operation works or fails with an FsError, and none hangs',
    ],
    "the public methods are final: a class that overrides one is refused at construction with a `TypeError` naming the method and its hook; `fileUrl`, `contains` and `close` are the backend's own":
      {
        tests: ['public methods are final › *'],
        note: "core's constructor refuses the class before the kit sees a subject (packages/core/test/final-methods.test.ts); the kit's clause refuses what a class cannot show (an instance's own property, a proxy, an object that is no FileSystem)",
      },
    "an aborted `signal` fails with `FS_ABORTED` and changes nothing, unless flagged `indeterminate`; the abort is honoured at once, also while the store has not answered (a change to SPEC's \"a mutation whose publication has begun completes instead\"): a read fails at the abort, a mutation's hook gets `ABORT_GRACE_MS` (20 ms) to answer by itself, then the call fails flagged `indeterminate` (it may still land), and the hook's late answer is consumed and dropped":
      {
        tests: [
          'abort › *',
          'abort: at any moment › *',
          'a guarded write or edit with an aborted signal is FS_ABORTED and changes nothing',
          'a guarded write or edit aborted in flight either completes or changes nothing',
          'streamText: the signal is checked between chunks (an abort after the first chunk makes the iterator throw FS_ABORTED)',
          'streamBytes: the signal is checked between chunks, and stopping early releases the file',
          'a failed or aborted write leaves the old content and no residue in the listing',
        ],
        note: "the kit cannot freeze a store: an abort while the store has not answered is core's own (packages/core/test/abort-wait.test.ts) and each remote backend's freeze tests",
      },
    'a mutation that fails without `indeterminate` did not happen; one flagged `indeterminate` (its answer was lost: a connection died with it in flight, or the abort above) may have':
      {
        tests: [
          'a guarded write or edit aborted in flight either completes or changes nothing',
          'a failed or aborted write leaves the old content and no residue in the listing',
          'abort: at any moment › *(indeterminate: the change whole or not at all)*',
        ],
        note: "the kit cannot cut a connection: lost answers are each remote backend's kill-during-write tests",
      },
    'every failure names its operation and path in the fields `verb` and `path`': ['errors › *', 'abort › *'],
    'a store that does not write (`capabilities.readOnly`) refuses every mutation with `FS_PERMISSION_DENIED` before any I/O, and nothing changes': [
      'read-only store › *',
    ],
  },

  'FileSystem.resolve': {
    'names are exact: two names that differ in case or in Unicode normalization are two files (a store that folds either does not conform)': [
      'generative › names: any name*',
    ],
    'a blank path, a NUL byte or a lone surrogate is `FS_NOT_FOUND`; a NUL or a lone surrogate in `cwd` too': [
      'a blank path is FS_NOT_FOUND',
      'a NUL byte or a lone surrogate is FS_NOT_FOUND, also in opts.cwd (resolve and lstat)',
      'resolve on blank path is FS_NOT_FOUND with its verb and path, and the store is unchanged',
      'resolve on NUL byte is FS_NOT_FOUND with its verb and path, and the store is unchanged',
      'resolve on lone surrogate is FS_NOT_FOUND with its verb and path, and the store is unchanged',
    ],
    "a relative path resolves against `opts.cwd`, else the backend's cwd; an absolute path ignores both": [
      'a relative path resolves against opts.cwd (itself relative to the backend cwd)',
      'an absolute path ignores opts.cwd, and an absolute opts.cwd is used as is (resolve and lstat)',
    ],
    "a relative `opts.cwd` is itself resolved against the backend's cwd": ['a relative path resolves against opts.cwd (itself relative to the backend cwd)'],
    'aliases of one file (`..`, `.`, symlinks where supported) yield one `targetKey`': [
      '. and .. aliases of one file share a targetKey',
      '.. at the root stays at the root, as in POSIX: /.., /../x and a relative path climbing past the root resolve like /, /x',
      'a symlink and its target share a targetKey',
      'aliases through a symlinked parent directory share a targetKey (existing and missing files)',
    ],
    'a missing path resolves (it may be created), with the same key before and after creation': [
      'a missing path resolves, with the same key before and after creation',
    ],
    'a path through a regular file is `FS_NOT_FOUND`': [
      'a path through a regular file is FS_NOT_FOUND',
      'resolve on path through a file is FS_NOT_FOUND with its verb and path, and the store is unchanged',
    ],
    '`resolve(target.displayPath)` yields the same `targetKey` while nothing changed (the sandbox re-resolves by it)': [
      'resolving a displayPath again yields the same targetKey',
    ],
  },

  'FileSystem.processPath': {
    'throws `FS_UNSUPPORTED` when `capabilities.processPath` is false': ['processPath is absolute when capabilities.processPath, else FS_UNSUPPORTED'],
  },

  'FileSystem.contains': {
    'true when `child` is `parent` or a descendant of it; false otherwise (also for a mere name prefix)': [
      'contains: a directory contains itself and its descendants, not a sibling sharing a prefix',
      'contains: every target contains itself (a file, a directory, the root, a missing path, an alias, a copy)',
    ],
  },

  'FileSystem.stat': {
    'an absent target (or a broken symlink, a link loop, a path through a file) is `undefined`, not an error': [
      'stat of an absent target is undefined',
      'stat of a broken symlink is undefined',
      'stat of a link loop is undefined; lstat follows symlinked parents and reports only a final link',
      'stat of a path through a regular file is undefined (the parent became a file after resolve)',
    ],
    '`type` is `file`, `directory` or `other`; `size` is the byte size of a file': {
      tests: ['stat of a file: type file, size in bytes', 'stat of a directory: type directory'],
      note: '`other`',
    },
    '`version` is unchanged while the content is unchanged, and changes on every content change': [
      'an unchanged file keeps its version across stats and reads',
      'every content change makes a new version, also at the same size in quick succession',
      'a same-size change far from the head of a large file (its last byte, its middle) makes a new version',
      'an external same-size rewrite changes the version and makes guards stale',
      'an external same-size change far from the head of a large file (its last byte, its middle) changes the version',
      MODEL,
    ],
  },

  'FileSystem.lstat': {
    "path text and `cwd` follow `resolve`'s rules; an absent path is `undefined`": [
      "lstat: path text and cwd follow resolve's rules (a relative path resolves against opts.cwd)",
      'a NUL byte or a lone surrogate is FS_NOT_FOUND, also in opts.cwd (resolve and lstat)',
      'an absolute path ignores opts.cwd, and an absolute opts.cwd is used as is (resolve and lstat)',
      'lstat: a blank path is FS_NOT_FOUND',
      'lstat on blank path is FS_NOT_FOUND with its verb and path, and the store is unchanged',
      'lstat: absent is undefined, file and directory are reported as such',
    ],
    'a path through a regular file, or through a link loop, is `undefined` (absent), as in `stat`': [
      'lstat: a path through a regular file is undefined (absent), as for stat',
      'stat of a path through a regular file is undefined (the parent became a file after resolve)',
      'lstat: a path through a link loop is undefined (absent); the link itself is a symlink',
    ],
  },

  'FileSystem.readText': {
    'missing is `FS_NOT_FOUND`; a directory or special file is `FS_NOT_REGULAR_FILE`': {
      tests: [
        'readText and streamText of a missing file are FS_NOT_FOUND',
        'readText and streamText of a directory are FS_NOT_REGULAR_FILE',
        'readText on missing file is FS_NOT_FOUND with its verb and path, and the store is unchanged',
        'readText on a directory is FS_NOT_REGULAR_FILE with its verb and path, and the store is unchanged',
      ],
      note: 'a special file',
    },
    'a NUL in the first 8192 bytes, or invalid UTF-8 anywhere (also a truncated last sequence), is `FS_NOT_TEXT`': [
      'a NUL at byte 0 or 8191 is FS_NOT_TEXT; at byte 8192 the file is text',
      'invalid UTF-8 (*) is FS_NOT_TEXT for readText and streamText',
      'invalid UTF-8 far past the first chunk is FS_NOT_TEXT',
      'readText on binary content is FS_NOT_TEXT with its verb and path, and the store is unchanged',
    ],
    'a leading UTF-8 BOM is not part of the text; line endings are returned as stored': [
      'a leading UTF-8 BOM is not part of the text (read and stream)',
      'content that begins with U+FEFF is stored as given; a read drops exactly one leading BOM',
      'readText returns exactly the written text',
      'stored bytes round-trip: what the store holds is what readText decodes',
      'streamText: line endings are returned as stored (CRLF, lone CR), also across chunk boundaries',
    ],
    'a file above `maxTextBytes` (whose text may not fit one JavaScript string) is `FS_TOO_LARGE`': ['readText of a file above maxTextBytes is FS_TOO_LARGE'],
  },

  'FileSystem.streamText': {
    'open-time failures reject the returned promise; later failures are thrown by the iterator': [
      'streamText: open-time failures reject the returned promise (a missing file, a directory)',
      'streamText: a failure after the first chunk is thrown by the iterator, after the chunks before it',
    ],
    'chunk boundaries are meaningless: a multi-byte character is never split': ['streamText: multi-byte characters split by chunk boundaries arrive whole'],
    'memory stays bounded by the chunk size, whatever the file size': ['streamText: memory stays bounded by the chunk size, whatever the file size*'],
    'the signal is checked between chunks; stopping early releases the file': [
      'streamText: the signal is checked between chunks (an abort after the first chunk makes the iterator throw FS_ABORTED)',
      'streamText: stopping early releases the file',
      'abort: at any moment › streamText aborted *',
    ],
  },

  'FileSystem.streamBytes': {
    'open-time failures reject the returned promise (missing is `FS_NOT_FOUND`, a directory or special file `FS_NOT_REGULAR_FILE`); later failures are thrown by the iterator':
      {
        tests: ['streamBytes: open-time failures reject the returned promise (a missing file, a directory)'],
        note: 'a special file, and a failure after the first chunk (bytes never fail to decode, and the kit cannot cut a store off mid-stream)',
      },
    "chunk boundaries are meaningless; concatenated, the chunks are the file's bytes": [
      'streamBytes: the chunks, concatenated, are the stored bytes exactly (BOM, NUL, CRLF, invalid UTF-8 included)',
    ],
    "a chunk is the caller's until it asks for the next one: the backend may reuse its buffer afterwards, so copy a chunk to keep it (`new Uint8Array(chunk)`: a `Buffer`'s `slice` does not copy)":
      ['streamBytes: a chunk stays as it was handed over until the caller asks for the next one'],
    'memory stays bounded by the chunk size, whatever the file size': ['streamBytes: memory stays bounded by the chunk size, whatever the file size*'],
    'the signal is checked between chunks; stopping early releases the file': [
      'streamBytes: the signal is checked between chunks, and stopping early releases the file',
      'abort: at any moment › streamBytes aborted *',
    ],
  },

  'FileSystem.openFile': {
    'missing is `FS_NOT_FOUND`; a directory or special file is `FS_NOT_REGULAR_FILE`; both reject the returned promise': {
      tests: ['openFile: a missing file is FS_NOT_FOUND and a directory FS_NOT_REGULAR_FILE, rejecting the promise'],
      note: 'a special file (the kit cannot make one)',
    },
    '`info` is what `stat` says of the file (`type` is `file`, `size` its byte size) and its `version` never names newer content than `chunks` yields: a guard built on it fails `FS_STALE_VERSION` if the file changed since (a backend that needs two looks takes the version first)':
      {
        tests: [
          'openFile: info is what stat says, and the chunks, concatenated, are the stored bytes',
          'openFile: its version guards a write: it passes while the file is unchanged, and is stale once it changed',
        ],
        note: 'a change racing the open itself (the kit cannot time one)',
      },
    "`chunks` follow `streamBytes`' rules: concatenated they are the file's bytes; a chunk is the caller's until it asks for the next one; the signal is checked between chunks; later failures are thrown by the iterator":
      {
        tests: ['openFile: info is what stat says, and the chunks, concatenated, are the stored bytes', 'openFile: the signal is checked between chunks'],
        note: "a chunk held across the next request, and a failure after the first chunk: streamBytes' tests, on the same chunks",
      },
    'reading `chunks` to the end, stopping early or `close()` releases the file; `close()` is idempotent': [
      'openFile: reading to the end, stopping early or close() releases the file; close() is idempotent',
    ],
  },

  'FileSystem.listDir': {
    "an entry's `target` is what `resolve` gives its path: a dangling link's is the missing path it names; a link that does not resolve (a loop, a path through a file) keeps its own path":
      ['generative › listings: every entry of a drawn tree*'],
    'missing is `FS_NOT_FOUND`; a non-directory is `FS_NOT_DIRECTORY`': [
      'a missing directory is FS_NOT_FOUND; a file is FS_NOT_DIRECTORY',
      'listDir on missing directory is FS_NOT_FOUND with its verb and path, and the store is unchanged',
      'listDir on a file is FS_NOT_DIRECTORY with its verb and path, and the store is unchanged',
    ],
    'entries are sorted by the Unicode code points of their names': [
      'entries are in Unicode code-point order (case, digits, punctuation, astral)',
      'hostile names round-trip through write, list and read',
      'a listing larger than any store page (1,100 entries, files and directories) is complete, in order, without duplicates',
    ],
    "a symlink's type is its target's; a broken one is `other` without metadata": ["a symlink has its target's type; a broken one or a loop is other"],
    'no file content is read; staging residue of in-flight writes is never listed': [
      'works on a directory full of binary files (no content is read)',
      'staging residue of in-flight writes is never listed, only the final names',
    ],
  },

  'FileSystem.listTree': {
    'missing is `FS_NOT_FOUND`; what `stat` reports as a file or other is `FS_NOT_DIRECTORY`; both reject the returned promise': {
      tests: ['listTree of a missing directory is FS_NOT_FOUND, of a file FS_NOT_DIRECTORY: the returned promise rejects'],
      note: 'a special file (the kit cannot make one on every store)',
    },
    'each entry below the directory comes once, with `path` (its names below the directory, `/`-joined) and the fields `listDir` gives it': [
      'listTree lists every entry below the directory once, with its path and what listDir gives it',
      'a tree larger than any store page (1,040 files, three depths) is listed whole, without duplicates',
    ],
    'a symlink to a directory is listed with `link: true` and never entered; a directory named in `prune` is listed and never entered': [
      'a symlink to a directory is listed with link: true and never entered; other links are listed as listDir shows them',
      'a directory named in prune is listed and never entered; the root itself is entered whatever its name',
    ],
    'pages, and the entries of a page, come in any order; no file content is read; staging residue of in-flight writes is never listed': [
      'listTree lists every entry below the directory once, with its path and what listDir gives it',
      'no staging residue of in-flight writes is listed',
    ],
    'a directory below that is gone by the time it is listed is left out; any other failure is thrown by the iterator': {
      tests: ['a directory removed while the tree is listed is left out or listed whole, never a failure'],
      note: 'another failure below the directory (the kit cannot inject one)',
    },
    'the signal is checked between pages; a `prune` that is not an array of strings is `FS_UNSUPPORTED` before any I/O': [
      'listTree with an aborted signal is FS_ABORTED; a signal aborted between pages ends the listing with FS_ABORTED',
      'abort: at any moment › listTree aborted *',
      'a prune that is not an array of strings is FS_UNSUPPORTED',
    ],
  },

  'FileSystem.readBytes': {
    'missing is `FS_NOT_FOUND`; a directory or special file is `FS_NOT_REGULAR_FILE`': [
      'readBytes of a missing file is FS_NOT_FOUND; of a directory FS_NOT_REGULAR_FILE',
    ],
    'a file above `maxBytes` (default and ceiling `maxTextBytes`) is `FS_TOO_LARGE`, refused before its content is read': {
      tests: [
        'readBytes above maxBytes is FS_TOO_LARGE; a maxBytes that is not a non-negative integer is FS_UNSUPPORTED',
        'writeBytes above maxTextBytes is FS_TOO_LARGE and creates nothing',
      ],
      note: 'refused before the content is read (core checks the length again after the hook)',
    },
    '`maxBytes` that is not a non-negative integer is `FS_UNSUPPORTED` before any I/O': [
      'readBytes above maxBytes is FS_TOO_LARGE; a maxBytes that is not a non-negative integer is FS_UNSUPPORTED',
    ],
    "the bytes are the caller's: changing them changes nothing stored": ["the bytes readBytes returns are the caller's: changing them changes nothing stored"],
    "they are an array of their own: its `buffer` holds them and nothing else (`byteOffset` 0, no other bytes of the process beside them, as a view of Node's shared `Buffer` pool would show); core copies a store's answer that is not":
      ['readBytes answers an array of its own: its buffer holds the file and nothing else'],
  },
}
