/**
 * vitest global setup: boots the real servers the remote backends are tested
 * against (Ceph radosgw for S3, OpenSSH sshd for SFTP) on 127.0.0.1, hands
 * their coordinates to the tests with `provide`, and stops them by PID after
 * the run. A server whose binaries are missing is reported as absent (its
 * suites skip and say why) — except under CI=true, where that is a failure.
 */
import type { TestProject } from 'vitest/node'
import { startS3, type S3ServerInfo } from './s3.js'
import { startSftp, type SftpChrootInfo, type SftpServerInfo } from './sftp.js'

declare module 'vitest' {
  export interface ProvidedContext {
    s3: S3ServerInfo | null
    s3Why: string
    sftp: SftpServerInfo | null
    sftpWhy: string
    /** The same sshd's chrooted user (ChrootDirectory), or null when there is no SFTP server. */
    sftpChroot: SftpChrootInfo | null
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [s3, sftp] = await Promise.all([startS3(), startSftp()])
  project.provide('s3', s3.server?.info ?? null)
  project.provide('s3Why', s3.why)
  project.provide('sftp', sftp.server?.info.plain ?? null)
  project.provide('sftpChroot', sftp.server?.info.chroot ?? null)
  project.provide('sftpWhy', sftp.why)
  return async () => {
    await Promise.all([s3.server?.stop(), sftp.server?.stop()])
  }
}
