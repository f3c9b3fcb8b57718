#!/usr/bin/env python3
"""The parity suite: pgts serve against carbon-cache + whisper + graphite-web 1.1.10.

Run with the virtualenv that scripts/parity/setup made:

    .parity/venv/bin/python scripts/parity/parity.py [--parity-dir .parity] [--jobs 4]

It starts both systems on loopback ports, sends both the corpus of
corpus.py over Graphite plaintext and pickle, asks both the requests of
queries.py, compares the answers (compare.py), prints a table of matches and
differences and the first differences in detail, writes
<parity-dir>/work/report.json and report.txt, and exits 1 when a difference
is not accepted by scripts/parity/allowlist.txt (2 when the suite itself
failed). See docs/parity.md.
"""

import argparse
import concurrent.futures
import json
import os
import re
import sys
import threading
import time
import traceback
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
# every node of the corpus' series names, for telling whisper's _tagged
# hash directories from real nodes (compare.diff_json_doc)
CORPUS_NODES = set()
sys.path.insert(0, HERE)

import compare  # noqa: E402
import corpus  # noqa: E402
import daemons  # noqa: E402
import queries  # noqa: E402
from daemons import log  # noqa: E402


class Request:
    """One request asked of both systems, and what came back."""

    def __init__(self, family, column, case, path, params, fmt, relative):
        self.family, self.column, self.case = family, column, case
        self.path, self.params, self.fmt, self.relative = path, params, fmt, relative
        self.g = self.p = None  # (status, body)
        self.tries = 0
        self.unsettled = False
        self.gsec = self.psec = 0.0  # time spent waiting for each system

    def query(self):
        return urllib.parse.urlencode(self.params, doseq=True)


# a quoted relative time in a target: "-50min", "now-1h"
RELATIVE_ARG = re.compile(r"[\"'](-|now)")


def build_requests(c, t0, gfuncs, pfuncs):
    reqs, notes = [], []

    def render(family, target, rng, mdp, fmt):
        params = {"target": target, "format": fmt}
        params.update(queries.RANGES[rng](t0))
        if family.startswith("fn:") and not isinstance(params["from"], str):
            # timeSlice("-50min") and the like resolve against now even
            # in an absolute range: pin it (--calibrate found the second
            # differ between two graphite-webs)
            params["now"] = t0
        if mdp:
            params["maxDataPoints"] = mdp
        case = "render/%s/%s/mdp=%s/%s" % (fmt, rng, mdp or "-", target)
        # a relative time among the arguments (timeSlice(x, "-50min")) is
        # resolved against the clock by graphite-web whatever now says:
        # such a pair must be answered within one second, as a relative range
        relative = ("now" not in params and isinstance(params["from"], str)) or bool(RELATIVE_ARG.search(target))
        reqs.append(Request(family, rng, case, "/render", params, fmt, relative))

    for family, target in queries.plain_targets(c):
        for rng, plan in queries.PLAIN_PLAN.items():
            for fmt, mdp in plan:
                render("plain:" + family, target, rng, mdp, fmt)

    both = sorted(set(gfuncs) & set(pfuncs))
    for name in both:
        targets = queries.function_targets(name)
        if not targets and name not in queries.NOT_COMPARED:
            notes.append(compare.Diff("functions/" + name, "uncovered",
                                      "listed by both; no target in queries.TEMPLATES", "fn:" + name, "-"))
        for target in targets:
            for rng, mdp in queries.FN_PLAN:
                render("fn:" + name, target, rng, mdp, "json")

    for q, extra in queries.FIND_QUERIES:
        params = dict(extra, query=q)
        reqs.append(Request("find", "-", "find/%s/%s" % (q, extra.get("format", "treejson") +
                    "".join(",%s=%s" % kv for kv in sorted(extra.items()) if kv[0] != "format")),
                    "/metrics/find", params, "doc", False))
    for params in queries.EXPAND_QUERIES:
        reqs.append(Request("expand", "-", "expand/" + urllib.parse.urlencode(params, doseq=True),
                            "/metrics/expand", params, "doc", False))
    reqs.append(Request("find", "-", "index.json", "/metrics/index.json", {}, "doc", False))
    return reqs, notes


SETTLE_TRIES = 10


