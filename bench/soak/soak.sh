#!/usr/bin/env bash
# Soak benchmark: does the server's memory stay flat under sustained full-speed load?
#
# For each backend and each worker-thread count, starts the release server on a fresh
# database, drives four routes at once with wrk for SOAK_SECONDS (a static route, an
# authenticated shipment read, a shipment write and a console page), samples the server's
# resident memory (VmRSS in /proc/<pid>/status) every SOAK_SAMPLE_SECONDS, and prints RSS at
# one minute against RSS at the end. Nothing scrapes /metrics unless SOAK_SCRAPE_SECONDS is
# set: that is the case where unbounded growth showed (issue 33).
# See bench/soak/README.md.
#
# Settings (environment):
#   SOAK_SECONDS=300           length of the load at each thread count (at least 120 for
#                              the one-minute mark to mean anything; shorter runs compare
#                              the end with the middle)
#   SOAK_THREADS="1 2 4 8"     the server's runtime worker threads (TOKIO_WORKER_THREADS), one
#                              run each
#   SOAK_BACKENDS=sqlite       "sqlite", "postgres" or "sqlite postgres"
#   SOAK_SAMPLE_SECONDS=5      RSS sampling interval
#   SOAK_CONNECTIONS=16        wrk -c per route (each route has its own wrk, one thread)
#   SOAK_ROUTES="static shipment write console"
#                              which of the four routes to drive
#   SOAK_SCRAPE_SECONDS=0      when > 0, GET /metrics this often during the load
#   SOAK_MAX_GROWTH_MB=5       a run whose RSS grew by more than this many MB between the
#                              one-minute mark and the end is marked GREW, and the script
#                              exits 1
#   SOAK_PG_ADMIN_URL=postgres://postgres@127.0.0.1:5432/postgres
#   SOAK_PG_DB=tidemark_soak   dropped and created for each PostgreSQL run
#   SOAK_NO_BUILD=1            skip `cargo build --release -p tidemark-server`
#   SOAK_BIN=PATH              the tidemark binary (default: $CARGO_TARGET_DIR or
#                              target, then /release/tidemark)
#   SOAK_CSV=PATH              also write every sample as CSV
#                              (backend,threads,seconds,rss_mb) to PATH
#
# Only 127.0.0.1 is ever targeted.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DURATION="${SOAK_SECONDS:-300}"
THREAD_COUNTS="${SOAK_THREADS:-1 2 4 8}"
BACKENDS="${SOAK_BACKENDS:-sqlite}"
SAMPLE_SECONDS="${SOAK_SAMPLE_SECONDS:-5}"
CONNECTIONS="${SOAK_CONNECTIONS:-16}"
ROUTES="${SOAK_ROUTES:-static shipment write console}"
SCRAPE_SECONDS="${SOAK_SCRAPE_SECONDS:-0}"
MAX_GROWTH_MB="${SOAK_MAX_GROWTH_MB:-5}"
PG_ADMIN_URL="${SOAK_PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
PG_DB="${SOAK_PG_DB:-tidemark_soak}"
BIN="${SOAK_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release/tidemark}"
CSV="${SOAK_CSV:-}"
STATIC_BYTES=700
SHIPMENT_INCLUDE="containers,port_of_lading,port_of_discharge"
# The one-minute mark: memory may still climb while caches, pools and allocator arenas
# fill; after it, a flat line is what a bounded server shows.
MARK_SECONDS=60
((DURATION >= 2 * MARK_SECONDS)) || MARK_SECONDS=$((DURATION / 2))

WORK="$(mktemp -d -t tidemark-soak.XXXXXX)"
SERVER_PID=""
SERVER_PORT=""
SERVER_ENV=()
PG_CREATED=""
LOAD_PIDS=()
RESULTS=()
FAILED=0

log() { printf '[soak] %s\n' "$*" >&2; }
die() { printf '[soak] error: %s\n' "$*" >&2; exit 1; }

stop_load() {
    local pid
    for pid in "${LOAD_PIDS[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${LOAD_PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    LOAD_PIDS=()
}

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
    SERVER_PORT=""
}

