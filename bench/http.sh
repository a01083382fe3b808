#!/usr/bin/env bash
# HTTP load benchmark: an authenticated `GET /v2/ports/{locode}` against a static-bytes
# route of the same size served by the same binary, on SQLite and on PostgreSQL.
# See bench/README.md for what it measures and how to read it.
#
# Settings (environment):
#   BENCH_SECONDS=10          length of each measured wrk run
#   BENCH_WARMUP_SECONDS=2    length of the unmeasured warm-up run before each route
#   BENCH_CONNECTIONS=64      wrk -c
#   BENCH_THREADS=2           wrk -t
#   BENCH_LOCODE=NLRTM        the port fetched by the authenticated route
#   BENCH_SKIP_POSTGRES=1     run SQLite only
#   BENCH_PG_ADMIN_URL=postgres://postgres@127.0.0.1:5432/postgres
#                             where to drop and create the bench database
#   BENCH_PG_DB=tidemark_bench
#   BENCH_KEEP_DB=1           keep the PostgreSQL database afterwards
#   BENCH_NO_BUILD=1          skip `cargo build --release` (use an existing binary)
#   BENCH_BIN=PATH            the tidemark binary (default: target/release/tidemark)
#   BENCH_ROLE=all            `tidemark serve --role` (all = API and workers in one process)
#   BENCH_STRICT=1            exit 1 when a goal (ratio >= 0.5, p99 < 10 ms) is missed
#
# Only 127.0.0.1 is ever targeted.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_PER_RUN="${BENCH_SECONDS:-10}"
WARMUP_SECONDS="${BENCH_WARMUP_SECONDS:-2}"
CONNECTIONS="${BENCH_CONNECTIONS:-64}"
THREADS="${BENCH_THREADS:-2}"
LOCODE="${BENCH_LOCODE:-NLRTM}"
PG_ADMIN_URL="${BENCH_PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
PG_DB="${BENCH_PG_DB:-tidemark_bench}"
ROLE="${BENCH_ROLE:-all}"
BIN="${BENCH_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release/tidemark}"
GOAL_RATIO="0.50"
GOAL_P99_MS="10"

WORK="$(mktemp -d -t tidemark-bench.XXXXXX)"
SERVER_PID=""
PG_CREATED=""
RESULTS=()
GOALS_MISSED=0

log() { printf '[bench] %s\n' "$*" >&2; }
die() { printf '[bench] error: %s\n' "$*" >&2; exit 1; }

stop_server() {
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        local waited=0
        while kill -0 "$SERVER_PID" 2>/dev/null && ((waited < 100)); do
            sleep 0.1
            waited=$((waited + 1))
        done
        if kill -0 "$SERVER_PID" 2>/dev/null; then
            log "server $SERVER_PID did not stop after SIGTERM; killing it"
            kill -KILL "$SERVER_PID" 2>/dev/null || true
        fi
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    SERVER_PID=""
}

