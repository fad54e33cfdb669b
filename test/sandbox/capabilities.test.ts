/**
 * A sandboxed command has no capabilities and cannot gain any, started by root (as here and in
 * CI, containers, dev containers) or by an ordinary user (`nobody`): each attack that worked as
 * root before is tried for real, and what it would have changed is checked on the host.
 */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { REFUSED_CALLS, seccompFilter } from "../../src/sandbox/seccomp.ts"
import { bubblewrap, cleanUp, folder, giveToNobody, hostBase, inside, runnable, users } from "./inside.ts"

afterAll(cleanUp)

const hostQueues = () => execFileSync("ipcs", ["-q"], { encoding: "utf8" })

describe.skipIf(!runnable)("inside the sandbox, no capabilities", () => {
  it("the probe found the filter and the user-namespace lock on this machine", () => {
    expect(bubblewrap).toBeDefined()
    if (seccompFilter() !== undefined) expect(bubblewrap?.seccomp).toBe(true)
  })

  for (const u of users) {
    it.skipIf(u.skip)(`as ${u.who}: no remount, no unmount, no new namespace, no capability`, () => {
      const root = folder("freecode-caps-root-", true)
      const home = folder("freecode-caps-home-", true)
      const tempDir = folder("freecode-caps-tmp-", true)
      NodeFs.mkdirSync(NodePath.join(home, ".ssh"))
      NodeFs.writeFileSync(NodePath.join(home, ".ssh", "id_ed25519"), "PRIVATE KEY\n", { mode: 0o644 })
      NodeFs.mkdirSync(NodePath.join(home, ".aws"))
      NodeFs.writeFileSync(NodePath.join(home, ".aws", "credentials"), "aws_secret=hunter2\n", { mode: 0o644 })
      if (u.asNobody) for (const d of [root, home, tempDir]) giveToNobody(d)
      const tag = NodePath.basename(root)
      const etc = `/etc/freecode-pwn-${tag}`
      const varTmp = `${hostBase}/freecode-pwn-${tag}`
      const queuesBefore = hostQueues()
      const { output } = inside(
        [
          "grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status",
          "mount -o remount,rw / && echo PWN-remount-root",
          `touch ${etc} && echo PWN-etc`,
          `touch ${varTmp} && echo PWN-var-tmp`,
          "umount /proc && echo PWN-umount-proc",
          "umount -l /proc && echo PWN-umount-proc-lazy",
          "mount -o remount,rw /proc/sys && echo PWN-proc-sys",
          "echo 1 > /proc/sys/kernel/ns_last_pid && echo PWN-proc-sys-write",
          `umount ${home}/.ssh; umount -l ${home}/.ssh; cat ${home}/.ssh/id_ed25519`,
          `umount ${home}/.aws/credentials; cat ${home}/.aws/credentials`,
          "mount -t tmpfs none /mnt && echo PWN-mount",
          "unshare -r true && echo PWN-unshare-r",
          "unshare -m true && echo PWN-unshare-m",
          "unshare -U true && echo PWN-unshare-U",
          "unshare -n true && echo PWN-unshare-n",
          // clone(2) with CLONE_NEWUSER (and SIGCHLD): the namespace flag without unshare(2).
          `command -v python3 >/dev/null && python3 -c 'import ctypes, os, platform
nr = {"x86_64": 56, "aarch64": 220}.get(platform.machine())
if nr is not None:
    r = ctypes.CDLL(None, use_errno=True).syscall(nr, 0x10000000 | 17, 0, 0, 0, 0)
    if r == 0: os._exit(0)
    if r > 0: os.waitpid(r, 0); print("PWN-clone-newuser")'`,
          "ipcmk -Q",
          "ipcs -q | grep -c '^0x' || true",
          "echo done"
        ].join("\n"),
        { root, home, tempDir, asNobody: u.asNobody }
      )
      expect(output).toContain("done")
      expect(output).not.toMatch(/PWN-/)
      expect(output).not.toContain("PRIVATE KEY")
      expect(output).not.toContain("hunter2")
      for (const cap of ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"])
        expect(output).toMatch(new RegExp(`${cap}:\\s+0000000000000000\\n`))
      expect(output).toMatch(/NoNewPrivs:\s+1/)
      if (bubblewrap?.seccomp === true) expect(output).toMatch(/Seccomp:\s+2/)
      expect(NodeFs.existsSync(etc)).toBe(false)
      expect(NodeFs.existsSync(varTmp)).toBe(false)
      // The message queue was made in the sandbox's own IPC namespace, gone with it.
      expect(output).toContain("Message queue id")
      expect(hostQueues()).toBe(queuesBefore)
    })
  }

  it("the filter names what it refuses", () => {
    for (const name of ["mount", "umount2", "unshare", "setns", "ptrace", "keyctl", "bpf", "io_uring_setup"])
      expect(REFUSED_CALLS).toContain(name)
    // Another architecture gets no filter rather than a wrong one.
    expect(seccompFilter("riscv64")).toBeUndefined()
    expect(seccompFilter("x64")?.length).toBeGreaterThan(0)
    expect(seccompFilter("arm64")?.length).toBeGreaterThan(0)
  })
})
