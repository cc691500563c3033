import { createHash } from 'node:crypto'
import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3'
import {
  assertEditRequest,
  processWide,
  assertWriteIntent,
  compareNames,
  decodeText,
  decodeTextOrNull,
  editTextBytes,
  encodeWriteContent,
  FileSystem,
  FsError,
  FsVersion,
  KeyedMutex,
  normalizeLf,
  throwIfAborted,
  type EditOptions,
  type FsCapabilities,
  type FsDirEntry,
  type FsEditOutcome,
  type FsEditRequest,
  type FsInfo,
  type FsPathInfo,
  type FsTarget,
  type FsVerb,
  type FsWriteIntent,
  type FsWriteOutcome,
  type ResolveOptions,
  type SignalOptions,
  type WriteOptions,
} from '@seamfs/core'
import { abortBodyOn, readBody, streamBody } from './body.js'
import { toFsError } from './errors.js'
import { DEFAULT_DIFF_BASIS_MAX_BYTES, DEFAULT_PAGE_SIZE, type S3Credentials, type S3FileSystemOptions, type S3ProbeResult } from './options.js'
import { normalizePrefix, Paths } from './paths.js'
import { probeConditions, scratchKey } from './probe.js'
import { Store, versionOf, type PutConflict, type Revision } from './store.js'

/** Directories are key prefixes: nothing about them changes but their listing. */
const DIRECTORY_VERSION = FsVersion('directory')
/** Unguarded edits that keep losing races to other writers give up after this many tries. */
const EDIT_ATTEMPTS = 5

function capabilitiesOf(probe: S3ProbeResult | undefined): FsCapabilities {
  return Object.freeze({
    symlinks: false,
    permissions: false,
    processPath: false,
    // Until the probe has run, only the in-process lock is promised.
    createIfAbsent: probe?.createIfAbsent === true ? 'atomic' : 'process',
    replaceIfVersion: probe?.replaceIfVersion === true ? 'atomic' : 'process',
    versionSource: 'revision',
    newlineInNames: true,
    emptyDirectories: false,
  })
}

/** Per-key locks of the `'process'` fallback, shared by every instance (and copy of this package) in the process. */
const LOCKS = processWide('backend-s3:locks', () => new KeyedMutex())

function credentialsOf(c: S3Credentials): { accessKeyId: string; secretAccessKey: string; sessionToken?: string } {
  const base = { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey }
  return c.sessionToken === undefined ? base : { ...base, sessionToken: c.sessionToken }
}

