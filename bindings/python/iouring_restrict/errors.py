# SPDX-License-Identifier: MIT
"""Errors: every failure is an :class:`IourError`, an :class:`OSError`
carrying ``errno`` (positive) and the library's message.  A system errno is
raised as a class that also derives from the matching built-in
(``PermissionError`` for EACCES/EPERM, ``FileNotFoundError`` for ENOENT,
...); the library's own codes (4001 and up) as :class:`LibraryError`."""
import errno as _errno
import os as _os

from .enums import ErrorCode

__all__ = ["IourError", "LibraryError", "LayoutError", "UnknownNameError", "error_from_code"]


class IourError(OSError):
    """A libiouring-restrict call failed.

    ``errno`` is the positive error number, ``strerror`` the library's
    message: the words the failing call recorded about the value it
    refused and the limit (iour_errdetail(), also in ``detail``) when it
    recorded some, else the message for the code (iour_strerror_desc(),
    always in ``description``); ``errname`` its symbolic name ("-EACCES"),
    ``function`` the C function that failed, ``report`` the report of a
    failed apply when the library gave one."""

    errname = None
    function = None
    report = None
    detail = None
    description = None

    def __str__(self):
        s = "[%s] %s" % ((self.errname or "").lstrip("-") or self.errno, self.strerror)
        if self.function:
            s += " (%s)" % self.function
        return s


class LibraryError(IourError):
    """One of the library's own error codes (enum iour_errno); ``code`` is
    the :class:`~iouring_restrict.enums.ErrorCode` and ``name`` its name."""

    code = None
    name = None


class UnknownNameError(IourError, FileNotFoundError, ValueError):
    """A name (opcode, register opcode, SQE flag) the library's tables do
    not have.  ``name`` is the value given, ``suggestion`` the nearest
    valid name (iour_name_suggest()) or None; the message names both.  It
    is an ``OSError`` with errno ENOENT, as before, and a ``ValueError``."""

    name = None
    suggestion = None


class LayoutError(ImportError):
    """A struct declared by these bindings does not match the library's
    layout table (iour_abi_layout()): the library and the bindings disagree,
    and calling it would corrupt memory."""


_classes = {}


def _class_for(err):
    if err > ErrorCode.INTERNAL - 1:
        return LibraryError
    cls = _classes.get(err)
    if cls is None:
        builtin = type(OSError(err, "x"))
        if builtin is OSError:
            cls = IourError
        else:
            cls = type("Iour" + builtin.__name__, (IourError, builtin),
                       {"__module__": __name__})
        _classes[err] = cls
    return cls


def error_from_code(rc, function=None, lib=None):
    """The exception for a negative return code ``rc`` (``lib``: the loaded
    library, for its messages)."""
    err = abs(int(rc))
    msg = name = detail = None
    if lib is not None:
        msg = lib.iour_strerror_desc(-err).decode()
        name = lib.iour_errname(-err).decode()
        # Read at once: the record is the calling thread's, and only a
        # later call of the same function replaces it.
        if function and err:
            d = lib.iour_errdetail(function.encode(), -err)
            detail = d.decode(errors="replace") if d else None
    # A system errno the library's tables lack: Python's own words.
    if err < ErrorCode.INTERNAL and (msg in (None, "Unknown error") or name in (None, "UNKNOWN")):
        if msg in (None, "Unknown error"):
            msg = _os.strerror(err)
        if name in (None, "UNKNOWN") and err in _errno.errorcode:
            name = "-" + _errno.errorcode[err]
    e = _class_for(err)(err, detail or msg)
    e.errname = name
    e.function = function
    e.detail = detail
    e.description = msg
    if isinstance(e, LibraryError):
        try:
            e.code = ErrorCode(err)
            e.name = e.code.name
        except ValueError:
            e.code = None
            e.name = name
    return e
