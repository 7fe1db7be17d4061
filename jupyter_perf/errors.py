"""The one error base of jupyter-perf, and the one way to say an exception in one line.

Every problem a user can act on is a :class:`JupyterPerfError` whose message is one line:
what went wrong and the next step (e.g. "no run X in the store; see `jupyter-perf runs`").
Callers that must never show a traceback (the magic, the CLI, the server) catch this base
and print ``str(exc)``; anything else is a bug and :func:`one_line` keeps it to one line.
"""
from __future__ import annotations

MAX_LINE = 300


class JupyterPerfError(Exception):
    """A clear, one-line problem with a next step, safe to show to a user as it is."""


def one_line(exc: BaseException, limit: int = MAX_LINE, with_type: bool = True) -> str:
    """``"TypeName: first line of the message"`` (or the type alone), cut to ``limit`` chars.

    A :class:`JupyterPerfError` is already written for users: its type is not shown.
    """
    text = str(exc).strip()
    first = text.splitlines()[0].strip() if text else ""
    if isinstance(exc, JupyterPerfError) or not with_type:
        out = first or type(exc).__name__
    else:
        out = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return out if len(out) <= limit else out[: limit - 1] + "…"
