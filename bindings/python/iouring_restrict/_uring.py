# SPDX-License-Identifier: MIT
"""A minimal io_uring client for :class:`Ring`: io_uring_setup with
IORING_SETUP_R_DISABLED, io_uring_register for files and buffers while the
ring is still disabled, and one request at a time through the mapped SQ
and CQ rings.  Python has no io_uring module: this is the part of
liburing a restricted-ring user needs, not a general client.

The layouts are the kernel's (struct io_uring_params, io_uring_sqe,
io_uring_cqe; doc/kernel.md gives the params and the mmap offsets); the
system call numbers are io_uring_setup 425, io_uring_enter 426 and
io_uring_register 427, as on x86_64, i386, arm64, armhf, ppc64el, riscv64
and s390x.  MIPS numbers its calls from a per-ABI base (4000, 5000, 6000),
below which every number fails with ENOSYS: there, Ring.setup() fails so."""
import ctypes
import errno
import mmap
import os
import struct

SYS_SETUP, SYS_ENTER, SYS_REGISTER = 425, 426, 427
SETUP_R_DISABLED = 1 << 6
ENTER_GETEVENTS = 1
REGISTER_BUFFERS, REGISTER_FILES = 0, 2
OFF_SQ_RING, OFF_CQ_RING, OFF_SQES = 0, 0x8000000, 0x10000000
SQE_SIZE, CQE_SIZE = 64, 16
IOSQE_FIXED_FILE = 1 << 0

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _sys(nr, *args):
    """A raw system call: its result, or OSError with its errno."""
    r = _libc.syscall(ctypes.c_long(nr), *args)
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


class Params(ctypes.Structure):
    """struct io_uring_params (120 bytes): 10 words, then the SQ ring's
    offsets (10 words) and the CQ ring's (10 words)."""
    _fields_ = [("w", ctypes.c_uint32 * 30)]

    sq = property(lambda self: self.w[10:20])  # head tail mask entries flags dropped array
    cq = property(lambda self: self.w[20:30])  # head tail mask entries overflow cqes


def setup(entries, flags):
    """io_uring_setup(entries, {flags}): (fd, Params)."""
    p = Params()
    p.w[2] = flags
    fd = _sys(SYS_SETUP, ctypes.c_uint(entries), ctypes.byref(p))
    return int(fd), p


def register(fd, op, arg, nr):
    _sys(SYS_REGISTER, ctypes.c_int(fd), ctypes.c_uint(op), arg, ctypes.c_uint(nr))


class _Iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def register_files(fd, fds):
    arr = (ctypes.c_int32 * len(fds))(*fds)
    register(fd, REGISTER_FILES, arr, len(fds))


def register_buffers(fd, bufs):
    """Registers bytearrays as fixed buffers; the caller keeps them (and
    the ctypes views returned) alive as long as the ring."""
    views = [(ctypes.c_char * len(b)).from_buffer(b) for b in bufs]
    iov = (_Iovec * len(bufs))(*[_Iovec(ctypes.addressof(v), len(v)) for v in views])
    register(fd, REGISTER_BUFFERS, iov, len(bufs))
    return views


class Queues:
    """The mapped SQ ring, CQ ring and SQE array of one ring; one request
    in flight at a time, driven from the kernel's shared indexes."""

    def __init__(self, fd, p):
        self.fd = fd
        self.sq_off, self.cq_off = p.sq, p.cq
        sq_entries, cq_entries = p.w[0], p.w[1]
        prot = mmap.PROT_READ | mmap.PROT_WRITE
        self.sq = mmap.mmap(fd, self.sq_off[6] + 4 * sq_entries, mmap.MAP_SHARED, prot,
                            offset=OFF_SQ_RING)
        self.cq = mmap.mmap(fd, self.cq_off[5] + CQE_SIZE * cq_entries, mmap.MAP_SHARED, prot,
                            offset=OFF_CQ_RING)
        self.sqes = mmap.mmap(fd, SQE_SIZE * sq_entries, mmap.MAP_SHARED, prot,
                              offset=OFF_SQES)

    def close(self):
        for m in (self.sq, self.cq, self.sqes):
            m.close()

    @staticmethod
    def _u32(m, off, v=None):
        if v is None:
            return struct.unpack_from("<I", m, off)[0]
        struct.pack_into("<I", m, off, v & 0xFFFFFFFF)

    def _enter(self, to_submit):
        return _sys(SYS_ENTER, ctypes.c_int(self.fd), ctypes.c_uint(to_submit), ctypes.c_uint(1),
                    ctypes.c_uint(ENTER_GETEVENTS), None, ctypes.c_size_t(0))

    def submit(self, opcode, fd=0, off=0, addr=0, length=0, op_flags=0, sqe_flags=0,
               buf_index=0, user_data=0):
        """Submits one SQE and waits for its completion: the CQE's res (a
        negative errno is returned, not raised).  OSError if the kernel
        refused the submission itself (EBADFD: the ring is still disabled;
        the SQE is then taken back)."""
        so, co = self.sq_off, self.cq_off
        tail = self._u32(self.sq, so[1])
        idx = tail & self._u32(self.sq, so[2])
        sqe = struct.pack("<BBHiQQIIQH22x", opcode, sqe_flags, 0, fd, off & (2**64 - 1),
                          addr, length, op_flags, user_data, buf_index)
        self.sqes[idx * SQE_SIZE:(idx + 1) * SQE_SIZE] = sqe
        self._u32(self.sq, so[6] + 4 * idx, idx)
        self._u32(self.sq, so[1], tail + 1)
        try:
            self._enter(1)
        except OSError:
            # Nothing was consumed (the kernel checks the ring's state
            # before it reads the SQ): take the entry back.
            self._u32(self.sq, so[1], tail)
            raise
        # The SQE is the kernel's now: wait until its completion is there,
        # even across a signal, so no buffer is written after we return.
        while True:
            head = self._u32(self.cq, co[0])
            if self._u32(self.cq, co[1]) != head:
                break
            try:
                self._enter(0)
            except InterruptedError:
                pass
        cqe = co[5] + CQE_SIZE * (head & self._u32(self.cq, co[2]))
        _, res, _ = struct.unpack_from("<QiI", self.cq, cqe)
        self._u32(self.cq, co[0], head + 1)
        return res


def check_res(res):
    """A CQE's res as a result: OSError (the matching built-in subclass,
    PermissionError for EACCES) for a negative errno."""
    if res < 0:
        raise OSError(-res, os.strerror(-res))
    return res


__all__ = ["setup", "register_files", "register_buffers", "Queues", "check_res", "errno"]
