#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu machine lacks to build kj and run its harness:
# build dependencies (apt) and the harness's Python venv (PyPI, pinned), cached outside the
# checkout and keyed by the pinned requirements so a second run downloads nothing.
# Prints nothing but progress; the venv's interpreter path is written to build/harness-python.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

apt_packages=(build-essential cmake pkg-config libyaml-cpp-dev nlohmann-json3-dev libseccomp-dev
              libcli11-dev libspdlog-dev libfmt-dev libgtest-dev libgmock-dev libsqlite3-dev
              libssl-dev zlib1g-dev chromium chromium-driver libpq-dev postgresql
              clang libclang-rt-dev ninja-build)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=(); [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

python="${KJ_BOOTSTRAP_PYTHON:-python3}"
if ! "$python" -m venv --help >/dev/null 2>&1; then
  sudo_cmd=(); [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq python3-venv >/dev/null
fi
req="$root/harness/requirements.txt"
key="$( (cat "$req"; "$python" -c 'import sys; print(sys.version)') | sha256sum | cut -c1-16)"
cache="${KJ_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kerneljudge}"
venv="$cache/venv-$key"
if [ ! -f "$venv/.complete" ]; then
  echo "setup: creating the harness venv in $venv (torch, triton, numpy; takes a few minutes once)"
  mkdir -p "$cache"
  tmp="$(mktemp -d "$cache/venv-tmp-XXXXXX")"
  "$python" -m venv "$tmp"
  "$tmp/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
  touch "$tmp/.complete"
  rm -rf "$venv"
  mv "$tmp" "$venv"
fi
# The sandbox runs the harness as an unprivileged user: the venv must be world-readable.
chmod -R a+rX "$venv" 2>/dev/null || true
mkdir -p "$root/build"
echo "$venv/bin/python" > "$root/build/harness-python"
# lang: cu problems compile with the CUDA toolkit's nvcc (found at $KJ_NVCC, $CUDA_HOME/bin, on
# PATH or at /usr/local/cuda/bin). Debian's own nvidia-cuda-toolkit is an old release in
# non-free, so it is not installed here: the build and GPU machines come with the toolkit.
if [ -z "${KJ_NVCC:-}" ] && ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: note: no nvcc (CUDA toolkit) found: the lang: cu build tests will be skipped"
fi
