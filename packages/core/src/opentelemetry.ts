/**
 * `@seamfs/core/opentelemetry`: OpenTelemetry spans and metrics for any store, through
 * `@opentelemetry/api` (an optional peer dependency of `@seamfs/core`: only this entry needs it).
 * With no SDK registered the API answers with no-op tracers and meters: nothing is recorded.
 */
import {
  context,
  metrics,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Counter,
  type Histogram,
  type MeterProvider,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api'
import { ABORT_GRACE_MS } from './abort-wait.js'
import { isFsError, type FsVerb } from './errors.js'
import { currentActor, trackActors } from './events.js'
import type { FileSystem } from './file-system.js'
import type {
  Awaitable,
  ByteChunks,
  OpenedFile,
  ReadRequest,
  RemoveRequest,
  RenameRequest,
  TreePages,
  TreeRequest,
  UpdateRequest,
  WriteRequest,
  WriteResult,
} from './hooks.js'
import { FileSystemLayer } from './layer.js'
import { WRAP_TOOL_CALL, type ToolCall, type ToolCallAnswer, type ToolCallWrapper } from './tool-calls.js'
import { translateError } from './translate.js'
import type { FsDirEntry, FsInfo, FsPathInfo, FsRemoveOutcome, FsRenameOutcome, FsTarget, FsVersion } from './types.js'

/** The instrumentation scope of every tracer and meter this entry makes. */
export const INSTRUMENTATION_SCOPE = '@seamfs/core'

/**
 * The metrics {@link TracedFileSystem} records. Attributes: `seamfs.operation` and
 * `seamfs.backend` on each; `error.type` (the `FsError` code) on failures; `seamfs.io.direction`
 * (`read` or `write`) on bytes; `gen_ai.tool.name` on the tool metrics.
 */
export const TRACED_METRICS = Object.freeze({
  /** Store calls, by outcome (`seamfs.outcome`: `ok` or `error`). */
  operations: 'seamfs.operations',
  /** Store calls that failed, by `error.type`. */
  errors: 'seamfs.operation.errors',
  /** Duration of store calls, in seconds. */
  duration: 'seamfs.operation.duration',
  /** Bytes read and written (a stream's as its chunks are read). */
  bytes: 'seamfs.io.bytes',
  /** Tool calls, with `error.type` on failures. */
  toolCalls: 'seamfs.tool.calls',
  /** Duration of tool calls, in seconds. */
  toolDuration: 'seamfs.tool.duration',
})

/** Options of {@link TracedFileSystem}. */
export interface TracedOptions {
  /** Where spans go. Default: the global provider (`trace.getTracerProvider()`), looked up at each span, so an SDK registered later is used. */
  readonly tracerProvider?: TracerProvider | undefined
  /** Where metrics go. Default: the global provider (`metrics.getMeterProvider()`). */
  readonly meterProvider?: MeterProvider | undefined
  /** The `seamfs.backend` attribute. Default: the class name of the innermost store (`S3FileSystem`…). */
  readonly backend?: string | undefined
  /** `false` leaves `file.path` out of every span (paths are never in metrics). Default `true`. */
  readonly paths?: boolean | undefined
}

type Op = 'resolve' | 'stat' | 'lstat' | 'read' | 'stream' | 'open' | 'list' | 'list tree' | 'write' | 'edit' | 'remove' | 'rename' | 'create directory'

const VERB: Record<Op, FsVerb> = {
  resolve: 'resolve',
  stat: 'stat',
  lstat: 'lstat',
  read: 'read',
  stream: 'read',
  open: 'read',
  list: 'list',
  'list tree': 'list',
  write: 'write',
  edit: 'edit',
  remove: 'remove',
  rename: 'rename',
  'create directory': 'create directory',
}

interface Instruments {
  readonly provider: MeterProvider
  readonly operations: Counter
  readonly errors: Counter
  readonly duration: Histogram
  readonly bytes: Counter
  readonly toolCalls: Counter
  readonly toolDuration: Histogram
}

function instrumentsOf(provider: MeterProvider): Instruments {
  const meter = provider.getMeter(INSTRUMENTATION_SCOPE)
  return {
    provider,
    operations: meter.createCounter(TRACED_METRICS.operations, { description: 'Store calls', unit: '{call}' }),
    errors: meter.createCounter(TRACED_METRICS.errors, { description: 'Store calls that failed', unit: '{call}' }),
    duration: meter.createHistogram(TRACED_METRICS.duration, { description: 'Duration of store calls', unit: 's' }),
    bytes: meter.createCounter(TRACED_METRICS.bytes, { description: 'Bytes read from and written to the store', unit: 'By' }),
    toolCalls: meter.createCounter(TRACED_METRICS.toolCalls, { description: 'Tool calls', unit: '{call}' }),
    toolDuration: meter.createHistogram(TRACED_METRICS.toolDuration, { description: 'Duration of tool calls', unit: 's' }),
  }
}

const MUTATIONS: ReadonlySet<Op> = new Set(['write', 'edit', 'remove', 'rename', 'create directory'])

/** The most characters of a path a tool span carries (the model's own argument, of any length). */
const MAX_PATH_ATTRIBUTE = 1024

/**
 * Flushes the spans and metrics the global providers hold (a batching span processor, a periodic
 * metric reader), for a process about to exit; resolves also where there is nothing to flush.
 */
export async function flushTelemetry(): Promise<void> {
  const tracer = trace.getTracerProvider() as TracerProvider & { getDelegate?: () => TracerProvider }
  const providers = [tracer.getDelegate?.() ?? tracer, metrics.getMeterProvider()] as { forceFlush?: () => Promise<void> }[]
  await Promise.all(providers.map(async (p) => p.forceFlush?.().catch(() => undefined)))
}

/** The innermost store under `fs`'s layers. */
function storeOf(fs: FileSystem): FileSystem {
  let at = fs
  while (at instanceof FileSystemLayer) at = at.inner
  return at
}

// The iterators forward `return` as they are: releasing a stream before its first chunk (an abort
// while it opened) must still reach the store's iterator, which a generator never started would not.
function countedAsync(source: AsyncIterable<Uint8Array>, count: (bytes: number) => void): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
      const it = source[Symbol.asyncIterator]()
      return {
        async next() {
          const step = await it.next()
          if (step.done !== true) count(step.value.length)
          return step
        },
        async return(value?: unknown) {
          return (await it.return?.(value)) ?? { done: true, value: undefined }
        },
      }
    },
  }
}

