/**
 * The public methods of `FileSystem` are final. Core implements each once for every backend (the
 * argument checks, the abort rules, the size limits, UTF-8, the literal edit, the listing order,
 * the outcome shapes, the error translation); a backend or a layer that overrides one bypasses all
 * of that where no test of its own looks. So a class that overrides one (a method or an accessor, at
 * any depth) is refused when it is constructed, naming the method and the hook to implement instead;
 * the conformance kit refuses an instance that carries one by other means (a class field or a
 * property set on it, which land on the instance after this check; a proxy); TypeScript refuses a
 * field over a method, and the repository's lint the `override`. (`fileUrl`, `contains` and `close`
 * are the backend's own.)
 */

/** Each final public method of `FileSystem`, with the protected hooks a backend implements instead. */
export const FINAL_METHODS: Readonly<Record<string, string>> = Object.freeze({
  resolve: 'resolvePath',
  processPath: 'processPathOf',
  stat: 'statTarget',
  lstat: 'lstatPath',
  readText: 'loadBytes',
  readBytes: 'loadBytes',
  streamText: 'openBytes',
  streamBytes: 'openBytes',
  openFile: 'openTarget (or openBytes)',
  listDir: 'listEntries',
  listTree: 'listSubtree (or listEntries)',
  writeText: 'publishBytes',
  writeBytes: 'publishBytes',
  editText: 'updateBytes',
  remove: 'removeTarget',
  rename: 'renameTarget (with prepareRename, renameInPlace)',
  createDirectory: 'makeDirectory',
})

const isFinal = (name: string): boolean => Object.hasOwn(FINAL_METHODS, name)

/** The message of a refused override: which method, where, and what to do instead. */
export function overrideMessage(name: string, where: string): string {
  return (
    `${where} overrides ${name}, a public method of FileSystem: public methods are final (core runs the contract's ` +
    `checks, limits and outcome shapes there, once for every backend); implement the protected hook ${FINAL_METHODS[name] ?? '?'} instead`
  )
}

/** Prototypes already found clean: each class is checked once. */
const clean = new WeakSet<object>()

/**
 * Throws a `TypeError` when a class between `proto` (a constructed class's prototype) and `base`
 * (`FileSystem.prototype`) defines a final public method (a method or an accessor). A prototype is
 * checked at its class's first construction; one changed afterwards is the kit's to find.
 */
export function refuseOverrides(proto: object, base: object): void {
  if (clean.has(proto)) return
  for (let p: object | null = proto; p !== null && p !== base; p = Object.getPrototypeOf(p) as object | null) {
    const name = Object.getOwnPropertyNames(p).find(isFinal)
    if (name !== undefined) throw new TypeError(overrideMessage(name, `class ${className(p)}`))
  }
  clean.add(proto)
}

/**
 * The final public methods `fs` does not answer with `FileSystem`'s own, each with where the other
 * one comes from: a subclass, the instance itself (a property set on it), or neither (a proxy, a
 * getter). `base` is the prototype of `FileSystem` as the instance inherits it. Empty when the
 * contract is intact.
 */
export function overriddenMethods(fs: object, base: object): { readonly name: string; readonly where: string }[] {
  const found: { name: string; where: string }[] = []
  const own = base as Record<string, unknown>
  for (const name of Object.keys(FINAL_METHODS)) {
    if ((fs as Record<string, unknown>)[name] === own[name]) continue
    found.push({ name, where: whereDefined(fs, base, name) })
  }
  return found
}

function whereDefined(fs: object, base: object, name: string): string {
  if (Object.hasOwn(fs, name)) return 'the instance itself (a property set on it)'
  for (let p = Object.getPrototypeOf(fs) as object | null; p !== null && p !== base; p = Object.getPrototypeOf(p) as object | null) {
    if (Object.hasOwn(p, name)) return `class ${className(p)}`
  }
  return 'something in front of the instance (a proxy?)'
}

function className(proto: object): string {
  const ctor = (proto as { constructor?: { name?: unknown } }).constructor
  return typeof ctor?.name === 'string' && ctor.name !== '' ? ctor.name : '(anonymous class)'
}
