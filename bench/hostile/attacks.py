#!/usr/bin/env python3
"""The attacks of issues 19 and 30 against a real `tidemark serve`, with the server's peak
memory, CPU seconds and open file descriptors before and after each.

usage: attacks.py BINARY {bomb,methods,idle,stalled_sign_in,console_flood}
                  [--as-limit BYTES] [--count N] [--wait S]
                  [--marks S ...] [--env TIDEMARK_X=V ...]

Starts BINARY (`tidemark serve`, role all, SQLite in a temporary directory) on a free
loopback port, runs one attack, prints one JSON object of figures, and stops the server.
`--as-limit` runs the server under `prlimit --as` (to keep an unprotected build's bomb from
taking the machine's memory). Figures come from /proc: VmRSS/VmHWM, utime+stime (the
server) and cutime+cstime (its reaped children: the extraction processes), and the entries
of /proc/PID/fd. Children's memory is sampled from their /proc/PID/status while they run.
"""
import argparse
import http.client
import json
import os
import resource
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bomb_pdf import bomb  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def status_kb(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return 0
    return 0


def cpu(pid):
    """(own CPU seconds, reaped children's CPU seconds)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    return (utime + stime) / TICK, (cutime + cstime) / TICK


def fds(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def children(pid):
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += [int(c) for c in f.read().split()]
    except OSError:
        pass
    return out


def snapshot(pid):
    own, kids = cpu(pid)
    return {
        "rss_mb": round(status_kb(pid, "VmRSS") / 1024, 1),
        "peak_rss_mb": round(status_kb(pid, "VmHWM") / 1024, 1),
        "cpu_s": round(own, 2),
        "children_cpu_s": round(kids, 2),
        "fds": fds(pid),
    }


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, binary, as_limit=None, env=None):
        self.dir = tempfile.mkdtemp(prefix="tidemark-hostile-")
        self.port = free_port()
        environment = dict(os.environ)
        environment.update(
            {
                "TIDEMARK_LISTEN": f"127.0.0.1:{self.port}",
                "TIDEMARK_DATABASE_URL": f"sqlite://{self.dir}/tidemark.db",
                "TIDEMARK_STORAGE_URL": f"file://{self.dir}/documents",
                "TIDEMARK_LOG_LEVEL": "warn",
                "TIDEMARK_SANDBOX_AIS_SECONDS": "0",
            }
        )
        environment.update(env or {})
        command = [binary, "serve"]
        if as_limit:
            command = ["prlimit", f"--as={as_limit}", "--"] + command
        self.log = open(os.path.join(self.dir, "server.log"), "w")
        self.process = subprocess.Popen(
            command, env=environment, stdout=subprocess.PIPE, stderr=self.log, text=True
        )
        self.key = self.process.stdout.readline().strip()
        self.pid = self.process.pid
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        time.sleep(1)

    def alive(self):
        return self.process.poll() is None

    def request(self, method, path, body=None, headers=None, key=True):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = dict(headers or {})
        if key:
            headers["Authorization"] = f"Token {self.key}"
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response.status, data

    def stop(self):
        if self.alive():
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.log.close()
        with open(os.path.join(self.dir, "server.log")) as f:
            tail = f.read()[-2000:]
        shutil.rmtree(self.dir, ignore_errors=True)
        return tail


def upload(server, name, data):
    boundary = "hostile-boundary-7MA4YWxk"
    body = (
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
        f"filename=\"{name}\"\r\nContent-Type: application/pdf\r\n\r\n"
    ).encode() + data + f"\r\n--{boundary}--\r\n".encode()
    status, answer = server.request(
        "POST",
        "/v2/documents",
        body,
        {"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    return status, json.loads(answer)


def attack_bomb(server, args):
    data = bomb(100, 31)
    before = snapshot(server.pid)
    status, answer = upload(server, "bomb.pdf", data)
    document = answer["data"]["id"]
    started = time.time()
    peak_child_kb = 0
    peak_server_kb = 0
    cpu_seen = before["cpu_s"]
    notes = None
    while time.time() - started < args.wait:
        if not server.alive():
            notes = "the server process died"
            break
        peak_server_kb = max(peak_server_kb, status_kb(server.pid, "VmHWM"))
        try:
            cpu_seen = max(cpu_seen, cpu(server.pid)[0])
        except OSError:
            pass
        for child in children(server.pid):
            peak_child_kb = max(peak_child_kb, status_kb(child, "VmHWM"), status_kb(child, "VmRSS"))
        try:
            code, body = server.request("GET", f"/v2/documents/{document}")
            attributes = json.loads(body)["data"]["attributes"]
            if attributes.get("document_type"):
                notes = attributes.get("classification_notes")
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.1)
    marked = snapshot(server.pid) if server.alive() else None
    elapsed = round(time.time() - started, 1)
    # Is anything still burning CPU after the document was marked?
    time.sleep(10)
    later = snapshot(server.pid) if server.alive() else None
    return {
        "attack": "bomb",
        "file_bytes": len(data),
        "upload_status": status,
        "notes": notes,
        "seconds_until_marked_or_dead": elapsed,
        "server_peak_rss_mb_sampled": round(peak_server_kb / 1024, 1),
        "server_cpu_s_last_seen": round(cpu_seen, 2),
        "before": before,
        "when_marked": marked,
        "ten_seconds_later": later,
        "peak_child_rss_mb_sampled": round(peak_child_kb / 1024, 1),
    }


def metrics_size(server):
    status, body = server.request("GET", "/metrics", key=False)
    return len(body)


def attack_methods(server, args):
    before = snapshot(server.pid)
    metrics_before = metrics_size(server)
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    started = time.time()
    for i in range(args.count):
        connection.request(f"ZZFUZZ{i}", "/healthz")
        response = connection.getresponse()
        response.read()
        if response.getheader("connection", "").lower() == "close":
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    elapsed = time.time() - started
    connection.close()
    return {
        "attack": "methods",
        "requests": args.count,
        "seconds": round(elapsed, 1),
        "metrics_bytes_before": metrics_before,
        "metrics_bytes_after": metrics_size(server),
        "before": before,
        "after": snapshot(server.pid),
    }


def attack_idle(server, args):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    before = snapshot(server.pid)
    sockets = []
    for i in range(args.count):
        s = socket.create_connection(("127.0.0.1", server.port))
        if i % 2:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: tidemark\r\nX-Half: ")
        s.setblocking(False)
        sockets.append(s)
    time.sleep(1)
    opened = snapshot(server.pid)
    marks = {}
    closed = set()
    started = time.time()
    for mark in args.marks:
        while time.time() - started < mark:
            readable, _, _ = select.select([s for s in sockets if s not in closed], [], [], 0.5)
            for s in readable:
                try:
                    if not s.recv(65536):
                        closed.add(s)
                except OSError:
                    closed.add(s)
        marks[f"after_{mark}s"] = {
            "closed_by_server": len(closed),
            "still_open": len(sockets) - len(closed),
            "server": snapshot(server.pid),
        }
    for s in sockets:
        s.close()
    return {
        "attack": "idle",
        "connections": args.count,
        "half_sent": args.count // 2,
        "before": before,
        "opened": opened,
        **marks,
    }


def attack_stalled_sign_in(server, args):
    """Console sign-ins whose bodies never arrive (issue 30, finding 3), then a probe of
    whether anyone else is still served."""
    before = snapshot(server.pid)
    sockets = []
    for _ in range(args.count):
        s = socket.create_connection(("127.0.0.1", server.port))
        s.sendall(
            b"POST /sign-in HTTP/1.1\r\nHost: tidemark\r\nAccept: text/html\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n"
        )
        s.setblocking(False)
        sockets.append(s)
    time.sleep(0.5)
    opened = snapshot(server.pid)
    try:
        probe_during = server.request("GET", "/healthz", key=False)[0]
    except OSError as error:
        probe_during = str(error)
    marks = {}
    closed = {}
    answers = {}
    started = time.time()
    for mark in args.marks:
        while time.time() - started < mark and len(closed) < len(sockets):
            readable, _, _ = select.select([s for s in sockets if s not in closed], [], [], 0.5)
            for s in readable:
                try:
                    data = s.recv(65536)
                except OSError:
                    data = b""
                if data:
                    status = data.split(b" ", 2)[1].decode() if data.startswith(b"HTTP/") else "?"
                    answers.setdefault(s, status)
                else:
                    closed[s] = round(time.time() - started, 1)
        marks[f"after_{mark}s"] = {
            "closed_by_server": len(closed),
            "still_open": len(sockets) - len(closed),
            "server": snapshot(server.pid),
        }
    try:
        probe_after = server.request("GET", "/healthz", key=False)[0]
    except OSError as error:
        probe_after = str(error)
    for s in sockets:
        s.close()
    statuses = {}
    for status in answers.values():
        statuses[status] = statuses.get(status, 0) + 1
    return {
        "attack": "stalled_sign_in",
        "connections": args.count,
        "before": before,
        "opened": opened,
        "healthz_during": probe_during,
        "healthz_after": probe_after,
        "answers": statuses,
        "slowest_close_s": max(closed.values(), default=None),
        **marks,
    }


def attack_console_flood(server, args):
    """Numbers submitted through the console's Track form as fast as one client can (issue
    30, finding 6): how many were accepted against the key's rate limit."""
    import re
    import urllib.parse

    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    body = urllib.parse.urlencode({"api_key": server.key})
    connection.request(
        "POST", "/sign-in", body=body,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    response = connection.getresponse()
    response.read()
    cookie = response.getheader("Set-Cookie").split(";")[0]
    connection.request("GET", "/track", headers={"Cookie": cookie})
    page = connection.getresponse().read().decode()
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    before = snapshot(server.pid)
    counts = {}
    started = time.time()
    for n in range(args.count):
        form = urllib.parse.urlencode(
            {"csrf": csrf, "number": f"TEST-TR-SUCCEEDED-{n}", "scac": "TEST",
             "request_type": "bill_of_lading"}
        )
        headers = {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"}
        try:
            connection.request("POST", "/track", body=form, headers=headers)
            response = connection.getresponse()
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            # A refusal before the body is read closes the connection: open another.
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            connection.request("POST", "/track", body=form, headers=headers)
            response = connection.getresponse()
        response.read()
        counts[response.status] = counts.get(response.status, 0) + 1
    elapsed = round(time.time() - started, 2)
    connection.close()
    status, listed = server.request("GET", "/v2/tracking_requests?page[size]=1")
    total = json.loads(listed).get("meta", {}).get("total") if status == 200 else status
    return {
        "attack": "console_flood",
        "submitted": args.count,
        "seconds": elapsed,
        "answers": {str(k): v for k, v in sorted(counts.items())},
        "tracking_requests_stored": total,
        "before": before,
        "after": snapshot(server.pid),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument(
        "attack", choices=["bomb", "methods", "idle", "stalled_sign_in", "console_flood"]
    )
    parser.add_argument("--as-limit")
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--wait", type=float, default=120)
    parser.add_argument("--marks", type=float, nargs="*", default=[15, 45])
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE for the server")
    args = parser.parse_args()
    env = dict(item.split("=", 1) for item in args.env)
    server = Server(args.binary, args.as_limit, env)
    try:
        attacks = {
            "bomb": attack_bomb,
            "methods": attack_methods,
            "idle": attack_idle,
            "stalled_sign_in": attack_stalled_sign_in,
            "console_flood": attack_console_flood,
        }
        figures = attacks[args.attack](server, args)
    finally:
        tail = server.stop()
    figures["server_log_tail"] = tail[-600:]
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