function countedSync(source: Iterable<Uint8Array>, count: (bytes: number) => void): Iterable<Uint8Array> {
  return {
    [Symbol.iterator](): Iterator<Uint8Array> {
      const it = source[Symbol.iterator]()
      return {
        next() {
          const step = it.next()
          if (step.done !== true) count(step.value.length)
          return step
        },
        return(value?: unknown) {
          return it.return?.(value) ?? { done: true, value: undefined }
        },
      }
    },
  }
}

/**
 * A layer that traces every call to the store under it: a span per store call (`seamfs <operation>`,
 * with `seamfs.operation`, `seamfs.backend`, `file.path`, the bytes moved, the entries listed,
 * `error.type` and an error status on failure), and the metrics of {@link TRACED_METRICS}.
 * Tools made over it, at any depth (`createFileTools({ fs: traced })`), get a span per tool call
 * named as OpenTelemetry's GenAI conventions name one (`execute_tool <name>`, `gen_ai.tool.name`),
 * the parent of the store spans the call makes.
 *
 * Rules:
 * - a span is a store call: what the contract's public method asked the store for (an edit the
 *   store had to retry is a span per attempt); a call refused before it reaches the store (bad
 *   arguments, an abort before it began) has none; put the layer outside a sandbox to trace the
 *   fence's refusals too;
 * - a span ends when the store answers, or when the call's signal aborts (a read at once, a
 *   mutation after core's grace, flagged `seamfs.indeterminate`), whichever is first: a frozen
 *   store's calls are recorded as `FS_ABORTED` once the caller was told so;
 * - the layer changes nothing of the store's behaviour: it forwards fences (`takesFence`), tree
 *   listings and errors as they are; the global providers are looked up at each call, so an SDK
 *   registered after the layer was made is used (`flushTelemetry()` before a short-lived process
 *   exits, for batching processors);
 * - `stat` and `lstat` of an absent path are not failures (`seamfs.found: false`);
 * - a stream's span covers its opening; its bytes count in `seamfs.io.bytes` as they are read (a
 *   small file the store hands over whole, at its opening);
 * - no content is ever in a span or a metric: sizes, codes and paths only; a tool span holds no
 *   argument but the path and no text of the answer; an actor ({@link actingAs}) is named
 *   (`seamfs.actor`) only when it is a string;
 * - with no SDK registered every span and instrument is the API's no-op; without this layer nothing
 *   is traced at all (measured in `bench/src/events.ts`).
 */
