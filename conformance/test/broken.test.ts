import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, it } from 'vitest'
import type { ConformanceReport } from '@seamfs/conformance/runner'

// The kit must be able to fail: each deliberately broken backend is run through
// the real CLI (a separate vitest run), and must be caught by the right clause.
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url))
const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url))
const out = mkdtempSync(join(tmpdir(), 'seamfs-kit-'))
afterAll(() => rmSync(out, { recursive: true, force: true }))

/** One deliberately broken backend: it breaks one rule of the contract and must pass everything else. */
interface Variant {
  /** The module under `broken/`. */
  readonly file: string
  /** The rule it breaks, in the words of the TSDoc line of `FileSystem` (or `types.ts`). */
  readonly rule: string
  /** The clauses that must catch it: each must fail at least one test. */
  readonly caughtBy: readonly string[]
  /**
   * It answers a public method with its own code (an override, a property, a proxy): refused as a
   * whole, every failure saying why, instead of being run (see `FileSystem`'s TSDoc: public methods are final).
   */
  readonly refused?: true
}

/** What every failure of a refused variant says. */
const REFUSAL = /a public method of FileSystem: public methods are final|does not extend FileSystem of @seamfs\/core/
const FINAL = 'public methods are final'

// prettier-ignore
const VARIANTS: readonly Variant[] = [
  // resolve, contains, fileUrl
  { file: 'resolve-keeps-dotdot', rule: 'resolve: aliases of one file (`..`, `.`) yield one targetKey', caughtBy: ['resolve/identity'] },
  { file: 'cwd-ignored', rule: 'resolve: a relative path resolves against opts.cwd', caughtBy: ['resolve/identity'] },
  { file: 'absolute-joins-cwd', rule: 'resolve: an absolute path ignores both (opts.cwd and the backend cwd)', caughtBy: ['resolve/identity'] },
  { file: 'memory-cwd-from-root', rule: "resolve: a relative opts.cwd is itself resolved against the backend's cwd", caughtBy: ['resolve/identity'] },
  { file: 'through-file-resolves', rule: 'resolve: a path through a regular file is FS_NOT_FOUND', caughtBy: ['resolve/identity', 'errors'] },
  { file: 'display-path-as-given', rule: 'resolve(target.displayPath) yields the same targetKey while nothing changed', caughtBy: ['resolve/identity'] },
  { file: 'contains-string-prefix', rule: 'contains: false for a mere name prefix', caughtBy: ['resolve/identity'] },
  { file: 'contains-root', rule: 'contains: true when child is parent or a descendant of it (the root too)', caughtBy: ['resolve/identity'] },
  { file: 'file-url-raw', rule: 'fileUrl: the canonical URI of target; the backend owns the encoding (percent-encoded)', caughtBy: ['resolve/identity'] },
  { file: 'file-url-encode-uri', rule: 'fileUrl: the canonical URI of target; the backend owns the encoding (# and ? too)', caughtBy: ['resolve/identity'] },
  { file: 'process-path-ignores-capability', rule: 'processPath: throws FS_UNSUPPORTED when capabilities.processPath is false', caughtBy: [FINAL], refused: true },
  { file: 'memory-parent-link-alias', rule: 'resolve: aliases of one file (symlinks) yield one targetKey, also through a symlinked parent', caughtBy: ['resolve/identity: symlinks'] },
  // resolve, contains, fileUrl: path forms and URLs of names
  { file: 'resolve-above-root-not-found', rule: 'resolve: aliases of one file (`..`, `.`) yield one targetKey (`..` at the root stays at the root)', caughtBy: ['resolve/identity'] },
  { file: 'resolve-dotdot-physical', rule: 'resolve: aliases of one file (`..`) yield one targetKey; a missing path resolves (`missing/..` is lexical)', caughtBy: ['resolve/identity', 'generative'] },
  { file: 'resolve-dot-segment-kept', rule: 'resolve: aliases of one file (`.`) yield one targetKey (a `.` inside a path)', caughtBy: ['resolve/identity', 'stat/lstat', 'rename', 'generative'] },
  { file: 'file-url-nfc', rule: 'fileUrl: the canonical URI of target (a composed and a decomposed name are two names, with two URLs)', caughtBy: ['resolve/identity', 'generative'] },
  { file: 'file-url-percent-unescaped', rule: 'fileUrl: the canonical URI of target; the backend owns the encoding (`%` itself is encoded)', caughtBy: ['resolve/identity', 'generative'] },
  { file: 'memory-missing-key-raw', rule: 'resolve: a missing path resolves, with the same key before and after creation (under a symlinked directory)', caughtBy: ['resolve/identity: symlinks'] },
  // stat / lstat
  { file: 'stat-size-chars', rule: 'stat: size is the byte size of a file', caughtBy: ['stat/lstat'] },
  { file: 'stat-size-cached', rule: 'stat: size is the byte size of a file (as it is now)', caughtBy: ['write: shapes', 'model-based'] },
  { file: 'lstat-ignores-cwd', rule: "lstat: path text and cwd follow resolve's rules", caughtBy: ['stat/lstat'] },
  { file: 'lstat-through-file', rule: 'lstat: a path through a regular file is undefined (absent), as in stat', caughtBy: ['stat/lstat'] },
  { file: 'memory-lstat-follows', rule: 'lstat: a final symlink is reported as symlink, not followed', caughtBy: ['stat/lstat: symlinks'] },
  { file: 'memory-stat-broken-link', rule: 'stat: an absent target (or a broken symlink) is undefined, not an error', caughtBy: ['stat/lstat: symlinks'] },
  { file: 'lstat-size-chars', rule: "lstat: like stat, but the final symlink is not followed (a file's size is its byte size)", caughtBy: ['stat/lstat'] },
  { file: 'memory-lstat-dangling-absent', rule: 'lstat: a final symlink is reported as symlink, not followed (a dangling one too)', caughtBy: ['stat/lstat: symlinks', 'remove: symlinks', 'generative'] },
  { file: 'memory-lstat-parent-link', rule: 'lstat: a final symlink is reported as symlink, not followed (a link on the way is followed)', caughtBy: ['stat/lstat: symlinks'] },
  { file: 'memory-mtime-frozen', rule: 'FsInfo.mtime: last modification, where capabilities.mtime (claimed, and never moved)', caughtBy: ['modification time'] },
  // versions
  { file: 'weak-version', rule: 'version changes on every content change (a same-size rewrite)', caughtBy: ['versions', 'versions: external changes'] },
  { file: 'version-head-sample', rule: 'version changes on every content change (far from the head, same size)', caughtBy: ['versions', 'versions: external changes far from the head'] },
  { file: 'version-changes-on-read', rule: 'version is unchanged while the content is unchanged', caughtBy: ['versions'] },
  { file: 'version-aba', rule: 'version: a version of deleted content never guards a re-created file (FsVersion: changes whenever the content changes)', caughtBy: ['write: re-created files'] },
  { file: 'write-version-stale', rule: "writeText: the outcome's version equals the next stat's", caughtBy: ['write'] },
  { file: 'edit-returns-old-version', rule: 'updateBytes: returns the version published (the edit outcome is the next version)', caughtBy: ['edit'] },
  // read / stream
  { file: 'read-text-mode', rule: 'readText: line endings are returned as stored', caughtBy: ['read/stream'] },
  { file: 'read-fast-path-bom', rule: 'readText: a leading UTF-8 BOM is not part of the text', caughtBy: [FINAL], refused: true },
  { file: 'error-table-missing-row', rule: 'readText: a directory is FS_NOT_REGULAR_FILE (errorRow: the one error table)', caughtBy: ['read/stream', 'errors'] },
  { file: 'raw-errors', rule: 'every failure is an FsError with a code of FsErrorCode; nothing else escapes', caughtBy: [FINAL], refused: true },
  { file: 'stream-text-mode', rule: 'streamText: same rules as readText (line endings are returned as stored)', caughtBy: ['read/stream: streaming'] },
  { file: 'stream-open-lazy', rule: 'streamText: open-time failures reject the returned promise', caughtBy: ['read/stream', 'read/stream: streaming'] },
  { file: 'stream-one-chunk', rule: 'streamText: memory stays bounded by the chunk size, whatever the file size', caughtBy: ['read/stream'] },
  { file: 'stream-abort-ignored', rule: 'streamText: the signal is checked between chunks', caughtBy: [FINAL], refused: true },
  { file: 'stream-no-release', rule: 'streamText, streamBytes: stopping early releases the file', caughtBy: ['read/stream: streaming', 'read/stream: streamBytes'] },
  { file: 'stream-reuses-buffer', rule: "streamBytes: a chunk is the caller's until it asks for the next one", caughtBy: ['read/stream: streamBytes'] },
  { file: 'stream-chunk-drops-byte', rule: "streamBytes: concatenated, the chunks are the file's bytes (every chunk whole)", caughtBy: ['read/stream', 'read/stream: streamBytes', 'generative'] },
  { file: 'stream-bytes-decoded', rule: 'streamBytes: the whole file as raw byte chunks, exactly as stored (no decoding)', caughtBy: ['read/stream: stored bytes', 'read/stream: streamBytes', 'generative'] },
  { file: 'stream-splits-surrogates', rule: 'streamText, streamBytes: chunk boundaries are meaningless: a multi-byte character is never split', caughtBy: ['read/stream', 'read/open: openFile'] },
  { file: 'load-strips-bom', rule: 'readBytes: the whole file as bytes, exactly as stored (no BOM handling)', caughtBy: ['bytes', 'write: shapes', 'edit: shapes', 'generative'] },
  { file: 'load-stops-at-nul', rule: 'readBytes: the whole file as bytes, exactly as stored (past a NUL too)', caughtBy: ['bytes', 'read/stream: stored bytes', 'generative'] },
  { file: 'read-bytes-truncated-to-max', rule: 'readBytes: a file above maxBytes is FS_TOO_LARGE, refused before its content is read', caughtBy: ['bytes'] },
  // listing
  { file: 'locale-order', rule: 'listDir: entries are sorted by the Unicode code points of their names', caughtBy: [FINAL], refused: true },
  { file: 'list-dot-entries', rule: 'listDir: the direct children of a directory (not itself, not its parent)', caughtBy: ['listing'] },
  { file: 'list-drops-1001', rule: 'listDir: the direct children of a directory, all of them (past a page of 1000)', caughtBy: ['listing'] },
  { file: 'list-version-mismatch', rule: 'FsDirEntry.version: the version stat returns', caughtBy: ['listing'] },
  { file: 'list-size-chars', rule: 'FsDirEntry.size: byte size of a regular file', caughtBy: ['listing'] },
  { file: 'list-target-relative', rule: 'FsDirEntry.target: the resolved child, ready for follow-up operations', caughtBy: ['listing'] },
  { file: 'list-missing-empty', rule: 'listDir: missing is FS_NOT_FOUND', caughtBy: ['listing', 'errors'] },
  { file: 'list-staging-residue', rule: 'listDir: staging residue of in-flight writes is never listed', caughtBy: ['write: in flight'] },
  { file: 'memory-list-link-type', rule: "listDir: a symlink's type is its target's", caughtBy: ['listing: symlinks'] },
  { file: 'memory-list-broken-link-metadata', rule: 'listDir: a broken symlink is other without metadata', caughtBy: ['listing: symlinks'] },
  { file: 'tree-ignores-prune', rule: 'listTree: a directory named in prune is listed and never entered', caughtBy: ['tree listing'] },
  { file: 'memory-tree-link-flag', rule: 'listTree: a symlink to a directory is listed with link: true and never entered', caughtBy: ['tree listing: symlinks'] },
  { file: 'list-size-without-bom', rule: 'FsDirEntry.size: byte size of a regular file (its BOM counts)', caughtBy: ['listing'] },
  { file: 'list-version-cached', rule: 'FsDirEntry.version: the version stat returns (after an overwrite too)', caughtBy: ['listing'] },
  { file: 'list-dir-version-differs', rule: 'FsDirEntry.version: the version stat returns (of a directory too)', caughtBy: ['generative'] },
  { file: 'list-empty-dir-as-file', rule: 'FsDirEntry.type: type after following a symlink (an empty directory is a directory)', caughtBy: ['createDirectory', 'generative', 'abort: at any moment'] },
  { file: 'list-newline-name-cut', rule: 'capabilities.newlineInNames: a file name may contain a newline (listed whole)', caughtBy: ['listing: newline in names', 'generative'] },
  { file: 'memory-list-link-target-from-cwd', rule: "listDir: an entry's target is what resolve gives its path (a link that climbs, `../x`, from the link's directory)", caughtBy: ['generative'] },
  // write
  { file: 'in-place', rule: 'writeText: a reader sees the old content or the new, whole, never a mix', caughtBy: ['atomicity'] },
  { file: 'write-non-atomic-large', rule: 'writeText: a reader sees the old content or the new, whole (above a part size)', caughtBy: ['atomicity'] },
  { file: 'write-parent-marker-only', rule: 'writeText: missing parent directories are created', caughtBy: ['write'] },
  { file: 'write-dir-overwrite', rule: 'writeText: an existing directory or special file is FS_NOT_REGULAR_FILE', caughtBy: ['write', 'errors'] },
  { file: 'write-residue-on-failure', rule: 'writeText: a failed or aborted write leaves the old content and no residue in a listing', caughtBy: ['write', 'errors'] },
  { file: 'write-abort-publishes', rule: 'an aborted signal fails with FS_ABORTED and changes nothing', caughtBy: ['write: in flight'] },
  { file: 'write-always-create', rule: 'writeText: the outcome says create or update', caughtBy: ['write'] },
  { file: 'write-before-aliased', rule: "writeText: the outcome's before is the previous text", caughtBy: ['write: shapes'] },
  { file: 'remove-guard-truthy', rule: 'remove: expected.version removes only that version of a file (the empty version is a version)', caughtBy: ['generative'] },
  { file: 'edit-guard-truthy', rule: 'editText: expected.version is checked BEFORE matching (the empty version is a version)', caughtBy: ['generative'] },
  { file: 'remove-dir-guard-skipped', rule: "remove: expected may name a directory's version: the directory goes only while it has it", caughtBy: ['remove'] },
  { file: 'rename-guard-on-to', rule: 'rename: expected.version moves only that version of the file (not of to)', caughtBy: ['rename', 'rename: directories', 'generative'] },
  { file: 'rename-overwrite-guard-on-from', rule: 'rename: overwrite: { version } replaces only that version of it (else FS_STALE_VERSION)', caughtBy: ['rename'] },
  { file: 'rename-missing-guarded-not-found', rule: 'rename: missing from is FS_NOT_FOUND (FS_STALE_VERSION when guarded)', caughtBy: ['rename', 'generative'] },
  { file: 'write-keeps-bom', rule: 'writeText: content is stored as given (no BOM added over a file that had one)', caughtBy: ['model-based'] },
  { file: 'write-strips-bom', rule: 'writeText: content is stored as given (a leading U+FEFF too)', caughtBy: ['write: shapes'] },
  { file: 'memory-write-replaces-link', rule: 'writeText: writing a symlink writes its target and keeps the link', caughtBy: ['write: symlinks'] },
  { file: 'write-created-on-empty', rule: 'writeText: the outcome says create or update (an empty file exists: update)', caughtBy: ['write'] },
  // guards and races
  { file: 'ignores-guard', rule: 'writeText: replaceIfVersion on another version is FS_STALE_VERSION', caughtBy: ['write', 'CAS races'] },
  { file: 'replace-compares-size', rule: 'writeText: replaceIfVersion on another version (of the same size) is FS_STALE_VERSION', caughtBy: ['write'] },
  { file: 'replace-missing-creates', rule: 'writeText: replaceIfVersion on a missing file is FS_STALE_VERSION', caughtBy: ['write', 'errors'] },
  { file: 'replace-check-then-act', rule: 'writeText: of N concurrent guarded writers from one version, exactly one wins', caughtBy: ['CAS races'] },
  { file: 'create-if-absent-race', rule: 'writeText: createIfAbsent: a concurrent creator is never overwritten', caughtBy: ['CAS races'] },
  { file: 'create-if-absent-dir', rule: 'writeText: an existing directory is FS_NOT_REGULAR_FILE (createIfAbsent too)', caughtBy: ['write: shapes'] },
  // edit
  { file: 'edit-guard-after-transform', rule: 'editText: expected.version is checked BEFORE matching', caughtBy: ['edit'] },
  { file: 'edit-publishes-on-throw', rule: 'updateBytes: transform may throw (nothing must be published then)', caughtBy: ['size limits', 'size limits: a stored file above the limit'] },
  { file: 'edit-missing-not-found', rule: 'editText: a missing target is FS_STALE_VERSION, guarded or not', caughtBy: ['edit', 'errors'] },
  { file: 'edit-dir-stale', rule: 'editText: a non-file is FS_NOT_REGULAR_FILE', caughtBy: ['edit', 'errors'] },
  { file: 'edit-lost-update', rule: 'editText: one critical section: check, read, match, write', caughtBy: ['edit: critical section'] },
  { file: 'edit-text-mode-read', rule: 'editText: untouched text keeps its bytes', caughtBy: ['edit', 'edit: shapes'] },
  { file: 'edit-drops-bom', rule: 'editText: a BOM stays', caughtBy: ['edit: stored bytes'] },
  { file: 'edit-replaceall-dollar', rule: 'editText: `$` in newString is literal (with replaceAll)', caughtBy: [FINAL], refused: true },
  { file: 'memory-edit-loses-mode', rule: "updateBytes: publish atomically, keeping the file's mode (capabilities.permissions)", caughtBy: ['permissions'] },
  { file: 'memory-write-ignores-read-only', rule: 'writeText/editText: a file whose mode grants write permission to no one (0444) is FS_PERMISSION_DENIED', caughtBy: ['permissions'] },
  // bytes, remove, rename, createDirectory
  { file: 'read-bytes-shared', rule: "readBytes: the bytes are the caller's: changing them changes nothing stored", caughtBy: ['bytes'] },
  { file: 'remove-ignores-guard', rule: 'remove: expected.version removes only that version of a file', caughtBy: ['remove'] },
  { file: 'remove-check-then-act', rule: 'remove: of N concurrent guarded removers exactly one wins', caughtBy: ['remove'] },
  { file: 'remove-non-empty', rule: 'remove: a directory with entries is FS_NOT_EMPTY unless recursive', caughtBy: ['remove'] },
  { file: 'remove-unbounded', rule: 'remove: a tree of more than maxRemoveEntries entries is FS_TOO_LARGE before anything is removed', caughtBy: ['remove'] },
  { file: 'rename-overwrites', rule: 'rename: an existing to is FS_NOT_OBSERVED unless overwrite', caughtBy: ['rename'] },
  { file: 'rename-ignores-guard', rule: 'rename: expected.version moves only that version of the file', caughtBy: ['rename'] },
  { file: 'rename-check-then-act', rule: 'rename: of N concurrent renamers to one new name exactly one wins (no source lost)', caughtBy: ['rename'] },
  { file: 'rename-delete-first', rule: 'rename: at every moment at least one of the two names holds the whole content', caughtBy: ['rename'] },
  { file: 'rename-version-stale', rule: "rename: the outcome's version equals the next stat of to", caughtBy: ['rename'] },
  { file: 'mkdir-over-file', rule: 'createDirectory: a file at the path is FS_NOT_DIRECTORY; an existing directory is created: false', caughtBy: ['createDirectory'] },
  { file: 'remove-empty-dir-not-empty', rule: 'remove: a directory with entries is FS_NOT_EMPTY unless recursive (an empty one goes)', caughtBy: ['remove: empty directories'] },
  { file: 'remove-recursive-keeps-dir', rule: 'remove: recursive removes the directory and everything below it', caughtBy: ['remove'] },
  { file: 'remove-entries-miscount', rule: 'remove: the outcome counts the entries removed', caughtBy: ['remove'] },
  { file: 'memory-remove-link-itself', rule: "remove: a target resolved through a symlink names the link's target: that file is removed, the link stays", caughtBy: ['remove: symlinks'] },
  { file: 'rename-no-parents', rule: 'rename: missing parent directories of to are created', caughtBy: ['rename', 'rename: directories'] },
  { file: 'rename-overwrite-replaces-dir', rule: 'rename: a directory at to is never replaced (an empty one too)', caughtBy: ['rename'] },
  { file: 'rename-replaced-false', rule: 'FsRenameOutcome.replaced: true when a file at the destination was replaced (overwrite)', caughtBy: ['rename'] },
  { file: 'rename-dir-drops-children', rule: 'capabilities.renameDirectories: rename moves a directory with its content', caughtBy: ['rename: directories'] },
  { file: 'mkdir-no-parents', rule: 'createDirectory: creates a directory, and its missing parents', caughtBy: ['createDirectory', 'remove: empty directories', 'generative'] },
  { file: 'mkdir-through-file', rule: 'createDirectory: a file (or other non-directory) at the path or on the way is FS_NOT_DIRECTORY (a parent that became a file after resolve)', caughtBy: ['createDirectory'] },
  { file: 'mkdir-existing-created', rule: 'createDirectory: an existing directory is success with created: false', caughtBy: ['createDirectory'] },
  { file: 'mkdir-marker-pruned', rule: 'createDirectory: afterwards the parent lists it, until it is removed (a remove of its last file does not take it)', caughtBy: ['createDirectory: with remove'] },
  // public methods answered by the backend's own code (the rules above it bypasses stay broken)
  { file: 'override-proxy', rule: 'public methods are final: a proxy in front answers listDir', caughtBy: [FINAL], refused: true },
  { file: 'override-instance', rule: 'public methods are final: a readText set on the instance', caughtBy: [FINAL], refused: true },
  { file: 'override-accessor', rule: 'public methods are final: writeText as an accessor, two classes down', caughtBy: [FINAL], refused: true },
  { file: 'override-later-subjects', rule: 'public methods are final: a stat of its own on subjects after the probe', caughtBy: ['resolve/identity'], refused: true },
  { file: 'not-a-file-system', rule: 'public methods are final: a plain object that forwards to a backend', caughtBy: [FINAL], refused: true },
  // inputs between the hand-picked ones, drawn from each rule's grammar (the generative clause)
  { file: 'names-normalized', rule: 'listDir: the direct children of a directory, each by its name (a decomposed name is not listed composed)', caughtBy: ['generative'] },
  { file: 'names-case-folded', rule: 'resolve: names are exact (A.txt and a.txt are two files)', caughtBy: ['generative'] },
  { file: 'resolve-clamps-at-cwd', rule: 'resolve: a relative path resolves against opts.cwd (.. climbs above it)', caughtBy: ['generative'] },
  { file: 'resolve-trailing-slash', rule: 'resolve: aliases of one file yield one targetKey (a trailing separator)', caughtBy: ['generative'] },
  { file: 'guard-prefix', rule: 'writeText: replaceIfVersion on another version is FS_STALE_VERSION (the empty version, a prefix of the current one)', caughtBy: ['generative'] },
  { file: 'memory-list-dangling-key', rule: 'FsDirEntry.target: the resolved child (a dangling link resolves to the path it names)', caughtBy: ['generative'] },
  { file: 'memory-list-chain-other', rule: "listDir: a symlink's type is its target's (through a chain of links)", caughtBy: ['generative'] },
  { file: 'load-drops-final-cr', rule: "readBytes: the bytes as stored (a final lone CR)", caughtBy: ['generative'] },
  { file: 'resolve-absolute-unnormalized', rule: 'resolve: aliases of one file yield one targetKey (an absolute path with dot segments)', caughtBy: ['generative'] },
  { file: 'resolve-doubled-separator-kept', rule: 'resolve: aliases of one file yield one targetKey (a doubled separator)', caughtBy: ['generative'] },
  { file: 'resolve-dot-is-root', rule: 'resolve: a relative path resolves against opts.cwd (`.` too)', caughtBy: ['generative'] },
  { file: 'names-trailing-space-trimmed', rule: 'resolve: names are exact (trailing spaces and dots too)', caughtBy: ['listing', 'generative'] },
  { file: 'names-controls-stripped', rule: 'resolve: names are exact (control characters too)', caughtBy: ['generative'] },
  { file: 'names-invisible-stripped', rule: 'resolve: names are exact (zero-width and bidi marks too)', caughtBy: ['generative'] },
  { file: 'names-percent-decoded', rule: 'resolve: names are exact (`%20` is not a space)', caughtBy: ['resolve/identity', 'generative'] },
  { file: 'names-url-parsed', rule: 'resolve: names are exact (`#` and `?` are parts of a name)', caughtBy: ['resolve/identity', 'listing', 'generative'] },
  { file: 'publish-refuses-noncharacters', rule: 'writeBytes: stored exactly as given (a noncharacter is valid UTF-8)', caughtBy: ['generative'] },
  // aborts at any moment: drawn moments, present and absent targets, the store read back
  { file: 'abort-remove-reports-after-delete', rule: 'a mutation that fails without indeterminate did not happen (a remove aborted mid-flight)', caughtBy: ['abort: at any moment'] },
  { file: 'abort-rename-lands-later', rule: 'a mutation that fails without indeterminate did not happen (a move that lands after its definite FS_ABORTED)', caughtBy: ['abort: at any moment'] },
  { file: 'abort-rename-half-rollback', rule: 'rename: a failed or aborted rename leaves both names as they were', caughtBy: ['abort: at any moment'] },
  { file: 'abort-mkdir-leaves-parents', rule: 'an aborted signal fails with FS_ABORTED and changes nothing (the parents of an aborted createDirectory)', caughtBy: ['abort: at any moment'] },
  { file: 'abort-mkdir-listener-undoes', rule: 'createDirectory: afterwards stat says directory, until it is removed (an abort after the call settled undoes nothing)', caughtBy: ['abort: at any moment'] },
  // lifecycle: close() and a closed filesystem, every call bounded
  { file: 'close-twice-throws', rule: 'close: releases connections and handles; idempotent (a second close() resolves)', caughtBy: ['lifecycle'] },
  { file: 'closed-calls-hang', rule: 'every failure is an FsError; nothing else escapes (after close(), a call fails or works, never hangs)', caughtBy: ['lifecycle'] },
  { file: 'close-drops-pending', rule: 'close: after close(), each operation works or fails with an FsError, and none hangs (the calls in flight at close() too)', caughtBy: ['lifecycle'] },
  { file: 'closed-file-url-raw', rule: 'every failure is an FsError with a code of FsErrorCode; nothing else escapes (fileUrl after close())', caughtBy: ['lifecycle'] },
  // the finer timing adversary: observers at every promise turn of an operation
  { file: 'microtask-rename-gap', rule: 'rename: at every moment at least one of the two names holds the whole content (also between promise turns)', caughtBy: ['interleavings'] },
  { file: 'microtask-staging-listed', rule: 'listDir: staging residue of in-flight writes is never listed (also between promise turns)', caughtBy: ['interleavings'] },
  { file: 'microtask-torn-write', rule: 'writeText: a reader sees the old content or the new, whole, never a mix', caughtBy: ['interleavings', 'atomicity'] },
  { file: 'microtask-edit-truncates', rule: 'editText: atomically replaces literal text inside one critical section (a reader never sees a truncated file)', caughtBy: ['interleavings', 'edit: critical section'] },
  // capability claims, probed
  { file: 'atomic-claim-process-lock', rule: 'GuardStrength atomic: by the store itself, against any writer (a program that knows nothing of seamfs too)', caughtBy: ['capabilities: atomic guards', 'remove'] },
  { file: 'memory-rename-copies', rule: "capabilities.rename 'atomic': the store moves content and identity without copying bytes (the mtime stays)", caughtBy: ['modification time'] },
  { file: 'memory-edit-keeps-mtime', rule: 'capabilities.mtime: stat reports the last modification time (an edit moves it)', caughtBy: ['modification time'] },
  { file: 'local-reads-follow-links', rule: 'capabilities.keyBoundReads: a read of a target whose way became a link since resolve fails', caughtBy: ['capabilities: key-bound reads'] },
  { file: 'local-process-lock-claims-seamfs', rule: "GuardStrength seamfs: among every seamfs writer of the store, in any process (lockScope 'process' declared as seamfs)", caughtBy: ['cross-instance races'] },
  // bounded streams: a held line, a read-ahead that does not wait for the reader
  { file: 'stream-whole-lines', rule: 'streamText: memory stays bounded by the chunk size, whatever the file size (a file of one long line)', caughtBy: ['read/stream: streaming'] },
  { file: 'stream-read-ahead', rule: "streamBytes: memory stays bounded by the chunk size, whatever the file size (a reader that pauses)", caughtBy: ['read/stream: streaming'] },
  // limits
  { file: 'limits-ignored', rule: 'FsLimits: every backend takes core limits; a file above maxTextBytes is FS_TOO_LARGE', caughtBy: ['size limits'] },
]

