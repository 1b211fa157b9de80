# SPDX-License-Identifier: MIT
"""Loading the shared library, the struct declarations, every foreign
function's argtypes/restype, and the layout check against
iour_abi_layout()."""
import ctypes
import os
from ctypes import (POINTER, Structure, c_char, c_char_p, c_int, c_int32, c_size_t,
                    c_uint, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p)

from .errors import LayoutError

SONAME = "libiouring-restrict.so.1"
ENV = "IOURING_RESTRICT_LIBRARY"

u8, u16, u32, u64, i32, sz = c_uint8, c_uint16, c_uint32, c_uint64, c_int32, c_size_t


def _s(name, fields):
    return type(name, (Structure,), {"_fields_": fields})


# The public structs, field for field as in include/iouring_restrict/*.h.
STRUCTS = {}


def _decl(tag, fields):
    cls = _s(tag, fields)
    STRUCTS[tag] = cls
    return cls


iour_insn = _decl("iour_insn", [("code", u16), ("jt", u8), ("jf", u8), ("k", u32)])
iour_validate_info = _decl("iour_validate_info", [("sz", sz), ("insn", u32), ("reason", u32)])
iour_sim_result = _decl("iour_sim_result", [("sz", sz), ("retval", u32), ("executed", u32),
                                            ("allowed", u32), ("pad", u32)])
iour_companion_opts = _decl("iour_companion_opts", [("sz", sz), ("flags", u32),
                                                    ("errno_value", u32)])
iour_broker_event = _decl("iour_broker_event", [("sz", sz), ("pid", c_int), ("entries", u32),
                                                ("setup_flags", u32), ("result", c_int),
                                                ("what", c_char_p)])
BROKER_ON_RING = ctypes.CFUNCTYPE(None, c_void_p, POINTER(iour_broker_event))
iour_broker_opts = _decl("iour_broker_opts", [("sz", sz), ("flags", u32),
                                              ("on_ring", BROKER_ON_RING), ("arg", c_void_p),
                                              ("deadline_ms", u32), ("max_workers", u32),
                                              ("process_workers", u32), ("max_rings", u32)])
iour_broker_counters = _decl("iour_broker_counters", [
    ("sz", sz), ("notifications", u64), ("served", u64), ("refused", u64),
    ("refused_flags", u64), ("refused_kernel", u64), ("refused_memory", u64), ("gone", u64),
    ("refused_deadline", u64), ("refused_busy", u64), ("refused_accounting", u64),
    ("deferred", u64), ("refused_quota", u64)])
iour_cmp = _decl("iour_cmp", [("sz", sz), ("field", u32), ("op", u32), ("value", u64),
                              ("arg", u64), ("set", POINTER(u64)), ("set_len", u64),
                              ("addr6", u8 * 16)])
iour_rule_error = _decl("iour_rule_error", [("sz", sz), ("pos", sz), ("message", c_char * 256)])
iour_filter_opts = _decl("iour_filter_opts", [("sz", sz), ("default_verdict", u32),
                                              ("flags", u32)])
iour_filter_opinfo = _decl("iour_filter_opinfo", [("sz", sz), ("nrules", u32), ("flags", u32),
                                                  ("default_verdict", u32), ("raw_cnt", u32)])
iour_compile_opts = _decl("iour_compile_opts", [("sz", sz), ("flags", u32), ("max_insns", u32)])
iour_layout_field = _decl("iour_layout_field", [("type", c_char_p), ("field", c_char_p),
                                                ("offset", u32), ("size", u32), ("align", u32),
                                                ("resv", u32)])
iour_features = _decl("iour_features", [
    ("sz", sz), ("level", u32), ("kernel_level", u32), ("flags", u64), ("io_uring", u32),
    ("setup_err", i32), ("sysctl_disabled", i32), ("sysctl_group", i32), ("seccomp_mode", i32),
    ("no_new_privs", i32), ("ring_restrictions", u32), ("r_disabled_err", i32),
    ("ring_register_err", i32), ("enable_rings_err", i32), ("op_last", u32), ("reg_last", u32),
    ("limits_source", u32), ("split_gates", u32), ("query", u32), ("query_err", i32),
    ("nr_query_opcodes", u32), ("probe", u32), ("feature_flags", u64), ("setup_flags", u64),
    ("enter_flags", u64), ("sqe_flags", u64), ("probe_err", i32), ("probe_last_op", u32),
    ("nr_supported_ops", u32), ("blind_register", u32), ("supported_ops", u64 * 4),
    ("task_restrictions", u32), ("task_restrictions_err", i32), ("bpf_ring", u32),
    ("bpf_ring_err", i32), ("bpf_task", u32), ("bpf_task_err", i32), ("pdu_socket", u32),
    ("pdu_openat", u32), ("pdu_openat2", u32), ("pdu_connect", u32), ("child_signal", i32),
    ("pad", u32), ("pdu_size", u8 * 256)])
