#!/usr/bin/env bash
# Routes the 50 port pairs of pairs.txt with Python searoute and with tidemark-geo's
# SeaRouter, then prints lengths, times and speed-ups side by side. See README.md.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${SEAROUTE_VENV:-/var/tmp/tidemark-searoute-venv}"
version="${SEAROUTE_VERSION:-1.6.0}"
repeat="${SEAROUTE_REPEAT:-7}"

if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check "searoute==$version"

work="$(mktemp -d /var/tmp/tidemark-searoute-bench.XXXXXX)"
trap 'rm -rf "$work"' EXIT

echo "timing Python searoute $version ($repeat runs per pair)..." >&2
"$venv/bin/python" "$here/compare.py" python \
    --pairs "$here/pairs.txt" --pairs-json "$work/pairs.json" --out "$work/python.json" \
    --repeat "$repeat"

echo "timing tidemark-geo (release build)..." >&2
(cd "$root" && cargo bench --quiet -p tidemark-geo --bench searoute -- --json "$work/pairs.json") \
    > "$work/rust.json"

"$venv/bin/python" "$here/compare.py" report "$work/python.json" "$work/rust.json"
