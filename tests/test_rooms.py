"""The room rules of jupyter_perf, as one test (docs/architecture.md draws the same table).

What is checked, on the import graph of every ``.py`` file under ``jupyter_perf/``:

(a) no import cycles among jupyter_perf's modules. Every ``import`` counts wherever it is
    written: at the top of a module, inside a function, under ``if TYPE_CHECKING``. A package's
    ``__init__.py`` is a module of its own (``jupyter_perf``, ``jupyter_perf.server``).
    ``from pkg import sub`` depends on ``pkg.sub`` when ``sub`` is a module, else on ``pkg``;
    importing ``pkg.sub`` is not counted as importing ``pkg`` too (every module would then
    depend on ``jupyter_perf/__init__.py``, the facade that imports everything).
(b) ``analysis/`` imports from jupyter_perf only ``analysis`` and ``model``, and from
    outside only numpy, pandas, ruptures and the standard library — so no pyspark, py4j, IPython,
    ipykernel, jupyter*, tornado or Bokeh (what ``tests/analysis/test_imports.py`` checked
    before it was folded in here; that file now checks the same at run time).
(c) ``model`` imports nothing of jupyter_perf (numpy, pandas and the standard library only).
(d) ``collect/`` never imports render, server, kernel, service or cli.
And, holding today: render/ never imports kernel, server or cli; store/ never imports kernel,
server or render; server/ never imports kernel. All of these follow from ``ROOMS`` below,
which lists, per room, everything it MAY import; a module outside every room fails too.

Why a small ``ast`` + ``graphlib`` graph builder and not grimp or import-linter: grimp 3.20
(the graph builder behind import-linter) was tried first. It reads function-level imports, but
it does not see modules in a directory without ``__init__.py`` inside a package (grimp issue
#298, open): ``jupyter_perf/render/tabs/`` is such a directory, so its 7 modules were missing
from grimp's graph (88 modules for 95 files), and ``from .tabs.memory import memory_tab`` in
``render/report.py`` was recorded as an import of ``jupyter_perf`` itself — a false edge, and
the tabs' own imports unchecked. import-linter's contracts run on that same graph. The
builder here reads every file on disk with the standard library (``ast`` for the imports,
``graphlib.TopologicalSorter`` for the cycles), needs no test dependency, and is itself tested
below on planted packages.

The checker fails when it should. ``test_the_checker_reports_a_planted_cycle`` plants
``pkg/__init__ -> pkg.a -> (in a function) pkg.b -> (from pkg import a) pkg.a`` in tmp_path;
``test_the_real_tree_with_one_planted_import_fails`` copies jupyter_perf and adds one
function-level ``from .analysis import analyze`` to ``model.py``. Observed messages (long
lines wrapped here)::

    import cycle: pkg.a -> pkg.b -> pkg.a
        pkg/a.py:3  from . import b  (in a function)
        pkg/b.py:1  from pkg import a

    import cycle: jupyter_perf.analysis -> jupyter_perf.analysis.result
        -> jupyter_perf.analysis.breakdown -> jupyter_perf.model -> jupyter_perf.analysis
        jupyter_perf/analysis/__init__.py:21  from .result import Analysis, analyze
        jupyter_perf/analysis/result.py:12  from . import breakdown as _bd
        jupyter_perf/analysis/breakdown.py:25  from ..model import Run
        jupyter_perf/model.py:596  from .analysis import analyze  (in a function)

    model may import nothing of jupyter_perf; found:
        jupyter_perf/model.py:596  jupyter_perf.model -> jupyter_perf.analysis
            `from .analysis import analyze`  (in a function)

On the tree as it stood when this test was written (the server restructuring, which removes
them, still under way), test_no_import_cycles failed with (long lines wrapped here)::

    import cycle: jupyter_perf.server -> jupyter_perf.server.handlers -> jupyter_perf.server
        jupyter_perf/server/__init__.py:49  from .handlers import setup_handlers  (in a function)
        jupyter_perf/server/handlers.py:21  from . import API_NAMESPACE

    import cycle: jupyter_perf.server.compare_api -> jupyter_perf.server.handlers
        -> jupyter_perf.server.compare_api
        jupyter_perf/server/compare_api.py:20  from .handlers import PerfError, PerfHandler, ReportHandler
        jupyter_perf/server/handlers.py:208  from .compare_api import compare_handlers  (in a function)
"""
from __future__ import annotations

