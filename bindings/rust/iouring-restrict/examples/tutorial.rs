//! The tutorial (doc/tutorial.md) in Rust: its four steps, as
//! examples/tutorial/step1_ring.c .. step4_report.c do in C.  Steps 2 and 3
//! restrict the task for good, so each runs in a child process (this
//! program again, with the step's name as its argument).
//!
//! Step 1 goes through the whole life of a restricted ring: created
//! disabled, a file and a buffer registered while it is disabled (the set
//! denies every register opcode once the ring is enabled), the set
//! applied and the ring enabled, then requests: NOP and a READ through the
//! registered file complete, a WRITE completes with EACCES.  Exits 0 only
//! if the kernel answered as the set says.
//!
//!   cargo run --example tutorial
use std::error::Error;
use std::fs::File;
use std::io::Write;
use std::os::unix::io::{AsRawFd, FromRawFd};
use std::process::exit;

use iouring_restrict::{
    sys, Cmp, Field, Filter, Opcode, Policy, RawRing, RingFile, RingParams, Ruleset, RulesetStatus,
    SqeFlags, Target, Verdict,
};

fn pipe() -> std::io::Result<(File, File)> {
    extern "C" {
        fn pipe(fds: *mut i32) -> i32;
    }
    let mut fds = [0i32; 2];
    // SAFETY: fds has room for the two descriptors.
    if unsafe { pipe(fds.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: two new descriptors we own.
    Ok(unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) })
}

fn errname(e: &std::io::Error) -> String {
    iouring_restrict::Error::from_code(e.raw_os_error().unwrap_or(0)).name()
}

fn step1() -> Result<bool, Box<dyn Error>> {
    if iouring_restrict::feature_level()? < 2 {
        println!("step1: skipped: the kernel has no per-ring restrictions (Linux 5.10+)");
        return Ok(true);
    }
    // 1. The allow-list: NOP, READ and READ_FIXED; FIXED_FILE is the only
    // SQE flag a request may carry; no register opcode once enabled.
    let mut rs = Ruleset::new()?;
    rs.allow(Opcode::NOP)?
        .allow(Opcode::READ)?
        .allow(Opcode::READ_FIXED)?
        .deny_all_register_ops()?
        .sqe_flags(SqeFlags::FIXED_FILE, SqeFlags::NONE)?;
    let (r, mut w) = pipe()?;
    w.write_all(b"hello, ring")?;

    let mut ring = RawRing::new_disabled(8)?; // 2. created disabled
    ring.register_files(&[&r])?; // 3. while disabled
    ring.register_buffers(vec![vec![0u8; 16]])?;
    let rep = rs.apply_to_ring(&ring, true)?; // 4. restrict, then enable
    println!(
        "step1: ring restricted: {} entries registered, enabled={}",
        rep.entries(),
        rep.enabled() as u32
    );
    ring.nop()?; // 5. use it
    println!("step1: NOP -> 0 (allowed)");
    let mut buf = [0u8; 5];
    let n = ring.read(RingFile::Fixed(0), &mut buf, u64::MAX)?;
    let got = String::from_utf8_lossy(&buf[..n]).into_owned();
    println!("step1: READ of fixed file 0 -> {:?} (allowed)", got);
    let n = ring.read_fixed(RingFile::Fixed(0), 0, 6, u64::MAX)?;
    let got2 = String::from_utf8_lossy(&ring.buffer(0).unwrap()[..n]).into_owned();
    println!("step1: READ_FIXED into buffer 0 -> {:?} (allowed)", got2);
    let wr = match ring.write(RingFile::Fd(w.as_raw_fd()), b"x", u64::MAX) {
        Ok(_) => "completed".to_string(),
        Err(e) => errname(&e),
    };
    println!("step1: WRITE -> {} (not in the set)", wr);
    let reg = match ring.register_files(&[&w]) {
        Ok(_) => "completed".to_string(),
        Err(e) => errname(&e),
    };
    println!(
        "step1: REGISTER_FILES after enabling -> {} (not in the set)",
        reg
    );
    let ok = got == "hello" && got2 == ", ring" && wr == "-EACCES" && reg == "-EACCES";
    println!(
        "{}",
        if ok {
            "step1: ok"
        } else {
            "step1: FAILED: expected the reads, and EACCES for the rest"
        }
    );
    Ok(ok)
}

/// Applies `p` to the task (for good): the level and whether the report
/// says what this kernel can do (task restrictions from 7.0, the seccomp
/// companion before).
fn apply_task(name: &str, p: &Policy) -> Result<(u32, bool), Box<dyn Error>> {
    let level = iouring_restrict::feature_level()?;
    println!(
        "{}: kernel feature level {}: {}",
        name,
        level,
        iouring_restrict::feature_level_str(level)
    );
    let rep = p.plan()?.apply_to_task()?; // no_new_privs, then the set
    println!("{}: task: {}", name, rep.status());
    let expected = if level >= 4 {
        rep.status() == RulesetStatus::FullyEnforced && rep.mechanism() & sys::IOUR_MECH_TASK != 0
    } else {
        rep.status() == RulesetStatus::PartiallyEnforced
            && rep.mechanism() == sys::IOUR_MECH_COMPANION
    };
    Ok((level, expected))
}

/// A new ring, which the task's restrictions bind (7.0+) or the seccomp
/// companion refuses (before).
fn new_ring() -> std::io::Result<RawRing> {
    RawRing::with_params(8, RingParams::default())
}

