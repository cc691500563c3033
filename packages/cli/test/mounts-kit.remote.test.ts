/**
 * The whole conformance kit on a mount table with the remote stores mounted: memory at `/`, an S3
 * prefix (radosgw, unversioned bucket) at `/s3`, an SFTP root (sshd) at `/sftp`. One run has its cwd
 * in `/s3/work`, one in `/sftp/work`, so the kit exercises each remote store through the mount layer.
 * The external hooks are each backend's own, composed by mount: a path goes to the hooks of the store
 * it routes to, with the path inside that store.
 */
import { afterAll, describe, inject, it } from 'vitest'
import { S3FileSystem } from '@seamfs/backend-s3'
import { SftpFileSystem } from '@seamfs/backend-ssh'
import { MemoryFileSystem } from '@seamfs/backend-memory'
import { memoryConformance } from '@seamfs/backend-memory/conformance'
import { MountFileSystem, type FileSystem } from '@seamfs/core'
import { describeConformance, externalByMount, type ConformanceTuning, type ExternalHooks } from '@seamfs/conformance'
import { conformanceOptions } from '../../backend-s3/test/support.js'
import { RawSftp } from '../../backend-ssh/test/raw.js'
import type { SftpServerInfo } from '../../../test-servers/sftp.js'

type AnyHooks = ExternalHooks<FileSystem>

/** Short runs: both cwds together stay within a few minutes against the live servers. */
const TUNING: ConformanceTuning = { modelRuns: 20, largeFileBytes: 2 * 1024 * 1024, atomicityWrites: 20, raceWriters: 8 }

/** SFTP subjects: a fresh root dir each, and the hooks of packages/backend-ssh/test/conformance.test.ts (through a raw connection). */
function sftpStore(server: SftpServerInfo, raw: RawSftp): { open(): Promise<SftpFileSystem>; dispose(fs: SftpFileSystem): Promise<void>; hooks: AnyHooks } {
  const roots = new WeakMap<FileSystem, string>()
  const at = (fs: FileSystem, path: string): string => `${roots.get(fs)}/${path}`
  return {
    open: async () => {
      const root = await raw.freshDir(server.root, 'mounts-')
      await raw.mkdirp(`${root}/work`)
      const fs = new SftpFileSystem({ ...server, root })
      roots.set(fs, root)
      return fs
    },
    dispose: (fs) => raw.rmrf(roots.get(fs) as string),
    hooks: {
      writeBytes: ({ fs }, path, bytes) => raw.writeInPlace(at(fs, path), bytes),
      readBytes: ({ fs }, path) => raw.read(at(fs, path)),
      remove: ({ fs }, path) => raw.unlink(at(fs, path)),
      symlink: ({ fs }, path, target) => raw.symlink(at(fs, path), target),
      chmod: ({ fs }, path, mode) => raw.chmod(at(fs, path), mode),
      mode: ({ fs }, path) => raw.mode(at(fs, path)),
    },
  }
}

const s3 = inject('s3')
const sftp = inject('sftp')
if (s3 === null || sftp === null) {
  const why = [s3 === null ? `S3: ${inject('s3Why')}` : '', sftp === null ? `SFTP: ${inject('sftpWhy')}` : ''].filter(Boolean).join('; ')
  describe.skip(`conformance: MountFileSystem with S3 and SFTP mounted (skipped: ${why})`, () => it('needs both test servers', () => undefined))
} else {
  // The S3 backend's own conformance factory (a fresh prefix per subject, purged on dispose) and hooks.
  const s3Kit = conformanceOptions(s3, s3.bucket, 'S3 mount')
  const raw = await RawSftp.connect(sftp)
  afterAll(() => raw.close())
  const sftpKit = sftpStore(sftp, raw)
  const memoryHooks = memoryConformance().external as AnyHooks
  const s3Hooks = s3Kit.external as AnyHooks
  const external = externalByMount((fs) => (fs instanceof S3FileSystem ? s3Hooks : fs instanceof SftpFileSystem ? sftpKit.hooks : memoryHooks))

  for (const cwd of ['/s3/work', '/sftp/work']) {
    await describeConformance<MountFileSystem>({
      name: `MountFileSystem with S3 and SFTP mounted (cwd ${cwd})`,
      create: async ({ limits }) => {
        const bucket = await s3Kit.create({})
        await bucket.fs.createDirectory(await bucket.fs.resolve('work'))
        const remote = await sftpKit.open()
        const mounts = { '/': new MemoryFileSystem({ files: { 'top.txt': 'root store' } }), '/s3': bucket.fs, '/sftp': remote }
        const fs = new MountFileSystem(mounts, { ...limits, cwd })
        return {
          fs,
          dispose: async () => {
            await Promise.all([bucket.dispose?.(), sftpKit.dispose(remote)])
            await fs.close()
          },
        }
      },
      external,
      options: TUNING,
    })
  }
}
