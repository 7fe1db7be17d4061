"""On-CPU stack samples of a measuring window, with async-profiler (issue P).

Opt-in: ``jp.measure(fn, profile=True)`` and ``%%perfmeasure --profile``. On a local master
(``local``, ``local[N]``) every task runs in the driver JVM, so async-profiler is loaded into
that JVM through py4j and started when the window starts, stopped when it ends; its collapsed
stacks, with the thread name as the root frame, are kept with the run
(``run.extra["profile"]``, read by ``analysis/profile.py``).

Executors in JVMs of their own on this machine (local-cluster, a standalone cluster here) get
it as an agent through ``jcmd``. Where it cannot reach the task threads — executors on other
machines, no ``jcmd``, no library for the platform, every executor refusing the agent — the
window samples Spark's executor thread dumps instead (:class:`ThreadDumpSampler`, the coarser
method, labelled ``thread dumps (every N ms)``); :data:`METHOD_ENV` forces that fallback. A
Spark Connect window (no SparkContext here) samples the server's JVMs that way through its
Spark UI (:class:`ServerDumpProfiler`). Where neither runs — no jar, no Spark UI, another window
of the same JVM already profiling — the run has no profile and ONE warning line says why; the
report is otherwise unchanged.

**The jar, and why it is not added to the JVM's launch.** async-profiler is the Maven Central
package :data:`PACKAGE`; its jar carries the native libraries. Putting it into every session's
``spark.jars.packages`` would make each JVM start resolve one more package (seconds on a busy
machine; a failure without network, which ``collect/session.py`` would then have to undo)
although most sessions never profile. Instead the jar is found or fetched only when a window
asks for a profile: :data:`JAR_ENV` (a path: the user's choice, or a test's missing jar), a
class already on the driver's class path (the user put :data:`PACKAGE` into
``spark.jars.packages``), the jupyter-perf store's copy, Ivy's and Maven's local caches; else
it is fetched once with Ivy, the Maven client Spark itself uses (pyspark's own ``ivy-*.jar``),
into the store (``<store>/profiler/``). It is loaded into the running driver JVM through a
class loader of its own, so a session started without it can still be profiled.

**Thread names.** async-profiler names a thread by the name it has when the profile is dumped;
Spark's pooled task threads are renamed at every task ("Executor task launch worker for task
3.0 in stage 5.0 (TID 42)"), so the name tells that a sample is a task thread's, not which task
it ran. ``analysis/profile.py`` maps samples to stages and operators by their stacks.
"""
from __future__ import annotations

import glob
import os
import platform
import re
import shutil
import subprocess
import threading
import time
import weakref
from typing import Any

from ..errors import one_line
from .periodic import PeriodicSampler
from .pyprofiler import PY_ROOT

PACKAGE = "tools.profiler:async-profiler:4.1"
GROUP, ARTIFACT, VERSION = PACKAGE.split(":")
JAR_NAME = f"{ARTIFACT}-{VERSION}.jar"
#: A path to the async-profiler jar to use instead of finding or fetching one.
JAR_ENV = "JUPYTER_PERF_ASYNC_PROFILER"
#: The sampling interval (ms of CPU time per sample, per thread).
INTERVAL_MS = 10
#: How long fetching the jar with Ivy may take, once (s).
FETCH_TIMEOUT_S = 180.0
#: At most this many distinct task-thread stacks are kept (the heaviest); the rest are
#: counted in one "[other stacks]" line so the sample total stays right.
MAX_STACKS = 20000
METHOD = "async-profiler"
CLASS = "one.profiler.AsyncProfiler"
#: Platforms async-profiler's jar has a native library for (its folder in the jar).
_PLATFORMS = {("Linux", "x86_64"): "linux-x64", ("Linux", "amd64"): "linux-x64",
              ("Linux", "aarch64"): "linux-arm64", ("Linux", "arm64"): "linux-arm64",
              ("Darwin", "x86_64"): "macos", ("Darwin", "arm64"): "macos"}
TASK_THREAD = "Executor task launch worker"
# Spark 4 renames a pooled task thread "Executor task idle worker-N" between tasks, which is
# what it is called when the profile is dumped at the window's end
TASK_ROOTS = ("[" + TASK_THREAD, "[Executor task idle worker")
_LAMBDA = re.compile(r"\$\$Lambda\$\d+[./]0x[0-9a-fA-F]+")
_TID = re.compile(r" tid=\d+\]$")
_HIDDEN = re.compile(r"0x[0-9a-fA-F]{6,}")
_DIGITS = re.compile(r"\d+$")