import ast
import fnmatch
import functools
import graphlib
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = "jupyter_perf"
PACKAGE_DIR = Path(__file__).resolve().parents[1] / PACKAGE

# ---------------------------------------------------------------------------------------------
# The rooms. A room is jupyter_perf's top-level module or package of that name (its own modules
# may always import each other); "jupyter_perf" is the package's __init__.py, the public facade.
# "may import": the other rooms of jupyter_perf it may import ("*": any).
# "third party": "only A B" (plus the standard library) or "never A B" (fnmatch patterns); "" any.
# docs/architecture.md shows this table: change both together.
# ---------------------------------------------------------------------------------------------
LEAVES = "errors atomic constants fmt _version _jupyter_paths"
SPARK = "pyspark py4j sparkmeasure"
KERNEL_SIDE = "IPython ipykernel"
JUPYTER = f"{KERNEL_SIDE} jupyter* tornado"

ROOMS: dict[str, tuple[str, str]] = {
    # room           (may import: rooms of jupyter_perf,  third party)
    "jupyter_perf":   ("*", ""),
    "kernel":         (f"collect model analysis render store service {LEAVES}", ""),
    "collect":        (f"model store {LEAVES}", f"never {JUPYTER} bokeh"),
    "model":          ("", "only numpy pandas"),
    "analysis":       ("model fmt", "only numpy pandas ruptures"),
    "render":         (f"model analysis {LEAVES}", f"never {SPARK} {KERNEL_SIDE}"),
    "store":          (f"model {LEAVES}", f"never {SPARK} {KERNEL_SIDE} tornado bokeh"),
    "service":        (f"model analysis render store {LEAVES}", f"never {SPARK} {KERNEL_SIDE}"),
    "server":         (f"render store service {LEAVES}", f"never {SPARK} {KERNEL_SIDE}"),
    "cli":            (f"collect model analysis render store service {LEAVES}", ""),
    "errors":         ("", ""),
    "atomic":         ("errors", ""),
    "constants":      ("", ""),
    "fmt":            ("", ""),
    "_version":       ("", ""),
    "_jupyter_paths": ("", ""),
}


# ---------------------------------------------------------------------------------------------
# The import graph.
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Import:
    importer: str           # dotted module name
    imported: str           # a module of the package, or a third-party / stdlib top-level name
    internal: bool          # imported is a module of the package
    where: str              # path:line, relative to the package's parent
    text: str               # the import statement's first line
    in_function: bool

    def line(self) -> str:
        return f"{self.where}  {self.text}" + ("  (in a function)" if self.in_function else "")


@dataclass
class Graph:
    package: str
    modules: set[str]       # every module on disk (namespace directories included)
    imports: list[Import]

    def internal(self) -> dict[str, dict[str, None]]:
        """module -> the modules of the package it imports (sorted: the same cycle is found
        first on every run, whatever the hash seed)."""
        out: dict[str, dict[str, None]] = {m: {} for m in sorted(self.modules)}
        for i in sorted(self.imports, key=lambda i: (i.importer, i.imported)):
            if i.internal and i.imported != i.importer:
                out[i.importer][i.imported] = None
        return out

    def edge(self, importer: str, imported: str) -> Import:
        return next(i for i in self.imports if i.importer == importer and i.imported == imported)


