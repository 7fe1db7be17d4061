"""``jupyter-perf``: analyse past applications and work with stored runs from a shell.

    jupyter-perf analyze EVENTLOG [--json] [--html OUT [--force]]
    jupyter-perf analyze URL --app ID [--attempt N] [--json] [--html OUT]
    jupyter-perf runs [--limit N] [--json] [--delete RUN_ID] [--rebuild-index]
    jupyter-perf report RUN_ID -o OUT.html [--force]
    jupyter-perf compare A B [--json] [--html OUT [--force]]
    jupyter-perf accuracy [--json]
    jupyter-perf history RUN_OR_LABEL [--json]
    jupyter-perf regressions [--notebook PATH] [--app APP_ID] [--json]

Errors are one line on stderr with the next step, and exit code 2 (no traceback; set
``JUPYTER_PERF_DEBUG=1`` to see one).
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from typing import Sequence

from . import fmt
from .errors import JupyterPerfError, one_line

EXIT_ERROR = 2


class CliError(JupyterPerfError):
    """A one-line problem for the user, with the next step in the message."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line instead of usage + message
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message}; see `{self.prog} --help`\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="jupyter-perf",
                description="Why did my Spark application take the time it took?")
    from ._version import __version__
    p.add_argument("--version", action="version", version=f"jupyter-perf {__version__}")
    sub = p.add_subparsers(dest="command",
                           metavar="{analyze,runs,report,compare,accuracy,history,regressions}",
                           parser_class=_Parser)
    sub.required = True

    a = sub.add_parser("analyze", help="analyse a past application (event log or History Server)",
                       description="Analyse a whole past application from its Spark event log "
                       "(file, rolled eventlog_v2_* directory, .zstd/.lz4/.snappy/.lzf, "
                       ".inprogress) or from a History Server / live Spark UI URL.")
    a.add_argument("source", metavar="EVENTLOG|URL",
                   help="event-log path, or http(s):// URL of a History Server or Spark UI")
    a.add_argument("--app", metavar="ID", help="application id (with a URL)")
    a.add_argument("--attempt", metavar="N", help="application attempt (default: the latest)")
    _output_args(a, "summary", "report", "run")
    a.add_argument("--no-save", action="store_true",
                   help="do not keep the run in the run store (jupyter-perf runs)")

    r = sub.add_parser("runs", help="list stored runs (newest first)")
    r.add_argument("--limit", type=int, default=20, metavar="N", help="show N runs (default 20)")
    r.add_argument("--json", action="store_true", help="print the listing as JSON")
    r.add_argument("--delete", metavar="RUN_ID", help="delete a stored run")
    r.add_argument("--rebuild-index", action="store_true",
                   help="set the run index aside (kept, renamed) and rebuild it from the run "
                        "directories; the store also does this by itself when the index is "
                        "damaged, empty or missing")

    o = sub.add_parser("report", help="write a stored run's report as standalone HTML")
    o.add_argument("run_id", metavar="RUN_ID")
    o.add_argument("-o", "--output", metavar="OUT.html", required=True)
    o.add_argument("--force", action="store_true",
                   help="replace OUT even if it is not an earlier export of this run "
                        "(never a symlink or a folder)")
    _compare_parsers(sub)
    return p


def _output_args(p: argparse.ArgumentParser, json_what: str, html_what: str,
                 export_of: str) -> None:
    """--json, --html OUT and --force (an export: ``atomic.write_export``)."""
    p.add_argument("--json", action="store_true", help=f"print the {json_what} as JSON")
    p.add_argument("--html", metavar="OUT", help=f"write the standalone HTML {html_what} to OUT")
    p.add_argument("--force", action="store_true",
                   help=f"replace OUT even if it is not an earlier export of this {export_of} "
                        "(never a symlink or a folder)")


def _compare_parsers(sub) -> None:
    """``compare`` and ``accuracy`` (issue J; the work is in comparing.py)."""
    c = sub.add_parser("compare", help="compare two stored runs (B against A)",
                       description="What changed between two stored runs and why B took the "
                       "time it took: the wall-time change split into parts that add up, the "
                       "settings that differ, operators and stages matched by shape, predicted "
                       "vs measured.")
    c.add_argument("a", metavar="A", help="run id of the first run")
    c.add_argument("b", metavar="B", help="run id of the second run")
    _output_args(c, "comparison", "comparison", "comparison")
    c.add_argument("--no-record", action="store_true",
                   help="do not add its predictions to the record (jupyter-perf accuracy)")
    a = sub.add_parser("accuracy", help="how far the what-if predictions were from measurements",
                       description="Every comparison whose B changed what the what-if models "
                       "(slots, a setting a hint advised) recorded A's prediction and B's "
                       "measurement; this lists them and their errors.")
    a.add_argument("--json", action="store_true", help="print the record as JSON")
    h = sub.add_parser("history", help="every stored run of one cell, with regressions flagged",
                       description="Every stored run of a cell (found by a run id, a label or "
                       "a JupyterLab cell id), oldest first: wall time, warm or cold, the band "
                       "the warm runs before it set, regressions and improvements, and what "
                       "moved (docs/compare.md).")
    h.add_argument("what", metavar="RUN_OR_LABEL", help="a run id, a label or a cell id")
    h.add_argument("--json", action="store_true", help="print the rows as JSON")
    g = sub.add_parser("regressions", help="the cells whose latest warm run regressed",
                       description="One line per cell (runs grouped as history groups them) "
                       "whose latest warm run is beyond the band of its usual runs: the run, "
                       "its wall time, the band, and what moved (docs/compare.md).")
    g.add_argument("--notebook", metavar="PATH", default=None,
                   help="only the cells run in this notebook (its path as stored)")
    g.add_argument("--app", metavar="APP_ID", default=None,
                   help="only the runs of this Spark application (a kernel's session)")
    g.add_argument("--json", action="store_true", help="print the rows as JSON")


# ---------------------------------------------------------------------------
def _write(path: str, text: str, run_id: str, force: bool) -> str:
    """Export a report (``atomic.write_export``: never through a symlink, never over a file
    that is not an earlier export of the same run unless ``--force``)."""
    from .atomic import write_export

    try:
        return write_export(os.path.expanduser(path), text, run_id, force=force)
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}; choose a writable path") \
            from None


def _report(analysis_or_run, series: dict | None = None) -> str:
    from .render import report_html
    return report_html(analysis_or_run, series)


def _text_summary(s: dict, run_id: str | None) -> str:
    name = s.get("app_name") or ""
    lines = [f"{s.get('app_id') or '?'}{'  ' + name if name else ''}  (Spark "
             f"{s.get('spark_version') or '?'})",
             f"wall {fmt.ms(s.get('wall_ms'))} over {fmt.count(len(s.get('jobs') or []), 'job')}, "
             f"{fmt.count(len(s.get('stages') or []), 'stage')}, "
             f"{fmt.count(s.get('task_attempts', 0), 'task attempt')} "
             f"on {fmt.count(s.get('slots', 0), 'slot')}",
             f"verdict: {s.get('verdict', '')}"]
    parts = sorted(((v.get("ms", 0.0), v.get("label", k), v.get("kind", ""))
                    for k, v in (s.get("breakdown") or {}).items()), reverse=True)
    total = sum(p[0] for p in parts) or 1.0
    top = [f"{label} {ms / total:.0%}{' (est.)' if kind == 'estimated' else ''}"
           for ms, label, kind in parts[:4] if ms > 0]
    if top:
        lines.append("task time: " + ", ".join(top))
    w = s.get("whatif") or {}
    if w:
        lines.append(f"what-if: infinite disk {fmt.ms(w.get('infinite_disk_ms'))} (upper bound), "
                     f"infinite network {fmt.ms(w.get('infinite_network_ms'))}, no GC "
                     f"{fmt.ms(w.get('no_gc_ms'))}, no stragglers {fmt.ms(w.get('no_stragglers_ms'))}, "
                     f"2x slots {fmt.slots_x2(w)}; model error "
                     f"{(w.get('model_error') or 0):.1%}")
    memory = s.get("memory") or {}
    if memory.get("sizing_line"):
        kind = memory.get("sizing_kind") if memory.get("sizing") else None
        lines.append(f"memory: {memory['sizing_line']}" + (f" ({kind})" if kind else ""))
    for warning in s.get("warnings") or []:
        lines.append(f"warning: {warning}")
    if run_id:
        lines.append(f"saved as run {run_id}: jupyter-perf report {run_id} -o report.html")
    return "\n".join(lines)


