"""Writing files: readers see the old file or the new one, never half of it; and exports that
never clobber what the user owns.

Every file is written to a temporary file in the same folder, fsynced and renamed into place.
Temporary files are created with mode 0666 so the user's umask decides who may read them,
exactly as for any file the user's own programs write.

An *export* (a report written where the user asked) additionally:

- never writes through a symbolic link, and never onto a folder, FIFO or device;
- never replaces an existing file unless it is a previous export of the same run, which it
  recognises by the marker line it appends (``<!-- jupyter-perf export of run ID -->``);
  callers that asked the user (``--force``) may replace any regular file;
- never follows a link created between the check and the write: the final step is a rename
  (replaces the directory entry itself) or a hard link (fails if the name exists).
"""
from __future__ import annotations

import errno
import os
import re
import secrets
import stat

from .errors import JupyterPerfError

EXPORT_MARKER = "<!-- jupyter-perf export of run {run_id} -->"
_MARKER_RE = re.compile(rb"<!-- jupyter-perf export of run ([A-Za-z0-9][A-Za-z0-9_.-]{0,127}) -->\s*\Z")
_TAIL_BYTES = 512


class ExportError(JupyterPerfError):
    """An export refused, in one line with the next step."""


def utf8_safe(text: str) -> str:
    """``text`` with lone surrogates (which UTF-8 cannot encode) replaced by U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _write_temp(folder: str, name: str, data: bytes) -> str:
    """A new file beside ``name`` in ``folder`` holding ``data`` (fsynced); returns its path."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) \
        | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(100):
        tmp = os.path.join(folder, f".{name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666)          # the umask applies, as for any new file
        except FileExistsError:
            continue
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        except BaseException:
            _unlink_quietly(tmp)
            raise
        return tmp
    raise FileExistsError(errno.EEXIST, "no free temporary file name", folder)


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def write_text_atomic(path: str | os.PathLike, text: str, mode: int | None = None) -> str:
    """Write ``text`` (UTF-8) to ``path`` through a temp file and a rename; returns the path."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    tmp = _write_temp(folder, os.path.basename(path), utf8_safe(text).encode("utf-8"))
    try:
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    return path


def export_owner(path: str | os.PathLike) -> str | None:
    """The run id of the export at ``path`` (from its marker), or None if it is not one."""
    try:
        fd = os.open(os.fspath(path), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        size = os.fstat(fd).st_size
        os.lseek(fd, max(0, size - _TAIL_BYTES), os.SEEK_SET)
        tail = os.read(fd, _TAIL_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    match = _MARKER_RE.search(tail)
    return match.group(1).decode("ascii") if match else None


def check_export_target(path: str, run_id: str, force: bool = False) -> bool:
    """Refuse (``ExportError``) unless ``path`` may take an export of ``run_id``; returns
    whether a file is there now (to be replaced)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(st.st_mode):
        raise ExportError(f"{path} is a symbolic link; jupyter-perf never writes through one: "
                          "choose another file name")
    if stat.S_ISDIR(st.st_mode):
        raise ExportError(f"{path} is a folder; give a file name ending in .html")
    if not stat.S_ISREG(st.st_mode):
        raise ExportError(f"{path} is not a regular file (a FIFO, socket or device); "
                          "choose another file name")
    if not force and export_owner(path) != run_id:
        raise ExportError(f"{path} already exists and is not an export of run {run_id}; "
                          "choose another file name, or move that file away first")
    return True


def write_export(path: str | os.PathLike, text: str, run_id: str, force: bool = False) -> str:
    """Write the report ``text`` of run ``run_id`` to ``path`` as an export (see the module
    docstring); returns the absolute path. ``ExportError`` if refused, ``OSError`` if the
    file system fails."""
    path = os.path.abspath(os.fspath(path))
    folder, name = os.path.split(path)
    existed = check_export_target(path, run_id, force)
    body = utf8_safe(text)
    if not body.endswith("\n"):
        body += "\n"
    data = (body + EXPORT_MARKER.format(run_id=run_id) + "\n").encode("utf-8")
    tmp = _write_temp(folder, name, data)
    try:
        if existed:
            os.replace(tmp, path)        # replaces the entry itself, never a link's target
            return path
        try:
            os.link(tmp, path)           # fails if something took the name meanwhile
        except FileExistsError:
            raise ExportError(f"{path} appeared while the report was being written; "
                              "export again") from None
        except OSError:                  # a file system without hard links
            if os.path.lexists(path):
                raise ExportError(f"{path} appeared while the report was being written; "
                                  "export again") from None
            os.replace(tmp, path)
    finally:
        _unlink_quietly(tmp)
    return path
