# SPDX-License-Identifier: MIT
"""The Pythonic layer: handles, builders, dataclasses."""
import contextlib
import ctypes
import dataclasses
import enum
import errno
import os
import threading
from ctypes import byref, c_int, c_int32, c_size_t, c_uint8, c_uint32, c_void_p
from typing import List, Optional, Tuple

from . import _lib, _uring
from .enums import (Avail, CmpOp, Compat, Companion, DecideReason, DefaultVerdict, Fallback, Nnp, Threads, DecisionKind, DisasmFormat, ErrorCode, Expect, FeatureLevel, FeaturesFlag, Field, LimitsSource, Mechanism, Op, PolicyAttr,
                    ProgKind, Reason, RegisterOp, Reject, ReportFlag, SqeFlag, Status, StepOp, StepSide, Target, Verdict, VerifyStatus)
from .errors import UnknownNameError, error_from_code

# BEGIN GENERATED py-api-consts: scripts/gen-bindings.py (make generate), do not edit
CTX_SIZE = 40
OPCODE_ANY = 0xFFFFFFFF
DISASM_SECCOMP = 1 << 8
RING_APPLY_NO_ENABLE = 1 << 0
VERIFY_RING_FD = 1 << 0
PROBE_NO_CACHE = 1 << 0
PROBE_REFRESH = 1 << 1
PLAN_FORCE_LEVEL = 1 << 0
PLAN_BROKERED = 1 << 1
FILTER_ADDR4_LITERAL = 1 << 0
# END GENERATED py-api-consts


# ---- handle argument types: from_param accepts only a live handle of the
# right class (a closed one raises ValueError, anything else TypeError), so
# no stray integer or object ever reaches the library as a pointer.
def _handle_type(pyname):
    class _T(c_void_p):
        @classmethod
        def from_param(cls, obj):
            if isinstance(obj, cls):  # a raw pointer the handle itself passes (its free)
                return obj
            want = _HANDLE_CLASSES[pyname]
            if not isinstance(obj, want):
                raise TypeError("expected a %s, got %s" % (want.__name__, type(obj).__name__))
            return obj._live()
    _T.__name__ = pyname + "_p"
    return _T


_HANDLE_CLASSES = {}
_HANDLE_TYPES = {n: _handle_type(n) for n in ("ruleset", "filter", "prog", "policy", "plan",
                                               "broker")}

class _CheckedLib:
    """The loaded library with every function declared; a handle argument
    is checked in Python before the call (TypeError for anything but a
    live handle of the right class, ValueError for a closed one), so the
    error is the plain exception rather than ctypes.ArgumentError.
    Pointer arguments other than handles (reports, buffers) are unchecked:
    prefer the classes of this module."""

    def __init__(self, raw):
        self._raw = raw
        self._name = raw._name
        for name, (_, args) in _lib.FUNCS.items():
            setattr(self, name, self._wrap(getattr(raw, name), name, args))

    @staticmethod
    def _wrap(f, name, args):
        checks = [(i, a) for i, a in enumerate(args) if isinstance(a, str)]
        ints = [(i, a) for i, a in enumerate(args)
                if not isinstance(a, str) and _lib.int_range(a) is not None]
        if not checks and not ints:
            return f

        def call(*a):
            for i, t in ints:
                if i < len(a):
                    _lib.check_int(t, a[i], "%s: argument %d" % (name, i + 1))
            held = []
            try:
                for i, kind in checks:
                    if i < len(a):
                        want = _HANDLE_CLASSES[kind]
                        if not isinstance(a[i], want):
                            raise TypeError("%s: argument %d must be a %s, not %s"
                                            % (name, i + 1, want.__name__, type(a[i]).__name__))
                        # A reference for the duration of the call: ctypes
                        # releases the GIL, and a close() from another
                        # thread meanwhile must not free the object under
                        # the library (it is freed when the call returns).
                        a[i]._acquire()
                        held.append(a[i])
                return f(*a)
            finally:
                for h in held:
                    h._release()
        call.__name__ = name
        return call


_raw = _lib.load()
_lib.declare(_raw, _HANDLE_TYPES)
LAYOUT = _lib.layout_table(_raw)
_lib.check_layout(LAYOUT)
lib = _CheckedLib(_raw)


def _check(rc, fn):
    if rc < 0:
        raise error_from_code(rc, fn, lib)
    return rc


def _s(b):
    return None if b is None else b.decode()


def _int(x, what):
    """An int (TypeError otherwise); its range is checked where it meets
    its C type (a function argument, a struct field)."""
    if isinstance(x, bool) or not isinstance(x, int):
        raise TypeError("%s must be an int, not %s" % (what, type(x).__name__))
    return int(x)


def _u32(x, what):
    """An int in [0, 2**32) (TypeError / OverflowError otherwise)."""
    return _lib.check_int(c_uint32, x, what)


def _u64(x, what):
    return _lib.check_int(ctypes.c_uint64, x, what)


def _not_enum_of(x, kinds, what):
    """An IntEnum of another kind than ``what`` takes is a TypeError, never
    its number (SqeFlag.ASYNC is not opcode 4)."""
    if isinstance(x, enum.Enum) and not isinstance(x, kinds):
        raise TypeError("%s must be %s, an int or a name, not %s.%s"
                        % (what, " or ".join(k.__name__ for k in kinds),
                           type(x).__name__, x.name))


def _verdict(v) -> int:
    _not_enum_of(v, (Verdict,), "a verdict")
    return _u32(v, "verdict")


# enum iour_name_kind, per name-lookup function
# BEGIN GENERATED py-name-kinds: scripts/gen-bindings.py (make generate), do not edit
NAME_OPCODE = 0
NAME_REGISTER_OP = 1
NAME_SQE_FLAG = 2
# END GENERATED py-name-kinds
_NAME_KIND = {"iour_opcode_from_name": (NAME_OPCODE, "request opcode"),
              "iour_register_op_from_name": (NAME_REGISTER_OP, "register opcode"),
              "iour_sqe_flag_from_name": (NAME_SQE_FLAG, "SQE flag"),
              "iour_ruleset__allow_sqe_op_name": (0, "request opcode"),
              "iour_ruleset__allow_register_op_name": (1, "register opcode")}


def _unknown_name(rc, fn, name):
    """The error for a name lookup that failed: UnknownNameError naming the
    value and the nearest valid name when it is ENOENT."""
    if rc != -2 or fn not in _NAME_KIND:
        return error_from_code(rc, fn, lib)
    kind, what = _NAME_KIND[fn]
    near = lib.iour_name_suggest(kind, name.encode())
    near = near.decode() if near else None
    msg = "unknown %s %r" % (what, name)
    if near:
        msg += " (did you mean %r?)" % near
    e = UnknownNameError(2, msg)
    e.errname, e.function, e.name, e.suggestion = "-ENOENT", fn, name, near
    return e


def _check_name(rc, fn, name):
    if rc < 0:
        raise _unknown_name(rc, fn, name)
    return rc


def _table_words(kinds):
    """"the library's request-opcode table is 0..64 (NOP .. URING_CMD128)"
    for an opcode enum, for messages; None for others."""
    if kinds and kinds[0] in (Op, RegisterOp):
        first, last = min(kinds[0]), max(kinds[0])
        return "the library's %s table is %d..%d (%s .. %s)" % (
            "request-opcode" if kinds[0] is Op else "register-opcode",
            first, last, first.name, last.name)
    return None


def _name_or_number(x, from_name, what, kinds=()):
    """An int (or IntEnum of one of ``kinds``) as is, range-checked; a str
    through the library's name table; anything else TypeError.  A number
    no C argument can hold (-1, 2**32) is an OverflowError that names it
    and, for opcodes, the library's table."""
    if isinstance(x, str):
        return _check_name(from_name(x.encode()), from_name.__name__, x)
    _not_enum_of(x, kinds, what)
    words = _table_words(kinds)
    if words and isinstance(x, int) and not isinstance(x, bool) and not 0 <= x < 1 << 32:
        raise OverflowError("%s %d: %s" % (what, x, words))
    return _u32(x, what)