# One profiler per JVM (async-profiler is a singleton in its process): gateway -> handle.
_handles: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
_busy: "weakref.WeakKeyDictionary[Any, bool]" = weakref.WeakKeyDictionary()
_guard = threading.Lock()


class ProfilerUnavailable(Exception):
    """Why there is no profile, in one line (the run's warning)."""


def platform_dir() -> str | None:
    return _PLATFORMS.get((platform.system(), platform.machine()))


def is_single_jvm(master: str | None) -> bool:
    """Tasks run in the driver's JVM: ``local`` or ``local[N]`` / ``local[N, F]``."""
    m = (master or "").strip().lower()
    return m == "local" or m.startswith("local[")


# -- the jar ------------------------------------------------------------------------------
def cache_dir() -> str:
    from ..store import home_dir

    return os.path.join(home_dir(), "profiler")


def _cached_jars() -> list[str]:
    home = os.path.expanduser("~")
    found = [os.path.join(cache_dir(), JAR_NAME),
             os.path.join(home, ".ivy2", "jars", f"{GROUP}_{ARTIFACT}-{VERSION}.jar"),
             os.path.join(home, ".m2", "repository", *GROUP.split("."), ARTIFACT, VERSION,
                          JAR_NAME)]
    found += sorted(glob.glob(os.path.join(home, ".ivy2*", "jars",
                                           f"{GROUP}_{ARTIFACT}-{VERSION}.jar")))
    found += sorted(glob.glob(os.path.join(home, ".ivy2*", "cache", GROUP, ARTIFACT, "jars",
                                           JAR_NAME)))
    return found


def ivy_jar() -> str | None:
    """pyspark's own Ivy (the Maven client ``spark.jars.packages`` uses)."""
    try:
        import pyspark
    except ImportError:
        return None
    jars = sorted(glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars",
                                         "ivy-*.jar")))
    return jars[-1] if jars else None


def fetch_jar(timeout: float = FETCH_TIMEOUT_S) -> str:
    """Fetch :data:`PACKAGE` once with Ivy into :func:`cache_dir`; its path. Raises
    :class:`ProfilerUnavailable` with the reason."""
    ivy = ivy_jar()
    if ivy is None:
        raise ProfilerUnavailable("no Ivy jar in pyspark to fetch it with")
    folder = cache_dir()
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, JAR_NAME)
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") \
        if os.environ.get("JAVA_HOME") else "java"
    cmd = [java, "-cp", ivy, "org.apache.ivy.Main", "-dependency", GROUP, ARTIFACT, VERSION,
           "-confs", "default", "-retrieve",
           os.path.join(folder, "[artifact]-[revision].[ext]")]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ProfilerUnavailable(f"fetching {PACKAGE} failed ({one_line(exc)})") from exc
    if not os.path.isfile(target):
        lines = [ln.strip() for ln in (out.stdout + out.stderr).splitlines()
                 if "unresolved" in ln.lower() or "error" in ln.lower()]
        raise ProfilerUnavailable(f"{PACKAGE} could not be fetched"
                                  + (f" ({lines[0][:200]})" if lines else ""))
    return target


def find_jar(fetch: bool = True) -> str:
    """The jar to load: :data:`JAR_ENV`, else a cached copy, else fetched (``fetch``)."""
    chosen = os.environ.get(JAR_ENV, "").strip()
    if chosen:
        if not os.path.isfile(chosen):
            raise ProfilerUnavailable(f"{JAR_ENV}={chosen} is not a file")
        return chosen
    for path in _cached_jars():
        if os.path.isfile(path):
            return path
    if not fetch:
        raise ProfilerUnavailable(f"{PACKAGE} is not in a local cache")
    return fetch_jar()


# -- the profiler in the driver JVM ---------------------------------------------------------
def _on_classpath(jvm):
    from py4j.java_gateway import JavaClass

    found = jvm
    for part in CLASS.split("."):
        found = getattr(found, part)
    return found if isinstance(found, JavaClass) else None


