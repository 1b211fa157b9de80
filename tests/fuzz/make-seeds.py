#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the seed corpora of the fuzz targets to tests/fuzz/corpus/NAME/.

The seeds are small, readable inputs that already reach the interesting
parts of each target; libFuzzer mutates them.  Their byte layout is the one
each harness decodes (see the comment at the top of tests/fuzz/NAME.c).
Run it again after changing a harness's input format; commit the result.
Seeds that reproduce a past failure are named regress-* and are kept by hand.
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# classic BPF encoding
LD, LDX, ST, STX, ALU, JMP, RET, MISC = range(8)
W, IMM, ABS, MEM, LEN = 0x00, 0x00, 0x20, 0x60, 0x80
ADD, SUB, MUL, DIV, OR, AND, LSH, RSH, NEG, MOD, XOR = (
    0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xa0)
JA, JEQ, JGT, JGE, JSET = 0x00, 0x10, 0x20, 0x30, 0x40
K, X, A = 0x00, 0x08, 0x10
TAX, TXA = 0x00, 0x80


def insn(code, k=0, jt=0, jf=0):
    return struct.pack('<HBBI', code, jt, jf, k & 0xffffffff)


def ctx(opcode=0, flags=0, user_data=0, pdu=b''):
    """The 40-byte io_uring filter context (little-endian host)."""
    hdr = struct.pack('<QBBB5x', user_data, opcode, flags, len(pdu))
    return hdr + pdu.ljust(24, b'\0')


def socket_pdu(family, typ, proto):
    return struct.pack('<III', family, typ, proto)


def open_pdu(flags, mode=0, resolve=0):
    return struct.pack('<QQQ', flags, mode, resolve)


def write(target, name, data):
    d = os.path.join(HERE, 'corpus', target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data)


def cbpf_seed(name, prog, context=None, mode=0x00):
    write('cbpf', name, bytes([mode]) + (context or ctx()) + b''.join(prog))