def ask(g, p, r):
    """Asks both, at the same time. A relative range without now is resolved by each server
    at its own clock, to the second (sinFunction, linearRegression and
    consolidated windows use the second itself): the pair is accepted only
    when both requests were sent and answered within one wall-clock second,
    else asked again; after SETTLE_TRIES the request is left uncompared
    (r.unsettled) and listed in the report."""
    url = r.path + ("?" + r.query() if r.params else "")

    def get_p():
        t = time.time()
        r.p = daemons.http_get(p.url + url, timeout=120)
        r.psec += time.time() - t

    while True:
        r.tries += 1
        # both at once: the pair then takes as long as the slower answer
        other = threading.Thread(target=get_p)
        t1 = time.time()
        other.start()
        r.g = daemons.http_get(g.url + url, timeout=120)
        r.gsec += time.time() - t1
        other.join()
        t2 = time.time()
        if not r.relative or int(t1) == int(t2):
            return r
        if r.tries >= SETTLE_TRIES:
            r.unsettled = True
            return r


def judge(r):
    if r.unsettled:
        return []
    gst, gbody = r.g
    pst, pbody = r.p
    if gst != pst:
        return [("status", "graphite %d %s | pgts %d %s" % (gst, compare.excerpt(gbody, 160), pst,
                                                           compare.excerpt(pbody, 160)))]
    if gbody == pbody or gst != 200:
        return []
    if r.path == "/render":
        return compare.diff_render(r.fmt, gbody, pbody)
    return compare.diff_json_doc(gbody, pbody, CORPUS_NODES)


def function_meta(gfuncs, pfuncs):
    diffs = []
    for name in sorted(set(pfuncs) - set(gfuncs)):
        diffs.append(compare.Diff("functions/" + name, "body", "pgts lists a function graphite-web does not",
                                  "functions-meta", "-"))
    for name in sorted(set(pfuncs) & set(gfuncs)):
        for key in ("function", "group", "params"):
            if gfuncs[name].get(key) != pfuncs[name].get(key):
                diffs.append(compare.Diff("functions/%s/%s" % (name, key), "body", "graphite %s | pgts %s" % (
                    compare.excerpt(json.dumps(gfuncs[name].get(key)), 200),
                    compare.excerpt(json.dumps(pfuncs[name].get(key)), 200)), "functions-meta", "-"))
    return diffs