def cmd_analyze(args: argparse.Namespace) -> int:
    from .analysis import analyze
    from .collect.past import load_source

    run = load_source(args.source, app=args.app, attempt=args.attempt)
    analysis = analyze(run)
    summary = analysis.summary()
    run_id = None
    if not args.no_save:
        from .service.saving import save
        if save(run, summary) is not None:
            run_id = run.run_id
        else:
            summary["warnings"] = list(summary.get("warnings") or []) + run.warnings[-1:]
    if args.html:
        out = _write(args.html, _report(analysis), run.run_id, args.force)
        print(f"wrote {out}", file=sys.stderr if args.json else sys.stdout)
    if args.json:
        json.dump(summary, sys.stdout, indent=1, allow_nan=False)
        sys.stdout.write("\n")
    elif not args.html:
        print(_text_summary(summary, run_id))
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    from .store import default_store

    store = default_store()
    if args.rebuild_index:
        print(store.rebuild_index())
        return 0
    if args.delete:
        if not store.delete(args.delete):
            raise CliError(f"no stored run {args.delete}; list them with `jupyter-perf runs`")
        print(f"deleted {args.delete}")
        return 0
    if args.limit < 1:
        raise CliError("--limit must be at least 1")
    rows = store.list(limit=args.limit)
    if args.json:
        json.dump(rows, sys.stdout, indent=1, default=str)
        sys.stdout.write("\n")
        return 0
    if not rows:
        print(f"no runs stored in {store.root} yet: run a %%perfmeasure cell or "
              "`jupyter-perf analyze EVENTLOG`")
        return 0
    print(f"{'RUN_ID':<24} {'CREATED (UTC)':<19} {'KIND':<8} {'WALL':>9} {'TASKS':>7}  WHAT")
    for r in rows:
        created = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime((r.get("created_ms") or 0) / 1000))
        what = fmt.run_title(r)
        print(f"{r['run_id']:<24} {created:<19} {(r.get('kind') or ''):<8} "
              f"{fmt.ms(r.get('wall_ms')):>9} {r.get('num_tasks') or 0:>7}  {what[:60]}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from .store import default_store

    try:
        run = default_store().load(args.run_id)
    except KeyError:
        raise CliError(f"no stored run {args.run_id}; list them with `jupyter-perf runs`") from None
    from .analysis import analyze
    from .service.history import report_series
    out = _write(args.output, _report(analyze(run), report_series(run)), run.run_id, args.force)
    print(f"wrote {out}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from .render.compare import comparison_text
    from .service.comparing import compare, export_comparison

    c = compare(args.a, args.b, record=not args.no_record)
    summary = c.summary()
    if args.html:
        try:
            out = export_comparison(c, args.html, force=args.force)
        except OSError as exc:
            raise CliError(f"cannot write {args.html}: {exc.strerror or exc}; choose a writable "
                           "path") from None
        print(f"wrote {out}", file=sys.stderr if args.json else sys.stdout)
    if args.json:
        json.dump(summary, sys.stdout, indent=1, allow_nan=False)
        sys.stdout.write("\n")
    elif not args.html:
        print(comparison_text(summary))
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    from .service.history import history, history_text

    h = history(args.what)
    if args.json:
        rows = json.loads(h.drop(columns=["start"]).to_json(orient="records"))
        json.dump({"runs": rows, "change_points": h.attrs.get("change_points") or [],
                   "notes": h.attrs.get("notes") or []}, sys.stdout, indent=1, default=str)
        sys.stdout.write("\n")
    else:
        print(history_text(h))
    return 0


def cmd_regressions(args: argparse.Namespace) -> int:
    from .service.history import regressions, regressions_text

    r = regressions(notebook=args.notebook, app_id=args.app)
    if args.json:
        rows = json.loads(r.drop(columns=["start"]).to_json(orient="records"))
        json.dump({"regressions": rows} | {k: r.attrs.get(k) for k in
                                           ("cells", "known", "need_more", "scope")},
                  sys.stdout, indent=1, default=str)
        sys.stdout.write("\n")
    else:
        print(regressions_text(r))
    return 0


def cmd_accuracy(args: argparse.Namespace) -> int:
    from .store import accuracy, default_store

    store = default_store()
    rows, damaged = accuracy.read(store.root)
    if damaged:
        print(f"jupyter-perf: skipped {damaged} damaged line{'s' if damaged != 1 else ''} of "
              f"{accuracy.path_of(store.root)}", file=sys.stderr)
    if args.json:
        json.dump({"predictions": rows, "digest": accuracy.digest(rows)}, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    if not rows:
        print("no prediction recorded yet: compare a run with one that changed the slots or "
              "applied a hint's setting (jupyter-perf compare A B, %perfmeasure compare)")
        return 0
    print(f"{'A':<24} {'B':<24} {'B CHANGED':<34} {'PREDICTED':>10} {'MEASURED':>10} {'ERROR':>7}")
    for r in rows:
        err = f"{r['signed_error']:+.1%}" if r.get("signed_error") is not None else "n/a"
        pred = fmt.ms(r["predicted_ms"]) if r.get("predicted_ms") is not None else "n/sim."
        print(f"{r['a'] or '':<24} {r['b'] or '':<24} {(r['what'] or '')[:34]:<34} {pred:>10} "
              f"{fmt.ms(r['measured_ms']):>10} {err:>7}")
    print()
    for d in accuracy.digest(rows):
        if d["median_error"] is None:
            print(f"{d['what']}: {fmt.count(d['comparisons'], 'comparison')}, none simulated "
                  "(suggestions only)")
            continue
        print(f"{d['what']}: {fmt.count(d['predicted'], 'prediction')}, median error "
              f"{d['median_error']:.1%}, max {d['max_error']:.1%} (median signed "
              f"{d['median_signed_error']:+.1%}: + predicted slower than measured)"
              + (f"; {d['not_simulated']} not simulated" if d["not_simulated"] else ""))
    return 0


class _StderrLines(logging.Handler):
    """The store's repairs ("the run index … was damaged; … rebuilt it") as one
    ``jupyter-perf:`` line each on stderr (looked up when written: tests swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        print(f"jupyter-perf: {record.getMessage()}", file=sys.stderr)


def _say_warnings() -> None:
    logger = logging.getLogger("jupyter_perf")
    if not any(isinstance(h, _StderrLines) for h in logger.handlers):
        logger.addHandler(_StderrLines(logging.WARNING))


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    _say_warnings()
    handlers = {"analyze": cmd_analyze, "runs": cmd_runs, "report": cmd_report,
                "compare": cmd_compare, "accuracy": cmd_accuracy, "history": cmd_history,
                "regressions": cmd_regressions}
    try:
        return handlers[args.command](args)
    except JupyterPerfError as exc:   # EventLogError, SourceError and RestError are ones
        print(f"jupyter-perf: error: {one_line(exc, with_type=False)}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("jupyter-perf: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:          # `jupyter-perf analyze ... --json | head`
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except Exception as exc:  # never a traceback for users
        if os.environ.get("JUPYTER_PERF_DEBUG"):
            raise
        print(f"jupyter-perf: error: {one_line(exc)}; rerun with "
              "JUPYTER_PERF_DEBUG=1 for details and report it", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
