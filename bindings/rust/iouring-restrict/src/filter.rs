//! Argument filters: rules over typed fields of a request, compiled to
//! classic BPF, and the simulator.
use std::ptr;
use std::slice;

use iouring_restrict_sys as sys;

use crate::error::{check, Result};
use crate::names::Opcode;

/// What a rule decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The request fails with `EACCES`.
    Deny,
    /// The request proceeds.
    Allow,
}

impl Verdict {
    fn raw(self) -> u32 {
        match self {
            Verdict::Deny => sys::IOUR_DENY,
            Verdict::Allow => sys::IOUR_ALLOW,
        }
    }
}

/// A field of a request a rule compares (`enum iour_field`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
#[non_exhaustive]
pub enum Field {
    // BEGIN GENERATED rs-field-variants: scripts/gen-bindings.py (make generate), do not edit
    UserData,
    SqeFlags,
    SocketFamily,
    SocketType,
    SocketTypeFlags,
    SocketTypeRaw,
    SocketProtocol,
    OpenFlags,
    OpenAccmode,
    OpenMode,
    OpenResolve,
    ConnectFamily,
    ConnectPort,
    ConnectAddr4,
    ConnectAddr6,
    // END GENERATED rs-field-variants
}

impl Field {
    fn raw(self) -> u32 {
        match self {
            // BEGIN GENERATED rs-field-raw: scripts/gen-bindings.py (make generate), do not edit
            Field::UserData => sys::IOUR_FIELD_USER_DATA,
            Field::SqeFlags => sys::IOUR_FIELD_SQE_FLAGS,
            Field::SocketFamily => sys::IOUR_FIELD_SOCKET_FAMILY,
            Field::SocketType => sys::IOUR_FIELD_SOCKET_TYPE,
            Field::SocketTypeFlags => sys::IOUR_FIELD_SOCKET_TYPE_FLAGS,
            Field::SocketTypeRaw => sys::IOUR_FIELD_SOCKET_TYPE_RAW,
            Field::SocketProtocol => sys::IOUR_FIELD_SOCKET_PROTOCOL,
            Field::OpenFlags => sys::IOUR_FIELD_OPEN_FLAGS,
            Field::OpenAccmode => sys::IOUR_FIELD_OPEN_ACCMODE,
            Field::OpenMode => sys::IOUR_FIELD_OPEN_MODE,
            Field::OpenResolve => sys::IOUR_FIELD_OPEN_RESOLVE,
            Field::ConnectFamily => sys::IOUR_FIELD_CONNECT_FAMILY,
            Field::ConnectPort => sys::IOUR_FIELD_CONNECT_PORT,
            Field::ConnectAddr4 => sys::IOUR_FIELD_CONNECT_ADDR4,
            Field::ConnectAddr6 => sys::IOUR_FIELD_CONNECT_ADDR6,
            // END GENERATED rs-field-raw
        }
    }
}

/// One comparison of a rule (`struct iour_cmp`); a rule matches when all
/// of its comparisons hold.
#[derive(Debug, Clone)]
pub struct Cmp {
    raw: sys::iour_cmp,
    set: Vec<u64>,
}

