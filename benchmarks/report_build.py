"""Where a report's kernel-side time and bytes go (payload format 2, ``render/views/``).

For synthetic runs (``tests/render/render_runs.synthetic``'s shape: ``analysis_scale``'s
generator with ``--per-stage`` tasks per stage on ``--slots`` slots) this times, in one process,

* ``ViewContext.of`` (lanes + ``payload.build``: the per-task arrays), each tab's
  ``data(a, ctx)``, ``jsonable`` of the tabs, the task arrays' encoding and ``encode_data``
  (JSON + gzip + base64) — each the minimum of ``--repeat`` builds (the least disturbed by
  other load on the machine);

and sizes, once:

* each per-task array (raw bytes, and its share of the compressed payload: the gzip of its
  bytes alone, as the container holds them), each tab's JSON (raw and gzipped), the meta, and
  the whole ``data`` field of the MIME payload (what the standalone page and the notebook
  carry).

    python benchmarks/report_build.py [--tasks 100000,1000000] [--repeat 1] [--top 12]

Compare two checkouts by pointing PYTHONPATH at each.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(1, str(Path(__file__).resolve().parent))     # analysis_scale, after PYTHONPATH


def _gz(b: bytes) -> int:
    return len(gzip.compress(b, compresslevel=6, mtime=0))


def _json(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def _mb(n: float) -> str:
    return f"{n / 1e6:8.2f} MB"


def _as_sent(views, values) -> bytes:
    """An array's bytes as the payload's container holds them (as differences and
    byte-shuffled where it does that); plain bytes for the older JSON form."""
    if not hasattr(views, "pack_data"):
        return values.tobytes()
    arr = views._narrow(values)
    diffs = views._differences(arr)
    arr = arr if diffs is None else diffs
    return views._shuffle(arr) if arr.dtype.itemsize > 1 and arr.size >= views.SHUFFLE_MIN \
        else arr.tobytes()


def fields(obj, prefix: str, out: list, depth: int = 2) -> None:
    """(path, raw JSON bytes) of each field of a tab's data, ``depth`` levels down."""
    if isinstance(obj, dict) and depth > 0:
        for k, v in obj.items():
            fields(v, f"{prefix}.{k}", out, depth - 1)
    else:
        out.append((prefix, len(_json(obj))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="100000,1000000")
    parser.add_argument("--slots", type=int, default=16)
    parser.add_argument("--per-stage", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--top", type=int, default=12, help="largest tab fields listed")
    args = parser.parse_args()
    import analysis_scale

    import jupyter_perf
    from jupyter_perf import analyze
    from jupyter_perf.render import views
    from jupyter_perf.render.views import ViewContext, _tabs, encode_data, jsonable
    print(f"jupyter_perf from {os.path.dirname(jupyter_perf.__file__)}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for n in (int(x) for x in args.tasks.split(",")):
        t0 = time.perf_counter()
        a = analyze(analysis_scale.build_run(n, args.slots, per_stage=args.per_stage))
        a.summary()
        print(f"\n=== {n:,} tasks ({len(a.run.stages)} stages, {args.slots} slots): "
              f"run + analysis {time.perf_counter() - t0:.1f} s, load {os.getloadavg()[0]:.1f}")
        took: dict[str, list[float]] = {}

        def clock(key, fn, *a_, took=took):
            t = time.perf_counter()
            out = fn(*a_)
            took.setdefault(key, []).append(time.perf_counter() - t)
            return out

        for _ in range(args.repeat):
            t_all = time.perf_counter()
            ctx = clock("ViewContext.of (lanes + payload.build)", ViewContext.of, a)
            tabs = {key: clock(f"tab {key}", mod.data, a, ctx) for key, mod in _tabs().items()}
            tabs = clock("jsonable(tabs)", jsonable, tabs)
            data = {"format": views.DATA_FORMAT, "run_id": str(a.run.run_id),
                    "header": views.header(a.run, a), "tabs": tabs,
                    "tasks": ctx.arrays, "tasks_meta": jsonable(ctx.meta)}
            try:                      # raw arrays in data["tasks"] (the binary container)
                encoded = clock("encode_data (container + gzip + text)", encode_data, data)
            except TypeError:         # older: each array base64 inside the JSON
                data["tasks"] = {k: views.encode_array(v) for k, v in ctx.arrays.items()}
                encoded = clock("encode_data (container + gzip + text)", encode_data, data)
            took.setdefault("report_data + encode_data, total", []).append(time.perf_counter() - t_all)
        print(f"  kernel time (min of {args.repeat}):")
        for key, v in took.items():
            print(f"    {key:<48} {min(v):7.3f} s")

        print(f"  MIME payload data field: {_mb(len(encoded))}  (the compressed payload as text)")
        raw_arrays = sum(v.nbytes for v in ctx.arrays.values())
        gz_arrays = {k: _gz(_as_sent(views, v)) for k, v in ctx.arrays.items()}
        print(f"  per-task arrays: {len(ctx.arrays)} arrays, raw {_mb(raw_arrays)}, "
              f"gzip each as sent (differences, byte-shuffled) {_mb(sum(gz_arrays.values()))}")
        for k, v in sorted(ctx.arrays.items(), key=lambda kv: -gz_arrays[kv[0]]):
            if v.nbytes >= 1000:
                print(f"    {k:<14} {str(v.dtype):<8} {len(v):>9,} raw {_mb(v.nbytes)} "
                      f"gzip {_mb(gz_arrays[k])}")
        meta = _json(data["tasks_meta"])
        print(f"  tasks_meta JSON {_mb(len(meta))} gzip {_mb(_gz(meta))}")
        print("  tabs (JSON):")
        for key, v in tabs.items():
            b = _json(v)
            print(f"    {key:<12} raw {_mb(len(b))} gzip {_mb(_gz(b))}")
        out: list = []
        for key, v in tabs.items():
            fields(v, key, out)
        print("  largest tab fields (raw JSON):")
        for path, size in sorted(out, key=lambda x: -x[1])[:args.top]:
            print(f"    {path:<40} {_mb(size)}")
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
