//! Policies, their plans for the running kernel, and reports.
use std::marker::PhantomData;
use std::os::unix::io::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::ptr;

use iouring_restrict_sys as sys;

use crate::error::{check, check_in, static_string, Error, Result};
use crate::filter::Filter;
use crate::names::Opcode;
use crate::ruleset::{RingParams, Ruleset};

/// What to do when the kernel cannot enforce a policy exactly (named as in
/// the `landlock` crate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompatLevel {
    /// Apply what the kernel can enforce; the report says what is missing.
    BestEffort,
    /// All or nothing: apply nothing and report `NotEnforced` (no error).
    SoftRequirement,
    /// Apply nothing and fail with `IOUR_ERRNO__UNSUPPORTED`.
    HardRequirement,
}

/// What a policy restricts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The calling thread and every task and ring it creates later.
    Task,
    /// One ring (given to [`Plan::apply_to_ring`] or made by
    /// [`Plan::create_ring`]).
    Ring,
}

/// How much of a policy is enforced (named as in the `landlock` crate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RulesetStatus {
    /// Exactly the policy, for the whole target.
    FullyEnforced,
    /// Something is enforced, but not exactly the policy.
    PartiallyEnforced,
    /// Nothing is enforced.
    NotEnforced,
}

/// A policy: a restriction set, argument filters and attributes.  Freed
/// when dropped.
///
/// ```
/// use iouring_restrict::{CompatLevel, Opcode, Policy, Ruleset, SqeFlags, Target};
/// # fn main() -> Result<(), iouring_restrict::Error> {
/// let mut rs = Ruleset::new()?;
/// rs.allow(Opcode::NOP)?.sqe_flags(SqeFlags::NONE, SqeFlags::NONE)?;
/// let mut p = Policy::new()?;
/// p.ruleset(&rs)?.target(Target::Ring)?.compat(CompatLevel::BestEffort)?;
/// let plan = p.plan()?;              // the dry run: nothing applied
/// assert!(plan.describe()?.len() > 0);
/// let _expected = plan.expected_report().status();
/// # Ok(()) }
/// ```
pub struct Policy {
    ptr: *mut sys::iour_policy,
}

// SAFETY: owned handle.
unsafe impl Send for Policy {}

impl Drop for Policy {
    fn drop(&mut self) {
        // SAFETY: freed once.
        unsafe { sys::iour_policy__free(self.ptr) }
    }
}

impl Policy {
    /// An empty policy with the default attributes (task target, best
    /// effort, unmentioned opcodes denied).
    pub fn new() -> Result<Policy> {
        let mut ptr = ptr::null_mut();
        // SAFETY: NULL options.
        check(unsafe { sys::iour_policy__new(ptr::null(), &mut ptr) })?;
        Ok(Policy { ptr })
    }

    pub(crate) fn from_raw(ptr: *mut sys::iour_policy) -> Policy {
        Policy { ptr }
    }

    pub(crate) fn as_ptr(&self) -> *const sys::iour_policy {
        self.ptr
    }

    /// Sets the restriction set (copied).
    pub fn ruleset(&mut self, rs: &Ruleset) -> Result<&mut Self> {
        // SAFETY: both handles valid; the set is copied.
        check(unsafe { sys::iour_policy__set_ruleset(self.ptr, rs.as_ptr()) })?;
        Ok(self)
    }

    /// Sets the argument filters (copied).
    pub fn filter(&mut self, f: &Filter) -> Result<&mut Self> {
        // SAFETY: both handles valid; the filter is copied.
        check(unsafe { sys::iour_policy__set_filter(self.ptr, f.as_ptr()) })?;
        Ok(self)
    }

    /// Sets a raw attribute (`IOUR_POLICY_ATTR_*`, see policy.h).
    pub fn attr(&mut self, attr: u32, value: u32) -> Result<&mut Self> {
        // SAFETY: valid handle.
        check_in(
            unsafe { sys::iour_policy__set_attr(self.ptr, attr, value) },
            b"iour_policy__set_attr\0",
        )?;
        Ok(self)
    }

