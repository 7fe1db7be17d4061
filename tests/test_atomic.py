"""Atomic writes and exports (N2): never through a symlink, never over a file the user owns
that is not an earlier export of the same run, files as the user's umask says; and every
export path (``render.export``, ``jupyter-perf report -o``, ``%perfmeasure export``) obeys."""
from __future__ import annotations

import os
import stat

import pytest
from test_store import sample_run

from jupyter_perf.atomic import ExportError, export_owner, utf8_safe, write_export, write_text_atomic
from jupyter_perf.cli import main
from jupyter_perf.store import RunStore

NOTEBOOK = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n'


@pytest.fixture
def notebook_and_alias(tmp_path):
    """``nb-alias.html`` -> ``keep.ipynb``, as in the issue."""
    nb = tmp_path / "keep.ipynb"
    nb.write_text(NOTEBOOK)
    alias = tmp_path / "nb-alias.html"
    os.symlink(nb.name, alias)
    return nb, alias


def test_an_export_never_writes_through_a_symlink(notebook_and_alias):
    nb, alias = notebook_and_alias
    for force in (False, True):
        with pytest.raises(ExportError, match="is a symbolic link; jupyter-perf never writes "
                                              "through one: choose another file name"):
            write_export(alias, "<html>report</html>", "20261122-015800-3f9a1c", force=force)
    assert nb.read_text() == NOTEBOOK and os.path.islink(alias)
    dangling = nb.parent / "dangling.html"
    os.symlink("not-there.html", dangling)
    with pytest.raises(ExportError):
        write_export(dangling, "<html/>", "20261122-015800-3f9a1c")
    assert not (nb.parent / "not-there.html").exists()


def test_an_export_replaces_only_an_earlier_export_of_the_same_run(tmp_path):
    out = tmp_path / "report.html"
    write_export(out, "<html>first</html>", "run-a")
    assert export_owner(out) == "run-a" and out.read_text().startswith("<html>first</html>\n")
    write_export(out, "<html>second</html>", "run-a")                 # its own: replaced
    assert out.read_text().startswith("<html>second</html>")
    with pytest.raises(ExportError, match="already exists and is not an export of run run-b; "
                                          "choose another file name, or move that file away"):
        write_export(out, "<html>other run</html>", "run-b")
    assert out.read_text().startswith("<html>second</html>")
    mine = tmp_path / "mine.html"
    mine.write_text("<html>the user's own page</html>")
    with pytest.raises(ExportError):
        write_export(mine, "<html>report</html>", "run-a")
    assert mine.read_text() == "<html>the user's own page</html>"
    write_export(mine, "<html>report</html>", "run-a", force=True)   # the user said so
    assert export_owner(mine) == "run-a"
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".")]  # no temp files left


def test_an_export_refuses_folders_and_fifos(tmp_path):
    (tmp_path / "dir.html").mkdir()
    os.mkfifo(tmp_path / "pipe.html")
    with pytest.raises(ExportError, match="is a folder"):
        write_export(tmp_path / "dir.html", "<html/>", "r", force=True)
    with pytest.raises(ExportError, match="not a regular file"):
        write_export(tmp_path / "pipe.html", "<html/>", "r", force=True)
    assert stat.S_ISFIFO(os.lstat(tmp_path / "pipe.html").st_mode)


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_files_follow_the_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        write_export(tmp_path / "export.html", "<html/>", "r")
        write_text_atomic(tmp_path / "cache.html", "<html/>")
    finally:
        os.umask(old)
    for name in ("export.html", "cache.html"):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == mode


def test_lone_surrogates_do_not_stop_a_write(tmp_path):
    text = "<html>label \ud800 and an emoji \U0001F600</html>"
    write_export(tmp_path / "x.html", text, "r")
    written = (tmp_path / "x.html").read_text(encoding="utf-8")
    assert "label \ufffd and an emoji \U0001F600" in written
    assert utf8_safe("plain") == "plain"


# -- every export path --------------------------------------------------------------------
def test_render_export_cli_report_and_the_magic_refuse_the_symlink(notebook_and_alias, jp_home,
                                                                  capsys, ipshell):
    from jupyter_perf.render import export

    nb, alias = notebook_and_alias
    run = sample_run()
    RunStore(str(jp_home)).save(run)
    with pytest.raises(ExportError):
        export(run, alias)
    assert main(["report", run.run_id, "-o", str(alias)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a symbolic link" in err and "Traceback" not in err
    assert main(["report", run.run_id, "-o", str(alias), "--force"]) == 2
    capsys.readouterr()
    ipshell.run_cell(f"%perfmeasure export {run.run_id} {alias}")
    err = capsys.readouterr().err
    assert err.startswith("perfmeasure: ") and "is a symbolic link" in err, err
    assert nb.read_text() == NOTEBOOK and os.path.islink(alias)
    # and a second `report -o` of the same run replaces its own export
    out = nb.parent / "r.html"
    assert main(["report", run.run_id, "-o", str(out)]) == 0
    assert main(["report", run.run_id, "-o", str(out)]) == 0 and export_owner(out) == run.run_id
