//! The restricted ring (the Rust version of examples/liburing_ring.c): a
//! ring made by someone else (here the crate's RawRing; any io_uring crate
//! works the same) is created with IORING_SETUP_R_DISABLED, restricted to
//! NOP through its file descriptor without being enabled, then enabled by
//! its owner.  Exits 0 only if the kernel enforces the set.
//!
//!   cargo run --example restricted_ring
use std::process::exit;

use iouring_restrict::{enable_ring, Opcode, RawRing, RingFile, Ruleset, SqeFlags};

fn main() {
    if let Err(e) = run() {
        eprintln!("restricted_ring: {}", e);
        exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let level = iouring_restrict::feature_level()?;
    if level < 2 {
        println!(
            "SKIP: this kernel has no per-ring restrictions (feature level {})",
            level
        );
        return Ok(());
    }
    let mut rs = Ruleset::new()?;
    rs.allow_name("NOP")?
        .sqe_flags(SqeFlags::NONE, SqeFlags::NONE)?;

    // 1. The owner creates the ring, disabled.
    let mut ring = RawRing::new_disabled(8)?;
    // 2. The library registers the restrictions (not enabling).
    let rep = rs.apply_to_ring(&ring, false)?;
    println!(
        "restricted ring: {} entries for {} request / {} register opcodes",
        rep.entries(),
        rep.0.op_last,
        rep.0.reg_last
    );
    // 3. The owner enables it (with SINGLE_ISSUER, from the submitting thread).
    enable_ring(&ring)?;

    let nop = ring.submit(Opcode::NOP, None, SqeFlags::NONE)?;
    let write = ring.submit(Opcode::WRITE, Some(RingFile::Fd(1)), SqeFlags::NONE)?;
    println!("NOP   -> {} (allowed)", nop);
    println!("WRITE -> {} (denied: -EACCES is -13)", write);
    if nop != 0 || write != -13 {
        return Err("the kernel did not enforce the restriction set".into());
    }
    println!("restricted_ring: the kernel enforces the set");
    Ok(())
}
