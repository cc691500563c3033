import { describe, expect, inject, it } from 'vitest'
import { isFsError } from '@seamfs/core'
import { SftpFileSystem } from '@seamfs/backend-ssh'
import { CuttingProxy, suiteBehindProxy } from './proxy.js'
import { RawSftp } from './raw.js'

const server = inject('sftp')
const MiB = 1024 * 1024

async function failure(operation: Promise<unknown>): Promise<unknown> {
  try {
    await operation
  } catch (err) {
    return err
  }
  throw new Error('the operation succeeded')
}

describe.skipIf(server === null)(`fault injection: a TCP proxy cuts the connection${server === null ? ` (skipped: ${inject('sftpWhy')})` : ''}`, () => {
  let proxy: CuttingProxy
  let raw: RawSftp
  let root: string
  let fs: SftpFileSystem
  suiteBehindProxy(server, 'faults-', (suite) => ({ proxy, raw, root, fs } = suite))

  it('mid-write: FS_IO_ERROR (retryable), the old file intact, no temp file, the next call reconnects', async () => {
    const target = await fs.resolve('big.txt')
    await fs.writeText(target, 'old content\n')
    const before = proxy.connections
    proxy.cutAfter('up', 2 * MiB)
    const err = await failure(fs.writeText(target, 'x'.repeat(16 * MiB)))
    expect(isFsError(err, 'FS_IO_ERROR') && err.retryable).toBe(true)
    // Cut while the temp file was written, before the rename was sent: a definite failure.
    expect(isFsError(err) && err.indeterminate).toBe(false)
    expect(proxy.cuts).toBe(1)
    expect((await raw.read(`${root}/big.txt`)).toString()).toBe('old content\n')
    expect((await fs.listDir(await fs.resolve('.'))).map((e) => e.name)).toEqual(['big.txt'])
    expect(await fs.readText(target)).toBe('old content\n')
    expect(proxy.connections).toBe(before + 1)
    // The interrupted write's temp file was removed over the new connection.
    expect(await raw.names(root)).toEqual(['big.txt'])
  })

  it('mid-read: the read is sent again over a new connection and succeeds', async () => {
    const text = 'y'.repeat(12 * MiB)
    await raw.writeInPlace(`${root}/read.txt`, Buffer.from(text))
    const target = await fs.resolve('read.txt')
    const [before, cuts] = [proxy.connections, proxy.cuts]
    proxy.cutAfter('down', 3 * MiB)
    const again = await fs.readText(target)
    expect(proxy.cuts - cuts).toBe(1)
    expect(again.length).toBe(text.length)
    expect(again === text).toBe(true)
    expect(proxy.connections).toBe(before + 1)
  })

  it('mid-read, cut on every attempt: FS_IO_ERROR (retryable) after 2 retries; then the next read succeeds', async () => {
    const text = 'w'.repeat(8 * MiB)
    await raw.writeInPlace(`${root}/cut3.txt`, Buffer.from(text))
    const target = await fs.resolve('cut3.txt')
    const [connections, cuts] = [proxy.connections, proxy.cuts]
    proxy.cutAfter('down', 2 * MiB, 3)
    const err = await failure(fs.readText(target))
    expect(isFsError(err, 'FS_IO_ERROR') && err.retryable).toBe(true)
    expect(proxy.cuts - cuts).toBe(3)
    expect(proxy.connections - connections).toBe(2)
    expect((await fs.readText(target)) === text).toBe(true)
  })

  it('mid-stream: the iterator throws FS_IO_ERROR (retryable); a new stream succeeds', async () => {
    await raw.writeInPlace(`${root}/stream.txt`, Buffer.alloc(6 * MiB, 0x7a))
    const target = await fs.resolve('stream.txt')
    const stream = await fs.streamText(target)
    proxy.cutAfter('down', 1 * MiB)
    const err = await failure(
      (async () => {
        for await (const chunk of stream) void chunk
      })(),
    )
    expect(isFsError(err, 'FS_IO_ERROR') && err.retryable).toBe(true)
    let length = 0
    for await (const chunk of await fs.streamText(target)) length += chunk.length
    expect(length).toBe(6 * MiB)
  })

  it('mid-edit: the old file intact, no temp file, then the edit succeeds', async () => {
    const body = 'z'.repeat(8 * MiB)
    const target = await fs.resolve('edit.txt')
    const { version } = await fs.writeText(target, `MARK\n${body}`)
    proxy.cutAfter('up', 1 * MiB)
    const err = await failure(fs.editText(target, { oldString: 'MARK', newString: 'DONE', replaceAll: false }, { expected: { version } }))
    expect(isFsError(err, 'FS_IO_ERROR') && err.retryable).toBe(true)
    expect(isFsError(err) && err.indeterminate).toBe(false)
    expect((await fs.stat(target))?.version).toBe(version)
    const outcome = await fs.editText(target, { oldString: 'MARK', newString: 'DONE', replaceAll: false }, { expected: { version } })
    expect(outcome.after.startsWith('DONE\n')).toBe(true)
    expect((await raw.names(root)).filter((n) => n.startsWith('.seamfs-tmp-'))).toEqual([])
  })

  it('an idle connection that dropped is replaced transparently: the next call just works', async () => {
    const target = await fs.resolve('idle.txt')
    await fs.writeText(target, 'before the drop')
    const before = proxy.connections
    proxy.cutAll()
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(await fs.readText(target)).toBe('before the drop')
    await fs.writeText(target, 'after the drop')
    expect(proxy.connections).toBe(before + 1)
  })
})