cleanup() {
    local status=$?
    stop_server
    if [[ -n "$PG_CREATED" && -z "${BENCH_KEEP_DB:-}" ]]; then
        psql "$PG_ADMIN_URL" -qAt -v ON_ERROR_STOP=1 \
            -c "DROP DATABASE IF EXISTS \"$PG_DB\" WITH (FORCE)" >/dev/null 2>&1 || true
    fi
    rm -rf "$WORK"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ensure_wrk() {
    command -v wrk >/dev/null 2>&1 && return 0
    log "wrk not found; installing it from Debian (apt-get install wrk)"
    local sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo)
    if command -v apt-get >/dev/null 2>&1 && { [[ ${#sudo[@]} -eq 0 ]] || command -v sudo >/dev/null 2>&1; }; then
        if "${sudo[@]}" apt-get update -qq >/dev/null; then
            "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null || true
        fi
    fi
    command -v wrk >/dev/null 2>&1 ||
        die "this benchmark needs wrk (https://github.com/wg/wrk); install it (Debian/Ubuntu: apt-get install wrk, macOS: brew install wrk) and run again"
}

# A TCP port on 127.0.0.1 that nothing listens on.
free_port() {
    local port tries=0
    while ((tries < 200)); do
        port=$((20000 + RANDOM % 40000))
        tries=$((tries + 1))
        if command -v ss >/dev/null 2>&1 && ss -Htln "sport = :$port" 2>/dev/null | grep -q .; then
            continue
        fi
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return 0
        fi
    done
    die "no free port found on 127.0.0.1"
}

# Milliseconds from a wrk duration such as 812.00us, 3.41ms or 1.02s.
to_ms() {
    awk -v v="$1" 'BEGIN {
        n = v + 0
        if (v ~ /us$/) n = n / 1000
        else if (v ~ /ms$/) n = n
        else if (v ~ /m$/) n = n * 60000
        else if (v ~ /s$/) n = n * 1000
        printf "%.2f", n
    }'
}

# Runs wrk on a URL; the remaining arguments are extra wrk arguments (headers).
# Prints "REQ_PER_S P99_MS" and keeps wrk's full output in $WORK/$name.wrk.
run_wrk() {
    local name="$1" url="$2"
    shift 2
    local out="$WORK/$name.wrk"
    wrk --latency -t"$THREADS" -c"$CONNECTIONS" -d"${SECONDS_PER_RUN}s" "$@" "$url" >"$out" 2>&1 ||
        { cat "$out" >&2; die "wrk failed on $url"; }
    if grep -q 'Non-2xx or 3xx responses' "$out"; then
        cat "$out" >&2
        die "$name: some responses were not 2xx (see above; is the rate limit high enough?)"
    fi
    if grep -q 'Socket errors' "$out"; then
        log "$name: $(grep 'Socket errors' "$out" | sed 's/^ *//')"
    fi
    local rps p99
    rps="$(awk '/^Requests\/sec:/ { print $2 }' "$out")"
    p99="$(awk '$1 == "99%" { print $2 }' "$out")"
    [[ -n "$rps" && -n "$p99" ]] || { cat "$out" >&2; die "$name: cannot read wrk's output"; }
    echo "$rps $(to_ms "$p99")"
}

warm_up() {
    local url="$1"
    shift
    ((WARMUP_SECONDS > 0)) || return 0
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP_SECONDS}s" "$@" "$url" >/dev/null 2>&1 || true
}

# Environment shared by `api-keys create` and `serve` for one backend.
server_env() {
    local database_url="$1" port="$2" dir="$3"
    env TIDEMARK_LISTEN="127.0.0.1:$port" \
        TIDEMARK_DATABASE_URL="$database_url" \
        TIDEMARK_STORAGE_URL="file://$dir/documents" \
        TIDEMARK_PUBLIC_URL="http://127.0.0.1:$port" \
        TIDEMARK_RATE_LIMIT_PER_MINUTE=1000000000 \
        TIDEMARK_BENCH_ROUTES=true \
        TIDEMARK_LOG_LEVEL=warn \
        "${@:4}"
}

bench_backend() {
    local backend="$1" database_url="$2"
    local dir="$WORK/$backend"
    mkdir -p "$dir/documents"
    local port
    port="$(free_port)"
    local base="http://127.0.0.1:$port"

    log "$backend: creating an API key"
    local key
    key="$(server_env "$database_url" "$port" "$dir" "$BIN" api-keys create --account bench 2>"$dir/keys.log")" ||
        { cat "$dir/keys.log" >&2; die "$backend: tidemark api-keys create failed"; }
    key="$(printf '%s' "$key" | tail -n 1 | tr -d '[:space:]')"
    [[ -n "$key" ]] || die "$backend: api-keys create printed no key"

    log "$backend: starting tidemark serve on $base"
    server_env "$database_url" "$port" "$dir" "$BIN" serve --role "$ROLE" \
        >"$dir/server.out" 2>"$dir/server.log" &
    SERVER_PID=$!

    local tries=0
    until curl -fsS -o /dev/null --max-time 1 "$base/readyz" 2>/dev/null; do
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            tail -n 30 "$dir/server.log" >&2
            die "$backend: the server exited before it was ready"
        fi
        tries=$((tries + 1))
        ((tries < 300)) || { tail -n 30 "$dir/server.log" >&2; die "$backend: /readyz not ready after 30 s"; }
        sleep 0.1
    done

    local auth_url="$base/v2/ports/$LOCODE"
    local header="Authorization: Token $key"
    local status size
    status="$(curl -sS -o "$dir/port.json" -w '%{http_code}' -H "$header" "$auth_url")"
    [[ "$status" == 200 ]] || { cat "$dir/port.json" >&2; die "$backend: GET /v2/ports/$LOCODE answered $status"; }
    size="$(wc -c <"$dir/port.json" | tr -d ' ')"
    local static_url="$base/bench/static/$size"
    status="$(curl -sS -o "$dir/static.bin" -w '%{http_code}' "$static_url")"
    [[ "$status" == 200 ]] || die "$backend: GET /bench/static/$size answered $status (bench routes off?)"
    log "$backend: both routes answer $size bytes; warming up, then ${SECONDS_PER_RUN}s of wrk per route"

    warm_up "$static_url"
    local static_result
    static_result="$(run_wrk "$backend-static" "$static_url")"
    warm_up "$auth_url" -H "$header"
    local auth_result
    auth_result="$(run_wrk "$backend-auth" "$auth_url" -H "$header")"

    stop_server

    local static_rps static_p99 auth_rps auth_p99 ratio
    read -r static_rps static_p99 <<<"$static_result"
    read -r auth_rps auth_p99 <<<"$auth_result"
    ratio="$(awk -v a="$auth_rps" -v s="$static_rps" 'BEGIN { printf "%.2f", (s > 0 ? a / s : 0) }')"
    local verdict
    verdict="$(awk -v r="$ratio" -v p="$auth_p99" -v gr="$GOAL_RATIO" -v gp="$GOAL_P99_MS" \
        'BEGIN { print ((r >= gr && p < gp) ? "met" : "MISSED") }')"
    [[ "$verdict" == met ]] || GOALS_MISSED=1
    RESULTS+=("$backend|/bench/static/$size|$static_rps|$static_p99||")
    RESULTS+=("$backend|/v2/ports/$LOCODE (auth)|$auth_rps|$auth_p99|$ratio|$verdict")
}

print_table() {
    printf '\n'
    printf 'wrk -t%s -c%s -d%ss per route; %s cores shared by wrk and the server\n' \
        "$THREADS" "$CONNECTIONS" "$SECONDS_PER_RUN" "$(nproc 2>/dev/null || echo '?')"
    printf 'goal: auth/static >= %s and auth p99 < %s ms\n\n' "$GOAL_RATIO" "$GOAL_P99_MS"
    printf '%-9s %-28s %12s %9s %11s %s\n' backend route "req/s" "p99 ms" "auth/static" goal
    printf '%-9s %-28s %12s %9s %11s %s\n' ------- ----- ----- ------ ----------- ----
    local row backend route rps p99 ratio verdict
    for row in "${RESULTS[@]}"; do
        IFS='|' read -r backend route rps p99 ratio verdict <<<"$row"
        printf '%-9s %-28s %12s %9s %11s %s\n' "$backend" "$route" "$rps" "$p99" "$ratio" "$verdict"
    done
    printf '\n'
}

main() {
    command -v curl >/dev/null 2>&1 || die "this benchmark needs curl"
    ensure_wrk

    if [[ -z "${BENCH_NO_BUILD:-}" ]]; then
        log "building the release binary (cargo build --release -p tidemark-server)"
        (cd "$ROOT" && cargo build --release -p tidemark-server) >&2
    fi
    [[ -x "$BIN" ]] || die "no binary at $BIN (build it, or set BENCH_BIN)"

    bench_backend sqlite "sqlite://$WORK/sqlite/tidemark.db"

    if [[ "${BENCH_SKIP_POSTGRES:-}" == 1 ]]; then
        log "postgres: skipped (BENCH_SKIP_POSTGRES=1)"
    else
        command -v psql >/dev/null 2>&1 || die "postgres: psql not found (set BENCH_SKIP_POSTGRES=1 to skip)"
        log "postgres: recreating database $PG_DB"
        psql "$PG_ADMIN_URL" -qAt -v ON_ERROR_STOP=1 \
            -c "DROP DATABASE IF EXISTS \"$PG_DB\" WITH (FORCE)" \
            -c "CREATE DATABASE \"$PG_DB\"" >/dev/null ||
            die "postgres: cannot recreate $PG_DB via $PG_ADMIN_URL (set BENCH_SKIP_POSTGRES=1 to skip)"
        PG_CREATED=1
        # Same server and credentials as the admin URL, other database.
        local pg_url="${PG_ADMIN_URL%/*}/$PG_DB"
        bench_backend postgres "$pg_url"
    fi

    print_table
    if [[ "$GOALS_MISSED" == 1 && -n "${BENCH_STRICT:-}" ]]; then
        exit 1
    fi
}

main "$@"
