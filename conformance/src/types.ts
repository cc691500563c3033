import type { FileSystem, FsLimits } from '@seamfs/core'

/** One fresh, empty filesystem under test, and how to dispose of it. */
export interface ConformanceSubject<F extends FileSystem = FileSystem> {
  /** The filesystem; its default cwd is an empty directory the tests own. */
  readonly fs: F
  /** Releases the store (deletes the temp dir, the bucket prefix…) and closes `fs`. */
  readonly dispose?: (() => Promise<void> | void) | undefined
}

/**
 * Hooks that change the store behind the filesystem's back. Each unlocks the
 * tests that need it (invalid bytes on disk, external same-size rewrites,
 * symlinks); without it those tests are skipped, and their title says so.
 * Paths are relative to the filesystem's default cwd, with `/` separators.
 */
export interface ExternalHooks<F extends FileSystem = FileSystem> {
  /** Writes raw bytes at `path`, in place where the store allows it (creating parents). */
  readonly writeBytes?: ((subject: ConformanceSubject<F>, path: string, bytes: Uint8Array) => Promise<void> | void) | undefined
  /** Reads the raw stored bytes at `path` (to check a BOM survived, say). */
  readonly readBytes?: ((subject: ConformanceSubject<F>, path: string) => Promise<Uint8Array> | Uint8Array) | undefined
  /** Deletes the file at `path`. */
  readonly remove?: ((subject: ConformanceSubject<F>, path: string) => Promise<void> | void) | undefined
  /** Makes `path` a symlink whose text is `target` (relative to the link's directory), creating parents. */
  readonly symlink?: ((subject: ConformanceSubject<F>, path: string, target: string) => Promise<void> | void) | undefined
  /** Sets the permission bits of the file at `path` (where `capabilities.permissions`). */
  readonly chmod?: ((subject: ConformanceSubject<F>, path: string, mode: number) => Promise<void> | void) | undefined
  /** The permission bits (`mode & 0o777`) of the file at `path`. */
  readonly mode?: ((subject: ConformanceSubject<F>, path: string) => Promise<number> | number) | undefined
}

/**
 * How to open the subject's store from another process: unlocks the cross-instance race clauses,
 * which prove that guards declared `'atomic'` or `'seamfs'` hold between processes (racing child
 * processes, each with its own instance), not only between calls of one instance.
 */
export interface CrossProcessHook<F extends FileSystem = FileSystem> {
  /**
   * A module plain `node` can import (built JavaScript; a `file:` URL) exporting `open(descriptor)`
   * (or a default function) that returns (a promise of) a filesystem on the store `descriptor`
   * names, its default cwd the subject's.
   */
  readonly module: string
  /** What a child needs to open the subject's store: JSON (a directory, a bucket and prefix, server coordinates). */
  readonly descriptor: (subject: ConformanceSubject<F>) => unknown
}

/** Tuning of the kit; every field has a default. */
export interface ConformanceTuning {
  /** Runs of the model-based test (default 100; cheap backends take more, remote ones fewer). */
  readonly modelRuns?: number | undefined
  /** Seed of the model-based test and the generative ones (default {@link DEFAULT_MODEL_SEED}); fixed so CI is repeatable. */
  readonly modelSeed?: number | undefined
  /** Runs of each generative test (paths, names, contents, guards drawn from their grammars; default 25). */
  readonly generativeRuns?: number | undefined
  /** Size of the streamed large file (default 20 MiB). */
  readonly largeFileBytes?: number | undefined
  /** Size of each of the two contents of the atomicity test (default 1 MiB). */
  readonly atomicityBytes?: number | undefined
  /** Writes of the atomicity test (default 100). */
  readonly atomicityWrites?: number | undefined
  /** Concurrent guarded writers of the CAS races (default 16). */
  readonly raceWriters?: number | undefined
  /**
   * Per-test timeout in ms (default {@link DEFAULT_TIMEOUT_MS}); a test past it fails with
   * "timed out". The CLI's `--timeout` overrides it.
   */
  readonly timeoutMs?: number | undefined
}

/** What the kit asks of a factory. */
export interface CreateContext {
  /** Size limits the filesystem must be built with (absent: the backend's defaults). */
  readonly limits?: FsLimits | undefined
}

/** What {@link describeConformance} takes. */
export interface ConformanceOptions<F extends FileSystem = FileSystem> {
  /** Shown in the suite title. */
  readonly name: string
  /**
   * Returns a fresh, empty filesystem. Called once per test (and per model run). When the
   * context has `limits`, pass them to the backend's constructor (every backend takes
   * core's `FsLimits`): the size-limit clause checks that they are honoured.
   */
  readonly create: (context: CreateContext) => Promise<ConformanceSubject<F>> | ConformanceSubject<F>
  readonly external?: ExternalHooks<F> | undefined
  /** Opens the subject's store in other processes, for the cross-instance race clauses (absent: skipped). */
  readonly crossProcess?: CrossProcessHook<F> | undefined
  readonly options?: ConformanceTuning | undefined
}

export const DEFAULT_MODEL_SEED = 20261130

/** The default of {@link ConformanceTuning.modelRuns}. */
export const DEFAULT_MODEL_RUNS = 100

/** The default of {@link ConformanceTuning.generativeRuns}. */
export const DEFAULT_GENERATIVE_RUNS = 25

/** The per-test timeout when neither `options.timeoutMs` nor the CLI's `--timeout` sets one. */
export const DEFAULT_TIMEOUT_MS = 60_000