function clientConfig(o: Readonly<S3FileSystemOptions>): S3ClientConfig {
  return {
    region: o.region ?? 'us-east-1',
    ...(o.endpoint === undefined ? {} : { endpoint: o.endpoint }),
    ...(o.forcePathStyle === undefined ? {} : { forcePathStyle: o.forcePathStyle }),
    ...(o.credentials === undefined ? {} : { credentials: credentialsOf(o.credentials) }),
    // The SDK's default (aws-chunked bodies with checksum trailers) is not understood by many
    // S3-compatible servers (RGW 16 answers 411); plain Content-Length bodies work everywhere.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  }
}

const notRegularFile = (verb: FsVerb, path: string): FsError =>
  new FsError('FS_NOT_REGULAR_FILE', `cannot ${verb} "${path}": not a regular file`)
const stale = (verb: FsVerb, path: string, why: string): FsError => new FsError('FS_STALE_VERSION', `cannot ${verb} "${path}": ${why}`)
const notObserved = (path: string): FsError =>
  new FsError('FS_NOT_OBSERVED', `cannot overwrite existing "${path}" without reading it first`)
const md5Hex = (bytes: Uint8Array): string => createHash('md5').update(bytes).digest('hex')

/**
 * The seamfs contract over an S3 bucket (any S3-compatible server), scoped to a key prefix.
 *
 * Files are objects; directories are key prefixes (a zero-byte `dir/` marker counts as one).
 * Versions are revisions: the ETag, plus the VersionId in a versioned bucket. A write is one
 * PUT, atomic for every reader. Guards are request conditions (`If-None-Match: *`,
 * `If-Match`) when the server enforces them; a probe on first use (or {@link probe}) finds out,
 * and `capabilities` says `'atomic'` only for the conditions it saw enforced. Otherwise guarded
 * writes are checked under a per-key lock inside this process (`'process'`), or refused with
 * `FS_UNSUPPORTED` when `requireAtomicGuards` is set.
 *
 * Request costs (after the probe): stat of a file 1 HEAD (of a directory HEAD + LIST);
 * read 1 GET; write 1 GET (the `before` diff basis, which also tells create from update) +
 * 1 PUT, plus 1 LIST on a create (is the target a directory?); `createIfAbsent` 1 LIST + 1 PUT;
 * edit 1 GET + 1 PUT; listDir ⌈entries / pageSize⌉ LISTs; resolve 1 HEAD per ancestor
 * directory (in parallel), to refuse a path through a file.
 */
export class S3FileSystem extends FileSystem {
  readonly client: S3Client
  readonly bucket: string
  /** The normalized key prefix (`a/b/`, or `''` for the whole bucket). */
  readonly prefix: string
  readonly cwd: string
  readonly #paths: Paths
  readonly #store: Store
  readonly #ownsClient: boolean
  readonly #requireAtomic: boolean
  readonly #diffBasisMaxBytes: number
  #capabilities: FsCapabilities = capabilitiesOf(undefined)
  #probe: Promise<S3ProbeResult> | undefined
  #probed: S3ProbeResult | undefined
  #closed = false

  /** Builds the filesystem and runs the capability probe, so `capabilities` is final. */
  static async open(options: Readonly<S3FileSystemOptions>): Promise<S3FileSystem> {
    const fs = new S3FileSystem(options)
    try {
      await fs.probe()
    } catch (err) {
      await fs.close()
      throw err
    }
    return fs
  }

  constructor(options: Readonly<S3FileSystemOptions>) {
    super()
    if (typeof options.bucket !== 'string' || options.bucket === '') throw new TypeError('bucket must be a non-empty string')
    const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000) throw new RangeError('pageSize must be an integer within 1..1000')
    const cap = options.diffBasisMaxBytes ?? DEFAULT_DIFF_BASIS_MAX_BYTES
    if (!Number.isSafeInteger(cap) || cap < 0) throw new RangeError('diffBasisMaxBytes must be a non-negative integer')
    this.bucket = options.bucket
    this.prefix = normalizePrefix(options.prefix)
    this.#paths = new Paths(this.bucket, this.prefix, options.cwd)
    this.cwd = this.#paths.cwd
    this.client = options.client ?? new S3Client(clientConfig(options))
    this.#ownsClient = options.client === undefined
    this.#store = new Store(this.client, this.bucket, pageSize)
    this.#requireAtomic = options.requireAtomicGuards ?? false
    this.#diffBasisMaxBytes = cap
  }

  /** Conservative (`'process'` guards) until the probe has run; then what the probe found. */
  override get capabilities(): FsCapabilities {
    return this.#capabilities
  }

  /** What the probe found, once it has run. */
  get probeResult(): S3ProbeResult | undefined {
    return this.#probed
  }

  /**
   * Probes, once, on a scratch key under the prefix, which write conditions the server
   * enforces (see {@link S3ProbeResult}); writes and edits call it on first use. A failed
   * probe is not remembered: the next call tries again.
   */
  probe(): Promise<S3ProbeResult> {
    this.#probe ??= probeConditions(this.#store, scratchKey(this.prefix)).then(
      (result) => {
        this.#probed = result
        this.#capabilities = capabilitiesOf(result)
        return result
      },
      (err: unknown) => {
        this.#probe = undefined
        throw toFsError(err, 'write', '/')
      },
    )
    return this.#probe
  }

  override async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    if (this.#ownsClient) this.client.destroy()
  }

  override async resolve(path: string, opts: ResolveOptions = {}): Promise<FsTarget> {
    throwIfAborted(opts.signal, 'resolve')
    const abs = this.#paths.absolute(path, opts.cwd, 'resolve')
    const rel = abs.slice(1)
    const ancestors = this.#paths.ancestors(rel)
    if (ancestors.length > 0) {
      let revisions: (Revision | undefined)[]
      try {
        revisions = await Promise.all(ancestors.map((a) => this.#store.head(this.#paths.objectKey(a), opts.signal)))
      } catch (err) {
        throw toFsError(err, 'resolve', abs)
      }
      if (revisions.some((r) => r !== undefined)) {
        throw new FsError('FS_NOT_FOUND', `cannot resolve "${abs}": a parent path segment is a file`)
      }
    }
    return this.#paths.target(rel)
  }

  override processPath(): string {
    throw new FsError('FS_UNSUPPORTED', 'an S3 object has no path a local process can open')
  }

  override fileUrl(target: FsTarget): string {
    return this.#paths.url(this.#paths.relOf(target, 'resolve'))
  }

  override contains(parent: FsTarget, child: FsTarget): boolean {
    return Paths.contains(parent, child)
  }

  override async stat(target: FsTarget, opts: SignalOptions = {}): Promise<FsInfo | undefined> {
    throwIfAborted(opts.signal, 'stat')
    const rel = this.#paths.relOf(target, 'stat')
    try {
      return await this.#info(rel, opts.signal)
    } catch (err) {
      throw toFsError(err, 'stat', target.displayPath)
    }
  }

  override async lstat(path: string, opts: ResolveOptions = {}): Promise<FsPathInfo | undefined> {
    throwIfAborted(opts.signal, 'lstat')
    const abs = this.#paths.absolute(path, opts.cwd, 'lstat')
    try {
      return await this.#info(abs.slice(1), opts.signal)
    } catch (err) {
      throw toFsError(err, 'lstat', abs)
    }
  }

  override async readText(target: FsTarget, opts: SignalOptions = {}): Promise<string> {
    const { signal } = opts
    throwIfAborted(signal, 'read')
    const rel = this.#fileRel(target, 'read')
    try {
      const found = await this.#fetch(rel, target.displayPath, signal, Infinity)
      if (found === undefined) throw await this.#absent(rel, 'read', target.displayPath, signal)
      return decodeText(found.bytes ?? new Uint8Array(0), target.displayPath)
    } catch (err) {
      throw toFsError(err, 'read', target.displayPath)
    }
  }

  override async streamText(target: FsTarget, opts: SignalOptions = {}): Promise<AsyncIterable<string>> {
    const { signal } = opts
    throwIfAborted(signal, 'read')
    const rel = this.#fileRel(target, 'read')
    try {
      const opened = await this.#store.open(this.#paths.objectKey(rel), signal)
      if (opened === undefined) throw await this.#absent(rel, 'read', target.displayPath, signal)
      return streamBody(opened.body, opened.revision.size, target.displayPath, signal)
    } catch (err) {
      throw toFsError(err, 'read', target.displayPath)
    }
  }

  override async listDir(target: FsTarget, opts: SignalOptions = {}): Promise<FsDirEntry[]> {
    const { signal } = opts
    throwIfAborted(signal, 'list')
    const rel = this.#paths.relOf(target, 'list')
    const childRel = (name: string): string => (rel === '' ? name : `${rel}/${name}`)
    // ListObjectsV2 carries no VersionId: the ETag alone is the version only in an unversioned bucket.
    const withVersion = this.#probed?.versioned === false
    try {
      const files = new Map<string, FsDirEntry>()
      const dirs = new Set<string>()
      let exists = rel === ''
      for await (const page of this.#store.list(this.#paths.childPrefix(rel), signal)) {
        throwIfAborted(signal, 'list')
        exists ||= page.files.length > 0 || page.dirs.length > 0
        // An empty name is the directory's own marker, or a key with an empty segment (no path reaches it).
        for (const f of page.files) {
          if (f.name === '') continue
          files.set(f.name, {
            name: f.name,
            type: 'file',
            target: this.#paths.target(childRel(f.name)),
            ...(f.size === undefined ? {} : { size: f.size }),
            ...(withVersion && f.etag !== undefined ? { version: FsVersion(f.etag) } : {}),
          })
        }
        for (const d of page.dirs) if (d !== '') dirs.add(d)
      }
      if (!exists) {
        const file = await this.#store.head(this.#paths.objectKey(rel), signal)
        const code = file === undefined ? 'FS_NOT_FOUND' : 'FS_NOT_DIRECTORY'
        throw new FsError(code, `cannot list "${target.displayPath}": ${file === undefined ? 'not found' : 'not a directory'}`)
      }
      const entries = [...files.values()]
      // A key that is both an object and a prefix is shown as the file (stat and resolve agree).
      for (const name of dirs) {
        if (!files.has(name)) entries.push({ name, type: 'directory', target: this.#paths.target(childRel(name)) })
      }
      return entries.sort((a, b) => compareNames(a.name, b.name))
    } catch (err) {
      throw toFsError(err, 'list', target.displayPath)
    }
  }

  override async writeText(target: FsTarget, content: string, opts: WriteOptions = {}): Promise<FsWriteOutcome> {
    const { expected, signal } = opts
    throwIfAborted(signal, 'write')
    assertWriteIntent(expected, target.displayPath)
    const bytes = encodeWriteContent(content, target.displayPath)
    const rel = this.#fileRel(target, 'write')
    try {
      const probe = await this.probe()
      if (expected !== undefined && !probe[expected.kind]) this.#assertFallbackAllowed(expected.kind, 'write', target.displayPath)
      return await this.#serialized(rel, probe, () => this.#write(rel, target.displayPath, bytes, content, expected, signal, probe))
    } catch (err) {
      throw toFsError(err, 'write', target.displayPath)
    }
  }

  override async editText(target: FsTarget, edit: FsEditRequest, opts: EditOptions = {}): Promise<FsEditOutcome> {
    const { expected, signal } = opts
    throwIfAborted(signal, 'edit')
    assertEditRequest(edit)
    const rel = this.#fileRel(target, 'edit')
    try {
      const probe = await this.probe()
      if (expected !== undefined && !probe.replaceIfVersion) this.#assertFallbackAllowed('replaceIfVersion', 'edit', target.displayPath)
      return await this.#serialized(rel, probe, () => this.#edit(rel, target.displayPath, edit, expected, signal, probe))
    } catch (err) {
      throw toFsError(err, 'edit', target.displayPath)
    }
  }

  async #write(
    rel: string,
    path: string,
    bytes: Uint8Array,
    content: string,
    expected: FsWriteIntent | undefined,
    signal: AbortSignal | undefined,
    probe: S3ProbeResult,
  ): Promise<FsWriteOutcome> {
    const key = this.#paths.objectKey(rel)
    const after = normalizeLf(content)
    if (expected?.kind === 'createIfAbsent') {
      if (!probe.createIfAbsent && (await this.#store.head(key, signal)) !== undefined) throw notObserved(path)
      if (await this.#isDirectory(rel, signal)) throw notRegularFile('write', path)
      throwIfAborted(signal, 'write')
      const put = await this.#store.put(key, bytes, probe.createIfAbsent ? { ifNoneMatch: '*' } : undefined)
      const revision = put.ok ? put.revision : await this.#afterConflict(put, key, bytes, undefined, 'write', path)
      if (revision === 'lost') throw notObserved(path)
      return { operation: 'create', version: versionOf(revision), before: null, after }
    }
    const current = await this.#fetch(rel, path, signal, this.#diffBasisMaxBytes)
    if (current === undefined) {
      if (await this.#isDirectory(rel, signal)) throw notRegularFile('write', path)
      if (expected !== undefined) throw stale('write', path, 'file no longer exists')
    } else if (expected !== undefined && versionOf(current.revision) !== expected.version) {
      throw stale('write', path, 'file changed since it was read')
    }
    throwIfAborted(signal, 'write')
    const guard = expected !== undefined && current !== undefined && probe.replaceIfVersion
    const put = await this.#store.put(key, bytes, guard ? { ifMatch: this.#ifMatch(current.revision.etag) } : undefined)
    const revision = put.ok ? put.revision : await this.#afterConflict(put, key, bytes, current?.revision, 'write', path)
    if (revision === 'lost') throw stale('write', path, 'file changed since it was read')
    const before = current?.bytes == null ? null : decodeTextOrNull(current.bytes)
    return {
      operation: current === undefined ? 'create' : 'update',
      version: versionOf(revision),
      before: before === null ? null : normalizeLf(before),
      after,
    }
  }

  async #edit(
    rel: string,
    path: string,
    edit: FsEditRequest,
    expected: { readonly version: FsVersion } | undefined,
    signal: AbortSignal | undefined,
    probe: S3ProbeResult,
  ): Promise<FsEditOutcome> {
    const key = this.#paths.objectKey(rel)
    for (let attempt = 1; ; attempt++) {
      const current = await this.#fetch(rel, path, signal, Infinity)
      if (current === undefined) {
        if (await this.#isDirectory(rel, signal)) throw notRegularFile('edit', path)
        throw stale('edit', path, 'file no longer exists')
      }
      if (expected !== undefined && versionOf(current.revision) !== expected.version) {
        throw stale('edit', path, 'file changed since it was read')
      }
      const result = editTextBytes(current.bytes ?? new Uint8Array(0), edit, path)
      throwIfAborted(signal, 'edit')
      const conditions = probe.replaceIfVersion ? { ifMatch: this.#ifMatch(current.revision.etag) } : undefined
      const put = await this.#store.put(key, result.bytes, conditions)
      const revision = put.ok ? put.revision : await this.#afterConflict(put, key, result.bytes, current.revision, 'edit', path)
      if (revision !== 'lost') return { version: versionOf(revision), before: result.before, after: result.after }
      // An unguarded edit that lost a race is redone on the new content; a guarded one is stale.
      if (expected !== undefined || attempt >= EDIT_ATTEMPTS) throw stale('edit', path, 'file changed while it was being edited')
    }
  }

  /**
   * After a conditional PUT was refused (412) or failed (409, 5xx): HEAD the key to learn
   * what happened. `'lost'` when another writer changed it first; the revision when it is our
   * own content from an earlier attempt that got no answer; an I/O error (retryable) when
   * nothing changed, so the failure was the server's, not a race.
   */
  async #afterConflict(
    conflict: PutConflict,
    key: string,
    bytes: Uint8Array,
    basis: Revision | undefined,
    verb: FsVerb,
    path: string,
  ): Promise<Revision | 'lost'> {
    const now = await this.#store.head(key)
    if (now !== undefined && conflict.unanswered && now.etag === md5Hex(bytes)) return now
    const unchanged = basis === undefined ? now === undefined : now !== undefined && versionOf(now) === versionOf(basis)
    if (!unchanged) return 'lost'
    throw new FsError('FS_IO_ERROR', `cannot ${verb} "${path}": the server failed a conditional write (status ${conflict.status}) and nothing changed`, {
      cause: conflict.error,
      retryable: true,
    })
  }

  /** Runs `fn` under the process-wide lock of the key unless the server enforces both conditions. */
  #serialized<T>(rel: string, probe: S3ProbeResult, fn: () => Promise<T>): Promise<T> {
    if (probe.createIfAbsent && probe.replaceIfVersion) return fn()
    return LOCKS.run(`${this.bucket}\0${this.#paths.objectKey(rel)}`, fn)
  }

  #assertFallbackAllowed(kind: FsWriteIntent['kind'], verb: FsVerb, path: string): void {
    if (!this.#requireAtomic) return
    const header = kind === 'createIfAbsent' ? 'If-None-Match: *' : 'If-Match'
    throw new FsError('FS_UNSUPPORTED', `cannot ${verb} "${path}": the server does not enforce ${header} and requireAtomicGuards is set`)
  }

  #ifMatch(etag: string): string {
    return this.#probed?.ifMatchForm === 'quoted' ? `"${etag}"` : etag
  }

  /** The relative path of a target that may be a file (the root never is). */
  #fileRel(target: FsTarget, verb: FsVerb): string {
    const rel = this.#paths.relOf(target, verb)
    if (rel === '') throw notRegularFile(verb, target.displayPath)
    return rel
  }

  async #info(rel: string, signal: AbortSignal | undefined): Promise<FsInfo | undefined> {
    if (rel === '') return { type: 'directory', version: DIRECTORY_VERSION }
    const revision = await this.#store.head(this.#paths.objectKey(rel), signal)
    if (revision !== undefined) return { type: 'file', version: versionOf(revision), size: revision.size }
    return (await this.#isDirectory(rel, signal)) ? { type: 'directory', version: DIRECTORY_VERSION } : undefined
  }

  #isDirectory(rel: string, signal: AbortSignal | undefined): Promise<boolean> {
    return this.#store.hasKeysUnder(this.#paths.childPrefix(rel), signal)
  }

  /** The error for a file that is not there: a directory, or `FS_NOT_FOUND`. */
  async #absent(rel: string, verb: FsVerb, path: string, signal: AbortSignal | undefined): Promise<FsError> {
    if (await this.#isDirectory(rel, signal)) return notRegularFile(verb, path)
    return new FsError('FS_NOT_FOUND', `cannot ${verb} "${path}": not found`)
  }

  /** One GET: the revision and, up to `maxBytes`, the content (`null` above it). */
  async #fetch(
    rel: string,
    path: string,
    signal: AbortSignal | undefined,
    maxBytes: number,
  ): Promise<{ revision: Revision; bytes: Uint8Array | null } | undefined> {
    const opened = await this.#store.open(this.#paths.objectKey(rel), signal)
    if (opened === undefined) return undefined
    const { revision, body } = opened
    if (revision.size > maxBytes) {
      body.destroy()
      return { revision, bytes: null }
    }
    const unsubscribe = abortBodyOn(body, signal)
    try {
      return { revision, bytes: await readBody(body, revision.size, path) }
    } finally {
      unsubscribe()
      body.destroy()
    }
  }
}
