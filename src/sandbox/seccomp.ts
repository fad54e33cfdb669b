/**
 * The system-call filter every sandboxed command runs under on Linux: a classic BPF program,
 * built here as bytes and handed to bubblewrap (`--seccomp FD`), which loads it last, after its
 * own mounts, with no_new_privs set. It refuses (EPERM) what would let a command change the
 * sandbox's own shape or reach the kernel's less-guarded corners: mounting and unmounting,
 * new namespaces (`unshare`, `setns`, `clone` with a namespace flag), `ptrace`, the kernel
 * keyrings, BPF and perf, module and kexec loading, file handles, userfaultfd and io_uring (whose
 * operations bypass any system-call filter). `clone3` answers ENOSYS, so the C library falls back
 * to `clone`, whose flags the filter can see. Calls of another ABI on the same kernel (32-bit
 * x86, x32, 32-bit ARM) are refused whole: their numbers differ, and a filter that checked one
 * table would let the other through.
 *
 * Only the two architectures whose tables are written below get a filter; elsewhere
 * `seccompFilter` answers undefined and the sandbox says it runs without one (capabilities are
 * dropped and user namespaces refused all the same).
 */

/** Linux's audit architecture values (linux/audit.h). */
const AUDIT_ARCH = { x64: 0xc000003e, arm64: 0xc00000b7 } as const

type Arch = keyof typeof AUDIT_ARCH

/** The refused calls, by name, with their numbers in each table (x86_64 and the generic one aarch64 uses). */
const REFUSED: ReadonlyArray<readonly [name: string, x64: number, arm64: number]> = [
  ["mount", 165, 40],
  ["umount2", 166, 39],
  ["pivot_root", 155, 41],
  ["chroot", 161, 51],
  ["unshare", 272, 97],
  ["setns", 308, 268],
  ["ptrace", 101, 117],
  ["process_vm_writev", 311, 271],
  ["keyctl", 250, 219],
  ["add_key", 248, 217],
  ["request_key", 249, 218],
  ["bpf", 321, 280],
  ["perf_event_open", 298, 241],
  ["kexec_load", 246, 104],
  ["kexec_file_load", 320, 294],
  ["init_module", 175, 105],
  ["finit_module", 313, 273],
  ["delete_module", 176, 106],
  ["name_to_handle_at", 303, 264],
  ["open_by_handle_at", 304, 265],
  ["userfaultfd", 323, 282],
  ["io_uring_setup", 425, 425],
  ["io_uring_enter", 426, 426],
  ["io_uring_register", 427, 427],
  ["open_tree", 428, 428],
  ["move_mount", 429, 429],
  ["fsopen", 430, 430],
  ["fsconfig", 431, 431],
  ["fsmount", 432, 432],
  ["fspick", 433, 433],
  ["mount_setattr", 442, 442]
]

const CLONE = { x64: 56, arm64: 220 } as const
const CLONE3 = 435
/** CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET. */
const CLONE_NAMESPACES = 0x7e020000
/** x32 system calls are x86_64's with this bit set. */
const X32_BIT = 0x40000000

const EPERM = 1
const ENOSYS = 38
const RET_ALLOW = 0x7fff0000
const retErrno = (errno: number) => 0x00050000 | errno

// Classic BPF opcodes (linux/filter.h).
const LD_W_ABS = 0x20
const JEQ_K = 0x15
const JGE_K = 0x35
const JSET_K = 0x45
const RET_K = 0x06

// struct seccomp_data: nr at 0, arch at 4, args[0] at 16 (its low half on a little-endian CPU).
const NR = 0
const ARCH = 4
const ARG0_LOW = 16

type Insn = readonly [code: number, jt: number, jf: number, k: number]

const program = (arch: Arch): Array<Insn> => {
  const which = arch === "x64" ? 1 : 2
  const refused = REFUSED.map((r) => r[which] as number)
  const deny: Insn = [RET_K, 0, 0, retErrno(EPERM)]
  const insns: Array<Insn> = [
    [LD_W_ABS, 0, 0, ARCH],
    [JEQ_K, 1, 0, AUDIT_ARCH[arch]],
    deny, // another ABI
    [LD_W_ABS, 0, 0, NR]
  ]
  if (arch === "x64") insns.push([JGE_K, 0, 1, X32_BIT], deny)
  // Each refused number jumps to the shared EPERM at the end; the offset counts down as we go.
  const tail = 6 // clone3's two, clone's three, allow
  refused.forEach((nr, i) => {
    insns.push([JEQ_K, refused.length - i - 1 + tail, 0, nr])
  })
  insns.push(
    [JEQ_K, 0, 1, CLONE3],
    [RET_K, 0, 0, retErrno(ENOSYS)],
    [JEQ_K, 0, 2, CLONE[arch]],
    [LD_W_ABS, 0, 0, ARG0_LOW],
    [JSET_K, 1, 0, CLONE_NAMESPACES],
    [RET_K, 0, 0, RET_ALLOW],
    deny
  )
  return insns
}

/** The architecture this Node runs on, as the filter names it; undefined where none is written. */
export const filterArch = (arch: string = process.arch): Arch | undefined =>
  arch === "x64" ? "x64" : arch === "arm64" ? "arm64" : undefined

/** The filter as bytes (struct sock_filter, little-endian), or undefined on another architecture. */
export const seccompFilter = (arch: string = process.arch): Buffer | undefined => {
  const a = filterArch(arch)
  if (a === undefined) return undefined
  const insns = program(a)
  const out = Buffer.alloc(insns.length * 8)
  insns.forEach(([code, jt, jf, k], i) => {
    out.writeUInt16LE(code, i * 8)
    out.writeUInt8(jt, i * 8 + 2)
    out.writeUInt8(jf, i * 8 + 3)
    out.writeUInt32LE(k >>> 0, i * 8 + 4)
  })
  return out
}

/** The refused calls' names, for the docs and the tests. */
export const REFUSED_CALLS: ReadonlyArray<string> = [...REFUSED.map((r) => r[0]), "clone (with a namespace flag)"]
