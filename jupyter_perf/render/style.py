"""Drawing facts the report's data carries to the renderer. Component labels and colours are
not here: they come from ``analysis/components.py``, the one definition every view reads."""
from __future__ import annotations

ESTIMATED_HATCH = "/"      # BokehJS hatch pattern of an estimated breakdown segment
