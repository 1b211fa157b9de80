// A minimal io_uring made with raw system calls (std only, no io_uring
// crate): enough to create a ring disabled, submit one request and read its
// completion.  It stands for "a ring from any Rust io_uring crate": the
// bindings only see its file descriptor through AsFd.
#![allow(dead_code)]
use std::io;
use std::os::raw::{c_int, c_long, c_void};
use std::os::unix::io::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};

extern "C" {
    fn syscall(n: c_long, ...) -> c_long;
    fn mmap(
        addr: *mut c_void,
        len: usize,
        prot: c_int,
        flags: c_int,
        fd: c_int,
        off: i64,
    ) -> *mut c_void;
    fn munmap(addr: *mut c_void, len: usize) -> c_int;
}

const SYS_IO_URING_SETUP: c_long = 425;
const SYS_IO_URING_ENTER: c_long = 426;
pub const IORING_SETUP_R_DISABLED: u32 = 1 << 6;
const IORING_ENTER_GETEVENTS: u32 = 1;
const PROT_RW: c_int = 0x1 | 0x2;
const MAP_SHARED_POPULATE: c_int = 0x01 | 0x8000;
const OFF_SQ_RING: i64 = 0;
const OFF_CQ_RING: i64 = 0x800_0000;
const OFF_SQES: i64 = 0x1000_0000;

// struct io_uring_params: 10 words, then io_sqring_offsets and
// io_cqring_offsets (10 words each).
#[repr(C)]
#[derive(Default)]
struct Params([u32; 30]);

struct Map(*mut u8, usize);
impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: a mapping made by MiniRing::new, unmapped once.
        unsafe { munmap(self.0 as *mut c_void, self.1) };
    }
}

/// A ring with one SQ entry in flight at a time.
pub struct MiniRing {
    sq: Map,
    cq: Map,
    sqes: Map,
    p: Params,
    fd: OwnedFd,
}

impl AsFd for MiniRing {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl MiniRing {
    /// io_uring_setup(entries, flags) and the three mappings.
    pub fn new(entries: u32, flags: u32) -> io::Result<MiniRing> {
        let mut p = Params::default();
        p.0[2] = flags;
        // SAFETY: p is a writable 120-byte io_uring_params.
        let fd = unsafe { syscall(SYS_IO_URING_SETUP, entries as c_long, &mut p as *mut Params) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a new descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd as c_int) };
        let map = |len: usize, off: i64| -> io::Result<Map> {
            // SAFETY: a shared mapping of the ring's descriptor.
            let a = unsafe {
                mmap(
                    std::ptr::null_mut(),
                    len,
                    PROT_RW,
                    MAP_SHARED_POPULATE,
                    fd.as_raw_fd(),
                    off,
                )
            };
            if a as isize == -1 {
                Err(io::Error::last_os_error())
            } else {
                Ok(Map(a as *mut u8, len))
            }
        };
        let (sq_entries, cq_entries) = (p.0[0] as usize, p.0[1] as usize);
        let sq = map(p.0[10 + 6] as usize + sq_entries * 4, OFF_SQ_RING)?;
        let cq = map(p.0[20 + 5] as usize + cq_entries * 16, OFF_CQ_RING)?;
        let sqes = map(sq_entries * 64, OFF_SQES)?;
        Ok(MiniRing {
            sq,
            cq,
            sqes,
            p,
            fd,
        })
    }

    fn word(m: &Map, off: u32) -> &AtomicU32 {
        // SAFETY: off is one of the kernel's u32 offsets inside the mapping.
        unsafe { &*(m.0.add(off as usize) as *const AtomicU32) }
    }

    /// Submits one request (opcode, fd, sqe flags) and waits for its
    /// completion: the CQE's result, or the error of io_uring_enter.
    pub fn submit_one(&self, opcode: u8, fd: i32, sqe_flags: u8) -> io::Result<i32> {
        let so = &self.p.0[10..20];
        let co = &self.p.0[20..30];
        let tail = Self::word(&self.sq, so[1]).load(Ordering::Acquire);
        let mask = Self::word(&self.sq, so[2]).load(Ordering::Relaxed);
        let idx = tail & mask;
        // SAFETY: the SQE slot idx of the mapped array (64 bytes each).
        unsafe {
            let sqe = self.sqes.0.add(idx as usize * 64);
            std::ptr::write_bytes(sqe, 0, 64);
            *sqe = opcode;
            *sqe.add(1) = sqe_flags;
            (sqe.add(4) as *mut i32).write_unaligned(fd);
            (sqe.add(32) as *mut u64).write_unaligned(0x5eed);
            (self.sq.0.add(so[6] as usize + idx as usize * 4) as *mut u32).write(idx);
        }
        Self::word(&self.sq, so[1]).store(tail.wrapping_add(1), Ordering::Release);
        // SAFETY: io_uring_enter on our ring.
        let r = unsafe {
            syscall(
                SYS_IO_URING_ENTER,
                self.fd.as_raw_fd() as c_long,
                1 as c_long,
                1 as c_long,
                IORING_ENTER_GETEVENTS as c_long,
                0 as c_long,
                0 as c_long,
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            // Take the entry back so the ring stays consistent.
            Self::word(&self.sq, so[1]).store(tail, Ordering::Release);
            return Err(e);
        }
        let head = Self::word(&self.cq, co[0]).load(Ordering::Acquire);
        let cmask = Self::word(&self.cq, co[2]).load(Ordering::Relaxed);
        // SAFETY: the CQE at head, 16 bytes each: user_data, res, flags.
        let res = unsafe {
            (self
                .cq
                .0
                .add(co[5] as usize + (head & cmask) as usize * 16 + 8) as *const i32)
                .read()
        };
        Self::word(&self.cq, co[0]).store(head.wrapping_add(1), Ordering::Release);
        Ok(res)
    }
}
