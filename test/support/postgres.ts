/**
 * A throwaway PostgreSQL cluster for one test file: `initdb` into a temp folder, `pg_ctl start` on
 * a free loopback port with its socket in that folder, stopped and removed at the end. The server
 * refuses to run as root, so as root it runs as the `postgres` user Debian's package creates.
 * `.ci/run` installs the package when missing; without it the suite that needs it fails loudly
 * rather than skipping (a store that is never tested is not a store).
 */
import { execFileSync, spawnSync } from "node:child_process"
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

export interface PgCluster {
  readonly url: string
  readonly port: number
  readonly dir: string
  /** Runs `psql -c` against the cluster as its superuser (for pg_terminate_backend and the like). */
  readonly psql: (sql: string) => string
  readonly stop: () => void
  readonly start: () => void
}

const binDir = (): string => {
  const base = "/usr/lib/postgresql"
  if (existsSync(base)) {
    const versions = readdirSync(base)
      .filter((v) => existsSync(join(base, v, "bin", "initdb")))
      .sort((a, b) => Number(b) - Number(a))
    if (versions[0] !== undefined) return join(base, versions[0], "bin")
  }
  throw new Error("PostgreSQL is not installed (Debian's postgresql package: apt-get install postgresql)")
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject()))
    })
  })

export const startPostgres = async (): Promise<PgCluster> => {
  const bin = binDir()
  const asRoot = process.getuid?.() === 0
  // As root the server runs as `postgres`, which must reach the folder: /tmp, not a TMPDIR that
  // may be below root's own home.
  const dir = mkdtempSync(join(asRoot ? "/tmp" : tmpdir(), "freecode-pg-"))
  const data = join(dir, "data")
  let uid: number | undefined
  if (asRoot) {
    uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim())
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim())
    chownSync(dir, uid, gid)
    chmodSync(dir, 0o700)
  }
  const run = (program: string, args: ReadonlyArray<string>) => {
    const command = asRoot ? "runuser" : join(bin, program)
    const argv = asRoot ? ["-u", "postgres", "--", join(bin, program), ...args] : [...args]
    const result = spawnSync(command, argv, { encoding: "utf8", timeout: 60_000, cwd: dir })
    if (result.status !== 0) throw new Error(`${program} failed: ${result.stderr || result.stdout}`)
    return result.stdout
  }
  run("initdb", ["-D", data, "-U", "freecode", "--auth=trust", "-E", "UTF8", "--no-sync"])
  const port = await freePort()
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`
  const start = () => run("pg_ctl", ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "-t", "60", "start"])
  const stop = () => run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "-t", "60", "stop"])
  start()
  run("createdb", ["-h", dir, "-p", String(port), "-U", "freecode", "freecode"])
  return {
    url: `postgres://freecode@127.0.0.1:${port}/freecode`,
    port,
    dir,
    psql: (sql) => run("psql", ["-h", dir, "-p", String(port), "-U", "freecode", "-d", "freecode", "-Atc", sql]),
    start,
    stop: () => {
      try {
        stop()
      } catch {
        // already stopped
      }
    }
  }
}

/** Stops the cluster and removes its folder. */
export const removePostgres = (cluster: PgCluster): void => {
  cluster.stop()
  rmSync(cluster.dir, { recursive: true, force: true })
}