def opcode(x) -> int:
    """The request opcode of ``x``: an int, an :class:`Op`, or a name
    ("READ", "IORING_OP_READ", any case)."""
    return _name_or_number(x, lib.iour_opcode_from_name, "opcode", (Op,))


def register_op(x) -> int:
    """The register opcode of ``x`` (int, :class:`RegisterOp` or name)."""
    return _name_or_number(x, lib.iour_register_op_from_name, "register opcode", (RegisterOp,))


def sqe_flag(x) -> int:
    """An SQE flag mask from an int, an :class:`SqeFlag`, a name, or an
    iterable of those."""
    if isinstance(x, (list, tuple, set, frozenset)):
        m = 0
        for f in x:
            m |= sqe_flag(f)
        return m
    return _name_or_number(x, lib.iour_sqe_flag_from_name, "SQE flag", (SqeFlag,))


# ---- version, errors, names
def version() -> str:
    return lib.iour_version_string().decode()


def version_info() -> Tuple[int, int, int]:
    return (lib.iour_version_major(), lib.iour_version_minor(), lib.iour_version_patch())


def strerror(err: int) -> str:
    """The library's message for an error code (negative or positive)."""
    return lib.iour_strerror_desc(_int(err, "err")).decode()


def errname(err: int) -> str:
    return lib.iour_errname(_int(err, "err")).decode()


def opcode_name(op) -> Optional[str]:
    return _s(lib.iour_opcode_name(opcode(op)))


def register_op_name(op) -> Optional[str]:
    return _s(lib.iour_register_op_name(register_op(op)))


def sqe_flag_name(flag) -> Optional[str]:
    return _s(lib.iour_sqe_flag_name(sqe_flag(flag)))


def kver(major: int, minor: int) -> int:
    """IOUR_KVER(major, minor)."""
    return ((_lib.check_int(ctypes.c_uint16, major, "major") << 16)
            | (_lib.check_int(c_uint8, minor, "minor") << 8))


def opcode_since(op) -> Tuple[int, int]:
    v = _check(lib.iour_opcode_since(opcode(op)), "iour_opcode_since")
    return (v >> 16, (v >> 8) & 0xff)


def opcodes_up_to(kv: int) -> List[Op]:
    n = _check(lib.iour_opcodes_up_to(_u32(kv, "kver"), None, 0), "iour_opcodes_up_to")
    buf = (c_uint32 * max(n, 1))()
    n = _check(lib.iour_opcodes_up_to(kv, buf, n), "iour_opcodes_up_to")
    return [Op(buf[i]) for i in range(n)]


# ---- cBPF
@dataclasses.dataclass(frozen=True)
class Insn:
    """One classic-BPF instruction (struct iour_insn)."""
    code: int
    jt: int
    jf: int
    k: int


def _insn_array(insns):
    insns = list(insns)
    arr = (_lib.iour_insn * max(len(insns), 1))()
    for i, x in enumerate(insns):
        if isinstance(x, Insn):
            x = (x.code, x.jt, x.jf, x.k)
        if isinstance(x, tuple) and len(x) == 4:
            # range-checked: jt=257 is not jt=1
            arr[i] = _lib.opts(_lib.iour_insn, code=x[0], jt=x[1], jf=x[2], k=x[3])
        else:
            raise TypeError("an instruction must be an Insn or a 4-tuple, not %s"
                            % type(x).__name__)
    return arr, len(insns)


@dataclasses.dataclass(frozen=True)
class ValidateInfo:
    ok: bool
    insn: int
    reason: Reject
    message: str


def cbpf_validate(insns, generic_only=False) -> ValidateInfo:
    """Checks a program with the kernel's rules; never raises for a bad
    program (see ``ok``), only for bad arguments."""
    arr, n = _insn_array(insns)
    info = _lib.opts(_lib.iour_validate_info)
    rc = lib.iour_cbpf_validate(arr, n, 1 if generic_only else 0, byref(info))
    if rc < 0 and rc != -ErrorCode.INVALID_PROG:
        _check(rc, "iour_cbpf_validate")
    return ValidateInfo(rc == 0, info.insn, Reject(info.reason),
                        lib.iour_cbpf_reject_str(info.reason).decode())


@dataclasses.dataclass(frozen=True)
class SimResult:
    """What a program returned on a context (struct iour_sim_result)."""
    retval: int
    executed: int
    allowed: bool


def cbpf_run(insns, ctx: bytes) -> SimResult:
    """Runs a program on a 40-byte filter context in the library's
    simulator."""
    if not isinstance(ctx, (bytes, bytearray)):
        raise TypeError("ctx must be bytes, not %s" % type(ctx).__name__)
    arr, n = _insn_array(insns)
    c = (c_uint8 * max(len(ctx), 1)).from_buffer_copy(bytes(ctx) or b"\0")
    r = _lib.opts(_lib.iour_sim_result)
    _check(lib.iour_cbpf_run(arr, n, c, len(ctx), byref(r)), "iour_cbpf_run")
    return SimResult(r.retval, r.executed, bool(r.allowed))


def ctx_socket(family: int, type: int, protocol: int = 0, sqe_flags: int = 0,
               user_data: int = 0) -> bytes:
    """The filter context of an IORING_OP_SOCKET request."""
    c = (c_uint8 * CTX_SIZE)()
    _check(lib.iour_ctx_generic(c, CTX_SIZE, Op.SOCKET, sqe_flag(sqe_flags),
                                _int(user_data, "user_data")), "iour_ctx_generic")
    _check(lib.iour_ctx_socket(c, CTX_SIZE, _u32(family, "family"), _u32(type, "type"),
                               _u32(protocol, "protocol")), "iour_ctx_socket")
    return bytes(c)


def ctx_open(op, flags: int = 0, mode: int = 0, resolve: int = 0, sqe_flags: int = 0,
             user_data: int = 0) -> bytes:
    """The filter context of an OPENAT / OPENAT2 request."""
    c = (c_uint8 * CTX_SIZE)()
    _check(lib.iour_ctx_generic(c, CTX_SIZE, opcode(op), sqe_flag(sqe_flags),
                                _int(user_data, "user_data")), "iour_ctx_generic")
    _check(lib.iour_ctx_open(c, CTX_SIZE, _u32(flags, "flags"), _u32(mode, "mode"),
                             _u32(resolve, "resolve")), "iour_ctx_open")
    return bytes(c)


def ctx_connect(addr: bytes, sqe_flags: int = 0, user_data: int = 0) -> bytes:
    """The filter context of a CONNECT request to the socket address
    ``addr`` (a raw struct sockaddr_*)."""
    if not isinstance(addr, (bytes, bytearray)):
        raise TypeError("addr must be bytes (a struct sockaddr), not %s" % type(addr).__name__)
    c = (c_uint8 * CTX_SIZE)()
    _check(lib.iour_ctx_generic(c, CTX_SIZE, Op.CONNECT, sqe_flag(sqe_flags),
                                _int(user_data, "user_data")), "iour_ctx_generic")
    a = ctypes.create_string_buffer(bytes(addr), len(addr))
    _check(lib.iour_ctx_connect(c, CTX_SIZE, a, len(addr)), "iour_ctx_connect")
    return bytes(c)


def ctx_generic(op, sqe_flags: int = 0, user_data: int = 0) -> bytes:
    c = (c_uint8 * CTX_SIZE)()
    _check(lib.iour_ctx_generic(c, CTX_SIZE, opcode(op), sqe_flag(sqe_flags),
                                _int(user_data, "user_data")), "iour_ctx_generic")
    return bytes(c)


def cbpf_disasm(insns, op=OPCODE_ANY, format=DisasmFormat.TEXT, seccomp=False) -> str:
    """A listing (or C array, or raw bytes as latin-1 text) of a program."""
    arr, n = _insn_array(insns)
    o = OPCODE_ANY if op == OPCODE_ANY else opcode(op)
    fmt = _u32(format, "format") | (DISASM_SECCOMP if seccomp else 0)
    ln = c_size_t(0)
    _check(lib.iour_cbpf_disasm(arr, n, o, fmt, None, byref(ln)), "iour_cbpf_disasm")
    buf = ctypes.create_string_buffer(ln.value)
    _check(lib.iour_cbpf_disasm(arr, n, o, fmt, buf, byref(ln)), "iour_cbpf_disasm")
    raw = buf.raw[:ln.value]
    return raw.decode("latin-1") if format == DisasmFormat.RAW else raw.rstrip(b"\0").decode()


