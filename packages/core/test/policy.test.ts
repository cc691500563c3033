import { describe, expect, it } from 'vitest'
import { FsTargetKey, FsVersion, ObservationPolicy, isFsError, type FsTarget, type PolicyOwner } from '@seamfs/core/backend'

const target = (key: string): FsTarget => ({ targetKey: FsTargetKey(key), displayPath: key })
const A = target('/w/a.txt')
const B = target('/w/b.txt')
const V1 = FsVersion('v1')
const V2 = FsVersion('v2')

type State = 'unseen' | 'absent' | 'present'
type Step = (p: ObservationPolicy, owner: PolicyOwner) => void

const arrange: Record<State, Step> = {
  unseen: () => undefined,
  absent: (p, o) => p.recordAbsent(o, A),
  present: (p, o) => p.recordPresent(o, A, V1),
}

function editOutcome(policy: ObservationPolicy, owner: PolicyOwner | undefined): string {
  try {
    return `version ${policy.editIntent(owner, A).version}`
  } catch (err) {
    if (!isFsError(err)) throw err
    return err.code
  }
}

describe('ObservationPolicy decisions', () => {
  const table: ReadonlyArray<readonly [State, string, string]> = [
    ['unseen', 'createIfAbsent', 'FS_NOT_OBSERVED'],
    ['absent', 'createIfAbsent', 'FS_NOT_FOUND'],
    ['present', 'replaceIfVersion v1', 'version v1'],
  ]
  for (const [state, write, edit] of table) {
    it(`${state}: write → ${write}; edit → ${edit}`, () => {
      const policy = new ObservationPolicy()
      const owner = {}
      arrange[state](policy, owner)
      const intent = policy.writeIntent(owner, A)
      expect(intent.kind === 'replaceIfVersion' ? `replaceIfVersion ${intent.version}` : intent.kind).toBe(write)
      expect(editOutcome(policy, owner)).toBe(edit)
    })
  }

  it('the unseen edit message tells the model to read first; absent says not found', () => {
    const policy = new ObservationPolicy()
    expect(() => policy.editIntent('s', A)).toThrow('edit requires reading "/w/a.txt" first')
    policy.recordAbsent('s', A)
    expect(() => policy.editIntent('s', A)).toThrow('cannot edit "/w/a.txt": not found')
  })

  it('an actor without an owner may create but never overwrite or edit, and records nothing', () => {
    const policy = new ObservationPolicy()
    policy.recordPresent(undefined, A, V1)
    expect(policy.writeIntent(undefined, A)).toEqual({ kind: 'createIfAbsent' })
    expect(editOutcome(policy, undefined)).toBe('FS_NOT_OBSERVED')
    expect(policy.observation(undefined, A)).toBeUndefined()
  })
})

describe('ObservationPolicy: remove and rename', () => {
  const outcome = (run: () => unknown): unknown => {
    try {
      return run()
    } catch (err) {
      if (!isFsError(err)) throw err
      return err.code
    }
  }

  for (const [state, expected] of [
    ['unseen', 'FS_NOT_OBSERVED'],
    ['absent', 'FS_NOT_FOUND'],
    ['present', { version: V1 }],
  ] as const) {
    it(`${state}: remove and the source of a rename → ${JSON.stringify(expected)}`, () => {
      const policy = new ObservationPolicy()
      arrange[state](policy, 'o')
      expect(outcome(() => policy.removeIntent('o', A))).toEqual(expected)
      expect(outcome(() => policy.renameIntent('o', A, B).expected)).toEqual(expected)
    })
  }

  it('the destination of a rename: overwrite only the version seen, never an unseen or absent file', () => {
    const policy = new ObservationPolicy()
    policy.recordPresent('o', A, V1)
    expect(policy.renameIntent('o', A, B)).toEqual({ expected: { version: V1 }, overwrite: false })
    policy.recordAbsent('o', B)
    expect(policy.renameIntent('o', A, B).overwrite).toBe(false)
    policy.recordPresent('o', B, V2)
    expect(policy.renameIntent('o', A, B).overwrite).toEqual({ version: V2 })
  })

  it('messages name the verb; recordRenamed makes the source absent and the destination present', () => {
    const policy = new ObservationPolicy()
    expect(() => policy.removeIntent('o', A)).toThrow('remove requires reading "/w/a.txt" first')
    expect(() => policy.renameIntent('o', A, B)).toThrow('move requires reading "/w/a.txt" first')
    policy.recordPresent('o', A, V1)
    policy.recordRenamed('o', A, B, V2)
    expect(policy.observation('o', A)).toEqual({ kind: 'absent' })
    expect(policy.observation('o', B)).toEqual({ kind: 'present', version: V2 })
    expect(() => policy.removeIntent(undefined, B)).toThrow('remove requires reading')
  })
})

