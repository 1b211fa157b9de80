//! The safe API without a ring: errors, names, filters, the simulator,
//! policies and plans (forced feature levels), the probe.
use std::io;

use iouring_restrict::{
    Cmp, CompatLevel, Error, Field, Filter, LibraryError, Opcode, Policy, ProgKind, RegisterOp,
    Ruleset, RulesetStatus, SqeFlags, Target, Verdict,
};

#[test]
fn errors_keep_errno_message_and_map_to_io_errors() {
    let e = Opcode::from_name("NO_SUCH_OPCODE").unwrap_err();
    assert_eq!(e.errno(), 2, "{:?}", e);
    assert_eq!(e.kind(), io::ErrorKind::NotFound);
    assert_eq!(e.name(), "-ENOENT");
    assert!(!e.message().is_empty());
    assert!(e.message().contains("'NO_SUCH_OPCODE'"), "{}", e);
    let ioe: io::Error = e.into();
    // an error with its own message keeps it (and its kind), not the
    // bare "No such file or directory" of a raw OS error
    assert_eq!(ioe.kind(), io::ErrorKind::NotFound);
    assert!(ioe.to_string().contains("NO_SUCH_OPCODE"), "{}", ioe);
    let ioe: io::Error = Error::from_code(-2).into();
    assert_eq!(ioe.raw_os_error(), Some(2));

    // A NUL inside a name cannot reach C: EINVAL, not a truncated lookup.
    assert_eq!(Opcode::from_name("NOP\0READ").unwrap_err().errno(), 22);

    let lib = Error::from_code(-4002);
    assert_eq!(lib.library_error(), Some(LibraryError::ProgTooLarge));
    assert_eq!(lib.name(), "-IOUR_ERRNO__PROG_TOO_LARGE");
    assert_eq!(lib.kind(), io::ErrorKind::Other);
    let ioe: io::Error = lib.clone().into();
    assert_eq!(ioe.raw_os_error(), None);
    assert!(ioe.to_string().contains(lib.message()));
    assert_eq!(Error::from_code(-22), Error::from_code(22));
}

#[test]
fn names_round_trip() {
    for n in 0..Opcode::COUNT {
        let op = Opcode(n);
        let name = op.name().unwrap();
        assert_eq!(Opcode::from_name(&name).unwrap(), op);
        assert_eq!(
            Opcode::from_name(&format!("ioring_op_{}", name.to_lowercase())).unwrap(),
            op
        );
    }
    assert_eq!(Opcode(10_000).name(), None);
    assert_eq!(
        RegisterOp::from_name("IORING_REGISTER_RESTRICTIONS").unwrap(),
        RegisterOp::REGISTER_RESTRICTIONS
    );
    assert_eq!(SqeFlags::from_name("IOSQE_ASYNC").unwrap(), SqeFlags::ASYNC);
    assert!(SqeFlags::from_name("nope").is_err());
}

#[test]
fn ruleset_builds_and_copies() {
    let mut rs = Ruleset::new().unwrap();
    rs.allow(Opcode::READ)
        .unwrap()
        .allow_register(RegisterOp::REGISTER_BUFFERS)
        .unwrap();
    let copy = rs.try_clone().unwrap();
    rs.allow(Opcode::WRITE).unwrap();
    assert!(copy.is_allowed(Opcode::READ) && !copy.is_allowed(Opcode::WRITE));
    assert!(rs.is_allowed(Opcode::WRITE));
    assert!(copy.is_register_allowed(RegisterOp::REGISTER_BUFFERS));
    assert!(!copy.is_register_allowed(RegisterOp::REGISTER_FILES));
    // Opcodes beyond the kernel's 8-bit space are refused.
    assert_eq!(rs.allow(Opcode(256)).unwrap_err().errno(), 34); // ERANGE
                                                                // Flags outside IOSQE_* are refused.
    assert_eq!(
        rs.sqe_flags(SqeFlags::from_bits(0x80), SqeFlags::NONE)
            .unwrap_err()
            .errno(),
        22
    );
}