    /// Reads a raw attribute.
    pub fn get_attr(&self, attr: u32) -> Result<u32> {
        let mut v = 0;
        // SAFETY: valid handle, v outlives the call.
        check_in(
            unsafe { sys::iour_policy__get_attr(self.ptr, attr, &mut v) },
            b"iour_policy__get_attr\0",
        )?;
        Ok(v)
    }

    /// How many argument-filter programs the policy holds for `op`: 0
    /// (none), 1, or more for a deny-list split across stacked filters
    /// (the kernel runs them all; the request runs only if all allow).
    pub fn prog_cnt(&self, op: Opcode) -> Result<u32> {
        // SAFETY: valid handle.
        check(unsafe { sys::iour_policy__prog_cnt(self.ptr, op.0) })
    }

    /// What the policy restricts.
    pub fn target(&mut self, t: Target) -> Result<&mut Self> {
        let v = match t {
            Target::Task => sys::IOUR_POLICY_TARGET_TASK,
            Target::Ring => sys::IOUR_POLICY_TARGET_RING,
        };
        self.attr(sys::IOUR_POLICY_ATTR_TARGET, v)
    }

    /// What to do when the kernel cannot enforce it exactly.
    pub fn compat(&mut self, c: CompatLevel) -> Result<&mut Self> {
        let v = match c {
            CompatLevel::BestEffort => sys::IOUR_POLICY_COMPAT_BEST_EFFORT,
            CompatLevel::SoftRequirement => sys::IOUR_POLICY_COMPAT_SOFT,
            CompatLevel::HardRequirement => sys::IOUR_POLICY_COMPAT_HARD,
        };
        self.attr(sys::IOUR_POLICY_ATTR_COMPAT, v)
    }

    /// Whether request opcodes the policy does not mention are allowed
    /// (default: denied).
    pub fn allow_unmentioned(&mut self, allow: bool) -> Result<&mut Self> {
        self.attr(sys::IOUR_POLICY_ATTR_DEFAULT, allow as u32)
    }

    /// Plans the policy for the running kernel.
    pub fn plan(&self) -> Result<Plan> {
        self.plan_raw(ptr::null())
    }

    /// Plans the policy as if the kernel had feature level `level` (0..5).
    pub fn plan_for_level(&self, level: u32) -> Result<Plan> {
        let mut o = sys::iour_plan_opts::default();
        o.flags = sys::IOUR_PLAN_FORCE_LEVEL;
        o.level = level;
        self.plan_raw(&o)
    }

    fn plan_raw(&self, o: *const sys::iour_plan_opts) -> Result<Plan> {
        let mut ptr = ptr::null_mut();
        // SAFETY: o is NULL or lives for the call.
        check_in(
            unsafe { sys::iour_policy__plan(self.ptr, o, &mut ptr) },
            b"iour_policy__plan\0",
        )?;
        Ok(Plan { ptr })
    }
}

/// A policy planned for one kernel: its steps, the report it expects, and
/// the executors.  Freed when dropped.
pub struct Plan {
    ptr: *mut sys::iour_plan,
}

// SAFETY: owned handle.
unsafe impl Send for Plan {}

impl Drop for Plan {
    fn drop(&mut self) {
        // SAFETY: freed once.
        unsafe { sys::iour_plan__free(self.ptr) }
    }
}

impl Plan {
    pub(crate) fn as_ptr(&self) -> *const sys::iour_plan {
        self.ptr
    }

    /// The plan as text: every step, and the report it expects.
    pub fn describe(&self) -> Result<String> {
        let p = self.ptr;
        // SAFETY: two-call protocol on a valid handle.
        crate::text(|buf, len| unsafe { sys::iour_plan__describe(p, buf, len) })
    }

