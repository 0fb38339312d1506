// The seccomp program, run by a classic BPF interpreter written here from the kernel's semantics
// (the instructions the builder emits: load a word, jump if equal / greater or equal, return), so
// each verdict below is what the kernel would answer for that system call.
import assert from 'node:assert/strict';
import {
  AF_UNIX,
  AUDIT_ARCH,
  EAFNOSUPPORT,
  encodeFilter,
  EPERM,
  hostArch,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_KILL_PROCESS,
  SYSCALLS,
  unixSocketFilter,
  type Arch,
  type Insn,
} from '../../../src/runner/sandbox/bpf';

const ERRNO = (e: number): number => (0x00050000 | e) >>> 0;

/** struct seccomp_data as the filter reads it: nr, arch, then args[0]'s low and high words (little-endian). */
function run(prog: readonly Insn[], nr: number, arch: number, arg0 = 0n): number {
  const data = Buffer.alloc(64);
  data.writeInt32LE(nr, 0);
  data.writeUInt32LE(arch, 4);
  data.writeBigUInt64LE(arg0, 16);
  let a = 0;
  for (let pc = 0; pc < prog.length; pc++) {
    const i = prog[pc]!;
    if (i.code === 0x20) a = data.readUInt32LE(i.k);
    else if (i.code === 0x15) pc += a === i.k >>> 0 ? i.jt : i.jf;
    else if (i.code === 0x35) pc += a >= i.k >>> 0 ? i.jt : i.jf;
    else if (i.code === 0x06) return i.k >>> 0;
    else throw new Error(`unexpected instruction ${i.code.toString(16)}`);
  }
  throw new Error('fell off the end of the program');
}

describe('sandbox seccomp filter (bpf.ts)', () => {
  const prog = unixSocketFilter();
  const AF_INET = 2;
  const AF_INET6 = 10;
  const AF_NETLINK = 16;

  for (const arch of ['x86_64', 'aarch64', 'arm', 'i386'] as Arch[]) {
    const t = SYSCALLS[arch];
    const audit = AUDIT_ARCH[arch];
    it(`${arch}: socket(AF_UNIX) fails with EAFNOSUPPORT, other families pass`, () => {
      assert.equal(run(prog, t.socket, audit, BigInt(AF_UNIX)), ERRNO(EAFNOSUPPORT));
      for (const f of [AF_INET, AF_INET6, AF_NETLINK])
        assert.equal(run(prog, t.socket, audit, BigInt(f)), SECCOMP_RET_ALLOW);
    });
    it(`${arch}: io_uring and the kernel keyring are refused; ordinary calls pass`, () => {
      for (const nr of t.denied) assert.equal(run(prog, nr, audit), ERRNO(EPERM), `syscall ${nr}`);
      for (const nr of [0, 1, 2, 3, 56, 57, 59, 60, 231]) {
        if (nr === t.socket || t.denied.includes(nr) || nr === t.socketcall) continue;
        assert.equal(run(prog, nr, audit), SECCOMP_RET_ALLOW, `syscall ${nr}`);
      }
    });
  }

  it('x86_64: socketpair(AF_UNIX) stays allowed (Node gives every child its pipes with it)', () => {
    assert.equal(run(prog, 53, AUDIT_ARCH.x86_64, BigInt(AF_UNIX)), SECCOMP_RET_ALLOW);
  });

  it('reads the domain as the kernel does: an AF_UNIX hidden under high bits of the register is still refused', () => {
    assert.equal(run(prog, 41, AUDIT_ARCH.x86_64, (1n << 32n) | BigInt(AF_UNIX)), ERRNO(EAFNOSUPPORT));
  });

  it('i386: socketcall, whose arguments the filter cannot read, is refused', () => {
    assert.equal(run(prog, 102, AUDIT_ARCH.i386), ERRNO(EPERM));
  });

  it('x86_64: the x32 ABI (the same numbers with bit 30 set) is refused', () => {
    assert.equal(run(prog, 0x40000000 | 41, AUDIT_ARCH.x86_64, BigInt(AF_UNIX)), ERRNO(EPERM));
    assert.equal(run(prog, 0x40000000 | 0, AUDIT_ARCH.x86_64), ERRNO(EPERM));
  });

  it('an architecture it does not know is killed, never allowed', () => {
    for (const arch of [0xc00000f3 /* riscv64 */, 0x80000016 /* s390x */, 0])
      assert.equal(run(prog, 41, arch, BigInt(AF_UNIX)), SECCOMP_RET_KILL_PROCESS);
  });

  it('every jump lands inside the program and the program fits the kernel limit', () => {
    assert.ok(prog.length < 4096);
    prog.forEach((i, pc) => {
      if (i.code === 0x15 || i.code === 0x35) assert.ok(pc + 1 + Math.max(i.jt, i.jf) < prog.length, `jump at ${pc}`);
    });
    assert.equal(prog.at(-1)!.code, 0x06, 'ends with a return');
  });

  it('encodes struct sock_filter: u16 code, u8 jt, u8 jf, u32 k in the machine order', () => {
    const b = encodeFilter([{ code: 0x15, jt: 2, jf: 1, k: 0xc000003e }]);
    assert.deepEqual([...b], [0x15, 0x00, 2, 1, 0x3e, 0x00, 0x00, 0xc0]);
    const be = encodeFilter([{ code: 0x15, jt: 2, jf: 1, k: 0xc000003e }], false);
    assert.deepEqual([...be], [0x00, 0x15, 2, 1, 0xc0, 0x00, 0x00, 0x3e]);
    assert.equal(encodeFilter(prog).length, prog.length * 8);
  });

  it('names the architectures it filters, and none other', () => {
    assert.equal(hostArch('x64'), 'x86_64');
    assert.equal(hostArch('arm64'), 'aarch64');
    assert.equal(hostArch('riscv64'), null);
    assert.equal(hostArch('ia32'), null);
  });
});