#[test]
fn filter_compiles_disassembles_and_simulates() {
    let mut f = Filter::new(Verdict::Deny).unwrap();
    f.rule(
        Opcode::SOCKET,
        Verdict::Allow,
        &[
            Cmp::in_set(Field::SocketFamily, &[2, 10]),
            Cmp::eq(Field::SocketType, 1),
        ],
    )
    .unwrap();
    let p = f.compile(Opcode::SOCKET).unwrap();
    assert_eq!(p.kind(), ProgKind::Filter);
    assert_eq!(p.opcode(), Opcode::SOCKET);
    assert!(!p.insns().is_empty());
    assert!(p.run_socket(2, 1, 0).unwrap());
    assert!(p.run_socket(10, 1, 6).unwrap());
    assert!(!p.run_socket(2, 2, 0).unwrap()); // datagram
    assert!(!p.run_socket(1, 1, 0).unwrap()); // AF_UNIX
    assert!(!p.disasm().unwrap().is_empty());
    // An opcode without rules is not filtered: ENOENT.
    assert_eq!(f.compile(Opcode::READ).unwrap_err().errno(), 2);
    // A comparison of a field the opcode does not have is refused.
    assert!(f
        .rule(
            Opcode::READ,
            Verdict::Allow,
            &[Cmp::eq(Field::SocketFamily, 2)]
        )
        .is_err());
}

#[test]
fn compat_levels_decide_what_a_weak_kernel_gets() {
    let mut rs = Ruleset::new().unwrap();
    rs.allow(Opcode::NOP)
        .unwrap()
        .sqe_flags(SqeFlags::NONE, SqeFlags::NONE)
        .unwrap();
    let mut p = Policy::new().unwrap();
    p.ruleset(&rs).unwrap().target(Target::Task).unwrap();
    // Level 5 (everything): a task policy is fully enforced.
    let full = p.plan_for_level(5).unwrap();
    assert_eq!(
        full.expected_report().status(),
        RulesetStatus::FullyEnforced
    );
    assert!(full.step_count().unwrap() > 0);
    // Level 1 (io_uring without restrictions), without the companion.
    p.attr(iouring_restrict::sys::IOUR_POLICY_ATTR_COMPANION, 0)
        .unwrap();
    p.compat(CompatLevel::BestEffort).unwrap();
    let weak = p.plan_for_level(1).unwrap();
    assert_ne!(
        weak.expected_report().status(),
        RulesetStatus::FullyEnforced
    );
    assert!(!weak.expected_report().decisions().is_empty());
    p.compat(CompatLevel::SoftRequirement).unwrap();
    assert_eq!(
        p.plan_for_level(1).unwrap().expected_report().status(),
        RulesetStatus::NotEnforced
    );
    p.compat(CompatLevel::HardRequirement).unwrap();
    let hard = p.plan_for_level(1).unwrap();
    assert_eq!(hard.expected_report().status(), RulesetStatus::NotEnforced);
    assert_eq!(hard.step_count().unwrap(), 0);
    // Applying a refused HARD plan fails before anything is applied.
    let e = hard.apply_to_task().unwrap_err();
    assert_eq!(
        e.library_error(),
        Some(LibraryError::Unsupported),
        "{:?}",
        e
    );
}

#[test]
fn probe_answers() {
    let f = iouring_restrict::probe().unwrap();
    assert!(f.level <= 5);
    assert_eq!(iouring_restrict::feature_level().unwrap(), f.level);
    assert!(!iouring_restrict::feature_level_str(f.level).is_empty());
    assert_eq!(iouring_restrict::version(), "1.1.0");
}

/// Every `IOUR_FEATURES_*` of the C header has the same value in the -sys
/// crate and in FeaturesFlags, and the probe's flags read back through it.
#[test]
fn features_flags_match_probe_h() {
    use iouring_restrict::{sys, FeaturesExt, FeaturesFlags};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let hdr = std::fs::read_to_string(dir.join("../../../include/iouring_restrict/probe.h"))
        .unwrap();
    let bit = |name: &str| -> u64 {
        let pre = format!("#define IOUR_FEATURES_{} (1ULL << ", name);
        let l = hdr.lines().find(|l| l.starts_with(&pre)).expect(name);
        1u64 << l[pre.len()..].trim_end_matches(')').parse::<u32>().unwrap()
    };
    let all = [
        ("FORCED", sys::IOUR_FEATURES_FORCED, FeaturesFlags::FORCED),
        ("FORCE_IGNORED", sys::IOUR_FEATURES_FORCE_IGNORED, FeaturesFlags::FORCE_IGNORED),
        ("MISMATCH", sys::IOUR_FEATURES_MISMATCH, FeaturesFlags::MISMATCH),
        ("CHILD_DIED", sys::IOUR_FEATURES_CHILD_DIED, FeaturesFlags::CHILD_DIED),
        (
            "SOCKET_FLAGS_HIDDEN",
            sys::IOUR_FEATURES_SOCKET_FLAGS_HIDDEN,
            FeaturesFlags::SOCKET_FLAGS_HIDDEN,
        ),
        (
            "TASK_SET_GATES_FILTERS",
            sys::IOUR_FEATURES_TASK_SET_GATES_FILTERS,
            FeaturesFlags::TASK_SET_GATES_FILTERS,
        ),
    ];
    for (name, c, f) in all {
        assert_eq!(bit(name), c, "{}", name);
        assert_eq!(f.bits(), c, "{}", name);
    }
    assert_eq!(hdr.matches("#define IOUR_FEATURES_").count(), all.len());
    let f = iouring_restrict::probe().unwrap();
    assert_eq!(f.features_flags(), FeaturesFlags::from_bits(f.flags));
    // Linux 6.18 here has no filters: neither 7.3.4 measurement is set.
    assert!(!f.features_flags().contains(FeaturesFlags::SOCKET_FLAGS_HIDDEN));
    assert!(!f.features_flags().contains(FeaturesFlags::TASK_SET_GATES_FILTERS));
}

