/work/main/bindings/rust/target/debug/deps/iouring_restrict_sys-3da62a9e28930cb2.d: iouring-restrict-sys/src/lib.rs

/work/main/bindings/rust/target/debug/deps/libiouring_restrict_sys-3da62a9e28930cb2.rlib: iouring-restrict-sys/src/lib.rs

/work/main/bindings/rust/target/debug/deps/libiouring_restrict_sys-3da62a9e28930cb2.rmeta: iouring-restrict-sys/src/lib.rs

iouring-restrict-sys/src/lib.rs:
