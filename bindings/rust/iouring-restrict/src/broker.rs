// SPDX-License-Identifier: MIT
//! The ring broker (`broker.h`): every io_uring_setup of a confined
//! program answered with a ring restricted by a plan.

use std::os::raw::{c_int, c_void};
use std::os::unix::io::{FromRawFd, IntoRawFd, OwnedFd, RawFd};

use crate::error::{check, static_string, Error, Result};
use crate::policy::Plan;
use crate::sys;

/// One io_uring_setup the broker answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerEvent {
    /// The caller's thread id (in the broker's pid namespace).
    pub pid: i32,
    /// The entries argument.
    pub entries: u32,
    /// The setup flags the program asked for.
    pub setup_flags: u32,
    /// The fd number given to the program, or the negative errno answered.
    pub result: i32,
    /// What was registered, or why it was refused.
    pub what: String,
}

/// A broker's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BrokerCounters {
    /// Notifications received.
    pub notifications: u64,
    /// Restricted rings installed in the program.
    pub served: u64,
    /// Calls answered with an errno (all reasons below).
    pub refused: u64,
    /// ... because of a setup flag the broker refuses.
    pub refused_flags: u64,
    /// ... because the kernel refused the ring or a step.
    pub refused_kernel: u64,
    /// ... because the params could not be read or written.
    pub refused_memory: u64,
    /// Callers that went away before the answer.
    pub gone: u64,
    /// ... refused: the worker did not answer in time (or died).
    pub refused_deadline: u64,
    /// ... refused: no worker could be started (process limit).
    pub refused_busy: u64,
    /// ... refused: the ring could not be charged to the caller.
    pub refused_accounting: u64,
    /// Times the broker stopped taking calls at its worker limit.
    pub deferred: u64,
    /// ... refused: the ring quota (max_rings rings alive).
    pub refused_quota: u64,
}

/// In the process to be confined: sends every io_uring_setup to a broker
/// (irreversible; sets no_new_privs).  Returns the listener, to pass to
/// the supervising process.
pub fn install_broker(all_threads: bool) -> Result<OwnedFd> {
    let opts = sys::iour_broker_opts {
        flags: if all_threads { sys::IOUR_BROKER_ALL_THREADS } else { 0 },
        ..Default::default()
    };
    let mut fd: c_int = -1;
    // SAFETY: valid pointers for the call.
    check(unsafe { sys::iour_broker__install(&opts, &mut fd) })?;
    // SAFETY: the library handed over a fresh fd.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

type Callback<'a> = Box<dyn FnMut(&BrokerEvent) + 'a>;

/// A ring broker serving one listener with one plan.  `Send` like the other
/// handles, not `Sync`: one thread at a time.
pub struct Broker<'p> {
    ptr: *mut sys::iour_broker,
    // Boxed twice so the C side keeps a stable thin pointer.
    _cb: Option<Box<Callback<'p>>>,
    _plan: std::marker::PhantomData<&'p Plan>,
}

// SAFETY: owned handle, used by one thread at a time.
unsafe impl Send for Broker<'_> {}

unsafe extern "C" fn trampoline(arg: *mut c_void, ev: *const sys::iour_broker_event) {
    if arg.is_null() || ev.is_null() {
        return;
    }
    // arg is the Box<Callback> the broker was created with; ev is valid
    // during the call (the function is unsafe: its caller promises both).
    let (cb, e) = (&mut *(arg as *mut Callback), &*ev);
    let ev = BrokerEvent {
        pid: e.pid,
        entries: e.entries,
        setup_flags: e.setup_flags,
        result: e.result,
        what: if e.what.is_null() { String::new() } else { static_string(e.what) },
    };
    // A panic must not unwind into C.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cb(&ev)));
}

impl<'p> Broker<'p> {
    /// A broker for `listener` (from [`install_broker`], passed up by the
    /// confined process), restricting every ring by `plan`; `on_ring` is
    /// called for each call answered.
    pub fn new(
        plan: &'p Plan,
        listener: OwnedFd,
        on_ring: Option<Box<dyn FnMut(&BrokerEvent) + 'p>>,
    ) -> Result<Self> {
        let mut cb: Option<Box<Callback<'p>>> = on_ring.map(Box::new);
        let mut opts = sys::iour_broker_opts::default();
        if let Some(b) = cb.as_mut() {
            opts.on_ring = Some(trampoline);
            opts.arg = (&mut **b) as *mut Callback as *mut c_void;
        }
        let fd = listener.into_raw_fd();
        let mut out = std::ptr::null_mut();
        // SAFETY: valid pointers; the plan outlives the broker ('p).
        let rc = unsafe { sys::iour_broker__new(plan.as_ptr(), fd, &opts, &mut out) };
        if rc < 0 {
            // SAFETY: not taken over on failure: ours to close.
            drop(unsafe { OwnedFd::from_raw_fd(fd) });
            return Err(Error::from_code(rc));
        }
        Ok(Broker { ptr: out, _cb: cb, _plan: std::marker::PhantomData })
    }

    /// The broker's own fd, for poll: readable when `serve` has work.
    pub fn fd(&self) -> RawFd {
        // SAFETY: live handle.
        unsafe { sys::iour_broker__fd(self.ptr) }
    }

    /// Does the pending work (takes calls, each served by a worker process;
    /// reaps workers; answers calls past their deadline), blocking until
    /// there is some.  `Ok(false)` once every confined process has exited
    /// and every worker is reaped.
    pub fn serve(&mut self) -> Result<bool> {
        // SAFETY: live handle.
        let rc = unsafe { sys::iour_broker__serve(self.ptr) };
        if rc == -libc_enoent() {
            return Ok(false);
        }
        check(rc).map(|_| true)
    }

    /// The counters.
    pub fn counters(&self) -> Result<BrokerCounters> {
        let mut c = sys::iour_broker_counters::default();
        // SAFETY: live handle, sized struct.
        check(unsafe { sys::iour_broker__counters(self.ptr, &mut c) })?;
        Ok(BrokerCounters {
            notifications: c.notifications,
            served: c.served,
            refused: c.refused,
            refused_flags: c.refused_flags,
            refused_kernel: c.refused_kernel,
            refused_memory: c.refused_memory,
            gone: c.gone,
            refused_deadline: c.refused_deadline,
            refused_busy: c.refused_busy,
            refused_accounting: c.refused_accounting,
            deferred: c.deferred,
            refused_quota: c.refused_quota,
        })
    }
}

const fn libc_enoent() -> c_int {
    2
}

impl Drop for Broker<'_> {
    fn drop(&mut self) {
        // SAFETY: freed once; closes the listener.
        unsafe { sys::iour_broker__free(self.ptr) }
    }
}
