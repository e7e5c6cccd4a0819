#!/usr/bin/env bash
# Before the integration tests: the outbox test drives a real headless browser, Debian's chromium (playwright-core
# downloads none). When it is missing and this is root (a fresh CI machine), installs that one package and what it
# strictly needs — no recommended packages, nothing else upgraded — and says so first; otherwise names the command.
set -euo pipefail
browser="${CHROMIUM_PATH:-/usr/bin/chromium}"
[ -x "$browser" ] && exit 0
install="apt-get install -y --no-install-recommends chromium"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "notifier: the browser tests (outbox page, support console) need a browser; installing Debian's chromium: apt-get update && $install" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $install -qq >/dev/null
else
  echo "notifier: $browser is missing (the outbox test drives it): run 'sudo $install' (or set CHROMIUM_PATH)" >&2
  exit 1
fi
