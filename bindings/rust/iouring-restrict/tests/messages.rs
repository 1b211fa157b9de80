//! Errors that name the value and the limit, and enums that print their
//! names.
use std::io;

use iouring_restrict::{
    CompatLevel, Error, Opcode, Policy, RegisterOp, Ruleset, RulesetStatus, SqeFlags, Target,
    Verdict,
};

/// The last opcode of the library's table (the one `iour_opcode_name()`
/// still names).
fn last_op() -> Opcode {
    (0..256)
        .map(Opcode)
        .take_while(|o| o.name().is_some())
        .last()
        .unwrap()
}

#[test]
fn opcode_beyond_the_table_names_it_and_the_last() {
    let mut rs = Ruleset::new().unwrap();
    let e = rs.allow(Opcode(255)).unwrap_err();
    assert_eq!(e.errno(), 34, "{:?}", e); // ERANGE, unchanged
    let last = last_op();
    let want = format!(
        "opcode 255: the library's request-opcode table ends at {} ({})",
        last.0, last
    );
    assert_eq!(e.detail(), Some(want.as_str()));
    assert_eq!(e.message(), want);
    assert_eq!(e.to_string(), format!("{} (-ERANGE)", want));
    // into std::io::Error, the words stay
    let ioe: io::Error = e.into();
    assert!(ioe.to_string().contains("opcode 255"), "{}", ioe);
    // refused: nothing was allowed
    assert!(rs.is_allowed(Opcode::NOP)); // still unrestricted
    let e = rs.allow_register(RegisterOp(200)).unwrap_err();
    assert!(
        e.message()
            .starts_with("register opcode 200: the library's register-opcode table ends at"),
        "{}",
        e
    );
}

#[test]
fn plan_level_names_the_range() {
    let p = Policy::new().unwrap();
    let e = p.plan_for_level(9).unwrap_err();
    assert_eq!(e.errno(), 22);
    assert_eq!(e.detail(), Some("level 9: levels are 0..5"));
    assert!(p.plan_for_level(2).is_ok());
}

#[test]
fn set_attr_names_the_unknown_attribute_and_the_range() {
    let mut p = Policy::new().unwrap();
    let e = p.attr(99, 0).unwrap_err();
    assert_eq!(e.errno(), 22);
    assert_eq!(
        e.detail(),
        Some("attribute 99: attributes are 1..7 (IOUR_POLICY_ATTR_TARGET .. IOUR_POLICY_ATTR_DEFAULT)")
    );
    let e = p.attr(1, 7).unwrap_err();
    assert_eq!(e.errno(), 34);
    assert_eq!(
        e.detail(),
        Some("IOUR_POLICY_ATTR_TARGET value 7: values are 0..1")
    );
    assert_eq!(p.get_attr(1).unwrap(), 0); // unchanged
}

#[test]
fn apply_task_on_a_ring_plan_says_so() {
    let mut p = Policy::new().unwrap();
    p.target(Target::Ring)
        .unwrap()
        .allow_unmentioned(true)
        .unwrap();
    let plan = p.plan_for_level(2).unwrap();
    let e = plan.apply_to_task().unwrap_err();
    assert_eq!(e.errno(), 22);
    assert!(
        e.message()
            .starts_with("apply_task: this plan targets a ring"),
        "{}",
        e
    );
}

#[test]
fn a_code_alone_has_no_detail() {
    let e = Error::from_code(-22);
    assert_eq!(e.detail(), None);
    assert_eq!(e.message(), "Invalid argument");
    // a later success of the same function clears its record
    let mut rs = Ruleset::new().unwrap();
    assert!(rs.allow(Opcode(300)).is_err());
    rs.allow(Opcode::NOP).unwrap();
    let e = rs
        .sqe_flags(SqeFlags::from_bits(1 << 31), SqeFlags::NONE)
        .unwrap_err();
    assert_eq!((e.errno(), e.detail()), (22, None));
}

#[test]
fn enums_print_their_names() {
    assert_eq!(RulesetStatus::FullyEnforced.to_string(), "FullyEnforced");
    assert_eq!(format!("{}", Target::Ring), "Ring");
    assert_eq!(format!("{}", CompatLevel::BestEffort), "BestEffort");
    assert_eq!(format!("{}", Verdict::Allow), "Allow");
    assert_eq!(Opcode::READ.to_string(), "READ");
    assert_eq!(RegisterOp::REGISTER_FILES.to_string(), "REGISTER_FILES");
    assert_eq!(
        (SqeFlags::IO_LINK | SqeFlags::ASYNC).to_string(),
        "IO_LINK|ASYNC"
    );
    assert_eq!(SqeFlags::NONE.to_string(), "0");
    assert_eq!(SqeFlags::from_bits(1 << 20).to_string(), "0x100000");
    let mut p = Policy::new().unwrap();
    p.allow_unmentioned(true).unwrap();
    let plan = p.plan_for_level(0).unwrap();
    let st = plan.expected_report().status();
    assert_eq!(st.to_string(), format!("{:?}", st));
}
