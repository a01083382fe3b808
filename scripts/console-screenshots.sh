#!/usr/bin/env bash
# Regenerates the console screenshots in docs/screenshots/ (board, shipment page with its route
# map, a webhook's delivery log, a document's preview) by running
# the browser end-to-end test against a debug build. Needs Node, Debian's chromium, and
# `cargo build -p tidemark-server --bin tidemark`.
set -euo pipefail
cd "$(dirname "$0")/.."
(cd e2e && npm ci --no-audit --no-fund >/dev/null)
SCREENSHOTS="$PWD/docs/screenshots" node e2e/console.mjs "${1:-}"
