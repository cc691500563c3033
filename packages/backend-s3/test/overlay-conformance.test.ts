/**
 * The conformance kit on an OverlayFileSystem over S3 (issue 36), on the unversioned bucket: see
 * `packages/tools/test/overlay-kit.ts` for what the kit's external hooks mean on an overlay.
 */
import { describeConformance } from '@seamfs/conformance'
import { describe, it } from 'vitest'
import { overlayConformance } from '../../tools/test/overlay-kit.js'
import { conformanceOptions, server, serverWhy } from './support.js'

if (server === null) {
  describe.skip(`conformance: OverlayFileSystem over S3 (skipped: ${serverWhy})`, () => {
    it('needs the S3 test server', () => undefined)
  })
} else {
  await describeConformance(overlayConformance(conformanceOptions(server, server.bucket, 'S3FileSystem (radosgw, unversioned bucket)')))
}
