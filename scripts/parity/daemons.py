"""Starting, feeding and stopping the two systems the suite compares.

Graphite: carbon-cache (plaintext, pickle and cache-query ports, whisper
files in the work directory) and graphite-web (Django's server) reading those
files. pgts: `pgts serve` on a fresh database of the embedded cluster in
.parity/pgdata. Everything listens on 127.0.0.1, on ports the kernel chose.

Each daemon is a child process owned by the runner: stop() sends it SIGTERM
and waits, then SIGKILL after a timeout. Logs go to files in the work dir.
"""

import json
import os
import pickle
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))

RETENTIONS = "10s:6h,1m:7d,1h:1y"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=30):
    """GET url; returns (status, body bytes). Never raises on HTTP errors."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def wait_until(what, check, timeout, interval=0.2):
    deadline = time.monotonic() + timeout
    while True:
        try:
            if check():
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("timed out after %ds waiting for %s" % (timeout, what))
        time.sleep(interval)


class Proc:
    """A child process with its log file."""

    def __init__(self, name, argv, env, log_path, cwd=None):
        self.name = name
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.p = subprocess.Popen(argv, env=env, stdout=self.log, stderr=subprocess.STDOUT, cwd=cwd)

    def check_alive(self):
        if self.p.poll() is not None:
            raise RuntimeError("%s exited with %s; its log (%s):\n%s" % (
                self.name, self.p.returncode, self.log_path, tail(self.log_path)))

    def stop(self, timeout=30):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.log.close()


def tail(path, n=40):
    try:
        with open(path, "rb") as f:
            lines = f.read().decode("utf-8", "replace").splitlines()
        return "\n".join(lines[-n:])
    except OSError:
        return ""


class Graphite:
    """carbon-cache + graphite-web over one whisper directory."""

    def __init__(self, venv, work, name="graphite"):
        self.venv = venv
        self.dir = os.path.join(work, name)
        self.line_port = free_port()
        self.pickle_port = free_port()
        self.query_port = free_port()
        self.web_port = free_port()
        self.url = "http://127.0.0.1:%d" % self.web_port
        self.procs = []

    def env(self):
        env = dict(os.environ)
        env.update({
            "GRAPHITE_ROOT": self.dir,
            "GRAPHITE_CONF_DIR": os.path.join(self.dir, "conf"),
            "GRAPHITE_STORAGE_DIR": self.dir,
            "PYTHONPATH": HERE,
            "GRAPHITE_SETTINGS_MODULE": "parity_graphite_settings",
            "PARITY_GRAPHITE_DIR": self.dir,
            "PARITY_CARBONLINK": "127.0.0.1:%d:a" % self.query_port,
            "DJANGO_SETTINGS_MODULE": "graphite.settings",
            "TZ": "UTC",
        })
        return env

    def write_config(self):
        conf = os.path.join(self.dir, "conf")
        for d in (conf, os.path.join(self.dir, "whisper"), os.path.join(self.dir, "log", "webapp")):
            os.makedirs(d, exist_ok=True)
        # Settings that make carbon write everything it receives, at once and
        # without limits: no rate limits, no creation limit, no lag.
        carbon = """[cache]