def _load(sc):
    """The AsyncProfiler instance of ``sc``'s JVM (loaded once per JVM)."""
    gateway, jvm = sc._gateway, sc._jvm
    handle = _handles.get(gateway)
    if handle is not None:
        return handle
    if not os.environ.get(JAR_ENV, "").strip():
        cls = _on_classpath(jvm)
        if cls is not None:       # the user added the package to spark.jars.packages
            handle = _handles[gateway] = cls.getInstance()
            return handle
    jar = find_jar()
    url = jvm.java.io.File(jar).toURI().toURL()
    urls = gateway.new_array(jvm.java.net.URL, 1)
    urls[0] = url
    loader = jvm.java.net.URLClassLoader(urls, jvm.java.lang.ClassLoader.getSystemClassLoader())
    cls = loader.loadClass(CLASS)
    method = cls.getMethod("getInstance", gateway.new_array(jvm.java.lang.Class, 0))
    handle = method.invoke(None, gateway.new_array(jvm.java.lang.Object, 0))
    _handles[gateway] = handle
    return handle


def _java_message(exc: BaseException) -> str:
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            return one_line(Exception(str(java.toString())), with_type=False)
        except Exception:
            pass
    return one_line(exc, with_type=False)


# -- executors in JVMs of their own on this machine (local-cluster, a local standalone) -----
#: How long one ``jcmd`` may take (s).
JCMD_TIMEOUT_S = 60.0
AGENT_METHOD = "async-profiler (agent)"
_EXECUTOR_ID = re.compile(r"--executor-id\s+(\S+)")
_APP_ID = re.compile(r"--app-id\s+(\S+)")


def executor_processes(app_id: str, ps_output: str | None = None) -> dict[int, str]:
    """pid -> executor id of ``app_id``'s executor JVMs running on this machine (Spark's
    ``CoarseGrainedExecutorBackend`` processes, found by their command lines)."""
    if ps_output is None:
        try:
            # -ww: whole command lines, whatever COLUMNS says (pytest sets it)
            ps_output = subprocess.run(["ps", "-ww", "-eo", "pid=,args="], capture_output=True,
                                       text=True, timeout=30).stdout
        except (OSError, subprocess.TimeoutExpired):
            return {}
    out = {}
    for line in ps_output.splitlines():
        pid, _, args = line.strip().partition(" ")
        app = _APP_ID.search(args)
        if "CoarseGrainedExecutorBackend" in args and app and app.group(1) == app_id \
                and pid.isdigit():
            found = _EXECUTOR_ID.search(args)
            out[int(pid)] = found.group(1) if found else "?"
    return out


def native_library() -> str:
    """async-profiler's native library for this platform, taken out of the jar once."""
    import zipfile

    plat = platform_dir()
    if plat is None:
        raise ProfilerUnavailable(f"async-profiler has no library for {platform.system()} "
                                  f"{platform.machine()}")
    jar = find_jar()
    target = os.path.join(cache_dir(), f"{VERSION}-{plat}", "libasyncProfiler.so")
    if not os.path.isfile(target):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        try:
            with zipfile.ZipFile(jar) as z:
                data = z.read(f"{plat}/libasyncProfiler.so")
        except (OSError, KeyError, zipfile.BadZipFile) as exc:
            raise ProfilerUnavailable(f"no {plat} library in {jar} ({one_line(exc)})") from exc
        tmp = f"{target}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    return target


def _jcmd_path() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and os.path.isfile(os.path.join(home, "bin", "jcmd")):
        return os.path.join(home, "bin", "jcmd")
    return shutil.which("jcmd")


