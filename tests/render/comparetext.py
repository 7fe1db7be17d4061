"""The comparison's text, section by section, as a page shows it (issue Q: the compare view
drawn by the TypeScript renderer must say what ``render/compare.py``'s HTML said).

``SECTIONS_JS`` runs in Chromium on a page holding one ``.jp-perf-cmp``: the text before the
first ``<h2>`` is the section "head", then one section per ``<h2>``. Each ``<div>`` is one
line (its ``textContent``, runs of spaces, tabs and newlines made one space; no-break spaces
kept: a value must not wrap), each table row one line (cells joined by `` | ``), and a row
with a bar says where the bar sits (``left``, ``width``, colour, hatched or not), so "bars
from the middle" is compared too. The golden files (``golden/compare_*.txt``) were read by
this same function from the Python HTML before the renderer replaced it
(``golden/make_compare_golden.py``).
"""
from __future__ import annotations

from viewhelpers import open_offline

SECTIONS_JS = """() => {
  const norm = (t) => t.replace(/[ \\t\\n\\r]+/g, ' ').trim();
  const bar = (row) => {
    const b = row.querySelector('.bar');
    if (!b) { return ''; }
    return ` [bar${b.classList.contains('est') ? ' est' : ''} left=${b.style.left} ` +
      `width=${b.style.width} ${b.style.backgroundColor}]`;
  };
  const sections = [{title: 'head', lines: []}];
  const visit = (el) => {
    for (const c of el.children) {
      const tag = c.tagName;
      if (tag === 'STYLE' || tag === 'SCRIPT') { continue; }
      if (tag === 'SECTION') { visit(c); continue; }
      if (tag === 'H2') { sections.push({title: norm(c.textContent), lines: []}); continue; }
      const cur = sections[sections.length - 1];
      if (tag === 'TABLE') {
        for (const tr of c.querySelectorAll('tr')) {
          cur.lines.push([...tr.children].map((td) => norm(td.textContent)).join(' | ') + bar(tr));
        }
        continue;
      }
      cur.lines.push(norm(c.textContent));
    }
  };
  visit(document.querySelector('.jp-perf-cmp'));
  return sections;
}"""


def as_text(sections: list[dict]) -> str:
    """The sections as the golden file holds them: ``## title`` then its lines."""
    out = []
    for s in sections:
        out.append(f"## {s['title']}")
        out.extend(s["lines"])
    return "\n".join(out) + "\n"


def parse(text: str) -> list[dict]:
    """``as_text`` read back."""
    sections: list[dict] = []
    for line in text.rstrip("\n").split("\n"):
        if line.startswith("## "):
            sections.append({"title": line[3:], "lines": []})
        else:
            sections[-1]["lines"].append(line)
    return sections


DRAWN = ".jp-perf-cmp[data-jp-compare='drawn']"


def open_comparison(browser, path, summary: dict, width: int = 1100):
    """``render/compare.py``'s page of ``summary`` written to ``path`` and opened in Chromium
    with every non-local request blocked (recorded in ``page.jp_requests``), console errors in
    ``page.jp_errors`` and dialogs in ``page.jp_dialogs``; returned once the renderer drew it."""
    from jupyter_perf.render.compare import comparison_html

    path.write_text(comparison_html(summary), encoding="utf-8")
    return open_offline(browser, path, DRAWN, width)
