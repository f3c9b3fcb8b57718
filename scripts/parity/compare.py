"""Comparing one answer of graphite-web with pgts' answer to the same request.

An answer pair is a match when the bodies are byte for byte equal (and the
HTTP statuses too). Otherwise diff() names each difference by a kind, the
cause class the storage and render engineers act on:

  status          the HTTP statuses differ (the bodies are then not compared)
  series-missing  a series graphite-web answers is absent from pgts' answer
  series-extra    pgts answers a series graphite-web does not
  series-order    the same series in another order
  tags            a series' tags object differs
  window          first or last timestamp, or the step, differ
  shift-early     pgts' values are graphite-web's one step earlier
  shift-late      pgts' values are graphite-web's one step later
  value-missing   graphite-web has a value where pgts has null
  value-extra     pgts has a value where graphite-web has null
  value           both have a value and they differ
  value-ulp       both have a value, equal to 1e-12 relative (float arithmetic order)
  repr            the parsed answers are equal, only their text differs
  body            a non-series answer (find, expand, functions) differs
  tagged-dir      graphite-web lists whisper's _tagged directory in a find, expand or index

Nothing is normalised before comparing: "repr" is how a representation-only
difference shows, and it fails like any other unless the allow-list names it.
"""

import calendar
import fnmatch
import json
import re
import math
import time


T0 = None  # the run's t0; timestamps in details are also shown relative to it


def fmt_t(t):
    if T0 is None or not isinstance(t, int):
        return str(t)
    return "%d (t0%+d)" % (t, t - T0)


class Diff:
    def __init__(self, case, kind, detail, family, column):
        self.case, self.kind, self.detail = case, kind, detail
        self.family, self.column = family, column
        self.allowed_by = None

    def as_dict(self):
        return {"case": self.case, "kind": self.kind, "detail": self.detail,
                "family": self.family, "column": self.column, "allowed_by": self.allowed_by}


def excerpt(b, n=300):
    s = b.decode("utf-8", "replace") if isinstance(b, bytes) else str(b)
    return s if len(s) <= n else s[:n] + "..."


def parse_series(fmt, body):
    """[(name, tags or None, [(ts, value or None)])] from a render answer."""
    text = body.decode("utf-8")
    if fmt == "json":
        out = []
        for s in json.loads(text):
            out.append((s["target"], s.get("tags"), [(int(t), v) for v, t in s["datapoints"]]))
        return out
    if fmt == "raw":
        out = []
        for line in text.splitlines():
            if not line:
                continue
            head, _, vals = line.rpartition("|")
            name, start, end, step = head.rsplit(",", 3)
            start, step = int(start), int(step)
            pts = []
            for i, v in enumerate(vals.split(",") if vals else []):
                pts.append((start + i * step, None if v == "None" else float(v)))
            out.append((name, None, pts))
        return out
    if fmt == "csv":
        order, by = [], {}
        for line in text.splitlines():
            if not line:
                continue
            name, ts, v = line.rsplit(",", 2)
            if name not in by:
                by[name] = []
                order.append(name)
            t = calendar.timegm(time.strptime(ts, "%Y-%m-%d %H:%M:%S"))
            by[name].append((t, None if v == "" else float(v)))
        return [(n, None, by[n]) for n in order]
    raise ValueError("unknown format %r" % fmt)


def close(a, b):
    return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))


def mismatches(g, p, d):
    """Pairs (pgts[t], graphite[t + d]) that differ, over pgts' timestamps."""
    bad = total = 0
    for t, b in p.items():
        if t + d not in g:
            continue
        a = g[t + d]
        if a is None and b is None:
            continue
        total += 1
        if a is None or b is None or not close(a, b):
            bad += 1
    return bad, total