STORAGE_DIR = {d}
LOCAL_DATA_DIR = {d}/whisper
WHITELISTS_DIR = {d}/lists
LOG_DIR = {d}/log
PID_DIR = {d}
DATABASE = whisper
ENABLE_LOGROTATION = False
USER =
MAX_CACHE_SIZE = inf
MAX_UPDATES_PER_SECOND = inf
MAX_UPDATES_PER_SECOND_ON_SHUTDOWN = inf
MAX_CREATES_PER_MINUTE = inf
MIN_TIMESTAMP_RESOLUTION = 1
LINE_RECEIVER_INTERFACE = 127.0.0.1
LINE_RECEIVER_PORT = {line}
ENABLE_UDP_LISTENER = False
PICKLE_RECEIVER_INTERFACE = 127.0.0.1
PICKLE_RECEIVER_PORT = {pickle}
CACHE_QUERY_INTERFACE = 127.0.0.1
CACHE_QUERY_PORT = {query}
USE_FLOW_CONTROL = True
LOG_UPDATES = False
LOG_CREATES = True
LOG_LISTENER_CONN_SUCCESS = False
CACHE_WRITE_STRATEGY = sorted
WHISPER_AUTOFLUSH = False
WHISPER_FALLOCATE_CREATE = False
CARBON_METRIC_INTERVAL = 0
ENABLE_TAGS = True
GRAPHITE_URL = {web}
TAG_UPDATE_INTERVAL = 1
TAG_BATCH_SIZE = 100
""".format(d=self.dir, line=self.line_port, pickle=self.pickle_port, query=self.query_port, web=self.url)
        with open(os.path.join(conf, "carbon.conf"), "w") as f:
            f.write(carbon)
        with open(os.path.join(conf, "storage-schemas.conf"), "w") as f:
            f.write("[default]\npattern = .*\nretentions = %s\n" % RETENTIONS)
        with open(os.path.join(conf, "storage-aggregation.conf"), "w") as f:
            f.write("[default]\npattern = .*\nxFilesFactor = 0.5\naggregationMethod = average\n")

    def start(self):
        if os.path.exists(self.dir):
            shutil.rmtree(self.dir)
        self.write_config()
        env = self.env()
        py = os.path.join(self.venv, "bin", "python")
        bindir = os.path.join(self.venv, "bin")
        out = subprocess.run([py, os.path.join(bindir, "django-admin"), "migrate", "--noinput"],
                             env=env, capture_output=True)
        if out.returncode != 0:
            raise RuntimeError("graphite-web migrate failed:\n%s" % (out.stdout + out.stderr).decode())
        web = Proc("graphite-web", [py, os.path.join(bindir, "django-admin"), "runserver", "--noreload",
                                    "127.0.0.1:%d" % self.web_port],
                   env, os.path.join(self.dir, "graphite-web.log"))
        self.procs.append(web)
        carbon = Proc("carbon-cache", [py, os.path.join(bindir, "carbon-cache.py"),
                                       "--config=" + os.path.join(self.dir, "conf", "carbon.conf"),
                                       "--nodaemon", "--instance=a", "start"],
                      env, os.path.join(self.dir, "carbon-cache.log"))
        self.procs.append(carbon)

        def web_ready():
            web.check_alive()
            return http_get(self.url + "/version", timeout=5)[0] == 200

        def carbon_ready():
            carbon.check_alive()
            with socket.create_connection(("127.0.0.1", self.line_port), timeout=1):
                return True
        wait_until("graphite-web", web_ready, 60)
        wait_until("carbon-cache", carbon_ready, 60)

    def cached(self, names):
        """How many points carbon's cache still holds for names."""
        req = pickle.dumps({"type": "cache-query-bulk", "metrics": sorted(names)}, protocol=2)
        with socket.create_connection(("127.0.0.1", self.query_port), timeout=30) as s:
            s.sendall(struct.pack("!L", len(req)) + req)
            n = struct.unpack("!L", recv_exact(s, 4))[0]
            resp = pickle.loads(recv_exact(s, n))
        if "error" in resp:
            raise RuntimeError("carbon cache query: %s" % resp["error"])
        by = resp.get("datapointsByMetric", {})
        return sum(len(v) for v in by.values())

    def wait_stored(self, names, timeout=120):
        """Waits until carbon's cache is empty: carbon's writer thread takes
        a series out of the cache and writes it at once, and rests a second
        when the cache is empty, so an empty cache seen twice 1.5 s apart
        means every point received is in its whisper file."""
        for p in self.procs:
            p.check_alive()
        wait_until("carbon's cache to empty", lambda: self.cached(names) == 0, timeout, 0.3)
        time.sleep(1.5)
        wait_until("carbon's cache to empty", lambda: self.cached(names) == 0, timeout, 0.3)

    def wait_tags(self, tagged, timeout=60):
        """Waits until carbon has registered every tagged series in
        graphite-web's tag database (carbon posts them in the background)."""
        if not tagged:
            return

        def have():
            q = urllib.parse.urlencode({"expr": "name=~."})
            st, body = http_get(self.url + "/tags/findSeries?" + q)
            return st == 200 and set(tagged) <= set(json.loads(body))
        wait_until("tagged series in graphite-web's tag database", have, timeout, 0.5)

    def stop(self):
        for p in reversed(self.procs):
            p.stop()

    def stop_cluster(self):
        pass


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise RuntimeError("connection closed after %d of %d bytes" % (len(buf), n))
        buf += chunk
    return buf


