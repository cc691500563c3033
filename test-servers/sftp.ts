import type { Started } from './s3.js'

/** Coordinates of the SFTP server the tests use. */
export interface SftpServerInfo {
  readonly host: string
  readonly port: number
  readonly username: string
  readonly privateKey: string
  /** SHA256 fingerprint of the host key, for pinning. */
  readonly hostKeySha256: string
  /** A directory the user owns, for the tests' roots. */
  readonly root: string
}

/** Boots OpenSSH sshd (not yet implemented: the SFTP backend issue does it). */
export async function startSftp(): Promise<Started<SftpServerInfo>> {
  return { why: 'the SFTP test server is not set up yet' }
}
