#!/usr/bin/env bash
# Check the machine has what the Quick start needs; say what to install if not.
set -euo pipefail
fail() { echo "jupyter-perf setup: $1" >&2; exit 1; }

PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null \
  || fail "Python 3.10+ is required (3.11 recommended): install python3.11 and python3.11-venv"

JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java
command -v "$JAVA" >/dev/null 2>&1 \
  || fail "no Java found: Spark needs JDK 17 — install it (Debian/Ubuntu: apt-get install openjdk-17-jdk-headless) or set JAVA_HOME"
major=$("$JAVA" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1)
case "$major" in
  11|17|21) ;;
  *) fail "Java $major found; Spark 3.5 runs on JDK 11, 17 or 21 — install JDK 17 (apt-get install openjdk-17-jdk-headless) or point JAVA_HOME at one" ;;
esac

command -v node >/dev/null 2>&1 \
  || fail "Node.js 18+ is needed to build the JupyterLab extension from source: install Node 20"
node -e 'process.exit(+process.versions.node.split(".")[0] >= 18 ? 0 : 1)' \
  || fail "Node $(node --version) is too old to build the JupyterLab extension: install Node 20"
echo "prerequisites ok: $("$PY" --version), Java $major, Node $(node --version)"
