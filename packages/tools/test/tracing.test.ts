/**
 * OpenTelemetry through the tools (issue 35): the read → edit → stale edit → move flow on memory
 * and local disk with the real SDK, and the layer's own rules (no SDK, absent paths, streams,
 * `paths: false`). S3 and SFTP run the same flow in the remote project.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { metrics, trace } from '@opentelemetry/api'
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { afterAll, describe, expect, it } from 'vitest'
import { LocalFileSystem } from '@seamfs/backend-local'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { EventedFileSystem, SandboxedFileSystem, toolCallWrapperOf, type FileSystem, type FsInfo } from '@seamfs/core'
import { FileSystemLayer, type ByteChunks, type FsTarget, type WriteRequest, type WriteResult } from '@seamfs/core/backend'
import { TracedFileSystem } from '@seamfs/core/opentelemetry'
import { createFileToolsByName, ObservationPolicy } from '@seamfs/tools'
import { assertTracedFlow, tracedFlow, useContextManager } from './tracing-flow.js'

class CollectedReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

function recorder() {
  const exporter = new InMemorySpanExporter()
  return { exporter, tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }) }
}

describe('TracedFileSystem through the tools, with the OpenTelemetry SDK', () => {
  const dirs: string[] = []
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
    trace.disable()
  })

  it('memory: a span per tool call, the store calls under it, errors by code, bytes and latency', async () => {
    assertTracedFlow(await tracedFlow(new MemoryFileSystem({ cwd: '/w' }), '/w'))
  })

  it('local disk: the same flow', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seamfs-traced-'))
    dirs.push(dir)
    assertTracedFlow(await tracedFlow(new LocalFileSystem({ cwd: dir }), dir))
  })

  it('with no SDK registered nothing is recorded and every call works; an SDK registered later is used', async () => {
    useContextManager()
    trace.disable()
    const fs = new TracedFileSystem(new MemoryFileSystem({ cwd: '/w', files: { 'a.txt': 'one\n' } }))
    const tools = createFileToolsByName({ fs, policy: new ObservationPolicy() })
    expect((await tools.read.execute({ file_path: 'a.txt' })).isError).toBe(false)
    expect((await tools.edit.execute({ file_path: 'a.txt', old_string: 'one', new_string: 'two' })).isError).toBe(false)
    const { exporter, tracerProvider } = recorder()
    trace.setGlobalTracerProvider(tracerProvider)
    try {
      expect((await tools.read.execute({ file_path: 'a.txt' })).text).toContain('two')
      expect(exporter.getFinishedSpans().map((s) => s.name)).toContain('execute_tool read')
    } finally {
      trace.disable()
    }
  })

  it('stat of an absent path is no failure; paths: false keeps every path out of the spans', async () => {
    const { exporter, tracerProvider } = recorder()
    const fs = new TracedFileSystem(new MemoryFileSystem({ cwd: '/w', files: { 'secret-name.txt': 'x' } }), { tracerProvider, paths: false, backend: 'mine' })
    expect(await fs.stat(await fs.resolve('/w/absent-name.txt'))).toBeUndefined()
    await fs.readText(await fs.resolve('/w/secret-name.txt'))
    const tools = createFileToolsByName({ fs, policy: false })
    await tools.read.execute({ file_path: 'secret-name.txt' })
    const spans = exporter.getFinishedSpans()
    const stat = spans.find((s) => s.attributes['seamfs.operation'] === 'stat')!
    expect(stat.attributes['seamfs.found']).toBe(false)
    expect(stat.status.code).not.toBe(2)
    expect(stat.attributes['seamfs.backend']).toBe('mine')
    expect(JSON.stringify(spans.map((s) => [s.name, s.attributes]))).not.toMatch(/secret-name|absent-name/)
  })

  it('a stream counts its bytes as read; one released before its first chunk still releases the store’s', async () => {
    let released = 0
    class Probe extends FileSystemLayer {
      protected override async openBytes(target: FsTarget, signal: AbortSignal | undefined): Promise<ByteChunks> {
        const chunks = await super.openBytes(target, signal)
        const inner = (chunks as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]?.() ?? (chunks as Iterable<Uint8Array>)[Symbol.iterator]()
        return {
          [Symbol.asyncIterator]: () => ({
            next: async () => inner.next(),
            return: async () => {
              released++
              return (await inner.return?.()) ?? { done: true as const, value: undefined }
            },
          }),
        }
      }
    }
    const memory = new MemoryFileSystem({ cwd: '/w', files: { 'big.txt': 'z'.repeat(200_000) } })
    const fs = new TracedFileSystem(new Probe(memory), { tracerProvider: recorder().tracerProvider })
    const target = await fs.resolve('/w/big.txt')
    let total = 0
    for await (const chunk of await fs.streamBytes(target)) total += chunk.length
    expect(total).toBe(200_000)
    // Opened, never read, let go: the store's stream is released, traced or not (core's streams do it).
    for (const over of [fs, new Probe(memory)]) {
      const before = released
      const stream = await over.streamBytes(await over.resolve('/w/big.txt'))
      await stream[Symbol.asyncIterator]().return?.()
      const text = await over.streamText(await over.resolve('/w/big.txt'))
      await text[Symbol.asyncIterator]().return?.()
      expect(released - before).toBe(2)
    }
  })

  it('a layer in the way changes nothing of the store: a write still goes to it with the fence it sends in one flight', async () => {
    // Stands in for S3 and SFTP, which take a sandbox's fence with the write instead of waiting for it first.
    class FenceProbe extends FileSystemLayer {
      fenced = 0
      protected override takesFence(): boolean {
        return true
      }
      protected override async publishBytes(target: FsTarget, bytes: Uint8Array, request: WriteRequest): Promise<WriteResult> {
        if (request.fence !== undefined) this.fenced++
        await request.fence
        return super.publishBytes(target, bytes, { ...request, fence: undefined })
      }
    }
    for (const layer of [
      (fs: FileSystem) => new TracedFileSystem(fs, { tracerProvider: recorder().tracerProvider }),
      (fs: FileSystem) => new EventedFileSystem(fs),
    ]) {
      const probe = new FenceProbe(new MemoryFileSystem({ cwd: '/w', files: { 'x.txt': '' } }))
      const fenced = new SandboxedFileSystem(layer(probe), { mode: 'workspace-write', workspaceRoot: '/w' })
      await fenced.writeText(await fenced.resolve('/w/a.txt'), 'hello')
      expect(probe.fenced).toBe(1)
    }
  })

  it('a store that never answers: its span ends with FS_ABORTED when the caller is told so, and is counted', async () => {
    class Frozen extends FileSystemLayer {
      protected override statTarget(): Promise<FsInfo | undefined> {
        return new Promise(() => undefined)
      }
      protected override publishBytes(): Promise<WriteResult> {
        return new Promise(() => undefined)
      }
    }
    const { exporter, tracerProvider } = recorder()
    const reader = new CollectedReader()
    const fs = new TracedFileSystem(new Frozen(new MemoryFileSystem({ cwd: '/w', files: { 'a.txt': 'a' } })), {
      tracerProvider,
      meterProvider: new MeterProvider({ readers: [reader] }),
    })
    const target = await fs.resolve('/w/a.txt')
    for (const call of [(signal: AbortSignal) => fs.stat(target, { signal }), (signal: AbortSignal) => fs.writeText(target, 'b', { signal })]) {
      const controller = new AbortController()
      const pending = call(controller.signal).catch((err: unknown) => err)
      controller.abort()
      expect(await pending).toMatchObject({ code: 'FS_ABORTED' })
    }
    await new Promise((resolve) => setTimeout(resolve, 60))
    const ended = exporter.getFinishedSpans().filter((s) => s.attributes['error.type'] === 'FS_ABORTED')
    expect(ended.map((s) => s.name).sort()).toEqual(['seamfs stat', 'seamfs write'])
    expect(ended.find((s) => s.name === 'seamfs write')?.attributes['seamfs.indeterminate']).toBe(true)
    const { resourceMetrics } = await reader.collect()
    const errors = resourceMetrics.scopeMetrics.flatMap((m) => m.metrics).filter((m) => m.descriptor.name === 'seamfs.operation.errors')
    expect(errors.flatMap((m) => m.dataPoints as { value: unknown }[]).reduce((n, p) => n + (p.value as number), 0)).toBe(2)
  })

  it('a meter provider registered after the layer was made gets its metrics', async () => {
    metrics.disable()
    const fs = new TracedFileSystem(new MemoryFileSystem({ cwd: '/w', files: { 'a.txt': 'a' } }))
    const reader = new CollectedReader()
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }))
    try {
      await fs.readText(await fs.resolve('/w/a.txt'))
      const { resourceMetrics } = await reader.collect()
      expect(resourceMetrics.scopeMetrics.flatMap((m) => m.metrics).map((m) => m.descriptor.name)).toContain('seamfs.operations')
    } finally {
      metrics.disable()
    }
  })

  it('tools over a store that is not traced have no wrapper', () => {
    expect(toolCallWrapperOf(new MemoryFileSystem())).toBeUndefined()
    const traced = new TracedFileSystem(new MemoryFileSystem())
    expect(toolCallWrapperOf(traced)).toBe(traced)
  })
})
