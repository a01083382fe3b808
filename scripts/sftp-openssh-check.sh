#!/usr/bin/env bash
# The SFTP mailbox poller against a real OpenSSH server, through `tidemark serve` and its
# settings file: sshd (OpenSSH, Debian's openssh-server) on 127.0.0.1 with a fresh host key
# and client key, a 315 interchange in its folder, Tidemark configured with `[[edi.sftp]]`;
# then the interchange must be listed by the API (channel sftp) and the remote file moved
# to processed/, and a file that is not EDI moved to rejected/ beside its reason. Run as root (sshd's privilege separation); needs /usr/sbin/sshd.
#
#   scripts/sftp-openssh-check.sh            (builds the debug binary if needed)
#   TIDEMARK_BIN=path/to/tidemark scripts/sftp-openssh-check.sh
#   SSH_KEY_TYPE=rsa scripts/sftp-openssh-check.sh   (ed25519 by default; also ecdsa)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${TIDEMARK_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/debug/tidemark}"
KEY_TYPE="${SSH_KEY_TYPE:-ed25519}"
SSH_PORT="${SSH_PORT:-2222}"
HTTP_PORT="${HTTP_PORT:-18089}"
FIXTURE="$ROOT/crates/edi/tests/fixtures/x12_4010_315_hamsud_discharged.edi"

[ -x /usr/sbin/sshd ] || { echo "needs /usr/sbin/sshd (apt-get install openssh-server)" >&2; exit 2; }
[ -x "$BIN" ] || (cd "$ROOT" && cargo build -q -p tidemark-server --bin tidemark)

WORK="$(mktemp -d -t tidemark-sftp.XXXXXX)"
chmod 755 "$WORK"
SSHD_PID=""
SERVER_PID=""
cleanup() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
    [ -n "$SSHD_PID" ] && kill "$SSHD_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

ssh-keygen -q -t "$KEY_TYPE" -N '' -f "$WORK/host_key"
ssh-keygen -q -t "$KEY_TYPE" -N '' -f "$WORK/client_key"
cp "$WORK/client_key.pub" "$WORK/authorized_keys"
mkdir -p "$WORK/inbox" /run/sshd
cp "$FIXTURE" "$WORK/inbox/hamsud-315.edi"
printf 'hello, not an interchange\n' > "$WORK/inbox/notes.edi"

cat > "$WORK/sshd_config" <<CONF
Port $SSH_PORT
ListenAddress 127.0.0.1
HostKey $WORK/host_key
AuthorizedKeysFile $WORK/authorized_keys
PidFile $WORK/sshd.pid
StrictModes no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
Subsystem sftp /usr/lib/openssh/sftp-server
CONF
/usr/sbin/sshd -D -e -f "$WORK/sshd_config" 2> "$WORK/sshd.log" &
SSHD_PID=$!

cat > "$WORK/tidemark.toml" <<CONF
listen = "127.0.0.1:$HTTP_PORT"
database_url = "sqlite://$WORK/tidemark.db"

[[edi.sftp]]
host = "127.0.0.1"
port = $SSH_PORT
user = "$(id -un)"
private_key_file = "$WORK/client_key"
host_key = "$(cat "$WORK/host_key.pub")"
remote_dir = "$WORK/inbox"
account = "edi-check"
interval_seconds = 1
CONF

KEY="$("$BIN" --config "$WORK/tidemark.toml" api-keys create --account edi-check 2>/dev/null)"
"$BIN" --config "$WORK/tidemark.toml" serve > "$WORK/serve.log" 2>&1 &
SERVER_PID=$!

echo "--- waiting for the interchange to be taken (OpenSSH $(/usr/sbin/sshd -V 2>&1 | head -1), $KEY_TYPE keys)"
for _ in $(seq 1 60); do
    if [ -f "$WORK/inbox/processed/hamsud-315.edi" ] && [ -f "$WORK/inbox/rejected/notes.edi" ]; then break; fi
    sleep 1
done
ANSWER="$(curl -s -H "Authorization: Token $KEY" "http://127.0.0.1:$HTTP_PORT/v2/edi_messages")"
echo "$ANSWER" | python3 -c '
import json, sys
doc = json.load(sys.stdin)
rows = doc.get("data", [])
for row in rows:
    a = row["attributes"]
    print(" ", a.get("channel"), a.get("source_name"), a.get("status"), "sender:", a.get("sender"),
          "transactions:", a.get("transactions_count"), "statuses:", a.get("statuses_count"))
ok = any(r["attributes"].get("channel") == "sftp" for r in rows)
sys.exit(0 if ok else 1)
' || { echo "FAILED: no sftp message listed"; echo "--- serve.log"; tail -30 "$WORK/serve.log"; echo "--- sshd.log"; tail -20 "$WORK/sshd.log"; exit 1; }
[ -f "$WORK/inbox/processed/hamsud-315.edi" ] || { echo "FAILED: the remote file was not moved to processed/"; ls -R "$WORK/inbox"; exit 1; }
[ ! -e "$WORK/inbox/hamsud-315.edi" ] || { echo "FAILED: the remote file is still in the folder"; exit 1; }
[ -f "$WORK/inbox/rejected/notes.edi" ] && [ -s "$WORK/inbox/rejected/notes.edi.reason.txt" ] || { echo "FAILED: the file that is not EDI was not moved to rejected/ with its reason"; ls -R "$WORK/inbox"; exit 1; }
echo "  rejected/notes.edi.reason.txt: $(cat "$WORK/inbox/rejected/notes.edi.reason.txt")"
echo "OK: taken over SFTP from OpenSSH, stored, listed, moved to processed/; a file that is not EDI moved to rejected/ with its reason"
