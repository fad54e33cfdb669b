/** The file system as the read-only check sees it (read-only.ts and its table). */

/**
 * What the check may ask of the file system, for paths as the command names them (relative to
 * the project root).
 */
export interface Look {
  /**
   * Whether a word the program opens may be read: inside the project (or an additional
   * directory) and not a secret, as the file really is (every link followed, another name of a
   * secret known), the rule the read tool uses.
   */
  readonly readable: (path: string) => boolean
  /** Whether the path is a folder, links followed (a folder operand makes diff read every file in it). */
  readonly directory?: (path: string) => boolean
  /** The names in a folder, or undefined when it cannot be listed (a glob is expanded with it). */
  readonly list?: (dir: string) => ReadonlyArray<string> | undefined
}