def _agent(jcmd: str, pid: int, lib: str, args: str) -> str:
    """Load async-profiler into JVM ``pid`` with ``args`` (JDK's ``JVMTI.agent_load``); ''
    when it did, else why not."""
    try:
        out = subprocess.run([jcmd, str(pid), "JVMTI.agent_load", lib, f'"{args}"'],
                             capture_output=True, text=True, timeout=JCMD_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return one_line(exc)
    text = (out.stdout + out.stderr).strip()
    return "" if out.returncode == 0 and "return code: 0" in text else \
        (text.splitlines()[-1] if text else f"jcmd exit {out.returncode}")


def _each(fn, items):
    """``fn(item)`` for every item at once (each is a ``jcmd``: a JVM start of its own)."""
    from concurrent.futures import ThreadPoolExecutor

    items = list(items)
    if not items:
        return []
    with ThreadPoolExecutor(max_workers=min(8, len(items))) as pool:
        return list(pool.map(fn, items))


class WindowProfiler:
    """Start with :meth:`start` (raises :class:`ProfilerUnavailable`), end with
    :meth:`stop` -> the profile dict for ``run.extra["profile"]``.

    ``local[N]``: async-profiler in the driver's JVM through py4j. Executors in JVMs of their
    own on this machine (``local-cluster``, a standalone cluster of this machine): loaded into
    each executor JVM as an agent with JDK's ``jcmd <pid> JVMTI.agent_load`` (the library
    taken out of the jar), started and stopped the same way; each writes its collapsed stacks
    to a file read here. Executors that start during the window are not sampled."""

    def __init__(self, sc, interval_ms: int = INTERVAL_MS):
        self.sc = sc
        self.interval_ms = int(interval_ms)
        self.handle = None
        self._gateway = None
        self._agents: dict[int, str] = {}     # pid -> executor id, sampling
        self._lib = ""
        self._jcmd = ""
        self._dir = ""
        self._missed: list[str] = []
        self._dumps: ThreadDumpSampler | None = None    # the coarser fallback
        self._fallback = ""

    def _options(self) -> str:
        return f"event=cpu,interval={self.interval_ms}ms,threads"

    def start(self) -> "WindowProfiler":
        master = str(self.sc.master)
        setting = method_setting()
        gateway = self.sc._gateway
        with _guard:
            if _busy.get(gateway):
                raise ProfilerUnavailable("another measuring window of this Spark session is "
                                          "profiling (one profile per JVM at a time)")
            _busy[gateway] = True
        self._gateway = gateway
        try:
            if setting == "thread-dumps":
                self._start_dumps(f"{METHOD_ENV}=thread-dumps")
            else:
                try:
                    self._start_async(master)
                except Unreachable as exc:
                    self._start_dumps(str(exc), exc)
        except ProfilerUnavailable:
            self._release(gateway)
            raise
        except Exception as exc:
            self._release(gateway)
            raise ProfilerUnavailable(f"async-profiler did not start "
                                      f"({_java_message(exc)})") from exc
        return self

    def _start_async(self, master: str) -> None:
        single = is_single_jvm(master)
        if platform_dir() is None:
            raise (ProfilerUnavailable if single else Unreachable)(
                f"async-profiler has no library for {platform.system()} {platform.machine()}")
        chosen = os.environ.get(JAR_ENV, "").strip()
        if chosen and not os.path.isfile(chosen):
            raise ProfilerUnavailable(f"{JAR_ENV}={chosen} is not a file")
        if single:
            self.handle = _load(self.sc)
            self.handle.execute(f"start,{self._options()}")
        else:
            self._start_agents(master)

    def _start_dumps(self, why: str, cause: BaseException | None = None) -> None:
        """The coarser fallback (:class:`ThreadDumpSampler`) through the driver's UI; ``why``
        is kept with the profile (``fallback``)."""
        ui = getattr(self.sc, "uiWebUrl", None)
        try:
            if not ui:
                raise ProfilerUnavailable("no Spark UI to read executor thread dumps from "
                                          "(spark.ui.enabled=false)")
            self._dumps = ThreadDumpSampler(str(ui), str(self.sc.applicationId),
                                            dump_interval_ms()).start()
        except ProfilerUnavailable as exc:
            if cause is None:
                raise
            raise ProfilerUnavailable(f"{cause}; {exc}") from exc
        self._fallback = why

    def _start_agents(self, master: str) -> None:
        pids = executor_processes(str(self.sc.applicationId))
        if not pids:
            raise Unreachable(
                f"the executors of master {master} run in JVMs of their own, none of them "
                "on this machine; jupyter-perf profiles executors here only (local[N], "
                "local-cluster, a standalone cluster of this machine)")
        jcmd = _jcmd_path()
        if jcmd is None:
            raise Unreachable("no jcmd (JDK) to load async-profiler into the "
                              "executors' JVMs; install a JDK or use local[N]")
        import tempfile

        self._lib, self._jcmd = native_library(), jcmd
        self._dir = tempfile.mkdtemp(prefix="jupyter-perf-profile-")
        results = _each(lambda pid: _agent(jcmd, pid, self._lib, f"start,{self._options()}"),
                        pids)
        for (pid, ex), why in zip(pids.items(), results):
            if why:
                self._missed.append(f"executor {ex}: {why}")
            else:
                self._agents[pid] = ex
        if not self._agents:
            shutil.rmtree(self._dir, ignore_errors=True)
            raise Unreachable("async-profiler did not start in the executors' JVMs ("
                              + "; ".join(self._missed)[:300] + ")")

    def _release(self, gateway) -> None:
        with _guard:
            _busy.pop(gateway, None)

    def stop(self) -> dict[str, Any]:
        """Stop sampling; the profile (``stacks``: [[collapsed stack, samples], ...])."""
        if self.handle is None and not self._agents and self._dumps is None:
            raise ProfilerUnavailable("the profiler was not started")
        try:
            if self._dumps is not None:
                record = self._dumps.stop()
                if self._fallback:
                    record["fallback"] = self._fallback
                return record
            if self.handle is not None:
                self.handle.execute("stop")
                return profile_record(str(self.handle.execute("collapsed")), self.interval_ms)
            return self._stop_agents()
        except ProfilerUnavailable:
            raise
        except Exception as exc:
            raise ProfilerUnavailable(f"async-profiler did not stop cleanly "
                                      f"({_java_message(exc)})") from exc
        finally:
            self._release(self._gateway)
            self.handle = None
            self._agents = {}
            self._dumps = None

    def _stop_agents(self) -> dict[str, Any]:
        agents = dict(self._agents)

        def stop_one(pid: int) -> str:
            path = os.path.join(self._dir, f"{pid}.collapsed")
            return _agent(self._jcmd, pid, self._lib, f"stop,file={path},collapsed")

        results = _each(stop_one, agents)
        texts: dict[str, str] = {}
        for (pid, ex), why in zip(agents.items(), results):
            path = os.path.join(self._dir, f"{pid}.collapsed")
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
            except OSError:
                text = ""
            if why or not text:
                self._missed.append(f"executor {ex}: {why or 'no output'}")
                continue
            texts[ex] = f"{texts[ex]}\n{text}" if ex in texts else text
        shutil.rmtree(self._dir, ignore_errors=True)
        if not texts:
            raise ProfilerUnavailable("async-profiler gave no samples from the executors ("
                                      + "; ".join(self._missed)[:300] + ")")
        record = executors_profile_record(texts, self.interval_ms)
        if self._missed:
            record["note"] = ("not sampled: " + "; ".join(self._missed))[:500]
        return record


class ServerDumpProfiler:
    """A Spark Connect server's JVMs (this process has no SparkContext, so no async-profiler):
    the thread-dump fallback (:class:`ThreadDumpSampler`) through the server's Spark UI, the
    same start/stop as :class:`WindowProfiler`."""

    WHY = "a Spark Connect server: its JVMs are sampled through its Spark UI's thread dumps"

    def __init__(self, ui_url: str, app_id: str):
        self._dumps = ThreadDumpSampler(ui_url, app_id, dump_interval_ms())

    def start(self) -> "ServerDumpProfiler":
        self._dumps.start()
        return self

    def stop(self) -> dict[str, Any]:
        record = self._dumps.stop()
        record["fallback"] = self.WHY
        return record


# -- collapsed stacks as the run keeps them --------------------------------------------------
def _thread_group(name: str) -> str:
    """A JVM thread's name without its numbers ("GC Thread#1" -> "GC Thread#")."""
    return _DIGITS.sub("", name).strip() or name


def parse_collapsed(text: str) -> list[tuple[list[str], int]]:
    """``frame;frame;... count`` lines -> (frames root first, count); bad lines skipped."""
    out = []
    for line in text.splitlines():
        stack, _, count = line.rstrip().rpartition(" ")
        if not stack or not count.isdigit():
            continue
        out.append((stack.split(";"), int(count)))
    return out


def _stack_key(frames: list[str]) -> str:
    """One collapsed stack as the run keeps it: a task thread's in full (lambda class names
    and thread ids normalised, so equal stacks merge), another JVM thread's as one frame per
    thread group ("[jvm] C2 CompilerThre")."""
    root = _TID.sub("]", frames[0]) if frames else ""
    if root.startswith(TASK_ROOTS):
        return ";".join([root] + [_HIDDEN.sub("0x", _LAMBDA.sub("$$Lambda", f))
                                  for f in frames[1:]])
    name = root[1:-1] if root.startswith("[") and root.endswith("]") else root
    return f"[jvm] {_thread_group(name)}"


def stack_rows(counts: dict[tuple[str, str | None], int],
               sampled: tuple[str, ...] = (),
               other: str = f"[{TASK_THREAD} (other stacks)]",
               ) -> tuple[list[list[Any]], dict[str, int]]:
    """The profile's rows, one format for every method: ``[stack, samples, executor id]``
    (``[stack, samples]`` for the executor None: the driver's own JVM, named by
    ``analysis/profile.default_executor``), heaviest first; the heaviest :data:`MAX_STACKS`
    kept, the rest one "(other stacks)" row per executor so every total stays right. With
    them: the task-thread samples per executor id (``record["executors"]``: the sum of its
    task rows; 0 for an executor of ``sampled`` that has none). ``other``: the root of the
    "(other stacks)" rows."""
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0], kv[0][1] or ""))
    rest: dict[str | None, int] = {}
    for (_, ex), n in ordered[MAX_STACKS:]:
        rest[ex] = rest.get(ex, 0) + n
    kept = [(s, n, ex) for (s, ex), n in ordered[:MAX_STACKS]]
    kept += [(other, n, ex) for ex, n in rest.items()]
    executors = dict.fromkeys(sampled, 0)
    for stack, n, ex in kept:
        if ex is not None and stack.startswith(TASK_ROOTS):
            executors[ex] = executors.get(ex, 0) + n
    return [[s, n] if ex is None else [s, n, ex] for s, n, ex in kept], executors