def cbpf():
    ret = lambda k: insn(RET | K, k)
    cbpf_seed('allow-all', [ret(1)])
    cbpf_seed('deny-all', [ret(0)], mode=0x01)
    # deny NOP: the opcode byte is the low byte of the word at 8 (LE)
    cbpf_seed('deny-nop', [insn(LD | W | ABS, 8), insn(ALU | AND | K, 0xff),
                           insn(JMP | JEQ | K, 0, 0, 1), ret(0), ret(1)], ctx(opcode=0))
    cbpf_seed('socket-inet-only',
              [insn(LD | W | ABS, 16), insn(JMP | JEQ | K, 2, 0, 1), ret(0x7fffffff), ret(0)],
              ctx(45, pdu=socket_pdu(2, 1, 0)), mode=0x01)
    cbpf_seed('socket-stream-only',
              [insn(LD | W | ABS, 20), insn(ALU | AND | K, 0xf), insn(JMP | JEQ | K, 1, 1, 0),
               ret(0), ret(1)], ctx(45, pdu=socket_pdu(10, 0x80001, 6)))
    cbpf_seed('open-no-creat',
              [insn(LD | W | ABS, 16), insn(JMP | JSET | K, 0o100, 0, 1), ret(0), ret(1)],
              ctx(18, pdu=open_pdu(0o100 | 0o2, 0o644)))
    cbpf_seed('user-data-64bit',
              [insn(LD | W | ABS, 4), insn(JMP | JEQ | K, 0xdead, 0, 3), insn(LD | W | ABS, 0),
               insn(JMP | JGE | K, 0xbeef, 0, 1), ret(1), ret(0)],
              ctx(0, user_data=0x0000dead0000beef), mode=0x01)
    cbpf_seed('scratch-memory',
              [insn(LD | W | ABS, 0), insn(ST, 3), insn(LDX | W | IMM, 7), insn(STX, 15),
               insn(LDX | W | MEM, 3), insn(LD | W | MEM, 15), insn(ALU | ADD | X), insn(RET | A)],
              ctx(user_data=0x11223344))
    cbpf_seed('div-by-zero-x',
              [insn(LDX | W | IMM, 0), insn(LD | W | IMM, 10), insn(ALU | DIV | X), ret(1)])
    cbpf_seed('alu-all',
              [insn(LD | W | ABS, 36), insn(ALU | ADD | K, 5), insn(LDX | W | LEN),
               insn(ALU | MUL | X), insn(ALU | LSH | K, 3), insn(ALU | RSH | K, 1),
               insn(ALU | XOR | K, 0x5a5a), insn(ALU | NEG), insn(ALU | AND | K, 0xfff),
               insn(ALU | OR | K, 1), insn(ALU | SUB | X), insn(ALU | DIV | K, 3),
               insn(MISC | TAX), insn(ALU | LSH | X), insn(MISC | TXA), insn(ALU | RSH | X),
               insn(RET | A)], ctx(pdu=open_pdu(0, 0, 0x1234)), mode=0x21)
    cbpf_seed('jumps-x',
              [insn(LD | W | ABS, 8), insn(LDX | W | IMM, 45), insn(JMP | JEQ | X, 0, 0, 2),
               insn(JMP | JGT | X, 0, 1, 0), insn(JMP | JGE | X, 0, 0, 1),
               insn(JMP | JSET | X, 0, 0, 1), ret(1), ret(0)], ctx(45), mode=0x23)
    cbpf_seed('long-jump',
              [insn(JMP | JA, 300)] + [insn(LD | W | IMM, i) for i in range(300)] + [ret(2)])
    cbpf_seed('len-return', [insn(LD | W | LEN), insn(RET | A)], mode=0x02)
    # mode: bit 0 repair, bit 1 disassemble, bit 5 strict repair, high
    # nibble 0xf: seccomp's checker too
    cbpf_seed('strict-repair-seccomp', [insn(LD | W | ABS, 4 * i) for i in range(10)] +
              [insn(ALU | RSH | K, 7), insn(ST, 1), insn(LDX | W | MEM, 1), insn(ALU | MUL | X),
               insn(RET | A)], ctx(user_data=0x8000000180000001, pdu=open_pdu(0xfffffff, 7, 9)),
              mode=0xf3)
    cbpf_seed('disasm-any-opcode', [insn(LD | W | ABS, 16), insn(JMP | JGT | K, 9, 0, 1),
                                   ret(1), ret(0)], ctx(0xff), mode=0x02)
    # rejected by io_uring's checker (the generic one accepts them)
    cbpf_seed('bad-mod', [insn(LD | W | IMM, 5), insn(ALU | MOD | K, 3), insn(RET | A)])
    cbpf_seed('bad-byte-load', [insn(LD | 0x10 | ABS, 9), insn(RET | A)])
    cbpf_seed('bad-unaligned', [insn(LD | W | ABS, 6), insn(RET | A)])
    cbpf_seed('bad-past-end', [insn(LD | W | ABS, 40), insn(RET | A)])
    # rejected by both checkers
    cbpf_seed('bad-uninit-mem', [insn(LD | W | MEM, 2), insn(RET | A)])
    cbpf_seed('bad-div-zero-k', [insn(ALU | DIV | K, 0), ret(1)])
    cbpf_seed('bad-jump-out', [insn(JMP | JEQ | K, 0, 5, 0), ret(1)])
    cbpf_seed('bad-no-ret', [insn(LD | W | IMM, 1)])
    cbpf_seed('bad-too-long', [insn(LD | W | IMM, 1), ret(1)], mode=0xff)


def errors():
    def seed(name, err, length, known, opts=b''):
        write('errors', name, struct.pack('<iBB', err, length, known) + opts)
    seed('einval', -22, 64, 8, struct.pack('<Q', 16) + b'\0' * 8)
    seed('library-code-short', -4002, 10, 16, struct.pack('<Q', 24) + b'\0' * 8 + b'\1' + b'\0' * 7)
    seed('unknown-len0', 99999, 0, 0)
    seed('zero', 0, 8, 8, b'\3')


