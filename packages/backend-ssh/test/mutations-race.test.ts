/**
 * Concurrent removers and renamers on separate SSH connections (each filesystem on its own
 * injected client, so no lock of this process is shared): exactly one wins. The lock entries
 * (leases.ts) queue them, as they would in separate processes: the winner's request is the only
 * one that reaches the server; the others find the source gone, or the destination taken, first.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { errorCodeOf } from '@seamfs/core/backend'
import { SftpFileSystem } from '@seamfs/backend-ssh'
import { countingClient, titled, type CountingClient } from './helpers.js'
import { RawSftp } from './raw.js'

const server = inject('sftp')
const CLIENTS = 8
const ROUNDS = 6

describe.skipIf(server === null)(titled('cross-client: separate connections race remove and rename', server, inject('sftpWhy')), () => {
  let raw: RawSftp
  let root: string
  let clients: SftpFileSystem[] = []
  let counters: CountingClient[] = []

  beforeAll(async () => {
    if (server === null) return
    raw = await RawSftp.connect(server)
    root = await raw.freshDir(server.root, 'mrace-')
    counters = await Promise.all(Array.from({ length: CLIENTS }, () => countingClient(server)))
    clients = counters.map((c) => new SftpFileSystem({ root, client: c.client }))
    await Promise.all(clients.map((fs) => fs.connect()))
  })
  afterAll(async () => {
    await Promise.all(clients.map((fs) => fs.close()))
    for (const c of counters) c.client.end()
    await raw?.rmrf(root)
    raw?.close()
  })

  /** Runs `op` on every client at once; the indexes of the winners and the codes of the losers. */
  async function race(
    op: (fs: SftpFileSystem, i: number) => Promise<unknown>,
  ): Promise<{ winners: number[]; codes: Set<string | undefined>; sent: (type: string) => number }> {
    for (const c of counters) c.reset()
    const settled = await Promise.allSettled(clients.map(op))
    const winners = settled.flatMap((s, i) => (s.status === 'fulfilled' ? [i] : []))
    const codes = new Set(settled.flatMap((s) => (s.status === 'rejected' ? [errorCodeOf(s.reason)] : [])))
    const sent = (type: string): number => counters.reduce((n, c) => n + (c.counts.get(type) ?? 0), 0)
    return { winners, codes, sent }
  }

  it(`${CLIENTS} guarded removers of one version: exactly one wins, the others are stale or not found (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const path = `rm-${round}.txt`
      await raw.writeInPlace(`${root}/${path}`, Buffer.from(`round ${round}`))
      const version = (await clients[0]!.stat(await clients[0]!.resolve(path)))!.version
      const targets = await Promise.all(clients.map((fs) => fs.resolve(path)))
      const { winners, codes, sent } = await race((fs, i) => fs.remove(targets[i]!, { expected: { version } }))
      expect(winners).toHaveLength(1)
      expect([...codes].every((c) => c === 'FS_STALE_VERSION' || c === 'FS_NOT_FOUND')).toBe(true)
      // Every remover took the lock (a hard link each); no lock entry or temp file is left.
      expect(sent('hardlink@openssh.com')).toBeGreaterThanOrEqual(CLIENTS)
      expect(await raw.names(root)).toEqual([])
    }
  })

  it(`${CLIENTS} guarded renamers of one version to ${CLIENTS} places: exactly one wins, the content is under one name (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const dir = `mv-${round}`
      await raw.writeInPlace(`${root}/${dir}/src.txt`, Buffer.from(`round ${round}`))
      const fs0 = clients[0]!
      const version = (await fs0.stat(await fs0.resolve(`${dir}/src.txt`)))!.version
      const sources = await Promise.all(clients.map((fs) => fs.resolve(`${dir}/src.txt`)))
      const dests = await Promise.all(clients.map((fs, i) => fs.resolve(`${dir}/to-${i}/dst.txt`)))
      const { winners, codes, sent } = await race((fs, i) => fs.rename(sources[i]!, dests[i]!, { expected: { version } }))
      // The source's lock queued them: only the winner's move reached the server.
      expect(sent('RENAME')).toBe(1)
      expect(winners).toHaveLength(1)
      expect([...codes].every((c) => c === 'FS_STALE_VERSION' || c === 'FS_NOT_FOUND')).toBe(true)
      // Only the winner's destination directory is left (the losers' made parents are removed again).
      expect(await raw.names(`${root}/${dir}`)).toEqual([`to-${winners[0]}`])
      expect((await raw.read(`${root}/${dir}/to-${winners[0]}/dst.txt`)).toString()).toBe(`round ${round}`)
    }
  })

  it(`${CLIENTS} renamers of ${CLIENTS} files onto one new name, no overwrite: exactly one lands, the others keep their file (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const dir = `onto-${round}`
      await Promise.all(clients.map((_, i) => raw.writeInPlace(`${root}/${dir}/src-${i}.txt`, Buffer.from(`from ${i}`))))
      const sources = await Promise.all(clients.map((fs, i) => fs.resolve(`${dir}/src-${i}.txt`)))
      const dests = await Promise.all(clients.map((fs) => fs.resolve(`${dir}/dst.txt`)))
      const { winners, codes, sent } = await race((fs, i) => fs.rename(sources[i]!, dests[i]!))
      // The destination's lock queued them: the others saw dst.txt taken before sending anything.
      expect(sent('RENAME')).toBe(1)
      expect(winners).toHaveLength(1)
      expect([...codes]).toEqual(['FS_NOT_OBSERVED'])
      const w = winners[0]!
      expect((await raw.read(`${root}/${dir}/dst.txt`)).toString()).toBe(`from ${w}`)
      const left = clients.map((_, i) => `src-${i}.txt`).filter((name) => name !== `src-${w}.txt`)
      expect(await raw.names(`${root}/${dir}`)).toEqual(['dst.txt', ...left].sort())
    }
  })
})
