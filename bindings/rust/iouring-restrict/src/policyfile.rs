//! Policy files (JSON): load, save, the verdict of one request, and the
//! named opcode groups.
use std::ffi::{CStr, CString};
use std::fmt;
use std::os::raw::c_char;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr;

use iouring_restrict_sys as sys;

use crate::error::{check, Error, Result};
use crate::filter::Verdict;
use crate::names::{Opcode, RegisterOp};
use crate::policy::Policy;

/// Why a policy file was refused: the error, and where in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// The error code (`EBADMSG` for a text that is not a valid policy file).
    pub error: Error,
    /// 1-based line; 0 when the error has no position.
    pub line: u32,
    /// 1-based column in bytes; 0 without a position.
    pub column: u32,
    /// JSON path of the offending value (`entries[0].names[1]`), or "".
    pub path: String,
    /// What was wrong and what was expected.
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: ", self.line, self.column)?;
        }
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        if self.message.is_empty() {
            write!(f, "{}", self.error)
        } else {
            write!(f, "{}", self.message)
        }
    }
}

impl std::error::Error for LoadError {}

impl From<LoadError> for Error {
    fn from(e: LoadError) -> Error {
        e.error
    }
}

fn carray(a: &[c_char]) -> String {
    let bytes: Vec<u8> = a
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn load_error(rc: i32, e: &sys::iour_load_error) -> LoadError {
    LoadError {
        error: Error::from_code(rc),
        line: e.line,
        column: e.column,
        path: carray(&e.path),
        message: carray(&e.message),
    }
}

/// What decided a request's verdict (`enum iour_decide_reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DecideReason {
    /// The request allow-list (`requestOps`) does not list the opcode.
    ClassicGate,
    /// The request's SQE flags are not allowed, or lack a required one.
    SqeFlags,
    /// One of the opcode's argument rules held (see `rule`).
    Rule,
    /// The opcode has argument rules and none held: its default verdict.
    OpcodeDefault,
    /// The opcode's raw program decided.
    Program,
    /// The request allow-list lists the opcode and no argument rule applies.
    ClassicAllow,
    /// Nothing in the policy names the opcode: `defaultAction`.
    PolicyDefault,
    /// A reason this binding does not know (a newer library).
    Other(u32),
}

impl DecideReason {
    /// The reason of an `IOUR_DECIDE_*` value.
    pub fn from_raw(v: u32) -> DecideReason {
        match v {
            sys::IOUR_DECIDE_CLASSIC_GATE => DecideReason::ClassicGate,
            sys::IOUR_DECIDE_SQE_FLAGS => DecideReason::SqeFlags,
            sys::IOUR_DECIDE_RULE => DecideReason::Rule,
            sys::IOUR_DECIDE_OPCODE_DEFAULT => DecideReason::OpcodeDefault,
            sys::IOUR_DECIDE_PROGRAM => DecideReason::Program,
            sys::IOUR_DECIDE_CLASSIC_ALLOW => DecideReason::ClassicAllow,
            sys::IOUR_DECIDE_POLICY_DEFAULT => DecideReason::PolicyDefault,
            other => DecideReason::Other(other),
        }
    }
}

/// The verdict of one request under a policy ([`Policy::decide`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestVerdict {
    /// Allowed or denied.
    pub verdict: Verdict,
    /// Why.
    pub reason: DecideReason,
    /// The index of the deciding rule among the opcode's rules, if a rule
    /// decided.
    pub rule: Option<u32>,
}

impl Policy {
    /// Loads a policy from the JSON text of a policy file.
    ///
    /// ```
    /// use iouring_restrict::{Opcode, Policy, Verdict};
    /// let p = Policy::from_json(r#"{ "defaultAction": "deny",
    ///     "entries": [ { "names": ["nop", "read"], "action": "allow" } ] }"#).unwrap();
    /// assert_eq!(p.decide_op(Opcode::READ).unwrap().verdict, Verdict::Allow);
    /// assert_eq!(p.decide_op(Opcode::WRITE).unwrap().verdict, Verdict::Deny);
    /// let e = Policy::from_json(r#"{ "entires": [] }"#).unwrap_err();
    /// assert_eq!((e.line, e.path.as_str()), (1, "entires"));
    /// ```
    pub fn from_json(text: &str) -> std::result::Result<Policy, LoadError> {
        let mut err = sys::iour_load_error::default();
        let mut ptr = ptr::null_mut();
        // SAFETY: text is read for len bytes; err and ptr outlive the call.
        let rc = unsafe {
            sys::iour_policy__load_json(
                text.as_ptr() as *const c_char,
                text.len(),
                ptr::null(),
                &mut ptr,
                &mut err,
            )
        };
        if rc < 0 {
            return Err(load_error(rc, &err));
        }
        Ok(Policy::from_raw(ptr))
    }

    /// Reads a policy file and loads it.
    pub fn load_file(path: impl AsRef<Path>) -> std::result::Result<Policy, LoadError> {
        let c = CString::new(path.as_ref().as_os_str().as_bytes()).map_err(|_| LoadError {
            error: Error::from_code(-22),
            line: 0,
            column: 0,
            path: String::new(),
            message: "a NUL byte in the file name".to_string(),
        })?;
        let mut err = sys::iour_load_error::default();
        let mut ptr = ptr::null_mut();
        // SAFETY: c is NUL-terminated; err and ptr outlive the call.
        let rc =
            unsafe { sys::iour_policy__load_file(c.as_ptr(), ptr::null(), &mut ptr, &mut err) };
        if rc < 0 {
            return Err(load_error(rc, &err));
        }
        Ok(Policy::from_raw(ptr))
    }