drop_pg_db() {
    [[ -n "$PG_CREATED" ]] || return 0
    psql "$PG_ADMIN_URL" -qAt -v ON_ERROR_STOP=1 \
        -c "DROP DATABASE IF EXISTS \"$PG_DB\" WITH (FORCE)" >/dev/null 2>&1 || true
    PG_CREATED=""
}

cleanup() {
    local status=$?
    stop_load
    stop_server
    drop_pg_db
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
        die "this benchmark needs the wrk load generator; install it (Debian/Ubuntu: apt-get install wrk, macOS: brew install wrk) and run again"
}

# free_port, shared with the other benchmarks.
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

# The server's resident memory in MB (one decimal), or nothing once it is gone.
rss_mb() {
    awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$SERVER_PID/status" 2>/dev/null || true
}

# Prints the value at a jq-style path of plain keys (".data.id") in a JSON file, or nothing.
json_get() {
    local file="$1" path="$2"
    if command -v jq >/dev/null 2>&1; then
        jq -r "try ($path // empty) catch empty" "$file" 2>/dev/null || true
    else
        python3 - "$file" "$path" 2>/dev/null <<'PY' || true
import json, sys
try:
    value = json.load(open(sys.argv[1]))
except Exception:
    sys.exit(0)
for key in sys.argv[2].strip(".").split("."):
    value = value.get(key) if isinstance(value, dict) else None
if value is not None:
    print(value)
PY
    fi
}

set_server_env() {
    local database_url="$1" port="$2" dir="$3" threads="$4"
    SERVER_ENV=(
        TIDEMARK_LISTEN="127.0.0.1:$port"
        TIDEMARK_DATABASE_URL="$database_url"
        TIDEMARK_STORAGE_URL="file://$dir/documents"
        TIDEMARK_PUBLIC_URL="http://127.0.0.1:$port"
        TIDEMARK_RATE_LIMIT_PER_MINUTE=1000000000
        TIDEMARK_BENCH_ROUTES=true
        TIDEMARK_LOG_LEVEL=warn
        TIDEMARK_SCHEDULER_TICK_SECONDS=1
        TOKIO_WORKER_THREADS="$threads"
    )
}

# Submits a sandbox tracking request and waits until it is created; prints the shipment id.
create_shipment() {
    local base="$1" header="$2" dir="$3"
    local status request_id
    status="$(curl -sS -o "$dir/tracking_request.json" -w '%{http_code}' --max-time 10 \
        -H "$header" -H 'Content-Type: application/json' \
        -d '{"data":{"type":"tracking_request","attributes":{"request_type":"bill_of_lading","request_number":"TEST-TR-SUCCEEDED","scac":"TEST"}}}' \
        "$base/v2/tracking_requests")"
    [[ "$status" == 201 || "$status" == 200 ]] ||
        { cat "$dir/tracking_request.json" >&2; die "POST /v2/tracking_requests answered $status"; }
    request_id="$(json_get "$dir/tracking_request.json" .data.id)"
    [[ -n "$request_id" ]] || die "no data.id in the tracking request"
    local tries=0 state="" shipment_id=""
    while ((tries < 60)); do
        status="$(curl -sS -o "$dir/tracking_request.json" -w '%{http_code}' --max-time 5 \
            -H "$header" "$base/v2/tracking_requests/$request_id")" || status=000
        if [[ "$status" == 200 ]]; then
            state="$(json_get "$dir/tracking_request.json" .data.attributes.status)"
            if [[ "$state" == created ]]; then
                shipment_id="$(json_get "$dir/tracking_request.json" .data.relationships.tracked_object.data.id)"
                [[ -n "$shipment_id" ]] || die "created tracking request without a tracked_object"
                echo "$shipment_id"
                return 0
            fi
            [[ "$state" != failed && "$state" != tracking_stopped ]] ||
                die "the sandbox tracking request ended $state"
        fi
        tries=$((tries + 1))
        sleep 0.5
    done
    die "tracking request $request_id still '${state:-?}' after 30 s"
}

# Signs in to the console with the key; prints the session cookie (name=value).
console_cookie() {
    local base="$1" key="$2" dir="$3"
    curl -sS -o /dev/null -D "$dir/sign-in.headers" --max-time 10 \
        --data-urlencode "api_key=$key" "$base/sign-in" ||
        die "POST /sign-in failed"
    local cookie
    cookie="$(awk 'tolower($1) == "set-cookie:" { split($2, c, ";"); print c[1]; exit }' \
        "$dir/sign-in.headers" | tr -d '\r')"
    [[ -n "$cookie" ]] || { cat "$dir/sign-in.headers" >&2; die "the console sign-in set no cookie"; }
    echo "$cookie"
}

