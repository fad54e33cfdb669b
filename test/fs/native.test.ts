import { nativeCases } from "./native-cases.ts"

// The temp folder is on a local mount here (ext4 or tmpfs), so the calls are synchronous.
nativeCases("local")