def build_graph(package_dir: Path) -> Graph:
    """Every module under ``package_dir`` and every import statement in it (read with ast,
    never imported)."""
    package, base = package_dir.name, package_dir.parent
    files: dict[str, Path] = {}
    for path in sorted(package_dir.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = path.relative_to(base).with_suffix("").parts
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    modules = set(files)
    for name in list(files):           # namespace directories: importable, run no code
        parts = name.split(".")
        modules.update(".".join(parts[:k]) for k in range(1, len(parts)))

    def resolve(name: str) -> str:     # a dotted name -> the module that defines it
        while name not in modules and "." in name:
            name = name.rsplit(".", 1)[0]
        return name

    imports: list[Import] = []

    def read(name: str, path: Path) -> None:    # one module's import statements, into imports
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        is_package = path.name == "__init__.py"
        here = name.split(".") if is_package else name.split(".")[:-1]

        def add(target: str, node: ast.stmt, in_function: bool) -> None:
            internal = target.split(".")[0] == package
            imports.append(Import(
                importer=name, imported=resolve(target) if internal else target.split(".")[0],
                internal=internal, where=f"{path.relative_to(base)}:{node.lineno}",
                text=lines[node.lineno - 1].strip(), in_function=in_function))

        def visit(node: ast.AST, in_function: bool) -> None:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    add(alias.name, node, in_function)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    up = here[:len(here) - (node.level - 1)]
                    origin = ".".join(up + ([node.module] if node.module else []))
                else:
                    origin = node.module or ""
                for alias in node.names:
                    sub = f"{origin}.{alias.name}"
                    add(sub if alias.name != "*" and sub in modules else origin, node, in_function)
            inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                     ast.Lambda))
            for child in ast.iter_child_nodes(node):
                visit(child, inner)

        visit(ast.parse(source, filename=str(path)), False)

    for name, path in files.items():
        read(name, path)
    return Graph(package, modules, imports)


# ---------------------------------------------------------------------------------------------
# The checks: each returns readable failure messages, [] when the rule holds.
# ---------------------------------------------------------------------------------------------
def find_cycles(graph: Graph, most: int = 20) -> list[str]:
    """Import cycles, each with the import statement of every hop. graphlib finds one cycle
    at a time; one of its edges is set aside and the search repeated, so every cycle is
    reported with at least one of its edges (fixing those may reveal others)."""
    deps = graph.internal()
    messages = []
    for _ in range(most):
        try:
            graphlib.TopologicalSorter(deps).prepare()
            break
        except graphlib.CycleError as err:
            # graphlib lists each node before the node that imports it: reversed, an import chain.
            chain = list(reversed(err.args[1]))[:-1]
            start = chain.index(min(chain))          # the same cycle always reads the same
            chain = chain[start:] + chain[:start] + [chain[start]]
            hops = [graph.edge(a, b) for a, b in zip(chain, chain[1:])]
            messages.append("import cycle: " + " -> ".join(chain) + "\n"
                            + "\n".join("    " + hop.line() for hop in hops))
            deps[chain[-2]].pop(chain[-1])
    return messages


def room_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _words(text: str) -> list[str]:
    return text.split()


def check_room(graph: Graph, room: str, rooms: dict[str, tuple[str, str]] = ROOMS) -> list[str]:
    """The imports of ``room``'s modules that its row of ``rooms`` does not allow."""
    may, third_party = rooms[room]
    allowed = set(_words(may)) | {room}
    kind, *patterns = _words(third_party) or [""]
    wrong_room, wrong_external = [], []
    for i in graph.imports:
        if room_of(i.importer) != room:
            continue
        if i.internal:
            if "*" not in allowed and room_of(i.imported) not in allowed:
                wrong_room.append(i)
        elif i.imported not in sys.stdlib_module_names:
            hit = any(fnmatch.fnmatchcase(i.imported, p) for p in patterns)
            if (kind == "only" and not hit) or (kind == "never" and hit):
                wrong_external.append(i)
    messages = []
    if wrong_room:
        rule = f"may import only {', '.join(sorted(allowed - {room}))}" if allowed - {room} \
            else "may import nothing"
        messages.append(f"{room} {rule} of {graph.package}; found:\n" + "\n".join(
            f"    {i.where}  {i.importer} -> {i.imported}  `{i.text}`"
            + ("  (in a function)" if i.in_function else "") for i in wrong_room))
    if wrong_external:
        rule = (f"may import only {', '.join(patterns)} and the standard library"
                if kind == "only" else f"never imports {', '.join(patterns)}")
        messages.append(f"{room} {rule}; found:\n" + "\n".join(
            f"    {i.where}  {i.importer} -> {i.imported}  `{i.text}`" for i in wrong_external))
    return messages