    /// The plan's summary (`struct iour_plan_info`).
    pub fn info(&self) -> Result<sys::iour_plan_info> {
        let mut i = sys::iour_plan_info::default();
        // SAFETY: i lives for the call.
        check(unsafe { sys::iour_plan__info(self.ptr, &mut i) })?;
        Ok(i)
    }

    /// What the plan's restriction step on a ring enforces, decoded by
    /// the library with the plan kernel's gate semantics
    /// (`iour_plan__get_ruleset`): `None` when the plan turns no classic
    /// gate on there (a classic part that allows everything plans no
    /// restriction step).  On kernels before 7.0 a side the policy leaves
    /// open is gated with every opcode listed, so it comes back allowing
    /// every opcode the kernel knows.
    pub fn ring_ruleset(&self) -> Result<Option<Ruleset>> {
        self.side_ruleset(sys::IOUR_STEP_RING)
    }

    /// The same for the task's own set (Linux 7.0+ task restrictions).
    pub fn task_ruleset(&self) -> Result<Option<Ruleset>> {
        self.side_ruleset(sys::IOUR_STEP_TASK)
    }

    fn side_ruleset(&self, side: u32) -> Result<Option<Ruleset>> {
        let mut out = ptr::null_mut();
        // SAFETY: valid handle; out receives an owned set or NULL.
        check(unsafe { sys::iour_plan__get_ruleset(self.ptr, side, &mut out) })?;
        Ok(if out.is_null() {
            None
        } else {
            Some(Ruleset::from_raw(out))
        })
    }

    /// Number of steps.
    pub fn step_count(&self) -> Result<u32> {
        // SAFETY: valid handle.
        check(unsafe { sys::iour_plan__step_cnt(self.ptr) })
    }

    /// The report applying the plan is expected to give (borrowed).
    pub fn expected_report(&self) -> Report<'_> {
        // SAFETY: the plan owns the report as long as it lives.
        Report {
            ptr: unsafe { sys::iour_plan__report(self.ptr) } as *mut _,
            owned: false,
            _m: PhantomData,
        }
    }

    fn report(r: *mut sys::iour_report) -> Report<'static> {
        Report {
            ptr: r,
            owned: true,
            _m: PhantomData,
        }
    }

    /// Applies a ring plan to `ring`, created disabled by its owner
    /// (`IORING_SETUP_R_DISABLED`), e.g. by any io_uring crate.
    pub fn apply_to_ring(&self, ring: impl AsFd) -> Result<Report<'static>> {
        let mut r = ptr::null_mut();
        // SAFETY: the descriptor is borrowed for the call.
        let rc = unsafe {
            sys::iour_plan__apply_ring(self.ptr, ring.as_fd().as_raw_fd(), ptr::null(), &mut r)
        };
        let rep = Plan::report(r);
        check_in(rc, b"iour_plan__apply_ring\0")?;
        Ok(rep)
    }

    /// Applies a task plan to the calling thread, for good.
    pub fn apply_to_task(&self) -> Result<Report<'static>> {
        let mut r = ptr::null_mut();
        // SAFETY: valid handle.
        let rc = unsafe { sys::iour_plan__apply_task(self.ptr, ptr::null(), &mut r) };
        let rep = Plan::report(r);
        check_in(rc, b"iour_plan__apply_task\0")?;
        Ok(rep)
    }

    /// Creates a ring through a ring plan: restricted and enabled.
    pub fn create_ring(
        &self,
        entries: u32,
        params: Option<&mut RingParams>,
    ) -> Result<(OwnedFd, Report<'static>)> {
        let mut r = ptr::null_mut();
        let mut fd = -1;
        let p = match params {
            Some(p) => p.0.as_mut_ptr() as *mut std::os::raw::c_void,
            None => ptr::null_mut(),
        };
        // SAFETY: p is NULL or 120 writable bytes; fd and r outlive the call.
        let rc = unsafe {
            sys::iour_plan__create_ring(self.ptr, entries, p, ptr::null(), &mut fd, &mut r)
        };
        let rep = Plan::report(r);
        check_in(rc, b"iour_plan__create_ring\0")?;
        // SAFETY: a new descriptor we own.
        Ok((unsafe { OwnedFd::from_raw_fd(fd) }, rep))
    }
}