export class TracedFileSystem extends FileSystemLayer implements ToolCallWrapper {
  readonly #tracerProvider: TracerProvider | undefined
  readonly #meterProvider: MeterProvider | undefined
  readonly #backend: string
  readonly #paths: boolean
  /** The instruments, made from the provider they were made for (the global one may be set after this layer is made). */
  #instruments: Instruments | undefined

  /** Reads go to the store as they are: its `keyBoundReads` holds here too. */
  protected override readsThrough(): boolean {
    return true
  }

  constructor(inner: FileSystem, options: TracedOptions = {}) {
    super(inner)
    trackActors()
    this.#tracerProvider = options.tracerProvider
    this.#meterProvider = options.meterProvider
    this.#backend = options.backend ?? storeOf(inner).constructor.name
    this.#paths = options.paths !== false
  }

  get #tracer(): Tracer {
    return (this.#tracerProvider ?? trace.getTracerProvider()).getTracer(INSTRUMENTATION_SCOPE)
  }

  /** The instruments of the meter provider in force (`@opentelemetry/api` has no proxy for one set later). */
  get #metrics(): Instruments {
    const provider = this.#meterProvider ?? metrics.getMeterProvider()
    if (this.#instruments?.provider !== provider) this.#instruments = instrumentsOf(provider)
    return this.#instruments
  }

  // The fence of a write goes on to the store, as it would without this layer (S3 and SFTP send the write with the fence's check).
  protected override takesFence(): boolean {
    return this.innerTakesFence()
  }

  /** Runs one tool call in its span (see the class's rules); the tools call it. */
  async [WRAP_TOOL_CALL]<R extends ToolCallAnswer>(call: ToolCall, run: () => Promise<R>): Promise<R> {
    const attributes: Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': call.tool,
      'gen_ai.tool.type': 'function',
      'seamfs.backend': this.#backend,
    }
    if (this.#paths && call.path !== undefined) attributes['file.path'] = call.path.slice(0, MAX_PATH_ATTRIBUTE)
    const actor = currentActor()
    if (typeof actor === 'string') attributes['seamfs.actor'] = actor
    const span = this.#tracer.startSpan(`execute_tool ${call.tool}`, { kind: SpanKind.INTERNAL, attributes })
    const started = performance.now()
    const metric: Attributes = { 'gen_ai.tool.name': call.tool }
    try {
      const answer = await context.with(trace.setSpan(context.active(), span), run)
      if (answer.isError) {
        const code = answer.code ?? '_OTHER'
        span.setAttribute('error.type', code)
        span.setStatus({ code: SpanStatusCode.ERROR, message: code })
        metric['error.type'] = code
      }
      return answer
    } catch (err) {
      // The tools never throw; a wrapper still closes its span if something under it does.
      span.setAttribute('error.type', '_OTHER')
      span.setStatus({ code: SpanStatusCode.ERROR })
      metric['error.type'] = '_OTHER'
      throw err
    } finally {
      span.end()
      const { toolCalls, toolDuration } = this.#metrics
      toolCalls.add(1, metric)
      toolDuration.record((performance.now() - started) / 1000, metric)
    }
  }