# ---- handles
class _Handle:
    """An owned library object: ``close()`` frees it (idempotent), so does
    leaving a ``with`` block or garbage collection.  Using a closed handle
    raises ValueError.

    Safe to share between threads: every library call on a handle holds a
    reference to it, and ``close()`` from any thread marks the handle
    closed at once (later calls raise ValueError) but frees the library
    object only when the last call in flight has returned.  Concurrent
    builder calls on one handle are not serialized: the library's objects
    are not thread-safe, so do not mutate one handle from two threads."""
    _free = None

    def __init__(self, ptr):
        self._mu = threading.Lock()
        self._refs = 0
        self._closed = False
        self._ptr = ptr

    def _live(self):
        ptr = getattr(self, "_ptr", None)
        if not ptr or (getattr(self, "_closed", False) and not self._refs):
            raise ValueError("%s is closed" % type(self).__name__)
        return c_void_p(ptr)

    def _acquire(self):
        with self._mu:
            if self._closed or not self._ptr:
                raise ValueError("%s is closed" % type(self).__name__)
            self._refs += 1

    def _release(self):
        with self._mu:
            self._refs -= 1
            ptr = self._take_if_done()
        self._free_ptr(ptr)

    def _take_if_done(self):
        # under _mu: the pointer to free if closed and no call is in flight
        if self._closed and self._refs == 0 and self._ptr:
            ptr, self._ptr = self._ptr, None
            return ptr
        return None

    def _free_ptr(self, ptr):
        if ptr:
            t = type(self)
            getattr(_raw, t._free)(_HANDLE_TYPES[t._kind](ptr))

    @contextlib.contextmanager
    def _held(self):
        """Keeps the object alive across several calls (and reads of
        memory it owns), whatever other threads close meanwhile."""
        self._acquire()
        try:
            yield
        finally:
            self._release()

    @property
    def closed(self) -> bool:
        return getattr(self, "_closed", True) or not self._ptr

    def close(self):
        mu = getattr(self, "_mu", None)
        if mu is None:  # __init__ never ran
            return
        with mu:
            self._closed = True
            ptr = self._take_if_done()
        self._free_ptr(ptr)

    def __enter__(self):
        self._live()
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass


def _new(fn, *args):
    out = c_void_p()
    _check(fn(*args, byref(out)), fn.__name__)
    return out.value


class Ruleset(_Handle):
    """A restriction set (iour_ruleset): allowed request opcodes, register
    opcodes and SQE flags.  Builder methods return ``self``."""

    def __init__(self, flags: int = 0):
        super().__init__(_new(lib.iour_ruleset__new,
                              byref(_lib.opts(_lib.iour_ruleset_opts,
                                              flags=_u32(flags, "flags")))))

    def dup(self) -> "Ruleset":
        r = Ruleset.__new__(Ruleset)
        _Handle.__init__(r, _new(lib.iour_ruleset__dup, self))
        return r

    def allow_sqe_op(self, *ops) -> "Ruleset":
        for op in ops:
            if isinstance(op, str):
                _check_name(lib.iour_ruleset__allow_sqe_op_name(self, op.encode()),
                            "iour_ruleset__allow_sqe_op_name", op)
            else:
                _check(lib.iour_ruleset__allow_sqe_op(self, opcode(op)),
                       "iour_ruleset__allow_sqe_op")
        return self

    def allow_register_op(self, *ops) -> "Ruleset":
        for op in ops:
            if isinstance(op, str):
                _check_name(lib.iour_ruleset__allow_register_op_name(self, op.encode()),
                            "iour_ruleset__allow_register_op_name", op)
            else:
                _check(lib.iour_ruleset__allow_register_op(self, register_op(op)),
                       "iour_ruleset__allow_register_op")
        return self

    def deny_all_sqe_ops(self) -> "Ruleset":
        _check(lib.iour_ruleset__deny_all_sqe_ops(self), "iour_ruleset__deny_all_sqe_ops")
        return self

    def deny_all_register_ops(self) -> "Ruleset":
        _check(lib.iour_ruleset__deny_all_register_ops(self),
               "iour_ruleset__deny_all_register_ops")
        return self

    def set_sqe_flags(self, allowed=0, required=0) -> "Ruleset":
        _check(lib.iour_ruleset__set_sqe_flags(self, sqe_flag(allowed), sqe_flag(required)),
               "iour_ruleset__set_sqe_flags")
        return self

    def sqe_op_allowed(self, op) -> bool:
        return bool(_check(lib.iour_ruleset__sqe_op_allowed(self, opcode(op)),
                           "iour_ruleset__sqe_op_allowed"))

    def register_op_allowed(self, op) -> bool:
        return bool(_check(lib.iour_ruleset__register_op_allowed(self, register_op(op)),
                           "iour_ruleset__register_op_allowed"))

    @property
    def sqe_restricted(self) -> bool:
        return bool(_check(lib.iour_ruleset__sqe_restricted(self),
                           "iour_ruleset__sqe_restricted"))

    @property
    def register_restricted(self) -> bool:
        return bool(_check(lib.iour_ruleset__register_restricted(self),
                           "iour_ruleset__register_restricted"))

    def sqe_flags(self) -> Tuple[int, int]:
        a, r = c_uint32(), c_uint32()
        _check(lib.iour_ruleset__sqe_flags(self, byref(a), byref(r)),
               "iour_ruleset__sqe_flags")
        return a.value, r.value

    def export(self, kver: int = 0, op_last: int = 0, reg_last: int = 0,
               flags: int = 0) -> bytes:
        """The kernel's 16-byte restriction entries for a target kernel."""
        o = _lib.opts(_lib.iour_export_opts, kver=_u32(kver, "kver"),
                      op_last=_u32(op_last, "op_last"), reg_last=_u32(reg_last, "reg_last"),
                      flags=_u32(flags, "flags"))
        ln = c_size_t(0)
        _check(lib.iour_ruleset__export(self, byref(o), None, byref(ln)), "iour_ruleset__export")
        buf = ctypes.create_string_buffer(max(ln.value, 1))
        _check(lib.iour_ruleset__export(self, byref(o), buf, byref(ln)), "iour_ruleset__export")
        return buf.raw[:ln.value]


@dataclasses.dataclass
class Cmp:
    """One comparison of a filter rule (struct iour_cmp).  ``field`` and
    ``op`` are a :class:`Field` / :class:`CmpOp` (or their ints);
    ``values`` is the set of IN_SET/NOT_IN_SET; ``addr6`` 16 bytes for
    CONNECT_ADDR6."""
    field: int
    op: int
    value: int = 0
    arg: int = 0
    values: Optional[List[int]] = None
    addr6: Optional[bytes] = None

    def _c(self, keep):
        _not_enum_of(self.field, (Field,), "a comparison's field")
        _not_enum_of(self.op, (CmpOp,), "a comparison's op")
        c = _lib.opts(_lib.iour_cmp, field=_int(self.field, "field"), op=_int(self.op, "op"),
                      value=_int(self.value, "value"), arg=_int(self.arg, "arg"))
        if self.values is not None:
            vals = [_u64(v, "set value") for v in self.values]
            arr = (ctypes.c_uint64 * max(len(vals), 1))(*vals)
            keep.append(arr)
            c.set = ctypes.cast(arr, ctypes.POINTER(ctypes.c_uint64))
            c.set_len = len(vals)
        if self.addr6 is not None:
            if not isinstance(self.addr6, (bytes, bytearray)) or len(self.addr6) != 16:
                raise TypeError("addr6 must be 16 bytes")
            for i, b in enumerate(self.addr6):
                c.addr6[i] = b
        return c