def _on_cpu_record(texts: dict[str | None, str], interval_ms: int,
                   method: str) -> dict[str, Any]:
    counts: dict[tuple[str, str | None], int] = {}
    for executor, text in texts.items():
        for frames, count in parse_collapsed(text):
            key = (_stack_key(frames), executor)
            counts[key] = counts.get(key, 0) + count
    stacks, executors = stack_rows(counts, tuple(e for e in texts if e is not None))
    record: dict[str, Any] = {
        "method": method, "interval_ms": interval_ms, "event": "cpu",
        "sample": f"one on-CPU sample every {interval_ms} ms of a thread's CPU time",
        "threads": "names as at the end of the window", "stacks": stacks}
    if executors:
        record["executors"] = executors
    return record


def profile_record(text: str, interval_ms: int, method: str = METHOD) -> dict[str, Any]:
    """The profile of the driver's JVM (``local[N]``) as a run keeps it: rows
    ``[stack, samples]`` (:func:`stack_rows`)."""
    return _on_cpu_record({None: text}, interval_ms, method)


def executors_profile_record(texts: dict[str, str], interval_ms: int,
                             method: str = AGENT_METHOD) -> dict[str, Any]:
    """The profile of executor JVMs of their own (executor id -> its collapsed stacks) as a
    run keeps it: rows ``[stack, samples, executor id]`` and ``executors`` (:func:`stack_rows`)."""
    return _on_cpu_record(dict(texts), interval_ms, method)