  /**
   * Runs one store call in its span; `done` adds what the answer tells (bytes, entries). The span
   * ends when the store answers, or when `signal` aborts (`FS_ABORTED`: core has told the caller so,
   * and a frozen store may never answer), whichever comes first.
   */
  async #traced<T>(op: Op, path: string, signal: AbortSignal | undefined, run: () => Awaitable<T>, done?: (result: T, span: Span) => void): Promise<T> {
    const attributes: Attributes = { 'seamfs.operation': op, 'seamfs.backend': this.#backend }
    if (this.#paths) attributes['file.path'] = path
    const actor = currentActor()
    if (typeof actor === 'string') attributes['seamfs.actor'] = actor
    const span = this.#tracer.startSpan(`seamfs ${op}`, { kind: SpanKind.INTERNAL, attributes }, context.active())
    const started = performance.now()
    let ended = false
    const end = (code: string | undefined, found = true): void => {
      if (ended) return
      ended = true
      const metric: Attributes = { 'seamfs.operation': op, 'seamfs.backend': this.#backend, 'seamfs.outcome': code === undefined ? 'ok' : 'error' }
      if (!found) span.setAttribute('seamfs.found', false)
      if (code !== undefined) {
        span.setAttribute('error.type', code)
        span.setStatus({ code: SpanStatusCode.ERROR, message: code })
        metric['error.type'] = code
      }
      span.end()
      const instruments = this.#metrics
      if (code !== undefined) instruments.errors.add(1, { 'seamfs.operation': op, 'seamfs.backend': this.#backend, 'error.type': code })
      instruments.operations.add(1, metric)
      instruments.duration.record((performance.now() - started) / 1000, metric)
    }
    // A read fails at the abort; a mutation is given ABORT_GRACE_MS to answer, then fails `indeterminate` (core's rule).
    const mutation = MUTATIONS.has(op)
    let grace: ReturnType<typeof setTimeout> | undefined
    const aborted = (): void => {
      if (!mutation) return end('FS_ABORTED')
      grace = setTimeout(() => {
        if (!ended) span.setAttribute('seamfs.indeterminate', true)
        end('FS_ABORTED')
      }, ABORT_GRACE_MS + 5)
      grace.unref?.()
    }
    if (signal?.aborted === true) aborted()
    else signal?.addEventListener('abort', aborted, { once: true })
    try {
      const result = await run()
      if (!ended) done?.(result, span)
      end(undefined)
      return result
    } catch (err) {
      const error = isFsError(err) ? err : translateError(err, VERB[op], path, (e) => this.errorRow(e))
      if (error.code === 'FS_NOT_FOUND' && (op === 'stat' || op === 'lstat')) end(undefined, false)
      else {
        if (!ended && error.retryable) span.setAttribute('seamfs.retryable', true)
        if (!ended && error.indeterminate) span.setAttribute('seamfs.indeterminate', true)
        end(error.code)
      }
      throw err
    } finally {
      signal?.removeEventListener('abort', aborted)
      if (grace !== undefined) clearTimeout(grace)
    }
  }

  #moved(op: Op, direction: 'read' | 'write', bytes: number, span: Span | undefined): void {
    span?.setAttribute('seamfs.bytes', bytes)
    this.#metrics.bytes.add(bytes, { 'seamfs.operation': op, 'seamfs.backend': this.#backend, 'seamfs.io.direction': direction })
  }

  /** `chunks`, counting their bytes in the bytes metric as they are read. */
  #counted(op: Op, chunks: ByteChunks): ByteChunks {
    if (Array.isArray(chunks)) {
      const held = chunks as readonly Uint8Array[]
      this.#moved(
        op,
        'read',
        held.reduce((sum, c) => sum + c.length, 0),
        undefined,
      )
      return held
    }
    const count = (bytes: number): void => this.#moved(op, 'read', bytes, undefined)
    return Symbol.asyncIterator in chunks ? countedAsync(chunks, count) : countedSync(chunks, count)
  }

  protected override resolvePath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Awaitable<FsTarget> {
    return this.#traced('resolve', path, signal, () => super.resolvePath(path, cwd, signal))
  }

  protected override statTarget(target: FsTarget, signal: AbortSignal | undefined): Awaitable<FsInfo | undefined> {
    return this.#traced(
      'stat',
      target.displayPath,
      signal,
      () => super.statTarget(target, signal),
      (info, span) => span.setAttribute('seamfs.found', info !== undefined),
    )
  }

