#![allow(dead_code)]
/// Whether the running kernel has per-ring restrictions (level 2+); when
/// not, the caller's test is skipped, saying why.
pub fn has_ring_restrictions() -> bool {
    let lvl = iouring_restrict::feature_level().unwrap();
    if lvl < 2 {
        eprintln!(
            "SKIP: the kernel has no per-ring restrictions (feature level {})",
            lvl
        );
    }
    lvl >= 2
}
