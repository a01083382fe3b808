#!/usr/bin/env bash
# HTTP load benchmark: an authenticated `GET /v2/ports/{locode}` and an authenticated
# `GET /v2/shipments/{id}?include=containers,port_of_lading,port_of_discharge`, each against
# a static-bytes route of the same size served by the same binary, on SQLite and on
# PostgreSQL.
# See bench/README.md for what it measures and how to read it.
#
# Settings (environment):
#   BENCH_SECONDS=10          length of each measured wrk run
#   BENCH_WARMUP_SECONDS=2    length of the unmeasured warm-up run before each route
#   BENCH_CONNECTIONS=64      wrk -c
#   BENCH_THREADS=2           wrk -t
#   BENCH_ROUNDS=1            rounds of (static, port, [static at the shipment's size],
#                             shipment) per backend; the table shows, per route, the round
#                             least disturbed by other work on the machine
#   BENCH_LOCODE=NLRTM        the port fetched by the port route
#   BENCH_SKIP_SHIPMENT=1     measure the static and port routes only
#   BENCH_SHIPMENT_WAIT_SECONDS=30
#                             how long to wait for the sandbox tracking request to be created
#   BENCH_SKIP_POSTGRES=1     run SQLite only
#   BENCH_PG_ADMIN_URL=postgres://postgres@127.0.0.1:5432/postgres
#                             where to drop and create the bench database
#   BENCH_PG_DB=tidemark_bench
#   BENCH_KEEP_DB=1           keep the PostgreSQL database afterwards
#   BENCH_NO_BUILD=1          skip `cargo build --release` (use an existing binary)
#   BENCH_BIN=PATH            the tidemark binary (default: target/release/tidemark)
#   BENCH_ROLE=all            `tidemark serve --role` (all = API and workers in one process)
#   BENCH_WAIT_IDLE_SECONDS=0 wait up to this long for other work to leave the CPUs idle
#   BENCH_WORKER_THREADS=N    the server's runtime worker threads (TOKIO_WORKER_THREADS;
#                             default: one per core)
#   BENCH_STRICT=1            exit 1 when a goal is missed (port/static >= 0.50,
#                             shipment/static >= 0.50, p99 < 10 ms on both)
#
# Only 127.0.0.1 is ever targeted.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_PER_RUN="${BENCH_SECONDS:-10}"
WARMUP_SECONDS="${BENCH_WARMUP_SECONDS:-2}"
CONNECTIONS="${BENCH_CONNECTIONS:-64}"
THREADS="${BENCH_THREADS:-2}"
ROUNDS="${BENCH_ROUNDS:-1}"
LOCODE="${BENCH_LOCODE:-NLRTM}"
PG_ADMIN_URL="${BENCH_PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
PG_DB="${BENCH_PG_DB:-tidemark_bench}"
ROLE="${BENCH_ROLE:-all}"
BIN="${BENCH_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release/tidemark}"
SHIPMENT_WAIT_SECONDS="${BENCH_SHIPMENT_WAIT_SECONDS:-30}"
SHIPMENT_INCLUDE="containers,port_of_lading,port_of_discharge"
GOAL_RATIO="0.50"          # /v2/ports/{locode} against the static route
GOAL_SHIPMENT_RATIO="0.50" # /v2/shipments/{id}?include=... against the static route (issue 17)
GOAL_P99_MS="10"
# A static measurement is reused for another route when the two sizes differ by at most this
# share of the larger; otherwise the static route is measured again at the other size.
SIZE_TOLERANCE="0.10"

WORK="$(mktemp -d -t tidemark-bench.XXXXXX)"
SERVER_PID=""
SERVER_PORT=""
SERVER_ENV=()
PG_CREATED=""
RESULTS=()
MEMORY_NOTE=""
BUSY_NOTE=""
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
    if [[ -n "$SERVER_PORT" ]] && command -v ss >/dev/null 2>&1 &&
        ss -Htln "sport = :$SERVER_PORT" 2>/dev/null | grep -q .; then
        log "warning: something still listens on 127.0.0.1:$SERVER_PORT after stopping the server"
    fi
    SERVER_PID=""
    SERVER_PORT=""
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
        die "this benchmark needs the wrk load generator; install it (Debian/Ubuntu: apt-get install wrk, macOS: brew install wrk) and run again"
}

