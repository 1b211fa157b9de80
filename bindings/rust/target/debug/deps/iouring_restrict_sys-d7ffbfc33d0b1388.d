/work/main/bindings/rust/target/debug/deps/iouring_restrict_sys-d7ffbfc33d0b1388.d: iouring-restrict-sys/src/lib.rs

/work/main/bindings/rust/target/debug/deps/iouring_restrict_sys-d7ffbfc33d0b1388: iouring-restrict-sys/src/lib.rs

iouring-restrict-sys/src/lib.rs:
