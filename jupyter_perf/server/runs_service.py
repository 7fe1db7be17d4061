"""What the REST API does with runs, as plain functions (no tornado, no jupyter_server).

The handlers in ``handlers.py`` only parse the request, call one function here and
write its result (``compare_service.py`` does the same for two runs compared). Every
function takes the store root explicitly and opens a fresh ``RunStore`` (a few path
joins; SQLite is opened per call), so runs that any kernel writes appear on the next
request without restarting the server.

Failures are ``ApiError`` with an HTTP status and a one-line message that says
what to do next; ``StoreError`` becomes a 500 with the store's own message.
"""
from __future__ import annotations

import os
import posixpath
from typing import Any, BinaryIO, Callable

from ..atomic import ExportError, write_export
from ..constants import API_NAMESPACE
from ..errors import one_line
from ..store import RunStore, StoreError, home_dir, valid_run_id
from . import report_cache

#: Largest page the list endpoint returns; the sidebar never needs more at once.
MAX_LIMIT = 500
DEFAULT_LIMIT = 50


class ApiError(Exception):
    """An error the API reports as ``{"error": message}`` with ``status``."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def open_store(root: str | None) -> RunStore:
    """The run store at ``root``, else at ``$JUPYTER_PERF_HOME`` (resolved now, not at startup)."""
    return RunStore(root or home_dir())


def check_run_id(run_id: str) -> str:
    if not isinstance(run_id, str) or not valid_run_id(run_id):
        raise ApiError(400, f"not a valid run id: {str(run_id)[:80]!r}; run ids look like "
                            f"20261122-015800-3f9a1c (see GET /{API_NAMESPACE}/runs)")
    return run_id


def _not_found(run_id: str) -> ApiError:
    return ApiError(404, f"no run {run_id} in the store; it may have been deleted "
                         f"(GET /{API_NAMESPACE}/runs lists the runs there are)")


def _store_error(exc: StoreError) -> ApiError:
    return ApiError(500, one_line(exc))


def _int_arg(value: str | None, name: str, default: int, lo: int, hi: int) -> int:
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise ApiError(400, f"?{name}= must be an integer, got {value[:40]!r}") from None
    if number < lo:
        raise ApiError(400, f"?{name}= must be at least {lo}, got {number}")
    return min(number, hi)


def contents_path(notebook: str | None, contents_root: str | None) -> str | None:
    """``notebook`` as a path relative to the Jupyter contents root, or None.

    Kernels record the notebook as ``JPY_SESSION_NAME``, which jupyter_server
    sets to an absolute file path (older servers: a path relative to the root).
    The frontend needs the root-relative, '/'-separated form to find the open
    notebook.
    """
    if not notebook:
        return None
    if not os.path.isabs(notebook):
        rel = notebook.replace(os.sep, "/").lstrip("/")
        return rel if rel and ".." not in rel.split("/") else None
    if not contents_root:
        return None
    root = os.path.realpath(contents_root)
    try:
        path = os.path.realpath(notebook)
        if os.path.commonpath([root, path]) != root:
            return None
    except ValueError:
        return None
    rel = os.path.relpath(path, root)
    return rel.replace(os.sep, "/") if rel != "." else None


def _row(row: dict[str, Any], contents_root: str | None) -> dict[str, Any]:
    out = dict(row)
    out["notebook_path"] = contents_path(row.get("notebook"), contents_root)
    return out


# -- the verbs ---------------------------------------------------------------------------
def list_runs(root: str | None, limit: str | None = None, offset: str | None = None,
              q: str | None = None, notebook: str | None = None,
              contents_root: str | None = None, regressed: str | None = None) -> dict[str, Any]:
    """``GET runs``: one page of index rows, newest first, and how many match in all.
    ``regressed=1``: only each cell's latest warm run that the one noise rule flags a
    regression (``service/history.regressions``), most slowed first."""
    lim = _int_arg(limit, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    off = _int_arg(offset, "offset", 0, 0, 2**62)
    q = (q or "").strip()[:200]
    notebook = (notebook or "").strip()
    store = open_store(root)
    try:
        if _flag_arg(regressed, "regressed"):
            rows, total = _regressed_rows(store, q, notebook, lim, off)
        else:
            rows = store.list(limit=lim, offset=off, text=q, notebook=notebook)
            total = store.count(text=q, notebook=notebook)
    except StoreError as exc:
        raise _store_error(exc) from exc
    lines = _sparklines(store, rows)
    return {"runs": [_row(r, contents_root) | {"series": lines.get(r["run_id"])} for r in rows],
            "total": total, "offset": off, "limit": lim}


def _flag_arg(value: str | None, name: str) -> bool:
    text = (value or "").strip().lower()
    if text in ("", "0", "false", "no"):
        return False
    if text in ("1", "true", "yes"):
        return True
    raise ApiError(400, f"{name} must be 1 or 0, not {text[:20]!r}")


def _regressed_rows(store: RunStore, q: str, notebook: str, lim: int,
                    off: int) -> tuple[list[dict[str, Any]], int]:
    """One page of the regressed cells' latest runs (the sidebar's "Regressed" filter), the
    text filter applied as the index applies it, and how many there are in all."""
    from ..service.history import REGRESSIONS_SCAN, HistoryError, regressions

    try:
        df = regressions(store, notebook=notebook or None, decompose=False)
    except HistoryError as exc:
        raise StoreError(str(exc)) from None
    ids = [str(x) for x in df["run_id"]] if len(df) else []
    if ids and q:
        matching = {r["run_id"] for r in store.list(limit=REGRESSIONS_SCAN, text=q, notebook=notebook)}
        ids = [i for i in ids if i in matching]
    rows = [r for r in (store.get(i) for i in ids[off:off + lim]) if r is not None]
    return rows, len(ids)


def _sparklines(store: RunStore, rows: list[dict[str, Any]]) -> dict[str, dict]:
    """Each listed run's cell's wall times up to it, for the sidebar's sparkline
    (``service/history.sparklines``: the one noise rule's flags); {} if they cannot be read."""
    from ..service.history import sparklines

    try:
        return sparklines(store, rows)
    except Exception:  # broad: a sparkline is an extra; the list answers without it
        return {}


def get_run(root: str | None, run_id: str, contents_root: str | None = None) -> dict[str, Any]:
    """``GET runs/{id}``: the run's metadata (``RunStore.meta``: cell source, cell id,
    counts, verdict category and headline) and its analysis summary; no task data is read."""
    check_run_id(run_id)
    try:
        out = open_store(root).meta(run_id)
    except KeyError:
        raise _not_found(run_id) from None
    except StoreError as exc:
        raise _store_error(exc) from exc
    out["notebook_path"] = contents_path(out.get("notebook"), contents_root)
    return out


def delete_run(root: str | None, run_id: str) -> dict[str, Any]:
    """``DELETE runs/{id}``: remove the run's index row and directory."""
    check_run_id(run_id)
    try:
        gone = open_store(root).delete(run_id)
    except StoreError as exc:
        raise _store_error(exc) from exc
    if not gone:
        raise _not_found(run_id)
    return {"run_id": run_id, "deleted": True}


# -- the report, cached inside the run directory (report_cache.py) -------------------------
def render_report(run, store=None) -> str:
    """The standalone report HTML of a Run (the one public render entry point), with its
    cell's series (the History tab) when the store holds other runs of the cell."""
    from ..render import report_html
    from ..service.history import report_series

    return report_html(run, report_series(run, store))


def _series_key(store, run_id: str) -> str:
    """Which runs the report's History tab was drawn from (the cell's runs in the index):
    a cached report is drawn again when its cell gets another run."""
    import hashlib

    from ..service.history import SERIES_READ, cell_rows
    try:
        row = store.get(run_id)
        rows = cell_rows(store, row, SERIES_READ) if row else []
    except Exception:  # broad: the key only decides whether to draw again
        return ""
    if len(rows) < 2:
        return ""
    seen = sorted(f"{r['run_id']}/{r.get('wall_ms')}/{r.get('status')}" for r in rows)
    return hashlib.sha256("|".join(seen).encode()).hexdigest()[:16]


def _render(store, run_id: str) -> str:
    try:
        run = store.load(run_id)
    except KeyError:
        raise _not_found(run_id) from None
    except StoreError as exc:
        raise _store_error(exc) from exc
    try:
        return render_report(run, store)
    except Exception as exc:  # a bug in render must not look like a missing run
        raise ApiError(500, f"could not render the report of run {run_id}: "
                            f"{one_line(exc, limit=200)}; see the server log") from exc


def report(root: str | None, run_id: str, refresh: bool = False,
           cache_mb: float = report_cache.DEFAULT_LIMIT_MB) -> tuple[str | None, BinaryIO | None]:
    """``GET runs/{id}/report``: (HTML just rendered, None) or (None, the cached file opened).

    The first request renders the report (one render at a time in the server) and keeps it
    as ``runs/<id>/report.html`` with ``report.key``; later requests get that file while the
    key still matches (the run was not re-saved, the package version is the same), to stream
    it. ``refresh`` re-renders. The cached reports of all runs total at most ``cache_mb``."""
    check_run_id(run_id)
    store = open_store(root)
    run_dir = store.run_dir(run_id)
    with report_cache.run_lock(os.path.join(store.root, run_id)):
        try:
            key = report_cache.cache_key(run_dir) + ":" + _series_key(store, run_id)
        except OSError:
            raise _not_found(run_id) from None
        if not refresh:
            fh = report_cache.open_cached(run_dir, key)
            if fh is not None:
                return None, fh
        html = report_cache.render_once(lambda: _render(store, run_id))
        report_cache.keep(store, run_dir, key, html, cache_mb)
        return html, None


def report_html(root: str | None, run_id: str, refresh: bool = False,
                cache_mb: float = report_cache.DEFAULT_LIMIT_MB) -> tuple[str, bool]:
    """The report as text: (HTML, served_from_cache) (see ``report``)."""
    html, fh = report(root, run_id, refresh=refresh, cache_mb=cache_mb)
    if fh is None:
        return html, False
    with fh:
        return fh.read().decode("utf-8"), True


# -- export into the Jupyter contents root -----------------------------------------------
def default_export_name(run_id: str) -> str:
    return f"jupyter-perf-{run_id}.html"


def export_path(path: str | None, run_id: str) -> str:
    """A safe path *relative to the contents root* for the exported report.

    Refuses absolute paths, drive letters, backslashes, ``..`` anywhere, hidden
    files or folders, and anything that is not ``.html``/``.htm`` (so an export
    can never overwrite a notebook). The caller also checks the resolved path
    stays inside the root (symlinks).
    """
    check_run_id(run_id)
    if path is None or str(path).strip() == "":
        return default_export_name(run_id)
    if not isinstance(path, str):
        raise ApiError(400, '"path" must be a string, e.g. "reports/run.html"')
    raw = path.strip()
    if "\x00" in raw or "\\" in raw or raw.startswith(("/", "~")) or (
            len(raw) > 1 and raw[1] == ":"):
        raise ApiError(400, f"export path {raw[:120]!r} must be relative to the Jupyter root, "
                            "e.g. reports/run.html")
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts):
        raise ApiError(400, f"export path {raw[:120]!r} leaves the Jupyter root; "
                            "use a path inside it, e.g. reports/run.html")
    if any(p.startswith(".") for p in parts):
        raise ApiError(400, f"export path {raw[:120]!r} names a hidden file or folder; "
                            "choose a visible one")
    if not parts[-1].lower().endswith((".html", ".htm")):
        raise ApiError(400, f"export path {raw[:120]!r} must end in .html")
    return posixpath.join(*parts)


