#!/usr/bin/env bash
# Builds the release binary and splits its debug info into a file beside it:
#   dist/tidemark        the binary (code and a link to its debug file)
#   dist/tidemark.debug  symbols and line tables, read by backtraces when it sits beside the binary
# Without the .debug file the binary runs the same; its backtraces then give addresses only
# (`addr2line -f -C -e tidemark.debug <address>` names them later). The symbols go to the
# debug file too: in the binary they were 6 MB of its 41.
#
# Settings (environment): DIST=dist (output folder), CARGO_TARGET_DIR (cargo's usual).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIST="${DIST:-$ROOT/dist}"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"

cd "$ROOT"
cargo build --release -p tidemark-server
mkdir -p "$DIST"
cp "$TARGET/release/tidemark" "$DIST/tidemark.tmp"
objcopy --only-keep-debug "$DIST/tidemark.tmp" "$DIST/tidemark.debug"
objcopy --strip-all --add-gnu-debuglink="$DIST/tidemark.debug" "$DIST/tidemark.tmp"
mv "$DIST/tidemark.tmp" "$DIST/tidemark"
ls -l "$DIST/tidemark" "$DIST/tidemark.debug"
