"""``%%perfmeasure`` (cell) and ``%perfmeasure`` (line), loaded by ``%load_ext jupyter_perf``."""
from __future__ import annotations

import ast
import contextlib
import os
import shlex
import signal
import sys
import threading
import time

import IPython
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import display

from .. import fmt
from ..atomic import utf8_safe
from ..errors import JupyterPerfError, one_line
from ..service.saving import analysis_or_none, save
from ..store import StoreError, default_store, valid_run_id
from .always_on import always_on_for, env_says_on
from .finishing import Options, can_defer, defer, defer_finishing, finish_window, report_bundle
from .handoff import disarm_current, handover, wait_pending
from .live import LiveDisplay, mode_for
from .measuring import current_cell_id, interrupt_in, remember, run_error  # noqa: F401 (names)

HELP = """%%perfmeasure [-o NAME] [--label TEXT] [--no-report] [--ui URL] [--profile]
    Run the cell as usual and show why it took the time it took.
    -o NAME        bind the Run to NAME in the notebook
    --label TEXT   a label for the run list
    --no-report    store the run but show only a one-line summary
    --ui URL       Spark Connect: the server's Spark UI (its REST API), e.g. http://host:4040
    --profile      also sample the cell's CPU stacks (async-profiler, executors on this
                   machine: local[N], local-cluster): the Profile tab, a.hot_functions
%perfmeasure on | off         measure every cell that runs Spark jobs (no magic per cell);
                              also JUPYTER_PERF_ALWAYS_ON=1 or jupyter_perf.always_on(True)
%perfmeasure on --profile     the same, each cell's CPU stacks sampled too (as --profile)
%perfmeasure list [N]         recent runs (from every kernel)
%perfmeasure show RUN_ID      show a stored run's report
%perfmeasure export RUN_ID [PATH]
                              write the run's report as one standalone offline HTML file
%perfmeasure analyze EVENTLOG | URL --app APP_ID
                              the same report for a past application (event log or
                              History Server / Spark UI)
%perfmeasure compare [A] [B]  compare two runs (B against A); with one id, that run against
                              this kernel's latest; with none, the latest run's cell: its
                              previous run against the latest
%perfmeasure advice RUN_ID [N]
                              the run's hints; with N, hint N's setting as a ready cell below
                              (%%perfmeasure --advised-by RUN_ID: compared with RUN_ID when run)
%perfmeasure history [CELL]   every stored run of a cell (a run id, label or cell id; none:
                              the latest run's cell): warm or cold, expected band, regressions
%perfmeasure regressions [all | kernel | NOTEBOOK]
                              the cells whose latest warm run regressed (default: this
                              notebook's; kernel: this kernel's Spark application's runs)
%perfmeasure help             this text
"""