def table(requests, diffs, columns):
    """Rows: families; columns: ranges. A cell: ok N, or differing/total."""
    total, bad, allowed = {}, {}, {}
    for r in requests:
        total[(r.family, r.column)] = total.get((r.family, r.column), 0) + 1
    bycase = {}
    for d in diffs:
        bycase.setdefault(d.case, []).append(d)
    unsettled = {}
    for r in requests:
        k = (r.family, r.column)
        if r.unsettled:
            unsettled[k] = unsettled.get(k, 0) + 1
            continue
        ds = bycase.get(r.case, [])
        if not ds:
            continue
        if all(d.allowed_by for d in ds):
            allowed[k] = allowed.get(k, 0) + 1
        else:
            bad[k] = bad.get(k, 0) + 1
    for d in diffs:
        if d.case.startswith("functions/"):
            k = (d.family, "-")
            total[k] = total.get(k, 0) + 1
            if d.allowed_by:
                allowed[k] = allowed.get(k, 0) + 1
            else:
                bad[k] = bad.get(k, 0) + 1
    families = sorted({k[0] for k in total}, key=lambda f: (f.split(":")[0] != "plain", f))
    cols = [c for c in columns if any((f, c) in total for f in families)]
    if any((f, "-") in total for f in families):
        cols.append("-")
    width = max([len("family")] + [len(f) for f in families]) + 2
    lines = ["%-*s" % (width, "family") + "".join("%-10s" % c for c in cols)]
    for f in families:
        cells = []
        for c in cols:
            k = (f, c)
            u = " ?%d" % unsettled[k] if unsettled.get(k) else ""
            if k not in total:
                cells.append("%-10s" % "")
            elif bad.get(k):
                cells.append("%-10s" % ("%d/%d%s" % (bad[k], total[k], u)))
            elif unsettled.get(k) == total[k]:
                cells.append("%-10s" % ("?%d" % total[k]))
            elif allowed.get(k):
                cells.append("%-10s" % ("ok %d*%s" % (total[k] - unsettled.get(k, 0), u)))
            else:
                cells.append("%-10s" % ("ok %d%s" % (total[k] - unsettled.get(k, 0), u)))
        lines.append("%-*s" % (width, f) + "".join(cells).rstrip())
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = os.path.dirname(os.path.dirname(HERE))
    ap.add_argument("--parity-dir", default=os.path.join(root, ".parity"))
    ap.add_argument("--allowlist", default=os.path.join(HERE, "allowlist.txt"))
    ap.add_argument("--jobs", type=int, default=4, help="requests in flight")
    ap.add_argument("--details", type=int, default=30, help="differences printed in detail")
    ap.add_argument("--only", metavar="REGEX", help="ask only the requests whose case id matches REGEX")
    ap.add_argument("--calibrate", action="store_true",
                    help="compare graphite-web with a second carbon + graphite-web fed the same corpus "
                         "(every difference then is nondeterminism of the reference or of the suite)")
    ap.add_argument("--keep", action="store_true", help="leave both systems running at the end (Ctrl-C stops)")
    args = ap.parse_args()

    pdir = os.path.abspath(args.parity_dir)
    venv = os.path.join(pdir, "venv")
    work = os.path.join(pdir, "work")
    os.makedirs(work, exist_ok=True)
    allow = compare.AllowList(args.allowlist)
    if allow.errors:
        print("\n".join(allow.errors), file=sys.stderr)
        return 2

    started = time.time()
    now = int(started)
    t0 = now - now % 60
    c = corpus.build(t0)
    CORPUS_NODES.update(x for n in c.names for x in n.split(";")[0].split("."))
    compare.T0 = t0
    log("t0 = %d; corpus: %d points, %d series" % (t0, c.count(), len(c.names)))
    g = daemons.Graphite(venv, work)
    if args.calibrate:
        # the referee against itself: a second carbon + graphite-web
        p = daemons.Graphite(venv, work, "graphite2")
    else:
        p = daemons.Pgts(os.path.join(pdir, "pgts"), pdir, work)
    try:
        g.start()
        p.start()
        log("graphite-web %s, pgts %s" % (g.url, p.url))
        want = {"graphite_tcp": 0, "pickle": 0}
        for i, phase in enumerate(c.phases):
            want["graphite_tcp"] += len(phase["plaintext"])
            want["pickle"] += len(phase["pickle"])
            for port, pport in ((g.line_port, g.pickle_port), (p.line_port, p.pickle_port)):
                daemons.send_plaintext(port, phase["plaintext"])
                daemons.send_pickle(pport, phase["pickle"])
            g.wait_stored(c.names)
            if args.calibrate:
                p.wait_stored(c.names)
            else:
                try:
                    p.wait_stored(want, timeout=60)
                except RuntimeError as e:
                    got, waiting = p.received()
                    log("phase %d: %s: pgts counts %s received, %d waiting (sent %s); going on" % (
                        i + 1, e, got, waiting, want))
            log("phase %d sent and stored (%d plaintext, %d pickle points)" % (
                i + 1, len(phase["plaintext"]), len(phase["pickle"])))
        g.wait_tags(c.tagged)
        if args.calibrate:
            p.wait_tags(c.tagged)

        st, gf = daemons.http_get(g.url + "/functions")
        gfuncs = json.loads(gf) if st == 200 else {}
        st, pf = daemons.http_get(p.url + "/functions")
        pfuncs = json.loads(pf) if st == 200 else {}
        reqs, diffs = build_requests(c, t0, gfuncs, pfuncs)
        diffs += function_meta(gfuncs, pfuncs)
        if args.only:
            reqs = [r for r in reqs if re.search(args.only, r.case)]
            diffs = [d for d in diffs if re.search(args.only, d.case)]
        log("asking %d requests of both" % len(reqs))
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
            list(ex.map(lambda r: ask(g, p, r), reqs))
        for r in reqs:
            for kind, detail in judge(r):
                diffs.append(compare.Diff(r.case, kind, detail, r.family, r.column))
        for d in diffs:
            e = allow.match(d)
            if e:
                d.allowed_by = "%s:%d" % (os.path.basename(args.allowlist), e["line"])
        if args.keep:
            log("--keep: graphite-web %s, pgts %s; Ctrl-C stops" % (g.url, p.url))
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                pass
    except Exception:
        traceback.print_exc()
        log("the suite failed before comparing; logs are in %s" % work)
        return 2
    finally:
        g.stop()
        p.stop()
        p.stop_cluster()

    out = report(c, t0, reqs, diffs, gfuncs, pfuncs, allow, args, started)
    name = "calibrate" if args.calibrate else "report"
    with open(os.path.join(work, name + ".txt"), "w") as f:
        f.write("\n".join(out) + "\n")
    with open(os.path.join(work, name + ".json"), "w") as f:
        json.dump({"t0": t0, "differences": [d.as_dict() for d in diffs],
                   "requests": [{"case": r.case, "graphite_status": r.g[0], "pgts_status": r.p[0],
                                 "graphite_seconds": round(r.gsec, 3), "pgts_seconds": round(r.psec, 3),
                                 "tries": r.tries} for r in reqs]}, f, indent=1)
    print("\n".join(out))
    failing = [d for d in diffs if not d.allowed_by]
    return 1 if failing else 0


