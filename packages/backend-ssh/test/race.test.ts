import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { isFsError } from '@seamfs/core'
import { SftpFileSystem } from '@seamfs/backend-ssh'
import { countingClient, titled, type CountingClient } from './helpers.js'
import { RawSftp } from './raw.js'

const server = inject('sftp')
const CLIENTS = 8

describe.skipIf(server === null)(titled('cross-client: separate connections race createIfAbsent', server, inject('sftpWhy')), () => {
  let raw: RawSftp
  let root: string
  let clients: SftpFileSystem[] = []
  let counters: CountingClient[] = []

  beforeAll(async () => {
    if (server === null) return
    raw = await RawSftp.connect(server)
    root = await raw.freshDir(server.root, 'race-')
    counters = await Promise.all(Array.from({ length: CLIENTS }, () => countingClient(server)))
    clients = counters.map((c) => new SftpFileSystem({ ...server, root, client: c.client }))
    // Every client connected first, so the race is between their requests, not their handshakes.
    await Promise.all(clients.map((fs) => fs.connect()))
  })
  afterAll(async () => {
    await Promise.all(clients.map((fs) => fs.close()))
    for (const c of counters) c.client.end()
    await raw?.rmrf(root)
    raw?.close()
  })

  it(`${CLIENTS} SftpFileSystem instances, ${CLIENTS} SSH connections, one path: exactly one creates (10 rounds)`, async () => {
    let contested = 0
    for (let round = 0; round < 10; round++) {
      for (const c of counters) c.reset()
      const path = `round-${round}/shared.txt`
      const targets = await Promise.all(clients.map((fs) => fs.resolve(path)))
      const settled = await Promise.allSettled(clients.map((fs, i) => fs.writeText(targets[i]!, `client ${i}`, { expected: { kind: 'createIfAbsent' } })))
      const winners = settled.flatMap((s, i) => (s.status === 'fulfilled' ? [i] : []))
      const losers = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : []))
      expect(winners.length).toBe(1)
      expect(losers.every((err) => isFsError(err, 'FS_NOT_OBSERVED'))).toBe(true)
      expect((await raw.read(`${root}/${path}`)).toString()).toBe(`client ${winners[0]}`)
      expect(await raw.names(`${root}/round-${round}`)).toEqual(['shared.txt'])
      const links = counters.reduce((n, c) => n + (c.counts.get('hardlink@openssh.com') ?? 0), 0)
      if (links > 1) contested++
    }
    // The pre-check (a stat) cannot decide a race: in most rounds several clients reached the hard link.
    expect(contested).toBeGreaterThan(0)
  })

  it('a guarded create never overwrites a file another client made meanwhile (raw client wins first)', async () => {
    const fs = clients[0]!
    const target = await fs.resolve('late.txt')
    await raw.writeInPlace(`${root}/late.txt`, Buffer.from('raw client'))
    await expect(fs.writeText(target, 'seamfs', { expected: { kind: 'createIfAbsent' } })).rejects.toMatchObject({
      code: 'FS_NOT_OBSERVED',
    })
    expect((await raw.read(`${root}/late.txt`)).toString()).toBe('raw client')
  })
})