def merge_python(record: dict[str, Any], python: dict[str, Any]) -> dict[str, Any]:
    """The window's profile record with the Python workers' samples
    (``collect/pyprofiler.PythonProfiler.stop``) added: their rows ``[stack, samples,
    executor id]`` (:func:`stack_rows`; root ``[Python worker]``) after the JVM's, and
    ``record["python"]``: ``method``, ``interval_ms``, ``rate_hz``, ``sample`` (what one
    sample is), ``samples``, ``processes`` (py-spy runs) and ``note`` (why none or some are
    missing; "" when all went well)."""
    python = dict(python)
    counts = python.pop("counts", {}) or {}
    rows, _ = stack_rows(counts, other=f"{PY_ROOT} (other stacks)")
    out = dict(record)
    out["stacks"] = list(record.get("stacks") or []) + rows
    out["python"] = python
    return out


# -- the coarser fallback: Spark's executor thread dumps, sampled ------------------------------
#: The setting that chooses how a profiled window samples (env): ``auto`` (the default:
#: async-profiler where it can reach the task threads, else thread dumps) or ``thread-dumps``
#: (thread dumps only, also where async-profiler could run).
METHOD_ENV = "JUPYTER_PERF_PROFILER"
METHOD_CHOICES = ("auto", "thread-dumps")
#: How often every executor's threads are dumped (ms), unless :data:`DUMP_INTERVAL_ENV` says.
#: Measured (docs/benchmarks.md, Issue P: benchmarks/thread_dump_cost.py): one dump costs
#: ~70 ms of CPU in the driver's and the executor's JVMs together (Spark dumps every thread
#: with its locks, then the driver writes it as JSON) and ~2 ms in Python, and takes 0.1-0.3 s;
#: at 250 ms two executors' dumps took ~30% of a 2-core host. Once a second: ~7% there
#: (estimated from the CPU per dump; a 4 s query measured 1.16x), a cost only a profile that
#: cannot be had otherwise is worth, and still a few samples per executor and second.
DUMP_INTERVAL_MS = 1000
#: The setting (env) for another rate (ms, at least 100).
DUMP_INTERVAL_ENV = "JUPYTER_PERF_THREAD_DUMP_MS"
#: How often the list of live executors is read again (s): executors come and go.
EXECUTORS_EVERY_S = 2.0
_TASK_NAME = re.compile(r"^Executor task launch worker for task [\d.]+ in stage (\d+)\.(\d+)")