# The write: PATCH /v2/shipments/{id} replacing its tags, cycling over 100 values, so the
# row changes on every request while the database stays the same size.
write_lua() {
    local file="$1" shipment_id="$2"
    cat >"$file" <<LUA
local counter = 0
request = function()
    counter = counter + 1
    local body = '{"data":{"type":"shipment","id":"$shipment_id","attributes":{"tags":["soak-' .. (counter % 100) .. '"]}}}'
    return wrk.format("PATCH", nil, nil, body)
end
LUA
}

# Starts one wrk per route in the background (LOAD_PIDS), output in $dir/<route>.wrk.
start_load() {
    local base="$1" key="$2" shipment_id="$3" cookie="$4" dir="$5"
    local route url args
    for route in $ROUTES; do
        args=()
        case "$route" in
        static) url="$base/bench/static/$STATIC_BYTES" ;;
        shipment)
            url="$base/v2/shipments/$shipment_id?include=$SHIPMENT_INCLUDE"
            args=(-H "Authorization: Token $key")
            ;;
        write)
            url="$base/v2/shipments/$shipment_id"
            write_lua "$dir/write.lua" "$shipment_id"
            args=(-H "Authorization: Token $key" -H 'Content-Type: application/vnd.api+json'
                -s "$dir/write.lua")
            ;;
        console)
            url="$base/"
            args=(-H "Cookie: $cookie" -H 'Accept: text/html')
            ;;
        *) die "unknown route '$route' in SOAK_ROUTES (static, shipment, write, console)" ;;
        esac
        wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --timeout 10s "${args[@]}" "$url" \
            >"$dir/$route.wrk" 2>&1 &
        LOAD_PIDS+=("$!")
    done
}

# Checks each route answers 2xx once before the load (a typo would otherwise soak 404s).
check_routes() {
    local base="$1" key="$2" shipment_id="$3" cookie="$4" dir="$5" status
    for route in $ROUTES; do
        case "$route" in
        static) status="$(curl -sS -o /dev/null -w '%{http_code}' "$base/bench/static/$STATIC_BYTES")" ;;
        shipment) status="$(curl -sS -o /dev/null -w '%{http_code}' -H "Authorization: Token $key" \
            "$base/v2/shipments/$shipment_id?include=$SHIPMENT_INCLUDE")" ;;
        write) status="$(curl -sS -o "$dir/write.json" -w '%{http_code}' -X PATCH \
            -H "Authorization: Token $key" -H 'Content-Type: application/vnd.api+json' \
            -d "{\"data\":{\"type\":\"shipment\",\"id\":\"$shipment_id\",\"attributes\":{\"tags\":[\"soak\"]}}}" \
            "$base/v2/shipments/$shipment_id")" ;;
        console) status="$(curl -sS -o /dev/null -w '%{http_code}' -H "Cookie: $cookie" \
            -H 'Accept: text/html' "$base/")" ;;
        esac
        [[ "$status" == 2* ]] || { [[ ! -s "$dir/write.json" ]] || cat "$dir/write.json" >&2; die "$route answered $status before the load"; }
    done
}

# "REQUESTS REQ_PER_S NON_2XX ERRORS" from a wrk output file.
wrk_figures() {
    awk '
        /requests in/ { requests = $1 }
        /^Requests\/sec:/ { rps = $2 }
        /Non-2xx or 3xx responses:/ { non2xx = $NF }
        /Socket errors:/ { gsub(",", ""); errors = $4 + $6 + $8 + $10 }
        END { printf "%s %s %d %d", (requests == "" ? 0 : requests), (rps == "" ? 0 : rps), non2xx, errors }
    ' "$1"
}

