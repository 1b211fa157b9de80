/work/main/bindings/rust/target/debug/deps/layout-434c75809ca5a2da.d: iouring-restrict-sys/tests/layout.rs

/work/main/bindings/rust/target/debug/deps/layout-434c75809ca5a2da: iouring-restrict-sys/tests/layout.rs

iouring-restrict-sys/tests/layout.rs:
