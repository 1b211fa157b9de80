//! Restriction sets and per-ring application.
use std::os::unix::io::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::ptr;

use iouring_restrict_sys as sys;

use crate::error::{check, check_in, Result};
use crate::names::{Opcode, RegisterOp, SqeFlags};

/// A restriction set: the request opcodes, register opcodes and SQE flags
/// a ring may use.  Freed when dropped.
///
/// ```
/// use iouring_restrict::{Opcode, Ruleset, SqeFlags};
/// # fn main() -> Result<(), iouring_restrict::Error> {
/// let mut rs = Ruleset::new()?;
/// rs.allow(Opcode::NOP)?.allow_name("read")?.sqe_flags(SqeFlags::NONE, SqeFlags::NONE)?;
/// assert!(rs.is_allowed(Opcode::READ));
/// assert!(!rs.is_allowed(Opcode::OPENAT));
/// # Ok(()) }
/// ```
pub struct Ruleset {
    ptr: *mut sys::iour_ruleset,
}

// SAFETY: the handle is owned; the C library keeps no thread affinity.
unsafe impl Send for Ruleset {}

impl Drop for Ruleset {
    fn drop(&mut self) {
        // SAFETY: ptr came from iour_ruleset__new/dup and is freed once.
        unsafe { sys::iour_ruleset__free(self.ptr) }
    }
}

impl Ruleset {
    /// An empty set (nothing allowed, nothing restricted yet).
    pub fn new() -> Result<Ruleset> {
        let mut ptr = ptr::null_mut();
        // SAFETY: NULL options mean the defaults; ptr receives the handle.
        check(unsafe { sys::iour_ruleset__new(ptr::null(), &mut ptr) })?;
        Ok(Ruleset { ptr })
    }

    /// A copy of the set.
    pub fn try_clone(&self) -> Result<Ruleset> {
        let mut ptr = ptr::null_mut();
        // SAFETY: self.ptr is valid.
        check(unsafe { sys::iour_ruleset__dup(self.ptr, &mut ptr) })?;
        Ok(Ruleset { ptr })
    }

    pub(crate) fn as_ptr(&self) -> *const sys::iour_ruleset {
        self.ptr
    }

    /// Takes ownership of a set the library returned.
    pub(crate) fn from_raw(ptr: *mut sys::iour_ruleset) -> Ruleset {
        Ruleset { ptr }
    }

    /// Allows a request opcode.
    pub fn allow(&mut self, op: Opcode) -> Result<&mut Self> {
        // SAFETY: self.ptr is valid and exclusively borrowed.
        check_in(
            unsafe { sys::iour_ruleset__allow_sqe_op(self.ptr, op.0) },
            b"iour_ruleset__allow_sqe_op\0",
        )?;
        Ok(self)
    }

    /// Allows a request opcode by name (`"READ"`, `"IORING_OP_READ"`).
    pub fn allow_name(&mut self, name: &str) -> Result<&mut Self> {
        self.allow(Opcode::from_name(name)?)
    }

    /// Allows a register opcode.
    pub fn allow_register(&mut self, op: RegisterOp) -> Result<&mut Self> {
        // SAFETY: as above.
        check_in(
            unsafe { sys::iour_ruleset__allow_register_op(self.ptr, op.0) },
            b"iour_ruleset__allow_register_op\0",
        )?;
        Ok(self)
    }

    /// Restricts request opcodes with nothing allowed.
    pub fn deny_all_ops(&mut self) -> Result<&mut Self> {
        // SAFETY: as above.
        check(unsafe { sys::iour_ruleset__deny_all_sqe_ops(self.ptr) })?;
        Ok(self)
    }

    /// Restricts register opcodes with nothing allowed.
    pub fn deny_all_register_ops(&mut self) -> Result<&mut Self> {
        // SAFETY: as above.
        check(unsafe { sys::iour_ruleset__deny_all_register_ops(self.ptr) })?;
        Ok(self)
    }

    /// Decides the SQE flags: those a request may carry and those it must.
    pub fn sqe_flags(&mut self, allowed: SqeFlags, required: SqeFlags) -> Result<&mut Self> {
        // SAFETY: as above.
        check(unsafe {
            sys::iour_ruleset__set_sqe_flags(self.ptr, allowed.bits(), required.bits())
        })?;
        Ok(self)
    }

    /// Whether the set allows a request opcode.
    pub fn is_allowed(&self, op: Opcode) -> bool {
        // SAFETY: self.ptr is valid.
        unsafe { sys::iour_ruleset__sqe_op_allowed(self.ptr, op.0) == 1 }
    }

    /// Whether the set allows a register opcode.
    pub fn is_register_allowed(&self, op: RegisterOp) -> bool {
        // SAFETY: self.ptr is valid.
        unsafe { sys::iour_ruleset__register_op_allowed(self.ptr, op.0) == 1 }
    }

