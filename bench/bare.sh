#!/usr/bin/env bash
# Tidemark's `GET /bench/static/{bytes}` against a bare axum server answering the same bytes
# (crates/server/examples/bare_axum.rs), over HTTP with wrk: what Tidemark's HTTP stack (the
# shared layers, the listener's connection accounting and limits) leaves of bare axum's
# throughput. Issue 33's goal: Tidemark / bare >= 0.90 on the same cores.
# See bench/README.md ("Tidemark against bare axum").
#
# Both servers run at once, on the same runtime settings (TOKIO_WORKER_THREADS, one worker
# per core by default) and allocator; wrk asks one, then the other, in turn, for
# BENCH_ROUNDS rounds, so a change in the machine's load hits both alike. Each round prints
# both rates, the ratio, and the server CPU per request.
#
# Settings (environment):
#   BENCH_SECONDS=10          length of each measured wrk run
#   BENCH_WARMUP_SECONDS=2    unmeasured wrk run before each measured one
#   BENCH_CONNECTIONS=64      wrk -c
#   BENCH_THREADS=2           wrk -t
#   BENCH_ROUNDS=3            rounds of (Tidemark, bare)
#   BENCH_BYTES=700           response size (the port document's)
#   BENCH_NO_BUILD=1          skip `cargo build --release` (use existing binaries)
#   BENCH_BIN=PATH            the tidemark binary (default: target/release/tidemark)
#   BENCH_BARE_BIN=PATH       the bare server (default: target/release/examples/bare_axum)
#   BENCH_ROLE=api            `tidemark serve --role` (api: no background workers)
#   BENCH_WORKER_THREADS=N    both servers' TOKIO_WORKER_THREADS (default: one per core)
#   BENCH_PERF=1              also record `perf record -g` of Tidemark during its first
#                             measured run (perf.data kept in BENCH_PERF_DIR, default .)
#
# Only 127.0.0.1 is ever targeted.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_PER_RUN="${BENCH_SECONDS:-10}"
WARMUP_SECONDS="${BENCH_WARMUP_SECONDS:-2}"
CONNECTIONS="${BENCH_CONNECTIONS:-64}"
THREADS="${BENCH_THREADS:-2}"
ROUNDS="${BENCH_ROUNDS:-3}"
BYTES="${BENCH_BYTES:-700}"
ROLE="${BENCH_ROLE:-api}"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
BIN="${BENCH_BIN:-$TARGET/release/tidemark}"
BARE_BIN="${BENCH_BARE_BIN:-$TARGET/release/examples/bare_axum}"
GOAL="0.90"

WORK="$(mktemp -d -t tidemark-bare.XXXXXX)"
TIDEMARK_PID=""
BARE_PID=""

log() { printf '[bare] %s\n' "$*" >&2; }
die() { printf '[bare] error: %s\n' "$*" >&2; exit 1; }

