# Quick start: `make demo` runs the demo notebook, `make test` runs the whole suite.
# Both set everything up on a fresh machine (Python 3.11, JDK 17, Node 20) into .venv.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.jupyter-perf-installed
OUT    ?= out

SPARK4 := .venv-spark4

.PHONY: demo test test-spark4 setup browser lint clean lock

demo: $(STAMP)
	@mkdir -p $(OUT)
	JUPYTER_PERF_OUT=$(abspath $(OUT)) $(BIN)/jupyter nbconvert --to html --execute \
	  --ExecutePreprocessor.timeout=600 --output-dir $(OUT) examples/quickstart.ipynb
	@echo "Demo notebook with its report: $(OUT)/quickstart.html"
	@echo "Standalone report:             $(OUT)/quickstart-report.html"

test: $(STAMP) browser lint
	$(BIN)/python scripts/run_tests.py

# Python: ruff (pyflakes, pycodestyle, isort, bugbear; configured in pyproject.toml).
# The labextension's TypeScript (the sidebar and the report's renderer, labextension/src/):
# eslint + prettier + stylelint (the extension template's setup). A finding fails `make test`,
# so CI (.ci/run) fails on it.
# `$(BIN)/ruff check --fix .` and `jlpm lint` fix what they can.
lint: $(STAMP) node_modules/.yarn-state.yml
	$(BIN)/ruff check --no-cache .
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/jlpm lint:check

# The JS dev tools (jest, eslint, ...) as yarn.lock pins them; again when either changes
# (the editable install's build hook skips `jlpm install` when the built extension is current).
node_modules/.yarn-state.yml: package.json yarn.lock | $(STAMP)
	$(BIN)/jlpm install
	@touch $@

setup: $(STAMP)

# Every version comes from the lock (requirements/test.txt, and requirements/build.txt for
# what pip builds from source): a fresh machine installs what the suite last passed with.
$(STAMP): pyproject.toml package.json requirements/test.txt requirements/build.txt
	@scripts/check_prereqs.sh
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -c requirements/test.txt pip
	$(BIN)/python -m pip install -c requirements/test.txt --build-constraint requirements/build.txt \
	  -e ".[test]"
	@touch $(STAMP)

# The Spark-facing tests again on pyspark 4.x (REST-only here: its _2.13 sparkmeasure jar
# is not reachable from this build environment; the reports say so).
test-spark4: $(STAMP)
	test -x $(SPARK4)/bin/python || $(PYTHON) -m venv $(SPARK4)
	$(SPARK4)/bin/python -m pip install --quiet -c requirements/spark4.txt pip
	$(SPARK4)/bin/python -m pip install --quiet -c requirements/spark4.txt \
	  --build-constraint requirements/build.txt -e ".[test]"
	$(SPARK4)/bin/python scripts/run_tests.py -m spark4 -o addopts="-ra"

# Refresh the lock on purpose (docs/packaging.md): the newest versions that pyproject.toml and
# requirements/*.in allow, for Python 3.11 on Linux x86_64, into requirements/*.txt; then run
# the suite and commit the lock with what it needed. `make lock LOCK_UPGRADE=` only re-resolves
# what changed inputs need; `make lock LOCK_UPGRADE="--upgrade-package numpy"` moves one package.
UV_VERSION   := 0.13.9
LOCK_TOOL    := $(VENV)/lock-tool
LOCK_UPGRADE ?= --upgrade
UV_COMPILE    = $(LOCK_TOOL)/bin/uv pip compile --quiet --python-version 3.11 \
  --python-platform x86_64-manylinux_2_28 --custom-compile-command "make lock" $(LOCK_UPGRADE)

lock:
	test -x $(LOCK_TOOL)/bin/python || $(PYTHON) -m venv $(LOCK_TOOL)
	$(LOCK_TOOL)/bin/python -m pip install --quiet "uv==$(UV_VERSION)"
	$(UV_COMPILE) pyproject.toml requirements/test.in --extra test -o requirements/test.txt
	$(UV_COMPILE) pyproject.toml requirements/spark4.in --extra test -o requirements/spark4.txt
	$(LOCK_TOOL)/bin/python -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"], sep="\n")' \
	  | $(UV_COMPILE) requirements/build.in - -o requirements/build.txt
	@git diff --stat -- requirements/ 2>/dev/null || true

# Browser tests drive Debian's Chromium (test tools cannot download browsers here).
browser:
	@scripts/ensure_chromium.sh

clean:
	rm -rf $(VENV) $(SPARK4) $(OUT) lib node_modules jupyter_perf/labextension