soak_one() {
    local backend="$1" threads="$2"
    local dir="$WORK/$backend-$threads"
    mkdir -p "$dir/documents"
    local database_url
    case "$backend" in
    sqlite) database_url="sqlite://$dir/tidemark.db" ;;
    postgres)
        command -v psql >/dev/null 2>&1 || die "postgres: psql not found"
        psql "$PG_ADMIN_URL" -qAt -v ON_ERROR_STOP=1 \
            -c "DROP DATABASE IF EXISTS \"$PG_DB\" WITH (FORCE)" \
            -c "CREATE DATABASE \"$PG_DB\"" >/dev/null ||
            die "postgres: cannot create database $PG_DB through $PG_ADMIN_URL"
        PG_CREATED=1
        database_url="${PG_ADMIN_URL%/*}/$PG_DB"
        ;;
    *) die "unknown backend '$backend' in SOAK_BACKENDS (sqlite, postgres)" ;;
    esac
    local port base
    port="$(free_port)"
    base="http://127.0.0.1:$port"
    set_server_env "$database_url" "$port" "$dir" "$threads"

    local key
    key="$(env "${SERVER_ENV[@]}" "$BIN" api-keys create --account soak 2>"$dir/keys.log")" ||
        { cat "$dir/keys.log" >&2; die "$backend: tidemark api-keys create failed"; }
    key="$(printf '%s' "$key" | tail -n 1 | tr -d '[:space:]')"

    env "${SERVER_ENV[@]}" "$BIN" serve --role all >"$dir/server.out" 2>"$dir/server.log" &
    SERVER_PID=$!
    SERVER_PORT="$port"
    local tries=0
    until curl -fsS -o /dev/null --max-time 1 "$base/readyz" 2>/dev/null; do
        kill -0 "$SERVER_PID" 2>/dev/null || { tail -n 30 "$dir/server.log" >&2; die "$backend: the server exited before it was ready"; }
        tries=$((tries + 1))
        ((tries < 300)) || die "$backend: /readyz not ready after 30 s"
        sleep 0.1
    done

    local header="Authorization: Token $key" shipment_id cookie
    shipment_id="$(create_shipment "$base" "$header" "$dir")"
    cookie="$(console_cookie "$base" "$key" "$dir")"
    check_routes "$base" "$key" "$shipment_id" "$cookie" "$dir"

    local start_rss
    start_rss="$(rss_mb)"
    log "$backend, $threads worker thread(s): server pid $SERVER_PID on $base, RSS $start_rss MB; ${DURATION}s of load on: $ROUTES (wrk -t1 -c$CONNECTIONS each)"
    start_load "$base" "$key" "$shipment_id" "$cookie" "$dir"
    local started=$SECONDS elapsed rss mark_rss="" end_rss="" peak_rss=0 next_scrape=0
    local next_sample=$SAMPLE_SECONDS
    while true; do
        elapsed=$((SECONDS - started))
        if ((SCRAPE_SECONDS > 0 && elapsed >= next_scrape)); then
            curl -sS -o /dev/null --max-time 5 "$base/metrics" || true
            next_scrape=$((elapsed + SCRAPE_SECONDS))
        fi
        if ((elapsed >= next_sample)); then
            rss="$(rss_mb)"
            [[ -n "$rss" ]] || { tail -n 30 "$dir/server.log" >&2; die "$backend: the server died during the load"; }
            printf '[soak]   %4ds  RSS %7s MB\n' "$elapsed" "$rss" >&2
            [[ -z "$CSV" ]] || echo "$backend,$threads,$elapsed,$rss" >>"$CSV"
            [[ -n "$mark_rss" ]] || ((elapsed < MARK_SECONDS)) || mark_rss="$rss"
            peak_rss="$(awk -v a="$peak_rss" -v b="$rss" 'BEGIN { print (b > a ? b : a) }')"
            end_rss="$rss"
            next_sample=$((next_sample + SAMPLE_SECONDS))
        fi
        local running=0 pid
        for pid in "${LOAD_PIDS[@]}"; do
            kill -0 "$pid" 2>/dev/null && running=1
        done
        ((running)) || break
        sleep 1
    done
    for pid in "${LOAD_PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    LOAD_PIDS=()
    end_rss="$(rss_mb)"
    [[ -n "$mark_rss" ]] || mark_rss="$end_rss"
    peak_rss="$(awk -v a="$peak_rss" -v b="$end_rss" 'BEGIN { print (b > a ? b : a) }')"

    local route total_requests=0 total_rps=0 figures requests rps non2xx errors per_route=""
    for route in $ROUTES; do
        figures="$(wrk_figures "$dir/$route.wrk")"
        read -r requests rps non2xx errors <<<"$figures"
        total_requests=$((total_requests + requests))
        total_rps="$(awk -v a="$total_rps" -v b="$rps" 'BEGIN { printf "%.0f", a + b }')"
        per_route+=" $route $(printf '%.0f' "$rps")/s"
        ((non2xx == 0)) || { log "$backend/$threads: $route: $non2xx non-2xx responses"; sed 's/^/    /' "$dir/$route.wrk" >&2; FAILED=1; }
        ((errors == 0)) || log "$backend/$threads: $route: $errors socket errors"
    done
    log "$backend, $threads thread(s): $total_requests requests ($total_rps/s:$per_route); RSS start $start_rss, ${MARK_SECONDS}s $mark_rss, end $end_rss, peak $peak_rss MB"
    stop_server
    drop_pg_db

    # Growth after the mark, and per request over that stretch (requests spread evenly).
    local growth per_request verdict="flat"
    growth="$(awk -v a="$mark_rss" -v b="$end_rss" 'BEGIN { printf "%+.1f", b - a }')"
    per_request="$(awk -v g="$growth" -v n="$total_requests" -v d="$DURATION" -v m="$MARK_SECONDS" \
        'BEGIN { r = n * (d - m) / d; printf "%.2f", (r > 0 ? g * 1048576 / r : 0) }')"
    if awk -v g="$growth" -v l="$MAX_GROWTH_MB" 'BEGIN { exit !(g > l) }'; then
        verdict="GREW (> $MAX_GROWTH_MB MB)"
        FAILED=1
    fi
    RESULTS+=("$backend|$threads|$total_rps|$start_rss|$mark_rss|$end_rss|$peak_rss|$growth|$per_request|$verdict")
}

