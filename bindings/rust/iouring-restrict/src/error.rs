//! Errors: the library's negative return codes as a Rust error.
use std::ffi::CStr;
use std::fmt;
use std::io;

use iouring_restrict_sys as sys;

/// The library's own error codes (from 4000; system errno values are below).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LibraryError {
    /// An internal invariant failed (a bug to report).
    Internal,
    /// A compiled program would exceed the kernel's 4096 instructions.
    ProgTooLarge,
    /// A cBPF program breaks a rule of the kernel's checkers.
    InvalidProg,
    /// The running kernel lacks a feature the request hard-requires.
    Unsupported,
    /// Application stopped midway; the report says what took effect.
    Partial,
    /// The kernel's answer contradicts the documented interface.
    KernelMismatch,
    /// The enforcement check saw a forbidden request succeed.
    NotEnforced,
}

impl LibraryError {
    fn from_code(code: i32) -> Option<LibraryError> {
        Some(match code {
            sys::IOUR_ERRNO__INTERNAL => LibraryError::Internal,
            sys::IOUR_ERRNO__PROG_TOO_LARGE => LibraryError::ProgTooLarge,
            sys::IOUR_ERRNO__INVALID_PROG => LibraryError::InvalidProg,
            sys::IOUR_ERRNO__UNSUPPORTED => LibraryError::Unsupported,
            sys::IOUR_ERRNO__PARTIAL => LibraryError::Partial,
            sys::IOUR_ERRNO__KERNEL_MISMATCH => LibraryError::KernelMismatch,
            sys::IOUR_ERRNO__NOT_ENFORCED => LibraryError::NotEnforced,
            _ => return None,
        })
    }
}

/// An error of the library: the (positive) error number and the library's
/// message for it.
///
/// ```
/// use iouring_restrict::{Error, LibraryError};
/// let e = Error::from_code(-22);
/// assert_eq!(e.errno(), 22);
/// assert_eq!(e.name(), "-EINVAL");
/// assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
/// let e = Error::from_code(-4004);
/// assert_eq!(e.library_error(), Some(LibraryError::Unsupported));
/// assert!(!e.message().is_empty());
/// ```
///
/// Where the failing call recorded which value it refused and the limit
/// (`iour_errdetail()`), those words are the message and [`Error::detail`]:
///
/// ```
/// use iouring_restrict::{Opcode, Ruleset};
/// let mut rs = Ruleset::new().unwrap();
/// let e = rs.allow(Opcode(255)).unwrap_err();
/// assert_eq!(e.errno(), 34); // ERANGE, as documented
/// assert!(e.to_string().starts_with("opcode 255: the library's request-opcode table ends at"));
/// assert_eq!(e.detail(), Some(e.message()));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    errno: i32,
    message: String,
    detail: bool,
}

fn static_str(p: *const std::os::raw::c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the library returns static NUL-terminated strings.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

impl Error {
    /// The error of a return code (negative, or its absolute value).
    pub fn from_code(code: i32) -> Error {
        let errno = code.checked_abs().unwrap_or(i32::MAX);
        // SAFETY: iour_strerror_desc() takes any int and returns a static string.
        let message = static_str(unsafe { sys::iour_strerror_desc(errno) });
        Error {
            errno,
            message,
            detail: false,
        }
    }

    /// The error of a failed call of `function` (its C name, NUL-terminated),
    /// with the words it recorded, if any (`iour_errdetail()`; read at once:
    /// the record is the calling thread's).
    pub(crate) fn from_call(code: i32, function: &'static [u8]) -> Error {
        let mut e = Error::from_code(code);
        debug_assert_eq!(function.last(), Some(&0));
        // SAFETY: function is NUL-terminated; the answer is NULL or a
        // NUL-terminated string of this thread, copied at once.
        let d = unsafe { sys::iour_errdetail(function.as_ptr() as *const _, e.errno) };
        if !d.is_null() {
            e.message = static_str(d);
            e.detail = true;
        }
        e
    }

    /// An error with its own message (an unknown name and the nearest
    /// valid one), instead of the library's text for the errno.
    pub(crate) fn with_message(code: i32, message: String) -> Error {
        let errno = code.checked_abs().unwrap_or(i32::MAX);
        Error {
            errno,
            message,
            detail: true,
        }
    }

    /// The positive error number: a system errno, or one of the library's
    /// codes (4001 and up).
    pub fn errno(&self) -> i32 {
        self.errno
    }

    /// The library's message for the error: the words the call recorded
    /// about the refused value ([`Error::detail`]) where it recorded some,
    /// else the message for the code.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// What the failing call said about the value it refused and the
    /// limit (`iour_errdetail()`), such as `level 9: levels are 0..5`, or,
    /// for an unknown name, the name and the nearest valid one; `None`
    /// where the code alone is all there is.
    pub fn detail(&self) -> Option<&str> {
        if self.detail {
            Some(&self.message)
        } else {
            None
        }
    }

    /// The symbolic name, such as `-EINVAL` or `-IOUR_ERRNO__UNSUPPORTED`.
    pub fn name(&self) -> String {
        // SAFETY: as above.
        static_str(unsafe { sys::iour_errname(self.errno) })
    }

    /// The library's own code, if the error is one.
    pub fn library_error(&self) -> Option<LibraryError> {
        LibraryError::from_code(self.errno)
    }

    /// The `std::io::ErrorKind` of a system errno (`Other` for the
    /// library's own codes).
    pub fn kind(&self) -> io::ErrorKind {
        if self.errno >= sys::IOUR_ERRNO__START {
            io::ErrorKind::Other
        } else {
            io::Error::from_raw_os_error(self.errno).kind()
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Error({}: {})", self.name(), self.message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.name())
    }
}

impl std::error::Error for Error {}

impl From<Error> for io::Error {
    /// System errno values become OS errors (so `kind()` works), except an
    /// error with a message of its own (an unknown name and its
    /// suggestion), which becomes an error of that errno's kind carrying
    /// the `Error`; the library's own codes become `Other` errors carrying
    /// the `Error`.
    fn from(e: Error) -> io::Error {
        if e.errno >= sys::IOUR_ERRNO__START {
            io::Error::new(io::ErrorKind::Other, e)
        } else if e.detail {
            // a message of its own (a detail, an unknown name): keep it
            io::Error::new(io::Error::from_raw_os_error(e.errno).kind(), e)
        } else {
            io::Error::from_raw_os_error(e.errno)
        }
    }
}

/// A C return code as a result, with the detail `function` recorded
/// (`function`: its C name with a trailing NUL, `b"iour_policy__plan\0"`).
pub(crate) fn check_in(rc: std::os::raw::c_int, function: &'static [u8]) -> Result<u32> {
    if rc < 0 {
        Err(Error::from_call(rc, function))
    } else {
        Ok(rc as u32)
    }
}

/// The result of the crate's fallible calls.
pub type Result<T> = std::result::Result<T, Error>;

/// A C return code as a result: non-negative values are passed on.
pub(crate) fn check(rc: std::os::raw::c_int) -> Result<u32> {
    if rc < 0 {
        Err(Error::from_code(rc))
    } else {
        Ok(rc as u32)
    }
}

pub(crate) fn static_string(p: *const std::os::raw::c_char) -> String {
    static_str(p)
}