    /// Restricts `ring`, which its owner created with
    /// `IORING_SETUP_R_DISABLED`, and enables it (unless `enable` is
    /// false: the owner then enables it, e.g. with [`enable_ring`], from
    /// the thread that will submit).  Works with a ring from any io_uring
    /// crate: only its file descriptor is used.
    ///
    /// Errors: `EBADFD` if the ring was not created disabled or is already
    /// enabled, `EBUSY` if it already has restrictions, `EOPNOTSUPP` if the
    /// descriptor is not an io_uring, `ENOMSG` if the SQE flags were never
    /// decided; the other codes of `iour_ring_apply()`.
    ///
    /// ```
    /// use iouring_restrict::{Opcode, Ruleset, SqeFlags};
    /// let mut rs = Ruleset::new().unwrap();
    /// rs.allow(Opcode::NOP).unwrap().sqe_flags(SqeFlags::NONE, SqeFlags::NONE).unwrap();
    /// // Not a ring: the library says so.
    /// let f = std::fs::File::open("/dev/null").unwrap();
    /// let e = rs.apply_to_ring(&f, true).unwrap_err();
    /// assert_eq!(e.errno(), 95); // EOPNOTSUPP
    /// ```
    pub fn apply_to_ring(&self, ring: impl AsFd, enable: bool) -> Result<RingReport> {
        let mut rep = sys::iour_ring_report::default();
        let mut o = sys::iour_ring_apply_opts::default();
        o.report = &mut rep;
        if !enable {
            o.flags = sys::IOUR_RING_APPLY_NO_ENABLE;
        }
        let fd = ring.as_fd().as_raw_fd();
        // SAFETY: fd is borrowed for the call; rep outlives it.
        check(unsafe { sys::iour_ring_apply(fd, self.ptr, &o) })?;
        Ok(RingReport(rep))
    }

    /// Creates a ring of `entries` restricted by the set and enabled.  The
    /// caller maps it itself (the returned descriptor is a plain io_uring
    /// descriptor); see [`RingParams`].
    pub fn create_ring(
        &self,
        entries: u32,
        params: Option<&mut RingParams>,
    ) -> Result<(OwnedFd, RingReport)> {
        let mut rep = sys::iour_ring_report::default();
        let mut o = sys::iour_ring_create_opts::default();
        o.report = &mut rep;
        let p = match params {
            Some(p) => p.0.as_mut_ptr() as *mut std::os::raw::c_void,
            None => ptr::null_mut(),
        };
        let mut fd = -1;
        // SAFETY: p is NULL or 120 writable bytes; rep and fd outlive the call.
        check(unsafe { sys::iour_ring_create(entries, p, self.ptr, &o, &mut fd) })?;
        // SAFETY: on success fd is a new descriptor we own.
        Ok((unsafe { OwnedFd::from_raw_fd(fd) }, RingReport(rep)))
    }
}

/// `struct io_uring_params` (120 bytes) for [`Ruleset::create_ring`]: set
/// the setup flags before, read the kernel's answers after.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C)]
pub struct RingParams(pub [u32; 30]);

impl RingParams {
    /// The submission queue's size the kernel chose (`sq_entries`, word 0;
    /// read after the ring is created).
    pub fn sq_entries(&self) -> u32 {
        self.0[0]
    }
    /// The completion queue's size (`cq_entries`, word 1).
    pub fn cq_entries(&self) -> u32 {
        self.0[1]
    }
    /// Asks for a completion queue of `n` entries (with
    /// `IORING_SETUP_CQSIZE` in the flags).
    pub fn set_cq_entries(&mut self, n: u32) {
        self.0[1] = n;
    }
    /// The `IORING_SETUP_*` flags (word 2).
    pub fn flags(&self) -> u32 {
        self.0[2]
    }
    /// Sets the `IORING_SETUP_*` flags.
    pub fn set_flags(&mut self, flags: u32) {
        self.0[2] = flags;
    }
    /// The CPU of the SQPOLL thread (`sq_thread_cpu`, word 3).
    pub fn sq_thread_cpu(&self) -> u32 {
        self.0[3]
    }
    /// Pins the SQPOLL thread (with `IORING_SETUP_SQ_AFF`).
    pub fn set_sq_thread_cpu(&mut self, cpu: u32) {
        self.0[3] = cpu;
    }
    /// The SQPOLL thread's idle time in milliseconds (`sq_thread_idle`,
    /// word 4).
    pub fn sq_thread_idle(&self) -> u32 {
        self.0[4]
    }
    /// Sets the SQPOLL thread's idle time in milliseconds.
    pub fn set_sq_thread_idle(&mut self, ms: u32) {
        self.0[4] = ms;
    }
    /// The `IORING_FEAT_*` bits the kernel reported (`features`, word 5).
    pub fn features(&self) -> u32 {
        self.0[5]
    }
    /// The ring whose io-wq to share (`wq_fd`, word 6), with
    /// `IORING_SETUP_ATTACH_WQ`.
    pub fn wq_fd(&self) -> u32 {
        self.0[6]
    }
    /// Sets the ring whose io-wq to share.
    pub fn set_wq_fd(&mut self, fd: u32) {
        self.0[6] = fd;
    }
}

/// Enables a ring created with `IORING_SETUP_R_DISABLED`
/// (`IORING_REGISTER_ENABLE_RINGS`).
pub fn enable_ring(ring: impl AsFd) -> Result<()> {
    // SAFETY: the descriptor is borrowed for the call.
    check(unsafe { sys::iour_ring_enable(ring.as_fd().as_raw_fd()) }).map(|_| ())
}

/// What [`Ruleset::apply_to_ring`] or [`Ruleset::create_ring`] did.
#[derive(Debug, Clone, Copy)]
pub struct RingReport(pub sys::iour_ring_report);

impl RingReport {
    /// Whether the entries were registered.
    pub fn registered(&self) -> bool {
        self.0.registered != 0
    }
    /// Whether this call enabled the ring.
    pub fn enabled(&self) -> bool {
        self.0.enabled != 0
    }
    /// Number of 16-byte entries registered.
    pub fn entries(&self) -> u32 {
        self.0.nr_entries
    }
    /// Allowed request opcodes dropped because the kernel lacks them.
    pub fn clamped_ops(&self) -> Vec<Opcode> {
        (0..256u32)
            .filter(|n| self.0.clamped_sqe_ops[(n / 64) as usize] >> (n % 64) & 1 == 1)
            .map(Opcode)
            .collect()
    }
}