/// One decision of a report (`struct iour_decision`).
#[derive(Debug, Clone)]
pub struct Decision {
    /// `enum iour_decision_kind`.
    pub kind: u32,
    /// `enum iour_reason`.
    pub reason: u32,
    /// The request opcode it is about, if any.
    pub opcode: Option<u32>,
    /// The step, or the errno / payload size.
    pub step: u32,
    /// The errno of a failed step, or a negotiated payload size.
    pub value: i32,
    /// The library's sentence.
    pub text: String,
}

/// What applying a plan did (or, borrowed from a plan, what it expects).
pub struct Report<'a> {
    ptr: *mut sys::iour_report,
    owned: bool,
    _m: PhantomData<&'a Plan>,
}

impl Drop for Report<'_> {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: an owned report is freed once.
            unsafe { sys::iour_report__free(self.ptr) }
        }
    }
}

impl Report<'_> {
    /// How much of the policy is enforced.
    pub fn status(&self) -> RulesetStatus {
        // SAFETY: valid or NULL (the library answers -EINVAL).
        match unsafe { sys::iour_report__status(self.ptr) } as u32 {
            sys::IOUR_STATUS_FULLY => RulesetStatus::FullyEnforced,
            sys::IOUR_STATUS_PARTIALLY => RulesetStatus::PartiallyEnforced,
            _ => RulesetStatus::NotEnforced,
        }
    }

    /// The mechanisms in force (`IOUR_MECH_*`).
    pub fn mechanism(&self) -> u32 {
        // SAFETY: as above.
        unsafe { sys::iour_report__mechanism(self.ptr) }.max(0) as u32
    }

    /// The report's flags (`IOUR_REPORT_*`).
    pub fn flags(&self) -> u32 {
        // SAFETY: as above.
        unsafe { sys::iour_report__flags(self.ptr) }.max(0) as u32
    }

    /// Steps done and planned.
    pub fn steps(&self) -> (u32, u32) {
        let (mut d, mut t) = (0, 0);
        // SAFETY: as above.
        unsafe { sys::iour_report__steps(self.ptr, &mut d, &mut t) };
        (d, t)
    }

    /// The error that stopped the application, if any.
    pub fn error(&self) -> Option<Error> {
        let mut e = 0;
        // SAFETY: as above.
        unsafe { sys::iour_report__error(self.ptr, &mut e) };
        if e == 0 {
            None
        } else {
            Some(Error::from_code(e))
        }
    }

    /// The decisions, in order.
    pub fn decisions(&self) -> Vec<Decision> {
        // SAFETY: as above.
        let n = unsafe { sys::iour_report__decision_cnt(self.ptr) }.max(0) as usize;
        let mut v = Vec::with_capacity(n);
        for i in 0..n {
            let mut d = sys::iour_decision::default();
            // SAFETY: d lives for the call; text is owned by the report.
            if unsafe { sys::iour_report__decision(self.ptr, i, &mut d) } == 0 {
                v.push(Decision {
                    kind: d.kind,
                    reason: d.reason,
                    opcode: if d.opcode == sys::IOUR_DECISION_NO_OPCODE {
                        None
                    } else {
                        Some(d.opcode)
                    },
                    step: d.step,
                    value: d.value,
                    text: static_string(d.text),
                });
            }
        }
        v
    }

    /// The report as text.
    pub fn describe(&self) -> Result<String> {
        let p = self.ptr;
        // SAFETY: two-call protocol on a valid handle.
        crate::text(|buf, len| unsafe { sys::iour_report__describe(p, buf, len) })
    }
}
