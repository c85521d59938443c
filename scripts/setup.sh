#!/usr/bin/env bash
# Installs the Debian packages neuronsim needs; does nothing when they are all present.
set -euo pipefail
packages=(build-essential cmake pkg-config libsystemc-dev doctest-dev nlohmann-json3-dev python3
          python3-numpy python3-pytest python3-dev pybind11-dev libcli11-dev libfmt-dev libboost-dev
          parallel clang libfuzzer-14-dev libclang-rt-14-dev clang-format nodejs eslint
          node-css-tree)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${NEURONSIM_BROWSER_TESTS:-1}" = 1 ] && ! command -v chromium >/dev/null 2>&1; then
  missing+=(chromium)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
