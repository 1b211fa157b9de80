//! Opcodes and SQE flags, by number or by name.
use std::ffi::CString;
use std::fmt;
use std::ops::{BitOr, BitOrAssign};

use iouring_restrict_sys as sys;

use crate::error::{check, static_string, Error, Result};

/// The error of a name lookup that failed: for ENOENT, "unknown request
/// opcode 'opnat' (did you mean 'OPENAT'?)" (`iour_name_suggest()`), not
/// the system's "No such file or directory".
fn unknown(rc: i32, kind: u32, what: &str, name: &str, c: &CString) -> Error {
    if rc != -libc_enoent() {
        return Error::from_code(rc);
    }
    // SAFETY: c is NUL-terminated; the result is NULL or a static string.
    let near = static_string(unsafe { sys::iour_name_suggest(kind, c.as_ptr()) });
    let mut msg = format!("unknown {} '{}'", what, name);
    if !near.is_empty() {
        msg.push_str(&format!(" (did you mean '{}'?)", near));
    }
    Error::with_message(rc, msg)
}

fn libc_enoent() -> i32 {
    2
}

fn cname(name: &str) -> Result<CString> {
    CString::new(name).map_err(|_| Error::from_code(-22))
}

/// A request opcode (`IORING_OP_*`).  Numbers the library does not know are
/// accepted too (the running kernel may be newer).
///
/// ```
/// use iouring_restrict::Opcode;
/// assert_eq!(Opcode::from_name("openat").unwrap(), Opcode::OPENAT);
/// assert_eq!(Opcode::SOCKET.name(), Some("SOCKET".to_string()));
/// assert_eq!(Opcode::SOCKET.since(), Some((5, 19)));
/// assert!(Opcode::from_name("NO_SUCH_OP").is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Opcode(pub u32);

#[allow(missing_docs)]
impl Opcode {
    // BEGIN GENERATED rs-ops: scripts/gen-bindings.py (make generate), do not edit
    pub const NOP: Opcode = Opcode(0);
    pub const READV: Opcode = Opcode(1);
    pub const WRITEV: Opcode = Opcode(2);
    pub const FSYNC: Opcode = Opcode(3);
    pub const READ_FIXED: Opcode = Opcode(4);
    pub const WRITE_FIXED: Opcode = Opcode(5);
    pub const POLL_ADD: Opcode = Opcode(6);
    pub const POLL_REMOVE: Opcode = Opcode(7);
    pub const SYNC_FILE_RANGE: Opcode = Opcode(8);
    pub const SENDMSG: Opcode = Opcode(9);
    pub const RECVMSG: Opcode = Opcode(10);
    pub const TIMEOUT: Opcode = Opcode(11);
    pub const TIMEOUT_REMOVE: Opcode = Opcode(12);
    pub const ACCEPT: Opcode = Opcode(13);
    pub const ASYNC_CANCEL: Opcode = Opcode(14);
    pub const LINK_TIMEOUT: Opcode = Opcode(15);
    pub const CONNECT: Opcode = Opcode(16);
    pub const FALLOCATE: Opcode = Opcode(17);
    pub const OPENAT: Opcode = Opcode(18);
    pub const CLOSE: Opcode = Opcode(19);
    pub const FILES_UPDATE: Opcode = Opcode(20);
    pub const STATX: Opcode = Opcode(21);
    pub const READ: Opcode = Opcode(22);
    pub const WRITE: Opcode = Opcode(23);
    pub const FADVISE: Opcode = Opcode(24);
    pub const MADVISE: Opcode = Opcode(25);
    pub const SEND: Opcode = Opcode(26);
    pub const RECV: Opcode = Opcode(27);
    pub const OPENAT2: Opcode = Opcode(28);
    pub const EPOLL_CTL: Opcode = Opcode(29);
    pub const SPLICE: Opcode = Opcode(30);
    pub const PROVIDE_BUFFERS: Opcode = Opcode(31);
    pub const REMOVE_BUFFERS: Opcode = Opcode(32);
    pub const TEE: Opcode = Opcode(33);
    pub const SHUTDOWN: Opcode = Opcode(34);
    pub const RENAMEAT: Opcode = Opcode(35);
    pub const UNLINKAT: Opcode = Opcode(36);
    pub const MKDIRAT: Opcode = Opcode(37);
    pub const SYMLINKAT: Opcode = Opcode(38);
    pub const LINKAT: Opcode = Opcode(39);
    pub const MSG_RING: Opcode = Opcode(40);
    pub const FSETXATTR: Opcode = Opcode(41);
    pub const SETXATTR: Opcode = Opcode(42);
    pub const FGETXATTR: Opcode = Opcode(43);
    pub const GETXATTR: Opcode = Opcode(44);
    pub const SOCKET: Opcode = Opcode(45);
    pub const URING_CMD: Opcode = Opcode(46);
    pub const SEND_ZC: Opcode = Opcode(47);
    pub const SENDMSG_ZC: Opcode = Opcode(48);
    pub const READ_MULTISHOT: Opcode = Opcode(49);
    pub const WAITID: Opcode = Opcode(50);
    pub const FUTEX_WAIT: Opcode = Opcode(51);
    pub const FUTEX_WAKE: Opcode = Opcode(52);
    pub const FUTEX_WAITV: Opcode = Opcode(53);
    pub const FIXED_FD_INSTALL: Opcode = Opcode(54);
    pub const FTRUNCATE: Opcode = Opcode(55);
    pub const BIND: Opcode = Opcode(56);
    pub const LISTEN: Opcode = Opcode(57);
    pub const RECV_ZC: Opcode = Opcode(58);
    pub const EPOLL_WAIT: Opcode = Opcode(59);
    pub const READV_FIXED: Opcode = Opcode(60);
    pub const WRITEV_FIXED: Opcode = Opcode(61);
    pub const PIPE: Opcode = Opcode(62);
    pub const NOP128: Opcode = Opcode(63);
    pub const URING_CMD128: Opcode = Opcode(64);
    // END GENERATED rs-ops
    /// Number of request opcodes the library knows.
    pub const COUNT: u32 = sys::IOUR_OP__COUNT;

