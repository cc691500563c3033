/**
 * The conformance kit on an OverlayFileSystem over SFTP (issue 36): see
 * `packages/tools/test/overlay-kit.ts` for what the kit's external hooks mean on an overlay.
 */
import { afterAll, describe, inject, it } from 'vitest'
import { describeConformance } from '@seamfs/conformance'
import { overlayConformance } from '../../tools/test/overlay-kit.js'
import { sftpConformance } from './kit-options.js'
import { RawSftp } from './raw.js'

const server = inject('sftp')
if (server === null) {
  describe.skip(`conformance: OverlayFileSystem over SFTP (skipped: ${inject('sftpWhy')})`, () => it('needs sshd', () => undefined))
} else {
  const raw = await RawSftp.connect(server)
  afterAll(() => raw.close())
  await describeConformance(overlayConformance(sftpConformance(server, raw)))
}
