"""Render latency: pgts serve beside graphite-web 1.1.10 and VictoriaMetrics
on the same data.

pgts and graphite-web are started as the parity suite starts them
(scripts/parity/daemons.py), except that graphite-web runs under gunicorn
with 2 workers. With --vm, VictoriaMetrics (single-node victoria-metrics,
its Graphite render API, -search.graphiteStorageStep set to --every, its
response cache off since the bench repeats requests) runs beside them in
its own process group, with a temporary data directory removed at the end.
The series:

  bench.glob.s<i>            --glob series   (a glob, averageSeries)
  bench.sum.s<i>             --sum series    (sumSeries)
  bench.tag;dc=<d>;host=h<i> --tagged series (seriesByTag selects h10..h19)

hold one point every --every seconds over the last --hours hours, except
the tagged series that seriesByTag does not select, which hold one point
each (their last). pgts gets every point through the pickle protocol;
graphite-web's whisper files and tag database are written in bulk by
graphite_bulk.py (whisper.create + update_many, as carbon's writer does,
and tag_series' rows in one transaction), since carbon's one HTTP call per
tagged series takes hours at 300,000. A tagged series the bench's requests
never read (one point, not selected) is registered in graphite-web's tag
database, which is what seriesByTag searches, without a whisper file.
VictoriaMetrics gets the same points over Graphite plaintext (TCP), then
a forced flush once it counts them all inserted; pgts is timed once its
store has written everything it received to PostgreSQL (its /metrics
count no unflushed series and a completed flush that stored no slot), not
while the flushes of the loaded points still run beside the requests,
and once its archive table is vacuumed (VACUUM ANALYZE pgts.rra_data;
--no-vacuum leaves that to autovacuum): the load rewrites each archive
row many times, and autovacuum, which starts on the table as the load
ends, otherwise runs beside the first requests (the table held 811 MB for
56 MB of live rows at the bench's small size), and a first read of a page
prunes its dead rows.

Before timing, each system's answer to each request over the same
absolute range is compared with pgts': graphite-web's as the number of
datapoints that differ, VictoriaMetrics' (whose timestamps and nulls are
its own: it answers from raw points, pgts and graphite-web from archive
slots) as the number of values at the timestamps both give that are equal
within 1e-9, out of those timestamps, both asked without maxDataPoints
(VictoriaMetrics consolidates in buckets of its own).

Each request is asked --requests times in turn (p50, p99 of the sequential
latencies), then every request again from --clients concurrent clients for
--seconds (requests/s). Everything is printed as a Markdown table.

  scripts/parity/setup && .parity/venv/bin/python scripts/parity/bench_render.py
"""

import argparse
import ctypes
import json
import concurrent.futures
import os
import pickle
import shutil
import signal
import socket
import struct
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import daemons  # noqa: E402
from daemons import log  # noqa: E402


class GunicornGraphite(daemons.Graphite):
    """The parity suite's Graphite with graphite-web under gunicorn."""

    def __init__(self, venv, work, workers):
        super().__init__(venv, work, "graphite-bench")
        self.workers = workers

    def env(self):
        # graphite-web's FETCH_TIMEOUT (6 s) and FIND_TIMEOUT (3 s) fail a
        # glob over 1,000 series of a week on this machine: the bench's
        # settings module raises them, as a site serving such requests would
        env = super().env()
        os.makedirs(self.dir, exist_ok=True)
        with open(os.path.join(self.dir, "bench_graphite_settings.py"), "w") as f:
            f.write("from parity_graphite_settings import *  # noqa: F401,F403\n"
                    "FETCH_TIMEOUT = 1800\nFIND_TIMEOUT = 1800\n")
        env["PYTHONPATH"] = self.dir + os.pathsep + env["PYTHONPATH"]
        env["GRAPHITE_SETTINGS_MODULE"] = "bench_graphite_settings"
        return env

    def start(self):
        gunicorn = os.path.join(self.venv, "bin", "gunicorn")
        if not os.path.exists(gunicorn):
            raise RuntimeError("%s is missing: run scripts/parity/setup" % gunicorn)
        super().start()
        # replace Django's development server by gunicorn on the same port
        web = self.procs.pop(0)
        web.stop()
        env = self.env()
        proc = daemons.Proc("gunicorn", [gunicorn, "--workers", str(self.workers), "--bind",
                                         "127.0.0.1:%d" % self.web_port, "--timeout", "1800",
                                         "graphite.wsgi:application"],
                            env, os.path.join(self.dir, "gunicorn.log"))
        self.procs.insert(0, proc)
        daemons.wait_until("graphite-web under gunicorn",
                           lambda: proc.check_alive() or daemons.http_get(self.url + "/version", 5)[0] == 200, 60)


