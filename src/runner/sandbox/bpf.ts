// The seccomp program bubblewrap loads before it starts a sandboxed command (`--seccomp FD`): a
// classic BPF filter, written here instead of shipping a compiled one. A read-only bind or a
// network namespace does not stop a process from connecting to a unix socket that is visible in
// the file system (docker.sock, an ssh-agent, VS Code's git askpass), so creating one is refused.
// socketpair() stays allowed: its two ends reach nothing that already exists, and Node and libuv
// use it for every child's pipes. io_uring is refused because its operations (a socket among
// them) do not pass through this filter; the kernel keyring because it is not namespaced.
// The filter checks the architecture first, so a 32-bit program cannot call the same number with
// another meaning; an unknown architecture is killed.

/** seccomp_data offsets (include/uapi/linux/seccomp.h). */
const NR = 0;
const ARCH = 4;
/** The low 32 bits of args[0] on a little-endian machine: the kernel reads `int domain` from them. */
const ARG0_LOW = 16;

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_RET_K = 0x06;

export const SECCOMP_RET_KILL_PROCESS = 0x80000000;
export const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;

export const EPERM = 1;
/** What a kernel without unix sockets answers: programs print "Address family not supported by protocol". */
export const EAFNOSUPPORT = 97;
export const AF_UNIX = 1;

export const AUDIT_ARCH = {
  x86_64: 0xc000003e,
  i386: 0x40000003,
  aarch64: 0xc00000b7,
  arm: 0x40000028,
} as const;
export type Arch = keyof typeof AUDIT_ARCH;

/** x32 system calls reach the x86_64 table with this bit set: refused, nobody builds for x32. */
const X32_SYSCALL_BIT = 0x40000000;

interface ArchTable {
  socket: number;
  /** i386 multiplexes the socket calls; its arguments are in memory the filter cannot read. */
  socketcall?: number;
  denied: number[];
}

/** io_uring_setup/enter/register have the same numbers everywhere (425–427). */
const IO_URING = [425, 426, 427];

/** Syscall numbers (arch/x86/entry/syscalls, include/uapi/asm-generic/unistd.h, arch/arm/tools/syscall.tbl). */
export const SYSCALLS: Record<Arch, ArchTable> = {
  x86_64: { socket: 41, denied: [...IO_URING, 248, 249, 250] },
  i386: { socket: 359, socketcall: 102, denied: [...IO_URING, 286, 287, 288] },
  aarch64: { socket: 198, denied: [...IO_URING, 217, 218, 219] },
  arm: { socket: 281, denied: [...IO_URING, 309, 310, 311] },
};

/** One instruction of a classic BPF program (struct sock_filter). */
export interface Insn {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

type Op = { insn: Insn } | { jeq: number; to: string } | { jge: number; to: string } | { label: string };

const ret = (k: number): Op => ({ insn: { code: BPF_RET_K, jt: 0, jf: 0, k } });
const load = (offset: number): Op => ({ insn: { code: BPF_LD_W_ABS, jt: 0, jf: 0, k: offset } });
const errno = (e: number): number => SECCOMP_RET_ERRNO | e;

/** The filter as instructions: arch dispatch, then each architecture's numbers. */
export function unixSocketFilter(): Insn[] {
  const arches = Object.keys(AUDIT_ARCH) as Arch[];
  const ops: Op[] = [load(ARCH)];
  for (const a of arches) ops.push({ jeq: AUDIT_ARCH[a], to: a });
  ops.push(ret(SECCOMP_RET_KILL_PROCESS));
  for (const a of arches) {
    const t = SYSCALLS[a];
    ops.push({ label: a }, load(NR));
    if (a === 'x86_64') ops.push({ jge: X32_SYSCALL_BIT, to: 'deny' });
    ops.push({ jeq: t.socket, to: `${a}.socket` });
    for (const nr of [...(t.socketcall === undefined ? [] : [t.socketcall]), ...t.denied])
      ops.push({ jeq: nr, to: 'deny' });
    ops.push(ret(SECCOMP_RET_ALLOW));
    ops.push({ label: `${a}.socket` }, load(ARG0_LOW), { jeq: AF_UNIX, to: 'unix' }, ret(SECCOMP_RET_ALLOW));
  }
  ops.push({ label: 'unix' }, ret(errno(EAFNOSUPPORT)), { label: 'deny' }, ret(errno(EPERM)));
  return assemble(ops);
}

/** Resolves the labels to forward jump offsets (classic BPF only jumps forward, at most 255). */
function assemble(ops: Op[]): Insn[] {
  const at = new Map<string, number>();
  let n = 0;
  for (const op of ops) {
    if ('label' in op) at.set(op.label, n);
    else n++;
  }
  const out: Insn[] = [];
  for (const op of ops) {
    if ('label' in op) continue;
    if ('insn' in op) {
      out.push(op.insn);
      continue;
    }
    const target = at.get(op.to);
    const jt = target === undefined ? -1 : target - out.length - 1;
    if (jt < 0 || jt > 255) throw new Error(`seccomp filter: jump to ${op.to} out of range`);
    const code = 'jeq' in op ? BPF_JEQ_K : BPF_JGE_K;
    out.push({ code, jt, jf: 0, k: 'jeq' in op ? op.jeq : op.jge });
  }
  return out;
}

/** The program as bubblewrap reads it: struct sock_filter[] in the machine's byte order. */
export function encodeFilter(insns: readonly Insn[], littleEndian = true): Buffer {
  const b = Buffer.alloc(insns.length * 8);
  insns.forEach((i, n) => {
    const o = n * 8;
    if (littleEndian) b.writeUInt16LE(i.code, o);
    else b.writeUInt16BE(i.code, o);
    b.writeUInt8(i.jt, o + 2);
    b.writeUInt8(i.jf, o + 3);
    if (littleEndian) b.writeUInt32LE(i.k >>> 0, o + 4);
    else b.writeUInt32BE(i.k >>> 0, o + 4);
  });
  return b;
}

/** The machine's architecture as the kernel names it in seccomp_data, or null where the sandbox has no filter. */
export function hostArch(arch: string = process.arch): Arch | null {
  return arch === 'x64' ? 'x86_64' : arch === 'arm64' ? 'aarch64' : null;
}
