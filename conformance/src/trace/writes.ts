import { MODEL, type OwnerTraces } from './rule-trace.js'

/** The rules of the methods that write a file's content (`writeText`, `editText`, `writeBytes`), and the strengths of their guards. */
export const WRITE_TRACE: OwnerTraces = {
  'FileSystem.writeText': {
    'a reader sees the old content or the new, whole, never a mix': [
      'a reader that reads continuously only ever sees one of two contents, whole',
      'a reader that reads continuously only ever sees one of two contents, whole, at *',
      'a shorter overwrite leaves nothing of the longer content, at every threshold size',
    ],
    'a failed or aborted write leaves the old content and no residue in a listing': [
      'a failed or aborted write leaves the old content and no residue in the listing',
      'a guarded write or edit aborted in flight either completes or changes nothing',
      'abort: at any moment › writeText aborted *',
      'abort: at any moment › writeBytes aborted *',
    ],
    'missing parent directories are created': ['missing parent directories are created'],
    'writing a symlink writes its target and keeps the link': ['writing through a symlink changes its target and keeps the link'],
    'an existing directory or special file is `FS_NOT_REGULAR_FILE`': {
      tests: [
        'a directory target is FS_NOT_REGULAR_FILE and stays a directory',
        'createIfAbsent on a directory is FS_NOT_REGULAR_FILE and it stays a directory',
        "replaceIfVersion on a directory, with the directory's own version, is FS_NOT_REGULAR_FILE",
        'writeText on a directory is FS_NOT_REGULAR_FILE with its verb and path, and the store is unchanged',
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
        'writeText on lone surrogate is FS_NOT_TEXT with its verb and path, and the store is unchanged',
        'writeText of content above maxTextBytes is FS_TOO_LARGE and creates nothing',
      ],
      note: 'content that is not a string',
    },
    'an unknown guard kind is `FS_UNSUPPORTED`, never dropped': [
      'a malformed guard is FS_UNSUPPORTED, never dropped, and nothing is written',
      'writeText on an unknown guard kind is FS_UNSUPPORTED with its verb and path, and the store is unchanged',
    ],
    '`createIfAbsent` on an existing file is `FS_NOT_OBSERVED`; a concurrent creator is never overwritten': [
      'createIfAbsent on an existing file is FS_NOT_OBSERVED and keeps its content',
      'writeText createIfAbsent on existing file is FS_NOT_OBSERVED with its verb and path, and the store is unchanged',
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
      'writeText replaceIfVersion on missing file is FS_STALE_VERSION with its verb and path, and the store is unchanged',
      'writeText replaceIfVersion on other version is FS_STALE_VERSION with its verb and path, and the store is unchanged',
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
    "`before: false` makes the outcome's `before` `null` and asks the backend not to fetch the previous content (`beforeMaxBytes` 0); every other rule holds as without it; a `before` that is not a boolean is `FS_UNSUPPORTED` before any I/O":
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
      'editText on empty oldString is FS_EDIT_NOT_FOUND with its verb and path, and the store is unchanged',
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
      'editText on missing file is FS_STALE_VERSION with its verb and path, and the store is unchanged',
      'editText on a directory is FS_NOT_REGULAR_FILE with its verb and path, and the store is unchanged',
    ],
    '`expected.version` is checked BEFORE matching: stale content is `FS_STALE_VERSION`, never a match error': [
      'expected.version is checked before matching: stale is FS_STALE_VERSION, not a match error',
      'a guarded edit at the current version succeeds',
      'an external same-size rewrite changes the version and makes guards stale',
      'a version of deleted content never guards a re-created file, even with the same content and size',
      'editText guarded on other version is FS_STALE_VERSION with its verb and path, and the store is unchanged',
    ],
    'non-text content is `FS_NOT_TEXT`; a file above `maxTextBytes`, or a result that would be, is `FS_TOO_LARGE` and the file is left untouched': [
      'non-text content is FS_NOT_TEXT and unchanged',
      'editText on invalid UTF-8 is FS_NOT_TEXT with its verb and path, and the store is unchanged',
      'editText of a file above maxTextBytes is FS_TOO_LARGE and changes no byte',
      'editText whose result would exceed maxTextBytes is FS_TOO_LARGE and leaves the file as it was',
    ],
    'matching is on LF-normalized text (`oldString` and `newString` are normalized too)': [
      'matching is on LF-normalized text, and a CRLF file keeps CRLF',
      'oldString with CRLF matches an LF file, and the file stays LF',
    ],
    'an empty `oldString` or no match is `FS_EDIT_NOT_FOUND`': [
      'an empty oldString or no match is FS_EDIT_NOT_FOUND and changes nothing',
      'editText on empty oldString is FS_EDIT_NOT_FOUND with its verb and path, and the store is unchanged',
      'editText on no match is FS_EDIT_NOT_FOUND with its verb and path, and the store is unchanged',
    ],
    'several matches without `replaceAll` is `FS_AMBIGUOUS_EDIT` (`details.matches` says how many)': {
      tests: [
        'several matches without replaceAll is FS_AMBIGUOUS_EDIT and changes nothing',
        'editText on two matches is FS_AMBIGUOUS_EDIT with its verb and path, and the store is unchanged',
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
