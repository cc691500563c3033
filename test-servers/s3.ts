/** Coordinates of the S3 server the tests use. */
export interface S3ServerInfo {
  readonly endpoint: string
  readonly region: string
  readonly accessKeyId: string
  readonly secretAccessKey: string
  /** An unversioned bucket, and a versioned one. */
  readonly bucket: string
  readonly versionedBucket: string
}

export interface Started<I> {
  readonly server?: { readonly info: I; stop(): Promise<void> } | undefined
  /** Why there is no server, when there is none. */
  readonly why: string
}

/** Boots Ceph radosgw (not yet implemented: the S3 backend issue does it). */
export async function startS3(): Promise<Started<S3ServerInfo>> {
  return { why: 'the S3 test server is not set up yet' }
}
