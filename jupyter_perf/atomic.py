"""Write a text file so that readers see the old file or the new one, never half of it."""
from __future__ import annotations

import os
import tempfile


def write_text_atomic(path: str | os.PathLike, text: str, mode: int | None = None) -> str:
    """Temp file in the same folder, fsync, rename over ``path``; returns the path."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def utf8_safe(text: str) -> str:
    """``text`` with lone surrogates (which UTF-8 cannot encode) replaced by U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