iour_plan_opts = _decl("iour_plan_opts", [("sz", sz), ("flags", u32), ("level", u32),
                                          ("features", POINTER(iour_features))])
iour_plan_info = _decl("iour_plan_info", [("sz", sz), ("target", u32), ("level", u32),
                                          ("op_last", u32), ("reg_last", u32),
                                          ("split_gates", u32), ("flags", u32),
                                          ("task_steps", u32), ("ring_steps", u32)])
iour_plan_step = _decl("iour_plan_step", [("sz", sz), ("side", u32), ("op", u32),
                                          ("call_op", u32), ("nr_args", u32), ("opcode", u32),
                                          ("arg_len", u32), ("insn_cnt", u32), ("entries", u32)])
iour_apply_opts = _decl("iour_apply_opts", [("sz", sz), ("flags", u64)])
iour_policy_opts = _decl("iour_policy_opts", [("sz", sz), ("flags", u64)])
iour_probe_opts = _decl("iour_probe_opts", [("sz", sz), ("flags", u64)])
iour_decision = _decl("iour_decision", [("sz", sz), ("kind", u32), ("reason", u32),
                                        ("opcode", u32), ("step", u32), ("value", i32),
                                        ("pad", u32), ("text", c_char_p)])
iour_ring_report = _decl("iour_ring_report", [
    ("sz", sz), ("registered", u32), ("enabled", u32), ("nr_entries", u32), ("op_last", u32),
    ("reg_last", u32), ("split_gates", u32), ("n_clamped_sqe_ops", u32),
    ("n_clamped_register_ops", u32), ("clamped_sqe_ops", u64 * 4),
    ("clamped_register_ops", u64 * 4)])
iour_ring_apply_opts = _decl("iour_ring_apply_opts", [("sz", sz), ("flags", u64),
                                                      ("report", POINTER(iour_ring_report))])
iour_ring_create_opts = _decl("iour_ring_create_opts", [("sz", sz), ("flags", u64),
                                                        ("report", POINTER(iour_ring_report))])
iour_ruleset_opts = _decl("iour_ruleset_opts", [("sz", sz), ("flags", u64)])
iour_restriction = _decl("iour_restriction", [("opcode", u16), ("arg", u8), ("resv", u8),
                                              ("resv2", u32 * 3)])
iour_clamp_report = _decl("iour_clamp_report", [("sz", sz), ("n_sqe_ops", u32),
                                                ("n_register_ops", u32), ("sqe_ops", u64 * 4),
                                                ("register_ops", u64 * 4)])
iour_export_opts = _decl("iour_export_opts", [("sz", sz), ("kver", u32), ("op_last", u32),
                                              ("reg_last", u32), ("flags", u32),
                                              ("clamp", POINTER(iour_clamp_report))])
iour_verify_req = _decl("iour_verify_req", [
    ("sz", sz), ("opcode", u32), ("expect", u32), ("sqe_flags", u32), ("family", i32),
    ("type", i32), ("protocol", i32), ("open_flags", u64), ("open_mode", u64),
    ("open_resolve", u64), ("path", c_char_p), ("addr", c_void_p), ("addrlen", u32),
    ("resv", u32)])
iour_verify_result = _decl("iour_verify_result", [("res", i32), ("status", u32),
                                                  ("observed", u32), ("resv", u32)])
iour_verify_coverage = _decl("iour_verify_coverage", [
    ("sz", sz), ("flags", u32), ("op_last", u32), ("n_allowed", u32), ("n_tried", u32),
    ("n_untried", u32), ("n_unpreparable", u32), ("allowed", u64 * 4), ("tried", u64 * 4),
    ("untried", u64 * 4), ("unpreparable", u64 * 4), ("denied_tried", u64 * 4)])