@magics_class
class PerfMagics(Magics):
    @magic_arguments()
    @argument("-o", "--output", default=None, help="bind the Run to this name")
    @argument("--label", default="", help="a label for the run list")
    @argument("--no-report", action="store_true", help="store the run, show one line")
    @argument("--ui", default=None, help="Spark Connect: the server's Spark UI URL")
    @argument("--app", default=None, help="line mode: application id for analyze URL")
    @argument("--advised-by", default=None, help="compare the run with this advised run")
    @argument("--profile", action="store_true", help="also sample the cell's CPU stacks")
    @argument("rest", nargs="*", help="line mode: list | show RUN | help")
    @line_cell_magic
    def perfmeasure(self, line: str, cell: str | None = None):
        try:
            args = self.perfmeasure.parser.parse_args(shlex.split(line))
        except Exception as exc:  # argparse's SystemExit included
            print(f"perfmeasure: {exc}; try %perfmeasure help", file=sys.stderr)
            return None
        if cell is None:
            return self._line(args.rest, args.app, args.profile)
        return self._cell(cell, args, typed_header(self.shell, line))

    # -- line magic ---------------------------------------------------------
    def _line(self, rest: list[str], app: str | None = None, profile: bool = False):
        verb = rest[0] if rest else "help"
        if verb in ("list", "show", "export", "compare", "advice", "history", "regressions"):
            wait_pending()          # the runs of the cells that just ended are in the store
        if verb == "help":
            print(HELP)
        elif verb in ("on", "off") and len(rest) == 1:
            always_on_for(self.shell).enable(verb == "on", profile=profile)
            print("perfmeasure: always on — every cell that runs Spark jobs is measured"
                  + (", its CPU stacks sampled (--profile)" if profile else "")
                  if verb == "on" else "perfmeasure: always-on is off")
        elif verb == "list":
            limit = int(rest[1]) if len(rest) > 1 and rest[1].isdigit() else 20
            print(format_run_list(default_store().list(limit=limit)))
        elif verb == "show" and len(rest) == 2:
            run = self._load(rest[1])
            if run is not None:
                display(report_bundle(run), raw=True)
        elif verb == "export" and len(rest) in (2, 3):
            self._export(rest[1], rest[2] if len(rest) == 3 else None)
        elif verb == "analyze" and len(rest) == 2:
            self._analyze(rest[1], app)
        elif verb in ("compare", "advice", "history", "regressions") and len(rest) <= 3:  # J, T
            from .verbs import magic_verb
            magic_verb(self.shell, rest)
        else:
            print(f"perfmeasure: unknown command {' '.join(rest)!r}; try %perfmeasure help",
                  file=sys.stderr)

    def _load(self, run_id: str):
        if not valid_run_id(run_id):
            print(f"perfmeasure: {run_id!r} is not a run id; see %perfmeasure list", file=sys.stderr)
            return None
        try:
            return default_store().load(run_id)
        except KeyError:
            print(f"perfmeasure: no run {run_id}; see %perfmeasure list", file=sys.stderr)
        except StoreError as exc:
            print(f"perfmeasure: {exc}", file=sys.stderr)
        return None

    def _export(self, run_id: str, path: str | None):
        from ..render import export
        from ..service.history import report_series

        run = self._load(run_id)
        if run is None:
            return
        target = path or f"jupyter-perf-{run.run_id}.html"
        try:
            written = export(run, target, report_series(run))   # the History tab too
        except JupyterPerfError as exc:             # refused: a link, another file (atomic.py)
            print(f"perfmeasure: {exc}", file=sys.stderr)
            return
        except OSError as exc:
            print(f"perfmeasure: could not write {target}: {exc.strerror or exc}; "
                  "choose another path", file=sys.stderr)
            return
        print(f"perfmeasure: report written to {written} (standalone, works offline)")

    def _analyze(self, source: str, app: str | None):
        from ..collect.eventlog import EventLogError
        from ..collect.past import SourceError, load_source
        from ..collect.rest import RestError

        try:
            run = load_source(source, app=app)
        except (SourceError, EventLogError, RestError) as exc:
            print(f"perfmeasure: {exc}", file=sys.stderr)
            return
        analysis, summary = analysis_or_none(run)
        save(run, summary)
        remember(run)
        display(report_bundle(run, analysis), raw=True)

    # -- cell magic ---------------------------------------------------------
    def _cell(self, cell: str, args, header: str = "%%perfmeasure"):
        from ..collect.connect import is_connect_session
        from ..collect.session import active_session, spark_session
        from ..collect.session_state import SessionError
        from ..collect.windows import window_for

        disarm_current()            # always-on steps aside: this cell is measured here
        ns = self.shell.user_ns
        spark = ns["spark"] if is_connect_session(ns.get("spark")) else active_session()
        if spark is None:
            try:
                spark = spark_session()
            except SessionError as exc:
                print(f"perfmeasure: {exc}; running the cell unmeasured", file=sys.stderr)
                return self._run_plain(cell, header)
            ns.setdefault("spark", spark)   # the session we started, for the cell to use
        notebook = ns.get("__session__") or os.environ.get("JPY_SESSION_NAME", "")
        cell_id = current_cell_id(self.shell)
        live = LiveDisplay(mode_for(self.shell))
        window = None
        try:
            window = window_for(spark, ui_url=args.ui, kind="cell", label=args.label,
                                source=cell, notebook=str(notebook or ""),
                                on_progress=None if live.mode == "none" else live.update,
                                profile=args.profile)
            if cell_id:
                window.run.extra["cell_id"] = cell_id     # lets the sidebar find the cell
            if args.advised_by:
                window.run.extra["advised_by"] = args.advised_by   # compared when it ends
            # the user's names for the module and the session, for the advice's ready cells
            window.run.extra["names"] = user_names(ns, spark)
            handover()              # a finishing window copies the listener buffers first
            window.start()
        except Exception as exc:   # e.g. the session was stopped: never lose the cell itself
            if window is not None:
                _quietly(window.stop_background)
            _quietly(live.replace, None, "")
            print(f"perfmeasure: could not start measuring ({one_line(exc)}); running the "
                  "cell unmeasured — restart Spark with jupyter_perf.spark_session()",
                  file=sys.stderr)
            return self._run_plain(cell, header)
        try:
            with plain_sigint():
                value = self._run_plain(cell, header, window.run.extra)
        except BaseException as exc:
            interrupt = interrupt_in(exc)
            if interrupt is not None:
                window.cancel()
                self._finish(window, live, args, "interrupted", "KeyboardInterrupt")
                if interrupt is exc:
                    raise
                # py4j may turn Ctrl-C into an error from the call after it (Spark 4):
                # the user pressed Ctrl-C, so that is what they see.
                raise interrupt from None
            self._finish(window, live, args, "failed", run_error(exc))
            raise
        self._finish(window, live, args, "ok", "")
        return value

    def _run_plain(self, cell: str, header: str = "%%perfmeasure", extra: dict | None = None):
        """Run the cell body as IPython would; return the last expression's value. ``extra``
        (a run's) gets ``cell_file``, the file name Spark's call sites will name for the cell.

        If the body raises, its traceback shows as a plain cell's would: the user's frames
        only, under the cell's own number, with line numbers as the editor shows them (the
        ``header`` line, the magic's own, is line 1).
        """
        shell = self.shell
        source = shell.transform_cell(cell)
        # the cell as the user sees it, for the traceback's context lines
        filename = shell.compile.cache(f"{utf8_safe(header)}\n{source}", cell_number(shell))
        if extra is not None:
            extra["cell_file"] = filename
        tree = shell.compile.ast_parse("\n" + source, filename=filename)   # body from line 2
        tree = shell.transform_ast(tree)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        ns = shell.user_ns
        try:
            if tree.body:
                exec(shell.compile(tree, filename, "exec"), ns)
            if last is not None:
                return eval(shell.compile(last, filename, "eval"), ns)
            return None
        except BaseException as exc:
            show_from_cell(shell, exc, filename)
            raise

    def _finish(self, window, live, args, status: str, error: str) -> None:
        """Collect, analyse, store and show the cell's run (after the cell returns, in a
        Jupyter kernel: finishing.py). Nothing here may change what the cell returns or
        raises: every failure becomes one line under the cell."""
        opts = Options(output=args.output, no_report=args.no_report, advised_by=args.advised_by)
        if not args.advised_by and defer_finishing(self.shell) and can_defer(window):
            try:
                defer(self.shell, window, live, opts, status, error)
                return
            except Exception as exc:   # sealing failed: finish here, as before
                window.run.warnings.append(f"could not finish after the cell: {one_line(exc)}")
        finish_window(self.shell, window, live, opts, status, error)