class Filter(_Handle):
    """A filter set (iour_filter): per-opcode rules compiled to cBPF."""

    def __init__(self, default_verdict=Verdict.DENY, flags: int = 0):
        o = _lib.opts(_lib.iour_filter_opts, default_verdict=_verdict(default_verdict),
                      flags=_u32(flags, "flags"))
        super().__init__(_new(lib.iour_filter__new, byref(o)))

    def dup(self) -> "Filter":
        r = Filter.__new__(Filter)
        _Handle.__init__(r, _new(lib.iour_filter__dup, self))
        return r

    def add_rule(self, op, verdict, *cmps: Cmp) -> "Filter":
        """A rule for request opcode ``op``: ``verdict`` when every
        comparison holds."""
        keep = []
        for c in cmps:
            if not isinstance(c, Cmp):
                raise TypeError("a comparison must be a Cmp, not %s" % type(c).__name__)
        arr = (_lib.iour_cmp * max(len(cmps), 1))(*[c._c(keep) for c in cmps])
        _check(lib.iour_filter__add_rule(self, opcode(op), _verdict(verdict),
                                         arr if cmps else None, len(cmps)),
               "iour_filter__add_rule")
        return self

    def set_default(self, op, verdict) -> "Filter":
        _check(lib.iour_filter__set_default(self, opcode(op), _verdict(verdict)),
               "iour_filter__set_default")
        return self

    def set_raw(self, op, insns) -> "Filter":
        arr, n = _insn_array(insns)
        _check(lib.iour_filter__set_raw(self, opcode(op), arr, n), "iour_filter__set_raw")
        return self

    def opcodes(self) -> List[int]:
        n = _check(lib.iour_filter__opcodes(self, None, 0), "iour_filter__opcodes")
        buf = (c_uint32 * max(n, 1))()
        n = _check(lib.iour_filter__opcodes(self, buf, n), "iour_filter__opcodes")
        return [Op(buf[i]) if buf[i] < len(Op) else buf[i] for i in range(n)]

    def compile(self, op, max_insns: int = 0, flags: int = 0) -> "Program":
        o = _lib.opts(_lib.iour_compile_opts, flags=_u32(flags, "flags"),
                      max_insns=_u32(max_insns, "max_insns"))
        p = Program.__new__(Program)
        _Handle.__init__(p, _new(lib.iour_filter__compile, self, opcode(op), byref(o)))
        return p


class Program(_Handle):
    """A compiled cBPF program (iour_prog), from Filter.compile()."""

    @property
    def insns(self) -> List[Insn]:
        with self._held():  # p points into the program
            n = lib.iour_prog__insn_cnt(self)
            p = lib.iour_prog__insns(self)
            return [Insn(p[i].code, p[i].jt, p[i].jf, p[i].k) for i in range(n)]

    @property
    def opcode(self) -> int:
        return lib.iour_prog__opcode(self)

    @property
    def kind(self) -> ProgKind:
        return ProgKind(lib.iour_prog__kind(self))

    @property
    def pdu_size(self) -> int:
        return lib.iour_prog__pdu_size(self)

    def disasm(self, format=DisasmFormat.TEXT) -> str:
        return cbpf_disasm(self.insns, self.opcode, format)

    def run(self, ctx: bytes) -> SimResult:
        return cbpf_run(self.insns, ctx)

    def validate(self) -> ValidateInfo:
        return cbpf_validate(self.insns)


# ---- reports
@dataclasses.dataclass(frozen=True)
class Decision:
    kind: DecisionKind
    reason: Reason
    opcode: Optional[int]
    step: Optional[int]
    value: int
    text: str


@dataclasses.dataclass(frozen=True)
class Report:
    """What was (or, for a plan, would be) enforced: a snapshot of an
    iour_report."""
    status: Status
    mechanism: Mechanism
    flags: ReportFlag
    steps_done: int
    steps_total: int
    error: int
    threads: int
    decisions: Tuple[Decision, ...]
    text: str

    @property
    def fully_enforced(self) -> bool:
        return self.status == Status.FULLY


def _describe(fn, obj, name):
    ln = c_size_t(0)
    _check(fn(obj, None, byref(ln)), name)
    buf = ctypes.create_string_buffer(max(ln.value, 1))
    _check(fn(obj, buf, byref(ln)), name)
    return buf.value.decode()


def _report(ptr) -> Report:
    r = c_void_p(ptr)
    done, total, err = c_uint32(), c_uint32(), c_int32()
    _check(lib.iour_report__steps(r, byref(done), byref(total)), "iour_report__steps")
    _check(lib.iour_report__error(r, byref(err)), "iour_report__error")
    decs = []
    for i in range(_check(lib.iour_report__decision_cnt(r), "iour_report__decision_cnt")):
        d = _lib.opts(_lib.iour_decision)
        _check(lib.iour_report__decision(r, i, byref(d)), "iour_report__decision")
        decs.append(Decision(DecisionKind(d.kind), Reason(d.reason),
                             None if d.opcode == 0xFFFFFFFF else d.opcode,
                             None if d.step == 0xFFFFFFFF else d.step, d.value,
                             _s(d.text) or ""))
    return Report(Status(_check(lib.iour_report__status(r), "iour_report__status")),
                  Mechanism(_check(lib.iour_report__mechanism(r), "iour_report__mechanism")),
                  ReportFlag(_check(lib.iour_report__flags(r), "iour_report__flags")),
                  done.value, total.value, err.value,
                  _check(lib.iour_report__threads(r), "iour_report__threads"), tuple(decs),
                  _describe(lib.iour_report__describe, r, "iour_report__describe"))


def _take_report(rc, rep, fn):
    """Snapshot and free a report the library handed over; raise for rc<0
    with the report attached."""
    report = None
    if rep.value:
        try:
            report = _report(rep.value)
        finally:
            lib.iour_report__free(rep)
    if rc < 0:
        e = error_from_code(rc, fn, lib)
        e.report = report
        raise e
    return report


# ---- ring fds
def _fd(x) -> int:
    if isinstance(x, bool):
        raise TypeError("a ring must be an fd (int) or have fileno()")
    if isinstance(x, int):
        return x
    if hasattr(x, "fileno"):
        return int(x.fileno())
    raise TypeError("a ring must be an fd (int) or have fileno(), not %s" % type(x).__name__)


def _check_ring_fd(fd):
    """OSError(EBADF) for a closed fd, ValueError for one that is not an
    io_uring instance: by its /proc/self/fd link where /proc is procfs,
    else (no /proc) by its inode, which must be an anonymous one."""
    st = os.fstat(fd)  # EBADF
    try:
        link = os.readlink("/proc/self/fd/%d" % fd)
    except OSError:
        link = None
    if link is not None and os.path.isdir("/proc/self/fd"):
        if link != "anon_inode:[io_uring]":
            raise ValueError("fd %d is not an io_uring ring (it is %s)" % (fd, link))
    elif st.st_mode & 0o170000:
        raise ValueError("fd %d is not an io_uring ring (not an anonymous inode)" % fd)


_PINNED = []  # buffers once registered with a ring (Ring._unmap)