# free_port, shared with the other benchmarks.
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

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
# Prints "REQ_PER_S P50_MS P99_MS OTHER%" and keeps wrk's full output in $WORK/$name.wrk.
run_wrk() {
    local name="$1" url="$2"
    shift 2
    local out="$WORK/$name.wrk"
    local me="$BASHPID" before after
    before="$(cpu_ticks "$me")"
    wrk --latency -t"$THREADS" -c"$CONNECTIONS" -d"${SECONDS_PER_RUN}s" "$@" "$url" >"$out" 2>&1 ||
        { cat "$out" >&2; die "wrk failed on $url"; }
    after="$(cpu_ticks "$me")"
    if grep -q 'Non-2xx or 3xx responses' "$out"; then
        cat "$out" >&2
        die "$name: some responses were not 2xx (see above; is the rate limit high enough?)"
    fi
    if grep -q 'Socket errors' "$out"; then
        log "$name: $(grep 'Socket errors' "$out" | sed 's/^ *//')"
    fi
    local rps p50 p99
    rps="$(awk '/^Requests\/sec:/ { print $2 }' "$out")"
    p50="$(awk '$1 == "50%" { print $2 }' "$out")"
    p99="$(awk '$1 == "99%" { print $2 }' "$out")"
    [[ -n "$rps" && -n "$p50" && -n "$p99" ]] || { cat "$out" >&2; die "$name: cannot read wrk's output"; }
    local other
    other="$(other_cpu "$before" "$after")"
    local rss peak
    read -r rss peak <<<"$(server_memory)"
    log "$name: $rps req/s, p50 $(to_ms "$p50") ms, p99 $(to_ms "$p99") ms, other $other, $(cpu_split "$before" "$after" "$rps"), server RSS $rss MB (peak $peak MB)"
    echo "$rps $(to_ms "$p50") $(to_ms "$p99") $other"
}

# "BUSY TOTAL SERVER WRK" clock ticks: all cores from /proc/stat, the server process, and the
# finished children of process $1 (which is where wrk's time lands once it is waited for).
cpu_ticks() {
    local busy_total server children
    busy_total="$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat 2>/dev/null || echo "0 0")"
    server="$(awk '{ print $14 + $15 }' "/proc/$SERVER_PID/stat" 2>/dev/null || echo 0)"
    children="$(awk '{ print $16 + $17 }' "/proc/$1/stat" 2>/dev/null || echo 0)"
    echo "$busy_total $server $children"
}

# Share of the machine's CPU that went to anything but the server and wrk between two
# cpu_ticks samples (PostgreSQL's own processes count here too).
other_cpu() {
    awk -v a="$1" -v b="$2" 'BEGIN {
        split(a, x, " "); split(b, y, " ")
        total = y[2] - x[2]
        other = (y[1] - x[1]) - (y[3] - x[3]) - (y[4] - x[4])
        if (total <= 0) { print "n/a"; exit }
        if (other < 0) other = 0
        printf "%.0f%%", 100 * other / total
    }'
}

# Of two "REQ_PER_S P50 P99 OTHER%" results (the first may be empty), the one run with the
# least other work on the machine; on a tie, the faster one.
least_disturbed() {
    [[ -n "$1" ]] || { echo "$2"; return 0; }
    awk -v a="$1" -v b="$2" 'BEGIN {
        split(a, x, " "); split(b, y, " ")
        ox = x[4] + 0; oy = y[4] + 0
        print ((oy < ox || (oy == ox && y[1] + 0 > x[1] + 0)) ? b : a)
    }'
}

