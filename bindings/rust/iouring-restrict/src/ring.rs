//! A minimal io_uring client for a restricted ring: created disabled,
//! files and buffers registered while it is, then restricted and enabled
//! by [`Ruleset::apply_to_ring`](crate::Ruleset::apply_to_ring) or
//! [`Plan::apply_to_ring`](crate::Plan::apply_to_ring), then one request at
//! a time through the ring's own queues.  std only (the crate takes nothing
//! from a registry), so this is the part of an io_uring crate a restricted
//! ring's user needs, not a general client: any io_uring crate's ring can
//! be restricted the same way through its descriptor.
//!
//! The layouts are the kernel's (`struct io_uring_params`, `io_uring_sqe`,
//! `io_uring_cqe`; doc/kernel.md gives the params and the mmap offsets);
//! the system call numbers are `io_uring_setup` 425, `io_uring_enter` 426
//! and `io_uring_register` 427, as on x86_64, x86, aarch64, arm, powerpc64,
//! riscv64 and s390x.  MIPS numbers its calls from a per-ABI base (4000,
//! 5000, 6000), below which every number fails with `ENOSYS`: there,
//! [`RawRing`] fails so.
use std::io;
use std::os::raw::{c_int, c_long, c_void};
use std::os::unix::io::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::names::{Opcode, SqeFlags};
use crate::ruleset::RingParams;

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
const SYS_IO_URING_REGISTER: c_long = 427;
/// `IORING_SETUP_R_DISABLED`: the ring starts disabled.
pub const IORING_SETUP_R_DISABLED: u32 = 1 << 6;
const IORING_ENTER_GETEVENTS: c_long = 1;
const IORING_REGISTER_BUFFERS: c_long = 0;
const IORING_REGISTER_FILES: c_long = 2;
const PROT_RW: c_int = 0x1 | 0x2;
const MAP_SHARED: c_int = 0x01;
const OFF_SQ_RING: i64 = 0;
const OFF_CQ_RING: i64 = 0x800_0000;
const OFF_SQES: i64 = 0x1000_0000;
const EINTR: i32 = 4;

struct Map(*mut u8, usize);

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: a mapping made by RawRing::with_params, unmapped once.
        unsafe { munmap(self.0 as *mut c_void, self.1) };
    }
}

/// Which file a request uses: a descriptor, or an index into the ring's
/// registered files ([`RawRing::register_files`]; sets `IOSQE_FIXED_FILE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingFile {
    /// A file descriptor.
    Fd(RawFd),
    /// A registered file's index.
    Fixed(u32),
}

impl RingFile {
    fn raw(self) -> (i32, u8) {
        match self {
            RingFile::Fd(fd) => (fd, 0),
            RingFile::Fixed(i) => (i as i32, SqeFlags::FIXED_FILE.bits() as u8),
        }
    }
}

/// One request (`struct io_uring_sqe`, the fields the helpers use).
#[derive(Debug, Clone, Copy, Default)]
struct Sqe {
    opcode: u8,
    flags: u8,
    fd: i32,
    off: u64,
    addr: u64,
    len: u32,
    buf_index: u16,
}

/// An io_uring ring with one request in flight at a time.  Dropping it
/// unmaps the queues and closes the ring.
///
/// ```
/// use iouring_restrict::{Opcode, RawRing, RingFile, Ruleset, SqeFlags};
/// # fn main() -> std::io::Result<()> {
/// if iouring_restrict::feature_level()? < 2 { return Ok(()); } // Linux 5.10+
/// let (r, w) = (std::fs::File::open("/dev/zero")?, std::fs::File::create("/dev/null")?);
/// let mut ring = RawRing::new_disabled(8)?;          // 1. created disabled
/// ring.register_files(&[&r])?;                       // 2. while disabled
/// let mut rs = Ruleset::new()?;                      // 3. restrict and enable
/// rs.allow(Opcode::NOP)?.allow(Opcode::READ)?.deny_all_register_ops()?;
/// rs.sqe_flags(SqeFlags::FIXED_FILE, SqeFlags::NONE)?;
/// rs.apply_to_ring(&ring, true)?;
/// ring.nop()?;                                       // 4. use it
/// let mut buf = [1u8; 4];
/// assert_eq!(ring.read(RingFile::Fixed(0), &mut buf, 0)?, 4);
/// let e = ring.write(RingFile::Fd(std::os::unix::io::AsRawFd::as_raw_fd(&w)), b"x", 0)
///     .unwrap_err();
/// assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied); // EACCES
/// # Ok(()) }
/// ```
pub struct RawRing {
    sq: Map,
    cq: Map,
    sqes: Map,
    p: RingParams,
    bufs: Vec<Vec<u8>>,
    fd: OwnedFd,
}

// SAFETY: the mappings belong to the ring, which moves with them; &mut self
// serialises the requests.
unsafe impl Send for RawRing {}