iour_verify_opts = _decl("iour_verify_opts", [
    ("sz", sz), ("flags", u32), ("ring_fd", i32), ("ring_flags", u32), ("timeout_ms", u32),
    ("exec_path", c_char_p), ("exec_argv", POINTER(c_char_p)),
    ("exec_envp", POINTER(c_char_p)), ("ruleset", c_void_p),
    ("coverage", POINTER(iour_verify_coverage))])
iour_policy_load_opts = _decl("iour_policy_load_opts", [("sz", sz), ("flags", u64),
                                                        ("origin", c_char_p), ("kernel", u32),
                                                        ("reserved", u32)])
iour_load_error = _decl("iour_load_error", [("sz", sz), ("line", u32), ("column", u32),
                                            ("offset", u64), ("path", c_char * 128),
                                            ("message", c_char * 256)])
iour_request_verdict = _decl("iour_request_verdict", [("sz", sz), ("verdict", u32),
                                                      ("reason", u32), ("opcode", u32),
                                                      ("rule", u32)])
iour_group_info = _decl("iour_group_info", [("sz", sz), ("name", c_char_p), ("help", c_char_p),
                                            ("source", c_char_p), ("nops", u32),
                                            ("nregister_ops", u32)])
iour_payload_info = _decl("iour_payload_info", [("sz", sz), ("group", c_char_p), ("opcode", u32),
                                                ("pdu_size", u32), ("level", u32),
                                                ("since", u32)])
iour_field_info = _decl("iour_field_info", [("sz", sz), ("name", c_char_p), ("group", c_char_p),
                                            ("prefix", c_char_p), ("mask", u64),
                                            ("valid", u64), ("id", u32), ("kind", u32),
                                            ("offset", u32), ("size", u32), ("order", u32)])
iour_const_info = _decl("iour_const_info", [("sz", sz), ("name", c_char_p), ("ns", c_char_p),
                                            ("value", u64), ("since", u32)])


_INT_TYPES = (c_uint8, c_uint16, c_uint32, c_uint64, c_int32, c_int, c_uint, c_size_t,
              ctypes.c_int64, ctypes.c_long, ctypes.c_ulong)


def int_range(ctype):
    """(lowest, highest) value of an integer ctypes type, or None for any
    other type."""
    if ctype not in _INT_TYPES:
        return None
    bits = 8 * ctypes.sizeof(ctype)
    if ctype(-1).value < 0:
        return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    return (0, (1 << bits) - 1)


