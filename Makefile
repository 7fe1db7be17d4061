# Quick start: `make demo` runs the demo notebook, `make test` runs the whole suite.
# Both set everything up on a fresh machine (Python 3.11, JDK 17, Node 20) into .venv.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.jupyter-perf-installed
OUT    ?= out

.PHONY: demo test setup browser clean

demo: $(STAMP)
	@mkdir -p $(OUT)
	JUPYTER_PERF_OUT=$(abspath $(OUT)) $(BIN)/jupyter nbconvert --to html --execute \
	  --ExecutePreprocessor.timeout=600 --output-dir $(OUT) examples/quickstart.ipynb
	@echo "Demo notebook with its report: $(OUT)/quickstart.html"
	@echo "Standalone report:             $(OUT)/quickstart-report.html"

test: $(STAMP) browser
	$(BIN)/python -m pytest tests

setup: $(STAMP)

$(STAMP): pyproject.toml package.json constraints.txt
	@scripts/check_prereqs.sh
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install -c constraints.txt -e ".[test]"
	@touch $(STAMP)

# Browser tests drive Debian's Chromium (test tools cannot download browsers here).
browser:
	@scripts/ensure_chromium.sh

clean:
	rm -rf $(VENV) $(OUT) lib node_modules jupyter_perf/labextension