class Ring:
    """An io_uring descriptor owned by Python: ``close()`` (or ``with``)
    closes it; ``fileno()`` / ``detach()`` as for sockets.

    The restricted-ring life cycle, as with liburing in C::

        ring = Ring.setup(8)                  # created disabled
        ring.register_files([fd])             # while disabled
        ring.register_buffers([bytearray(4096)])
        ring_apply(ring, ruleset)             # restrict and enable
        ring.nop(); ring.read(0, 64, fixed_file=True)

    A ring made by :meth:`setup`, :func:`ring_create` or
    :meth:`Plan.create_ring` can submit requests itself (:meth:`nop`,
    :meth:`read`, :meth:`write`, :meth:`read_fixed`, :meth:`submit`: one at
    a time, waiting for the completion); a denied request raises
    ``PermissionError`` (EACCES).  Or hand ``fileno()`` to the program."""

    def __init__(self, fd: int, _params=None):
        fd = _lib.check_int(c_int, fd, "fd")
        _check_ring_fd(fd)
        self._fd = fd
        self._params = _params
        self._queues = None
        self._buffers = []

    @classmethod
    def setup(cls, entries: int = 8, flags: int = 0, disabled: bool = True) -> "Ring":
        """io_uring_setup(): a new ring, created disabled
        (IORING_SETUP_R_DISABLED) unless ``disabled`` is false, so that
        files and buffers can be registered and the restrictions applied
        (:func:`ring_apply`, :meth:`Plan.apply_ring`) before its first use."""
        flags = _u32(flags, "flags") | (_uring.SETUP_R_DISABLED if disabled else 0)
        fd, p = _uring.setup(_u32(entries, "entries"), flags)
        return cls(fd, p)

    def register_files(self, fds) -> "Ring":
        """IORING_REGISTER_FILES: the descriptors (ints or objects with
        fileno()) become fixed files 0, 1, ...; allowed while the ring is
        disabled, whatever the restrictions will say."""
        _uring.register_files(self.fileno(), [_fd(f) for f in fds])
        return self

    def register_buffers(self, bufs) -> "Ring":
        """IORING_REGISTER_BUFFERS: bytearrays become fixed buffers 0, 1,
        ...; the ring keeps them (``buffers``) for :meth:`read_fixed`, and
        they are never freed (a copy of the ring's fd may still use them)."""
        bufs = list(bufs)
        if not all(isinstance(b, bytearray) and len(b) for b in bufs):
            raise TypeError("buffers must be non-empty bytearrays")
        views = _uring.register_buffers(self.fileno(), bufs)
        self._buffers = list(zip(bufs, views))
        return self

    @property
    def buffers(self) -> List[bytearray]:
        return [b for b, _ in self._buffers]

    def _q(self):
        fd = self.fileno()
        if self._queues is None:
            if self._params is None:
                raise ValueError("this Ring did not create its ring (Ring(fd)): its queues' "
                                 "offsets are unknown; use the fd with an io_uring client")
            self._queues = _uring.Queues(fd, self._params)
        return self._queues

    def submit(self, op, fd: int = 0, off: int = 0, addr: int = 0, length: int = 0,
               op_flags: int = 0, sqe_flags=0, buf_index: int = 0) -> int:
        """Submits one request and waits for it: the completion's res
        (negative errno included, not raised)."""
        return self._q().submit(opcode(op), _int(fd, "fd"), _int(off, "off"),
                                _u64(addr, "addr"), _u32(length, "length"),
                                _u32(op_flags, "op_flags"), sqe_flag(sqe_flags),
                                _lib.check_int(ctypes.c_uint16, buf_index, "buf_index"))

    @staticmethod
    def _target(fd, fixed_file):
        return (_int(fd, "fd") if fixed_file else _fd(fd),
                _uring.IOSQE_FIXED_FILE if fixed_file else 0)

    def nop(self) -> None:
        """IORING_OP_NOP; PermissionError if the ring's set denies it."""
        _uring.check_res(self.submit(Op.NOP))

    def read(self, fd, size: int, offset: int = 0, fixed_file: bool = False) -> bytes:
        """IORING_OP_READ of up to ``size`` bytes at ``offset`` (-1: the
        file position); ``fd`` a fixed-file index with ``fixed_file``."""
        buf = ctypes.create_string_buffer(_u32(size, "size") or 1)
        f, fl = self._target(fd, fixed_file)
        n = _uring.check_res(self.submit(Op.READ, f, offset, ctypes.addressof(buf), size,
                                         sqe_flags=fl))
        return buf.raw[:n]

    def write(self, fd, data: bytes, offset: int = 0, fixed_file: bool = False) -> int:
        """IORING_OP_WRITE of ``data`` at ``offset`` (-1: the file
        position): the count written."""
        buf = ctypes.create_string_buffer(bytes(data), len(data) or 1)
        f, fl = self._target(fd, fixed_file)
        return _uring.check_res(self.submit(Op.WRITE, f, offset, ctypes.addressof(buf),
                                            len(data), sqe_flags=fl))

    def read_fixed(self, fd, buf_index: int, size: int, offset: int = 0,
                   fixed_file: bool = False) -> bytes:
        """IORING_OP_READ_FIXED into registered buffer ``buf_index`` (from
        its start): the bytes read, also left in ``buffers[buf_index]``."""
        b, view = self._buffers[buf_index]
        if size > len(b):
            raise ValueError("size %d: buffer %d holds %d bytes" % (size, buf_index, len(b)))
        f, fl = self._target(fd, fixed_file)
        n = _uring.check_res(self.submit(Op.READ_FIXED, f, offset, ctypes.addressof(view),
                                         size, sqe_flags=fl, buf_index=buf_index))
        return bytes(b[:n])

    def fileno(self) -> int:
        if self._fd < 0:
            raise ValueError("Ring is closed")
        return self._fd

    def detach(self) -> int:
        fd = self.fileno()
        self._unmap()
        self._fd = -1
        return fd

    @property
    def closed(self) -> bool:
        return self._fd < 0

    def _unmap(self):
        q, self._queues = getattr(self, "_queues", None), None
        if q is not None:
            q.close()
        # Registered buffers stay the kernel's as long as the ring lives,
        # which a copy of its fd (a dup, a child) may make longer than this
        # object: they are never freed, so that no later request through
        # such a copy writes into memory Python has reused.
        _PINNED.extend(getattr(self, "_buffers", ()))
        self._buffers = []

    def close(self):
        self._unmap()
        fd, self._fd = getattr(self, "_fd", -1), -1
        if fd >= 0:
            os.close(fd)

    def __enter__(self):
        self.fileno()
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _struct_dc(name, cls):
    fields = []
    for n, t in cls._fields_:
        if n in ("sz", "pad", "resv"):
            continue
        fields.append((n, tuple if hasattr(t, "_length_") else int))
    return dataclasses.make_dataclass(name, fields, frozen=True)


def _from_struct(dc, s):
    kw = {}
    for f in dataclasses.fields(dc):
        v = getattr(s, f.name)
        kw[f.name] = tuple(v) if f.type is tuple else v
    return dc(**kw)


#: What iour_ring_apply()/iour_ring_create() did (struct iour_ring_report).
RingReport = _struct_dc("RingReport", _lib.iour_ring_report)
_Features = _struct_dc("_Features", _lib.iour_features)