def _die_with_parent():
    """In the child, before exec: SIGKILL when the bench process dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def vm_args(data, graphite_port, http_port, step):
    """victoria-metrics' flags: those of the Go harness (internal/bench/vm.go)."""
    return ["-storageDataPath=" + data,
            "-graphiteListenAddr=127.0.0.1:%d" % graphite_port,
            "-httpListenAddr=127.0.0.1:%d" % http_port,
            "-search.graphiteStorageStep=%ds" % step,
            "-search.latencyOffset=1s",
            "-search.disableCache",
            "-search.maxUniqueTimeseries=100000000",
            "-retentionPeriod=100y"]


class VictoriaMetrics:
    """victoria-metrics in its own process group: stop() sends the group
    SIGTERM, then SIGKILL after a minute, and removes the data directory.
    It inherits no descriptor but its log (close_fds), and gets SIGKILL if
    this process dies first (PR_SET_PDEATHSIG)."""

    def __init__(self, exe, work, step):
        self.exe = exe
        self.dir = os.path.join(work, "vm")
        self.step = step
        self.line_port = daemons.free_port()
        self.http_port = daemons.free_port()
        self.url = "http://127.0.0.1:%d" % self.http_port
        self.data = None
        self.p = None
        self.log = None

    def start(self):
        os.makedirs(self.dir, exist_ok=True)
        self.data = tempfile.mkdtemp(prefix="vm-data-", dir=self.dir)
        self.log_path = os.path.join(self.dir, "victoria-metrics.log")
        self.log = open(self.log_path, "wb")
        self.p = subprocess.Popen([self.exe] + vm_args(self.data, self.line_port, self.http_port, self.step),
                                  stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
                                  close_fds=True, start_new_session=True, preexec_fn=_die_with_parent)

        def ready():
            if self.p.poll() is not None:
                raise RuntimeError("victoria-metrics exited with %s; its log (%s):\n%s" % (
                    self.p.returncode, self.log_path, daemons.tail(self.log_path)))
            return daemons.http_get(self.url + "/health", 5)[0] == 200
        daemons.wait_until("victoria-metrics", ready, 60)

    def inserted(self):
        st, body = daemons.http_get(self.url + "/metrics", 30)
        n = 0.0
        for line in body.decode().splitlines():
            if line.startswith("vm_rows_inserted_total"):
                n += float(line.rsplit(" ", 1)[1])
        return n

    def flush(self):
        st, body = daemons.http_get(self.url + "/internal/force_flush", 600)
        if st != 200:
            raise RuntimeError("victoria-metrics force_flush answered %d: %.200s" % (st, body))

    def stop(self):
        if self.p is not None and self.p.poll() is None:
            try:
                os.killpg(self.p.pid, signal.SIGTERM)
                self.p.wait(60)
            except subprocess.TimeoutExpired:
                pass
            except ProcessLookupError:
                pass
        if self.p is not None:
            try:
                os.killpg(self.p.pid, signal.SIGKILL)  # whatever is left in its group
            except ProcessLookupError:
                pass
            self.p.wait()
        if self.log:
            self.log.close()
        if self.data:
            shutil.rmtree(self.data, ignore_errors=True)

    def stop_cluster(self):
        pass


def send_plaintext_all(port, spec):
    """Sends every point as Graphite plaintext over TCP; returns how many."""
    n = 0
    buf = []
    with socket.create_connection(("127.0.0.1", port), timeout=1800) as s:
        for name, pts in series_points(spec):
            for ts, v in pts:
                buf.append("%s %r %d\n" % (name, v, ts))
            if len(buf) >= 5000:
                s.sendall("".join(buf).encode())
                n += len(buf)
                buf = []
        if buf:
            s.sendall("".join(buf).encode())
            n += len(buf)
    return n