impl Drop for RawRing {
    fn drop(&mut self) {
        // Registered buffers stay the kernel's as long as the ring lives,
        // which a copy of its descriptor (a dup, a child) may make longer
        // than this value: they are leaked, never freed, so that no request
        // through such a copy writes into memory the program reuses.
        for b in std::mem::take(&mut self.bufs) {
            std::mem::forget(b);
        }
    }
}

impl AsFd for RawRing {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl std::fmt::Debug for RawRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawRing")
            .field("fd", &self.fd.as_raw_fd())
            .field("sq_entries", &self.p.sq_entries())
            .finish_non_exhaustive()
    }
}

fn enter(fd: RawFd, to_submit: u32) -> io::Result<()> {
    // SAFETY: io_uring_enter with no signal mask.
    let r = unsafe {
        syscall(
            SYS_IO_URING_ENTER,
            fd as c_long,
            to_submit as c_long,
            1 as c_long,
            IORING_ENTER_GETEVENTS,
            0 as c_long,
            0 as c_long,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn cqe_result(res: i32) -> io::Result<i32> {
    if res < 0 {
        Err(io::Error::from_raw_os_error(-res))
    } else {
        Ok(res)
    }
}

impl RawRing {
    /// `io_uring_setup(entries)` with `IORING_SETUP_R_DISABLED`: a ring
    /// that takes registrations and restrictions but no request until it
    /// is enabled.
    pub fn new_disabled(entries: u32) -> io::Result<RawRing> {
        let mut p = RingParams::default();
        p.set_flags(IORING_SETUP_R_DISABLED);
        RawRing::with_params(entries, p)
    }

    /// `io_uring_setup(entries, params)` with the caller's flags (add
    /// [`IORING_SETUP_R_DISABLED`] to restrict it), and its queues mapped.
    pub fn with_params(entries: u32, mut p: RingParams) -> io::Result<RawRing> {
        // SAFETY: p is a writable 120-byte io_uring_params.
        let fd = unsafe {
            syscall(
                SYS_IO_URING_SETUP,
                entries as c_long,
                p.0.as_mut_ptr() as *mut c_void,
            )
        };
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
                    MAP_SHARED,
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
        Ok(RawRing {
            sq,
            cq,
            sqes,
            p,
            bufs: Vec::new(),
            fd,
        })
    }

    /// The kernel's answers of the setup (sizes, features, offsets).
    pub fn params(&self) -> &RingParams {
        &self.p
    }

    fn register(&self, op: c_long, arg: *const c_void, nr: u32) -> io::Result<()> {
        // SAFETY: arg points at nr entries of the kind op takes, alive for
        // the call (the kernel copies or pins what it keeps).
        let r = unsafe {
            syscall(
                SYS_IO_URING_REGISTER,
                self.fd.as_raw_fd() as c_long,
                op,
                arg,
                nr as c_long,
            )
        };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// `IORING_REGISTER_FILES`: the files become registered files 0, 1,
    /// ... ([`RingFile::Fixed`]).  Works while the ring is disabled,
    /// whatever its restrictions will allow; once enabled, registering is
    /// itself a register opcode the restrictions decide.
    pub fn register_files(&self, files: &[&dyn AsFd]) -> io::Result<()> {
        let fds: Vec<i32> = files.iter().map(|f| f.as_fd().as_raw_fd()).collect();
        self.register(
            IORING_REGISTER_FILES,
            fds.as_ptr() as *const c_void,
            fds.len() as u32,
        )
    }

    /// `IORING_REGISTER_BUFFERS`: the buffers become registered buffers 0,
    /// 1, ... for [`RawRing::read_fixed`]; the ring keeps them (pinned by
    /// the kernel), and they are never freed, even when the ring is
    /// dropped (a copy of its descriptor may still use them).
    pub fn register_buffers(&mut self, bufs: Vec<Vec<u8>>) -> io::Result<()> {
        if !self.bufs.is_empty() {
            return Err(io::Error::from_raw_os_error(16)); // EBUSY, as the kernel
        }
        let iov: Vec<[usize; 2]> = bufs
            .iter()
            .map(|b| [b.as_ptr() as usize, b.len()])
            .collect();
        self.register(
            IORING_REGISTER_BUFFERS,
            iov.as_ptr() as *const c_void,
            iov.len() as u32,
        )?;
        self.bufs = bufs;
        Ok(())
    }

    /// A registered buffer.
    pub fn buffer(&self, index: usize) -> Option<&[u8]> {
        self.bufs.get(index).map(|b| b.as_slice())
    }

    fn word(m: &Map, off: u32) -> &AtomicU32 {
        // SAFETY: off is one of the kernel's u32 offsets inside the mapping.
        unsafe { &*(m.0.add(off as usize) as *const AtomicU32) }
    }

    /// Submits one SQE and waits for its completion.  Refused by the
    /// kernel before it is consumed (`EBADFD` on a ring still disabled),
    /// the SQE is taken back; consumed, it is waited for even across
    /// signals, so no buffer it names is written after the return.
    fn submit_sqe(&mut self, s: &Sqe) -> io::Result<i32> {
        let so = &self.p.0[10..20];
        let co = &self.p.0[20..30];
        let tail = Self::word(&self.sq, so[1]).load(Ordering::Acquire);
        let mask = Self::word(&self.sq, so[2]).load(Ordering::Relaxed);
        let idx = tail & mask;
        // SAFETY: the SQE slot idx of the mapped array (64 bytes each).
        unsafe {
            let sqe = self.sqes.0.add(idx as usize * 64);
            std::ptr::write_bytes(sqe, 0, 64);
            *sqe = s.opcode;
            *sqe.add(1) = s.flags;
            (sqe.add(4) as *mut i32).write_unaligned(s.fd);
            (sqe.add(8) as *mut u64).write_unaligned(s.off);
            (sqe.add(16) as *mut u64).write_unaligned(s.addr);
            (sqe.add(24) as *mut u32).write_unaligned(s.len);
            (sqe.add(40) as *mut u16).write_unaligned(s.buf_index);
            (self.sq.0.add(so[6] as usize + idx as usize * 4) as *mut u32).write(idx);
        }
        Self::word(&self.sq, so[1]).store(tail.wrapping_add(1), Ordering::Release);
        if let Err(e) = enter(self.fd.as_raw_fd(), 1) {
            Self::word(&self.sq, so[1]).store(tail, Ordering::Release);
            return Err(e);
        }
        let head = Self::word(&self.cq, co[0]).load(Ordering::Acquire);
        while Self::word(&self.cq, co[1]).load(Ordering::Acquire) == head {
            match enter(self.fd.as_raw_fd(), 0) {
                Err(e) if e.raw_os_error() != Some(EINTR) => return Err(e),
                _ => {}
            }
        }
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

    /// Submits a request with only an opcode, a file (or none) and SQE
    /// flags: every other field is 0, so it names no memory (an opcode
    /// that needs some fails with `-EFAULT` or `-EINVAL`).  The
    /// completion's `res`, a negative errno included, such as `-EACCES`
    /// for a request the ring's restrictions deny.
    pub fn submit(
        &mut self,
        opcode: Opcode,
        file: Option<RingFile>,
        flags: SqeFlags,
    ) -> io::Result<i32> {
        let (fd, fixed) = file.map(RingFile::raw).unwrap_or((-1, 0));
        if opcode.0 > 255 || flags.bits() > 255 {
            return Err(io::Error::from_raw_os_error(22));
        }
        self.submit_sqe(&Sqe {
            opcode: opcode.0 as u8,
            flags: flags.bits() as u8 | fixed,
            fd,
            ..Sqe::default()
        })
    }

    /// `IORING_OP_NOP`; `PermissionDenied` (EACCES) if the ring's
    /// restrictions deny it.
    pub fn nop(&mut self) -> io::Result<()> {
        let r = self.submit(Opcode::NOP, None, SqeFlags::NONE)?;
        cqe_result(r).map(|_| ())
    }

    /// `IORING_OP_READ` into `buf` at `off` (`u64::MAX`: the file
    /// position): the count read.
    pub fn read(&mut self, file: RingFile, buf: &mut [u8], off: u64) -> io::Result<usize> {
        let (fd, flags) = file.raw();
        let s = Sqe {
            opcode: Opcode::READ.0 as u8,
            flags,
            fd,
            off,
            addr: buf.as_mut_ptr() as u64,
            len: buf.len().min(u32::MAX as usize) as u32,
            ..Sqe::default()
        };
        cqe_result(self.submit_sqe(&s)?).map(|n| n as usize)
    }

    /// `IORING_OP_WRITE` of `buf` at `off` (`u64::MAX`: the file
    /// position): the count written.
    pub fn write(&mut self, file: RingFile, buf: &[u8], off: u64) -> io::Result<usize> {
        let (fd, flags) = file.raw();
        let s = Sqe {
            opcode: Opcode::WRITE.0 as u8,
            flags,
            fd,
            off,
            addr: buf.as_ptr() as u64,
            len: buf.len().min(u32::MAX as usize) as u32,
            ..Sqe::default()
        };
        cqe_result(self.submit_sqe(&s)?).map(|n| n as usize)
    }

    /// `IORING_OP_READ_FIXED` of up to `len` bytes into registered buffer
    /// `index` (from its start): the count read, then in
    /// [`RawRing::buffer`].
    pub fn read_fixed(
        &mut self,
        file: RingFile,
        index: u16,
        len: u32,
        off: u64,
    ) -> io::Result<usize> {
        let (fd, flags) = file.raw();
        let b = self
            .bufs
            .get_mut(index as usize)
            .ok_or_else(|| io::Error::from_raw_os_error(14))?; // EFAULT, as the kernel
        if len as usize > b.len() {
            return Err(io::Error::from_raw_os_error(14));
        }
        let s = Sqe {
            opcode: Opcode::READ_FIXED.0 as u8,
            flags,
            fd,
            off,
            addr: b.as_mut_ptr() as u64,
            len,
            buf_index: index,
        };
        cqe_result(self.submit_sqe(&s)?).map(|n| n as usize)
    }
}