    /// Looks an opcode up by name, case-insensitively, `IORING_OP_` optional.
    pub fn from_name(name: &str) -> Result<Opcode> {
        let c = cname(name)?;
        // SAFETY: c is a NUL-terminated string alive for the call.
        let rc = unsafe { sys::iour_opcode_from_name(c.as_ptr()) };
        check(rc)
            .map(Opcode)
            .map_err(|_| unknown(rc, sys::IOUR_NAME_OPCODE, "request opcode", name, &c))
    }

    /// The name without prefix (`"READ"`), or `None` if unknown.
    pub fn name(self) -> Option<String> {
        // SAFETY: returns a static string or NULL.
        let p = unsafe { sys::iour_opcode_name(self.0) };
        if p.is_null() {
            None
        } else {
            Some(static_string(p))
        }
    }

    /// The kernel version that added the opcode, as (major, minor).
    pub fn since(self) -> Option<(u32, u32)> {
        // SAFETY: plain integer call.
        kver(unsafe { sys::iour_opcode_since(self.0) })
    }
}

fn kver(v: i32) -> Option<(u32, u32)> {
    if v <= 0 {
        None
    } else {
        Some(((v as u32) >> 16, ((v as u32) >> 8) & 0xff))
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(&n),
            None => write!(f, "{}", self.0),
        }
    }
}

/// A register opcode (`IORING_REGISTER_*` / `IORING_UNREGISTER_*`).
///
/// ```
/// use iouring_restrict::RegisterOp;
/// assert_eq!(RegisterOp::from_name("register_buffers").unwrap(), RegisterOp::REGISTER_BUFFERS);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegisterOp(pub u32);

