"""The one definition of the breakdown components, and the summary carrying it."""
from analysis_synth import make_run, task

from jupyter_perf.analysis import analyze
from jupyter_perf.analysis.breakdown import CATEGORIES
from jupyter_perf.analysis.components import BY_KEY, COMPONENTS, KEYS, as_json


def test_keys_labels_and_colours_are_unique():
    assert len(set(KEYS)) == len(KEYS)
    assert len({c.label for c in COMPONENTS}) == len(COMPONENTS)
    assert len({c.color for c in COMPONENTS}) == len(COMPONENTS)
    for c in COMPONENTS:
        assert c.kind in ("measured", "estimated")
        assert c.estimated == ("(estimated)" in c.label), c


def test_python_and_core_wait_components():
    assert BY_KEY["python_udf"].label == "Python UDF" and BY_KEY["python_udf"].kind == "measured"
    core = BY_KEY["core_wait_est"]
    assert core.label == "waiting for a core (estimated)" and core.kind == "estimated"
    assert core.in_run and BY_KEY["python_udf"].in_run


def test_every_component_belongs_to_one_verdict_category():
    owners = [k for comps in CATEGORIES.values() for k in comps]
    assert sorted(owners) == sorted(KEYS)


def test_summary_carries_the_components_in_stacking_order():
    s = analyze(make_run([task(0, 100, cpu_ms=60)], slots=1)).summary()
    assert s["components"] == as_json()
    assert [c["key"] for c in s["components"]] == list(KEYS) == list(s["breakdown"])
