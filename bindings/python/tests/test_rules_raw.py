# SPDX-License-Identifier: MIT
"""The rule front end through its raw declarations (rules.h): a parse, its
comparisons, and a parse error's position."""
import ctypes
import errno

import iouring_restrict as ir
from iouring_restrict import _lib

SOCKET = 45
RAW = ir._api._raw


def _err():
    e = _lib.iour_rule_error()
    e.sz = ctypes.sizeof(e)
    return e


def test_parse_gives_the_comparisons_the_text_says():
    rule, e = ctypes.c_void_p(), _err()
    assert RAW.iour_rule_parse(b"family==AF_INET,type==SOCK_STREAM", SOCKET,
                               ctypes.byref(rule), ctypes.byref(e)) == 0
    cmps = ctypes.POINTER(_lib.iour_cmp)()
    try:
        assert RAW.iour_rule_cmps(rule, ctypes.byref(cmps)) == 2
        assert (cmps[0].value, cmps[1].value) == (2, 1)  # AF_INET, SOCK_STREAM
        fam, typ = ctypes.c_uint32(), ctypes.c_uint32()
        assert RAW.iour_rule_field(b"socket.family", 0xffffffff, ctypes.byref(fam),
                                   ctypes.byref(e)) == 0
        assert RAW.iour_rule_field(b"socket.type", 0xffffffff, ctypes.byref(typ),
                                   ctypes.byref(e)) == 0
        assert (cmps[0].field, cmps[1].field) == (fam.value, typ.value)
    finally:
        RAW.iour_rule_free(rule)


def test_a_bad_text_says_where():
    rule, e = ctypes.c_void_p(), _err()
    text = b"family==AF_INET,type=~1"
    assert RAW.iour_rule_parse(text, SOCKET, ctypes.byref(rule), ctypes.byref(e)) == \
        -errno.EBADMSG
    assert rule.value is None
    assert text.index(b"type") <= e.pos <= len(text)
    assert e.message
