import { expect, it } from 'vitest'
import { MemoryFileSystem } from '@seamfs/backend-memory'

// The example of README.md, verbatim in spirit: seed, run the agent's calls, assert on the tree.
it('README example: an agent renames a function across a seeded project', async () => {
  const fs = new MemoryFileSystem({ files: { 'src/a.ts': 'export function foo() {}\n', 'src/b.ts': "import { foo } from './a'\nfoo()\n", 'out/': null } })
  const agent = async (): Promise<void> => {
    for (const path of ['src/a.ts', 'src/b.ts']) {
      const target = await fs.resolve(path)
      await fs.editText(target, { oldString: 'foo', newString: 'bar', replaceAll: true })
    }
    await fs.writeText(await fs.resolve('out/log.txt'), 'renamed foo to bar\n')
  }
  await agent()
  expect(fs.toJSON()).toEqual({
    'out/log.txt': 'renamed foo to bar\n',
    'src/a.ts': 'export function bar() {}\n',
    'src/b.ts': "import { bar } from './a'\nbar()\n",
  })
})
