"""``jupyter-perf analyze|runs|report`` on a real Spark event log; errors are one line, exit 2."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import jupyter_perf as jp
from jupyter_perf.cli import main


def cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_analyze_json_is_the_summary(apps, capsys):
    code, out, err = cli(capsys, "analyze", apps["local"], "--json", "--no-save")
    assert code == 0 and err == ""
    got = json.loads(out)
    want = jp.analyze(jp.load_eventlog(apps["local"])).summary()
    for s in (got, want):
        s.pop("run_id")
    assert got == want
    assert got["kind"] == "eventlog" and got["stages"] and got["verdict"]


def test_analyze_saves_then_runs_report_and_delete(apps, capsys, tmp_path):
    code, out, _ = cli(capsys, "analyze", apps["retry"])
    assert code == 0
    assert "verdict: " in out and "task attempts on 2 slots" in out and "what-if: " in out
    assert "\nmemory: " in out                      # the sizing line (or "No sizing change")
    run_id = out.strip().splitlines()[-1].split()[3].rstrip(":")
    code, out, _ = cli(capsys, "runs", "--limit", "5")
    assert code == 0 and run_id in out and "eventlog" in out
    code, out, _ = cli(capsys, "runs", "--json")
    assert [r["run_id"] for r in json.loads(out)] == [run_id]
    report = tmp_path / "report.html"
    code, out, _ = cli(capsys, "report", run_id, "-o", str(report))
    assert code == 0 and str(report) in out
    assert "<html" in report.read_text().lower()
    code, out, _ = cli(capsys, "runs", "--delete", run_id)
    assert code == 0 and "deleted" in out
    code, out, _ = cli(capsys, "runs")
    assert "no runs stored" in out


def test_analyze_html(apps, capsys, tmp_path):
    out_file = tmp_path / "app.html"
    code, out, _ = cli(capsys, "analyze", apps["cluster"], "--html", str(out_file), "--no-save")
    assert code == 0 and "wrote" in out
    assert "<html" in out_file.read_text().lower()


@pytest.mark.parametrize("argv, expected", [
    (["analyze", "/no/such/eventlog"], "no event log at /no/such/eventlog: check the path"),
    (["analyze", "EMPTY"], "is empty"),
    (["analyze", "http://127.0.0.1:9", "--app", "app-1"], "no Spark UI or History Server answers"),
    (["analyze", "LOG", "--app", "app-1"], "drop --app"),
    (["report", "nope", "-o", "x.html"], "no stored run nope; list them with `jupyter-perf runs`"),
    (["runs", "--delete", "nope"], "no stored run nope"),
    (["analyze", "LOG", "--html", "/no/such/dir/x.html", "--no-save"], "cannot write"),
    (["analyze"], "the following arguments are required"),
    (["frobnicate"], "invalid choice"),
])
def test_errors_are_one_line_with_exit_code_2(argv, expected, capsys, tmp_path, apps):
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    argv = [str(empty) if a == "EMPTY" else apps["local"] if a == "LOG" else a for a in argv]
    try:
        code = main(argv)
    except SystemExit as exc:          # argparse's own errors
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("jupyter-perf"), err
    assert expected in err and "Traceback" not in err


def test_console_entry_point_never_prints_a_traceback(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.run([sys.executable, "-m", "jupyter_perf.cli", "analyze", str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "not a rolled event log" in proc.stderr


def test_runs_lists_durations_as_the_report_writes_them(capsys, jp_home):
    from test_store import sample_run

    from jupyter_perf import fmt
    from jupyter_perf.store import RunStore

    run = sample_run(label="formatted")
    RunStore(str(jp_home)).save(run)
    code, out, _ = cli(capsys, "runs")
    assert code == 0
    [line] = [line for line in out.splitlines() if run.run_id in line]
    assert f" {fmt.ms(run.wall_ms)} " in line and "formatted" in line


def test_text_output_prints_the_memory_sizing_line():
    """The sizing line of summary()["memory"] with its kind; a spill's answer is estimated."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "analysis"))
    from test_advice_effective import spill_run

    from jupyter_perf.cli import _text_summary

    s = jp.analyze(spill_run()).summary()
    line = next(x for x in _text_summary(s, None).splitlines() if x.startswith("memory: "))
    assert line == f"memory: {s['memory']['sizing_line']} (estimated)"
    assert "spark.driver.memory=2g" in line
