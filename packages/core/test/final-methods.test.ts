/**
 * The public methods of FileSystem are final: a class that overrides one (as a method, an accessor
 * or a field, at any depth) is refused at construction, naming the method and its hook; what a
 * class cannot show (a property set on the instance, a proxy) is found by `overriddenMethods`.
 */
import { describe, expect, it, vi } from 'vitest'
import { FileSystem, FINAL_METHODS, overriddenMethods, SandboxedFileSystem, type FsTarget, type SignalOptions } from '@seamfs/core'
import { MemoryFileSystem } from '@seamfs/backend-memory'

const PUBLIC = Object.keys(FINAL_METHODS)

describe('public methods are final', () => {
  it('lists every public method of FileSystem but the backend’s own (fileUrl, contains, close)', () => {
    const onPrototype = Object.getOwnPropertyNames(FileSystem.prototype).filter((name) => name !== 'constructor')
    expect(new Set(PUBLIC)).toEqual(new Set(onPrototype.filter((name) => !['fileUrl', 'contains', 'close'].includes(name))))
  })

  it.each(PUBLIC)('a class that overrides %s is refused at construction, naming the method and its hook', (name) => {
    class Overrides extends MemoryFileSystem {}
    Object.defineProperty(Overrides.prototype, name, { value: () => undefined, writable: true, configurable: true })
    expect(() => new Overrides({ cwd: '/w' })).toThrow(TypeError)
    expect(() => new Overrides({ cwd: '/w' })).toThrow(`class Overrides overrides ${name}, a public method of FileSystem`)
    expect(() => new Overrides({ cwd: '/w' })).toThrow(`implement the protected hook ${FINAL_METHODS[name]}`)
  })

  it('an override two classes down, an accessor, and a subclass of a refused class are refused too', () => {
    class Middle extends MemoryFileSystem {}
    class Bottom extends Middle {
      override async readText(target: FsTarget, opts?: SignalOptions): Promise<string> {
        return (await super.readText(target, opts)).toUpperCase()
      }
    }
    class Below extends Bottom {}
    expect(() => new Bottom({ cwd: '/w' })).toThrow('class Bottom overrides readText')
    expect(() => new Below({ cwd: '/w' })).toThrow('class Bottom overrides readText')
    class Accessor extends Middle {}
    Object.defineProperty(Accessor.prototype, 'listDir', { get: () => () => Promise.resolve([]) })
    expect(() => new Accessor({ cwd: '/w' })).toThrow('class Accessor overrides listDir')
  })

  it('a clean class constructs, over and over; the layers of core do too', async () => {
    class Clean extends MemoryFileSystem {
      protected override loadBytes(...args: Parameters<MemoryFileSystem['loadBytes']>): ReturnType<MemoryFileSystem['loadBytes']> {
        return super.loadBytes(...args)
      }
    }
    for (let i = 0; i < 3; i++) {
      const fs = new Clean({ cwd: '/w', files: { 'a.txt': 'A' } })
      expect(await fs.readText(await fs.resolve('a.txt'))).toBe('A')
      expect(overriddenMethods(fs, FileSystem.prototype)).toEqual([])
    }
    const fenced = new SandboxedFileSystem(new Clean({ cwd: '/w' }), { mode: 'workspace-write', workspaceRoot: '/w' })
    expect(overriddenMethods(fenced, FileSystem.prototype)).toEqual([])
  })

  it('an instance property (a test spy) is allowed by core, and found by overriddenMethods', async () => {
    const fs = new MemoryFileSystem({ cwd: '/w', files: { 'a.txt': 'A' } })
    const spy = vi.spyOn(fs, 'readText')
    expect(await fs.readText(await fs.resolve('a.txt'))).toBe('A')
    expect(spy).toHaveBeenCalledOnce()
    expect(overriddenMethods(fs, FileSystem.prototype)).toEqual([{ name: 'readText', where: 'the instance itself (a property set on it)' }])
    spy.mockRestore()
    expect(overriddenMethods(fs, FileSystem.prototype)).toEqual([])
  })

  it('a proxy that answers a public method with its own code is found', () => {
    const fs = new MemoryFileSystem({ cwd: '/w' })
    const proxied = new Proxy(fs, {
      get: (target, name, receiver) => (name === 'stat' ? () => Promise.resolve(undefined) : (Reflect.get(target, name, receiver) as unknown)),
    })
    expect(overriddenMethods(proxied, FileSystem.prototype)).toEqual([{ name: 'stat', where: 'something in front of the instance (a proxy?)' }])
  })
})
