/**
 * The trace from each rule line of the contract to the kit tests that check it.
 *
 * A rule line is a `- ` bullet in the TSDoc of a declaration in `packages/core/src/file-system.ts`
 * or `types.ts` (the class's own bullets are the rules common to every method). Entries are keyed
 * by owner (`FileSystem`, `FileSystem.readText`, `FsWriteOutcome.before`…) and by the rule's text
 * exactly as written (continuation lines joined, the final `;` or `.` dropped), so editing a rule
 * forces its trace to be reviewed. A test is named by its title, or `clause › title`; `*` stands
 * for any text (for titles that carry a seed or a size, or for every row of a table-driven clause).
 * A `note` says which part of the rule no test checks yet; it is shown in the table.
 *
 * `conformance/test/trace.test.ts` fails on a rule line without an entry, an entry whose rule line
 * is gone, or a test the kit does not register, and keeps the table in conformance/README.md in
 * sync (regenerate: `UPDATE_TRACE=1 npx vitest run conformance/test/trace.test.ts`). Name a test
 * here only if it can fail when the rule is broken.
 */

/** The kit tests that check one rule line, and optionally what part of it they leave unchecked. */
export type RuleTrace = readonly string[] | { readonly tests: readonly string[]; readonly note: string }

const MODEL = 'model-based › random command sequences agree with a plain model*'

