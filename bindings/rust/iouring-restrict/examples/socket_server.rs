//! The socket-only server policy: a ring that may create Internet stream
//! sockets, accept, receive, send and close, and nothing else.  SOCKET
//! has argument rules (AF_INET or AF_INET6 only); where the kernel cannot
//! filter arguments (before Linux 7.0) the rule fails closed: SOCKET is
//! denied and the report says the policy is partially enforced.
//!
//! Prints the plan (the dry run), simulates the SOCKET filter, applies the
//! plan to a ring its owner created disabled, and checks the kernel's
//! answers.  Exits 0 only if the kernel answered as the report says.
//!
//!   cargo run --example socket_server
use std::process::exit;

use iouring_restrict::{
    Cmp, CompatLevel, Field, Filter, Opcode, Policy, RawRing, RingFile, Ruleset, RulesetStatus,
    SqeFlags, Target, Verdict,
};

const AF_UNIX: u32 = 1;
const AF_INET: u32 = 2;
const AF_INET6: u32 = 10;
const SOCK_STREAM: u64 = 1;
const EACCES: i32 = 13;

fn main() {
    match run() {
        Ok(()) => {}
        Err(e) => {
            eprintln!("socket_server: {}", e);
            exit(1);
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut rs = Ruleset::new()?;
    for op in [
        Opcode::SOCKET,
        Opcode::ACCEPT,
        Opcode::RECV,
        Opcode::SEND,
        Opcode::CLOSE,
    ] {
        rs.allow(op)?;
    }
    rs.sqe_flags(SqeFlags::NONE, SqeFlags::NONE)?;
    let mut f = Filter::new(Verdict::Deny)?;
    f.rule(
        Opcode::SOCKET,
        Verdict::Allow,
        &[
            Cmp::in_set(Field::SocketFamily, &[AF_INET as u64, AF_INET6 as u64]),
            Cmp::eq(Field::SocketType, SOCK_STREAM),
        ],
    )?;

    let prog = f.compile(Opcode::SOCKET)?;
    let inet = prog.run_socket(AF_INET, 1, 0)?;
    let unix = prog.run_socket(AF_UNIX, 1, 0)?;
    println!(
        "simulated SOCKET filter: AF_INET stream {}, AF_UNIX stream {}",
        if inet { "allowed" } else { "denied" },
        if unix { "allowed" } else { "denied" }
    );
    if !inet || unix {
        return Err("the compiled SOCKET filter decides wrongly".into());
    }

    let mut p = Policy::new()?;
    p.ruleset(&rs)?
        .filter(&f)?
        .target(Target::Ring)?
        .compat(CompatLevel::BestEffort)?;
    let plan = p.plan()?;
    println!(
        "--- the plan for this kernel (nothing applied yet)\n{}",
        plan.describe()?
    );

    if iouring_restrict::feature_level()? < 2 {
        println!("SKIP: this kernel has no per-ring restrictions; the plan above says so");
        return Ok(());
    }
    let mut ring = RawRing::new_disabled(8)?;
    let report = plan.apply_to_ring(&ring)?;
    println!("--- the report\n{}", report.describe()?);
    let status = report.status();
    if status == RulesetStatus::NotEnforced {
        return Err("nothing was enforced".into());
    }

    // SOCKET takes its family in the SQE's fd field.
    let none = SqeFlags::NONE;
    let unix_sock = ring.submit(Opcode::SOCKET, Some(RingFile::Fd(AF_UNIX as i32)), none)?;
    let open = ring.submit(Opcode::OPENAT, Some(RingFile::Fd(-100)), none)?;
    let accept = ring.submit(Opcode::ACCEPT, None, none)?;
    println!(
        "SOCKET AF_UNIX -> {}, OPENAT -> {}, ACCEPT on fd -1 -> {} (allowed; EBADF)",
        unix_sock, open, accept
    );
    if unix_sock != -EACCES || open != -EACCES || accept == -EACCES {
        return Err("the kernel did not answer as the report says".into());
    }
    println!("socket_server: {:?}; the kernel confirmed it", status);
    Ok(())
}