def diff_points(gp, pp):
    """Kinds and details of the differences between two point lists.

    When pgts' values line up better with graphite-web's one step later (or
    earlier), the shift is reported once and the remaining differences are
    those left after compensating it (marked "after shift").
    """
    out = []
    gts = [t for t, _ in gp]
    pts = [t for t, _ in pp]
    if gts != pts:
        def shape(ts):
            if not ts:
                return "empty"
            step = ts[1] - ts[0] if len(ts) > 1 else None
            return "%s..%s step %s (%d points)" % (fmt_t(ts[0]), fmt_t(ts[-1]), step, len(ts))
        out.append(("window", "graphite %s, pgts %s" % (shape(gts), shape(pts))))
    g = {t: (None if isinstance(v, float) and math.isnan(v) else v) for t, v in gp}
    p = dict(pp)
    note = ""
    if len(gts) > 1:
        step = gts[1] - gts[0]
        bad0, _ = mismatches(g, p, 0)
        best = (bad0, 0)
        for d in (step, -step):
            bad, total = mismatches(g, p, d)
            if total >= 3 and bad < 0.6 * total and bad < best[0]:
                best = min(best, (bad, d))
        if best[1]:
            d = best[1]
            out.append(("shift-early" if d > 0 else "shift-late",
                        "pgts[t] = graphite[t%+d]: %d values differ unshifted, %d shifted" % (d, bad0, best[0])))
            p = {t + d: v for t, v in p.items()}
            note = " (after shift)"
    counts = {"value-missing": [], "value-extra": [], "value": [], "value-ulp": []}
    for t in gts:
        if t not in p:
            continue
        a, b = g[t], p[t]
        if a is None and b is None:
            continue
        if b is None:
            counts["value-missing"].append((t, a, b))
        elif a is None:
            counts["value-extra"].append((t, a, b))
        elif a != b:
            counts["value-ulp" if close(a, b) else "value"].append((t, a, b))
    for kind, lst in counts.items():
        if lst:
            ex = ", ".join("t=%s graphite=%r pgts=%r" % (fmt_t(t), a, b) for t, a, b in lst[:3])
            out.append((kind, "%d points%s; first: %s" % (len(lst), note, ex)))
    return out


def diff_render(fmt, gbody, pbody):
    try:
        gs = parse_series(fmt, gbody)
    except (ValueError, KeyError, TypeError) as e:
        return [("body", "graphite answer unparsable (%s): %s" % (e, excerpt(gbody)))]
    try:
        ps = parse_series(fmt, pbody)
    except (ValueError, KeyError, TypeError) as e:
        return [("body", "pgts answer unparsable (%s): %s" % (e, excerpt(pbody)))]
    out = []
    gnames = [s[0] for s in gs]
    pnames = [s[0] for s in ps]
    missing = [n for n in gnames if n not in pnames]
    extra = [n for n in pnames if n not in gnames]
    if missing:
        out.append(("series-missing", ", ".join(missing[:8]) + (" ..." if len(missing) > 8 else "")))
    if extra:
        out.append(("series-extra", ", ".join(extra[:8]) + (" ..." if len(extra) > 8 else "")))
    if not missing and not extra and gnames != pnames:
        out.append(("series-order", "graphite %s; pgts %s" % (gnames[:8], pnames[:8])))
    # match series by name and occurrence: alias() gives many one name
    pby, seen = {}, {}
    for s in ps:
        seen[s[0]] = seen.get(s[0], 0) + 1
        pby[(s[0], seen[s[0]])] = s
    seen = {}
    for name, tags, pts in gs:
        seen[name] = seen.get(name, 0) + 1
        if (name, seen[name]) not in pby:
            continue
        _, ptags, ppts = pby[(name, seen[name])]
        if tags != ptags:
            out.append(("tags", "%s: graphite %s, pgts %s" % (name, tags, ptags)))
        for kind, d in diff_points(pts, ppts):
            out.append((kind, "%s: %s" % (name, d)))
    if not out and gbody != pbody:
        out.append(("repr", "same series and values, other text: graphite %s | pgts %s" % first_text_diff(gbody, pbody)))
    return out


def first_text_diff(a, b, ctx=40):
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    lo = max(0, i - ctx)
    return excerpt(a[lo:i + ctx], 200), excerpt(b[lo:i + ctx], 200)


def _entries(doc):
    """The list inside a find/expand/index answer, or None."""
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict) and len(doc) == 1:
        v = next(iter(doc.values()))
        if isinstance(v, list):
            return v
    return None


def _key(e):
    if isinstance(e, dict):
        return str(e.get("id", e.get("path", e.get("text"))))
    return str(e)


_HASH_DIR = re.compile(r"[0-9a-f]{3}")