def wait_flushed(pg, timeout=3600):
    """Waits until pgts' store has written everything it received: no
    series left unflushed, and a flush that completed since the last one
    seen stored no slot (pgts_store_* in /metrics). The first flush after
    a bulk load leaves the slots that closed meanwhile to the next ones,
    which write hundreds of thousands more: timing the reads while those
    run measures the flushes, not the reads."""
    def counters():
        st, body = daemons.http_get(pg.url + "/metrics")
        if st != 200:
            raise RuntimeError("pgts /metrics answered %d" % st)
        got = {}
        for line in body.decode().splitlines():
            for k in ("pgts_store_flushes_total", "pgts_store_unflushed_series", "pgts_store_slots_stored_total"):
                if line.startswith(k + " "):
                    got[k] = float(line.split()[1])
        return got
    last = [counters()]

    def done():
        c, prev = counters(), last[0]
        if c.get("pgts_store_flushes_total", 0) == prev.get("pgts_store_flushes_total", 0):
            return False
        last[0] = c
        return (c.get("pgts_store_unflushed_series", 1) == 0 and
                c.get("pgts_store_slots_stored_total", 0) == prev.get("pgts_store_slots_stored_total", -1))
    daemons.wait_until("pgts to flush every series", done, timeout, 0.5)


def vacuum_archives(pg):
    """VACUUM ANALYZE of pgts' archive table, as autovacuum leaves it in
    service, so that the reads are timed without it running beside them."""
    t = time.monotonic()
    pg.pgts("db", "psql", "-q", "-c", "\\c parity", "-c", "VACUUM ANALYZE pgts.rra_data")
    log("pgts: archive table vacuumed in %.1f s" % (time.monotonic() - t))


def load_vm(vm, spec):
    n = send_plaintext_all(vm.line_port, spec)
    daemons.wait_until("victoria-metrics to insert %d points" % n, lambda: vm.inserted() >= n, 3600, interval=0.5)
    vm.flush()
    log("victoria-metrics: %d points" % n)


def spec_of(args, now):
    """What both systems are fed: series counts and the points' times."""
    start = now - args.hours * 3600
    start -= start % args.every
    return {"glob": args.glob, "sum": args.sum, "tagged": args.tagged,
            "start": start, "now": now, "every": args.every}


def selected(i):
    """Whether tagged series i is one seriesByTag selects (host=~h1[0-9]$)."""
    return 10 <= i <= 19


def tagged_names(spec):
    return ["bench.tag;dc=dc%d;host=h%d" % (i % 4, i) for i in range(spec["tagged"])]


def series_points(spec):
    """Yields (name, [(ts, value), ...]) for every series, in one order."""
    names = (["bench.glob.s%d" % i for i in range(spec["glob"])] +
             ["bench.sum.s%d" % i for i in range(spec["sum"])])
    times = list(range(spec["start"], spec["now"], spec["every"]))
    for k, name in enumerate(names):
        yield name, [(ts, float((k * 7 + j) % 100)) for j, ts in enumerate(times)]
    k0 = len(names)
    for i, name in enumerate(tagged_names(spec)):
        k = k0 + i
        if selected(i):
            yield name, [(ts, float((k * 7 + j) % 100)) for j, ts in enumerate(times)]
        else:
            j = len(times) - 1
            yield name, [(times[j], float((k * 7 + j) % 100))]


def graphite_file(spec, name, pts):
    """Whether graphite-web gets a whisper file for the series: all but the
    tagged series no request reads (registered in the tag database only)."""
    if ";" not in name:
        return True
    return selected(int(name.rsplit("=h", 1)[1]))


