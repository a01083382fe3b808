#!/usr/bin/env bash
# Property-based run of the API against its own OpenAPI document (schemathesis from PyPI):
# requests generated from the document, each response checked for a server error and for
# its status, content type, headers and body being the ones the document lists. Runs a real
# `tidemark serve` on SQLite and on PostgreSQL in turn, each bounded in time.
#
#   scripts/schemathesis.sh                      # both stores
#   SCHEMATHESIS_SKIP_POSTGRES=1 scripts/schemathesis.sh
#
# One worker: CPython 3.11 can fail inside hypothesis with "AST constructor recursion depth
# mismatch" when two threads parse source at once, an error of the tool and not of the API.
#
# Settings: SCHEMATHESIS_MAX_EXAMPLES (30 per operation), SCHEMATHESIS_SECONDS (150 per
# store, a hard stop), SCHEMATHESIS_PG_ADMIN_URL (postgres://postgres@127.0.0.1:5432/postgres).
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=4.32.5
VENV="${SCHEMATHESIS_VENV:-/var/tmp/tidemark-schemathesis-$VERSION}"
MAX_EXAMPLES="${SCHEMATHESIS_MAX_EXAMPLES:-30}"
SECONDS_PER_STORE="${SCHEMATHESIS_SECONDS:-150}"
PG_ADMIN_URL="${SCHEMATHESIS_PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
TARGET="${CARGO_TARGET_DIR:-target}"

if [[ ! -x "$VENV/bin/schemathesis" ]]; then
    echo "--- installing schemathesis $VERSION into $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet "schemathesis==$VERSION"
fi

cargo build --quiet -p tidemark-server --bin tidemark
BIN="$TARGET/debug/tidemark"

WORK=$(mktemp -d)
SERVER_PID=""
cleanup() {
    if [[ -n "$SERVER_PID" ]]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# One store: a fresh database, a server on a free port, the run, the server stopped.
run_against() {
    local name="$1" database_url="$2"
    local port
    port=$(free_port)
    echo "--- schemathesis against $name"
    TIDEMARK_DATABASE_URL="$database_url" \
        TIDEMARK_STORAGE_URL="file://$WORK/$name-documents" \
        TIDEMARK_LISTEN="127.0.0.1:$port" \
        TIDEMARK_RATE_LIMIT_PER_MINUTE=100000000 \
        TIDEMARK_UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE=100000000 \
        TIDEMARK_LOG_LEVEL=warn \
        "$BIN" serve >"$WORK/$name.out" 2>"$WORK/$name.err" &
    SERVER_PID=$!
    local key=""
    for _ in $(seq 1 100); do
        key=$(head -n 1 "$WORK/$name.out" 2>/dev/null || true)
        if [[ -n "$key" ]] && curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then
            break
        fi
        sleep 0.2
    done
    if [[ -z "$key" ]]; then
        echo "the server did not start:" >&2
        cat "$WORK/$name.err" >&2
        exit 1
    fi
    # The key's own revocation is left out: the rest of the run would only see 401s.
    local status=0
    timeout --signal=INT "$SECONDS_PER_STORE" "$VENV/bin/schemathesis" run \
        "http://127.0.0.1:$port/v2/openapi.json" \
        --header "Authorization: Token $key" \
        --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance \
        --exclude-path-regex '^/v2/api_keys/' \
        --max-examples "$MAX_EXAMPLES" \
        --workers 1 \
        --no-color || status=$?
    kill "$SERVER_PID" && wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
    if [[ $status -ne 0 ]]; then
        echo "schemathesis found problems against $name (exit $status)" >&2
        exit "$status"
    fi
}

run_against sqlite "sqlite://$WORK/sqlite/tidemark.db"

if [[ -z "${SCHEMATHESIS_SKIP_POSTGRES:-}" ]]; then
    db="tidemark_schemathesis_$$"
    psql "$PG_ADMIN_URL" -qAtc "CREATE DATABASE $db" >/dev/null
    drop_db() { psql "$PG_ADMIN_URL" -qAtc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null || true; }
    trap 'cleanup; drop_db' EXIT
    run_against postgres "${PG_ADMIN_URL%/*}/$db"
fi
