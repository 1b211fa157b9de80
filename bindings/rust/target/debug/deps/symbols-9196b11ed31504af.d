/work/main/bindings/rust/target/debug/deps/symbols-9196b11ed31504af.d: iouring-restrict-sys/tests/symbols.rs

/work/main/bindings/rust/target/debug/deps/symbols-9196b11ed31504af: iouring-restrict-sys/tests/symbols.rs

iouring-restrict-sys/tests/symbols.rs:

# env-dep:CARGO_MANIFEST_DIR=/work/main/bindings/rust/iouring-restrict-sys
