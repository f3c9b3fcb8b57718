"""The parity suite's input: a deterministic corpus of points relative to t0.

t0 is the run's "now" rounded down to the minute. Every value comes from a
seeded generator, so two runs with the same t0 send the same points. The
corpus is sent in phases: everything in a phase is sent, then the suite
waits until both daemons have stored it before the next phase starts. Late
points (phase 2) therefore arrive after the newer points of their series
were stored, which is what out-of-order delivery means to carbon and whisper.

Rules that keep the reference deterministic (carbon writes whatever its cache
holds whenever its writer thread runs):
- within a phase, a series is sent over one protocol only (one ordered
  stream), and two points of one series that fall into the same 10 s slot
  with different timestamps are sent in increasing timestamp order (whisper
  keeps the later timestamp of a batch, not the later arrival);
- points meant for one archive stay at least 10 minutes away from the ages
  where whisper switches archive (6 h, 7 d, 1 y), because whisper picks the
  archive by the point's age at the moment carbon writes it;
- the far-future point is placed where whisper's ring would file it over a
  slot that holds no data (see far_future), so whisper shows no effect and
  the product must not either.

Families (first node of the name) and what each exercises:
  aligned   10 s points on 10 s boundaries, 5 h              (plain storage)
  unaligned 10 s points at +3 s and +7 s                     (slot = floor(t/10)*10)
  sparse    30 s and 60 s points                             (no heartbeat; xff of coarser archives)
  gaps      10 s points with holes of 30 s, 2 min, 25 min     (first point after a gap)
  single    a series of one point; one of two distant points  (first point stored)
  ooo       blocks sent in reverse order, late blocks in phase 2
  dup       same timestamp twice, overwrite in phase 2, two points in a slot
  counter   a counter with resets                           (derivative, perSecond)
  old       points 2 d, 30 d and 2 y old                     (coarse archives, refused points)
  future    recent points plus t0+1h and a year-2100 point   (future must not damage history)
  values    negative, large, tiny, integral values
  deep      a 5-node path; mixed.x is both a leaf and a branch
  tagged    Graphite 1.1 tagged series name;k=v (keys sent unsorted)
  fn        three well-formed series and a counter for the function checks
"""

import random

STEP = 10


class Corpus:
    """Points by phase and protocol, and the names a reader should find.

    phases: list of {"plaintext": [(name, ts, value)], "pickle": [...]}.
    names: every series name as Graphite stores it (tagged names normalised).
    tagged: the normalised tagged names.
    """

    def __init__(self, t0):
        self.t0 = t0
        self.phases = [{"plaintext": [], "pickle": []}, {"plaintext": [], "pickle": []}]
        self.names = set()
        self.tagged = set()

    def add(self, phase, proto, name, ts, value):
        self.phases[phase][proto].append((name, ts, value))
        stored = normalise(name)
        self.names.add(stored)
        if ";" in stored:
            self.tagged.add(stored)

    def count(self):
        return sum(len(p[k]) for p in self.phases for k in p)


def normalise(name):
    """Graphite 1.1's form of a tagged name: tags sorted by key."""
    if ";" not in name:
        return name
    parts = name.split(";")
    tags = sorted(p.split("=", 1) for p in parts[1:])
    return ";".join([parts[0]] + ["%s=%s" % (k, v) for k, v in tags])


def far_future(t0):
    """A timestamp in year ~2100 that whisper files over an empty slot.

    whisper stores a point in a ring at (t - base)/step modulo the archive's
    length, so a future point overwrites the slot one or more spans earlier.
    t0 - 3 h + k*21600 with k a multiple of 1460 is congruent to t0 - 3 h
    modulo 6 h, 7 d and 1 y (the three archives' spans), and the future
    family holds no point near t0 - 3 h.
    """
    return (t0 - 3 * 3600) + 74 * 1460 * 21600


