import { afterAll, describe, inject, it } from 'vitest'
import { describeConformance } from '@seamfs/conformance'
import { sftpConformance } from './kit-options.js'
import { RawSftp } from './raw.js'

const server = inject('sftp')
if (server === null) {
  describe.skip(`conformance: SftpFileSystem (skipped: ${inject('sftpWhy')})`, () => it('needs sshd', () => undefined))
} else {
  const raw = await RawSftp.connect(server)
  afterAll(() => raw.close())
  await describeConformance(sftpConformance(server, raw))
}
