#!/usr/bin/env bash
# Sets up everything the project needs on a fresh Debian machine (Python 3.11):
# system packages (CJK fonts, Chromium for the browser test, the PostgreSQL server the store's tests start a
# throwaway cluster of), a .venv with the project installed.
# Safe to run again: it skips what is already there.
set -euo pipefail
cd "$(dirname "$0")"

APT_PACKAGES=(fonts-arphic-ukai fonts-arphic-uming fonts-wqy-zenhei fonts-wqy-microhei fonts-hanazono libcairo2 chromium
    postgresql)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing system packages: ${missing[*]}" >&2
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
[ -x .venv/bin/python ] || "$PY" -m venv .venv
stamp=.venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)
if [ ! -f "$stamp" ]; then
    echo "setup: installing Python packages into .venv (first run takes a few minutes)" >&2
    .venv/bin/pip install -q --upgrade pip
    .venv/bin/pip install -q -e ".[all,train,dev,bench]"
    rm -f .venv/.installed-*
    touch "$stamp"
fi
export YOLO_OFFLINE=1
