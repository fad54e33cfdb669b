import { describe, expect, it } from "vitest"
import {
  hasRealCtime,
  isOnLocalMount,
  type Mount,
  mountOf,
  parseMountInfo,
  readMountTable
} from "../../src/fs/local-mounts.ts"

const MOUNTINFO = [
  "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw",
  "30 22 0:25 / /home rw shared:2 - nfs4 server:/home rw,vers=4.2",
  "31 30 8:2 / /home/me/local\\040disk rw shared:3 - xfs /dev/sdb1 rw",
  "32 22 0:30 / /mnt/sshfs rw - fuse.sshfs me@host:/ rw",
  "33 22 0:31 / /tmp rw - tmpfs tmpfs rw",
  "34 22 0:5 / /proc rw - proc proc rw",
  "35 22 8:17 / /media/usb rw - vfat /dev/sdc1 rw",
  ""
].join("\n")

describe("local mounts", () => {
  const table = parseMountInfo(MOUNTINFO)

  it("a path is on the mount with the longest matching mount point", () => {
    expect(isOnLocalMount("/usr/lib/x.so", table)).toBe(true)
    expect(isOnLocalMount("/home/me/project/a.ts", table)).toBe(false)
    expect(isOnLocalMount("/home/me/local disk/a.ts", table)).toBe(true)
    expect(isOnLocalMount("/tmp/x", table)).toBe(true)
  })

  it("network and FUSE mounts are not local; a name that only shares a prefix is not under a mount", () => {
    expect(isOnLocalMount("/mnt/sshfs/x", table)).toBe(false)
    expect(isOnLocalMount("/mnt/sshfsx/y", table)).toBe(true)
    expect(isOnLocalMount("/homework/a", table)).toBe(true)
  })

  it("proc is not local: some of its files block on read", () => {
    expect(isOnLocalMount("/proc/kmsg", table)).toBe(false)
    // On this machine's own mount table too.
    expect(isOnLocalMount("/proc/self/status", readMountTable())).toBe(false)
  })

  it("only a local file system whose kernel keeps the ctime counts as having a real one", () => {
    expect(hasRealCtime("/usr/lib/x.so", table)).toBe(true)
    expect(hasRealCtime("/tmp/x", table)).toBe(true)
    expect(isOnLocalMount("/media/usb/a.txt", table)).toBe(true)
    expect(hasRealCtime("/media/usb/a.txt", table)).toBe(false)
    expect(hasRealCtime("/home/me/project/a.ts", table)).toBe(false)
    expect(hasRealCtime("/proc/self/status", table)).toBe(false)
    expect(hasRealCtime("/usr/lib/x.so", [])).toBe(false)
  })

  it("finds the same mount as a scan of the whole table, longest mount point first", () => {
    const nested = parseMountInfo(
      [
        MOUNTINFO,
        "40 22 0:40 / /home/me/local\\040disk/inner rw - nfs4 s:/x rw",
        "41 22 0:41 / /dev rw - devtmpfs udev rw",
        "42 41 0:42 / /dev/shm rw - tmpfs tmpfs rw",
        "43 22 8:3 / / rw - xfs /dev/sdd1 rw",
        ""
      ].join("\n")
    )
    const scan = (path: string, table: ReadonlyArray<Mount>) =>
      table.find(
        (m) => m.point === "/" || path === m.point || (path.startsWith(m.point) && path[m.point.length] === "/")
      )
    const paths = [
      "/",
      "/usr",
      "/home",
      "/home/",
      "/homework/a",
      "/home/me/local disk",
      "/home/me/local disk/inner/a",
      "/home/me/local disk/innerx",
      "/dev/shm/x",
      "/dev/shmx",
      "/devx/shm",
      "/mnt/sshfs",
      "/mnt/sshfs/a/b",
      "/tmp",
      "/media/usb/a.txt"
    ]
    for (const t of [table, nested]) {
      for (const path of paths) expect({ path, mount: mountOf(path, t) }).toEqual({ path, mount: scan(path, t) })
    }
    expect(mountOf("/home/me/local disk/inner/a", nested)?.local).toBe(false)
  })

  it("with no mount table nothing is local", () => {
    expect(isOnLocalMount("/usr/lib/x.so", [])).toBe(false)
  })
})
