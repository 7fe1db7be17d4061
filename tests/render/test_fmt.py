"""fmt: formatting and escaping."""
from jupyter_perf.render import fmt


def test_change_and_ms():
    assert fmt.change(90.0, 100.0) == "-10.0%"
    assert fmt.change(100.0, 100.0) == "+0.0%"
    assert fmt.change(1.0, 0.0) == "–"
    assert fmt.ms(1125) == "1.12 s"        # Python rounds exact ties to even; report.js too
    assert fmt.ms(12.5) == "12 ms"


def test_esc():
    assert fmt.esc("<img src=x onerror='a'>") == "&lt;img src=x onerror=&#x27;a&#x27;&gt;"
    assert fmt.esc(None) == ""
