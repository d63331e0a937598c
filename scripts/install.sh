#!/usr/bin/env bash
# Idempotent set-up on a fresh Debian machine (as root): system tools, a virtualenv in .venv, and
# mcugen installed into it in editable mode. Re-running it only checks that everything is there.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
for tool in gcc make arm-none-eabi-gcc qemu-system-arm chromium clang cmake ccache; do
  command -v "$tool" >/dev/null 2>&1 || need_apt+=("$tool")
done
[ -e /usr/lib/arm-none-eabi/newlib/libc.a ] || [ -d /usr/lib/arm-none-eabi/lib ] || need_apt+=(newlib)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need_apt+=(venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "install: apt packages for: ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  # chromium: the headless browser of tests/unit/test_report_browser.py (mcugen report's page);
  # clang and cmake: tests/c/test_export_c.py builds the exported libraries with them (issue 18);
  # ccache: scripts/test.sh compiles the runtime's files once for the suite's many firmwares
  apt-get install -y -q gcc make gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm \
    python3-venv chromium clang cmake ccache
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
stamp=.venv/.mcugen-installed
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  # ray: CI runs `mcugen sweep --ray local` (tests/cli/test_sweep.py); an optional extra for users
  .venv/bin/python -m pip install -q -e '.[test,ray]'
  echo "$want" > "$stamp"
fi