fn fallback(name: &str) -> bool {
    let got = match new_ring() {
        Ok(_) => "a ring".to_string(),
        Err(e) => errname(&e),
    };
    println!(
        "{}: no task restrictions before Linux 7.0: fell back to the seccomp companion: io_uring_setup -> {}",
        name, got
    );
    got == "-ENOSYS"
}

fn step2() -> Result<bool, Box<dyn Error>> {
    let mut rs = Ruleset::new()?;
    rs.allow(Opcode::NOP)?
        .allow(Opcode::READ)?
        .sqe_flags(SqeFlags::NONE, SqeFlags::NONE)?;
    let mut p = Policy::new()?;
    p.ruleset(&rs)?; // target: the calling task
    let (level, expected) = apply_task("step2", &p)?;
    let ok = if level >= 4 {
        let mut ring = new_ring()?;
        let nop = ring.submit(Opcode::NOP, None, SqeFlags::NONE)?;
        // OPENAT with no path: -EFAULT if it ran, -EACCES if denied first
        let op = ring.submit(Opcode::OPENAT, None, SqeFlags::NONE)?;
        println!(
            "step2: task restrictions (Linux 7.0+): a new ring: NOP -> {}, OPENAT -> {}",
            nop, op
        );
        nop == 0 && op == -13
    } else {
        fallback("step2")
    };
    Ok(expected && ok)
}

fn step3() -> Result<bool, Box<dyn Error>> {
    let mut rs = Ruleset::new()?;
    rs.allow(Opcode::NOP)?
        .allow(Opcode::SOCKET)?
        .sqe_flags(SqeFlags::NONE, SqeFlags::NONE)?;
    let mut f = Filter::new(Verdict::Deny)?;
    f.rule(
        Opcode::SOCKET,
        Verdict::Allow,
        &[Cmp::eq(Field::SocketFamily, 1)],
    )?;
    let mut p = Policy::new()?;
    p.ruleset(&rs)?.filter(&f)?;
    let (level, expected) = apply_task("step3", &p)?;
    let ok = if level >= 4 {
        let mut ring = new_ring()?;
        // IORING_OP_SOCKET's fd is the domain (the type 0 is then refused
        // with -EINVAL if it runs; a denial is -EACCES before that)
        let unix = ring.submit(Opcode::SOCKET, Some(RingFile::Fd(1)), SqeFlags::NONE)?;
        let inet = ring.submit(Opcode::SOCKET, Some(RingFile::Fd(2)), SqeFlags::NONE)?;
        println!(
            "step3: filters (Linux 7.0+): SOCKET AF_UNIX -> {}, AF_INET -> {}",
            unix, inet
        );
        unix != -13 && inet == -13
    } else {
        fallback("step3")
    };
    Ok(expected && ok)
}

/// Runs a step in a child process: whether it said ok.
fn in_child(step: &str) -> Result<bool, Box<dyn Error>> {
    let out = std::process::Command::new(std::env::current_exe()?)
        .arg(step)
        .status()?;
    Ok(out.success())
}

fn step4() -> Result<bool, Box<dyn Error>> {
    // The policy of step 3: SOCKET for AF_UNIX only, as a task policy.
    let mut rs = Ruleset::new()?;
    rs.allow(Opcode::NOP)?
        .allow(Opcode::SOCKET)?
        .sqe_flags(SqeFlags::NONE, SqeFlags::NONE)?;
    let mut f = Filter::new(Verdict::Deny)?;
    f.rule(
        Opcode::SOCKET,
        Verdict::Allow,
        &[Cmp::eq(Field::SocketFamily, 1)],
    )?;
    let mut p = Policy::new()?;
    p.ruleset(&rs)?.filter(&f)?.target(Target::Task)?;
    let here = p.plan()?;
    let future = p.plan_for_level(5)?; // Linux 7.2's level
                                       // The enums print their names.
    let (a, b) = (
        here.expected_report().status(),
        future.expected_report().status(),
    );
    println!("step4: this kernel: {}", a);
    println!("step4: Linux 7.2: {}", b);
    for d in future.expected_report().decisions() {
        println!("step4: Linux 7.2: {}", d.text);
    }
    let ok = b == RulesetStatus::FullyEnforced;
    println!(
        "{}",
        if ok {
            "step4: ok"
        } else {
            "step4: FAILED: the 7.2 plan is not fully enforced"
        }
    );
    Ok(ok)
}

fn main() {
    let says = |step: &str, r: Result<bool, Box<dyn Error>>| -> bool {
        match r {
            Ok(true) => {
                println!("{}: ok", step);
                true
            }
            Ok(false) => {
                println!("{}: FAILED", step);
                false
            }
            Err(e) => {
                eprintln!("{}: {}", step, e);
                false
            }
        }
    };
    match std::env::args().nth(1).as_deref() {
        Some("step2") => exit(if says("step2", step2()) { 0 } else { 1 }),
        Some("step3") => exit(if says("step3", step3()) { 0 } else { 1 }),
        _ => {}
    }
    let oks = [
        step1().unwrap_or_else(|e| {
            eprintln!("step1: {}", e);
            false
        }),
        in_child("step2").unwrap_or(false),
        in_child("step3").unwrap_or(false),
        step4().unwrap_or_else(|e| {
            eprintln!("step4: {}", e);
            false
        }),
    ];
    if oks.iter().any(|ok| !ok) {
        exit(1);
    }
}
