import { describeConformance } from '@seamfs/conformance'
import { describe, it } from 'vitest'
import { conformanceOptions, server, serverWhy } from './support.js'

// Against a real radosgw (booted by the global setup): once on an unversioned bucket, where
// the probe finds both write conditions enforced ('atomic'), and once on a versioned bucket,
// where radosgw ignores them and the backend falls back to its in-process lock ('process').
if (server === null) {
  describe.skip(`conformance: S3FileSystem (skipped: ${serverWhy})`, () => {
    it('needs the S3 test server', () => undefined)
  })
} else {
  await describeConformance(conformanceOptions(server, server.bucket, 'S3FileSystem (radosgw, unversioned bucket)'))
  await describeConformance(conformanceOptions(server, server.versionedBucket, 'S3FileSystem (radosgw, versioned bucket)'))
}
