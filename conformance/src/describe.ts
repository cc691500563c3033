import { describe } from 'vitest'
import { Kit, type Tuning } from './kit.js'
import type { ConformanceOptions } from './types.js'
import { DEFAULT_GENERATIVE_RUNS, DEFAULT_MODEL_RUNS, DEFAULT_MODEL_SEED, DEFAULT_TIMEOUT_MS } from './types.js'
import { identityClauses } from './clauses/identity.js'
import { readClauses } from './clauses/read.js'
import { openFileClauses } from './clauses/open-file.js'
import { listClauses } from './clauses/list.js'
import { treeClauses } from './clauses/tree.js'
import { writeClauses } from './clauses/write.js'
import { editClauses } from './clauses/edit.js'
import { versionClauses } from './clauses/versions.js'
import { errorClauses } from './clauses/errors.js'
import { modelClauses } from './clauses/model.js'
import { limitClauses } from './clauses/limits.js'
import { modeClauses } from './clauses/modes.js'
import { byteClauses } from './clauses/bytes.js'
import { removeClauses } from './clauses/remove.js'
import { rootClauses } from './clauses/root.js'
import { readOnlyClauses } from './clauses/read-only.js'
import { renameClauses } from './clauses/rename.js'
import { directoryClauses } from './clauses/directories.js'
import { crossProcessClauses } from './clauses/cross-process.js'
import { generativeClauses } from './clauses/generative.js'
import { interleavingClauses } from './clauses/interleavings.js'
import { capabilityClauses } from './clauses/capabilities.js'
import { argumentClauses } from './clauses/arguments.js'
import { abortClauses } from './clauses/aborts.js'
import { lifecycleClauses } from './clauses/lifecycle.js'
import { contractRefusal, finalMethodClauses, isOverrideRefusal, refusedClauses } from './clauses/final-methods.js'
import type { FileSystem } from '@seamfs/core'

function tuningOf(options: ConformanceOptions['options']): Tuning {
  return {
    modelRuns: options?.modelRuns ?? DEFAULT_MODEL_RUNS,
    modelSeed: options?.modelSeed ?? DEFAULT_MODEL_SEED,
    generativeRuns: options?.generativeRuns ?? DEFAULT_GENERATIVE_RUNS,
    largeFileBytes: options?.largeFileBytes ?? 20 * 1024 * 1024,
    atomicityBytes: options?.atomicityBytes ?? 1024 * 1024,
    atomicityWrites: options?.atomicityWrites ?? 100,
    raceWriters: options?.raceWriters ?? 16,
    timeoutMs: options?.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  }
}

/**
 * Registers the whole conformance suite for one backend: one `describe` per
 * contract clause, each test named after the rule it checks, gated on the
 * backend's `capabilities` and on the external hooks given.
 *
 * Await it at the top level of a test file: it creates one probe filesystem to
 * read the capabilities, then registers the tests. A subject whose class overrides a public method
 * of `FileSystem` (core's constructor refuses it), or whose probe answers one with other code, is
 * refused: one failing test says why, and nothing else runs.
 *
 * ```ts
 * await describeConformance({ name: 'my backend', create: async () => ({ fs: new MyFs(), dispose }) })
 * ```
 */
export async function describeConformance<F extends FileSystem>(options: ConformanceOptions<F>): Promise<void> {
  const suite = `conformance: ${options.name}`
  let probe: Awaited<ReturnType<typeof options.create>>
  try {
    probe = await options.create({})
  } catch (err) {
    if (!isOverrideRefusal(err)) throw err
    return refusedClauses(suite, err.message)
  }
  const refusal = contractRefusal(probe.fs)
  const caps = probe.fs.capabilities
  try {
    await probe.dispose?.()
  } finally {
    await probe.fs.close()
  }
  if (refusal !== undefined) return refusedClauses(suite, refusal)
  if (caps.readOnly === true && options.external?.writeBytes === undefined) {
    throw new TypeError(`${options.name}: a read-only store (capabilities.readOnly) needs external.writeBytes: the kit makes its fixtures through it`)
  }
  const kit = new Kit(options as unknown as ConformanceOptions, caps, tuningOf(options.options))
  describe(suite, () => {
    finalMethodClauses(kit)
    identityClauses(kit)
    readClauses(kit)
    openFileClauses(kit)
    listClauses(kit)
    treeClauses(kit)
    writeClauses(kit)
    editClauses(kit)
    versionClauses(kit)
    errorClauses(kit)
    limitClauses(kit)
    modeClauses(kit)
    byteClauses(kit)
    removeClauses(kit)
    rootClauses(kit)
    readOnlyClauses(kit)
    renameClauses(kit)
    directoryClauses(kit)
    crossProcessClauses(kit)
    modelClauses(kit, options.external?.writeBytes !== undefined)
    generativeClauses(kit)
    interleavingClauses(kit)
    capabilityClauses(kit)
    argumentClauses(kit)
    abortClauses(kit)
    lifecycleClauses(kit)
  })
}