  protected override lstatPath(path: string, cwd: string | undefined, signal: AbortSignal | undefined): Awaitable<FsPathInfo | undefined> {
    return this.#traced(
      'lstat',
      path,
      signal,
      () => super.lstatPath(path, cwd, signal),
      (info, span) => span.setAttribute('seamfs.found', info !== undefined),
    )
  }

  protected override loadBytes(target: FsTarget, request: ReadRequest): Awaitable<Uint8Array> {
    return this.#traced(
      'read',
      target.displayPath,
      request.signal,
      () => super.loadBytes(target, request),
      (bytes, span) => this.#moved('read', 'read', bytes.length, span),
    )
  }

  protected override openBytes(target: FsTarget, signal: AbortSignal | undefined): Awaitable<ByteChunks> {
    return this.#traced('stream', target.displayPath, signal, async () => this.#counted('stream', await super.openBytes(target, signal)))
  }

  protected override openTarget(target: FsTarget, signal: AbortSignal | undefined): Awaitable<OpenedFile> {
    return this.#traced(
      'open',
      target.displayPath,
      signal,
      async () => {
        const opened = await super.openTarget(target, signal)
        return { info: opened.info, chunks: this.#counted('open', opened.chunks) }
      },
      (opened, span) => {
        if (opened.info.size !== undefined) span.setAttribute('file.size', opened.info.size)
      },
    )
  }

  protected override listEntries(target: FsTarget, signal: AbortSignal | undefined): Awaitable<FsDirEntry[]> {
    return this.#traced(
      'list',
      target.displayPath,
      signal,
      () => super.listEntries(target, signal),
      (entries, span) => span.setAttribute('seamfs.entries', entries.length),
    )
  }

  // Forwarded, not walked: a traced S3 store keeps its one-request-per-page prefix listing.
  protected override listSubtree(target: FsTarget, request: TreeRequest): Awaitable<TreePages> {
    return this.#traced('list tree', target.displayPath, request.signal, () => this.innerListSubtree(target, request))
  }

  protected override publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Awaitable<WriteResult> {
    return this.#traced(
      'write',
      target.displayPath,
      request.signal,
      () => super.publishBytes(target, bytes, request),
      (result, span) => {
        span.setAttribute('seamfs.created', result.created)
        this.#moved('write', 'write', bytes.length, span)
      },
    )
  }

  protected override updateBytes(target: FsTarget, request: UpdateRequest, transform: (bytes: Uint8Array) => Uint8Array): Awaitable<FsVersion> {
    let written: number | undefined
    const measured = (bytes: Uint8Array): Uint8Array => {
      const next = transform(bytes)
      written = next.length
      return next
    }
    return this.#traced(
      'edit',
      target.displayPath,
      request.signal,
      () => super.updateBytes(target, request, measured),
      (_version, span) => {
        if (written !== undefined) this.#moved('edit', 'write', written, span)
      },
    )
  }

  protected override removeTarget(target: FsTarget, request: RemoveRequest): Awaitable<FsRemoveOutcome> {
    return this.#traced(
      'remove',
      target.displayPath,
      request.signal,
      () => super.removeTarget(target, request),
      (outcome, span) => span.setAttribute('seamfs.entries', outcome.entries),
    )
  }

  protected override renameTarget(from: FsTarget, to: FsTarget, request: RenameRequest): Awaitable<FsRenameOutcome> {
    return this.#traced(
      'rename',
      from.displayPath,
      request.signal,
      () => super.renameTarget(from, to, request),
      (outcome, span) => {
        if (this.#paths) span.setAttribute('seamfs.rename.to', to.displayPath)
        span.setAttribute('seamfs.replaced', outcome.replaced)
      },
    )
  }

  protected override renameInPlace(target: FsTarget, request: RenameRequest): Awaitable<FsRenameOutcome> {
    return this.#traced('rename', target.displayPath, request.signal, () => super.renameInPlace(target, request))
  }

  protected override makeDirectory(target: FsTarget, signal: AbortSignal | undefined): Awaitable<boolean> {
    return this.#traced(
      'create directory',
      target.displayPath,
      signal,
      () => super.makeDirectory(target, signal),
      (created, span) => span.setAttribute('seamfs.created', created),
    )
  }
}
