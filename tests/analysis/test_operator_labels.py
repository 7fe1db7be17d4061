"""Operator labels: Spark's node name plus what the user wrote (keys, tables, UDFs), read from
plan descriptions as Spark 3.5 and 4.x write them; anything unreadable leaves the name."""
import pytest

from jupyter_perf.analysis.operator_labels import MAX_KEYS, MAX_LEN, operator_label, split_top_level

CASES = [
    ("HashAggregate", "HashAggregate(keys=[l_returnflag#98, l_linestatus#99], "
                      "functions=[partial_sum(l_quantity#94)])",
     "HashAggregate by l_returnflag, l_linestatus"),
    ("HashAggregate", "HashAggregate(keys=[l_orderkey#267L], functions=[sum(l_quantity#271)])",
     "HashAggregate by l_orderkey"),
    ("ObjectHashAggregate", "ObjectHashAggregate(keys=[], functions=[collect_list(x#1, 0, 0)])",
     "ObjectHashAggregate (no grouping keys)"),
    ("SortMergeJoin", "SortMergeJoin [p_partkey#44L], [l_partkey#91L], Inner",
     "SortMergeJoin on p_partkey = l_partkey"),
    ("SortMergeJoin", "SortMergeJoin [o_orderkey#72L], [l_orderkey#267L], LeftSemi",
     "SortMergeJoin LeftSemi on o_orderkey = l_orderkey"),
    ("BroadcastHashJoin", "BroadcastHashJoin [a#1L, b#2], [c#3L, d#4], Inner, BuildRight, false",
     "BroadcastHashJoin on a = c, b = d"),
    ("BroadcastNestedLoopJoin", "BroadcastNestedLoopJoin BuildRight, Inner, (x#1 > y#2)",
     "BroadcastNestedLoopJoin"),
    ("Exchange", "Exchange hashpartitioning(l_orderkey#90L, 8), ENSURE_REQUIREMENTS, "
                 "[plan_id=2355]", "Exchange hash on l_orderkey"),
    ("Exchange", "Exchange rangepartitioning(a#1 ASC NULLS FIRST, b#2 DESC NULLS LAST, 200), "
                 "ENSURE_REQUIREMENTS, [plan_id=104]", "Exchange range on a, b DESC"),
    ("Exchange", "Exchange SinglePartition, ENSURE_REQUIREMENTS, [plan_id=1]",
     "Exchange to one partition"),
    ("Exchange", "Exchange RoundRobinPartitioning(4), REPARTITION_BY_NUM, [plan_id=9]",
     "Exchange round robin"),
    ("Sort", "Sort [l_returnflag#98 ASC NULLS FIRST, v#2 DESC NULLS LAST], true, 0",
     "Sort by l_returnflag, v DESC"),
    ("BatchEvalPython", "BatchEvalPython [slow(id#0L)#5], [pythonUDF0#10]",
     "BatchEvalPython slow(id)"),
    ("ArrowEvalPython", "ArrowEvalPython [slow(id#0L)#5], [pythonUDF0#10], 200",
     "ArrowEvalPython slow(id)"),
    ("Scan parquet", "FileScan parquet [a#1] Batched: true, Location: "
                     "InMemoryFileIndex(1 paths)[file:/d/tpch/lineitem.parquet]",
     "Scan parquet lineitem"),
    ("Scan parquet spark_catalog.db.orders", "FileScan parquet spark_catalog.db.orders[o#1] "
     "Location: InMemoryFileIndex(1 paths)[file:/w/orders]", "Scan parquet spark_catalog.db.orders"),
    ("Filter", "Filter (x#1 > 1)", "Filter"),
]


@pytest.mark.parametrize("name, description, label", CASES)
def test_labels_name_what_the_user_wrote(name, description, label):
    assert operator_label(name, description) == label


def test_q1_and_q18_aggregates_read_differently():
    # at TPC-H SF 1 both queries' top operator is a HashAggregate (benchmarks/tpch_operators.py)
    q1, q18 = CASES[0], CASES[1]
    assert q1[0] == q18[0] and operator_label(*q1[:2]) != operator_label(*q18[:2])


@pytest.mark.parametrize("description", [
    "", "garbage ]][[((", "HashAggregate(keys=[a#1", "SortMergeJoin [a#1], Inner",
    "Exchange hashpartitioning(", "Sort [", "SortMergeJoin [a#1, b#2], [c#3], Inner"])
def test_what_it_cannot_read_leaves_the_name(description):
    for name in ("HashAggregate", "SortMergeJoin", "Exchange", "Sort", "Project"):
        assert operator_label(name, description).startswith(name)
    assert operator_label("SortMergeJoin", "SortMergeJoin [a#1, b#2], [c#3], Inner") \
        == "SortMergeJoin"


def test_long_key_lists_and_labels_are_cut():
    keys = ", ".join(f"k{i}#{i}" for i in range(MAX_KEYS + 4))
    label = operator_label("HashAggregate", f"HashAggregate(keys=[{keys}], functions=[])")
    assert label == "HashAggregate by k0, k1, k2 +4"
    assert operator_label("HashAggregate", "HashAggregate(keys=[substring(a#1, 1, 2) AS s#3],"
                                           " functions=[])") \
        == "HashAggregate by substring(a, 1, 2) AS s"
    long = operator_label("HashAggregate", f"HashAggregate(keys=[{'x' * 200}#1], functions=[])")
    assert len(long) == MAX_LEN and long.endswith("…")


def test_commas_inside_brackets_do_not_split():
    assert split_top_level("a, substr(b, 1, 2), [c, d], e") == ["a", "substr(b, 1, 2)",
                                                               "[c, d]", "e"]
    assert split_top_level("") == []