def dump_method(interval_ms: int) -> str:
    """The method label of a thread-dump profile: it says how coarse it is."""
    return f"thread dumps (every {int(interval_ms)} ms)"


def dump_interval_ms() -> int:
    """:data:`DUMP_INTERVAL_ENV`, checked, else :data:`DUMP_INTERVAL_MS`."""
    text = os.environ.get(DUMP_INTERVAL_ENV, "").strip()
    if not text:
        return DUMP_INTERVAL_MS
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 100:
        raise ProfilerUnavailable(f"{DUMP_INTERVAL_ENV}={text!r} is not a whole number of ms "
                                  "of at least 100")
    return value


def method_setting() -> str:
    """:data:`METHOD_ENV`, checked: ``auto`` or ``thread-dumps``."""
    value = os.environ.get(METHOD_ENV, "").strip().lower() or "auto"
    if value not in METHOD_CHOICES:
        raise ProfilerUnavailable(f"{METHOD_ENV}={value!r} is not one of "
                                  + ", ".join(METHOD_CHOICES))
    return value


class Unreachable(ProfilerUnavailable):
    """async-profiler cannot reach the executors' task threads (they run on other machines,
    no ``jcmd``, no library for this platform, every executor JVM refused the agent): the
    window samples thread dumps instead, where Spark's UI answers."""


def java_frame(element: str) -> str:
    """One element of a JVM thread dump (``StackTraceElement.toString()``:
    ``[loader/][module@version/]pkg.Class.method(File.java:12)``) as async-profiler writes a
    Java frame (``pkg/Class.method``), so one set of rules reads both."""
    text = element.strip()
    cut = text.find("(")
    if cut > 0:
        text = text[:cut]
    if "//" in text:                      # a class loader and no named module: "app//..."
        text = text.split("//", 1)[1]
    elif "@" in text.split("(")[0]:       # a module with its version: "java.base@17/..."
        at = text.index("@")
        slash = text.find("/", at)
        text = text[slash + 1:] if slash > 0 else text
    elif "/" in text and "/0x" not in text:   # a module without a version: "java.sql/..."
        text = text.split("/", 1)[1]
    cls, dot, method = text.rpartition(".")
    if not dot:
        return text
    return f"{cls.replace('.', '/')}.{method}"


def dump_stacks(threads: Any) -> list[str]:
    """The collapsed stacks (root first, no count) of the RUNNABLE task threads of one
    executor's thread dump (``/executors/{id}/threads``). The root names the task's stage
    attempt, ``[Executor task launch worker in stage 5.0]`` (the thread's name at the dump:
    the task it ran then), so equal stacks of one stage merge."""
    out = []
    for t in threads if isinstance(threads, list) else []:
        if not isinstance(t, dict) or t.get("threadState") != "RUNNABLE":
            continue
        found = _TASK_NAME.match(str(t.get("threadName") or ""))
        if not found:
            continue
        trace = t.get("stackTrace")
        elems = trace.get("elems") if isinstance(trace, dict) else trace
        if not isinstance(elems, list) or not elems:
            continue
        frames = [java_frame(str(e)) for e in reversed(elems)]
        frames = [_HIDDEN.sub("0x", _LAMBDA.sub("$$Lambda", f)) for f in frames]
        root = f"[{TASK_THREAD} in stage {found.group(1)}.{found.group(2)}]"
        out.append(";".join([root] + frames))
    return out