interface CliRun {
  readonly code: number
  readonly stdout: string
  readonly report: ConformanceReport
}

/** How long one CLI run may take: its own run timeout, with room for the worker to be killed and the report written. */
const RUN_TIMEOUT_S = 150
const KILL_AFTER_MS = (RUN_TIMEOUT_S + 30) * 1000

function runCli(module: string): Promise<CliRun> {
  const json = join(out, `${module.replaceAll(/[^a-z]/gi, '_')}.json`)
  const args = [CLI, here(module), '--json', json, '--quiet', '--run-timeout', String(RUN_TIMEOUT_S)]
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { timeout: KILL_AFTER_MS, maxBuffer: 16 * 1024 * 1024 }, (err, stdout) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1
      try {
        resolve({ code, stdout, report: JSON.parse(readFileSync(json, 'utf8')) as ConformanceReport })
      } catch (parseErr) {
        reject(new Error(`no report from the CLI (exit ${code}): ${stdout}`, { cause: parseErr }))
      }
    })
  })
}

/**
 * Runs `task`s at most `limit` at a time. Each CLI run is a vitest of its own that spends much of
 * its time starting up (three processes, a vite server), so one more run than there are cores
 * keeps them busy; more only add contention (measured on 2 busy cores: 12 variants take 66 s two
 * at a time, 44 s three at a time, 44 s four at a time).
 */
