//! The restricted ring (the Rust version of examples/liburing_ring.c): a
//! ring made by someone else (here raw system calls; any io_uring crate
//! works the same) is created with IORING_SETUP_R_DISABLED, restricted to
//! NOP through its file descriptor without being enabled, then enabled by
//! its owner.  Exits 0 only if the kernel enforces the set.
//!
//!   cargo run --example restricted_ring
#[path = "../tests/common/mini_ring.rs"]
mod mini_ring;

use std::process::exit;

use iouring_restrict::{enable_ring, Opcode, Ruleset, SqeFlags};
use mini_ring::{MiniRing, IORING_SETUP_R_DISABLED};

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
    let ring = MiniRing::new(8, IORING_SETUP_R_DISABLED)?;
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

    let nop = ring.submit_one(Opcode::NOP.0 as u8, -1, 0)?;
    let write = ring.submit_one(Opcode::WRITE.0 as u8, 1, 0)?;
    println!("NOP   -> {} (allowed)", nop);
    println!("WRITE -> {} (denied: -EACCES is -13)", write);
    if nop != 0 || write != -13 {
        return Err("the kernel did not enforce the restriction set".into());
    }
    println!("restricted_ring: the kernel enforces the set");
    Ok(())
}