def check_inside(root_dir: str, rel_folder: str) -> str:
    """The absolute path of the folder ``rel_folder`` under ``root_dir`` after symlinks,
    refusing one that resolves outside the root. The file name itself is never resolved:
    the export refuses to write through a link (``atomic.write_export``)."""
    root = os.path.realpath(root_dir)
    parts = [p for p in rel_folder.split("/") if p]
    folder = os.path.realpath(os.path.join(root, *parts))
    if os.path.commonpath([root, folder]) != root:
        raise ApiError(400, f"export folder {rel_folder!r} resolves outside the Jupyter root "
                            "(through a symlink); choose another folder")
    return folder


def export_report(root: str | None, run_id: str, path: str | None, contents_root: str,
                  cache_mb: float = report_cache.DEFAULT_LIMIT_MB) -> dict:
    """``POST runs/{id}/export`` on a plain file system root: write the report there, never
    through a symlink and never over a file that is not an export of this run (409)."""
    return export_html(path, run_id, contents_root,
                       lambda: report_html(root, run_id, cache_mb=cache_mb)[0])


def export_html(path: str | None, run_id: str, contents_root: str,
                make_html: Callable[[], str]) -> dict:
    """Write ``make_html()`` to ``path`` (relative to the contents root) as an export marked
    with ``run_id`` (a run's report, or a comparison: ``compare_service.py``)."""
    rel = export_path(path, run_id)
    folder_rel, name = posixpath.split(rel)
    folder = check_inside(contents_root, folder_rel)
    if not os.path.isdir(folder):
        raise ApiError(400, f"folder {folder_rel!r} does not exist in the Jupyter root; "
                            "create it first or export to another path")
    target = os.path.join(folder, name)
    if os.path.isdir(target) and not os.path.islink(target):
        raise ApiError(400, f"{rel!r} is a folder; give a file name ending in .html")
    html = make_html()
    try:
        write_export(target, html, run_id)
    except ExportError as exc:
        raise ApiError(409, str(exc).replace(target, rel)) from exc
    except OSError as exc:
        raise ApiError(500, f"could not write {rel}: {exc.strerror or exc}; "
                            "check the folder is writable") from exc
    return {"run_id": run_id, "path": rel, "bytes": os.path.getsize(target)}