def _in_tagged_dir(e, pe, corpus_nodes):
    """Whether graphite-only entry e is whisper's _tagged directory or one
    of its <3 hex> subdirectories (reached by a glob such as *.*), and not
    a node of the corpus' own names."""
    if e in pe:
        return False
    key = _key(e)
    if key.startswith("_tagged"):
        return True
    last = key.rsplit(".", 1)[-1]
    return bool(_HASH_DIR.fullmatch(last)) and last not in corpus_nodes


def diff_json_doc(gbody, pbody, corpus_nodes=frozenset()):
    """Find, expand, index: compare the entries of the parsed documents.

    Entries graphite-web lists under whisper's _tagged directory (where
    carbon files tagged series by a hash of their name) are reported apart,
    as kind tagged-dir; corpus_nodes (every node of the corpus' names) keeps
    a real node that looks like a hash directory from being taken for one.
    """
    try:
        g = json.loads(gbody)
        p = json.loads(pbody)
    except ValueError:
        return [("body", "graphite %s | pgts %s" % first_text_diff(gbody, pbody))]
    if g == p:
        return [("repr", "same document, other text: graphite %s | pgts %s" % first_text_diff(gbody, pbody))]
    ge, pe = _entries(g), _entries(p)
    if ge is None or pe is None:
        return [("body", "graphite %s | pgts %s" % (excerpt(gbody, 200), excerpt(pbody, 200)))]
    out = []
    tagged = [e for e in ge if _in_tagged_dir(e, pe, corpus_nodes)]
    if tagged:
        out.append(("tagged-dir", "graphite lists %d entries of whisper's _tagged directory, first %s" % (
            len(tagged), _key(tagged[0]))))
        ge = [e for e in ge if e not in tagged]
    gk = {_key(e): e for e in ge}
    pk = {_key(e): e for e in pe}
    only_g = [k for k in gk if k not in pk]
    only_p = [k for k in pk if k not in gk]
    if only_g:
        out.append(("body", "%d entries only in graphite: %s" % (len(only_g), ", ".join(only_g[:6]))))
    if only_p:
        out.append(("body", "%d entries only in pgts: %s" % (len(only_p), ", ".join(only_p[:6]))))
    fields = {}
    for k in gk:
        if k in pk and gk[k] != pk[k]:
            a, b = gk[k], pk[k]
            if isinstance(a, dict) and isinstance(b, dict):
                for f in sorted(set(a) | set(b)):
                    if a.get(f, "<absent>") != b.get(f, "<absent>"):
                        fields.setdefault(f, (k, a.get(f, "<absent>"), b.get(f, "<absent>"), []))[3].append(k)
            else:
                fields.setdefault("entry", (k, a, b, []))[3].append(k)
    for f, (k, a, b, ks) in sorted(fields.items()):
        out.append(("body", "field %r differs in %d entries, first %s: graphite %s, pgts %s" % (
            f, len(ks), k, json.dumps(a), json.dumps(b))))
    common_g = [_key(e) for e in ge if _key(e) in pk]
    common_p = [_key(e) for e in pe if _key(e) in gk]
    if not out and common_g != common_p:
        out.append(("body", "same entries in another order: graphite %s; pgts %s" % (common_g[:6], common_p[:6])))
    if not out:
        out.append(("body", "graphite %s | pgts %s" % first_text_diff(gbody, pbody)))
    return out


class AllowList:
    """Accepted differences: one per line, `KIND | CASE-GLOB | REASON`.

    KIND is a kind of compare.py (or *), CASE-GLOB an fnmatch pattern over
    case ids, REASON the mandatory justification. '#' starts a comment line.
    """

    def __init__(self, path):
        self.entries = []
        self.errors = []
        with open(path) as f:
            for no, line in enumerate(f, 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                parts = [x.strip() for x in line.split("|", 2)]
                if len(parts) < 3 or not all(parts):
                    self.errors.append("%s:%d: need KIND | CASE-GLOB | REASON" % (path, no))
                    continue
                self.entries.append({"line": no, "kind": parts[0], "case": parts[1], "reason": parts[2], "used": 0})

    def match(self, d):
        for e in self.entries:
            if (e["kind"] == "*" or e["kind"] == d.kind) and fnmatch.fnmatchcase(d.case, e["case"]):
                e["used"] += 1
                return e
        return None