class ThreadDumpSampler(PeriodicSampler):
    """Every :data:`DUMP_INTERVAL_MS`, the threads of each live executor that runs tasks,
    from Spark's REST API (``/api/v1/applications/{app}/executors/{id}/threads``: the driver
    asks the executor over RPC, wherever it runs); each RUNNABLE task thread's stack is one
    sample. Coarser than async-profiler: a RUNNABLE thread may be waiting in native code
    (a socket read), the rate is a few per second, and a dump stops the executor's threads
    at a safepoint. ``start()`` raises :class:`ProfilerUnavailable`; ``stop()`` -> the
    profile record."""

    fixed_rate = True     # a dump every interval of wall time, whatever one round took

    def __init__(self, ui_url: str, app_id: str, interval_ms: int = DUMP_INTERVAL_MS):
        from .rest import SparkRest

        super().__init__("jupyter-perf thread dumps", int(interval_ms) / 1000.0)
        self.rest = SparkRest(ui_url, app_id, timeout=10.0, deadline=10.0)
        self.interval_ms = int(interval_ms)
        self.counts: dict[tuple[str, str], int] = {}     # (stack, executor) -> samples
        self.dumps: dict[str, int] = {}                  # executor -> dumps read
        self.errors: dict[str, str] = {}                 # executor -> last error
        self.rounds = 0
        self._executors: list[str] = []
        self._listed = 0.0
        self._began = self._ended = 0.0     # (not _started: threading.Thread's own)

    def _list_executors(self) -> None:
        from .rest import RestError

        try:
            rows = self.rest.get("/executors")
        except RestError as exc:
            if not self._executors:
                raise ProfilerUnavailable(f"Spark's executor list could not be read for "
                                          f"thread dumps ({one_line(exc)})") from exc
            return
        self._listed = time.monotonic()
        # the executors that run tasks: the driver only on a local master (cores there)
        self._executors = [str(r["id"]) for r in rows if isinstance(r, dict) and "id" in r
                           and r.get("isActive", True) and int(r.get("totalCores") or 0) > 0]

    def start(self) -> "ThreadDumpSampler":
        self._list_executors()
        self._began = time.monotonic()
        super().start()
        return self

    def sample(self) -> None:
        if time.monotonic() - self._listed >= EXECUTORS_EVERY_S:
            try:
                self._list_executors()
            except ProfilerUnavailable as exc:     # none known yet: try again next round
                self.errors["the executor list"] = str(exc)
                self._listed = time.monotonic()
        self.sample_once()

    def sample_once(self) -> None:
        from .rest import RestError

        for ex in list(self._executors):
            if self._stop_event.is_set():
                return
            try:
                threads = self.rest.get(f"/executors/{ex}/threads")
            except RestError as exc:      # gone, or busy: its samples of this round are lost
                self.errors[ex] = one_line(exc)
                continue
            self.dumps[ex] = self.dumps.get(ex, 0) + 1
            for stack in dump_stacks(threads):
                self.counts[(stack, ex)] = self.counts.get((stack, ex), 0) + 1
        self.rounds += 1

    def stop(self) -> dict[str, Any]:
        self.halt(timeout=30)
        self._ended = time.monotonic()
        self.rest.close()
        if not self.dumps:
            raise ProfilerUnavailable("no executor thread dump could be read" + (
                f" ({'; '.join(self._missed())[:300]})" if self.errors
                else " (no executor ran tasks during the window)"))
        return self.record()

    def _missed(self) -> list[str]:
        return [f"{e}: {w}" if e == "the executor list" else f"executor {e}: {w}"
                for e, w in self.errors.items()]

    def record(self) -> dict[str, Any]:
        """The profile as a run keeps it: rows ``[stack, samples, executor id]``, heaviest
        first; ``interval_ms`` = the window's length / the dumps of an executor (the time
        one sample stands for: the measured period, not the asked-for one)."""
        span_ms = max(0.0, (self._ended - self._began) * 1000.0)
        per_executor = max(self.dumps.values()) if self.dumps else 0
        measured = span_ms / per_executor if per_executor else float(self.interval_ms)
        stacks, executors = stack_rows(self.counts)
        record: dict[str, Any] = {
            "method": dump_method(self.interval_ms), "interval_ms": round(measured, 1),
            "requested_interval_ms": self.interval_ms, "event": "thread dumps (RUNNABLE)",
            "sample": (f"each RUNNABLE task thread's stack in every dump, a dump about every "
                       f"{round(measured)} ms of wall time (coarser than on-CPU sampling)"),
            "threads": "names at each dump", "stacks": stacks, "executors": executors,
            "dumps": dict(self.dumps)}
        missed = self._missed()
        if missed:
            record["note"] = ("some thread dumps could not be read: " + "; ".join(missed))[:500]
        return record