def _quietly(fn, *args) -> None:
    """Clean-up that must not stop the cell from running unmeasured."""
    try:
        fn(*args)
    except Exception:
        pass




def user_names(ns: dict, spark) -> dict:
    """The names the user's namespace gives the ``jupyter_perf`` module and ``spark``'s
    session (``{"module": "jp", "spark": "spark"}``); a name not found is left out."""
    module = sys.modules.get("jupyter_perf")
    out: dict = {}
    for name, value in list(ns.items()):
        if name.startswith("_") or not name.isidentifier():
            continue
        if "module" not in out and module is not None and value is module:
            out["module"] = name
        if "spark" not in out and spark is not None and value is spark:
            out["spark"] = name
    if ns.get("spark") is spark:
        out["spark"] = "spark"                 # the usual name wins over an alias
    return out


def cell_number(shell) -> int:
    """The number of the cell running now, as its ``In [N]`` prompt shows it.

    IPython counts the cell before running it (``shell.execution_count`` is already the next
    number); the running cell's own number is on its ExecutionResult.
    """
    result = getattr(shell.displayhook, "exec_result", None)
    count = getattr(result, "execution_count", None)
    return int(count) if count is not None else int(shell.execution_count)


def typed_header(shell, line: str) -> str:
    """The cell's ``%%perfmeasure ...`` line as the user typed it (rebuilt if IPython does not
    say)."""
    result = getattr(shell.displayhook, "exec_result", None)
    raw = getattr(getattr(result, "info", None), "raw_cell", None) or ""
    first = raw.lstrip().split("\n", 1)[0]
    return first if first.startswith("%%perfmeasure") else f"%%perfmeasure {line}".rstrip()


