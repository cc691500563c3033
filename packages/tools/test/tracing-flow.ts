/**
 * The traced flow of issue 35, shared by every backend's test: read → edit → stale edit → read →
 * move through `createFileTools` over a `TracedFileSystem`, with the real OpenTelemetry SDK
 * (in-memory span exporter, a metric reader collected on demand). Another writer changes the file
 * between the two edits through the bare store, so the second edit is refused by its guard.
 */
import { context } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { MeterProvider, MetricReader, type DataPoint, type Histogram, type MetricData } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import type { FileSystem } from '@seamfs/core'
import { TracedFileSystem } from '@seamfs/core/opentelemetry'
import { createFileToolsByName, ObservationPolicy } from '@seamfs/tools'
import { expect } from 'vitest'

class CollectedReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

let contextManager: AsyncLocalStorageContextManager | undefined

/** Spans reach their parents only through a context manager; the SDK's Node setup registers this one. */
export function useContextManager(): void {
  if (contextManager !== undefined) return
  contextManager = new AsyncLocalStorageContextManager().enable()
  context.setGlobalContextManager(contextManager)
}

export interface Recorded {
  readonly spans: ReadableSpan[]
  readonly metrics: MetricData[]
  readonly backend: string
}

/** What no span may hold: the file's content. */
export const CONTENT_MARK = 'CONTENT-MARK-7f3a'

/**
 * Runs the flow on `store` (the untraced store the other writer uses too), in `dir` of it, and
 * returns what the SDK recorded. `cwd` is the tools' workspace (a directory of the store).
 */
export async function tracedFlow(store: FileSystem, dir: string): Promise<Recorded> {
  useContextManager()
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const reader = new CollectedReader()
  const meterProvider = new MeterProvider({ readers: [reader] })
  const traced = new TracedFileSystem(store, { tracerProvider, meterProvider })
  const tools = createFileToolsByName({ fs: traced, policy: new ObservationPolicy(), cwd: dir })
  const file = `${dir.replace(/\/$/, '')}/notes.txt`
  await store.writeText(await store.resolve(file), `alpha ${CONTENT_MARK}\nsecond line\n`)

  const session = { agent: 'traced' }
  const call = async (name: keyof typeof tools, args: Record<string, unknown>) =>
    (tools[name] as { execute: (a: unknown, c: object) => Promise<{ isError: boolean; code?: string }> }).execute(args, { session })
  expect((await call('read', { file_path: 'notes.txt' })).isError).toBe(false)
  expect((await call('edit', { file_path: 'notes.txt', old_string: 'alpha', new_string: 'beta' })).isError).toBe(false)
  await store.writeText(await store.resolve(file), `changed underneath ${CONTENT_MARK}\nsecond line\n`)
  const stale = await call('edit', { file_path: 'notes.txt', old_string: 'second', new_string: 'third' })
  expect(stale.code).toBe('FS_STALE_VERSION')
  expect((await call('read', { file_path: 'notes.txt' })).isError).toBe(false)
  expect((await call('move', { source_path: 'notes.txt', destination_path: 'moved.txt' })).isError).toBe(false)

  await tracerProvider.forceFlush()
  const { resourceMetrics } = await reader.collect()
  return { spans: exporter.getFinishedSpans(), metrics: resourceMetrics.scopeMetrics.flatMap((s) => s.metrics), backend: store.constructor.name }
}

const attr = (span: ReadableSpan, key: string): unknown => span.attributes[key]
const points = (metrics: readonly MetricData[], name: string): DataPoint<number | Histogram>[] =>
  metrics.filter((m) => m.descriptor.name === name).flatMap((m) => m.dataPoints as DataPoint<number | Histogram>[])
const sum = (ps: readonly DataPoint<number | Histogram>[]): number => ps.reduce((n, p) => n + (typeof p.value === 'number' ? p.value : p.value.count), 0)