impl Cmp {
    fn new(field: Field, op: u32, value: u64, arg: u64) -> Cmp {
        let mut raw = sys::iour_cmp::default();
        raw.field = field.raw();
        raw.op = op;
        raw.value = value;
        raw.arg = arg;
        Cmp {
            raw,
            set: Vec::new(),
        }
    }
    /// `field == value`
    pub fn eq(field: Field, value: u64) -> Cmp {
        Cmp::new(field, sys::IOUR_CMP_EQ, value, 0)
    }
    /// `field != value`
    pub fn ne(field: Field, value: u64) -> Cmp {
        Cmp::new(field, sys::IOUR_CMP_NE, value, 0)
    }
    /// `field < value`
    pub fn lt(field: Field, value: u64) -> Cmp {
        Cmp::new(field, sys::IOUR_CMP_LT, value, 0)
    }
    /// `field > value`
    pub fn gt(field: Field, value: u64) -> Cmp {
        Cmp::new(field, sys::IOUR_CMP_GT, value, 0)
    }
    /// `(field & mask) == value`
    pub fn masked_eq(field: Field, mask: u64, value: u64) -> Cmp {
        Cmp::new(field, sys::IOUR_CMP_MASKED_EQ, value, mask)
    }
    /// `(field & bits) != 0`
    pub fn any_bits(field: Field, bits: u64) -> Cmp {
        Cmp::new(field, sys::IOUR_CMP_ANY_BITS, bits, 0)
    }
    /// `(field & bits) == 0`
    pub fn no_bits(field: Field, bits: u64) -> Cmp {
        Cmp::new(field, sys::IOUR_CMP_NONE_BITS, bits, 0)
    }
    /// `lo <= field <= hi`
    pub fn in_range(field: Field, lo: u64, hi: u64) -> Cmp {
        Cmp::new(field, sys::IOUR_CMP_IN_RANGE, lo, hi)
    }
    /// `field` is one of `values`.
    pub fn in_set(field: Field, values: &[u64]) -> Cmp {
        let mut c = Cmp::new(field, sys::IOUR_CMP_IN_SET, 0, 0);
        c.set = values.to_vec();
        c
    }
    /// `field` is none of `values`.
    pub fn not_in_set(field: Field, values: &[u64]) -> Cmp {
        let mut c = Cmp::in_set(field, values);
        c.raw.op = sys::IOUR_CMP_NOT_IN_SET;
        c
    }

    fn to_raw(&self) -> sys::iour_cmp {
        let mut r = self.raw;
        if !self.set.is_empty() {
            r.set = self.set.as_ptr();
            r.set_len = self.set.len() as u64;
        }
        r
    }
}

/// Argument rules per request opcode (`struct iour_filter`).  Freed when
/// dropped.
///
/// ```
/// use iouring_restrict::{Cmp, Field, Filter, Opcode, Verdict, ProgKind};
/// # fn main() -> Result<(), iouring_restrict::Error> {
/// // SOCKET only for AF_INET (2) and AF_INET6 (10).
/// let mut f = Filter::new(Verdict::Deny)?;
/// f.rule(Opcode::SOCKET, Verdict::Allow, &[Cmp::in_set(Field::SocketFamily, &[2, 10])])?;
/// let prog = f.compile(Opcode::SOCKET)?;
/// assert_eq!(prog.kind(), ProgKind::Filter);
/// assert!(prog.run_socket(2, 1, 0)?);     // AF_INET stream: allowed
/// assert!(!prog.run_socket(1, 1, 0)?);    // AF_UNIX: denied
/// assert!(prog.disasm()?.contains("ret"));
/// # Ok(()) }
/// ```
pub struct Filter {
    ptr: *mut sys::iour_filter,
}

// SAFETY: owned handle without thread affinity.
unsafe impl Send for Filter {}

impl Drop for Filter {
    fn drop(&mut self) {
        // SAFETY: freed once.
        unsafe { sys::iour_filter__free(self.ptr) }
    }
}

impl Filter {
    /// A filter whose opcodes with rules default to `default` when no rule
    /// matches.
    pub fn new(default: Verdict) -> Result<Filter> {
        let mut o = sys::iour_filter_opts::default();
        o.default_verdict = default.raw();
        let mut ptr = ptr::null_mut();
        // SAFETY: o and ptr outlive the call.
        check(unsafe { sys::iour_filter__new(&o, &mut ptr) })?;
        Ok(Filter { ptr })
    }

    pub(crate) fn as_ptr(&self) -> *const sys::iour_filter {
        self.ptr
    }

    /// Adds a rule: requests of `op` for which every comparison holds get
    /// `verdict` (the first matching rule decides).
    pub fn rule(&mut self, op: Opcode, verdict: Verdict, cmps: &[Cmp]) -> Result<&mut Self> {
        let raw: Vec<sys::iour_cmp> = cmps.iter().map(Cmp::to_raw).collect();
        // SAFETY: raw (and the sets it points to, owned by cmps) live for the call.
        check(unsafe {
            sys::iour_filter__add_rule(self.ptr, op.0, verdict.raw(), raw.as_ptr(), raw.len())
        })?;
        Ok(self)
    }