def show_from_cell(shell, exc: BaseException, filename: str) -> None:
    """Make IPython show ``exc`` from the cell body's first frame, as it would for a plain cell.

    Uses IPython's ``_render_traceback_`` protocol on the exception object (its type, message
    and traceback are left as they are). The frames above the cell body (IPython's
    ``run_cell_magic`` and this module) are dropped only while they are the only ones there:
    if the exception is raised again elsewhere, it is shown in full.
    """
    if hasattr(exc, "_render_traceback_"):
        return                  # the exception brings its own rendering (e.g. ipyparallel)

    def render() -> list[str]:
        tb, start = exc.__traceback__, None
        while tb is not None:
            code = tb.tb_frame.f_code
            # the body's frame (ipykernel may give the outer cell, which calls
            # run_cell_magic, the same file name)
            if code.co_filename == filename and "run_cell_magic" not in code.co_names:
                start = tb
                break
            if not _magic_frame(code):
                break
            tb = tb.tb_next
        if start is None:
            return shell.InteractiveTB.structured_traceback(type(exc), exc, exc.__traceback__)
        return shell.InteractiveTB.structured_traceback(type(exc), exc, start, tb_offset=0)

    try:
        exc._render_traceback_ = render
    except (AttributeError, TypeError):
        pass                    # an exception type without attributes: shown in full


_IPYTHON_DIR = os.path.dirname(os.path.abspath(IPython.__file__))


def _magic_frame(code) -> bool:
    """A frame between the cell and its body: IPython's, this module's, or the one-line call
    IPython writes for a cell magic."""
    name = code.co_filename
    return (os.path.abspath(name).startswith(_IPYTHON_DIR + os.sep) or name == __file__
            or name.startswith("<decorator-gen") or "run_cell_magic" in code.co_names)


@contextlib.contextmanager
def plain_sigint():
    """Ctrl-C raises KeyboardInterrupt, as in ipykernel, instead of pyspark's handler.

    pyspark's SIGINT handler calls Spark from inside the signal handler, on the
    same py4j connection the interrupted call is still reading: a reentrant
    call that turns the interrupt into a Py4JError. The window cancels its own
    tagged jobs once the KeyboardInterrupt has unwound.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def format_run_list(rows: list[dict]) -> str:
    if not rows:
        return "No runs yet: put %%perfmeasure on top of a cell that runs Spark."
    lines = [f"{'run id':<24} {'when':<19} {'wall':>9} {'tasks':>7}  status    title"]
    for r in rows:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime((r["created_ms"] or 0) / 1000))
        lines.append(f"{r['run_id']:<24} {when:<19} {fmt.ms(r['wall_ms']):>9} "
                     f"{r['num_tasks'] or 0:>7}  {r['status'] or '':<9} {fmt.run_title(r)[:60]}")
    return "\n".join(lines)


def load_ipython_extension(ipython) -> None:
    ipython.register_magics(PerfMagics)
    state = always_on_for(ipython)          # the cell events (also: -o NAME waits)
    if env_says_on():
        state.enable(True)