def send_all(port, spec, batch=5000):
    """Sends every point through the pickle protocol; returns how many."""
    n = 0
    buf = []
    # pgts holds a reader back while it registers new series (backpressure):
    # at 300,000 new series a send may wait minutes
    with socket.create_connection(("127.0.0.1", port), timeout=1800) as s:
        for name, pts in series_points(spec):
            for ts, v in pts:
                buf.append((name, (ts, v)))
            if len(buf) >= batch:
                payload = pickle.dumps(buf, protocol=2)
                s.sendall(struct.pack("!L", len(payload)) + payload)
                n += len(buf)
                buf = []
        if buf:
            payload = pickle.dumps(buf, protocol=2)
            s.sendall(struct.pack("!L", len(payload)) + payload)
            n += len(buf)
        s.shutdown(socket.SHUT_WR)
        daemons.drain(s)
    return n


def load_graphite(g, spec):
    """Writes graphite-web's whisper files and tag database (graphite_bulk.py)."""
    path = os.path.join(g.dir, "bench-spec.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    out = subprocess.run([os.path.join(g.venv, "bin", "python"), os.path.join(HERE, "graphite_bulk.py"), path],
                         env=g.env(), capture_output=True)
    if out.returncode != 0:
        raise RuntimeError("graphite_bulk.py failed:\n%s" % (out.stdout + out.stderr).decode())
    log("graphite-web: " + out.stdout.decode().strip().replace("\n", "; "))


def requests(args):
    common = {"from": "-6h", "until": "now", "format": "json", "maxDataPoints": "1000"}
    r = [("glob over %d series, 6 h" % args.glob, dict(common, target="bench.glob.*")),
         ("one series, 24 h", dict(common, target="bench.glob.s0", **{"from": "-24h"})),
         ("find of %d leaves" % args.sum, {"_path": "/metrics/find", "query": "bench.sum.*", "format": "completer"})]
    for hours, label in ((24, "24 h"), (168, "7 d")):
        common = {"from": "-%dh" % hours, "until": "now", "format": "json", "maxDataPoints": "1000"}
        r.append(("glob over %d series, %s" % (args.glob, label), dict(common, target="bench.glob.*")))
        r.append(("sumSeries over %d, %s" % (args.sum, label), dict(common, target="sumSeries(bench.sum.*)")))
        r.append(("averageSeries over %d, %s" % (args.glob, label), dict(common, target="averageSeries(bench.glob.*)")))
        r.append(("seriesByTag among %d tagged, %s" % (args.tagged, label),
                  dict(common, target="seriesByTag('name=bench.tag','host=~h1[0-9]$')")))
    return r


def url_of(base, q):
    """The request's URL: /render unless it names another path."""
    q = dict(q)
    path = q.pop("_path", "/render")
    return base + path + "?" + urllib.parse.urlencode(q)


def answer_of(body, path):
    """A render answer as {target: {ts: value}}; a find answer as {leaf id: {}}."""
    doc = json.loads(body)
    if path == "/metrics/find":
        items = doc.get("metrics", []) if isinstance(doc, dict) else doc
        return {m.get("path", m.get("id", "")).rstrip("."): {} for m in items if str(m.get("is_leaf", "0")) in ("1", "True", "true")}
    names = [d["target"] for d in doc]
    if len(set(names)) < len(names):
        # VictoriaMetrics names each tagged series by its name alone: use
        # Graphite's name;tag=value form, tags sorted
        names = [d["target"] + "".join(";%s=%s" % kv for kv in sorted(d.get("tags", {}).items()) if kv[0] != "name")
                 for d in doc]
    return {n: {ts: v for v, ts in d["datapoints"]} for n, d in zip(names, doc)}


def equal_values(a, b):
    """(equal, compared): values at the timestamps both answers give, with
    both non-null, equal within 1e-9; series matched by name, or the only
    series of each when the names differ."""
    pairs = [(a[t], b[t]) for t in set(a) & set(b)]
    if not pairs and len(a) == 1 and len(b) == 1:
        pairs = [(next(iter(a.values())), next(iter(b.values())))]
    eq = n = 0
    for x, y in pairs:
        for ts in set(x) & set(y):
            if x[ts] is None or y[ts] is None:
                continue
            n += 1
            eq += abs(x[ts] - y[ts]) <= 1e-9 * max(1, abs(y[ts]))
    return eq, n