    /// The verdict of `op` when none of its rules match.
    pub fn default_for(&mut self, op: Opcode, verdict: Verdict) -> Result<&mut Self> {
        // SAFETY: valid handle.
        check(unsafe { sys::iour_filter__set_default(self.ptr, op.0, verdict.raw()) })?;
        Ok(self)
    }

    /// Compiles the rules of `op` into a classic-BPF program.
    pub fn compile(&self, op: Opcode) -> Result<Prog> {
        let mut p = ptr::null_mut();
        // SAFETY: NULL options; p receives the program.
        check(unsafe { sys::iour_filter__compile(self.ptr, op.0, ptr::null(), &mut p) })?;
        Ok(Prog { ptr: p })
    }
}

/// What a compiled program is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgKind {
    /// A program to register.
    Filter,
    /// Every request is allowed; no program is needed.
    AlwaysAllow,
    /// Every request is denied.
    AlwaysDeny,
}

/// A compiled program (`struct iour_prog`).  Freed when dropped.
pub struct Prog {
    ptr: *mut sys::iour_prog,
}

// SAFETY: owned handle.
unsafe impl Send for Prog {}

impl Drop for Prog {
    fn drop(&mut self) {
        // SAFETY: freed once.
        unsafe { sys::iour_prog__free(self.ptr) }
    }
}

impl Prog {
    /// The instructions (empty for `AlwaysAllow` / `AlwaysDeny`).
    pub fn insns(&self) -> &[sys::iour_insn] {
        // SAFETY: the program owns insn_cnt instructions while it lives.
        unsafe {
            let n = sys::iour_prog__insn_cnt(self.ptr);
            let p = sys::iour_prog__insns(self.ptr);
            if p.is_null() || n == 0 {
                &[]
            } else {
                slice::from_raw_parts(p, n)
            }
        }
    }

    /// The kind of program.
    pub fn kind(&self) -> ProgKind {
        // SAFETY: valid handle.
        match unsafe { sys::iour_prog__kind(self.ptr) } {
            sys::IOUR_PROG_ALWAYS_ALLOW => ProgKind::AlwaysAllow,
            sys::IOUR_PROG_ALWAYS_DENY => ProgKind::AlwaysDeny,
            _ => ProgKind::Filter,
        }
    }

    /// The request opcode the program is for.
    pub fn opcode(&self) -> Opcode {
        // SAFETY: valid handle.
        Opcode(unsafe { sys::iour_prog__opcode(self.ptr) })
    }

    /// A readable listing of the program.
    pub fn disasm(&self) -> Result<String> {
        let i = self.insns();
        let op = self.opcode().0;
        crate::text(|buf, len| {
            // SAFETY: i lives for the call; buf/len follow the two-call protocol.
            unsafe {
                sys::iour_cbpf_disasm(i.as_ptr(), i.len(), op, sys::IOUR_DISASM_TEXT, buf, len)
            }
        })
    }

    /// Runs the program in the simulator on a request context; true if the
    /// request would be allowed.
    pub fn run(&self, ctx: &[u8]) -> Result<bool> {
        let i = self.insns();
        match self.kind() {
            ProgKind::AlwaysAllow => return Ok(true),
            ProgKind::AlwaysDeny => return Ok(false),
            ProgKind::Filter => {}
        }
        let mut res = sys::iour_sim_result::default();
        // SAFETY: all buffers live for the call.
        check(unsafe {
            sys::iour_cbpf_run(i.as_ptr(), i.len(), ctx.as_ptr(), ctx.len(), &mut res)
        })?;
        Ok(res.allowed != 0)
    }

    /// Runs the program on a SOCKET request of this family, type, protocol.
    pub fn run_socket(&self, family: u32, ty: u32, protocol: u32) -> Result<bool> {
        let mut ctx = [0u8; sys::IOUR_CTX_SIZE as usize];
        // SAFETY: ctx is writable for its length.
        check(unsafe {
            sys::iour_ctx_generic(ctx.as_mut_ptr(), ctx.len(), sys::IOUR_OP_SOCKET, 0, 0)
        })?;
        // SAFETY: as above.
        check(unsafe { sys::iour_ctx_socket(ctx.as_mut_ptr(), ctx.len(), family, ty, protocol) })?;
        self.run(&ctx)
    }
}
