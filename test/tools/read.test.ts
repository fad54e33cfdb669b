import { readCases } from "./read-cases.ts"

readCases("local")
