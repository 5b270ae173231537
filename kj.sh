#!/usr/bin/env bash
# Quick start: sets up (once), builds, then runs kj with the harness venv.
# Examples: ./kj.sh serve (the judge server, prints URL + admin token)
#           ./kj.sh eval problems/vectoradd problems/vectoradd/solutions/correct/triton.py
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh" >/dev/null
export KJ_PYTHON="${KJ_PYTHON:-$(cat "$root/build/harness-python")}"
exec "$root/build/kj" "$@"
