"""A real JupyterLab server and Debian's Chromium for the UI tests (one of each per module).

Each UI module runs in its own pytest process (scripts/run_tests.py); the fixtures in
tests/ui/conftest.py start one `jupyter lab` (free port, token, its own config, settings,
workspaces and run store) and one headless Chromium through playwright, never a
downloaded browser.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
TOKEN = "jupyter-perf-ui-test-token"
REPO = Path(__file__).resolve().parents[2]

#: The kernel of the current main-area widget is idle.
KERNEL_IDLE_JS = """() => {
    const w = window.jupyterapp.shell.currentWidget;
    const k = w && w.sessionContext && w.sessionContext.session
        && w.sessionContext.session.kernel;
    return k && k.status === 'idle';
}"""


#: Heights of a drawn report output (``.jp-perf-report-output``): its own, its Bokeh root's,
#: and [scrollHeight, clientHeight] of the root, the renderer's node (which is the output
#: element itself) and the output's row in the output area.
REPORT_SIZES_JS = """el => {
    const root = el.querySelector('.jp-perf-report-root');
    const out = el.closest('.jp-OutputArea-child');   // the output's row in the area
    return {node: el.getBoundingClientRect().height,
            root: root.getBoundingClientRect().height,
            rootScroll: [root.scrollHeight, root.clientHeight],
            outScroll: [out.scrollHeight, out.clientHeight],
            nodeScroll: [el.scrollHeight, el.clientHeight]};
}"""


def assert_sized_to_content(report) -> None:
    """The report output is as tall as the report, and nothing in it scrolls vertically."""
    sizes = report.evaluate(REPORT_SIZES_JS)
    assert sizes["root"] > 0 and abs(sizes["node"] - sizes["root"]) <= 1, sizes
    for key in ("rootScroll", "outScroll", "nodeScroll"):
        scroll, client = sizes[key]
        assert scroll <= client + 1, (key, sizes)


def require_browser() -> None:
    """Skip the calling module (at import) without Chromium or playwright."""
    import pytest

    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"browser tests need Chromium at {CHROMIUM} (apt-get install chromium, "
                    "or set CHROMIUM=/path/to/chromium)", allow_module_level=True)
    pytest.importorskip("playwright.sync_api",
                        reason="browser tests need playwright (pip install playwright; never "
                               "`playwright install`: we use Debian's Chromium)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, proc: subprocess.Popen, log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"jupyter lab did not answer {url} in {timeout} s:\n"
                       f"{log.read_text()[-3000:]}")


def start_lab(base: Path, notebooks: list[Path]):
    """Start `jupyter lab` with ``notebooks`` copied into a fresh root; yields its facts.

    A generator: use it with ``yield from`` in a fixture, so the server stops after the
    module.
    """
    root = base / "root"
    root.mkdir()
    for nb in notebooks:
        shutil.copy(nb, root / nb.name)
    home = base / "perf-home"
    env = dict(os.environ)
    env.update({
        "JUPYTER_PERF_HOME": str(home),
        "JUPYTER_CONFIG_DIR": str(base / "config"),
        "JUPYTERLAB_SETTINGS_DIR": str(base / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": "127.0.0.1",
    })
    # no "get notified about Jupyter news?" toast over screenshots
    news = base / "settings" / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    port = free_port()
    log = base / "lab.log"
    bin_dir = Path(sys.executable).parent
    jupyter = bin_dir / "jupyter"
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [str(jupyter) if jupyter.exists() else "jupyter", "lab", "--no-browser",
             f"--IdentityProvider.token={TOKEN}", f"--port={port}", "--ServerApp.ip=127.0.0.1",
             "--ServerApp.port_retries=0", f"--ServerApp.root_dir={root}",
             "--LabApp.expose_app_in_browser=True"]
            + (["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []),
            cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(f"{url}/api/status?token={TOKEN}", proc, log)
        yield {"url": url, "root": root, "home": home, "log": log, "proc": proc}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def launch_chromium(sync_api):
    """Debian's Chromium, headless, through playwright (a context manager's value)."""
    return sync_api.chromium.launch(
        executable_path=CHROMIUM, headless=True,
        args=["--no-sandbox", "--disable-background-networking",
              "--disable-component-update", "--disable-sync", "--disable-gpu"])


def open_page(browser, url: str, viewport=(1280, 720)):
    """A new page on ``url`` (with the token) once JupyterLab's notebook has cells."""
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    page = context.new_page()
    page.set_default_timeout(60_000)
    messages: list[str] = []
    page.on("console", lambda m: messages.append(f"{m.type}: {m.text}"))
    page.console_messages = messages  # for failure messages
    page.goto(url)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
    page.wait_for_function("() => window.jupyterapp !== undefined", timeout=60_000)
    return context, page


def write_notebook(base: Path, name: str, sources: list[str]) -> Path:
    """A Python 3 notebook of code cells at ``base / name``."""
    import nbformat

    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(c) for c in sources],
        metadata={"kernelspec": {"display_name": "Python 3", "language": "python",
                                 "name": "python3"}})
    path = base / name
    nbformat.write(nb, path)
    return path


@contextlib.contextmanager
def offline_page(browser, path: Path):
    """A page on the file at ``path`` in a context with the network off; the page's
    ``requests`` lists every URL it asked for (an offline report asks for its file only)."""
    context = browser.new_context(offline=True, viewport={"width": 1400, "height": 900})
    try:
        page = context.new_page()
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.requests = requests
        page.goto(path.as_uri())
        yield page
    finally:
        context.close()


def api(lab, path: str, method: str = "GET"):
    """The server extension's REST API with the token: JSON, or text for other types."""
    request = urllib.request.Request(f"{lab['url']}/jupyter-perf/api/{path}", method=method,
                                     headers={"Authorization": f"token {TOKEN}"})
    with urllib.request.urlopen(request, timeout=120) as response:
        body = response.read()
        return json.loads(body) if response.headers.get_content_type() == "application/json" \
            else body.decode()


def notebook_js(name: str) -> str:
    """JS expression: the open notebook panel of ``name``, whichever tab is current."""
    return (f"Array.from(window.jupyterapp.shell.widgets('main'))"
            f".find(w => w.context && w.context.path === {json.dumps(name)})")


def lab_fixtures(notebook: Path):
    """A module's ``lab`` (a JupyterLab with ``notebook`` in its root) and ``page`` (that
    notebook open, layout reset) fixtures: ``lab, page = lab_fixtures(NOTEBOOK)``."""
    import pytest

    @pytest.fixture(scope="module")
    def lab(tmp_path_factory):
        yield from start_lab(tmp_path_factory.mktemp("lab"), [notebook])

    @pytest.fixture(scope="module")
    def page(lab, browser):
        context, page = open_page(
            browser, f"{lab['url']}/lab/tree/{notebook.name}?reset&token={TOKEN}")
        yield page
        context.close()

    return lab, page


def open_sidebar(page):
    """The "Spark runs" sidebar, opened (its tab clicked only when it is hidden)."""
    tab = page.locator('.jp-SideBar.jp-mod-left .lm-TabBar-tab[title="Spark runs"]')
    tab.wait_for()
    if page.locator("#jupyter-perf-sidebar").is_hidden():
        tab.click()
    sidebar = page.locator("#jupyter-perf-sidebar")
    sidebar.wait_for(state="visible")
    return sidebar
