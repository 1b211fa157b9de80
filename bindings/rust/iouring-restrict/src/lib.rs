//! Safe Rust bindings of libiouring-restrict: restrict what io_uring may do.
//!
//! - [`Ruleset`]: per-ring allow-lists of request opcodes, register opcodes
//!   and SQE flags, applied to a ring its owner created disabled
//!   ([`Ruleset::apply_to_ring`] takes any `impl AsFd`, so a ring from any
//!   io_uring crate can be restricted, then enabled by its owner);
//! - [`Filter`]: argument rules over typed [`Field`]s, compiled to classic
//!   BPF ([`Prog`]) and simulated;
//! - [`Policy`] → [`Plan`] (the dry run for the running kernel) →
//!   [`Report`] ([`RulesetStatus`]), with [`CompatLevel`]s named as in the
//!   `landlock` crate;
//! - policy files: [`Policy::from_json`], [`Policy::to_json`],
//!   [`Policy::decide`], opcode [`Group`]s;
//! - [`probe`]: what the running kernel supports;
//! - [`RawRing`]: a ring created disabled, with files and buffers
//!   registered while it is, restricted and enabled, then driven one
//!   request at a time (or any io_uring crate's ring, through its fd).
//!
//! Every handle frees itself when dropped; every fallible call returns
//! [`Result`], whose [`Error`] keeps the errno and the library's message.
//! No `unsafe` is needed.  Rust 1.63 or newer; std only.
//!
//! **Threads.**  The handles ([`Ruleset`], [`Filter`], [`Prog`],
//! [`Policy`], [`Plan`]) are `Send` but not `Sync`: one may be moved to
//! another thread, never shared by two at once (the library's objects are
//! not thread-safe).  Ownership makes "close while another thread is
//! inside a call" impossible: a handle is freed only when dropped, and a
//! borrow for a call keeps it alive.  Wrap one in a `Mutex` to share it.
//!
//! ```compile_fail
//! fn shared<T: Sync>() {}
//! shared::<iouring_restrict::Ruleset>(); // not Sync
//! ```
//! ```compile_fail
//! fn shared<T: Sync>() {}
//! shared::<iouring_restrict::Policy>(); // not Sync
//! ```
//! ```
//! fn sent<T: Send>() {}
//! sent::<iouring_restrict::Ruleset>();
//! sent::<iouring_restrict::Filter>();
//! sent::<iouring_restrict::Prog>();
//! sent::<iouring_restrict::Policy>();
//! sent::<iouring_restrict::Plan>();
//! ```
//!
//! ```
//! use iouring_restrict::{Opcode, Ruleset, SqeFlags};
//! # fn main() -> Result<(), iouring_restrict::Error> {
//! let mut rs = Ruleset::new()?;
//! rs.allow(Opcode::READ)?.allow(Opcode::WRITE)?.sqe_flags(SqeFlags::NONE, SqeFlags::NONE)?;
//! // With a kernel that has ring restrictions (5.10+), make a ring that
//! // may only read and write:
//! if iouring_restrict::feature_level()? >= 2 {
//!     let (_ring_fd, report) = rs.create_ring(8, None)?;
//!     assert!(report.enabled());
//! }
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

mod broker;
mod error;
mod filter;
mod names;
mod policy;
mod policyfile;
mod ring;
mod ruleset;

use std::os::raw::c_char;

pub use iouring_restrict_sys as sys;

pub use broker::{install_broker, Broker, BrokerCounters, BrokerEvent};
pub use error::{Error, LibraryError, Result};
pub use filter::{Cmp, Field, Filter, Prog, ProgKind, Verdict};
pub use names::{Opcode, RegisterOp, SqeFlags};
pub use policy::{CompatLevel, Decision, Plan, Policy, Report, RulesetStatus, Target};
pub use policyfile::{DecideReason, Group, LoadError, RequestVerdict};
pub use ring::{RawRing, RingFile, IORING_SETUP_R_DISABLED};
pub use ruleset::{enable_ring, RingParams, RingReport, Ruleset};

use error::{check, static_string};