/** The assertions every backend must meet. */
export function assertTracedFlow({ spans, metrics, backend }: Recorded): void {
  const toolSpans = spans.filter((s) => attr(s, 'gen_ai.operation.name') === 'execute_tool')
  expect(toolSpans.map((s) => s.name)).toEqual(['execute_tool read', 'execute_tool edit', 'execute_tool edit', 'execute_tool read', 'execute_tool move'])
  const [read, edit, staleEdit, , move] = toolSpans as [ReadableSpan, ReadableSpan, ReadableSpan, ReadableSpan, ReadableSpan]
  expect(attr(read, 'file.path')).toBe('notes.txt')
  expect(attr(read, 'gen_ai.tool.name')).toBe('read')
  expect(read.status.code).not.toBe(2)
  expect(attr(staleEdit, 'error.type')).toBe('FS_STALE_VERSION')
  expect(staleEdit.status).toEqual({ code: 2, message: 'FS_STALE_VERSION' })

  // Every store span is the child of a tool span, in its trace; each tool span has its own trace.
  const byId = new Map(toolSpans.map((s) => [s.spanContext().spanId, s]))
  const storeSpans = spans.filter((s) => attr(s, 'seamfs.operation') !== undefined)
  expect(storeSpans.length).toBeGreaterThan(toolSpans.length)
  for (const span of storeSpans) {
    const parent = byId.get(span.parentSpanContext?.spanId ?? '')
    expect(parent, `${span.name} has a tool span as its parent`).toBeDefined()
    expect(span.spanContext().traceId).toBe(parent!.spanContext().traceId)
    expect(attr(span, 'seamfs.backend')).toBe(backend)
    expect(span.name).toBe(`seamfs ${String(attr(span, 'seamfs.operation'))}`)
  }
  const children = (tool: ReadableSpan) => storeSpans.filter((s) => s.parentSpanContext?.spanId === tool.spanContext().spanId)
  const ops = (tool: ReadableSpan) => children(tool).map((s) => attr(s, 'seamfs.operation'))

  const reads = children(read).filter((s) => ['read', 'open', 'stream'].includes(String(attr(s, 'seamfs.operation'))))
  expect(reads.length, `read's store calls: ${ops(read).join(', ')}`).toBeGreaterThan(0)
  const storeEdit = children(edit).find((s) => attr(s, 'seamfs.operation') === 'edit')
  expect(storeEdit, `edit's store calls: ${ops(edit).join(', ')}`).toBeDefined()
  expect(attr(storeEdit!, 'seamfs.bytes')).toBe(Buffer.byteLength(`beta ${CONTENT_MARK}\nsecond line\n`))
  const refused = children(staleEdit).find((s) => attr(s, 'error.type') === 'FS_STALE_VERSION')
  expect(refused, `the stale edit's store calls: ${ops(staleEdit).join(', ')}`).toBeDefined()
  expect(refused!.status.code).toBe(2)
  const rename = children(move).find((s) => attr(s, 'seamfs.operation') === 'rename')
  expect(rename, `move's store calls: ${ops(move).join(', ')}`).toBeDefined()
  expect(String(attr(rename!, 'seamfs.rename.to'))).toMatch(/moved\.txt$/)
  expect(attr(rename!, 'seamfs.replaced')).toBe(false)

  // No content anywhere: not in a span's name, attributes or status.
  for (const span of spans) expect(JSON.stringify([span.name, span.attributes, span.status, span.events])).not.toContain(CONTENT_MARK)

  // Metrics: calls, errors by code, bytes, latency.
  const toolCalls = points(metrics, 'seamfs.tool.calls')
  expect(sum(toolCalls)).toBe(5)
  expect(sum(toolCalls.filter((p) => p.attributes['error.type'] === 'FS_STALE_VERSION' && p.attributes['gen_ai.tool.name'] === 'edit'))).toBe(1)
  expect(sum(points(metrics, 'seamfs.tool.duration'))).toBe(5)
  const errors = points(metrics, 'seamfs.operation.errors')
  expect(sum(errors.filter((p) => p.attributes['error.type'] === 'FS_STALE_VERSION' && p.attributes['seamfs.operation'] === 'edit'))).toBe(1)
  expect(sum(points(metrics, 'seamfs.operations'))).toBe(storeSpans.length)
  expect(sum(points(metrics, 'seamfs.operation.duration'))).toBe(storeSpans.length)
  const bytes = points(metrics, 'seamfs.io.bytes')
  expect(sum(bytes.filter((p) => p.attributes['seamfs.io.direction'] === 'write'))).toBeGreaterThanOrEqual(
    Buffer.byteLength(`beta ${CONTENT_MARK}\nsecond line\n`),
  )
  expect(sum(bytes.filter((p) => p.attributes['seamfs.io.direction'] === 'read'))).toBeGreaterThan(0)
  for (const m of metrics) for (const p of m.dataPoints) expect(JSON.stringify(p.attributes)).not.toMatch(/notes\.txt|moved\.txt/)
}