def check_int(ctype, v, what):
    """``v`` if it is an int that ``ctype`` holds exactly: ctypes would
    silently truncate 2**32+22 to 22.  TypeError for a non-int (bool
    included), OverflowError outside the range."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError("%s must be an int, not %s" % (what, type(v).__name__))
    lo, hi = int_range(ctype)
    if not lo <= v <= hi:
        raise OverflowError("%s %d is out of range [%d, %d]" % (what, v, lo, hi))
    return int(v)


def set_field(o, name, v):
    """Sets an integer field of a struct after checking its range."""
    t = dict(type(o)._fields_)[name]
    if int_range(t) is not None:
        v = check_int(t, v, name)
    setattr(o, name, v)


def opts(cls, **kw):
    """An options struct with ``sz`` set and every other byte zero; each
    integer field given is range-checked (check_int)."""
    o = cls()
    ctypes.memset(ctypes.byref(o), 0, ctypes.sizeof(o))
    if "sz" in dict(cls._fields_):
        o.sz = ctypes.sizeof(cls)
    for k, v in kw.items():
        set_field(o, k, v)
    return o


# ---- loading
def _build_tree_candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    # bindings/python/iouring_restrict -> the repository's build/, only
    # where that is a source tree (an installed copy's parents are not)
    root = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    if os.path.isfile(os.path.join(root, "lib", "libiouring-restrict.map")):
        yield os.path.join(root, "build", SONAME)


def find_library():
    """The path or name the library is loaded from: $IOURING_RESTRICT_LIBRARY
    if set; else the SONAME (the loader's search path); else the build tree
    this package sits in (bindings/python/ of a built source tree)."""
    env = os.environ.get(ENV)
    if env:
        return [env]
    return [SONAME] + list(_build_tree_candidates())


def load():
    tried = []
    for cand in find_library():
        try:
            return ctypes.CDLL(cand, use_errno=True)
        except OSError as e:
            # dlopen's text already starts with the name it was given
            why = str(e)
            if why.startswith(cand + ": "):
                why = why[len(cand) + 2:]
            if os.environ.get(ENV):
                where = "%s=%s" % (ENV, cand)
            elif cand == SONAME:
                where = "%s through the loader's search path" % SONAME
            else:
                where = "the source tree's build: %s" % cand
            tried.append("  %s: %s" % (where, why))
    raise ImportError(
        "cannot load libiouring-restrict (the C library these bindings call).\n"
        "Tried:\n%s\n"
        "Install it (make install, or the distribution's package), or point to it:\n"
        "  %s=/path/to/%s   (the file itself)\n"
        "  LD_LIBRARY_PATH=/path/to/its/directory   (the loader's search path)"
        % ("\n".join(tried), ENV, SONAME))


# ---- the foreign functions: name -> (restype, argtypes)
V = None  # void
P = c_void_p  # opaque handles are replaced by checked types in api.py
FUNCS = {
    # version, errors
    "iour_version_major": (c_uint, []),
    "iour_version_minor": (c_uint, []),
    "iour_version_patch": (c_uint, []),
    "iour_version_string": (c_char_p, []),
    "iour_strerror": (c_int, [c_int, c_char_p, c_size_t]),
    "iour_strerror_desc": (c_char_p, [c_int]),
    "iour_errname": (c_char_p, [c_int]),
    "iour_errdetail": (c_char_p, [c_char_p, c_int]),
    "iour_abi_layout": (POINTER(iour_layout_field), [POINTER(c_size_t)]),
    # names
    "iour_opcode_from_name": (c_int, [c_char_p]),
    "iour_opcode_name": (c_char_p, [u32]),
    "iour_opcode_since": (c_int, [u32]),
    "iour_opcode_last": (c_int, [u32]),
    "iour_opcodes_up_to": (c_int, [u32, POINTER(u32), c_size_t]),
    "iour_opcode_forces_async": (c_int, [u32]),
    "iour_register_op_from_name": (c_int, [c_char_p]),
    "iour_register_op_name": (c_char_p, [u32]),
    "iour_register_op_since": (c_int, [u32]),
    "iour_register_op_last": (c_int, [u32]),
    "iour_register_ops_up_to": (c_int, [u32, POINTER(u32), c_size_t]),
    "iour_sqe_flag_from_name": (c_int, [c_char_p]),
    "iour_name_suggest": (c_char_p, [u32, c_char_p]),
    "iour_sqe_flag_name": (c_char_p, [u32]),
    "iour_sqe_flag_since": (c_int, [u32]),
    "iour_sqe_flags_up_to": (c_int, [u32]),
    # cBPF
    "iour_cbpf_validate": (c_int, [POINTER(iour_insn), c_size_t, u32,
                                   POINTER(iour_validate_info)]),
    "iour_cbpf_reject_str": (c_char_p, [u32]),
    "iour_cbpf_run": (c_int, [POINTER(iour_insn), c_size_t, POINTER(u8), c_size_t,
                              POINTER(iour_sim_result)]),
    "iour_ctx_generic": (c_int, [POINTER(u8), c_size_t, u32, u32, u64]),
    "iour_ctx_socket": (c_int, [POINTER(u8), c_size_t, u32, u32, u32]),
    "iour_ctx_open": (c_int, [POINTER(u8), c_size_t, u64, u64, u64]),
    "iour_ctx_connect": (c_int, [POINTER(u8), c_size_t, c_void_p, u32]),
    "iour_cbpf_disasm": (c_int, [POINTER(iour_insn), c_size_t, u32, u32, c_char_p,
                                 POINTER(c_size_t)]),
    # companion, threads, ring fds
    "iour_companion_install": (c_int, [POINTER(iour_companion_opts)]),
    "iour_companion_program": (c_int, [POINTER(iour_companion_opts), POINTER(iour_insn),
                                       c_size_t]),
    "iour_task_thread_count": (c_int, []),
    "iour_ring_fds": (c_int, [POINTER(c_int), c_size_t]),
    "iour_ring_fds_close": (c_int, [u32]),
    # ring broker
    "iour_broker__install": (c_int, [POINTER(iour_broker_opts), POINTER(c_int)]),
    "iour_broker__new": (c_int, ["plan", c_int, POINTER(iour_broker_opts), POINTER(c_void_p)]),
    "iour_broker__fd": (c_int, ["broker"]),
    "iour_broker__serve": (c_int, ["broker"]),
    "iour_broker__counters": (c_int, ["broker", POINTER(iour_broker_counters)]),
    "iour_broker__free": (V, ["broker"]),
    # filter
    "iour_filter__new": (c_int, [POINTER(iour_filter_opts), POINTER(c_void_p)]),
    "iour_filter__free": (V, ["filter"]),
    "iour_filter__dup": (c_int, ["filter", POINTER(c_void_p)]),
    "iour_filter__add_rule": (c_int, ["filter", u32, u32, POINTER(iour_cmp), c_size_t]),
    "iour_filter__set_default": (c_int, ["filter", u32, u32]),
    "iour_filter__set_raw": (c_int, ["filter", u32, POINTER(iour_insn), c_size_t]),
    "iour_filter__opcodes": (c_int, ["filter", POINTER(u32), c_size_t]),
    "iour_filter__opcode_info": (c_int, ["filter", u32, POINTER(iour_filter_opinfo)]),
    "iour_filter__compile": (c_int, ["filter", u32, POINTER(iour_compile_opts),
                                     POINTER(c_void_p)]),
    "iour_prog__insns": (POINTER(iour_insn), ["prog"]),
    "iour_prog__insn_cnt": (c_size_t, ["prog"]),
    "iour_prog__opcode": (u32, ["prog"]),
    "iour_prog__kind": (u32, ["prog"]),
    "iour_prog__pdu_size": (u32, ["prog"]),
    "iour_prog__free": (V, ["prog"]),
    # policy, plan, report
    "iour_policy__new": (c_int, [POINTER(iour_policy_opts), POINTER(c_void_p)]),
    "iour_policy__free": (V, ["policy"]),
    "iour_policy__dup": (c_int, ["policy", POINTER(c_void_p)]),
    "iour_policy__set_ruleset": (c_int, ["policy", "ruleset"]),
    "iour_policy__get_ruleset": (c_int, ["policy", POINTER(c_void_p)]),
    "iour_policy__set_filter": (c_int, ["policy", "filter"]),
    "iour_policy__set_prog": (c_int, ["policy", u32, POINTER(iour_insn), c_size_t, u32]),
    "iour_policy__set_attr": (c_int, ["policy", u32, u32]),
    "iour_policy__get_attr": (c_int, ["policy", u32, POINTER(u32)]),
    "iour_policy__prog_cnt": (c_int, ["policy", u32]),
    "iour_policy_attr_bounds": (c_int, [u32, POINTER(u32), POINTER(u32), POINTER(u32)]),
    "iour_policy__plan": (c_int, ["policy", POINTER(iour_plan_opts), POINTER(c_void_p)]),
    "iour_plan__free": (V, ["plan"]),
    "iour_plan__info": (c_int, ["plan", POINTER(iour_plan_info)]),
    "iour_plan__step_cnt": (c_int, ["plan"]),
    "iour_plan__step": (c_int, ["plan", c_size_t, POINTER(iour_plan_step)]),
    "iour_plan__step_arg": (c_int, ["plan", c_size_t, c_void_p, POINTER(c_size_t)]),
    "iour_plan__get_ruleset": (c_int, ["plan", u32, POINTER(c_void_p)]),
    "iour_plan__step_insns": (c_int, ["plan", c_size_t, POINTER(iour_insn),
                                      POINTER(c_size_t)]),
    "iour_plan__describe": (c_int, ["plan", c_char_p, POINTER(c_size_t)]),
    "iour_plan__report": (c_void_p, ["plan"]),
    "iour_plan__apply_task": (c_int, ["plan", POINTER(iour_apply_opts), POINTER(c_void_p)]),
    "iour_plan__apply_ring": (c_int, ["plan", c_int, POINTER(iour_apply_opts),
                                      POINTER(c_void_p)]),
    "iour_plan__create_ring": (c_int, ["plan", u32, c_void_p, POINTER(iour_apply_opts),
                                       POINTER(c_int), POINTER(c_void_p)]),
    "iour_report__free": (V, [c_void_p]),
    "iour_report__status": (c_int, [c_void_p]),
    "iour_report__mechanism": (c_int, [c_void_p]),
    "iour_report__flags": (c_int, [c_void_p]),
    "iour_report__steps": (c_int, [c_void_p, POINTER(u32), POINTER(u32)]),
    "iour_report__error": (c_int, [c_void_p, POINTER(i32)]),
    "iour_report__threads": (c_int, [c_void_p]),
    "iour_report__decision_cnt": (c_int, [c_void_p]),
    "iour_report__decision": (c_int, [c_void_p, c_size_t, POINTER(iour_decision)]),
    "iour_report__describe": (c_int, [c_void_p, c_char_p, POINTER(c_size_t)]),
    "iour_status_str": (c_char_p, [c_int]),
    "iour_decision_kind_str": (c_char_p, [u32]),
    "iour_reason_str": (c_char_p, [u32]),
    # probe
    "iour_probe": (c_int, [POINTER(iour_probe_opts), POINTER(iour_features)]),
    "iour_feature_level": (c_int, []),
    "iour_feature_level_str": (c_char_p, [c_int]),
    "iour_avail_str": (c_char_p, [u32]),
    "iour_kernel_describe": (c_int, [u32, POINTER(iour_features)]),
    "iour_kernel_generation": (c_int, [u32]),
    "iour_level_kernel": (c_int, [u32]),
    "iour_kernel_split_gates": (c_int, [u32]),
    # rule front end
    "iour_rule_field": (c_int, [c_char_p, u32, POINTER(u32), POINTER(iour_rule_error)]),
    "iour_rule_op": (c_int, [c_char_p, POINTER(u32)]),
    "iour_rule_value": (c_int, [c_char_p, u32, POINTER(iour_cmp), POINTER(iour_rule_error)]),
    "iour_rule_prefix": (c_int, [c_char_p, u32, POINTER(iour_cmp), POINTER(iour_rule_error)]),
    "iour_rule_parse": (c_int, [c_char_p, u32, POINTER(c_void_p), POINTER(iour_rule_error)]),
    "iour_rule_cmps": (c_int, [c_void_p, POINTER(POINTER(iour_cmp))]),
    "iour_rule_warning": (c_char_p, [c_void_p]),
    "iour_rule_free": (V, [c_void_p]),
    "iour_rule_ctx": (c_int, [c_char_p, u32, POINTER(u8), c_size_t, POINTER(iour_rule_error)]),
    # ring
    "iour_ring_apply": (c_int, [c_int, "ruleset", POINTER(iour_ring_apply_opts)]),
    "iour_ring_enable": (c_int, [c_int]),
    "iour_ring_create": (c_int, [u32, c_void_p, "ruleset", POINTER(iour_ring_create_opts),
                                 POINTER(c_int)]),
    # ruleset
    "iour_ruleset__new": (c_int, [POINTER(iour_ruleset_opts), POINTER(c_void_p)]),
    "iour_ruleset__free": (V, ["ruleset"]),
    "iour_ruleset__dup": (c_int, ["ruleset", POINTER(c_void_p)]),
    "iour_ruleset__allow_sqe_op": (c_int, ["ruleset", u32]),
    "iour_ruleset__allow_sqe_op_name": (c_int, ["ruleset", c_char_p]),
    "iour_ruleset__allow_register_op": (c_int, ["ruleset", u32]),
    "iour_ruleset__allow_register_op_name": (c_int, ["ruleset", c_char_p]),
    "iour_ruleset__deny_all_sqe_ops": (c_int, ["ruleset"]),
    "iour_ruleset__deny_all_register_ops": (c_int, ["ruleset"]),
    "iour_ruleset__set_sqe_flags": (c_int, ["ruleset", u32, u32]),
    "iour_ruleset__sqe_op_allowed": (c_int, ["ruleset", u32]),
    "iour_ruleset__register_op_allowed": (c_int, ["ruleset", u32]),
    "iour_ruleset__sqe_restricted": (c_int, ["ruleset"]),
    "iour_ruleset__register_restricted": (c_int, ["ruleset"]),
    "iour_ruleset__sqe_flags": (c_int, ["ruleset", POINTER(u32), POINTER(u32)]),
    "iour_ruleset__export": (c_int, ["ruleset", POINTER(iour_export_opts), c_void_p,
                                     POINTER(c_size_t)]),
    # policy files (policyfile.h)
    "iour_policy__load_json": (c_int, [c_char_p, c_size_t, POINTER(iour_policy_load_opts),
                                       POINTER(c_void_p), POINTER(iour_load_error)]),
    "iour_policy__load_file": (c_int, [c_char_p, POINTER(iour_policy_load_opts),
                                       POINTER(c_void_p), POINTER(iour_load_error)]),
    "iour_policy__save_json": (c_int, ["policy", u64, c_char_p, c_size_t]),
    "iour_policy__decide": (c_int, ["policy", POINTER(u8), c_size_t,
                                    POINTER(iour_request_verdict)]),
    "iour_group_count": (c_int, []),
    "iour_group_get": (c_int, [c_size_t, POINTER(iour_group_info)]),
    "iour_group_find": (c_int, [c_char_p]),
    "iour_payload_count": (c_int, []),
    "iour_payload_get": (c_int, [c_size_t, POINTER(iour_payload_info)]),
    "iour_payload_find": (c_int, [u32]),
    "iour_field_count": (c_int, []),
    "iour_field_get": (c_int, [c_size_t, POINTER(iour_field_info)]),
    "iour_field_find": (c_int, [c_char_p]),
    "iour_field_index": (c_int, [u32]),
    "iour_field_applies": (c_int, [u32, u32]),
    "iour_const_count": (c_int, []),
    "iour_const_get": (c_int, [c_size_t, POINTER(iour_const_info)]),
    "iour_const_find": (c_int, [c_char_p]),
    "iour_group_opcodes": (c_int, [c_size_t, u32, POINTER(u32), c_size_t]),
    "iour_group_register_ops": (c_int, [c_size_t, u32, POINTER(u32), c_size_t]),
    # enforcement check
    "iour_verify": (c_int, [POINTER(iour_verify_req), c_size_t, POINTER(iour_verify_result),
                            POINTER(iour_verify_opts)]),
    "iour_verify_serve": (c_int, []),
}


def declare(lib, handle_types):
    """Sets argtypes/restype of every function of FUNCS on ``lib``; a string
    in an argtypes list names a handle type of ``handle_types`` (a ctypes
    type whose from_param accepts only that handle)."""
    for name, (res, args) in FUNCS.items():
        try:
            f = getattr(lib, name)
        except AttributeError:
            raise ImportError("libiouring-restrict lacks %s: the library is older than "
                              "these bindings (1.1)" % name) from None
        f.restype = res
        f.argtypes = [handle_types[a] if isinstance(a, str) else a for a in args]


# ---- layout check
def layout_table(lib):
    """The rows of iour_abi_layout() as (type, field, offset, size, align)."""
    cnt = c_size_t(0)
    t = lib.iour_abi_layout(ctypes.byref(cnt))
    rows = []
    for i in range(cnt.value):
        r = t[i]
        rows.append((r.type.decode(), r.field.decode(), r.offset, r.size, r.align))
    return rows


def check_layout(rows, structs=None):
    """Raises LayoutError unless every struct of ``structs`` (default: all
    declared here) matches ``rows``: every declared member at the C offset
    with the C size; the struct's size equal (or, for an options struct
    starting with ``sz``, the C struct may be larger: a newer library) and
    its alignment equal.  Returns the number of members checked."""
    structs = STRUCTS if structs is None else structs
    by_type = {}
    for t, f, off, size, align in rows:
        by_type.setdefault(t, {})[f] = (off, size, align)
    n = 0
    for tag, cls in structs.items():
        c = by_type.get(tag)
        if c is None or "" not in c:
            raise LayoutError("struct %s: not in the library's layout table" % tag)
        _, csize, calign = c[""]
        for name, _ in cls._fields_:
            if name not in c:
                raise LayoutError("struct %s: the library has no member %s" % (tag, name))
            d = getattr(cls, name)
            if (d.offset, d.size) != c[name][:2]:
                raise LayoutError("struct %s.%s: offset/size %d/%d here, %d/%d in the library"
                                  % (tag, name, d.offset, d.size, c[name][0], c[name][1]))
            n += 1
        extensible = cls._fields_[0][0] == "sz"
        py = ctypes.sizeof(cls)
        if py != csize and not (extensible and csize > py):
            raise LayoutError("struct %s: sizeof %d here, %d in the library" % (tag, py, csize))
        if ctypes.alignment(cls) != calign:
            raise LayoutError("struct %s: alignment %d here, %d in the library"
                              % (tag, ctypes.alignment(cls), calign))
        if not extensible and set(c) - {""} - {nm for nm, _ in cls._fields_}:
            raise LayoutError("struct %s: the library has members unknown here" % tag)
    return n


__all__ = ["load", "declare", "check_layout", "layout_table", "STRUCTS", "FUNCS", "opts",
           "c_char"]