/// Runs a C function of the two-call text protocol (`buf` NULL to learn the
/// length, then the text) and returns the text.
pub(crate) fn text(mut f: impl FnMut(*mut c_char, *mut usize) -> i32) -> Result<String> {
    let mut len = 0usize;
    check(f(std::ptr::null_mut(), &mut len))?;
    let mut buf = vec![0u8; len.max(1)];
    len = buf.len();
    check(f(buf.as_mut_ptr() as *mut c_char, &mut len))?;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    buf.truncate(end);
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// What the running kernel supports (`struct iour_features`, from a probe
/// run in a forked child; cached by the library).
///
/// ```
/// let f = iouring_restrict::probe().unwrap();
/// assert!(f.level <= 5);
/// println!("{}", iouring_restrict::feature_level_str(f.level));
/// ```
pub fn probe() -> Result<sys::iour_features> {
    let mut f = sys::iour_features::default();
    // SAFETY: NULL options; f is a writable struct with sz set.
    check(unsafe { sys::iour_probe(std::ptr::null(), &mut f) })?;
    Ok(f)
}

/// Linux `major.minor` as the probe would find it for a fresh process,
/// from the library's tables (`iour_kernel_describe()`, since 1.1): the
/// feature level, opcode limits, payload sizes and errnos.  A description,
/// not a measurement; pass it to planning for that version.
///
/// ```
/// let f = iouring_restrict::kernel_describe(7, 2).unwrap();
/// assert_eq!(f.level, 5);
/// assert_eq!((f.pdu_socket, f.pdu_connect), (12, 24));
/// // Every opcode's payload, indexed by opcode (since 1.1).
/// let connect = iouring_restrict::sys::IOUR_OP_CONNECT as usize;
/// assert_eq!(f.pdu_size[connect], 24);
/// assert_eq!(f.pdu_size.iter().filter(|&&n| n != 0).count(), 4);
/// assert_eq!(iouring_restrict::kernel_describe(6, 1).unwrap().pdu_socket, 0);
/// ```
pub fn kernel_describe(major: u16, minor: u8) -> Result<sys::iour_features> {
    let mut f = sys::iour_features::default();
    let kver = (u32::from(major) << 16) | (u32::from(minor) << 8);
    // SAFETY: f is a writable struct with sz set.
    check(unsafe { sys::iour_kernel_describe(kver, &mut f) })?;
    Ok(f)
}

/// The flags of a probe's answer (`iour_features::flags`,
/// `IOUR_FEATURES_*`).
///
/// ```
/// use iouring_restrict::{FeaturesExt, FeaturesFlags};
/// let f = iouring_restrict::probe().unwrap();
/// assert_eq!(f.features_flags().bits(), f.flags);
/// if f.features_flags().contains(FeaturesFlags::TASK_SET_GATES_FILTERS) {
///     println!("task sets gate filter registrations (Debian's 7.3.4)");
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FeaturesFlags(u64);

impl FeaturesFlags {
    /// `IOUR_FEATURE_LEVEL` lowered the level.
    pub const FORCED: FeaturesFlags = FeaturesFlags(sys::IOUR_FEATURES_FORCED);
    /// `IOUR_FEATURE_LEVEL` was set but ignored.
    pub const FORCE_IGNORED: FeaturesFlags = FeaturesFlags(sys::IOUR_FEATURES_FORCE_IGNORED);
    /// Two answers contradicted each other (features reported unknown).
    pub const MISMATCH: FeaturesFlags = FeaturesFlags(sys::IOUR_FEATURES_MISMATCH);
    /// The probe child was killed before it finished.
    pub const CHILD_DIED: FeaturesFlags = FeaturesFlags(sys::IOUR_FEATURES_CHILD_DIED);
    /// The SOCKET filter payload's type word lacks `SOCK_NONBLOCK` and
    /// `SOCK_CLOEXEC` (measured on Debian's Linux 7.3.4): rules on them
    /// use the fallback.
    pub const SOCKET_FLAGS_HIDDEN: FeaturesFlags =
        FeaturesFlags(sys::IOUR_FEATURES_SOCKET_FLAGS_HIDDEN);
    /// A task set's register list also gates the task's fd -1 filter
    /// registrations (measured on Debian's Linux 7.3.4): plans list
    /// `BPF_FILTER` in such sets.
    pub const TASK_SET_GATES_FILTERS: FeaturesFlags =
        FeaturesFlags(sys::IOUR_FEATURES_TASK_SET_GATES_FILTERS);

    /// The flags from their bits (unknown bits are kept).
    pub const fn from_bits(bits: u64) -> FeaturesFlags {
        FeaturesFlags(bits)
    }

    /// The bits.
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// Whether every flag of `other` is set here.
    pub const fn contains(self, other: FeaturesFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

/// Typed views of a probe's answer (`sys::iour_features`).
pub trait FeaturesExt {
    /// Its flags (`IOUR_FEATURES_*`).
    fn features_flags(&self) -> FeaturesFlags;
}

impl FeaturesExt for sys::iour_features {
    fn features_flags(&self) -> FeaturesFlags {
        FeaturesFlags(self.flags)
    }
}

/// The running kernel's feature level (0 none .. 5; 2 = per-ring
/// restrictions, 4 = task restrictions and filters).
pub fn feature_level() -> Result<u32> {
    // SAFETY: no arguments.
    check(unsafe { sys::iour_feature_level() })
}

/// The name of a feature level.
pub fn feature_level_str(level: u32) -> String {
    // SAFETY: returns a static string.
    static_string(unsafe { sys::iour_feature_level_str(level as i32) })
}

/// The library's version string (`"1.1.0"`).
pub fn version() -> String {
    // SAFETY: returns a static string.
    static_string(unsafe { sys::iour_version_string() })
}

// The enums print their names with `{}` as with `{:?}`
// (`println!("{}", report.status())` shows `FullyEnforced`).
macro_rules! display_by_debug {
    ($($t:ty),*) => {
        $(impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Debug::fmt(self, f)
            }
        })*
    };
}
display_by_debug!(
    CompatLevel,
    Target,
    RulesetStatus,
    Verdict,
    Field,
    ProgKind,
    DecideReason,
    LibraryError
);

/// `A|B` for the flags set in `bits` with a name, then any other bits in
/// hex; `0` for none.
pub(crate) fn flag_names(
    f: &mut std::fmt::Formatter<'_>,
    bits: u64,
    names: &[(u64, &str)],
) -> std::fmt::Result {
    if bits == 0 {
        return f.write_str("0");
    }
    let mut rest = bits;
    let mut sep = "";
    for &(b, n) in names {
        if b != 0 && rest & b == b {
            write!(f, "{}{}", sep, n)?;
            sep = "|";
            rest &= !b;
        }
    }
    if rest != 0 {
        write!(f, "{}{:#x}", sep, rest)?;
    }
    Ok(())
}

impl std::fmt::Display for FeaturesFlags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        flag_names(
            f,
            self.0,
            &[
                // BEGIN GENERATED rs-features-names: scripts/gen-bindings.py (make generate), do not edit
                (sys::IOUR_FEATURES_FORCED, "FORCED"),
                (sys::IOUR_FEATURES_FORCE_IGNORED, "FORCE_IGNORED"),
                (sys::IOUR_FEATURES_MISMATCH, "MISMATCH"),
                (sys::IOUR_FEATURES_CHILD_DIED, "CHILD_DIED"),
                (
                    sys::IOUR_FEATURES_SOCKET_FLAGS_HIDDEN,
                    "SOCKET_FLAGS_HIDDEN",
                ),
                (
                    sys::IOUR_FEATURES_TASK_SET_GATES_FILTERS,
                    "TASK_SET_GATES_FILTERS",
                ),
                // END GENERATED rs-features-names
            ],
        )
    }
}

macro_rules! opaque_debug {
    ($($t:ty),*) => {
        $(impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($t)).finish_non_exhaustive()
            }
        })*
    };
}
opaque_debug!(Ruleset, Filter, Prog, Policy, Plan, Report<'_>);