def compare(systems, reqs, now):
    """Compares each system's answer to each request with pgts', asked over
    the same absolute range so that all read the same slots; logs it and
    returns {system: {label: text for the table}}."""
    out = {}
    if len(systems) < 2:
        return out
    for label, q in reqs:
        path = q.get("_path", "/render")
        if path == "/render":
            q = dict(q, until=str(now))
            q["from"] = str(now - int(q["from"][1:-1]) * 3600)
        answers = {}
        for name, s in systems:
            # VictoriaMetrics consolidates to maxDataPoints in buckets of
            # its own: it and pgts are compared on what they store
            qs = [("", q)]
            if name in ("pgts", "VictoriaMetrics") and "maxDataPoints" in q:
                qs.append(("raw", {k: v for k, v in q.items() if k != "maxDataPoints"}))
            for kind, qq in qs:
                st, body = daemons.http_get(url_of(s.url, qq), timeout=1800)
                if st != 200:
                    log("compare %s: %s answered %d: %.300s" % (label, name, st, body))
                answers[name + kind] = answer_of(body, path) if st == 200 else None
        for name, _ in systems[1:]:
            a, b = answers["pgts"], answers[name]
            if name == "VictoriaMetrics" and "VictoriaMetricsraw" in answers:
                a, b = answers["pgtsraw"], answers["VictoriaMetricsraw"]
            if a is None or b is None:
                log("compare %s: an answer was refused" % label)
                out.setdefault(name, {})[label] = "refused"
                continue
            if path != "/render":
                same = "same %d leaves" % len(a) if set(a) == set(b) else "leaves differ (%d, %d)" % (len(a), len(b))
                log("compare %s: %s: %s" % (label, name, same))
                out.setdefault(name, {})[label] = same
            elif name == "graphite-web":
                diff = sum(1 for t in set(a) | set(b) for ts in set(a.get(t, {})) | set(b.get(t, {}))
                           if (a.get(t, {}).get(ts) is None) != (b.get(t, {}).get(ts) is None) or
                           a.get(t, {}).get(ts) is not None and
                           abs(a[t][ts] - b[t][ts]) > 1e-9 * max(1, abs(b[t][ts])))
                log("compare %s: %d series each side, %d datapoints differ" % (label, len(a) if len(a) == len(b) else -1, diff))
                out.setdefault(name, {})[label] = "%d differ" % diff
            else:
                eq, n = equal_values(a, b)
                log("compare %s: %s: %d series (pgts %d), %d of %d values equal within 1e-9" % (label, name, len(b), len(a), eq, n))
                out.setdefault(name, {})[label] = "%d/%d" % (eq, n)
    return out


def timed(url):
    t = time.perf_counter()
    st, body = daemons.http_get(url, timeout=1800)
    if st != 200:
        raise RuntimeError("%s answered %d: %.200s" % (url, st, body))
    return time.perf_counter() - t


def latency(base, q, n):
    """(p50, p99) in seconds, or None when the system refuses the request."""
    url = url_of(base, q)
    try:
        timed(url)  # warm
    except RuntimeError as e:
        log("refused: %s" % e)
        return None
    xs = sorted(timed(url) for _ in range(n))
    return statistics.median(xs), xs[min(len(xs) - 1, int(round(0.99 * (len(xs) - 1))))]


def throughput(base, reqs, clients, seconds):
    """Requests/s of every request the system answers, asked in turn."""
    urls = [url_of(base, q) for _, q in reqs]
    done = [0]
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(i):
        k = i
        while time.monotonic() < stop:
            timed(urls[k % len(urls)])
            k += 1
            with lock:
                done[0] += 1
    t = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(clients) as ex:
        list(ex.map(client, range(clients)))
    return done[0] / (time.monotonic() - t)