def ruleset():
    """Commands of tests/fuzz/ruleset.c: one byte (value % 11) and operands."""
    ALLOW_OP, OP_NAME, ALLOW_REG, REG_NAME, DENY_OPS, DENY_REGS, FLAGS, _, DUP, EXPORT, NULLS = \
        range(11)
    KV = {0: 0, '5.4': 1, '5.10': 2, '5.15': 3, '6.1': 4, '6.13': 5, '6.18': 6, '6.19': 7,
          '7.0': 8, '7.2': 9, '9.9': 10}

    def export(kver=0, rep=None, flags=None, op_last=None, reg_last=None, size=None):
        sel = 0x01
        ops = [KV[kver]]
        if op_last is not None:
            sel |= 0x04
            ops += list(struct.pack('<H', op_last))
        if reg_last is not None:
            sel |= 0x08
            ops += list(struct.pack('<H', reg_last))
        if flags is not None:
            sel |= 0x10
            ops.append(flags)
        if rep is not None:
            sel |= 0x20
            ops.append([8, 16, 48, 80, 96].index(rep))
        if size == 'small':           # sz = 16: kver and op_last only
            sel |= 0x40
            ops += [2, 1]
        elif size == 'tail':          # sz = 40 with a non-zero unknown byte
            sel |= 0x80
            ops += [0, 1]
        return [EXPORT, sel] + ops + [0]

    def seed(name, *cmds):
        write('ruleset', name, bytes(b for c in cmds for b in c))

    seed('read-write-fixed-file', [ALLOW_OP, 22], [ALLOW_OP, 23], [FLAGS, 0x10, 0x01],
         [ALLOW_REG, 0], export('6.18', rep=80), export('7.0'))
    seed('undecided-flags', [ALLOW_OP, 0], export(0), [FLAGS, 0, 0], export(0))
    seed('deny-all-register-split', [DENY_REGS], [ALLOW_OP, 0], [FLAGS, 0, 0], export('7.2'),
         export('6.18'))
    seed('deny-everything', [DENY_OPS], [DENY_REGS], export('5.10', rep=48), export('9.9'))
    seed('by-name', [OP_NAME, 22, 0], [OP_NAME, 45, 1], [OP_NAME, 18, 3], [REG_NAME, 0, 2],
         [REG_NAME, 12, 1], [OP_NAME, 0, 5, 4, ord('n'), ord('o'), ord('p'), 0], [FLAGS, 0, 0],
         export(0))
    seed('clamp-old-kernel', [ALLOW_OP, 64], [ALLOW_OP, 1], [ALLOW_REG, 37], [ALLOW_REG, 2],
         [FLAGS, 0x7f, 0], export('5.10', rep=80), export('6.1', rep=96), export('5.4'))
    seed('limits-and-gates', [ALLOW_OP, 3], [FLAGS, 0x04, 0x40], export(0, op_last=40, reg_last=20),
         export(0, flags=1), export('6.18', flags=2), export(0, flags=3),
         export(0, op_last=0x101))
    seed('options-sizes', [ALLOW_REG, 5], export(0, size='small'), export(0, size='tail'),
         export(0, rep=8), export(0, rep=16))
    seed('dup-and-nulls', [ALLOW_OP, 9], [FLAGS, 1, 2], [DUP, 0], [DUP, 1], [ALLOW_OP, 70],
         [ALLOW_REG, 45], [FLAGS | 0x80, 0, 0, 9], [NULLS], export(0))