    /// The policy as a policy file, in the canonical form (the same policy
    /// always gives the same text).
    pub fn to_json(&self) -> Result<String> {
        let p = self.as_ptr();
        // SAFETY: ask for the length with a NULL buffer.
        let n = check(unsafe { sys::iour_policy__save_json(p, 0, ptr::null_mut(), 0) })? as usize;
        let mut buf = vec![0u8; n + 1];
        // SAFETY: buf holds n + 1 bytes.
        check(unsafe {
            sys::iour_policy__save_json(p, 0, buf.as_mut_ptr() as *mut c_char, buf.len())
        })?;
        buf.truncate(n);
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }

    /// The verdict of the policy for one request, given as its 40-byte
    /// filter context (see [`crate::Prog::run`]).
    pub fn decide(&self, ctx: &[u8]) -> Result<RequestVerdict> {
        let mut v = sys::iour_request_verdict::default();
        // SAFETY: ctx is read for its length; v outlives the call.
        check(unsafe { sys::iour_policy__decide(self.as_ptr(), ctx.as_ptr(), ctx.len(), &mut v) })?;
        Ok(RequestVerdict {
            verdict: if v.verdict == sys::IOUR_ALLOW {
                Verdict::Allow
            } else {
                Verdict::Deny
            },
            reason: DecideReason::from_raw(v.reason),
            rule: if v.rule == sys::IOUR_VERDICT_NO_RULE {
                None
            } else {
                Some(v.rule)
            },
        })
    }

    /// The verdict for a request of `op` without flags or arguments.
    pub fn decide_op(&self, op: Opcode) -> Result<RequestVerdict> {
        let mut ctx = [0u8; sys::IOUR_CTX_SIZE as usize];
        // SAFETY: ctx is writable for its length.
        check(unsafe { sys::iour_ctx_generic(ctx.as_mut_ptr(), ctx.len(), op.0, 0, 0) })?;
        self.decide(&ctx)
    }
}

/// A named opcode group of policy files (`"@file-read"`, ...).
///
/// ```
/// use iouring_restrict::{Group, Opcode};
/// let g = Group::find("@file-read").unwrap();
/// assert!(g.opcodes(None).unwrap().contains(&Opcode::READ));
/// assert!(Group::all().unwrap().len() >= 10);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    index: usize,
    /// The name, with its `@`.
    pub name: String,
    /// One line of help.
    pub help: String,
    /// Where the list comes from.
    pub source: String,
}

fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: static NUL-terminated strings of the library.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

impl Group {
    fn get(index: usize) -> Result<Group> {
        let mut gi = sys::iour_group_info::default();
        // SAFETY: gi outlives the call.
        check(unsafe { sys::iour_group_get(index, &mut gi) })?;
        Ok(Group {
            index,
            name: cstr(gi.name),
            help: cstr(gi.help),
            source: cstr(gi.source),
        })
    }

    /// Every group.
    pub fn all() -> Result<Vec<Group>> {
        // SAFETY: no arguments.
        let n = check(unsafe { sys::iour_group_count() })? as usize;
        (0..n).map(Group::get).collect()
    }

    /// A group by name (`"@file-read"` or `"file-read"`, any case).
    pub fn find(name: &str) -> Result<Group> {
        let c = CString::new(name).map_err(|_| Error::from_code(-22))?;
        // SAFETY: c is NUL-terminated.
        let i = check(unsafe { sys::iour_group_find(c.as_ptr()) })? as usize;
        Group::get(i)
    }

    fn list(
        &self,
        kver: Option<(u32, u32)>,
        f: unsafe extern "C" fn(usize, u32, *mut u32, usize) -> i32,
    ) -> Result<Vec<u32>> {
        let k = kver.map_or(0, |(a, b)| (a << 16) | (b << 8));
        // SAFETY: NULL buffer asks for the count.
        let n = check(unsafe { f(self.index, k, ptr::null_mut(), 0) })? as usize;
        let mut v = vec![0u32; n];
        // SAFETY: v holds n entries.
        let m = check(unsafe { f(self.index, k, v.as_mut_ptr(), v.len()) })? as usize;
        v.truncate(m.min(n));
        Ok(v)
    }

    /// The group's request opcodes, as of kernel `kver` (None: all).
    pub fn opcodes(&self, kver: Option<(u32, u32)>) -> Result<Vec<Opcode>> {
        Ok(self
            .list(kver, sys::iour_group_opcodes)?
            .into_iter()
            .map(Opcode)
            .collect())
    }

    /// The group's register opcodes, as of kernel `kver` (None: all).
    pub fn register_ops(&self, kver: Option<(u32, u32)>) -> Result<Vec<RegisterOp>> {
        Ok(self
            .list(kver, sys::iour_group_register_ops)?
            .into_iter()
            .map(RegisterOp)
            .collect())
    }
}
