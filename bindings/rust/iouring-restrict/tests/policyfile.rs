//! Policy files through the safe crate: load, save (canonical round trip),
//! decide, errors with their position, groups.
use iouring_restrict::{Group, LibraryError, Opcode, Policy, Verdict};

const CLIENT: &str = r#"{
  "comment": "a TCP client",
  "defaultAction": "deny",
  "entries": [
    { "names": ["@file-read", "close"], "action": "allow" },
    { "names": ["socket"], "action": "allow",
      "args": [ { "field": "socket.family", "op": "in", "values": ["AF_INET", "AF_INET6"] } ] }
  ]
}"#;

fn socket_ctx(family: u32) -> [u8; 40] {
    let mut ctx = [0u8; 40];
    ctx[8] = Opcode::SOCKET.0 as u8;
    ctx[16..20].copy_from_slice(&family.to_ne_bytes());
    ctx[20..24].copy_from_slice(&1u32.to_ne_bytes());
    ctx
}

#[test]
fn load_save_round_trip_is_canonical() {
    let p = Policy::from_json(CLIENT).unwrap();
    let text = p.to_json().unwrap();
    assert!(
        text.contains("SOCKET") || text.contains("socket"),
        "{}",
        text
    );
    let again = Policy::from_json(&text).unwrap().to_json().unwrap();
    assert_eq!(text, again);
}

#[test]
fn decide_follows_rules_and_default() {
    let p = Policy::from_json(CLIENT).unwrap();
    assert_eq!(p.decide_op(Opcode::READ).unwrap().verdict, Verdict::Allow);
    assert_eq!(p.decide_op(Opcode::WRITE).unwrap().verdict, Verdict::Deny);
    let inet = p.decide(&socket_ctx(2)).unwrap();
    assert_eq!(inet.verdict, Verdict::Allow);
    assert_eq!(inet.rule, Some(0));
    let unix = p.decide(&socket_ctx(1)).unwrap();
    assert_eq!(unix.verdict, Verdict::Deny);
    // A context of the wrong size is refused.
    assert_eq!(p.decide(&[0u8; 8]).unwrap_err().errno(), 22);
}

#[test]
fn load_errors_say_where_and_why() {
    let e =
        Policy::from_json("{\n  \"defaultAction\": \"deny\",\n  \"entires\": []\n}").unwrap_err();
    assert_eq!(e.error.errno(), 74); // EBADMSG
    assert_eq!((e.line, e.column, e.path.as_str()), (3, 3, "entires"));
    assert!(e.message.contains("unknown key 'entires'"), "{}", e.message);
    assert!(e.to_string().starts_with("3:3: entires: "), "{}", e);
    let e = Policy::from_json(r#"{"entries": [{"names": ["no_such_op"], "action": "allow"}]}"#)
        .unwrap_err();
    assert_eq!(e.error.errno(), 74);
    assert!(!e.path.is_empty());
    let e = Policy::load_file("/nonexistent/policy.json").unwrap_err();
    assert_eq!(e.error.errno(), 2);
    assert_eq!(e.error.library_error(), None::<LibraryError>);
}

#[test]
fn groups_are_listed_and_found() {
    let all = Group::all().unwrap();
    let g = Group::find("FILE-READ").unwrap();
    assert!(all.contains(&g));
    assert_eq!(g.name, "@file-read");
    let ops = g.opcodes(None).unwrap();
    assert!(ops.contains(&Opcode::READ));
    assert!(!ops.contains(&Opcode::WRITE));
    // READ_MULTISHOT came with 6.7: not in the group as of 6.6.
    let old = g.opcodes(Some((6, 6))).unwrap();
    assert!(old.len() <= ops.len());
    assert!(!old.contains(&Opcode::READ_MULTISHOT));
    assert_eq!(Group::find("@nothing").unwrap_err().errno(), 2);
}