# Where the run's CPU went: server and wrk in cores, and the server's CPU per request.
cpu_split() {
    awk -v a="$1" -v b="$2" -v rps="$3" -v secs="$SECONDS_PER_RUN" 'BEGIN {
        split(a, x, " "); split(b, y, " ")
        hz = 100  # USER_HZ: /proc/stat and /proc/PID/stat count in hundredths of a second
        server = (y[3] - x[3]) / hz / secs; wrk = (y[4] - x[4]) / hz / secs
        idle = ((y[2] - x[2]) - (y[1] - x[1])) / hz / secs
        printf "server %.2f cores (%.0f us/request), wrk %.2f cores, idle %.2f cores", server, (rps > 0 ? server * 1e6 / rps : 0), wrk, idle
    }'
}

warm_up() {
    local url="$1"
    shift
    ((WARMUP_SECONDS > 0)) || return 0
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP_SECONDS}s" "$@" "$url" >/dev/null 2>&1 || true
}

# Share of all cores busy over one second, from /proc/stat ("n/a" elsewhere).
cpu_busy() {
    [[ -r /proc/stat ]] || { echo n/a; return 0; }
    local a b
    a="$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat)"
    sleep 1
    b="$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat)"
    awk -v a="$a" -v b="$b" 'BEGIN {
        split(a, x, " "); split(b, y, " ")
        busy = y[1] - x[1]; idle = y[2] - x[2]
        printf "%.0f%%", (busy + idle > 0 ? 100 * busy / (busy + idle) : 0)
    }'
}

# With BENCH_WAIT_IDLE_SECONDS=N, waits up to N seconds for the machine to be under 25 % busy.
wait_for_idle() {
    local limit="${BENCH_WAIT_IDLE_SECONDS:-0}" waited=0 busy
    ((limit > 0)) || return 0
    while ((waited < limit)); do
        busy="$(cpu_busy)"
        [[ "$busy" == n/a || "${busy%\%}" -lt 25 ]] && return 0
        ((waited == 0)) && log "machine is $busy busy; waiting up to ${limit}s for it to settle"
        sleep 4
        waited=$((waited + 5))
    done
    log "machine still busy after ${limit}s; measuring anyway"
}

# Environment shared by `api-keys create` and `serve` for one backend, as `env` arguments.
# (`env` execs the binary, so `env ... &` leaves the server's own pid in $!.)
set_server_env() {
    local database_url="$1" port="$2" dir="$3"
    SERVER_ENV=(
        TIDEMARK_LISTEN="127.0.0.1:$port"
        TIDEMARK_DATABASE_URL="$database_url"
        TIDEMARK_STORAGE_URL="file://$dir/documents"
        TIDEMARK_PUBLIC_URL="http://127.0.0.1:$port"
        TIDEMARK_RATE_LIMIT_PER_MINUTE=1000000000
        TIDEMARK_BENCH_ROUTES=true
        TIDEMARK_LOG_LEVEL=warn
        # The sandbox tracking request behind the shipment route is polled at once (the job
        # is queued when it is created); a short tick only makes the scheduler's sweep for
        # due polls quick should that first job need a retry. Shipments are polled again only
        # after tracking_poll_seconds (an hour), so nothing writes to them while wrk runs.
        TIDEMARK_SCHEDULER_TICK_SECONDS=1
    )
    [[ -z "${BENCH_WORKER_THREADS:-}" ]] || SERVER_ENV+=(TOKIO_WORKER_THREADS="$BENCH_WORKER_THREADS")
}