stop() {
    local pid="$1"
    [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    local waited=0
    while kill -0 "$pid" 2>/dev/null && ((waited < 100)); do
        sleep 0.1
        waited=$((waited + 1))
    done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null || true
}

cleanup() {
    local status=$?
    stop "$TIDEMARK_PID"
    stop "$BARE_PID"
    rm -rf "$WORK"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# free_port, shared with the other benchmarks.
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

wait_ready() {
    local name="$1" pid="$2" url="$3" tries=0
    until curl -fsS -o /dev/null --max-time 1 "$url" 2>/dev/null; do
        kill -0 "$pid" 2>/dev/null || { tail -n 30 "$WORK/$name.log" >&2; die "$name exited before it was ready"; }
        tries=$((tries + 1))
        ((tries < 300)) || die "$name not ready after 30 s"
        sleep 0.1
    done
}

# utime + stime of a process, in clock ticks.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# Runs wrk on $2 (server pid $3); prints "REQ_PER_S P99 US_PER_REQUEST".
measure() {
    local name="$1" url="$2" pid="$3" out="$WORK/$1.wrk"
    ((WARMUP_SECONDS > 0)) && { wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP_SECONDS}s" "$url" >/dev/null 2>&1 || true; }
    local before after perf_pid=""
    if [[ -n "${BENCH_PERF:-}" && "$name" == tidemark-1 ]]; then
        perf record -F 999 -g -p "$pid" -o "${BENCH_PERF_DIR:-.}/perf-tidemark.data" \
            -- sleep "$SECONDS_PER_RUN" >/dev/null 2>"$WORK/perf.log" &
        perf_pid=$!
    fi
    before="$(ticks "$pid")"
    wrk --latency -t"$THREADS" -c"$CONNECTIONS" -d"${SECONDS_PER_RUN}s" "$url" >"$out" 2>&1 ||
        { cat "$out" >&2; die "wrk failed on $url"; }
    after="$(ticks "$pid")"
    [[ -z "$perf_pid" ]] || wait "$perf_pid" || true
    grep -q 'Non-2xx or 3xx responses' "$out" && { cat "$out" >&2; die "$name: non-2xx responses"; }
    local rps p99
    rps="$(awk '/^Requests\/sec:/ { print $2 }' "$out")"
    p99="$(awk '$1 == "99%" { print $2 }' "$out")"
    [[ -n "$rps" ]] || { cat "$out" >&2; die "$name: cannot read wrk's output"; }
    awk -v r="$rps" -v p="$p99" -v t="$((after - before))" -v s="$SECONDS_PER_RUN" \
        'BEGIN { printf "%s %s %.1f\n", r, p, (r > 0 ? t / 100 / s * 1e6 / r : 0) }'
}

main() {
    command -v wrk >/dev/null 2>&1 || die "needs wrk (Debian/Ubuntu: apt-get install wrk)"
    command -v curl >/dev/null 2>&1 || die "needs curl"
    if [[ -z "${BENCH_NO_BUILD:-}" ]]; then
        # Two builds: an example brings the dev-dependencies' features in, and the tidemark
        # binary measured is the one shipped (the first build of the example compiles the
        # library a second time).
        log "building (cargo build --release -p tidemark-server --bin tidemark, then --example bare_axum)"
        (cd "$ROOT" && cargo build --release -p tidemark-server --bin tidemark &&
            cargo build --release -p tidemark-server --example bare_axum) >&2
    fi
    [[ -x "$BIN" ]] || die "no tidemark binary at $BIN (set BENCH_BIN)"
    [[ -x "$BARE_BIN" ]] || die "no bare server at $BARE_BIN (set BENCH_BARE_BIN)"

    local threads=()
    [[ -z "${BENCH_WORKER_THREADS:-}" ]] || threads=(TOKIO_WORKER_THREADS="$BENCH_WORKER_THREADS")
    local tport bport
    tport="$(free_port)"
    mkdir -p "$WORK/documents"
    env "${threads[@]}" TIDEMARK_LISTEN="127.0.0.1:$tport" \
        TIDEMARK_DATABASE_URL="sqlite://$WORK/tidemark.db" \
        TIDEMARK_STORAGE_URL="file://$WORK/documents" \
        TIDEMARK_PUBLIC_URL="http://127.0.0.1:$tport" \
        TIDEMARK_BENCH_ROUTES=true TIDEMARK_LOG_LEVEL=warn \
        "$BIN" serve --role "$ROLE" >"$WORK/tidemark.out" 2>"$WORK/tidemark.log" &
    TIDEMARK_PID=$!
    wait_ready tidemark "$TIDEMARK_PID" "http://127.0.0.1:$tport/bench/static/$BYTES"
    bport="$(free_port)"
    env "${threads[@]}" "$BARE_BIN" "127.0.0.1:$bport" >"$WORK/bare.out" 2>"$WORK/bare.log" &
    BARE_PID=$!
    wait_ready bare "$BARE_PID" "http://127.0.0.1:$bport/bench/static/$BYTES"
    local a b
    a="$(curl -fsS "http://127.0.0.1:$tport/bench/static/$BYTES" | wc -c)"
    b="$(curl -fsS "http://127.0.0.1:$bport/bench/static/$BYTES" | wc -c)"
    [[ "$a" == "$b" ]] || die "the two servers answer different sizes ($a and $b bytes)"

    log "load before: $(uptime | sed 's/.*load average: //')"
    printf 'wrk -t%s -c%s -d%ss, %s bytes, %s round(s) in turn; %s cores; worker threads %s\n' \
        "$THREADS" "$CONNECTIONS" "$SECONDS_PER_RUN" "$BYTES" "$ROUNDS" "$(nproc)" \
        "${BENCH_WORKER_THREADS:-one per core}"
    printf '%-6s %12s %9s %9s %12s %9s %9s %7s\n' round "tidemark/s" "p99" "us/req" "bare/s" "p99" "us/req" ratio
    local round t b ratios=()
    for ((round = 1; round <= ROUNDS; round++)); do
        t="$(measure "tidemark-$round" "http://127.0.0.1:$tport/bench/static/$BYTES" "$TIDEMARK_PID")"
        b="$(measure "bare-$round" "http://127.0.0.1:$bport/bench/static/$BYTES" "$BARE_PID")"
        local tr tp tu br bp bu ratio
        read -r tr tp tu <<<"$t"
        read -r br bp bu <<<"$b"
        ratio="$(awk -v a="$tr" -v b="$br" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
        ratios+=("$ratio")
        printf '%-6s %12s %9s %9s %12s %9s %9s %7s\n' "$round" "$tr" "$tp" "$tu" "$br" "$bp" "$bu" "$ratio"
    done
    local sorted
    sorted="$(printf '%s\n' "${ratios[@]}" | sort -n | tr '\n' ' ')"
    printf 'tidemark/bare per round (sorted): %s(goal >= %s); load after: %s\n' \
        "$sorted" "$GOAL" "$(uptime | sed 's/.*load average: //')"
}

main "$@"