def rooms_missing(graph: Graph, rooms: dict[str, tuple[str, str]] = ROOMS) -> list[str]:
    return sorted(m for m in graph.modules if room_of(m) not in rooms)


@functools.lru_cache(maxsize=None)
def package_graph() -> Graph:
    return build_graph(PACKAGE_DIR)


# ---------------------------------------------------------------------------------------------
# The rules on jupyter_perf.
# ---------------------------------------------------------------------------------------------
def test_every_module_is_in_a_room():
    assert rooms_missing(package_graph()) == [], \
        "modules outside every room: add their room to ROOMS here and to docs/architecture.md"


def test_no_import_cycles():
    cycles = find_cycles(package_graph())
    assert not cycles, "\n\n".join(cycles)


@pytest.mark.parametrize("room", sorted(ROOMS))
def test_room_imports_only_what_its_row_allows(room):
    problems = check_room(package_graph(), room)
    assert not problems, "\n\n".join(problems)


def test_the_four_rules_follow_from_the_table():
    """ROOMS is the one place the rules live; this pins the four the design names, so a row
    widened by mistake fails here and not silently."""
    may = {room: set(_words(row[0])) for room, row in ROOMS.items()}
    never = {"*", "jupyter_perf"}   # the facade imports these rooms: back to it is a cycle
    assert may["model"] == set() and ROOMS["model"][1] == "only numpy pandas"             # (c)
    # (b): besides model, only the leaf formatter (stdlib only: it is itself "fmt": ("", ""))
    # ruptures: the change-point test of a cell's run series (analysis/series.py, issue T)
    assert may["analysis"] == {"model", "fmt"} and \
        ROOMS["analysis"][1] == "only numpy pandas ruptures"
    assert may["fmt"] == set() and ROOMS["fmt"] == ("", "")
    assert not may["collect"] & ({"render", "server", "kernel", "service", "cli"} | never)  # (d)
    assert not may["render"] & ({"kernel", "server", "cli"} | never)
    assert not may["store"] & ({"kernel", "server", "render"} | never)
    assert not may["server"] & ({"kernel"} | never)


def _doc_rows(path: Path) -> dict[str, tuple[set[str], str | None]]:
    """room -> (may import, third party or None) from the rooms table of a Markdown page."""
    rows = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.replace("\\|", "/").strip().strip("|").split("|")]
        first = cells[0].strip("`")
        if len(cells) < 3 or not first.startswith(("jupyter_perf/", "__init__", "kernel/",
                                                   "collect/", "model", "analysis/", "render/",
                                                   "store/", "service/", "server/", "cli")):
            continue
        name = first.removeprefix("jupyter_perf/").rstrip("/").removesuffix(".py")
        room = PACKAGE if name == "__init__" else name
        words = {"everything": "*", "nothing": "", "leaves": LEAVES, "the facade": PACKAGE}
        may = set(_words(" ".join(words.get(w, w) for w in
                                  (t.strip() for t in cells[2].split(",")))))
        rows[room] = (may, cells[3].replace("\\", "") if len(cells) > 3 else None)
    return rows


@pytest.mark.parametrize("doc", ["docs/architecture.md", "README.md"])
def test_the_docs_show_this_table(doc):
    """docs/architecture.md and README's "How it is built" list every room (leaves aside) with
    what ROOMS lets it import; architecture.md also its third-party rule."""
    rows = _doc_rows(PACKAGE_DIR.parent / doc)
    assert set(rows) == set(ROOMS) - set(_words(LEAVES)), f"{doc}: rooms {sorted(rows)}"
    for room, (may, third_party) in rows.items():
        assert may == set(_words(ROOMS[room][0])), f"{doc}, {room}: may import {sorted(may)}"
        if third_party is not None:
            kind, *names = _words(ROOMS[room][1]) or ["any"]
            assert third_party == " ".join([kind, ", ".join(names)]).strip(), (doc, room)


