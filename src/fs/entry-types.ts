/**
 * A listing from a file system that does not report entry types (readdir's d_type is
 * DT_UNKNOWN) gets one lstat per entry it could not type, so every layer lists the same types.
 * An lstat that fails leaves the entry "Unknown": the entry is still listed.
 */
import { Effect } from "effect"
import { childPath } from "../path/path.ts"
import type { DirectoryEntry, FileType } from "./local-fs-shape.ts"

export const fillUnknownTypes = <E>(
  dir: string,
  entries: ReadonlyArray<DirectoryEntry>,
  lstatType: (path: string) => Effect.Effect<FileType, E>
): Effect.Effect<ReadonlyArray<DirectoryEntry>> =>
  entries.some((e) => e.type === "Unknown")
    ? Effect.forEach(
        entries,
        (e) =>
          e.type !== "Unknown"
            ? Effect.succeed(e)
            : lstatType(childPath(dir, e.name)).pipe(
                Effect.map((type): DirectoryEntry => ({ name: e.name, type })),
                Effect.orElseSucceed(() => e)
              ),
        { concurrency: 8 }
      )
    : Effect.succeed(entries)