# "RSS PEAK" of the server in MB (VmRSS now, VmHWM since it started), "? ?" elsewhere.
server_memory() {
    awk '/^VmRSS:/ { rss = $2 } /^VmHWM:/ { hwm = $2 }
        END { if (rss == "") print "? ?"; else printf "%.0f %.0f", rss / 1024, hwm / 1024 }' \
        "/proc/$SERVER_PID/status" 2>/dev/null || echo "? ?"
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

# Submits a tracking request for the sandbox carrier (SCAC TEST) and waits, polling every
# 0.5 s for up to SHIPMENT_WAIT_SECONDS, until it is created; prints the shipment's id.
create_shipment() {
    local base="$1" header="$2" dir="$3" backend="$4"
    local status request_id
    status="$(curl -sS -o "$dir/tracking_request.json" -w '%{http_code}' --max-time 10 \
        -H "$header" -H 'Content-Type: application/json' \
        -d '{"data":{"type":"tracking_request","attributes":{"request_type":"bill_of_lading","request_number":"TEST-TR-SUCCEEDED","scac":"TEST"}}}' \
        "$base/v2/tracking_requests")"
    [[ "$status" == 201 || "$status" == 200 ]] ||
        { cat "$dir/tracking_request.json" >&2; die "$backend: POST /v2/tracking_requests answered $status"; }
    request_id="$(json_get "$dir/tracking_request.json" .data.id)"
    [[ -n "$request_id" ]] || { cat "$dir/tracking_request.json" >&2; die "$backend: no data.id in the tracking request"; }

    local tries=0 limit=$((SHIPMENT_WAIT_SECONDS * 2)) state="" shipment_id=""
    while ((tries < limit)); do
        status="$(curl -sS -o "$dir/tracking_request.json" -w '%{http_code}' --max-time 5 \
            -H "$header" "$base/v2/tracking_requests/$request_id")" || status=000
        if [[ "$status" == 200 ]]; then
            state="$(json_get "$dir/tracking_request.json" .data.attributes.status)"
            case "$state" in
            created)
                shipment_id="$(json_get "$dir/tracking_request.json" .data.relationships.tracked_object.data.id)"
                [[ -n "$shipment_id" ]] ||
                    { cat "$dir/tracking_request.json" >&2; die "$backend: created tracking request without a tracked_object"; }
                echo "$shipment_id"
                return 0
                ;;
            failed | tracking_stopped)
                cat "$dir/tracking_request.json" >&2
                die "$backend: the sandbox tracking request ended $state"
                ;;
            esac
        fi
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            tail -n 30 "$dir/server.log" >&2
            die "$backend: the server exited while the tracking request was pending"
        fi
        tries=$((tries + 1))
        sleep 0.5
    done
    cat "$dir/tracking_request.json" >&2
    tail -n 30 "$dir/server.log" >&2
    die "$backend: tracking request $request_id still '${state:-?}' after ${SHIPMENT_WAIT_SECONDS}s"
}

# Whether two sizes differ by at most SIZE_TOLERANCE of the larger (exit status).
sizes_close() {
    awk -v a="$1" -v b="$2" -v t="$SIZE_TOLERANCE" 'BEGIN {
        m = (a > b ? a : b); d = (a > b ? a - b : b - a)
        exit !(m > 0 && d <= t * m)
    }'
}

# Ratio of two req/s figures, two decimals.
ratio_of() {
    awk -v a="$1" -v s="$2" 'BEGIN { printf "%.2f", (s > 0 ? a / s : 0) }'
}

# Sets VERDICT to "met" when ratio $1 >= goal ratio $3 and p99 $2 < the p99 goal, otherwise
# to "MISSED" and marks the run as having missed a goal. (Not run in $(...): it sets globals.)
VERDICT=""
set_verdict() {
    VERDICT="$(awk -v r="$1" -v p="$2" -v gr="$3" -v gp="$GOAL_P99_MS" \
        'BEGIN { print ((r >= gr && p < gp) ? "met" : "MISSED") }')"
    [[ "$VERDICT" == met ]] || GOALS_MISSED=1
}

