/**
 * The conformance kit on an OverlayFileSystem (issue 36), over the memory store and over the local
 * disk (S3 and SFTP: in their packages' remote tests). See `overlay-kit.ts` for what the kit's
 * external hooks mean on an overlay.
 */
import { describeConformance } from '@seamfs/conformance'
import { localConformance } from '@seamfs/backend-local/conformance'
import { memoryConformance } from '@seamfs/backend-memory/conformance'
import { overlayConformance } from './overlay-kit.js'

await describeConformance(overlayConformance(memoryConformance({ modelRuns: 100 })))
await describeConformance(overlayConformance(localConformance({ modelRuns: 50 })))
