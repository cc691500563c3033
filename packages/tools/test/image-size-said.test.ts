/**
 * An image found past the image limit while its chunks were read says no size it has not seen: a
 * layer may report a `stat` size below the bytes it hands out (it changes content), and "the image
 * (10 bytes) exceeds the 15-byte limit" would contradict itself. Read whole at the open, the size
 * said is the bytes'.
 */
import { describe, expect, it } from 'vitest'
import type { FsTarget } from '@seamfs/core'
import { FileSystemLayer, type OpenedFile } from '@seamfs/core/backend'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { createFileToolsByName } from '@seamfs/tools'

const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 1, 2, 3, 4])

/** Reports half the size, and hands the chunks on one at a time (nothing held at the open) unless `held`. */
class Understating extends FileSystemLayer {
  constructor(
    inner: MemoryFileSystem,
    private readonly held: boolean,
  ) {
    super(inner)
  }

  protected override async openTarget(target: FsTarget, signal: AbortSignal | undefined): Promise<OpenedFile> {
    const opened = await super.openTarget(target, signal)
    const info = { ...opened.info, size: Math.floor((opened.info.size ?? 0) / 2) }
    if (this.held) return { info, chunks: opened.chunks }
    const chunks = opened.chunks
    async function* streamed(): AsyncGenerator<Uint8Array> {
      for await (const chunk of chunks) yield chunk
    }
    return { info, chunks: streamed() }
  }
}

describe('an image past the limit, its size understated by the store', () => {
  it.each([false, true])('says only a size it saw (held at the open: %s)', async (held) => {
    const inner = new MemoryFileSystem({ cwd: '/w', files: { 'a.png': PNG } })
    const tools = createFileToolsByName({ fs: new Understating(inner, held), cwd: '/w', config: { readImageMaxBytes: 15 } })
    const result = await tools.read.execute({ file_path: 'a.png' })
    expect(result.code).toBe('FS_TOO_LARGE')
    expect(result.text).toContain('exceeds the 15-byte limit')
    expect(result.text).not.toContain('(10 bytes)')
  })
})
