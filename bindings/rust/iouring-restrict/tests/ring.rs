//! A real ring (the crate's RawRing), restricted through the safe crate:
//! the forbidden request gets EACCES.
mod common;

use iouring_restrict::{
    enable_ring, CompatLevel, Opcode, Policy, RawRing, RingFile, RingParams, Ruleset,
    RulesetStatus, SqeFlags, Target,
};

const EACCES: i32 = 13;
const EBADFD: i32 = 77;
const EBUSY: i32 = 16;

/// Submits a request with only an opcode, a descriptor (-1: none) and
/// SQE flags; the completion's result.
fn submit_one(ring: &mut RawRing, op: Opcode, fd: i32, flags: SqeFlags) -> std::io::Result<i32> {
    ring.submit(op, if fd == -1 { None } else { Some(RingFile::Fd(fd)) }, flags)
}

fn nop_only() -> Ruleset {
    let mut rs = Ruleset::new().unwrap();
    rs.allow(Opcode::NOP)
        .unwrap()
        .sqe_flags(SqeFlags::NONE, SqeFlags::NONE)
        .unwrap();
    rs
}

#[test]
fn ring_restricted_then_enabled_by_its_owner_denies_forbidden_requests() {
    if !common::has_ring_restrictions() {
        return;
    }
    let mut ring = RawRing::new_disabled(4).unwrap();
    let rep = nop_only().apply_to_ring(&ring, false).unwrap();
    assert!(rep.registered());
    assert!(!rep.enabled());
    // Still disabled: the kernel refuses submissions until the owner enables it.
    let e = submit_one(&mut ring, Opcode::NOP, -1, SqeFlags::NONE).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(EBADFD));
    enable_ring(&ring).unwrap();
    assert_eq!(submit_one(&mut ring, Opcode::NOP, -1, SqeFlags::NONE).unwrap(), 0);
    assert_eq!(
        submit_one(&mut ring, Opcode::WRITE, 1, SqeFlags::NONE).unwrap(),
        -EACCES
    );
    assert_eq!(
        submit_one(&mut ring, Opcode::OPENAT, -100, SqeFlags::NONE).unwrap(),
        -EACCES
    );
    // A flag the set does not allow.
    assert_eq!(
        submit_one(&mut ring, Opcode::NOP, -1, SqeFlags::ASYNC)
            .unwrap(),
        -EACCES
    );
}

#[test]
fn second_registration_and_enabled_rings_are_refused() {
    if !common::has_ring_restrictions() {
        return;
    }
    let rs = nop_only();
    let ring = RawRing::new_disabled(4).unwrap();
    rs.apply_to_ring(&ring, false).unwrap();
    assert_eq!(rs.apply_to_ring(&ring, true).unwrap_err().errno(), EBUSY);
    let mut plain = RawRing::with_params(4, RingParams::default()).unwrap();
    let e = rs.apply_to_ring(&plain, true).unwrap_err();
    assert_eq!(e.errno(), EBADFD);
    // The unrestricted ring still runs anything.
    assert_ne!(
        submit_one(&mut plain, Opcode::WRITE, -1, SqeFlags::NONE).unwrap(),
        -EACCES
    );
}

#[test]
fn ring_plan_applied_to_a_caller_ring_is_fully_enforced() {
    if !common::has_ring_restrictions() {
        return;
    }
    let mut p = Policy::new().unwrap();
    p.ruleset(&nop_only())
        .unwrap()
        .target(Target::Ring)
        .unwrap()
        .compat(CompatLevel::HardRequirement)
        .unwrap();
    let plan = p.plan().unwrap();
    assert_eq!(
        plan.expected_report().status(),
        RulesetStatus::FullyEnforced
    );
    let mut ring = RawRing::new_disabled(4).unwrap();
    let rep = plan.apply_to_ring(&ring).unwrap();
    assert_eq!(rep.status(), RulesetStatus::FullyEnforced);
    assert!(rep.error().is_none());
    assert!(!rep.describe().unwrap().is_empty());
    assert_eq!(submit_one(&mut ring, Opcode::NOP, -1, SqeFlags::NONE).unwrap(), 0);
    assert_eq!(
        submit_one(&mut ring, Opcode::READ, 0, SqeFlags::NONE).unwrap(),
        -EACCES
    );
}

#[test]
fn create_ring_returns_an_owned_restricted_ring() {
    if !common::has_ring_restrictions() {
        return;
    }
    let (fd, rep) = nop_only().create_ring(4, None).unwrap();
    assert!(rep.registered() && rep.enabled());
    // Enabled already: a second enable is refused.
    assert_eq!(enable_ring(&fd).unwrap_err().errno(), EBADFD);
}