class Pgts:
    """`pgts serve` on a fresh database of the embedded cluster."""

    def __init__(self, binary, parity_dir, work):
        self.bin = binary
        self.data_dir = os.path.join(parity_dir, "pgdata")
        self.dir = os.path.join(work, "pgts")
        self.line_port = free_port()
        self.pickle_port = free_port()
        self.http_port = free_port()
        self.url = "http://127.0.0.1:%d" % self.http_port
        self.proc = None
        # extra TOML appended to the config (make bench-render: [render] limits)
        self.extra_config = ""

    def pgts(self, *args):
        out = subprocess.run([self.bin, "--data-dir", self.data_dir] + list(args), capture_output=True)
        if out.returncode != 0:
            raise RuntimeError("pgts %s failed:\n%s" % (" ".join(args), (out.stdout + out.stderr).decode()))
        return out.stdout.decode()

    def write_config(self):
        cfg = """# parity suite: the archives of the reference Graphite
# (storage-schemas 10s:6h,1m:7d,1h:1y; storage-aggregation average, xFilesFactor 0.5)
log-interval = "1s"

[graphite]
tcp = "127.0.0.1:{line}"
udp = ""

[pickle]
tcp = "127.0.0.1:{pickle}"

[statsd]
udp = ""
tcp = ""

[http]
addr = "127.0.0.1:{http}"

[[ds]]
regexp = "."
step = "10s"
archives = ["10s:6h:0.5", "1m:7d:0.5", "1h:1y:0.5"]
""".format(line=self.line_port, pickle=self.pickle_port, http=self.http_port) + self.extra_config
        path = os.path.join(self.dir, "pgts.toml")
        with open(path, "w") as f:
            f.write(cfg)
        return path

    def start(self):
        if os.path.exists(self.dir):
            shutil.rmtree(self.dir)
        os.makedirs(self.dir)
        cfg = self.write_config()
        self.pgts("serve", "--config", cfg, "--check-config")
        self.pgts("db", "start")
        url = self.pgts("db", "url").strip()
        self.pgts("db", "psql", "-q", "-c", "DROP DATABASE IF EXISTS parity", "-c", "CREATE DATABASE parity")
        u = urllib.parse.urlsplit(url)
        db = urllib.parse.urlunsplit((u.scheme, u.netloc, "/parity", u.query, u.fragment))
        self.proc = Proc("pgts serve", [self.bin, "--data-dir", self.data_dir, "--db", db, "serve", "--config", cfg],
                         dict(os.environ, TZ="UTC"), os.path.join(self.dir, "pgts-serve.log"))

        def ready():
            self.proc.check_alive()
            return http_get(self.url + "/healthz", timeout=5)[0] == 200
        wait_until("pgts serve", ready, 60)

    def received(self):
        """Points received per protocol and points still waiting, from /metrics."""
        st, body = http_get(self.url + "/metrics")
        if st != 200:
            raise RuntimeError("pgts /metrics answered %d" % st)
        got, waiting = {}, 0
        for line in body.decode().splitlines():
            m = re.match(r'pgts_serve_points_received_total\{protocol="([^"]+)"\} (\S+)', line)
            if m:
                got[m.group(1)] = float(m.group(2))
            m = re.match(r'pgts_serve_sink_waiting_points\{[^}]*\} (\S+)', line)
            if m:
                waiting += float(m.group(1))
        return got, waiting

    def wait_stored(self, want, timeout=120):
        """Waits until /metrics counts want[protocol] points received per
        protocol and none waiting for the storage (reads include the
        storage's cache, so received and handed over is what matters)."""
        def done():
            self.proc.check_alive()
            got, waiting = self.received()
            return waiting == 0 and all(got.get(k, 0) >= v for k, v in want.items())
        wait_until("pgts to receive every point", done, timeout, 0.2)

    def stop(self):
        if self.proc:
            self.proc.stop(60)

    def stop_cluster(self):
        subprocess.run([self.bin, "--data-dir", self.data_dir, "db", "stop"], capture_output=True)


def send_plaintext(port, points):
    lines = []
    for name, ts, value in points:
        lines.append("%s %r %d\n" % (name, float(value), ts))
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall("".join(lines).encode())
        s.shutdown(socket.SHUT_WR)
        drain(s)


def send_pickle(port, points, batch=500):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        for i in range(0, len(points), batch):
            chunk = [(name, (ts, float(value))) for name, ts, value in points[i:i + batch]]
            payload = pickle.dumps(chunk, protocol=2)
            s.sendall(struct.pack("!L", len(payload)) + payload)
        s.shutdown(socket.SHUT_WR)
        drain(s)


def drain(s):
    """Waits for the server to close its side: it has read everything."""
    s.settimeout(30)
    try:
        while s.recv(4096):
            pass
    except (socket.timeout, ConnectionResetError):
        pass


_start = time.monotonic()


def log(msg):
    print("parity: %5.1fs %s" % (time.monotonic() - _start, msg), file=sys.stderr, flush=True)
