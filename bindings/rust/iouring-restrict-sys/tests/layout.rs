//! Every `#[repr(C)]` struct of this crate against the library's own
//! layout table (`iour_abi_layout()`, compiled by the C compiler into the
//! library): size and alignment of each struct, offset and size of each
//! member, in order.  A struct or member of the table without a Rust
//! counterpart fails, and so does one here that the table lacks.
//! Offsets come from `MaybeUninit` + `addr_of!` (no `offset_of!` on 1.63).
use std::collections::BTreeMap;
use std::ffi::CStr;
use std::mem::{align_of, size_of, MaybeUninit};
use std::ptr::addr_of;

use iouring_restrict_sys::*;

/// (struct or member, offset, size, align): the struct row has member "".
type Rows = BTreeMap<String, Vec<(String, u32, u32, u32)>>;

fn pointee_size<T>(_: *const T) -> usize {
    size_of::<T>()
}

macro_rules! rust_layouts {
    ($($t:ident { $($f:ident),* $(,)? }),* $(,)?) => {{
        let mut m = Rows::new();
        $({
            let u = MaybeUninit::<$t>::uninit();
            let base = u.as_ptr();
            let mut v = vec![(String::new(), 0u32, size_of::<$t>() as u32, align_of::<$t>() as u32)];
            $(
                // SAFETY: addr_of! computes a member's address without reading it.
                let fp = unsafe { addr_of!((*base).$f) };
                v.push((stringify!($f).trim_start_matches("r#").to_string(),
                        (fp as usize - base as usize) as u32, pointee_size(fp) as u32, 0));
            )*
            m.insert(stringify!($t).to_string(), v);
        })*
        m
    }};
}