def filter_():
    """Commands of tests/fuzz/filter.c (value % 8 selects; see the harness)."""
    F = {'user_data': 0, 'sqe_flags': 1, 'family': 2, 'type': 3, 'type_flags': 4,
         'type_raw': 5, 'protocol': 6, 'open_flags': 7, 'accmode': 8, 'mode': 9,
         'resolve': 10, 'c_family': 11, 'port': 12, 'addr4': 13, 'addr6': 14}
    OPS = {'eq': 1, 'ne': 2, 'lt': 3, 'le': 4, 'gt': 5, 'ge': 6, 'masked': 7, 'any': 8,
           'all': 9, 'none': 10, 'in_set': 11, 'not_in_set': 12, 'in_range': 13,
           'not_in_range': 14, 'prefix': 15, 'not_prefix': 16}
    OPC = {'socket': [0], 'openat': [1], 'openat2': [2], 'connect': [3], 'nop': [4],
           'op200': [6, 200]}

    def val(v):           # pick_value: "how" 4 reads a u64
        return [4] + list(struct.pack('<Q', v))

    def cmp(field, op, *operands):
        return [F[field], OPS[op] - 1] + [b for o in operands for b in o]

    def rule(opc, verdict, *cmps, defect=None):
        out = [0x80 if defect else 0] + OPC[opc] + [verdict, len(cmps)]
        out += [b for c in cmps for b in c]
        return out + (defect or [])

    def compile_(opc, max_insns=None):
        return [6] + OPC[opc] + ([7, max_insns - 1] if max_insns else [1])

    def seed(name, default, *cmds):
        write('filter', name, bytes([default] + [b for c in cmds for b in c]))

    seed('socket-inet-stream', 0,
         rule('socket', 1, cmp('family', 'eq', val(2)), cmp('type', 'eq', val(1))),
         compile_('socket'))
    seed('open-no-creat', 0, rule('openat', 0, cmp('open_flags', 'any', val(0o100))),
         [3] + OPC['openat'] + [1], rule('openat2', 1, cmp('accmode', 'le', val(1))),
         compile_('openat'), compile_('openat2'))
    seed('connect-v4', 0,
         rule('connect', 1, cmp('addr4', 'prefix', val(0x7f000001), [8])),
         rule('connect', 0, cmp('port', 'in_range', val(22), val(80))),
         rule('connect', 1, cmp('c_family', 'ne', val(2))), compile_('connect'))
    seed('connect-v6', 1,
         rule('connect', 0, [F['addr6'], 2] + [0xfe, 0x80] + [0] * 14 + [10]),
         rule('connect', 0, [F['addr6'], 0] + [0] * 15 + [1]), compile_('connect'))
    seed('sets-and-masks', 0,
         rule('socket', 0, cmp('protocol', 'in_set', [2], val(6), val(17), val(132))),
         rule('socket', 1, cmp('type_raw', 'masked', val(0x80800), val(0x800)),
              cmp('type_flags', 'none', val(0x80000))),
         rule('socket', 1, cmp('family', 'not_in_set', [0], val(1))), compile_('socket'))
    seed('generic-fields-any-opcode', 1,
         rule('nop', 0, cmp('user_data', 'gt', val(1 << 40)), cmp('sqe_flags', 'all', val(0x11))),
         rule('op200', 0, cmp('user_data', 'not_in_range', val(5), val(9))),
         [3] + OPC['op200'] + [0], compile_('nop'), compile_('op200', max_insns=3))
    seed('defects', 0,
         rule('socket', 1, cmp('family', 'eq', val(2)), defect=[2, 3]),
         rule('nop', 1, cmp('user_data', 'eq', val(1)), defect=[0, 5]),
         rule('openat', 1, cmp('mode', 'in_range', val(1), val(5)), defect=[4]),
         rule('connect', 1, cmp('port', 'lt', val(5)), defect=[6, 0]),
         rule('socket', 1, cmp('protocol', 'in_set', [0], val(6)), defect=[7, 0]))
    seed('raw-misuse-dup', 0,
         [4, 1] + OPC['nop'] + list(struct.pack('<HBBI', 0x00, 0, 0, 7)) +
         list(struct.pack('<HBBI', 0x16, 0, 0, 0)) + [0],
         rule('nop', 1), [3] + OPC['nop'] + [1], [5 | 0x40] + OPC['socket'] + [0, 0, 0],
         [5], compile_('nop'), compile_('nop', max_insns=1))


