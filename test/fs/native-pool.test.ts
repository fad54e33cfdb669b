import { nativeCases } from "./native-cases.ts"

// Read when the mount table is first needed, which is after this line: every call takes the pool.
process.env.FREECODE_FS_POOL = "1"
nativeCases("pool")