# ---------------------------------------------------------------------------------------------
# The checker fails when it should.
# ---------------------------------------------------------------------------------------------
def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / next(iter(files)).split("/")[0]


def test_the_checker_reports_a_planted_cycle(tmp_path):
    pkg = _write(tmp_path, {
        "pkg/__init__.py": "from . import a\n",
        "pkg/a.py": "def f():\n    # imported late, still a dependency\n    from . import b\n",
        "pkg/b.py": "from pkg import a\n",
        "pkg/c.py": "import pkg.a\n",
    })
    cycles = find_cycles(build_graph(pkg))
    assert cycles == [
        "import cycle: pkg.a -> pkg.b -> pkg.a\n"
        "    pkg/a.py:3  from . import b  (in a function)\n"
        "    pkg/b.py:1  from pkg import a"], cycles
    # and without the planted line, none
    (pkg / "b.py").write_text("")
    assert find_cycles(build_graph(pkg)) == []


def test_the_checker_sees_the_package_init_and_directories_without_init(tmp_path):
    pkg = _write(tmp_path, {
        "pkg/__init__.py": "from .tabs.one import x\n",
        "pkg/tabs/one.py": "import pyspark.sql\nfrom .. import util\nx = 1\n",
        "pkg/util.py": "def f():\n    import pkg\n",
    })
    graph = build_graph(pkg)
    assert {"pkg", "pkg.tabs", "pkg.tabs.one", "pkg.util"} == graph.modules
    assert {(i.importer, i.imported) for i in graph.imports} == {
        ("pkg", "pkg.tabs.one"), ("pkg.tabs.one", "pyspark"), ("pkg.tabs.one", "pkg.util"),
        ("pkg.util", "pkg")}
    assert find_cycles(graph) == [
        "import cycle: pkg -> pkg.tabs.one -> pkg.util -> pkg\n"
        "    pkg/__init__.py:1  from .tabs.one import x\n"
        "    pkg/tabs/one.py:2  from .. import util\n"
        "    pkg/util.py:2  import pkg  (in a function)"]
    rooms = {"pkg": ("*", ""), "tabs": ("util", "only numpy pandas"), "util": ("", "")}
    assert check_room(graph, "tabs", rooms) == [
        "tabs may import only numpy, pandas and the standard library; found:\n"
        "    pkg/tabs/one.py:1  pkg.tabs.one -> pyspark  `import pyspark.sql`"]
    assert check_room(graph, "util", rooms) == [
        "util may import nothing of pkg; found:\n"
        "    pkg/util.py:2  pkg.util -> pkg  `import pkg`  (in a function)"]


def test_the_real_tree_with_one_planted_import_fails(tmp_path):
    copy = tmp_path / PACKAGE
    shutil.copytree(PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__", "*.js",
                                                                     "*.map", "*.css"))
    model = copy / "model.py"
    model.write_text(model.read_text()
                     + "\n\ndef _planted(run):\n    from .analysis import analyze\n"
                       "    return analyze(run)\n")
    planted_line = len(model.read_text().splitlines()) - 1
    graph = build_graph(copy)
    cycles = find_cycles(graph)
    hop = f"jupyter_perf/model.py:{planted_line}  from .analysis import analyze  (in a function)"
    planted = [c for c in cycles if "    " + hop in c.splitlines()[1:]]
    assert len(planted) == 1, "\n\n".join(cycles)
    assert "jupyter_perf.model -> jupyter_perf.analysis" in planted[0].splitlines()[0]
    assert check_room(graph, "model") == [
        "model may import nothing of jupyter_perf; found:\n"
        f"    jupyter_perf/model.py:{planted_line}  jupyter_perf.model -> jupyter_perf.analysis"
        "  `from .analysis import analyze`  (in a function)"]