fn rust_side() -> Rows {
    rust_layouts! {
        iour_ruleset_opts { sz, flags },
        iour_restriction { opcode, arg, resv, resv2 },
        iour_clamp_report { sz, n_sqe_ops, n_register_ops, sqe_ops, register_ops },
        iour_export_opts { sz, kver, op_last, reg_last, flags, clamp },
        iour_ring_report { sz, registered, enabled, nr_entries, op_last, reg_last, split_gates, n_clamped_sqe_ops, n_clamped_register_ops, clamped_sqe_ops, clamped_register_ops },
        iour_ring_apply_opts { sz, flags, report },
        iour_ring_create_opts { sz, flags, report },
        iour_features { sz, level, kernel_level, flags, io_uring, setup_err, sysctl_disabled, sysctl_group, seccomp_mode, no_new_privs, ring_restrictions, r_disabled_err, ring_register_err, enable_rings_err, op_last, reg_last, limits_source, split_gates, query, query_err, nr_query_opcodes, probe, feature_flags, setup_flags, enter_flags, sqe_flags, probe_err, probe_last_op, nr_supported_ops, blind_register, supported_ops, task_restrictions, task_restrictions_err, bpf_ring, bpf_ring_err, bpf_task, bpf_task_err, pdu_socket, pdu_openat, pdu_openat2, pdu_connect, child_signal, pad, pdu_size },
        iour_probe_opts { sz, flags },
        iour_insn { code, jt, jf, k },
        iour_validate_info { sz, insn, reason },
        iour_sim_result { sz, retval, executed, allowed, pad },
        iour_cmp { sz, field, op, value, arg, set, set_len, addr6 },
        iour_rule_error { sz, pos, message },
        iour_filter_opts { sz, default_verdict, flags },
        iour_filter_opinfo { sz, nrules, flags, default_verdict, raw_cnt },
        iour_compile_opts { sz, flags, max_insns },
        iour_policy_opts { sz, flags },
        iour_plan_opts { sz, flags, level, features },
        iour_plan_info { sz, target, level, op_last, reg_last, split_gates, flags, task_steps, ring_steps },
        iour_plan_step { sz, side, op, call_op, nr_args, opcode, arg_len, insn_cnt, entries },
        iour_apply_opts { sz, flags },
        iour_decision { sz, kind, reason, opcode, step, value, pad, text },
        iour_companion_opts { sz, flags, errno_value },
        iour_broker_event { sz, pid, entries, setup_flags, result, what },
        iour_broker_opts { sz, flags, on_ring, arg, deadline_ms, max_workers, process_workers, max_rings },
        iour_broker_counters { sz, notifications, served, refused, refused_flags, refused_kernel, refused_memory, gone, refused_deadline, refused_busy, refused_accounting, deferred, refused_quota },
        iour_verify_req { sz, opcode, expect, sqe_flags, family, r#type, protocol, open_flags, open_mode, open_resolve, path, addr, addrlen, resv },
        iour_verify_result { res, status, observed, resv },
        iour_verify_coverage { sz, flags, op_last, n_allowed, n_tried, n_untried, n_unpreparable, allowed, tried, untried, unpreparable, denied_tried },
        iour_verify_opts { sz, flags, ring_fd, ring_flags, timeout_ms, exec_path, exec_argv, exec_envp, ruleset, coverage },
        iour_policy_load_opts { sz, flags, origin, kernel, reserved },
        iour_load_error { sz, line, column, offset, path, message },
        iour_request_verdict { sz, verdict, reason, opcode, rule },
        iour_group_info { sz, name, help, source, nops, nregister_ops },
        iour_payload_info { sz, group, opcode, pdu_size, level, since },
        iour_field_info { sz, name, group, prefix, mask, valid, id, kind, offset, size, order },
        iour_const_info { sz, name, ns, value, since },
        iour_layout_field { r#type, field, offset, size, align, resv },
    }
}

fn c_side() -> Rows {
    let mut cnt = 0usize;
    // SAFETY: the table is static and ends with a NULL type.
    let rows = unsafe { iour_abi_layout(&mut cnt) };
    assert!(!rows.is_null() && cnt > 0);
    let mut m = Rows::new();
    for i in 0..cnt {
        // SAFETY: cnt rows precede the terminator; strings are static.
        let r = unsafe { &*rows.add(i) };
        let t = unsafe { CStr::from_ptr(r.r#type) }
            .to_str()
            .unwrap()
            .to_string();
        let f = unsafe { CStr::from_ptr(r.field) }
            .to_str()
            .unwrap()
            .to_string();
        assert_eq!(r.resv, 0);
        m.entry(t).or_default().push((f, r.offset, r.size, r.align));
    }
    // SAFETY: the row after the last one is the terminator.
    assert!(unsafe { (*rows.add(cnt)).r#type }.is_null());
    m
}

#[test]
fn every_struct_matches_the_c_layout() {
    let c = c_side();
    let rust = rust_side();
    let mut bad = Vec::new();
    for (t, rows) in &c {
        match rust.get(t) {
            None => bad.push(format!(
                "{}: in the library's table, no Rust counterpart",
                t
            )),
            Some(r) if r != rows => bad.push(format!("{}:\n  C    {:?}\n  Rust {:?}", t, rows, r)),
            Some(_) => {}
        }
    }
    for t in rust.keys() {
        if !c.contains_key(t) {
            bad.push(format!(
                "{}: declared in Rust, not in the library's table",
                t
            ));
        }
    }
    assert!(bad.is_empty(), "layout mismatches:\n{}", bad.join("\n"));
    assert!(c.len() >= 28, "only {} structs in the table", c.len());
}

#[test]
fn a_wrong_declaration_would_be_caught() {
    // The comparison is not vacuous: a struct with a member moved differs.
    #[repr(C)]
    struct iour_insn {
        code: u16,
        k: u32,
        jt: u8,
        jf: u8,
    }
    let _ = |i: iour_insn| (i.code, i.k, i.jt, i.jf);
    let wrong = rust_layouts! { iour_insn { code, jt, jf, k } };
    assert_ne!(wrong["iour_insn"], c_side()["iour_insn"]);
}