class Features(_Features):
    """What the running kernel supports (struct iour_features, from
    iour_probe()); enumerated fields as their enums."""

    @property
    def feature_level(self) -> FeatureLevel:
        return FeatureLevel(self.level)

    def avail(self, name: str) -> Avail:
        return Avail(getattr(self, name))

    @property
    def limits(self) -> LimitsSource:
        return LimitsSource(self.limits_source)

    @property
    def features_flags(self) -> FeaturesFlag:
        """``flags`` as FeaturesFlag (FORCED, ..., SOCKET_FLAGS_HIDDEN,
        TASK_SET_GATES_FILTERS)."""
        return FeaturesFlag(self.flags)

    def op_supported(self, op) -> bool:
        o = opcode(op)
        return o < 256 and bool(self.supported_ops[o // 64] >> (o % 64) & 1)


def probe(no_cache: bool = False, refresh: bool = False) -> Features:
    """iour_probe(): what the running kernel supports (cached per process
    unless ``no_cache``)."""
    o = _lib.opts(_lib.iour_probe_opts,
                  flags=(PROBE_NO_CACHE if no_cache else 0) | (PROBE_REFRESH if refresh else 0))
    f = _lib.opts(_lib.iour_features)
    _check(lib.iour_probe(byref(o), byref(f)), "iour_probe")
    return _from_struct(Features, f)


def kernel_describe(kv: int) -> Features:
    """iour_kernel_describe(): Linux ``kv`` (``kver(major, minor)``) as the
    probe would find it for a fresh process, from the library's tables (a
    description, not a measurement)."""
    f = _lib.opts(_lib.iour_features)
    _check(lib.iour_kernel_describe(_u32(kv, "kver"), byref(f)), "iour_kernel_describe")
    return _from_struct(Features, f)


def feature_level() -> FeatureLevel:
    return FeatureLevel(_check(lib.iour_feature_level(), "iour_feature_level"))


def ring_create(ruleset: Ruleset, entries: int = 8) -> Tuple[Ring, "RingReport"]:
    """A new ring restricted to ``ruleset`` (created disabled, restricted,
    enabled): the Ring and what was done."""
    rep = _lib.opts(_lib.iour_ring_report)
    o = _lib.opts(_lib.iour_ring_create_opts, report=ctypes.pointer(rep))
    fd = c_int(-1)
    p = _uring.Params()
    _check(lib.iour_ring_create(_u32(entries, "entries"), byref(p), ruleset, byref(o),
                                byref(fd)), "iour_ring_create")
    return Ring(fd.value, p), _from_struct(RingReport, rep)


def ring_apply(ring, ruleset: Ruleset, enable: bool = True) -> "RingReport":
    """Restricts a ring the caller created with IORING_SETUP_R_DISABLED (an
    int fd or an object with fileno()), and enables it unless ``enable`` is
    false."""
    rep = _lib.opts(_lib.iour_ring_report)
    o = _lib.opts(_lib.iour_ring_apply_opts, flags=0 if enable else RING_APPLY_NO_ENABLE,
                  report=ctypes.pointer(rep))
    _check(lib.iour_ring_apply(_fd(ring), ruleset, byref(o)), "iour_ring_apply")
    return _from_struct(RingReport, rep)


def ring_enable(ring) -> None:
    _check(lib.iour_ring_enable(_fd(ring)), "iour_ring_enable")


def task_thread_count() -> int:
    return _check(lib.iour_task_thread_count(), "iour_task_thread_count")


# ---- policy and plan
@dataclasses.dataclass(frozen=True)
class PlanInfo:
    target: Target
    level: FeatureLevel
    op_last: int
    reg_last: int
    split_gates: bool
    flags: int
    task_steps: int
    ring_steps: int


@dataclasses.dataclass(frozen=True)
class PlanStep:
    side: StepSide
    op: StepOp
    call_op: int
    nr_args: int
    opcode: Optional[int]
    arg_len: int
    insn_cnt: int
    entries: int


#: The enum of each attribute's values.
_ATTR_VALUES = {PolicyAttr.TARGET: Target, PolicyAttr.COMPAT: Compat, PolicyAttr.NNP: Nnp,
                PolicyAttr.NO_FILTER_FALLBACK: Fallback, PolicyAttr.THREADS: Threads,
                PolicyAttr.COMPANION: Companion, PolicyAttr.DEFAULT: DefaultVerdict}


def _enum_by_name(cls, name, what):
    """The member of ``cls`` named ``name`` (any case, "-" for "_"); a
    ValueError listing the valid names and numbers otherwise."""
    key = name.strip().upper().replace("-", "_")
    for prefix in ("IOUR_POLICY_ATTR_", "IOUR_POLICY_"):
        if key.startswith(prefix) and key[len(prefix):] in cls.__members__:
            key = key[len(prefix):]
    if key in cls.__members__:
        return cls.__members__[key]
    raise ValueError("%s %r: the names are %s" % (
        what, name, ", ".join("%r (%d)" % (m.name.lower(), m.value) for m in cls)))


def _policy_attr(attr) -> int:
    if isinstance(attr, str):
        return _enum_by_name(PolicyAttr, attr, "attribute")
    _not_enum_of(attr, (PolicyAttr,), "an attribute")
    if isinstance(attr, int) and not isinstance(attr, bool) and not 0 <= attr < 1 << 32:
        raise OverflowError("attribute %d: attributes are %d..%d (%s)" % (
            attr, min(PolicyAttr), max(PolicyAttr), ", ".join(m.name for m in PolicyAttr)))
    return _u32(attr, "attr")


def _attr_value(attr, value) -> int:
    cls = _ATTR_VALUES.get(attr)
    what = "%s value" % (PolicyAttr(attr).name if attr in _ATTR_VALUES else "attribute %d" % attr)
    if isinstance(value, str):
        if cls is None:
            raise ValueError("%s %r: attribute %d is unknown, so its names are too"
                             % (what, value, attr))
        return _enum_by_name(cls, value, what)
    if cls is not None:
        _not_enum_of(value, (cls,), what)
        if isinstance(value, int) and not isinstance(value, bool) and \
                not 0 <= value < 1 << 32:
            raise OverflowError("%s %d: the values are %s" % (
                what, value, ", ".join("%d (%s)" % (m.value, m.name.lower()) for m in cls)))
    return _u32(value, "value")


class Policy(_Handle):
    """A policy (iour_policy): a ruleset, filters and attributes, planned
    for the running kernel with :meth:`plan`."""

    def __init__(self, ruleset: Optional[Ruleset] = None, filter: Optional[Filter] = None,
                 target=None, compat=None):
        super().__init__(_new(lib.iour_policy__new, byref(_lib.opts(_lib.iour_policy_opts))))
        if ruleset is not None:
            self.set_ruleset(ruleset)
        if filter is not None:
            self.set_filter(filter)
        if target is not None:
            self.set_attr(PolicyAttr.TARGET, target)
        if compat is not None:
            self.set_attr(PolicyAttr.COMPAT, compat)

    def dup(self) -> "Policy":
        r = Policy.__new__(Policy)
        _Handle.__init__(r, _new(lib.iour_policy__dup, self))
        return r

    def set_ruleset(self, rs: Ruleset) -> "Policy":
        _check(lib.iour_policy__set_ruleset(self, rs), "iour_policy__set_ruleset")
        return self

    def set_filter(self, f: Filter) -> "Policy":
        _check(lib.iour_policy__set_filter(self, f), "iour_policy__set_filter")
        return self

    def set_prog(self, op, insns, pdu_size: int) -> "Policy":
        arr, n = _insn_array(insns)
        _check(lib.iour_policy__set_prog(self, opcode(op), arr, n, _u32(pdu_size, "pdu_size")),
               "iour_policy__set_prog")
        return self

    def set_attr(self, attr, value) -> "Policy":
        """Sets an attribute: ``attr`` a :class:`PolicyAttr` (or its name,
        "target"), ``value`` a number, a member of the attribute's enum
        (:class:`Target`, :class:`Compat`, ...) or its name ("ring")."""
        a = _policy_attr(attr)
        _check(lib.iour_policy__set_attr(self, a, _attr_value(a, value)),
               "iour_policy__set_attr")
        return self

    def get_attr(self, attr) -> int:
        """An attribute's value, as a member of its enum (an int)."""
        a = _policy_attr(attr)
        v = c_uint32()
        _check(lib.iour_policy__get_attr(self, a, byref(v)), "iour_policy__get_attr")
        cls = _ATTR_VALUES.get(a)
        try:
            return cls(v.value) if cls else v.value
        except ValueError:
            return v.value

    def prog_cnt(self, op) -> int:
        """How many argument-filter programs the policy holds for ``op``:
        0 (none), 1, or more for a deny-list split across stacked filters
        (the kernel runs them all; the request runs only if all allow)."""
        return _check(lib.iour_policy__prog_cnt(self, opcode(op)), "iour_policy__prog_cnt")

    def plan(self, level: Optional[int] = None) -> "Plan":
        """Plans the policy for the running kernel (or, with ``level``, for
        a forced feature level)."""
        o = _lib.opts(_lib.iour_plan_opts)
        if level is not None:
            o.flags = PLAN_FORCE_LEVEL
            if isinstance(level, str):
                level = _enum_by_name(FeatureLevel, level, "level")
            if isinstance(level, int) and not isinstance(level, bool) and \
                    not 0 <= level < 1 << 32:
                raise OverflowError("level %d: levels are %d..%d" % (
                    level, min(FeatureLevel), max(FeatureLevel)))
            o.level = _u32(level, "level")
        p = Plan.__new__(Plan)
        _Handle.__init__(p, _new(lib.iour_policy__plan, self, byref(o)))
        return p


@dataclasses.dataclass(frozen=True)
class RequestVerdict:
    """What a policy decides for one request (struct iour_request_verdict)."""
    verdict: Verdict
    reason: DecideReason
    opcode: int
    rule: Optional[int]

    @property
    def allowed(self) -> bool:
        return self.verdict == Verdict.ALLOW


def _load_error(rc, fn, le):
    e = error_from_code(rc, fn, lib)
    e.line, e.column, e.offset = le.line, le.column, le.offset
    e.json_path = le.path.decode(errors="replace")
    e.detail = le.message.decode(errors="replace")
    if e.detail:
        e.strerror = "%s: %s%s" % (e.strerror, "%d:%d: " % (e.line, e.column) if e.line else "",
                                   e.detail)
    return e


def _load(fn, name, first, origin, kernel):
    o = _lib.opts(_lib.iour_policy_load_opts, kernel=_u32(kernel, "kernel"))
    if origin is not None:
        if not isinstance(origin, str):
            raise TypeError("origin must be a str")
        o.origin = origin.encode()
    le = _lib.opts(_lib.iour_load_error)
    out = c_void_p()
    rc = fn(*first, byref(o), byref(out), byref(le))
    if rc < 0:
        raise _load_error(rc, name, le)
    p = Policy.__new__(Policy)
    _Handle.__init__(p, out.value)
    return p


def _policy_from_json(cls, text, origin: Optional[str] = None, kernel: int = 0) -> "Policy":
    """A policy from the JSON text of a policy file (str or bytes).  A bad
    file raises IourError (EBADMSG, ...) with ``line``, ``column``,
    ``json_path`` and ``detail``."""
    if isinstance(text, str):
        text = text.encode()
    if not isinstance(text, (bytes, bytearray)):
        raise TypeError("text must be str or bytes, not %s" % type(text).__name__)
    text = bytes(text)
    return _load(lib.iour_policy__load_json, "iour_policy__load_json", (text, len(text)),
                 origin, kernel)


def _policy_from_file(cls, path, origin: Optional[str] = None, kernel: int = 0) -> "Policy":
    """A policy from a policy file (at most 16 MiB)."""
    path = os.fspath(path)
    if isinstance(path, str):
        path = path.encode()
    return _load(lib.iour_policy__load_file, "iour_policy__load_file", (path,), origin, kernel)


def _policy_to_json(self) -> str:
    """The policy as canonical JSON (iour_policy__save_json())."""
    n = _check(lib.iour_policy__save_json(self, 0, None, 0), "iour_policy__save_json")
    buf = ctypes.create_string_buffer(n + 1)
    _check(lib.iour_policy__save_json(self, 0, buf, n + 1), "iour_policy__save_json")
    return buf.value.decode()


def _policy_decide(self, ctx: bytes) -> RequestVerdict:
    """What the policy decides for the request whose 40-byte filter context
    is ``ctx`` (ctx_socket(), ctx_open(), ctx_generic(), ...)."""
    if not isinstance(ctx, (bytes, bytearray)):
        raise TypeError("ctx must be bytes, not %s" % type(ctx).__name__)
    c = (c_uint8 * max(len(ctx), 1)).from_buffer_copy(bytes(ctx) or b"\0")
    v = _lib.opts(_lib.iour_request_verdict)
    _check(lib.iour_policy__decide(self, c, len(ctx), byref(v)), "iour_policy__decide")
    return RequestVerdict(Verdict(v.verdict), DecideReason(v.reason), v.opcode,
                          None if v.rule == 0xFFFFFFFF else v.rule)


@dataclasses.dataclass(frozen=True)
class Group:
    """An opcode group of the policy-file language ("@file-read")."""
    name: str
    help: str
    source: str
    ops: Tuple[int, ...]
    register_ops: Tuple[int, ...]


def _group_list(fn, idx, kv):
    n = _check(fn(idx, kv, None, 0), fn.__name__)
    buf = (c_uint32 * max(n, 1))()
    n = _check(fn(idx, kv, buf, n), fn.__name__)
    return tuple(buf[:n])


def groups(kver: int = 0) -> List[Group]:
    """Every opcode group, with the members added up to kernel ``kver``
    (kver(6, 1), ...; 0: all)."""
    kv = _u32(kver, "kver")
    out = []
    for i in range(_check(lib.iour_group_count(), "iour_group_count")):
        g = _lib.opts(_lib.iour_group_info)
        _check(lib.iour_group_get(i, byref(g)), "iour_group_get")
        out.append(Group(_s(g.name), _s(g.help), _s(g.source),
                         _group_list(lib.iour_group_opcodes, i, kv),
                         _group_list(lib.iour_group_register_ops, i, kv)))
    return out


def group(name: str, kver: int = 0) -> Group:
    """One group by name ("@file-read" or "file-read")."""
    if not isinstance(name, str):
        raise TypeError("a group name must be a str")
    i = _check(lib.iour_group_find(name.encode()), "iour_group_find")
    return groups(kver)[i]


Policy.from_json = classmethod(_policy_from_json)
Policy.from_file = classmethod(_policy_from_file)
Policy.to_json = _policy_to_json
Policy.decide = _policy_decide


class Plan(_Handle):
    """A plan (iour_plan): the steps a policy takes on this kernel, its
    predicted report, and the executor."""

    def info(self) -> PlanInfo:
        i = _lib.opts(_lib.iour_plan_info)
        _check(lib.iour_plan__info(self, byref(i)), "iour_plan__info")
        return PlanInfo(Target(i.target), FeatureLevel(i.level), i.op_last, i.reg_last,
                        bool(i.split_gates), i.flags, i.task_steps, i.ring_steps)

    def steps(self) -> List[PlanStep]:
        out = []
        for k in range(_check(lib.iour_plan__step_cnt(self), "iour_plan__step_cnt")):
            s = _lib.opts(_lib.iour_plan_step)
            _check(lib.iour_plan__step(self, k, byref(s)), "iour_plan__step")
            out.append(PlanStep(StepSide(s.side), StepOp(s.op), s.call_op, s.nr_args,
                                None if s.opcode == 0xFFFFFFFF else s.opcode, s.arg_len,
                                s.insn_cnt, s.entries))
        return out

    def step_insns(self, i: int) -> List[Insn]:
        n = c_size_t(0)
        _check(lib.iour_plan__step_insns(self, _u32(i, "step"), None, byref(n)),
               "iour_plan__step_insns")
        buf = (_lib.iour_insn * max(n.value, 1))()
        _check(lib.iour_plan__step_insns(self, i, buf, byref(n)), "iour_plan__step_insns")
        return [Insn(b.code, b.jt, b.jf, b.k) for b in buf[:n.value]]

    def describe(self) -> str:
        return _describe(lib.iour_plan__describe, self, "iour_plan__describe")

    def ruleset(self, side=StepSide.RING) -> Optional[Ruleset]:
        """What the plan's restriction step on ``side`` (a :class:`StepSide`)
        enforces, decoded by the library with the plan kernel's gate
        semantics (iour_plan__get_ruleset): a new :class:`Ruleset`, or None
        when the plan turns no classic gate on there (a classic part that
        allows everything plans no restriction step)."""
        out = c_void_p()
        _check(lib.iour_plan__get_ruleset(self, _u32(side, "side"), byref(out)),
               "iour_plan__get_ruleset")
        if not out.value:
            return None
        r = Ruleset.__new__(Ruleset)
        _Handle.__init__(r, out.value)
        return r

    @property
    def report(self) -> Report:
        """The report the plan predicts (nothing applied)."""
        with self._held():  # the report belongs to the plan
            r = lib.iour_plan__report(self)
            if not r:
                raise error_from_code(-22, "iour_plan__report", lib)
            return _report(r)

    def apply_task(self) -> Report:
        """Applies the plan to the calling task (and its future children):
        irreversible."""
        rep = c_void_p()
        rc = lib.iour_plan__apply_task(self, byref(_lib.opts(_lib.iour_apply_opts)), byref(rep))
        return _take_report(rc, rep, "iour_plan__apply_task")

    def apply_ring(self, ring) -> Report:
        """Applies a ring-target plan to a ring created disabled."""
        rep = c_void_p()
        rc = lib.iour_plan__apply_ring(self, _fd(ring), byref(_lib.opts(_lib.iour_apply_opts)),
                                       byref(rep))
        return _take_report(rc, rep, "iour_plan__apply_ring")

    def create_ring(self, entries: int = 8) -> Tuple[Ring, Report]:
        """Creates a ring restricted by the plan: the Ring and the report."""
        rep, fd = c_void_p(), c_int(-1)
        p = _uring.Params()
        rc = lib.iour_plan__create_ring(self, _u32(entries, "entries"), byref(p),
                                        byref(_lib.opts(_lib.iour_apply_opts)), byref(fd),
                                        byref(rep))
        try:
            report = _take_report(rc, rep, "iour_plan__create_ring")
        except BaseException:
            if fd.value >= 0:
                os.close(fd.value)
            raise
        return Ring(fd.value, p), report


# ---- the enforcement check
@dataclasses.dataclass
class VerifyReq:
    """One request of the enforcement check (struct iour_verify_req)."""
    opcode: int
    expect: int
    sqe_flags: int = 0
    family: int = 0
    type: int = 0
    protocol: int = 0
    open_flags: int = 0
    open_mode: int = 0
    open_resolve: int = 0
    path: Optional[str] = None
    addr: Optional[bytes] = None


@dataclasses.dataclass(frozen=True)
class VerifyResult:
    res: int
    status: VerifyStatus
    observed: int

    @property
    def error(self) -> Optional[int]:
        """The positive errno the kernel answered, or None."""
        return -self.res if self.res < 0 else None


def verify(reqs: List[VerifyReq], ring=None, ring_flags: int = 0,
           timeout_ms: int = 0) -> List[VerifyResult]:
    """iour_verify(): submits each request in a forked child (on ``ring``
    if given) and returns the kernel's answers.  A request answered against
    its expectation raises LibraryError NOT_ENFORCED with ``results``."""
    reqs = list(reqs)
    if not reqs:
        raise ValueError("verify needs at least one request")
    arr = (_lib.iour_verify_req * len(reqs))()
    keep = []
    for i, r in enumerate(reqs):
        if not isinstance(r, VerifyReq):
            raise TypeError("a request must be a VerifyReq, not %s" % type(r).__name__)
        c = arr[i]
        ctypes.memset(byref(c), 0, ctypes.sizeof(c))
        c.sz = ctypes.sizeof(c)
        c.opcode = opcode(r.opcode)
        _not_enum_of(r.expect, (Expect,), "expect")
        _lib.set_field(c, "expect", _int(r.expect, "expect"))
        _lib.set_field(c, "sqe_flags", sqe_flag(r.sqe_flags))
        for n in ("family", "type", "protocol", "open_flags", "open_mode", "open_resolve"):
            _lib.set_field(c, n, _int(getattr(r, n), n))
        if r.path is not None:
            if not isinstance(r.path, (str, bytes)):
                raise TypeError("path must be str or bytes")
            b = r.path.encode() if isinstance(r.path, str) else r.path
            keep.append(b)
            c.path = b
        if r.addr is not None:
            if not isinstance(r.addr, (bytes, bytearray)):
                raise TypeError("addr must be bytes")
            a = ctypes.create_string_buffer(bytes(r.addr), len(r.addr))
            keep.append(a)
            c.addr = ctypes.cast(a, c_void_p)
            c.addrlen = len(r.addr)
    res = (_lib.iour_verify_result * len(reqs))()
    o = _lib.opts(_lib.iour_verify_opts, ring_flags=_u32(ring_flags, "ring_flags"),
                  timeout_ms=_u32(timeout_ms, "timeout_ms"))
    if ring is not None:
        o.flags = VERIFY_RING_FD
        o.ring_fd = _fd(ring)
    rc = lib.iour_verify(arr, len(reqs), res, byref(o))
    out = [VerifyResult(x.res, VerifyStatus(x.status), x.observed) for x in res]
    if rc < 0:
        e = error_from_code(rc, "iour_verify", lib)
        e.results = out
        raise e
    return out


# ---- the ring broker (broker.h)
# BROKER_ALL_THREADS: iour_broker__install(): the filter on every thread of
# the process.  BROKER_NONBLOCK: iour_broker__new() (Broker(nonblock=True)):
# serve() never waits; with nothing pending it raises IourError with errno
# EAGAIN.  BROKER_ALLOW_PTRACE: iour_broker__install(): no peer guard; the
# program may ptrace other processes of its uid and take rings from them
# (doc/security.md, 3a).
# BEGIN GENERATED py-broker-consts: scripts/gen-bindings.py (make generate), do not edit
BROKER_ALL_THREADS = 1 << 0
BROKER_NONBLOCK = 1 << 1
BROKER_ALLOW_PTRACE = 1 << 2
# END GENERATED py-broker-consts


@dataclasses.dataclass(frozen=True)
class BrokerEvent:
    """One io_uring_setup the broker answered (iour_broker_event)."""
    pid: int
    entries: int
    setup_flags: int
    result: int  #: the fd number given, or the negative errno answered
    what: str


@dataclasses.dataclass(frozen=True)
class BrokerCounters:
    """A broker's counters (iour_broker_counters)."""
    notifications: int
    served: int
    refused: int
    refused_flags: int
    refused_kernel: int
    refused_memory: int
    gone: int
    refused_deadline: int = 0
    refused_busy: int = 0
    refused_accounting: int = 0
    deferred: int = 0
    refused_quota: int = 0


def broker_install(all_threads: bool = False) -> int:
    """iour_broker__install(): in the process to be confined, send every
    io_uring_setup to a broker (irreversible; sets no_new_privs).  Returns
    the listener fd, to pass to the supervising process."""
    o = _lib.opts(_lib.iour_broker_opts, flags=BROKER_ALL_THREADS if all_threads else 0)
    fd = c_int(-1)
    _check(lib.iour_broker__install(byref(o), byref(fd)), "iour_broker__install")
    return fd.value


class Broker(_Handle):
    """A ring broker (iour_broker): answers the io_uring_setup calls of a
    seccomp listener with rings restricted by ``plan``.  On success it owns
    ``listener_fd`` (closed by :meth:`close`).  ``on_ring(event)`` is called
    from :meth:`serve` for each call answered; an exception it raises is
    printed and ignored (it cannot cross the C library)."""

    def __init__(self, plan: Plan, listener_fd, on_ring=None, nonblock: bool = False):
        if not isinstance(plan, Plan):
            raise TypeError("Broker: plan must be a Plan, not %s" % type(plan).__name__)
        fd = _fd(listener_fd)
        self._ptr = None
        self._plan = plan  # the broker reads it until freed
        self._cb = None
        o = _lib.opts(_lib.iour_broker_opts, flags=BROKER_NONBLOCK if nonblock else 0)
        if on_ring is not None:
            if not callable(on_ring):
                raise TypeError("Broker: on_ring must be callable")

            def cb(_arg, ev):
                e = ev.contents
                on_ring(BrokerEvent(e.pid, e.entries, e.setup_flags, e.result, _s(e.what)))

            self._cb = _lib.BROKER_ON_RING(cb)
            o.on_ring = self._cb
        super().__init__(_new(lib.iour_broker__new, plan, fd, byref(o)))

    def fileno(self) -> int:
        """The broker's fd, for poll/select: readable when serve() has work."""
        return _check(lib.iour_broker__fd(self), "iour_broker__fd")

    def serve(self) -> bool:
        """Does the pending work: takes calls (each served by a worker process),
        reaps finished workers, answers calls past their deadline (blocks until
        there is work).  False once every confined process has exited and
        every worker is reaped (-ENOENT)."""
        rc = lib.iour_broker__serve(self)
        if rc == -errno.ENOENT:
            return False
        _check(rc, "iour_broker__serve")
        return True

    def counters(self) -> BrokerCounters:
        c = _lib.opts(_lib.iour_broker_counters)
        _check(lib.iour_broker__counters(self, byref(c)), "iour_broker__counters")
        return BrokerCounters(c.notifications, c.served, c.refused, c.refused_flags,
                              c.refused_kernel, c.refused_memory, c.gone, c.refused_deadline,
                              c.refused_busy, c.refused_accounting, c.deferred,
                              c.refused_quota)


_HANDLE_CLASSES.update(ruleset=Ruleset, filter=Filter, prog=Program, policy=Policy, plan=Plan,
                       broker=Broker)
for _cls, _kind in ((Ruleset, "ruleset"), (Filter, "filter"), (Program, "prog"),
                    (Policy, "policy"), (Plan, "plan"), (Broker, "broker")):
    _cls._free = "iour_%s__free" % _kind
    _cls._kind = _kind

