import type { OwnerTraces } from './rule-trace.js'

/** The rules of the methods that change the tree: `remove`, `rename`, `createDirectory`. */
export const TREE_TRACE: OwnerTraces = {
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
    "the store's root (the directory `rootTarget` names: `resolve('/')`, or a backend's `root` scope) is never removed: `FS_PERMISSION_DENIED` before any change, on every backend":
      ["the store's root › remove of the store's root is FS_PERMISSION_DENIED, guarded or not, and nothing changes"],
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
    "`from` and `to` naming one file (one `targetKey`) changes nothing and reports the current version (a layer's fence still applies: it reaches layers through the `renameInPlace` hook)":
      {
        tests: ['from and to naming one file change nothing and report the current version'],
        note: "a layer's fence: the kit runs a backend, not a layer over one; a fence on `rename(a, a)` is tested with the layer (core's sandbox and mount tests)",
      },
    "the store's root is never moved, nor anything moved onto it: `FS_PERMISSION_DENIED`, as for `remove`": [
      "the store's root › the store's root is never moved, nor anything moved onto it: FS_PERMISSION_DENIED, and nothing changes",
    ],
    'at every moment at least one of the two names holds the whole content; afterwards only `to` does': [
      'a reader polling both names while a file is moved never finds neither, nor a partial content',
      'rename moves a file: to holds the content, from is gone, the outcome version equals the next stat of to',
      'a moved file keeps its mode',
    ],
    'a failed or aborted rename leaves both names as they were; of N concurrent renamers of one version exactly one wins': [
      'rename with an aborted signal is FS_ABORTED and nothing changes',
      'abort: at any moment › rename aborted *',
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

  'FileSystem.close': {
    'a second `close()` resolves, at once': ['lifecycle › close() twice resolves, each time at once'],
    'after `close()`, each operation works (a store with nothing to release) or fails with an `FsError` (`FS_IO_ERROR` where the connection is gone), and none hangs':
      ['lifecycle › after close(), every operation works or fails with an FsError, and none hangs'],
  },
}