def plan():
    """Input of tests/fuzz/plan.c: parts, ruleset, filter, programs, attributes, level."""
    def attrs(**kv):          # attributes 1..7 in order; value = lo + byte
        order = ['target', 'compat', 'nnp', 'fallback', 'threads', 'companion', 'default']
        out = []
        for name in order:
            out += [1, kv[name]] if name in kv else [0]
        return out

    def seed(name, parts, body, level, **kv):
        write('plan', name, bytes([parts] + body + attrs(**kv) + [level]))

    ruleset = [3, 0, 45, 0, 0, 2, 0, 0]            # allow SOCKET, NOP; flags 0/0
    filt = [2, 0, 0, 0x80, 2, 0, 0x00, 1]          # family == 2 allow; NOP user_data == 1 deny
    progs = [2, 18, 4, 0x40, 1, 0, 0, 0, 0, 1]     # OPENAT ld [16] jeq; NOP ret #1
    seed('task-level5', 3, ruleset + filt, 5)
    seed('task-level4-progs', 5, ruleset + progs, 4, nnp=1)
    seed('ring-level2', 1, [2, 0, 22, 2, 0x10, 0], 2, target=1)
    seed('ring-level5-filters', 2, filt, 5, target=1, fallback=1)
    seed('companion-level3', 0, [], 3, companion=1)
    seed('soft-default-allow', 2, filt, 3, compat=1, default=1)
    seed('hard-level1', 1, ruleset, 1, compat=2)


def rules():
    """Input of tests/fuzz/rules.c: opcode pick, entry point, text."""
    SOCKET, CONNECT, OPENAT, OPENAT2 = 0, 1, 2, 3   # picks of the opcode table
    lists = [
        ('socket-inet', SOCKET, 'family==AF_INET,type==SOCK_STREAM'),
        ('socket-in', SOCKET, 'family in {AF_INET,AF_INET6},protocol!=IPPROTO_RAW'),
        ('socket-bits', SOCKET, 'type_flags any-bits SOCK_NONBLOCK|SOCK_CLOEXEC'),
        ('open-flags', OPENAT, 'flags & O_ACCMODE == O_RDONLY'),
        ('open-resolve', OPENAT2, 'resolve all-bits RESOLVE_BENEATH,mode<=0644'),
        ('connect-prefix', CONNECT, 'addr4 in 10.0.0.0/8,port==443'),
        ('connect-addr6', CONNECT, 'family==AF_INET6,addr6 in fe80::/10'),
        ('true', SOCKET, 'true'),
        ('bad-op', SOCKET, 'family=~AF_INET'),
    ]
    for name, op, text in lists:
        write('rules', 'list-' + name, bytes([op, 0]) + text.encode())
    ctxs = [
        ('socket', SOCKET, 'family=AF_INET,type=SOCK_STREAM,protocol=0'),
        ('open', OPENAT, 'flags=O_RDWR|O_CREAT,mode=0600'),
        ('connect', CONNECT, 'family=AF_INET,addr4=192.0.2.1,port=80'),
    ]
    for name, op, text in ctxs:
        write('rules', 'ctx-' + name, bytes([op, 1]) + text.encode())
    # a value: the pick selects the field (socket.family, open.flags, connect.addr4)
    for name, pick, text in [('family', 0, 'AF_UNIX'), ('flags', 4, 'O_CREAT|O_EXCL'),
                             ('addr4', 10, '198.51.100.7'), ('addr6', 11, '2001:db8::1')]:
        write('rules', 'value-' + name, bytes([pick, 2]) + text.encode())


TARGETS = {'cbpf': cbpf, 'errors': errors, 'ruleset': ruleset, 'filter': filter_, 'plan': plan,
           'rules': rules}

if __name__ == '__main__':
    for t in sys.argv[1:] or TARGETS:
        TARGETS[t]()