bench_backend() {
    local backend="$1" database_url="$2"
    local dir="$WORK/$backend"
    mkdir -p "$dir/documents"
    wait_for_idle
    local busy
    busy="$(cpu_busy)"
    BUSY_NOTE+=" $backend $busy"
    local port
    port="$(free_port)"
    local base="http://127.0.0.1:$port"

    log "$backend: creating an API key"
    set_server_env "$database_url" "$port" "$dir"
    local key
    key="$(env "${SERVER_ENV[@]}" "$BIN" api-keys create --account bench 2>"$dir/keys.log")" ||
        { cat "$dir/keys.log" >&2; die "$backend: tidemark api-keys create failed"; }
    key="$(printf '%s' "$key" | tail -n 1 | tr -d '[:space:]')"
    [[ -n "$key" ]] || die "$backend: api-keys create printed no key"

    log "$backend: starting tidemark serve on $base"
    env "${SERVER_ENV[@]}" "$BIN" serve --role "$ROLE" >"$dir/server.out" 2>"$dir/server.log" &
    SERVER_PID=$!
    SERVER_PORT="$port"

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

    # The shipment route: a sandbox shipment, its size, and the static route to compare it
    # with (the one above when the sizes are within SIZE_TOLERANCE, else one at its size).
    local ship_url="" ship_size="" ship_static_url="" ship_static_size=""
    if [[ "${BENCH_SKIP_SHIPMENT:-}" != 1 ]]; then
        log "$backend: creating a sandbox shipment (tracking request TEST-TR-SUCCEEDED, SCAC TEST)"
        local shipment_id
        shipment_id="$(create_shipment "$base" "$header" "$dir" "$backend")"
        ship_url="$base/v2/shipments/$shipment_id?include=$SHIPMENT_INCLUDE"
        status="$(curl -sS -o "$dir/shipment.json" -w '%{http_code}' -H "$header" "$ship_url")"
        [[ "$status" == 200 ]] || { cat "$dir/shipment.json" >&2; die "$backend: GET /v2/shipments/$shipment_id answered $status"; }
        ship_size="$(wc -c <"$dir/shipment.json" | tr -d ' ')"
        local included
        included="$(json_get "$dir/shipment.json" '.included | length')"
        if sizes_close "$size" "$ship_size"; then
            ship_static_size="$size"
        else
            ship_static_size="$ship_size"
            ship_static_url="$base/bench/static/$ship_size"
            status="$(curl -sS -o "$dir/static-shipment.bin" -w '%{http_code}' "$ship_static_url")"
            [[ "$status" == 200 ]] || die "$backend: GET /bench/static/$ship_size answered $status"
        fi
        log "$backend: shipment $shipment_id answers $ship_size bytes (${included:-?} included resources); compared with /bench/static/$ship_static_size"
    fi
    log "$backend: port and static routes answer $size bytes; warming up, then ${SECONDS_PER_RUN}s of wrk per route"

    local round result static_result="" auth_result="" ship_static_result="" ship_result=""
    for ((round = 1; round <= ROUNDS; round++)); do
        ((ROUNDS == 1)) || log "$backend: round $round of $ROUNDS"
        warm_up "$static_url"
        result="$(run_wrk "$backend-static-$round" "$static_url")"
        static_result="$(least_disturbed "$static_result" "$result")"
        warm_up "$auth_url" -H "$header"
        result="$(run_wrk "$backend-auth-$round" "$auth_url" -H "$header")"
        auth_result="$(least_disturbed "$auth_result" "$result")"
        [[ -n "$ship_url" ]] || continue
        if [[ -n "$ship_static_url" ]]; then
            warm_up "$ship_static_url"
            result="$(run_wrk "$backend-static-$ship_static_size-$round" "$ship_static_url")"
            ship_static_result="$(least_disturbed "$ship_static_result" "$result")"
        fi
        warm_up "$ship_url" -H "$header"
        result="$(run_wrk "$backend-shipment-$round" "$ship_url" -H "$header")"
        ship_result="$(least_disturbed "$ship_result" "$result")"
    done

    local rss peak
    read -r rss peak <<<"$(server_memory)"
    MEMORY_NOTE+=" $backend ${peak} MB"
    stop_server

    local static_rps static_p50 static_p99 static_other auth_rps auth_p50 auth_p99 auth_other ratio
    read -r static_rps static_p50 static_p99 static_other <<<"$static_result"
    read -r auth_rps auth_p50 auth_p99 auth_other <<<"$auth_result"
    ratio="$(ratio_of "$auth_rps" "$static_rps")"
    RESULTS+=("$backend|/bench/static/$size|$static_rps|$static_p50|$static_p99|$static_other||")
    set_verdict "$ratio" "$auth_p99" "$GOAL_RATIO"
    RESULTS+=("$backend|/v2/ports/$LOCODE (auth)|$auth_rps|$auth_p50|$auth_p99|$auth_other|$ratio|$VERDICT (>= $GOAL_RATIO)")

    [[ -n "$ship_url" ]] || return 0
    local base_rps="$static_rps" ship_rps ship_p50 ship_p99 ship_other
    if [[ -n "$ship_static_url" ]]; then
        local s_rps s_p50 s_p99 s_other
        read -r s_rps s_p50 s_p99 s_other <<<"$ship_static_result"
        base_rps="$s_rps"
        RESULTS+=("$backend|/bench/static/$ship_static_size|$s_rps|$s_p50|$s_p99|$s_other||")
    fi
    read -r ship_rps ship_p50 ship_p99 ship_other <<<"$ship_result"
    ratio="$(ratio_of "$ship_rps" "$base_rps")"
    set_verdict "$ratio" "$ship_p99" "$GOAL_SHIPMENT_RATIO"
    RESULTS+=("$backend|/v2/shipments/{id}+3 (auth)|$ship_rps|$ship_p50|$ship_p99|$ship_other|$ratio|$VERDICT (>= $GOAL_SHIPMENT_RATIO)")
}

