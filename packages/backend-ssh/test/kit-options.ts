/**
 * The conformance options of SftpFileSystem on the test sshd: each subject in a fresh directory,
 * the kit's external hooks writing through a second, raw SFTP connection (in place, as another
 * client would).
 */
import type { ConformanceOptions } from '@seamfs/conformance'
import { SftpFileSystem } from '@seamfs/backend-ssh'
import type { SftpServerInfo } from '../../../test-servers/sftp.js'
import type { RawSftp } from './raw.js'

export function sftpConformance(server: SftpServerInfo, raw: RawSftp): ConformanceOptions<SftpFileSystem> {
  const roots = new WeakMap<SftpFileSystem, string>()
  const at = (fs: SftpFileSystem, path: string): string => `${roots.get(fs)}/${path}`
  return {
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
  }
}
