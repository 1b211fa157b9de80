//! A restricted ring driven from Rust: created disabled, files and
//! buffers registered while disabled, restricted and enabled, then
//! requests through the ring's own queues.  Each denial has its positive
//! control: the same request on an unrestricted ring succeeds.
mod common;

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::io::{AsRawFd, FromRawFd};

use iouring_restrict::{
    Opcode, Policy, RawRing, RingFile, RingParams, Ruleset, RulesetStatus, SqeFlags, Target,
};

fn pipe() -> (File, File) {
    extern "C" {
        fn pipe(fds: *mut i32) -> i32;
    }
    let mut fds = [0i32; 2];
    // SAFETY: fds has room for the two descriptors.
    assert_eq!(unsafe { pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: two new descriptors we own.
    unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
}

fn set() -> Ruleset {
    let mut rs = Ruleset::new().unwrap();
    rs.allow(Opcode::NOP)
        .unwrap()
        .allow(Opcode::READ)
        .unwrap()
        .allow(Opcode::READ_FIXED)
        .unwrap()
        .deny_all_register_ops()
        .unwrap()
        .sqe_flags(SqeFlags::FIXED_FILE, SqeFlags::NONE)
        .unwrap();
    rs
}

#[test]
fn the_life_cycle_of_a_restricted_ring() {
    if !common::has_ring_restrictions() {
        return;
    }
    let (mut r, mut w) = pipe();
    w.write_all(b"0123456789").unwrap();
    let mut ring = RawRing::new_disabled(4).unwrap();
    let e = ring.nop().unwrap_err();
    assert_eq!(e.raw_os_error(), Some(77)); // EBADFD: still disabled
    ring.register_files(&[&r]).unwrap();
    ring.register_buffers(vec![vec![0u8; 8]]).unwrap();
    let rep = set().apply_to_ring(&ring, true).unwrap();
    assert!(rep.registered() && rep.enabled());
    ring.nop().unwrap();
    let mut buf = [0u8; 3];
    let n = ring.read(RingFile::Fixed(0), &mut buf, u64::MAX).unwrap();
    assert_eq!(&buf[..n], b"012");
    let n = ring.read_fixed(RingFile::Fixed(0), 0, 4, u64::MAX).unwrap();
    assert_eq!(&ring.buffer(0).unwrap()[..n], b"3456");
    // denied by the set: WRITE, an SQE flag, any register opcode
    let e = ring
        .write(RingFile::Fd(w.as_raw_fd()), b"x", u64::MAX)
        .unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{}", e);
    assert_eq!(
        ring.submit(Opcode::NOP, None, SqeFlags::ASYNC).unwrap(),
        -13
    );
    let e = ring.register_files(&[&w]).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(13), "{}", e);
    let mut rest = [0u8; 3];
    r.read_exact(&mut rest).unwrap();
    assert_eq!(&rest, b"789");
}

#[test]
fn positive_control_an_unrestricted_ring_does_all_of_it() {
    if !common::has_ring_restrictions() {
        return;
    }
    let (mut r, w) = pipe();
    let mut ring = RawRing::with_params(4, RingParams::default()).unwrap();
    let n = ring
        .write(RingFile::Fd(w.as_raw_fd()), b"abc", u64::MAX)
        .unwrap();
    assert_eq!(n, 3);
    let mut got = [0u8; 3];
    r.read_exact(&mut got).unwrap();
    assert_eq!(&got, b"abc");
    ring.register_files(&[&w]).unwrap();
    assert_eq!(ring.submit(Opcode::NOP, None, SqeFlags::ASYNC).unwrap(), 0);
}

#[test]
fn a_plan_applies_to_a_ring_made_disabled() {
    if !common::has_ring_restrictions() {
        return;
    }
    let (r, mut w) = pipe();
    w.write_all(b"xy").unwrap();
    let mut p = Policy::new().unwrap();
    p.ruleset(&set()).unwrap().target(Target::Ring).unwrap();
    let plan = p.plan().unwrap();
    let mut ring = RawRing::new_disabled(4).unwrap();
    ring.register_files(&[&r]).unwrap();
    let rep = plan.apply_to_ring(&ring).unwrap();
    assert_eq!(rep.status(), RulesetStatus::FullyEnforced);
    let mut buf = [0u8; 2];
    assert_eq!(
        ring.read(RingFile::Fixed(0), &mut buf, u64::MAX).unwrap(),
        2
    );
    assert_eq!(&buf, b"xy");
    let e = ring
        .write(RingFile::Fd(w.as_raw_fd()), b"x", u64::MAX)
        .unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
}