export const TRACE: Readonly<Record<string, Readonly<Record<string, RuleTrace>>>> = {
  FileSystem: {
    'every failure is an `FsError` with a code of `FsErrorCode`; nothing else escapes': ['errors › *'],
    "an aborted `signal` fails with `FS_ABORTED` and changes nothing, unless flagged `indeterminate`; the abort is honoured at once, also while the store has not answered (issue 30, which changes SPEC's \"a mutation whose publication has begun completes instead\"): a read fails at the abort, a mutation's hook gets `ABORT_GRACE_MS` (20 ms) to answer by itself, then the call fails flagged `indeterminate` (it may still land), and the hook's late answer is consumed and dropped":
      {
        tests: [
          'abort › *',
          'a guarded write or edit with an aborted signal is FS_ABORTED and changes nothing',
          'a guarded write or edit aborted in flight either completes or changes nothing',
          'streamText: the signal is checked between chunks (an abort after the first chunk makes the iterator throw FS_ABORTED)',
          'a failed or aborted write leaves the old content and no residue in the listing',
        ],
        note: "the kit cannot freeze a store: an abort while the store has not answered is core's own (packages/core/test/abort-wait.test.ts) and each remote backend's freeze tests",
      },
    'a mutation that fails without `indeterminate` did not happen; one flagged `indeterminate` (its answer was lost: a connection died with it in flight, or the abort above) may have':
      {
        tests: [
          'a guarded write or edit aborted in flight either completes or changes nothing',
          'a failed or aborted write leaves the old content and no residue in the listing',
        ],
        note: "the kit cannot cut a connection: lost answers are each remote backend's kill-during-write tests",
      },
  },

  'FileSystem.resolve': {
    'a blank path, a NUL byte or a lone surrogate is `FS_NOT_FOUND`; a NUL or a lone surrogate in `cwd` too': [
      'a blank path is FS_NOT_FOUND',
      'a NUL byte or a lone surrogate is FS_NOT_FOUND, also in opts.cwd (resolve and lstat)',
      'resolve on blank path is FS_NOT_FOUND, and the store is unchanged',
      'resolve on NUL byte is FS_NOT_FOUND, and the store is unchanged',
      'resolve on lone surrogate is FS_NOT_FOUND, and the store is unchanged',
    ],
    "a relative path resolves against `opts.cwd`, else the backend's cwd; an absolute path ignores both": [
      'a relative path resolves against opts.cwd (itself relative to the backend cwd)',
      'an absolute path ignores opts.cwd, and an absolute opts.cwd is used as is (resolve and lstat)',
    ],
    "a relative `opts.cwd` is itself resolved against the backend's cwd": ['a relative path resolves against opts.cwd (itself relative to the backend cwd)'],
    'aliases of one file (`..`, `.`, symlinks where supported) yield one `targetKey`': [
      '. and .. aliases of one file share a targetKey',
      'a symlink and its target share a targetKey',
      'aliases through a symlinked parent directory share a targetKey (existing and missing files)',
    ],
    'a missing path resolves (it may be created), with the same key before and after creation': [
      'a missing path resolves, with the same key before and after creation',
    ],
    'a path through a regular file is `FS_NOT_FOUND`': [
      'a path through a regular file is FS_NOT_FOUND',
      'resolve on path through a file is FS_NOT_FOUND, and the store is unchanged',
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
      'lstat on blank path is FS_NOT_FOUND, and the store is unchanged',
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
        'readText on missing file is FS_NOT_FOUND, and the store is unchanged',
        'readText on a directory is FS_NOT_REGULAR_FILE, and the store is unchanged',
      ],
      note: 'a special file',
    },
    'a NUL in the first 8192 bytes, or invalid UTF-8 anywhere (also a truncated last sequence), is `FS_NOT_TEXT`': [
      'a NUL at byte 0 or 8191 is FS_NOT_TEXT; at byte 8192 the file is text',
      'invalid UTF-8 (*) is FS_NOT_TEXT for readText and streamText',
      'invalid UTF-8 far past the first chunk is FS_NOT_TEXT',
      'readText on binary content is FS_NOT_TEXT, and the store is unchanged',
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
    'memory stays bounded by the chunk size, whatever the file size': ['streamText: memory stays bounded by the chunk size, whatever the file size'],
    'the signal is checked between chunks; stopping early releases the file': [
      'streamText: the signal is checked between chunks (an abort after the first chunk makes the iterator throw FS_ABORTED)',
      'streamText: stopping early releases the file',
    ],
  },

  'FileSystem.listDir': {
    'missing is `FS_NOT_FOUND`; a non-directory is `FS_NOT_DIRECTORY`': [
      'a missing directory is FS_NOT_FOUND; a file is FS_NOT_DIRECTORY',
      'listDir on missing directory is FS_NOT_FOUND, and the store is unchanged',
      'listDir on a file is FS_NOT_DIRECTORY, and the store is unchanged',
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

  'FileSystem.writeText': {
    'a reader sees the old content or the new, whole, never a mix': [
      'a reader that reads continuously only ever sees one of two contents, whole',
      'a reader that reads continuously only ever sees one of two contents, whole, at *',
      'a shorter overwrite leaves nothing of the longer content, at every threshold size',
    ],
    'a failed or aborted write leaves the old content and no residue in a listing': [
      'a failed or aborted write leaves the old content and no residue in the listing',
      'a guarded write or edit aborted in flight either completes or changes nothing',
    ],
    'missing parent directories are created': ['missing parent directories are created'],
    'writing a symlink writes its target and keeps the link': ['writing through a symlink changes its target and keeps the link'],
    'an existing directory or special file is `FS_NOT_REGULAR_FILE`': {
      tests: [
        'a directory target is FS_NOT_REGULAR_FILE and stays a directory',
        'createIfAbsent on a directory is FS_NOT_REGULAR_FILE and it stays a directory',
        "replaceIfVersion on a directory, with the directory's own version, is FS_NOT_REGULAR_FILE",
        'writeText on a directory is FS_NOT_REGULAR_FILE, and the store is unchanged',
      ],
      note: 'a special file',
    },
    'where `capabilities.permissions`, an existing file whose mode grants write permission to no one (`mode & 0o222` is 0, e.g. 0444) is `FS_PERMISSION_DENIED` and keeps its content, mode and version; `createIfAbsent` on it is still `FS_NOT_OBSERVED`':
      [
        'a write or an edit of a file without write permission (*) is FS_PERMISSION_DENIED and changes nothing',
        'createIfAbsent on a file without write permission (444) stays FS_NOT_OBSERVED and changes nothing',
      ],
    'content that is not a string, or holds a lone surrogate, is `FS_NOT_TEXT`; above `maxTextBytes` it is `FS_TOO_LARGE`': {
      tests: [
        'content with a lone surrogate is FS_NOT_TEXT and nothing is written',
        'writeText on lone surrogate is FS_NOT_TEXT, and the store is unchanged',
        'writeText of content above maxTextBytes is FS_TOO_LARGE and creates nothing',
      ],
      note: 'content that is not a string',
    },
    'an unknown guard kind is `FS_UNSUPPORTED`, never dropped': [
      'a malformed guard is FS_UNSUPPORTED, never dropped, and nothing is written',
      'writeText on an unknown guard kind is FS_UNSUPPORTED, and the store is unchanged',
    ],
    '`createIfAbsent` on an existing file is `FS_NOT_OBSERVED`; a concurrent creator is never overwritten': [
      'createIfAbsent on an existing file is FS_NOT_OBSERVED and keeps its content',
      'writeText createIfAbsent on existing file is FS_NOT_OBSERVED, and the store is unchanged',
      'createIfAbsent creates a missing file',
      'N concurrent createIfAbsent writers: exactly one creates',
    ],
    '`replaceIfVersion` on a missing file, or another version, is `FS_STALE_VERSION`': [
      'replaceIfVersion on a missing file is FS_STALE_VERSION and creates nothing',
      'replaceIfVersion with a stale version is FS_STALE_VERSION and keeps the content',
      'replaceIfVersion with a forged version is FS_STALE_VERSION',
      'replaceIfVersion with the current version replaces',
      'a version of deleted content never guards a re-created file, even with the same content and size',
      'after an external delete, stat is undefined and guarded writes are stale',
      'writeText replaceIfVersion on missing file is FS_STALE_VERSION, and the store is unchanged',
      'writeText replaceIfVersion on other version is FS_STALE_VERSION, and the store is unchanged',
    ],
    'of N concurrent guarded writers from one version, exactly one wins': [
      'N concurrent replaceIfVersion writers from one version: exactly one wins',
      'N concurrent guarded edits from one version: exactly one wins, the rest are stale',
      'a guarded write racing a guarded edit from one version: one wins, one is stale',
    ],
    "the outcome says `create` or `update`, and its `version` equals the next `stat`'s": [
      'a new file is a create with before null; an existing one an update',
      "the outcome's version equals the next stat's version",
      MODEL,
    ],
    'content that begins with U+FEFF is stored as given; a read drops exactly one leading BOM': [
      'content that begins with U+FEFF is stored as given; a read drops exactly one leading BOM',
    ],
    'a version of deleted content never guards a re-created file (where versions derive from content, equal content carries an equal version)': [
      'a version of deleted content never guards a re-created file, even with the same content and size',
    ],
    "the outcome's `before` is the previous text (LF-normalized, without BOM) or `null`; `after` is `content` LF-normalized, without a leading BOM": [
      'a new file is a create with before null; an existing one an update',
      "the outcome's before is the previous text (LF-normalized, without BOM), also after a same-size rewrite",
    ],
    "`before: false` (issue 18) makes the outcome's `before` `null` and asks the backend not to fetch the previous content (`beforeMaxBytes` 0); every other rule holds as without it; a `before` that is not a boolean is `FS_UNSUPPORTED` before any I/O":
      {
        tests: [
          "before: false: the outcome's before is null; create/update, version and guards as without it",
          'before: false: a missing file, a directory, a path through a file and a malformed before fail as without it',
        ],
        note: 'that the previous content is not fetched is a request count: each remote backend pins it in its own request tests',
      },
  },

  'FileSystem.editText': {
    '`edit` is one request or a list of them, applied in order (each to the text the previous one left) inside the one critical section, all or nothing: if any fails, nothing is written, and the error names it (`edit N of M: …`, `details.edit` its 0-based index); `before` is the file as read, `after` the text after the last edit':
      [
        'a list of edits is applied in order in one step; before is the file as read, after the text after the last',
        'a failing edit of a list writes nothing and is named (details.edit, "edit N of M")',
      ],
    'an empty list, or one of more than 1,000 edits, is `FS_EDIT_NOT_FOUND` before any I/O': [
      'an empty list of edits, or more than 1,000, is FS_EDIT_NOT_FOUND before any I/O',
    ],
    'concurrent unguarded edits of one file are serialized: none is lost': ['concurrent unguarded edits of different parts of one file all land'],
    'a `newString` with a lone surrogate is `FS_NOT_TEXT`, as for `writeText`; such an `oldString` is `FS_EDIT_NOT_FOUND`': {
      tests: ['a malformed request (wrong types) is FS_EDIT_NOT_FOUND before any I/O, and changes nothing'],
      note: 'lone surrogates: unit-tested in core (edit.test.ts)',
    },
    'a malformed request (an empty `oldString`, wrong types) is `FS_EDIT_NOT_FOUND` before any I/O': [
      'a malformed request (wrong types) is FS_EDIT_NOT_FOUND before any I/O, and changes nothing',
      'an empty oldString or no match is FS_EDIT_NOT_FOUND and changes nothing',
      'editText on empty oldString is FS_EDIT_NOT_FOUND, and the store is unchanged',
    ],
    'a malformed `expected` (not `{ version: string }`) is `FS_UNSUPPORTED` before any I/O': [
      'a malformed expected (not { version: string }) is FS_UNSUPPORTED before any I/O',
    ],
    'where `capabilities.permissions`, a file whose mode grants write permission to no one (`mode & 0o222` is 0, e.g. 0444) is `FS_PERMISSION_DENIED` and keeps its content, mode and version':
      ['a write or an edit of a file without write permission (*) is FS_PERMISSION_DENIED and changes nothing'],
    'a missing target is `FS_STALE_VERSION`, guarded or not; a non-file is `FS_NOT_REGULAR_FILE`': [
      'a missing target is FS_STALE_VERSION, guarded or not',
      'a directory is FS_NOT_REGULAR_FILE',
      "replaceIfVersion on a directory, with the directory's own version, is FS_NOT_REGULAR_FILE",
      'editText on missing file is FS_STALE_VERSION, and the store is unchanged',
      'editText on a directory is FS_NOT_REGULAR_FILE, and the store is unchanged',
    ],
    '`expected.version` is checked BEFORE matching: stale content is `FS_STALE_VERSION`, never a match error': [
      'expected.version is checked before matching: stale is FS_STALE_VERSION, not a match error',
      'a guarded edit at the current version succeeds',
      'an external same-size rewrite changes the version and makes guards stale',
      'a version of deleted content never guards a re-created file, even with the same content and size',
      'editText guarded on other version is FS_STALE_VERSION, and the store is unchanged',
    ],
    'non-text content is `FS_NOT_TEXT`; a file above `maxTextBytes`, or a result that would be, is `FS_TOO_LARGE` and the file is left untouched': [
      'non-text content is FS_NOT_TEXT and unchanged',
      'editText on invalid UTF-8 is FS_NOT_TEXT, and the store is unchanged',
      'editText of a file above maxTextBytes is FS_TOO_LARGE and changes no byte',
      'editText whose result would exceed maxTextBytes is FS_TOO_LARGE and leaves the file as it was',
    ],
    'matching is on LF-normalized text (`oldString` and `newString` are normalized too)': [
      'matching is on LF-normalized text, and a CRLF file keeps CRLF',
      'oldString with CRLF matches an LF file, and the file stays LF',
    ],
    'an empty `oldString` or no match is `FS_EDIT_NOT_FOUND`': [
      'an empty oldString or no match is FS_EDIT_NOT_FOUND and changes nothing',
      'editText on empty oldString is FS_EDIT_NOT_FOUND, and the store is unchanged',
      'editText on no match is FS_EDIT_NOT_FOUND, and the store is unchanged',
    ],
    'several matches without `replaceAll` is `FS_AMBIGUOUS_EDIT` (`details.matches` says how many)': {
      tests: [
        'several matches without replaceAll is FS_AMBIGUOUS_EDIT and changes nothing',
        'editText on two matches is FS_AMBIGUOUS_EDIT, and the store is unchanged',
        'replaceAll replaces every non-overlapping match',
      ],
      note: '`details.matches`',
    },
    '`$` in `newString` is literal; an empty `newString` deletes the match': [
      '$ in newString is literal',
      '$ in newString is literal, also with replaceAll',
      'an empty newString deletes the match',
    ],
    "inserted text takes the file's dominant line ending; untouched text keeps its bytes; a BOM stays": [
      'matching is on LF-normalized text, and a CRLF file keeps CRLF',
      'oldString with CRLF matches an LF file, and the file stays LF',
      'inserted text takes the dominant line ending of a mixed file: *',
      'untouched text keeps its bytes in a file with mixed line endings',
      'a BOM stays on the store and is not part of before/after',
      'an edit of a BOM-less file adds no BOM, and a U+FEFF behind a BOM stays text',
      'a U+FEFF edited in at the start of a BOM-less file is stored as given, and reads as a BOM',
      MODEL,
    ],
    "the outcome's `before`/`after` are LF-normalized, without BOM": [
      'a unique match is replaced; the outcome has before/after and the next version',
      'matching is on LF-normalized text, and a CRLF file keeps CRLF',
      'a BOM stays on the store and is not part of before/after',
      'a U+FEFF edited in at the start of a BOM-less file is stored as given, and reads as a BOM',
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
  },

  'FileSystem.writeBytes': {
    'content that is not a `Uint8Array` is `FS_UNSUPPORTED`; above `maxTextBytes` it is `FS_TOO_LARGE`': [
      'writeBytes of content that is not a Uint8Array is FS_UNSUPPORTED and writes nothing',
      'writeBytes above maxTextBytes is FS_TOO_LARGE and creates nothing',
    ],
    'the bytes are copied before the call returns: changing the array afterwards changes nothing written': [
      'writeBytes copies the bytes: changing the array after the call changes nothing written',
    ],
    "the outcome says `create` or `update`, and its `version` equals the next `stat`'s; `readBytes` returns the bytes unchanged": [
      'writeBytes: the outcome says create then update, its version equals the next stat, and text reads see the bytes',
      'writeBytes stores the bytes exactly; readBytes returns them (BOM, NUL and invalid UTF-8 included)',
      'writeBytes guards: createIfAbsent on a file is FS_NOT_OBSERVED, another version FS_STALE_VERSION, nothing changes',
      'writeBytes creates missing parents; over a directory it is FS_NOT_REGULAR_FILE',
      'of N concurrent guarded writeBytes from one version, exactly one wins',
    ],
  },

  'FileSystem.remove': {
    'missing is `FS_NOT_FOUND` (`FS_STALE_VERSION` when guarded); a special file is `FS_NOT_REGULAR_FILE`': {
      tests: ['remove of a missing target is FS_NOT_FOUND, and FS_STALE_VERSION when guarded'],
      note: 'a special file (the kit cannot make one on every store)',
    },
    "a target resolved through a symlink names the link's target: that file is removed, the link stays (as writes write through links)": [
      'remove of a target reached through a link removes the file it names; the link stays',
    ],
    "`expected.version` removes only that version of a file; another one is `FS_STALE_VERSION` and nothing is removed; the guard holds with `capabilities.removeIfVersion` strength (absent: `replaceIfVersion`'s), and of N concurrent guarded removers exactly one wins":
      [
        'a guarded remove takes only the expected version: another one is FS_STALE_VERSION and the file stays',
        'a version of a removed file never guards its re-creation',
        'of N concurrent guarded removers of one version exactly one wins; the others are FS_STALE_VERSION',
        'a guarded remove racing a guarded writer: exactly one of them wins',
      ],
    "`expected` may name a directory's version (as `stat` reports it): the directory goes only while it has it, and a file that took its place is `FS_STALE_VERSION` (so a caller that saw a directory never removes an unseen file); a malformed `expected` or `recursive` is `FS_UNSUPPORTED`":
      [
        'a guarded remove of a directory: its own version removes it, another is FS_STALE_VERSION, and a file that took its place is never removed',
        'a directory with entries is FS_NOT_EMPTY without recursive, guarded or not, and nothing is removed',
        'a malformed expected or recursive is FS_UNSUPPORTED and removes nothing',
      ],
    'a directory with entries is `FS_NOT_EMPTY` unless `recursive`, and nothing is removed': [
      'a directory with entries is FS_NOT_EMPTY without recursive, guarded or not, and nothing is removed',
    ],
    '`recursive` removes the directory and everything below it; symlinks inside are removed, never followed; a tree of more than `maxRemoveEntries` (default 10,000) entries is `FS_TOO_LARGE` (`details.entries`) before anything is removed; a recursive remove is not atomic: one that fails part way leaves the entries it had not reached':
      {
        tests: [
          'recursive removes a tree of directories and files; the outcome says directory and counts the entries',
          'a recursive remove removes links inside the tree and never follows them',
          'a recursive remove of more than maxRemoveEntries entries is FS_TOO_LARGE (details.entries) and removes nothing',
        ],
        note: 'a failure part way (the kit cannot inject one)',
      },
    "after a remove, `stat` is `undefined` and the parent's listing no longer shows the name; the outcome counts the entries removed": [
      'remove of a file: stat is undefined after, the listing no longer shows it, the outcome says file, 1 entry',
      'an empty directory is removed (type directory, 1 entry) and no longer listed',
      'recursive removes a tree of directories and files; the outcome says directory and counts the entries',
    ],
  },

  'FileSystem.rename': {
    "missing `from` is `FS_NOT_FOUND` (`FS_STALE_VERSION` when guarded); a special file is `FS_NOT_REGULAR_FILE`; a directory where `renameDirectories` is false is `FS_UNSUPPORTED`; `expected` may name a directory's version, as for `remove`; a directory never replaces anything: an existing `to` is `FS_NOT_OBSERVED`, or `FS_UNSUPPORTED` with `overwrite`":
      {
        tests: [
          'a missing from is FS_NOT_FOUND, and FS_STALE_VERSION when guarded; nothing is created',
          'a directory moves with its content where renameDirectories; elsewhere it is FS_UNSUPPORTED and nothing changes',
        ],
        note: 'a special file (the kit cannot make one on every store)',
      },
    '`expected.version` moves only that version of the file; another one is `FS_STALE_VERSION` and nothing changes': [
      'expected moves only that version of from; another one is FS_STALE_VERSION and nothing changes',
    ],
    'an existing `to` is `FS_NOT_OBSERVED` unless `overwrite`; `overwrite: true` replaces a file there, `overwrite: { version }` only that version of it (else `FS_STALE_VERSION`); a missing `to` is created whatever `overwrite` says; a directory at `to` is never replaced (`FS_NOT_OBSERVED`, or `FS_NOT_REGULAR_FILE` with `overwrite`); a malformed `expected` or `overwrite` is `FS_UNSUPPORTED`':
      [
        'an existing to is FS_NOT_OBSERVED without overwrite, and both files stay as they were',
        'overwrite: true replaces a file at to (replaced: true)',
        'overwrite: { version } replaces only that version of to; another one is FS_STALE_VERSION and nothing changes',
        'a missing to is created whatever overwrite says',
        'a directory at to is never replaced: FS_NOT_OBSERVED, or FS_NOT_REGULAR_FILE with overwrite',
        'a malformed expected or overwrite is FS_UNSUPPORTED and nothing changes',
      ],
    'missing parent directories of `to` are created; `to` inside the directory `from` is `FS_UNSUPPORTED`': [
      'rename creates the missing parents of to',
      'a directory moved into itself is FS_UNSUPPORTED and nothing changes',
    ],
    '`from` and `to` naming one file (one `targetKey`) changes nothing and reports the current version': [
      'from and to naming one file change nothing and report the current version',
    ],
    'at every moment at least one of the two names holds the whole content; afterwards only `to` does': [
      'a reader polling both names while a file is moved never finds neither, nor a partial content',
      'rename moves a file: to holds the content, from is gone, the outcome version equals the next stat of to',
      'a moved file keeps its mode',
    ],
    'a failed or aborted rename leaves both names as they were; of N concurrent renamers of one version exactly one wins': [
      'rename with an aborted signal is FS_ABORTED and nothing changes',
      'of N concurrent renamers of one version to different names exactly one wins; the file is under exactly one name',
      'of N concurrent renamers of different files to one new name exactly one wins; no source is lost',
    ],
    "the outcome's `version` equals the next `stat` of `to`": [
      'rename moves a file: to holds the content, from is gone, the outcome version equals the next stat of to',
      'overwrite: true replaces a file at to (replaced: true)',
    ],
  },

  'FileSystem.createDirectory': {
    'an existing directory is success with `created: false`, and nothing changes (idempotent)': [
      'createDirectory of an existing directory is created: false and changes nothing',
    ],
    'a file (or other non-directory) at the path or on the way is `FS_NOT_DIRECTORY`': [
      'a file at the path or on the way is FS_NOT_DIRECTORY, and nothing changes',
    ],
    "afterwards `stat` says `directory`, its listing is empty, and the parent lists it, also where the store has no directories of its own (`createDirectory: 'marker'`), until it is removed":
      [
        'createDirectory creates the directory and its missing parents: stat says directory, it lists empty, the parent lists it',
        'a created directory stays listed after its last file is removed',
        'createDirectory with an aborted signal is FS_ABORTED and creates nothing',
      ],
  },

  GuardStrength: {
    '`atomic`: by the store itself, against any writer (a program that knows nothing of seamfs too)': {
      tests: [
        'N concurrent createIfAbsent writers: exactly one creates',
        'N concurrent replaceIfVersion writers from one version: exactly one wins',
        'cross-instance races › *',
      ],
      note: "writers that are not seamfs are raced by each backend's own suite (outside writers in place), not by the kit",
    },
    '`seamfs`: among every seamfs writer of the store, in any process on any machine (lock entries with leases kept in the store); a writer that is not seamfs can still slip between check and commit':
      {
        tests: ['cross-instance races › *', 'cross-instance races: moves › *', 'cross-instance races: moves, deletes and edits of the same files › *'],
        note: 'processes on one machine only (the children run where the kit runs); a killed holder is tested by each backend suite',
      },
    '`process`: only among the callers inside this process': [
      'N concurrent replaceIfVersion writers from one version: exactly one wins',
      'of N concurrent guarded removers of one version exactly one wins; the others are FS_STALE_VERSION',
    ],
  },
}