#[allow(missing_docs)]
impl RegisterOp {
    // BEGIN GENERATED rs-regs: scripts/gen-bindings.py (make generate), do not edit
    pub const REGISTER_BUFFERS: RegisterOp = RegisterOp(0);
    pub const UNREGISTER_BUFFERS: RegisterOp = RegisterOp(1);
    pub const REGISTER_FILES: RegisterOp = RegisterOp(2);
    pub const UNREGISTER_FILES: RegisterOp = RegisterOp(3);
    pub const REGISTER_EVENTFD: RegisterOp = RegisterOp(4);
    pub const UNREGISTER_EVENTFD: RegisterOp = RegisterOp(5);
    pub const REGISTER_FILES_UPDATE: RegisterOp = RegisterOp(6);
    pub const REGISTER_EVENTFD_ASYNC: RegisterOp = RegisterOp(7);
    pub const REGISTER_PROBE: RegisterOp = RegisterOp(8);
    pub const REGISTER_PERSONALITY: RegisterOp = RegisterOp(9);
    pub const UNREGISTER_PERSONALITY: RegisterOp = RegisterOp(10);
    pub const REGISTER_RESTRICTIONS: RegisterOp = RegisterOp(11);
    pub const REGISTER_ENABLE_RINGS: RegisterOp = RegisterOp(12);
    pub const REGISTER_FILES2: RegisterOp = RegisterOp(13);
    pub const REGISTER_FILES_UPDATE2: RegisterOp = RegisterOp(14);
    pub const REGISTER_BUFFERS2: RegisterOp = RegisterOp(15);
    pub const REGISTER_BUFFERS_UPDATE: RegisterOp = RegisterOp(16);
    pub const REGISTER_IOWQ_AFF: RegisterOp = RegisterOp(17);
    pub const UNREGISTER_IOWQ_AFF: RegisterOp = RegisterOp(18);
    pub const REGISTER_IOWQ_MAX_WORKERS: RegisterOp = RegisterOp(19);
    pub const REGISTER_RING_FDS: RegisterOp = RegisterOp(20);
    pub const UNREGISTER_RING_FDS: RegisterOp = RegisterOp(21);
    pub const REGISTER_PBUF_RING: RegisterOp = RegisterOp(22);
    pub const UNREGISTER_PBUF_RING: RegisterOp = RegisterOp(23);
    pub const REGISTER_SYNC_CANCEL: RegisterOp = RegisterOp(24);
    pub const REGISTER_FILE_ALLOC_RANGE: RegisterOp = RegisterOp(25);
    pub const REGISTER_PBUF_STATUS: RegisterOp = RegisterOp(26);
    pub const REGISTER_NAPI: RegisterOp = RegisterOp(27);
    pub const UNREGISTER_NAPI: RegisterOp = RegisterOp(28);
    pub const REGISTER_CLOCK: RegisterOp = RegisterOp(29);
    pub const REGISTER_CLONE_BUFFERS: RegisterOp = RegisterOp(30);
    pub const REGISTER_SEND_MSG_RING: RegisterOp = RegisterOp(31);
    pub const REGISTER_ZCRX_IFQ: RegisterOp = RegisterOp(32);
    pub const REGISTER_RESIZE_RINGS: RegisterOp = RegisterOp(33);
    pub const REGISTER_MEM_REGION: RegisterOp = RegisterOp(34);
    pub const REGISTER_QUERY: RegisterOp = RegisterOp(35);
    pub const REGISTER_ZCRX_CTRL: RegisterOp = RegisterOp(36);
    pub const REGISTER_BPF_FILTER: RegisterOp = RegisterOp(37);
    // END GENERATED rs-regs
    /// Number of register opcodes the library knows.
    pub const COUNT: u32 = sys::IOUR_REGISTER__COUNT;

    /// Looks a register opcode up by name, case-insensitively, `IORING_`
    /// optional.
    pub fn from_name(name: &str) -> Result<RegisterOp> {
        let c = cname(name)?;
        // SAFETY: c is a NUL-terminated string alive for the call.
        let rc = unsafe { sys::iour_register_op_from_name(c.as_ptr()) };
        check(rc)
            .map(RegisterOp)
            .map_err(|_| unknown(rc, sys::IOUR_NAME_REGISTER_OP, "register opcode", name, &c))
    }

