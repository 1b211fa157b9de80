//! Every function the library exports (abi/symbols.txt, checked against
//! the shared library by `make check-symbols`) is declared in this crate,
//! and nothing else is.
use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

#[test]
fn declarations_cover_every_export() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exported: BTreeSet<String> = fs::read_to_string(dir.join("../../../abi/symbols.txt"))
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    let src = fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    let declared: BTreeSet<String> = src
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub fn "))
        .map(|l| l.split('(').next().unwrap().to_string())
        .collect();
    let missing: Vec<_> = exported.difference(&declared).collect();
    let extra: Vec<_> = declared.difference(&exported).collect();
    assert!(
        missing.is_empty(),
        "exported but not declared in Rust: {:?}",
        missing
    );
    assert!(
        extra.is_empty(),
        "declared in Rust but not exported: {:?}",
        extra
    );
    assert!(exported.len() > 100);
}
