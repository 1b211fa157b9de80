/* SPDX-License-Identifier: MIT */
/*
 * The public structs and their members, in header order, as an X-macro:
 * S(tag) names a struct, F(tag, member) one of its members.  lib/layout.c
 * expands it into the table iour_abi_layout() returns; tests/unit/test_layout.c
 * expands it again and checks it against the headers both ways (a struct or
 * member added to a public header and missing here fails that test).
 */
#ifndef IOUR_LAYOUT_LIST_H
#define IOUR_LAYOUT_LIST_H

/* clang-format off */
#define IOUR_LAYOUT_LIST(S, F) \
	S(iour_insn) \
	F(iour_insn, code) \
	F(iour_insn, jt) \
	F(iour_insn, jf) \
	F(iour_insn, k) \
	S(iour_validate_info) \
	F(iour_validate_info, sz) \
	F(iour_validate_info, insn) \
	F(iour_validate_info, reason) \
	S(iour_sim_result) \
	F(iour_sim_result, sz) \
	F(iour_sim_result, retval) \
	F(iour_sim_result, executed) \
	F(iour_sim_result, allowed) \
	F(iour_sim_result, pad) \
	S(iour_companion_opts) \
	F(iour_companion_opts, sz) \
	F(iour_companion_opts, flags) \
	F(iour_companion_opts, errno_value) \
	S(iour_cmp) \
	F(iour_cmp, sz) \
	F(iour_cmp, field) \
	F(iour_cmp, op) \
	F(iour_cmp, value) \
	F(iour_cmp, arg) \
	F(iour_cmp, set) \
	F(iour_cmp, set_len) \
	F(iour_cmp, addr6) \
	S(iour_filter_opts) \
	F(iour_filter_opts, sz) \
	F(iour_filter_opts, default_verdict) \
	F(iour_filter_opts, flags) \
	S(iour_filter_opinfo) \
	F(iour_filter_opinfo, sz) \
	F(iour_filter_opinfo, nrules) \
	F(iour_filter_opinfo, flags) \
	F(iour_filter_opinfo, default_verdict) \
	F(iour_filter_opinfo, raw_cnt) \
	S(iour_compile_opts) \
	F(iour_compile_opts, sz) \
	F(iour_compile_opts, flags) \
	F(iour_compile_opts, max_insns) \
	S(iour_layout_field) \
	F(iour_layout_field, type) \
	F(iour_layout_field, field) \
	F(iour_layout_field, offset) \
	F(iour_layout_field, size) \
	F(iour_layout_field, align) \
	F(iour_layout_field, resv) \
	S(iour_plan_opts) \
	F(iour_plan_opts, sz) \
	F(iour_plan_opts, flags) \
	F(iour_plan_opts, level) \
	F(iour_plan_opts, features) \
	S(iour_plan_info) \
	F(iour_plan_info, sz) \
	F(iour_plan_info, target) \
	F(iour_plan_info, level) \
	F(iour_plan_info, op_last) \
	F(iour_plan_info, reg_last) \
	F(iour_plan_info, split_gates) \
	F(iour_plan_info, flags) \
	F(iour_plan_info, task_steps) \
	F(iour_plan_info, ring_steps) \
	S(iour_plan_step) \
	F(iour_plan_step, sz) \
	F(iour_plan_step, side) \
	F(iour_plan_step, op) \
	F(iour_plan_step, call_op) \
	F(iour_plan_step, nr_args) \
	F(iour_plan_step, opcode) \
	F(iour_plan_step, arg_len) \
	F(iour_plan_step, insn_cnt) \
	F(iour_plan_step, entries) \
	S(iour_apply_opts) \
	F(iour_apply_opts, sz) \
	F(iour_apply_opts, flags) \
	S(iour_policy_opts) \
	F(iour_policy_opts, sz) \
	F(iour_policy_opts, flags) \
	S(iour_features) \
	F(iour_features, sz) \
	F(iour_features, level) \
	F(iour_features, kernel_level) \
	F(iour_features, flags) \
	F(iour_features, io_uring) \
	F(iour_features, setup_err) \
	F(iour_features, sysctl_disabled) \
	F(iour_features, sysctl_group) \
	F(iour_features, seccomp_mode) \
	F(iour_features, no_new_privs) \
	F(iour_features, ring_restrictions) \
	F(iour_features, r_disabled_err) \
	F(iour_features, ring_register_err) \
	F(iour_features, enable_rings_err) \
	F(iour_features, op_last) \
	F(iour_features, reg_last) \
	F(iour_features, limits_source) \
	F(iour_features, split_gates) \
	F(iour_features, query) \
	F(iour_features, query_err) \
	F(iour_features, nr_query_opcodes) \
	F(iour_features, probe) \
	F(iour_features, feature_flags) \
	F(iour_features, setup_flags) \
	F(iour_features, enter_flags) \
	F(iour_features, sqe_flags) \
	F(iour_features, probe_err) \
	F(iour_features, probe_last_op) \
	F(iour_features, nr_supported_ops) \
	F(iour_features, blind_register) \
	F(iour_features, supported_ops) \
	F(iour_features, task_restrictions) \
	F(iour_features, task_restrictions_err) \
	F(iour_features, bpf_ring) \
	F(iour_features, bpf_ring_err) \
	F(iour_features, bpf_task) \
	F(iour_features, bpf_task_err) \
	F(iour_features, pdu_socket) \
	F(iour_features, pdu_openat) \
	F(iour_features, pdu_openat2) \
	F(iour_features, pdu_connect) \
	F(iour_features, child_signal) \
	F(iour_features, pad) \
	S(iour_probe_opts) \
	F(iour_probe_opts, sz) \
	F(iour_probe_opts, flags) \
	S(iour_decision) \
	F(iour_decision, sz) \
	F(iour_decision, kind) \
	F(iour_decision, reason) \
	F(iour_decision, opcode) \
	F(iour_decision, step) \
	F(iour_decision, value) \
	F(iour_decision, pad) \
	F(iour_decision, text) \
	S(iour_ring_report) \
	F(iour_ring_report, sz) \
	F(iour_ring_report, registered) \
	F(iour_ring_report, enabled) \
	F(iour_ring_report, nr_entries) \
	F(iour_ring_report, op_last) \
	F(iour_ring_report, reg_last) \
	F(iour_ring_report, split_gates) \
	F(iour_ring_report, n_clamped_sqe_ops) \
	F(iour_ring_report, n_clamped_register_ops) \
	F(iour_ring_report, clamped_sqe_ops) \
	F(iour_ring_report, clamped_register_ops) \
	S(iour_ring_apply_opts) \
	F(iour_ring_apply_opts, sz) \
	F(iour_ring_apply_opts, flags) \
	F(iour_ring_apply_opts, report) \
	S(iour_ring_create_opts) \
	F(iour_ring_create_opts, sz) \
	F(iour_ring_create_opts, flags) \
	F(iour_ring_create_opts, report) \
	S(iour_ruleset_opts) \
	F(iour_ruleset_opts, sz) \
	F(iour_ruleset_opts, flags) \
	S(iour_restriction) \
	F(iour_restriction, opcode) \
	F(iour_restriction, arg) \
	F(iour_restriction, resv) \
	F(iour_restriction, resv2) \
	S(iour_clamp_report) \
	F(iour_clamp_report, sz) \
	F(iour_clamp_report, n_sqe_ops) \
	F(iour_clamp_report, n_register_ops) \
	F(iour_clamp_report, sqe_ops) \
	F(iour_clamp_report, register_ops) \
	S(iour_export_opts) \
	F(iour_export_opts, sz) \
	F(iour_export_opts, kver) \
	F(iour_export_opts, op_last) \
	F(iour_export_opts, reg_last) \
	F(iour_export_opts, flags) \
	F(iour_export_opts, clamp) \
	S(iour_verify_req) \
	F(iour_verify_req, sz) \
	F(iour_verify_req, opcode) \
	F(iour_verify_req, expect) \
	F(iour_verify_req, sqe_flags) \
	F(iour_verify_req, family) \
	F(iour_verify_req, type) \
	F(iour_verify_req, protocol) \
	F(iour_verify_req, open_flags) \
	F(iour_verify_req, open_mode) \
	F(iour_verify_req, open_resolve) \
	F(iour_verify_req, path) \
	F(iour_verify_req, addr) \
	F(iour_verify_req, addrlen) \
	F(iour_verify_req, resv) \
	S(iour_verify_result) \
	F(iour_verify_result, res) \
	F(iour_verify_result, status) \
	F(iour_verify_result, observed) \
	F(iour_verify_result, resv) \
	S(iour_verify_coverage) \
	F(iour_verify_coverage, sz) \
	F(iour_verify_coverage, flags) \
	F(iour_verify_coverage, op_last) \
	F(iour_verify_coverage, n_allowed) \
	F(iour_verify_coverage, n_tried) \
	F(iour_verify_coverage, n_untried) \
	F(iour_verify_coverage, n_unpreparable) \
	F(iour_verify_coverage, allowed) \
	F(iour_verify_coverage, tried) \
	F(iour_verify_coverage, untried) \
	F(iour_verify_coverage, unpreparable) \
	F(iour_verify_coverage, denied_tried) \
	S(iour_verify_opts) \
	F(iour_verify_opts, sz) \
	F(iour_verify_opts, flags) \
	F(iour_verify_opts, ring_fd) \
	F(iour_verify_opts, ring_flags) \
	F(iour_verify_opts, timeout_ms) \
	F(iour_verify_opts, exec_path) \
	F(iour_verify_opts, exec_argv) \
	F(iour_verify_opts, exec_envp) \
	F(iour_verify_opts, ruleset) \
	F(iour_verify_opts, coverage)

/* clang-format on */

#endif /* IOUR_LAYOUT_LIST_H */
