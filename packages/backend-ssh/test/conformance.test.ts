import { afterAll, describe, inject, it } from 'vitest'
import { describeConformance } from '@seamfs/conformance'
import { SftpFileSystem } from '@seamfs/backend-ssh'
import { RawSftp } from './raw.js'

const server = inject('sftp')
if (server === null) {
  describe.skip(`conformance: SftpFileSystem (skipped: ${inject('sftpWhy')})`, () => it('needs sshd', () => undefined))
} else {
  // The hooks write through a second, raw SFTP connection: in place, as another client would.
  const raw = await RawSftp.connect(server)
  afterAll(() => raw.close())
  const roots = new WeakMap<SftpFileSystem, string>()
  const at = (fs: SftpFileSystem, path: string): string => `${roots.get(fs)}/${path}`
  await describeConformance<SftpFileSystem>({
    name: 'SftpFileSystem (OpenSSH sshd)',
    create: async ({ limits }) => {
      const root = await raw.freshDir(server.root)
      const fs = new SftpFileSystem({ ...server, ...limits, root })
      roots.set(fs, root)
      return { fs, dispose: () => raw.rmrf(root) }
    },
    external: {
      writeBytes: ({ fs }, path, bytes) => raw.writeInPlace(at(fs, path), bytes),
      readBytes: ({ fs }, path) => raw.read(at(fs, path)),
      remove: ({ fs }, path) => raw.unlink(at(fs, path)),
      symlink: ({ fs }, path, target) => raw.symlink(at(fs, path), target),
      chmod: ({ fs }, path, mode) => raw.chmod(at(fs, path), mode),
      mode: ({ fs }, path) => raw.mode(at(fs, path)),
    },
    // Racing child processes open the subject's directory through fixtures/open.js (the built package).
    crossProcess: {
      module: new URL('./fixtures/open.js', import.meta.url).href,
      descriptor: ({ fs }) => ({ host: server.host, port: server.port, username: server.username, privateKey: server.privateKey, root: roots.get(fs) }),
    },
    options: { modelRuns: 30 },
  })
}
