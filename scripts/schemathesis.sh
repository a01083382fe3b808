#!/usr/bin/env bash
# Property-based run of the API against its own OpenAPI document (schemathesis 4 from PyPI):
# requests generated from the document, each response checked for a server error and for
# its status, content type, headers and body being the ones the document lists (ST108,
# response_schema_conformance, among them), plus the checks that follow resources across
# requests and methods. Runs a real `tidemark serve` on SQLite and on PostgreSQL in turn.
#
#   scripts/schemathesis.sh                      # both stores
#   SCHEMATHESIS_SKIP_POSTGRES=1 scripts/schemathesis.sh
#
# Each store starts with data, so that lists and reads answer with real resources, empty
# relationships (`{"data": null}`) and all, rather than only empty lists and 404s: a party,
# a custom field with an option and a value, a webhook and a sandbox voyage tracked until
# its shipment exists (`seed` below). Reads of a shipment, container, tracking request or
# custom field definition ask for the seeded one most of the time, a generated id the rest.
#
# One worker: CPython 3.11 can fail inside hypothesis with "AST constructor recursion depth
# mismatch" when two threads parse source at once, an error of the tool and not of the API.
#
# Settings: SCHEMATHESIS_MAX_EXAMPLES (10 per operation and phase), SCHEMATHESIS_SECONDS
# (300 per store, a hard stop that fails the run: raise it rather than let it cut a run
# short), SCHEMATHESIS_PG_ADMIN_URL (postgres://postgres@127.0.0.1:5432/postgres).
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=4.32.5
VENV="${SCHEMATHESIS_VENV:-/var/tmp/tidemark-schemathesis-$VERSION}"
MAX_EXAMPLES="${SCHEMATHESIS_MAX_EXAMPLES:-10}"
SECONDS_PER_STORE="${SCHEMATHESIS_SECONDS:-300}"
PG_ADMIN_URL="${SCHEMATHESIS_PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
TARGET="${CARGO_TARGET_DIR:-target}"
# Every check that holds for this API. Left out: negative_data_rejection and
# positive_data_acceptance (the document gives types, not every rule a value must follow:
# a well-typed SCAC the carriers do not know is still a 422), object_level_authorization
# (needs a second account's key) and missing_required_header (the only required header is
# the key, which ignored_auth covers).
CHECKS=not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance,use_after_free,ensure_resource_availability,ignored_auth,unsupported_method,allow_header_conformance

if [[ ! -x "$VENV/bin/schemathesis" ]] || ! "$VENV/bin/schemathesis" --version | grep -q "$VERSION"; then
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

# Creates the data through the API and prints the schemathesis configuration that points
# reads at it.
seed() {
    python3 - "$1" "$2" <<'PY'
import json, sys, time, urllib.request

base, key = sys.argv[1], sys.argv[2]


def call(method, path, body=None):
    request = urllib.request.Request(
        base + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Token {key}", "Content-Type": "application/vnd.api+json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def created(path, kind, attributes, relationships=None):
    data = {"type": kind, "attributes": attributes}
    if relationships:
        data["relationships"] = relationships
    return call("POST", path, {"data": data})["data"]["id"]


party = created("/v2/parties", "party", {"company_name": "Schemathesis Imports"})
definition = created(
    "/v2/custom_field_definitions",
    "custom_field_definition",
    {"api_slug": "priority", "display_name": "Priority", "entity_type": "Shipment", "data_type": "enum"},
)
created(f"/v2/custom_field_definitions/{definition}/options", "custom_field_option", {"value": "high", "label": "High"})
created("/v2/webhooks", "webhook", {"url": "https://hooks.example.com/schemathesis", "events": ["container.transport.vessel_departed"]})
request = created(
    "/v2/tracking_requests",
    "tracking_request",
    {"request_type": "bill_of_lading", "request_number": "TEST-TR-SUCCEEDED", "scac": "TEST"},
    {"customer": {"data": {"type": "party", "id": party}}},
)
for _ in range(120):
    tracked = call("GET", f"/v2/tracking_requests/{request}")["data"]
    if tracked["relationships"]["tracked_object"]["data"]:
        break
    time.sleep(0.5)
else:
    sys.exit("the sandbox voyage was not tracked within a minute")
shipment = tracked["relationships"]["tracked_object"]["data"]["id"]
container = call("GET", f"/v2/shipments/{shipment}")["data"]["relationships"]["containers"]["data"][0]["id"]
call("POST", f"/v2/shipments/{shipment}/custom_fields", {"data": {"attributes": {"api_slug": "priority", "value": "high"}}})

for name, value in [("shipment", shipment), ("container", container), ("tracking_request", request), ("definition", definition)]:
    print(f"[dictionaries.{name}]\nvalues = [{json.dumps(value)}]\n")
for path, name in [("shipments", "shipment"), ("containers", "container"), ("tracking_requests", "tracking_request"), ("custom_field_definitions", "definition")]:
    print("[[operations]]")
    print(f'include-path-regex = "^/v2/{path}/\\\\{{id\\\\}}"')
    print('include-method = "GET"')
    print(f'parameters = {{ "path.id" = {{ dictionary = "{name}", probability = 0.8 }} }}\n')
PY
}

# One store: a fresh database, a server on a free port, its data, the run, the server
# stopped.
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
    # Schemathesis keeps what it found (and replays it next time) in a cache directory,
    # by default in the working directory: here, with the run.
    printf '[cache]\ndirectory = "%s"\n\n' "$WORK/$name-cache" >"$WORK/$name.toml"
    seed "http://127.0.0.1:$port" "$key" >>"$WORK/$name.toml"
    # The key's own revocation is left out: the rest of the run would only see 401s.
    local status=0
    timeout --signal=INT "$SECONDS_PER_STORE" "$VENV/bin/schemathesis" \
        --config-file "$WORK/$name.toml" \
        run "http://127.0.0.1:$port/v2/openapi.json" \
        --header "Authorization: Token $key" \
        --checks "$CHECKS" \
        --exclude-path-regex '^/v2/api_keys/' \
        --max-examples "$MAX_EXAMPLES" \
        --workers 1 \
        --no-color || status=$?
    kill "$SERVER_PID" && wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
    if [[ $status -ne 0 ]]; then
        echo "schemathesis found problems against $name, or ran past ${SECONDS_PER_STORE}s (exit $status)" >&2
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