    /// The name without prefix, or `None` if unknown.
    pub fn name(self) -> Option<String> {
        // SAFETY: returns a static string or NULL.
        let p = unsafe { sys::iour_register_op_name(self.0) };
        if p.is_null() {
            None
        } else {
            Some(static_string(p))
        }
    }
}

impl fmt::Display for RegisterOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(&n),
            None => write!(f, "{}", self.0),
        }
    }
}

/// A set of SQE flags (`IOSQE_*`).
///
/// ```
/// use iouring_restrict::SqeFlags;
/// let f = SqeFlags::IO_LINK | SqeFlags::ASYNC;
/// assert_eq!(f.bits(), 0x14);
/// assert!(f.contains(SqeFlags::ASYNC));
/// assert_eq!(SqeFlags::from_name("fixed_file").unwrap(), SqeFlags::FIXED_FILE);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SqeFlags(u32);

#[allow(missing_docs)]
impl SqeFlags {
    pub const NONE: SqeFlags = SqeFlags(0);
    // BEGIN GENERATED rs-sqe-flags: scripts/gen-bindings.py (make generate), do not edit
    pub const FIXED_FILE: SqeFlags = SqeFlags(sys::IOUR_SQE_FIXED_FILE);
    pub const IO_DRAIN: SqeFlags = SqeFlags(sys::IOUR_SQE_IO_DRAIN);
    pub const IO_LINK: SqeFlags = SqeFlags(sys::IOUR_SQE_IO_LINK);
    pub const IO_HARDLINK: SqeFlags = SqeFlags(sys::IOUR_SQE_IO_HARDLINK);
    pub const ASYNC: SqeFlags = SqeFlags(sys::IOUR_SQE_ASYNC);
    pub const BUFFER_SELECT: SqeFlags = SqeFlags(sys::IOUR_SQE_BUFFER_SELECT);
    pub const CQE_SKIP_SUCCESS: SqeFlags = SqeFlags(sys::IOUR_SQE_CQE_SKIP_SUCCESS);
    // END GENERATED rs-sqe-flags
    /// Every flag the library knows.
    pub const ALL: SqeFlags = SqeFlags(sys::IOUR_SQE__VALID);

    /// The flags from their bits (unknown bits are kept; the library
    /// refuses them where they matter).
    pub const fn from_bits(bits: u32) -> SqeFlags {
        SqeFlags(bits)
    }

    /// The bits.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// Whether every flag of `other` is set here.
    pub const fn contains(self, other: SqeFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// One flag by name, case-insensitively, `IOSQE_` optional.
    pub fn from_name(name: &str) -> Result<SqeFlags> {
        let c = cname(name)?;
        // SAFETY: c is a NUL-terminated string alive for the call.
        let rc = unsafe { sys::iour_sqe_flag_from_name(c.as_ptr()) };
        check(rc)
            .map(SqeFlags)
            .map_err(|_| unknown(rc, sys::IOUR_NAME_SQE_FLAG, "SQE flag", name, &c))
    }
}

impl fmt::Display for SqeFlags {
    /// The flags' names joined by `|` (`IO_LINK|ASYNC`), `0` for none.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names = Vec::new();
        for bit in 0..32 {
            let b = 1u32 << bit;
            // SAFETY: returns a static string or NULL.
            let p = unsafe { sys::iour_sqe_flag_name(b) };
            if self.0 & b != 0 && !p.is_null() {
                names.push((u64::from(b), static_string(p)));
            }
        }
        let refs: Vec<(u64, &str)> = names.iter().map(|(b, n)| (*b, n.as_str())).collect();
        crate::flag_names(f, u64::from(self.0), &refs)
    }
}

impl BitOr for SqeFlags {
    type Output = SqeFlags;
    fn bitor(self, o: SqeFlags) -> SqeFlags {
        SqeFlags(self.0 | o.0)
    }
}

impl BitOrAssign for SqeFlags {
    fn bitor_assign(&mut self, o: SqeFlags) {
        self.0 |= o.0;
    }
}