describe('ObservationPolicy transitions', () => {
  const transitions: ReadonlyArray<readonly [string, Step[], ReturnType<ObservationPolicy['observation']>]> = [
    ['unseen → read finds nothing → absent', [(p, o) => p.recordAbsent(o, A)], { kind: 'absent' }],
    ['unseen → read → present', [(p, o) => p.recordPresent(o, A, V1)], { kind: 'present', version: V1 }],
    ['absent → create → present', [(p, o) => p.recordAbsent(o, A), (p, o) => p.recordPresent(o, A, V1)], { kind: 'present', version: V1 }],
    [
      'present → write → present at the new version',
      [(p, o) => p.recordPresent(o, A, V1), (p, o) => p.recordPresent(o, A, V2)],
      { kind: 'present', version: V2 },
    ],
    ['present → re-read finds nothing → absent', [(p, o) => p.recordPresent(o, A, V1), (p, o) => p.recordAbsent(o, A)], { kind: 'absent' }],
    ['a record of another target changes nothing here', [(p, o) => p.recordPresent(o, B, V1)], undefined],
  ]
  for (const [name, steps, expected] of transitions) {
    it(name, () => {
      const policy = new ObservationPolicy()
      const owner = { session: name }
      for (const step of steps) step(policy, owner)
      expect(policy.observation(owner, A)).toEqual(expected)
    })
  }
})

describe('owners', () => {
  it('are isolated, whether objects or ids', () => {
    const policy = new ObservationPolicy()
    const first = {}
    const second = {}
    policy.recordPresent(first, A, V1)
    policy.recordPresent('id-1', A, V2)
    expect(policy.observation(first, A)).toEqual({ kind: 'present', version: V1 })
    expect(policy.observation(second, A)).toBeUndefined()
    expect(policy.observation('id-1', A)).toEqual({ kind: 'present', version: V2 })
    expect(policy.observation('id-2', A)).toBeUndefined()
  })

  it('forget drops one owner only', () => {
    const policy = new ObservationPolicy()
    const keep = {}
    const drop = {}
    policy.recordPresent(keep, A, V1)
    policy.recordPresent(drop, A, V1)
    policy.recordPresent('drop-id', A, V1)
    policy.forget(drop)
    policy.forget('drop-id')
    expect(policy.observation(drop, A)).toBeUndefined()
    expect(policy.observation('drop-id', A)).toBeUndefined()
    expect(policy.observation(keep, A)).toEqual({ kind: 'present', version: V1 })
  })

  it('a snapshot survives JSON and restores into another policy and owner', () => {
    const policy = new ObservationPolicy()
    policy.recordPresent('session-1', A, V1)
    policy.recordAbsent('session-1', B)
    const json = JSON.stringify(policy.snapshot('session-1'))
    const resumed = new ObservationPolicy()
    const owner = {}
    resumed.restore(owner, JSON.parse(json))
    expect(resumed.writeIntent(owner, A)).toEqual({ kind: 'replaceIfVersion', version: V1 })
    expect(editOutcome(resumed, owner)).toBe('version v1')
    expect(resumed.observation(owner, B)).toEqual({ kind: 'absent' })
  })

  it('a malformed snapshot is refused and leaves the owner as it was', () => {
    const policy = new ObservationPolicy()
    policy.recordPresent('s', A, V1)
    for (const bad of [
      null,
      {},
      { format: 'other', entries: [] },
      { format: 'seamfs.observations/1', entries: [['k', { kind: 'present' }]] },
      { format: 'seamfs.observations/1', entries: [[1, { kind: 'absent' }]] },
    ]) {
      expect(() => policy.restore('s', bad)).toThrow(TypeError)
    }
    expect(policy.observation('s', A)).toEqual({ kind: 'present', version: V1 })
  })
})