print_table() {
    printf '\n'
    printf 'wrk -t%s -c%s -d%ss per route, %s round(s), least disturbed shown; %s cores shared by wrk and the server\n' \
        "$THREADS" "$CONNECTIONS" "$SECONDS_PER_RUN" "$ROUNDS" "$(nproc 2>/dev/null || echo '?')"
    printf 'CPU busy with other work just before each backend:%s\n' "$BUSY_NOTE"
    printf 'server peak RSS (VmHWM) over the runs, %s worker threads:%s\n' \
        "${BENCH_WORKER_THREADS:-$(nproc 2>/dev/null || echo '?')}" "$MEMORY_NOTE"
    printf '"other" = share of all cores used by anything but tidemark and wrk during the run\n'
    printf '(PostgreSQL included); more than a few %% means the figures are skewed\n'
    printf '/v2/shipments/{id}+3 = GET /v2/shipments/{id}?include=%s;\n' "$SHIPMENT_INCLUDE"
    printf 'auth/static = req/s over the static row of the same size (within %.0f%%) above it\n' \
        "$(awk -v t="$SIZE_TOLERANCE" 'BEGIN { print t * 100 }')"
    printf 'goal: auth/static >= %s (ports) or >= %s (shipments), and p99 < %s ms\n\n' \
        "$GOAL_RATIO" "$GOAL_SHIPMENT_RATIO" "$GOAL_P99_MS"
    local format='%-9s %-27s %10s %7s %7s %6s %11s %s\n'
    # shellcheck disable=SC2059 # the format is the constant above
    {
        printf "$format" backend route "req/s" "p50 ms" "p99 ms" other "auth/static" goal
        printf "$format" ------- ----- ----- ------ ------ ----- ----------- ----
        local row backend route rps p50 p99 other ratio verdict
        for row in "${RESULTS[@]}"; do
            IFS='|' read -r backend route rps p50 p99 other ratio verdict <<<"$row"
            printf "$format" "$backend" "$route" "$rps" "$p50" "$p99" "$other" "$ratio" "$verdict"
        done
    }
    printf '\n'
}

main() {
    local pair variable setting
    for pair in BENCH_SECONDS:SECONDS_PER_RUN BENCH_CONNECTIONS:CONNECTIONS BENCH_THREADS:THREADS \
        BENCH_ROUNDS:ROUNDS BENCH_WARMUP_SECONDS:WARMUP_SECONDS; do
        setting="${pair%%:*}"
        variable="${pair#*:}"
        [[ "${!variable}" =~ ^[0-9]+$ ]] || die "$setting must be a whole number, not '${!variable}'"
    done
    ((SECONDS_PER_RUN > 0 && CONNECTIONS > 0 && THREADS > 0 && ROUNDS > 0)) ||
        die "BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_THREADS and BENCH_ROUNDS must be at least 1"
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
        PGOPTIONS="-c client_min_messages=warning" psql "$PG_ADMIN_URL" -qAt -v ON_ERROR_STOP=1 \
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
