"""Render latency: pgts serve beside graphite-web 1.1.10 on the same data.

Both systems are started as the parity suite starts them (scripts/parity/
daemons.py), except that graphite-web runs under gunicorn with 2 workers.
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

Each request is asked --requests times in turn (p50, p99 of the sequential
latencies), then every request again from --clients concurrent clients for
--seconds (requests/s). Everything is printed as a Markdown table.

  scripts/parity/setup && .parity/venv/bin/python scripts/parity/bench_render.py
"""

import argparse
import json
import concurrent.futures
import os
import pickle
import socket
import struct
import statistics
import subprocess
import sys
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
    r = []
    for hours, label in ((24, "24 h"), (168, "7 d")):
        common = {"from": "-%dh" % hours, "until": "now", "format": "json", "maxDataPoints": "1000"}
        r.append(("glob over %d series, %s" % (args.glob, label), dict(common, target="bench.glob.*")))
        r.append(("sumSeries over %d, %s" % (args.sum, label), dict(common, target="sumSeries(bench.sum.*)")))
        r.append(("averageSeries over %d, %s" % (args.glob, label), dict(common, target="averageSeries(bench.glob.*)")))
        r.append(("seriesByTag among %d tagged, %s" % (args.tagged, label),
                  dict(common, target="seriesByTag('name=bench.tag','host=~h1[0-9]$')")))
    return r


def compare(systems, reqs, now):
    """Logs how the answers of the two systems differ on each request, asked
    over the same absolute range so that both read the same slots."""
    if len(systems) < 2:
        return
    for label, q in reqs:
        q = dict(q, until=str(now))
        q["from"] = str(now - int(q["from"][1:-1]) * 3600)
        answers = []
        for name, s in systems:
            st, body = daemons.http_get(s.url + "/render?" + urllib.parse.urlencode(q), timeout=1800)
            if st != 200:
                log("compare %s: %s answered %d: %.300s" % (label, name, st, body))
            answers.append({d["target"]: d["datapoints"] for d in json.loads(body)} if st == 200 else None)
        a, b = answers
        if a is None or b is None:
            log("compare %s: an answer was refused" % label)
            continue
        diff = sum(1 for t in set(a) | set(b) for x, y in zip(a.get(t, []), b.get(t, []))
                   if (x[0] is None) != (y[0] is None) or x[0] is not None and abs(x[0] - y[0]) > 1e-9 * max(1, abs(y[0])))
        diff += sum(abs(len(a.get(t, [])) - len(b.get(t, []))) for t in set(a) | set(b))
        log("compare %s: %d series each side, %d datapoints differ" % (label, len(a) if len(a) == len(b) else -1, diff))


def timed(url):
    t = time.perf_counter()
    st, body = daemons.http_get(url, timeout=1800)
    if st != 200:
        raise RuntimeError("%s answered %d: %.200s" % (url, st, body))
    return time.perf_counter() - t


def latency(base, q, n):
    """(p50, p99) in seconds, or None when the system refuses the request."""
    url = base + "/render?" + urllib.parse.urlencode(q)
    try:
        timed(url)  # warm
    except RuntimeError as e:
        log("refused: %s" % e)
        return None
    xs = sorted(timed(url) for _ in range(n))
    return statistics.median(xs), xs[min(len(xs) - 1, int(round(0.99 * (len(xs) - 1))))]


def throughput(base, reqs, clients, seconds):
    """Requests/s of every request the system answers, asked in turn."""
    urls = [base + "/render?" + urllib.parse.urlencode(q) for _, q in reqs]
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
    results = {}
    try:
        for name, s in systems:
            s.start()
            t = time.monotonic()
            if name == "pgts":
                n = send_all(s.pickle_port, spec)
                s.wait_stored({"pickle": n}, timeout=3600)
                log("pgts: %d points" % n)
            else:
                load_graphite(s, spec)
            log("%s: stored in %.0f s" % (name, time.monotonic() - t))
        compare(systems, requests(args), now)
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
    print("| request | pgts p50 | pgts p99 | graphite-web p50 | graphite-web p99 | p50 ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    g = results.get("graphite-web", {})
    for label, _ in requests(args):
        p = results["pgts"][label]
        gg = g.get(label)
        ratio = "%.2f" % (p[0] / gg[0]) if gg and p else "-"
        ps = ("%.1f ms | %.1f ms" % (p[0] * 1e3, p[1] * 1e3)) if p else "refused | -"
        gs = ("%.1f ms | %.1f ms" % (gg[0] * 1e3, gg[1] * 1e3)) if gg else "- | -"
        print("| %s | %s | %s | %s |" % (label, ps, gs, ratio))
    grps = g.get("rps")
    print("| all of the above from %d clients, requests/s | %.1f | | %s | | %s |" % (
        args.clients, results["pgts"]["rps"], "%.1f" % grps if grps else "-",
        "%.2fx" % (results["pgts"]["rps"] / grps) if grps else "-"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