// issue 18: an unknown name is named, with the nearest valid one (not
// "No such file or directory").
#[test]
fn unknown_names_suggest_the_nearest() {
    use iouring_restrict::{Opcode, RegisterOp, SqeFlags};
    let e = Opcode::from_name("opnat").unwrap_err();
    assert_eq!(e.errno(), 2);
    assert_eq!(e.message(), "unknown request opcode 'opnat' (did you mean 'OPENAT'?)");
    let e = RegisterOp::from_name("register_bufers").unwrap_err();
    assert!(e.message().contains("'register_bufers' (did you mean 'REGISTER_BUFFERS'?)"), "{}", e);
    let e = SqeFlags::from_name("asyn").unwrap_err();
    assert!(e.message().contains("did you mean 'ASYNC'"), "{}", e);
    let e = Opcode::from_name("xyzzy").unwrap_err();
    assert_eq!(e.message(), "unknown request opcode 'xyzzy'");
    let io: std::io::Error = Opcode::from_name("opnat").unwrap_err().into();
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    assert!(io.to_string().contains("OPENAT"), "{}", io);
}

// issue 18: typed accessors of RingParams and a typed decide reason.
#[test]
fn ring_params_and_decide_reason_are_typed() {
    use iouring_restrict::{DecideReason, Opcode, Policy, RingParams};
    let mut p = RingParams::default();
    p.set_flags(1 << 1);
    p.set_sq_thread_idle(250);
    p.set_sq_thread_cpu(3);
    p.set_cq_entries(64);
    p.set_wq_fd(7);
    assert_eq!((p.flags(), p.sq_thread_idle(), p.sq_thread_cpu()), (2, 250, 3));
    assert_eq!((p.cq_entries(), p.wq_fd(), p.sq_entries(), p.features()), (64, 7, 0, 0));
    assert_eq!((p.0[1], p.0[2], p.0[3], p.0[4], p.0[6]), (64, 2, 3, 250, 7));
    let pol = Policy::from_json(
        r#"{ "requestOps": ["nop"], "entries": [ { "names": ["nop"], "action": "allow" } ] }"#,
    )
    .unwrap();
    assert_eq!(pol.decide_op(Opcode::NOP).unwrap().reason, DecideReason::Rule);
    assert_eq!(pol.decide_op(Opcode::READ).unwrap().reason, DecideReason::ClassicGate);
}

#[test]
fn plan_ruleset_is_what_the_ring_enforces() {
    let mut rs = Ruleset::new().unwrap();
    rs.allow(Opcode::NOP)
        .unwrap()
        .allow(Opcode::READ)
        .unwrap()
        .sqe_flags(SqeFlags::NONE, SqeFlags::NONE)
        .unwrap();
    let mut p = Policy::new().unwrap();
    p.ruleset(&rs).unwrap().target(Target::Ring).unwrap();
    for level in 2..=5 {
        let plan = p.plan_for_level(level).unwrap();
        let got = plan.ring_ruleset().unwrap().expect("a restriction step");
        assert!(got.is_allowed(Opcode::READ));
        assert!(!got.is_allowed(Opcode::OPENAT));
        assert!(plan.task_ruleset().unwrap().is_none());
    }
    // A classic part that allows everything plans no restriction step.
    let mut open = Ruleset::new().unwrap();
    open.sqe_flags(SqeFlags::ALL, SqeFlags::NONE).unwrap();
    let mut q = Policy::new().unwrap();
    q.ruleset(&open).unwrap().target(Target::Ring).unwrap();
    q.attr(
        iouring_restrict::sys::IOUR_POLICY_ATTR_DEFAULT,
        iouring_restrict::sys::IOUR_POLICY_DEFAULT_ALLOW,
    )
    .unwrap();
    let plan = q.plan_for_level(5).unwrap();
    assert!(plan.ring_ruleset().unwrap().is_none());
    assert!(plan.task_ruleset().unwrap().is_none());
}
