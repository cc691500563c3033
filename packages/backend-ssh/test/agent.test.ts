/**
 * ssh-agent: a config with neither `privateKeyFile` nor `passwordEnv` authenticates through the
 * agent at `SSH_AUTH_SOCK` of the env given to `open()`, or the socket `agent` names. A real
 * `ssh-agent` holds the test client key (added with `ssh-add`); it is stopped by its PID.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { sftpBackend } from '@seamfs/backend-ssh/config'
import { mountError, titled } from './helpers.js'

const server = inject('sftp')
const agentMissing = !existsSync('/usr/bin/ssh-agent') || !existsSync('/usr/bin/ssh-add')

describe.skipIf(server === null || agentMissing)(
  titled(`ssh-agent authentication${agentMissing ? ' (skipped: ssh-agent/ssh-add not installed)' : ''}`, server, inject('sftpWhy')),
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'seamfs-agent-'))
    const sock = join(dir, 'agent.sock')
    let agent: ChildProcess | undefined

    beforeAll(async () => {
      if (server === null) return
      // -D: stays in the foreground, so its PID is the child's and it is stopped by it.
      agent = spawn('ssh-agent', ['-D', '-a', sock], { stdio: 'ignore' })
      for (let i = 0; i < 200 && !existsSync(sock); i++) await new Promise((resolve) => setTimeout(resolve, 25))
      expect(existsSync(sock)).toBe(true)
      const keyFile = join(dir, 'id')
      writeFileSync(keyFile, server.privateKey, { mode: 0o600 })
      execFileSync('ssh-add', [keyFile], { env: { ...process.env, SSH_AUTH_SOCK: sock }, timeout: 10_000, stdio: 'ignore' })
    })
    afterAll(() => {
      if (agent?.pid !== undefined && agent.exitCode === null) process.kill(agent.pid, 'SIGTERM')
      rmSync(dir, { recursive: true, force: true })
    })

    const config = (extra: object = {}) =>
      sftpBackend.parseConfig(
        {
          type: 'sftp',
          host: server!.host,
          port: server!.port,
          username: server!.username,
          root: server!.root,
          hostKeySha256: server!.hostKeySha256,
          ...extra,
        },
        'backend',
      )

    /** Opens `c` with `env` and lists the root: undefined when that worked, else the error. */
    const mount = (c: ReturnType<typeof config>, env: Record<string, string>): Promise<unknown> => mountError(c, env, dir)

    it('no key and no password in the config: SSH_AUTH_SOCK of the env authenticates', async () => {
      expect(await mount(config(), { SSH_AUTH_SOCK: sock })).toBeUndefined()
      // Without the agent nothing authenticates: it was the agent that did.
      expect(await mount(config(), {})).toMatchObject({ code: 'FS_PERMISSION_DENIED' })
    })

    it('the config key agent names the socket (relative to the base directory); an unusable one is named', async () => {
      expect(await mount(config({ agent: 'agent.sock' }), {})).toBeUndefined()
      const missing = join(dir, 'no-agent.sock')
      const err = await mount(config({ agent: missing }), { SSH_AUTH_SOCK: sock })
      expect(err).toMatchObject({ code: 'FS_PERMISSION_DENIED' })
      expect((err as Error).message).toContain(`authentication failed (the ssh-agent at ${missing} could not be used: `)
      // An unusable agent is not the end: the key file is tried next.
      expect(await mount(config({ agent: missing, privateKeyFile: 'id' }), {})).toBeUndefined()
    })
  },
)
