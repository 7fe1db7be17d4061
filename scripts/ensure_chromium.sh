#!/usr/bin/env bash
# Browser tests use Debian's Chromium; install it when we can, else say how.
set -euo pipefail
for c in "${CHROMIUM:-}" /usr/bin/chromium /usr/bin/chromium-browser; do
  [ -n "$c" ] && [ -x "$c" ] && { echo "chromium: $c"; exit 0; }
done
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's chromium for the browser tests"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  exit 0
fi
echo "jupyter-perf: browser tests need Chromium — install it (apt-get install chromium) or set CHROMIUM=/path/to/chromium; they are skipped without it" >&2
