import { readCases } from "./read-cases.ts"

// Read when the mount table is first needed, which is after this line: every read streams.
process.env.FREECODE_FS_POOL = "1"
readCases("pool")