def report(c, t0, reqs, diffs, gfuncs, pfuncs, allow, args, started):
    out = []
    failing = [d for d in diffs if not d.allowed_by]
    other = "a second graphite-web (--calibrate)" if args.calibrate else "pgts serve"
    out.append("parity: %s vs graphite-web 1.1.10 (carbon 1.1.10, whisper 1.1.10); t0 = %d" % (other, t0))
    out.append("%d requests, %d differences (%d allowed), %.0f s" % (
        len(reqs), len(diffs), len(diffs) - len(failing), time.time() - started))
    out.append("")
    out.append("Cells: ok N = N requests matched; D/N = D of N requests differ; * = differences allowed;")
    out.append("       ?U = U requests not compared (relative range, no pair of answers within one second).")
    out.append("Columns: time ranges (queries.RANGES); - = no range.")
    out.append("")
    out += table(reqs, diffs, list(queries.RANGES))
    out.append("")
    gonly = sorted(set(gfuncs) - set(pfuncs))
    out.append("functions compared: %d; graphite-web only (not compared, answer 400 in pgts): %d" % (
        len(set(gfuncs) & set(pfuncs)), len(gonly)))
    out.append("")
    kinds = {}
    for d in failing:
        k = (d.kind, d.family)
        kinds.setdefault(k, []).append(d)
    out.append("Differences by kind and family (count, first case):")
    for (kind, fam), ds in sorted(kinds.items()):
        out.append("  %-15s %-26s %5d  %s" % (kind, fam, len(ds), ds[0].case))
    out.append("")
    out.append("First differences in detail (t0 = %d):" % t0)
    seen = set()
    shown = 0
    for d in failing:
        if shown >= args.details:
            break
        if (d.kind, d.family) in seen:
            continue
        seen.add((d.kind, d.family))
        shown += 1
        out.append("  [%s] %s" % (d.kind, d.case))
        out.append("      %s" % d.detail)
    out.append("")
    out.append("time waiting for answers: graphite-web %.1f s, pgts %.1f s; %d requests asked again" % (
        sum(r.gsec for r in reqs), sum(r.psec for r in reqs), sum(1 for r in reqs if r.tries > 1)))
    for r in sorted(reqs, key=lambda r: -(r.gsec + r.psec))[:5]:
        out.append("  slow: graphite-web %.2f s, pgts %.2f s, %d tries: %s" % (r.gsec, r.psec, r.tries, r.case))
    unsettled = [r for r in reqs if r.unsettled]
    if unsettled:
        out.append("%d relative requests not compared: no pair of answers within one second in %d tries; first: %s" % (
            len(unsettled), SETTLE_TRIES, unsettled[0].case))
    unused = [e for e in allow.entries if not e["used"]]
    for e in unused:
        out.append("allow-list line %d matched nothing: %s %s" % (e["line"], e["kind"], e["case"]))
    out.append("")
    out.append("RESULT: %s" % ("PASS" if not failing else "FAIL: %d differences not in the allow-list" % len(failing)))
    return out


if __name__ == "__main__":
    sys.exit(main())