def build(t0, seed=12):
    c = Corpus(t0)
    rnd = random.Random(seed)
    P, K = "plaintext", "pickle"

    def val():
        return round(rnd.uniform(0, 100), 3)

    # aligned: s0, s1 over plaintext, s2, s3 over pickle.
    for i in range(4):
        proto = P if i < 2 else K
        for ts in range(t0 - 5 * 3600, t0, STEP):
            c.add(0, proto, "aligned.s%d" % i, ts, val())

    # unaligned: +3 s and +7 s into each slot.
    for i, off in enumerate((3, 7)):
        for ts in range(t0 - 2 * 3600, t0 - STEP, STEP):
            c.add(0, P if i == 0 else K, "unaligned.s%d" % i, ts + off, val())

    # sparse: every 30 s and every 60 s for 5 h, and 60 s for 3 d (1m archive).
    for every in (30, 60):
        for ts in range(t0 - 5 * 3600, t0, every):
            c.add(0, P, "sparse.s%d" % every, ts, val())
    for ts in range(t0 - 3 * 86400, t0 - 6 * 3600 - 1200, 60):
        c.add(0, K, "sparse.m60", ts, val())

    # gaps: holes of 30 s, 2 min and 25 min in a 10 s series.
    holes = [(t0 - 3000, 30), (t0 - 2400, 120), (t0 - 1800, 1500)]
    for ts in range(t0 - 3600, t0, STEP):
        if any(start <= ts < start + length for start, length in holes):
            continue
        c.add(0, P, "gaps.g0", ts, val())

    # single: one point; two points an hour apart.
    c.add(0, P, "single.one", t0 - 1800, 42.0)
    c.add(0, K, "single.two", t0 - 7200, 1.5)
    c.add(0, K, "single.two", t0 - 3600, 2.5)

    # ooo: blocks of 20 points sent newest first; the middle hour held back
    # and sent in phase 2, after newer points were stored.
    base = t0 - 3 * 3600
    block = []
    for ts in range(base, t0, STEP):
        block.append(ts)
        if len(block) == 20:
            for b in reversed(block):
                c.add(0, P, "ooo.reversed", b, float(b % 977))
            block = []
    for b in reversed(block):
        c.add(0, P, "ooo.reversed", b, float(b % 977))
    for ts in range(base, t0, STEP):
        late = t0 - 2 * 3600 <= ts < t0 - 3600
        c.add(1 if late else 0, K, "ooo.late", ts, float(ts % 613))
    # late single points into an otherwise stored series, sent in plaintext
    for ts in range(base, t0, STEP):
        if ts % 600 != 0:
            c.add(0, P, "ooo.holes", ts, 1.0)
    for ts in range(base, t0, STEP):
        if ts % 600 == 0:
            c.add(1, P, "ooo.holes", ts, 2.0)

    # dup: same timestamp twice in one phase (the later value wins in
    # Graphite); a later phase overwrites; two timestamps in one slot.
    for ts in range(t0 - 3600, t0, STEP):
        c.add(0, P, "dup.same", ts, 1.0)
        c.add(0, P, "dup.same", ts, 2.0)
        c.add(0, K, "dup.overwrite", ts, 3.0)
        c.add(0, P, "dup.slot", ts + 2, 4.0)
        c.add(0, P, "dup.slot", ts + 8, 5.0)
    for ts in range(t0 - 3600, t0, 60):
        c.add(1, K, "dup.overwrite", ts, 6.0)

    # counter: +7 per 10 s, reset to 0 every 17 minutes.
    v = 0.0
    for ts in range(t0 - 4 * 3600, t0, STEP):
        v = 0.0 if ts % 1020 == 0 else v + 7
        c.add(0, P, "counter.c0", ts, v)

    # old: 2 d (1m archive), 30 d (1h archive), 2 y (beyond every archive).
    for ts in range(t0 - 2 * 86400, t0 - 2 * 86400 + 1800, 60):
        c.add(0, P, "old.d2", ts, val())
    for ts in range(t0 - 2 * 86400 + 3600, t0 - 2 * 86400 + 3660, STEP):
        c.add(0, P, "old.d2slot", ts, val())  # six points in one minute
    for ts in range(t0 - 30 * 86400, t0 - 30 * 86400 + 12 * 3600, 3600):
        c.add(0, K, "old.d30", ts, val())
    for ts in range(t0 - 2 * 365 * 86400, t0 - 2 * 365 * 86400 + 600, 60):
        c.add(0, K, "old.y2", ts, val())
    c.add(0, P, "old.mixed", t0 - 2 * 365 * 86400, 9.0)
    for ts in range(t0 - 1800, t0, STEP):
        c.add(0, P, "old.mixed", ts, val())

    # future: recent points, then points ahead of now (t0 + 1 h and ~2100),
    # then more recent points in phase 2.
    for name in ("future.hour", "future.y2100"):
        for ts in range(t0 - 7200, t0 - 3600, STEP):
            c.add(0, P, name, ts, val())
    c.add(0, P, "future.hour", t0 + 3600, 99.0)
    c.add(0, P, "future.y2100", far_future(t0), 99.0)
    for name in ("future.hour", "future.y2100"):
        for ts in range(t0 - 3600, t0, STEP):
            c.add(1, P, name, ts, val())

    # values: representation of floats.
    specials = [-1.5, 0.0, 100.0, 1e20, 1.5e-7, 123456789.125, -0.001, 3.0, 1e-300, 2.5e15]
    for j, ts in enumerate(range(t0 - 600, t0, STEP)):
        c.add(0, P, "values.special", ts, specials[j % len(specials)])
        c.add(0, K, "values.int", ts, float(j * 1000))

    # deep paths; mixed.x is a leaf and a branch.
    for ts in range(t0 - 1800, t0, STEP):
        c.add(0, P, "deep.a.b.c.d", ts, val())
        c.add(0, P, "deep.a.b.e", ts, val())
        c.add(0, P, "mixed.x", ts, 1.0)
        c.add(0, P, "mixed.x.y", ts, 2.0)

    # tagged: keys sent unsorted; Graphite sorts them.
    tagged = ["tagged.cpu;host=web1;dc=eu", "tagged.cpu;host=web2;dc=us", "tagged.mem;dc=eu"]
    for k, name in enumerate(tagged):
        for ts in range(t0 - 7200, t0, STEP):
            c.add(0, P if k != 1 else K, name, ts, val())

    # fn: inputs of the function checks: steady, noisy with nulls, negative.
    for ts in range(t0 - 5 * 3600, t0, STEP):
        i = (ts - t0) // STEP
        c.add(0, P, "fn.a", ts, float(i % 50))
        if ts % 130 != 0:
            c.add(0, P, "fn.b", ts, val())
        c.add(0, K, "fn.c", ts, -float(i % 13) * 1.25)  # 13: no period of 6 or 360 values
    v = 0.0
    for ts in range(t0 - 5 * 3600, t0, STEP):
        v = 3.0 if ts % 2400 == 0 else v + (ts % 70) / 10.0
        c.add(0, K, "fnc.count", ts, v)
    return c