def print_table(args, names, results, same):
    """One Markdown table: p50 and p99 per system, the ratio of pgts' p50
    to each other's, how each other system's answer compares with pgts',
    then requests/s under --clients clients."""
    others = names[1:]
    head = ["request", "pgts p50", "pgts p99"]
    for n in others:
        head += ["%s p50" % n, "%s p99" % n, "pgts/%s p50" % n, "%s answer vs pgts" % n]
    print("| " + " | ".join(head) + " |")
    print("|---|" + "---:|" * (len(head) - 1))

    def ms(x):
        return "%.1f ms" % (x * 1e3)
    for label, _ in requests(args):
        p = results["pgts"][label]
        row = [label, ms(p[0]) if p else "refused", ms(p[1]) if p else "-"]
        for n in others:
            o = results.get(n, {}).get(label)
            row += [ms(o[0]) if o else "refused", ms(o[1]) if o else "-",
                    "%.2f" % (p[0] / o[0]) if o and p else "-", same.get(n, {}).get(label, "-")]
        print("| " + " | ".join(row) + " |")
    row = ["all of the above from %d clients, requests/s" % args.clients, "%.1f" % results["pgts"]["rps"], ""]
    for n in others:
        r = results.get(n, {}).get("rps")
        row += ["%.1f" % r if r else "-", "", "%.2f" % (results["pgts"]["rps"] / r) if r else "-", ""]
    print("| " + " | ".join(row) + " |")
    print()
    if others:
        print("Answers vs pgts: graphite-web, datapoints that differ; VictoriaMetrics, values equal within 1e-9 "
              "at the timestamps both give, out of those; find, the leaves.")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = os.path.dirname(os.path.dirname(HERE))
    ap.add_argument("--parity-dir", default=os.path.join(root, ".parity"))
    ap.add_argument("--glob", type=int, default=1000)
    ap.add_argument("--sum", type=int, default=10000)
    ap.add_argument("--tagged", type=int, default=300000)
    ap.add_argument("--hours", type=int, default=168)
    ap.add_argument("--every", type=int, default=60, help="seconds between points")
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    ap.add_argument("--no-graphite", action="store_true")
    ap.add_argument("--no-vacuum", action="store_true",
                    help="time pgts without vacuuming its archive table first (autovacuum may run beside the requests)")
    ap.add_argument("--vm", help="a victoria-metrics binary: run VictoriaMetrics beside the others")
    ap.add_argument("--max-points", type=int, default=16_000_000,
                    help="pgts' [render] max-points: a glob over 1,000 series of 10,080 one-minute slots "
                    "returns 10 million values before maxDataPoints consolidates them (default limit 5,000,000)")
    args = ap.parse_args()

    pdir = os.path.abspath(args.parity_dir)
    work = os.path.join(pdir, "work")
    os.makedirs(work, exist_ok=True)
    now = int(time.time())
    spec = spec_of(args, now)
    log("%d series" % (args.glob + args.sum + args.tagged))
    pg = daemons.Pgts(os.path.join(pdir, "pgts"), pdir, work)
    pg.extra_config = "\n[render]\nmax-points = %d\n" % args.max_points
    systems = [("pgts", pg)]
    if not args.no_graphite:
        systems.append(("graphite-web", GunicornGraphite(os.path.join(pdir, "venv"), work, args.workers)))
    if args.vm:
        systems.append(("VictoriaMetrics", VictoriaMetrics(os.path.abspath(args.vm), work, args.every)))
    results = {}
    try:
        for name, s in systems:
            s.start()
            t = time.monotonic()
            if name == "pgts":
                n = send_all(s.pickle_port, spec)
                s.wait_stored({"pickle": n}, timeout=3600)
                wait_flushed(s)
                if not args.no_vacuum:
                    vacuum_archives(s)
                log("pgts: %d points" % n)
            elif name == "VictoriaMetrics":
                load_vm(s, spec)
            else:
                load_graphite(s, spec)
            log("%s: stored in %.0f s" % (name, time.monotonic() - t))
        same = compare(systems, requests(args), now)
        for name, s in systems:
            res = {}
            for label, q in requests(args):
                res[label] = latency(s.url, q, args.requests)
                if res[label]:
                    log("%s %s: p50 %.1f ms" % (name, label, res[label][0] * 1e3))
            res["rps"] = throughput(s.url, [r for r in requests(args) if res[r[0]]], args.clients, args.seconds)
            log("%s: %.1f requests/s under %d clients" % (name, res["rps"], args.clients))
            results[name] = res
    finally:
        for _, s in systems:
            s.stop()
        for _, s in systems:
            s.stop_cluster()
    print_table(args, [name for name, _ in systems], results, same)
    return 0


if __name__ == "__main__":
    sys.exit(main())