function limited<T>(limit: number): (task: () => Promise<T>) => Promise<T> {
  let running = 0
  const waiting: (() => void)[] = []
  return async (task) => {
    while (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve))
    running++
    try {
      return await task()
    } finally {
      running--
      waiting.shift()?.()
    }
  }
}

const inPool = limited<CliRun>(Math.min(4, availableParallelism() + 1))
const run = (module: string): Promise<CliRun> => inPool(() => runCli(module))
const failedIn = (report: ConformanceReport, clause: string): number => report.clauses.find((c) => c.clause === clause)?.failed ?? 0
const failedClauses = (report: ConformanceReport): string =>
  report.clauses
    .filter((c) => c.failed > 0)
    .map((c) => `${c.clause} (${c.failed})`)
    .join(', ') || 'none'

// The tests run concurrently (vitest starts `maxConcurrency`, 5, at a time) and queue for the
// pool: a test may wait for a few runs before its own, each bounded by KILL_AFTER_MS.
const TEST_TIMEOUT_MS = 4 * KILL_AFTER_MS

// One concurrent block: the worked example's run (the longest, at its full tuning) overlaps the variants'.
describe.concurrent('the CLI passes the worked example and catches broken backends', () => {
  it(
    'runs the Map example, prints a per-clause table and exits 0',
    async ({ expect }) => {
      const { code, stdout, report } = await run('../examples/map-conformance.ts')
      expect(report.failed, failedClauses(report)).toBe(0)
      expect(code).toBe(0)
      expect(report.passed).toBeGreaterThan(100)
      expect(stdout).toMatch(/^clause\s+passed\s+failed\s+skipped/m)
      expect(stdout).toMatch(/^model-based\s+1\s+0\s+0/m)
      const symlinks = report.clauses.find((c) => c.clause === 'listing: symlinks')
      expect(symlinks?.skipReasons).toEqual(['capabilities.symlinks is false, no external.symlink hook'])
    },
    TEST_TIMEOUT_MS,
  )

  it('has at least 150 variants, each module of broken/ listed once', ({ expect }) => {
    // The .ts modules: a variant's racing children import plain JavaScript (an .mjs beside it).
    const modules = readdirSync(here('broken')).filter((name) => name.endsWith('.ts') && !/^(memory-)?base\.ts$/.test(name))
    expect(VARIANTS.map((v) => `${v.file}.ts`).sort()).toEqual(modules.sort())
    expect(VARIANTS.length).toBeGreaterThanOrEqual(150)
  })

  for (const variant of VARIANTS) {
    it(
      `${variant.file}: breaks "${variant.rule}"; caught by ${variant.caughtBy.join(' and ')}; the CLI exits 1`,
      async ({ expect }) => {
        const { code, report } = await run(`broken/${variant.file}.ts`)
        for (const clause of variant.caughtBy) expect(failedIn(report, clause), `${clause} must fail; failed: ${failedClauses(report)}`).toBeGreaterThan(0)
        expect(code).toBe(1)
        expect(report.errors, 'errors outside any test').toEqual([])
        if (variant.refused === true) {
          // Refused as a whole: each failure says why (the first subjects of a factory may pass).
          const failures = report.tests.filter((t) => t.state === 'failed')
          for (const t of failures) expect(t.note, `${t.clause} › ${t.name}`).toMatch(REFUSAL)
          return
        }
        // One rule broken: the rest of the kit still runs, and most of it passes.
        expect(report.passed).toBeGreaterThan(report.failed)
      },
      TEST_TIMEOUT_MS,
    )
  }
})
