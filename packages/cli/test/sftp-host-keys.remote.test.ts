/**
 * `seamfs --fs sftp://…` as a user runs it (the built bin in a child process, a clean HOME) against
 * the live sshd: a good pin lists, a wrong pin is refused, no pin with the host in
 * ~/.ssh/known_hosts lists, an unknown host is refused with the fingerprint and how to pin it.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { builtTitle, missingBuild, removeTempDirs, runBin, tempDir } from './support.js'

const server = inject('sftp')
afterAll(removeTempDirs)

describe.skipIf(server === null || missingBuild.length > 0)(
  builtTitle(`seamfs --fs sftp://… host keys${server === null ? ` (skipped: ${inject('sftpWhy')})` : ''}`),
  () => {
    let cwd = ''
    let url = ''
    beforeAll(() => {
      if (server === null) return
      cwd = tempDir('sftp-keys')
      writeFileSync(join(cwd, 'id'), server.privateKey, { mode: 0o600 })
      url = `sftp://${server.username}@${server.host}:${server.port}${server.root}?key=id`
    })
    const ls = (spec: string, home: string) => runBin(['--fs', spec, 'ls'], { cwd, home })

    it('a good pin lists; a wrong one is refused (exit 1, the pinned and the real fingerprint on stderr)', async () => {
      const home = tempDir('home')
      const good = await ls(`${url}&hostKeySha256=${encodeURIComponent(server!.hostKeySha256)}`, home)
      expect(good).toMatchObject({ code: 0 })
      expect(good.stdout).toContain(`<path>${server!.root}</path>`)
      const pin = `SHA256:${'A'.repeat(43)}`
      const wrong = await ls(`${url}&hostKeySha256=${pin}`, home)
      expect(wrong).toMatchObject({ code: 1, stdout: '' })
      expect(wrong.stderr).toContain(`sent the ssh-ed25519 key ${server!.hostKeySha256}, not the pinned hostKeySha256 ${pin}`)
      expect(wrong.stderr).toContain('[FS_IO_ERROR]')
    })

    it('no pin: ~/.ssh/known_hosts decides; an unknown host is refused with how to pin it', async () => {
      const home = tempDir('home')
      const unknown = await ls(url, home)
      expect(unknown).toMatchObject({ code: 1, stdout: '' })
      expect(unknown.stderr).toContain(`[${server!.host}]:${server!.port} is not in ${join(home, '.ssh', 'known_hosts')}`)
      expect(unknown.stderr).toContain(`?hostKeySha256=${server!.hostKeySha256} in an sftp:// URL`)
      mkdirSync(join(home, '.ssh'))
      const scanned = execFileSync('ssh-keyscan', ['-p', String(server!.port), server!.host], {
        encoding: 'utf8',
        timeout: 20_000,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      writeFileSync(join(home, '.ssh', 'known_hosts'), scanned)
      expect(await ls(url, home)).toMatchObject({ code: 0 })
      expect(await ls(`${url}&insecureAcceptAnyHostKey=true`, tempDir('home'))).toMatchObject({ code: 0 })
    })
  },
)
