import type { Attrs, Session } from './connection.js'

/** An entry of a listing with a reserved name, with the (lstat) attrs the listing gave. */
export interface Reserved {
  readonly name: string
  readonly attrs: Attrs
}

/**
 * The entries of a directory with their attrs (to tell empty, reserved names only, or entries);
 * with `enough`, the listing stops after the READDIR that found a name it accepts.
 */
export async function entriesOf(s: Session, key: string, enough?: (name: string) => boolean): Promise<Reserved[]> {
  const handle = await s.opendir(key)
  try {
    const entries: Reserved[] = []
    for (let chunk = await s.readdirChunk(handle); chunk !== undefined; chunk = await s.readdirChunk(handle)) {
      for (const e of chunk) if (e.filename !== '.' && e.filename !== '..') entries.push({ name: e.filename, attrs: e.attrs })
      if (enough !== undefined && entries.some((e) => enough(e.name))) break
    }
    return entries
  } finally {
    s.close(handle).catch(() => undefined)
  }
}
