"""fmt: formatting and escaping; the shared vectors every port checks are fmt's own strings."""
import json

from fmt_vectors import PATH, SplitMix64, build, dumps

from jupyter_perf import fmt


def test_change_and_ms():
    assert fmt.change(90.0, 100.0) == "-10.0%"
    assert fmt.change(100.0, 100.0) == "+0.0%"
    assert fmt.change(1.0, 0.0) == "–"
    assert fmt.ms(1125) == "1.12 s"        # Python rounds exact ties to even; format.ts too
    assert fmt.ms(12.5) == "12 ms"


def test_units_are_chosen_after_rounding():
    assert fmt.ms(999.6) == "1.00 s"                  # never "1000 ms"
    assert fmt.ms(59_999.9) == "1 min 00 s"           # never "60.00 s"
    assert fmt.ms(119_700) == "2 min 00 s"            # never "1 min 60 s"
    assert fmt.ms(185_000) == "3 min 05 s"
    assert fmt.ms(3_599_500) == "1 h 00 min"
    assert fmt.ms(float("inf")) == "∞" and fmt.ms(None) == "–"
    assert fmt.ms(-0.4) == "0 ms" and fmt.ms(-1500) == "-1.50 s"
    assert fmt.nbytes(1023.5) == "1.0 KiB"           # never "1024 B"
    assert fmt.nbytes(1024 ** 2 - 51) == "1.0 MiB"   # never "1024.0 KiB"
    assert fmt.nbytes(10.7 * 2 ** 20) == "10.7 MiB"


def test_shared_vectors_are_fmts_own_strings():
    """The checked-in file is exactly what fmt gives (regenerate: tests/render/fmt_vectors.py)."""
    text = PATH.read_text(encoding="utf-8")
    assert text == dumps(build()), "fmt changed: run tests/render/fmt_vectors.py and review the diff"
    data = json.loads(text)
    assert all(fmt.ms(x) == s for x, s in data["ms"])
    assert all(fmt.nbytes(x) == s for x, s in data["bytes"])
    # every unit appears, so a port that gets one unit wrong fails
    for unit in (" ms", " s", " min", " h "):
        assert any(unit in s for _, s in data["ms"]), unit
    for unit in fmt.BYTE_UNITS:
        assert any(s.endswith(" " + unit) for _, s in data["bytes"]), unit



def test_the_vectors_random_inputs_are_splitmix64():
    """The generator is integer arithmetic only, so the file is the same on every machine:
    the reference splitmix64 outputs for seed 1234567."""
    rng = SplitMix64(1234567)
    assert [rng.next() for _ in range(5)] == [
        6457827717110365317, 3203168211198807973, 9817491932198370423, 4593380528125082431,
        16408922859458223821]
    rng = SplitMix64(7)
    assert {rng.below(3) for _ in range(200)} == {0, 1, 2}


def test_esc():
    assert fmt.esc("<img src=x onerror='a'>") == "&lt;img src=x onerror=&#x27;a&#x27;&gt;"
    assert fmt.esc(None) == ""
