# Shell helpers the benchmarks share; sourced by bench/http.sh, bench/bare.sh and
# bench/soak/soak.sh, each of which defines `die` first.

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
