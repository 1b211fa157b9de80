//! Finds libiouring-restrict.
//!
//! - `IOURING_RESTRICT_LIB_DIR=DIR`: link the library in DIR (for example
//!   the project's build tree); otherwise ask the `pkg-config` command for
//!   the `iouring-restrict` package (`PKG_CONFIG_PATH` is honoured).
//! - `IOURING_RESTRICT_STATIC=1`: link `libiouring-restrict.a` (and the
//!   private libraries it needs); otherwise the shared library.
//!
//! - `IOURING_RESTRICT_STATIC_LIBS="a b"`: more libraries a static link
//!   needs, beyond those pkg-config's `Libs.private` names.
//!
//! A shared library outside the loader's path needs `LD_LIBRARY_PATH` (or
//! an rpath) at run time, as for C programs.
use std::env;
use std::process::Command;

fn flag(name: &str) -> bool {
    println!("cargo:rerun-if-env-changed={}", name);
    matches!(env::var(name).as_deref(), Ok("1") | Ok("yes") | Ok("true"))
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=IOURING_RESTRICT_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let stat = flag("IOURING_RESTRICT_STATIC");
    let kind = if stat { "static" } else { "dylib" };

    let mut dirs: Vec<String> = Vec::new();
    let mut others: Vec<String> = Vec::new();
    if let Some(dir) = env::var_os("IOURING_RESTRICT_LIB_DIR") {
        dirs.push(dir.to_string_lossy().into_owned());
        if stat {
            others.push("pthread".to_string());
        }
    } else {
        let mut cmd = Command::new("pkg-config");
        if stat {
            cmd.arg("--static");
        }
        cmd.args(["--libs", "iouring-restrict"]);
        let out = match cmd.output() {
            Ok(o) if o.status.success() => o,
            Ok(o) => panic!(
                "pkg-config found no iouring-restrict ({}); install the library, \
                 set PKG_CONFIG_PATH, or set IOURING_RESTRICT_LIB_DIR",
                String::from_utf8_lossy(&o.stderr).trim()
            ),
            Err(e) => panic!(
                "cannot run pkg-config ({}); install pkgconf or set IOURING_RESTRICT_LIB_DIR",
                e
            ),
        };
        for tok in String::from_utf8_lossy(&out.stdout).split_whitespace() {
            if let Some(d) = tok.strip_prefix("-L") {
                dirs.push(d.to_string());
            } else if let Some(l) = tok.strip_prefix("-l") {
                if l != "iouring-restrict" {
                    others.push(l.to_string());
                }
            }
        }
    }
    for d in &dirs {
        println!("cargo:rustc-link-search=native={}", d);
    }
    println!("cargo:rustc-link-lib={}=iouring-restrict", kind);
    println!("cargo:rerun-if-env-changed=IOURING_RESTRICT_STATIC_LIBS");
    if stat {
        if let Ok(extra) = env::var("IOURING_RESTRICT_STATIC_LIBS") {
            others.extend(extra.split_whitespace().map(String::from));
        }
    }
    for l in others {
        println!("cargo:rustc-link-lib=dylib={}", l);
    }
}
