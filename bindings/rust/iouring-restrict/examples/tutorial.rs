//! The tutorial (doc/tutorial.md) in Rust: step 1 (restrict a ring) and
//! step 4 (read the report), as examples/tutorial/step1_ring.c and
//! step4_report.c do in C.
//!
//! Step 1 goes through the whole life of a restricted ring: created
//! disabled, a file and a buffer registered while it is disabled (a set
//! without register opcodes forbids them once the ring is enabled), the set
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
    Cmp, Field, Filter, Opcode, Policy, RawRing, RingFile, Ruleset, RulesetStatus, SqeFlags,
    Target, Verdict,
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
    match (step1(), step4()) {
        (Ok(true), Ok(true)) => {}
        (a, b) => {
            for e in [a.err(), b.err()].into_iter().flatten() {
                eprintln!("tutorial: {}", e);
            }
            exit(1);
        }
    }
}
