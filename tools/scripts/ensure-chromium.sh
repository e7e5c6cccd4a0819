#!/usr/bin/env bash
# `npm test`'s pretest: the outbox test drives a real headless browser, Debian's chromium (playwright-core downloads
# none). Installs it when missing and this is root (a fresh CI machine); otherwise says what to do.
set -euo pipefail
browser="${CHROMIUM_PATH:-/usr/bin/chromium}"
[ -x "$browser" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "pretest: installing chromium for the outbox test (apt-get install -y chromium)" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
  echo "pretest: $browser is missing: run 'sudo apt-get install -y chromium' (or set CHROMIUM_PATH)" >&2
  exit 1
fi
