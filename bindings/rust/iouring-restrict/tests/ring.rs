//! A real ring, made with raw system calls (tests/common/mini_ring.rs),
//! restricted through the safe crate: the forbidden request gets EACCES.
mod common;
#[path = "common/mini_ring.rs"]
mod mini_ring;

use iouring_restrict::{
    enable_ring, CompatLevel, Opcode, Policy, Ruleset, RulesetStatus, SqeFlags, Target,
};
use mini_ring::{MiniRing, IORING_SETUP_R_DISABLED};

const EACCES: i32 = 13;
const EBADFD: i32 = 77;
const EBUSY: i32 = 16;

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
    let ring = MiniRing::new(4, IORING_SETUP_R_DISABLED).unwrap();
    let rep = nop_only().apply_to_ring(&ring, false).unwrap();
    assert!(rep.registered());
    assert!(!rep.enabled());
    // Still disabled: the kernel refuses submissions until the owner enables it.
    let e = ring.submit_one(Opcode::NOP.0 as u8, -1, 0).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(EBADFD));
    enable_ring(&ring).unwrap();
    assert_eq!(ring.submit_one(Opcode::NOP.0 as u8, -1, 0).unwrap(), 0);
    assert_eq!(
        ring.submit_one(Opcode::WRITE.0 as u8, 1, 0).unwrap(),
        -EACCES
    );
    assert_eq!(
        ring.submit_one(Opcode::OPENAT.0 as u8, -100, 0).unwrap(),
        -EACCES
    );
    // A flag the set does not allow.
    assert_eq!(
        ring.submit_one(Opcode::NOP.0 as u8, -1, SqeFlags::ASYNC.bits() as u8)
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
    let ring = MiniRing::new(4, IORING_SETUP_R_DISABLED).unwrap();
    rs.apply_to_ring(&ring, false).unwrap();
    assert_eq!(rs.apply_to_ring(&ring, true).unwrap_err().errno(), EBUSY);
    let plain = MiniRing::new(4, 0).unwrap();
    let e = rs.apply_to_ring(&plain, true).unwrap_err();
    assert_eq!(e.errno(), EBADFD);
    // The unrestricted ring still runs anything.
    assert_ne!(
        plain.submit_one(Opcode::WRITE.0 as u8, -1, 0).unwrap(),
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
    let ring = MiniRing::new(4, IORING_SETUP_R_DISABLED).unwrap();
    let rep = plan.apply_to_ring(&ring).unwrap();
    assert_eq!(rep.status(), RulesetStatus::FullyEnforced);
    assert!(rep.error().is_none());
    assert!(!rep.describe().unwrap().is_empty());
    assert_eq!(ring.submit_one(Opcode::NOP.0 as u8, -1, 0).unwrap(), 0);
    assert_eq!(
        ring.submit_one(Opcode::READ.0 as u8, 0, 0).unwrap(),
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
