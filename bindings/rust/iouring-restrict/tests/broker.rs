//! The ring broker's safe wrapper: ownership of the listener, counters.
//! (Serving real notifications is tested in C, tests/live/test_live_broker.c,
//! and in Python, bindings/python/tests/test_broker.py: both need a forked
//! child that passes its listener up, which std cannot express.)
mod common;

use std::os::unix::io::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;

use iouring_restrict::{Broker, BrokerCounters, Opcode, Policy, Ruleset, Target};

#[test]
fn broker_owns_its_listener_and_starts_at_zero() {
    if !common::has_ring_restrictions() {
        return;
    }
    let mut rs = Ruleset::new().unwrap();
    rs.allow(Opcode::READ).unwrap();
    let mut p = Policy::new().unwrap();
    p.ruleset(&rs).unwrap().target(Target::Ring).unwrap();
    let plan = p.plan().unwrap();
    // any pollable fd stands in for a listener here
    let (f, _peer) = UnixStream::pair().unwrap();
    let raw = f.as_raw_fd();
    let fd: OwnedFd = f.into();
    let b = Broker::new(&plan, fd, None).unwrap();
    assert_ne!(b.fd(), raw); // the broker's own fd, not the listener
    assert_eq!(b.counters().unwrap(), BrokerCounters::default());
    drop(b);
    // The broker closed the listener.
    assert!(std::fs::read_link(format!("/proc/self/fd/{}", raw)).is_err());
}