print_table() {
    printf '\n%ss of load per run (%s), wrk -t1 -c%s per route, %s cores shared by wrk and the server;\n' \
        "$DURATION" "$ROUTES" "$CONNECTIONS" "$(nproc 2>/dev/null || echo '?')"
    printf 'RSS sampled every %ss; /metrics %s\n' "$SAMPLE_SECONDS" \
        "$( ((SCRAPE_SECONDS > 0)) && echo "scraped every ${SCRAPE_SECONDS}s" || echo "never scraped")"
    printf '%-8s %7s %9s %9s %9s %9s %9s %9s %9s  %s\n' \
        backend threads "req/s" "start MB" "${MARK_SECONDS}s MB" "end MB" "peak MB" "growth" "B/req" ""
    printf '%-8s %7s %9s %9s %9s %9s %9s %9s %9s  %s\n' \
        ------- ------- ----- -------- ---- ------ ------- ------ ----- ""
    local row
    for row in "${RESULTS[@]}"; do
        IFS='|' read -r b t r s m e p g q v <<<"$row"
        printf '%-8s %7s %9s %9s %9s %9s %9s %9s %9s  %s\n' "$b" "$t" "$r" "$s" "$m" "$e" "$p" "$g" "$q" "$v"
    done
    printf '\ngrowth: end minus the %ss mark, MB (GREW above %s MB); B/req: that growth per request served after the mark\n' \
        "$MARK_SECONDS" "$MAX_GROWTH_MB"
}

main() {
    ensure_wrk
    command -v curl >/dev/null 2>&1 || die "this benchmark needs curl"
    [[ -r /proc/self/status ]] || die "this benchmark reads /proc/<pid>/status (Linux)"
    if [[ "${SOAK_NO_BUILD:-}" != 1 ]]; then
        log "building the release binary (cargo build --release -p tidemark-server)"
        (cd "$ROOT" && cargo build --release -p tidemark-server) >&2
    fi
    [[ -x "$BIN" ]] || die "no binary at $BIN (build it, or set SOAK_BIN)"
    [[ -z "$CSV" ]] || echo "backend,threads,seconds,rss_mb" >"$CSV"
    local backend threads
    for backend in $BACKENDS; do
        for threads in $THREAD_COUNTS; do
            soak_one "$backend" "$threads"
        done
    done
    print_table
    ((FAILED == 0)) || exit 1
}

main "$@"
