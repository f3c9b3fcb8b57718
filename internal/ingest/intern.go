package ingest

// Interner turns byte slices into strings, returning the same string for
// equal bytes it has seen, so that parsing the same series over and over
// allocates no new strings. It bounds its memory: when the strings it
// remembers (plus internEntryOverhead bytes each) would exceed its budget
// it forgets all of them. A nil *Interner, or one with a zero budget,
// copies every time.
//
// An Interner is not safe for concurrent use; give each parser its own.
type Interner struct {
	m      map[string]string
	used   int
	budget int
	churn  churn
}

// internEntryOverhead estimates what one map entry costs besides its
// string bytes: two string headers and the map's per-slot bookkeeping.
const internEntryOverhead = 48

// NewInterner returns an Interner spending at most budget bytes.
func NewInterner(budget int) *Interner {
	return &Interner{budget: budget}
}

// String returns a string equal to b. The result never aliases b.
func (in *Interner) String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if in == nil || in.budget <= 0 || in.churn.aside() {
		return string(b)
	}
	if s, ok := in.m[string(b)]; ok { // no allocation: the compiler uses b in place
		in.churn.hits++
		return s
	}
	in.churn.misses++
	s := string(b)
	cost := len(s) + internEntryOverhead
	if cost > in.budget {
		return s
	}
	if in.m == nil || in.used+cost > in.budget {
		// Forget everything rather than track recency: cheap, bounded,
		// and a working set that fits the budget is relearned at once.
		// One that does not fit steps aside for a while (churn).
		if in.m != nil && in.churn.full() {
			in.m, in.used = nil, 0
			return s
		}
		in.m, in.used = make(map[string]string), 0
	}
	in.m[s] = s
	in.used += cost
	return s
}

// Len returns how many strings the Interner remembers.
func (in *Interner) Len() int {
	if in == nil {
		return 0
	}
	return len(in.m)
}

// Stepped returns how many strings were copied without a lookup because
// the Interner had stepped aside (see churn).
func (in *Interner) Stepped() int64 {
	if in == nil {
		return 0
	}
	return in.churn.stepped
}

// churn decides when a bounded cache that forgets everything when full
// should stop remembering for a while: when it filled up with fewer hits
// than misses since it last started afresh, its working set does not fit
// (a sender of a million series round robin, say) and every miss pays a
// map insert, and every fill a new map, for nothing. It then steps aside
// for stepAsideFills times the misses of that fill (lookups answer "not
// remembered" at once), and tries again; each try that churns again
// doubles the pause, up to 2^maxBackoff times. A working set that fits
// the budget fills it once and then hits, so it never steps aside.
type churn struct {
	hits, misses int
	skip         int   // lookups left to step aside for
	stepped      int64 // lookups stepped aside, since the start
	backoff      int   // fills that churned in a row, less one, at most maxBackoff
}

// stepAsideFills is how many fills' worth of lookups a churning cache
// steps aside for at first: trying again costs one fill (a map and its
// inserts) every stepAsideFills+1 fills' worth of lines, and at most one
// every stepAsideFills<<maxBackoff once it keeps churning (a million
// series round robin: a map of the whole budget built for nothing, each
// connection, several times a second at 500,000 lines/s).
const (
	stepAsideFills = 16
	maxBackoff     = 4
)

// aside reports whether this lookup steps aside, counting it.
func (c *churn) aside() bool {
	if c.skip == 0 {
		return false
	}
	c.skip--
	c.stepped++
	return true
}

// full records that the cache filled up and starts afresh; it reports
// whether the cache steps aside now.
func (c *churn) full() bool {
	churning := c.hits < c.misses
	if churning {
		c.skip = stepAsideFills << c.backoff * c.misses
		c.backoff = min(c.backoff+1, maxBackoff)
	} else {
		c.backoff = 0
	}
	c.hits, c.misses = 0, 0
	return churning
}

// SeriesCache remembers series a parser has parsed and validated (a
// name and its sorted tags) under the raw bytes they were parsed from,
// so that a series seen again costs one map lookup instead of being
// parsed, validated and interned again. It bounds its memory like
// Interner and forgets everything when full. A nil *SeriesCache, or one
// with a zero budget, remembers nothing.
//
// A SeriesCache is not safe for concurrent use. The tags it returns
// must not be modified.
type SeriesCache struct {
	m      map[string]cachedSeries
	used   int
	budget int
	churn  churn
}

type cachedSeries struct {
	name string
	tags []Tag
}

// NewSeriesCache returns a SeriesCache spending at most budget bytes.
func NewSeriesCache(budget int) *SeriesCache {
	return &SeriesCache{budget: budget}
}

// Get returns the series parsed from raw, if remembered.
func (c *SeriesCache) Get(raw []byte) (name string, tags []Tag, ok bool) {
	if c == nil || c.churn.aside() {
		return "", nil, false
	}
	if c.m == nil {
		return "", nil, false
	}
	s, ok := c.m[string(raw)]
	if ok {
		c.churn.hits++
	} else {
		c.churn.misses++
	}
	return s.name, s.tags, ok
}

// Len returns how many series the cache remembers.
func (c *SeriesCache) Len() int {
	if c == nil {
		return 0
	}
	return len(c.m)
}

// Stepped returns how many lookups answered "not remembered" at once
// because the cache had stepped aside (see churn).
func (c *SeriesCache) Stepped() int64 {
	if c == nil {
		return 0
	}
	return c.churn.stepped
}

// Put remembers that raw parses into name and tags. It copies tags.
// While the cache steps aside (see churn) it remembers nothing.
func (c *SeriesCache) Put(raw []byte, name string, tags []Tag) {
	if c == nil || c.budget <= 0 || c.churn.skip > 0 {
		return
	}
	// The name and tag strings are shared with the parser's Interner;
	// count the key, the entry and the tag headers.
	cost := len(raw) + internEntryOverhead + len(tags)*32
	key := name
	if string(raw) != name {
		key = string(raw)
	}
	if cost > c.budget {
		return
	}
	if c.m == nil || c.used+cost > c.budget {
		if c.m != nil && c.churn.full() {
			c.m, c.used = nil, 0
			return
		}
		c.m, c.used = make(map[string]cachedSeries), 0
	}
	var t []Tag
	if len(tags) > 0 {
		t = append(make([]Tag, 0, len(tags)), tags...)
	}
	c.m[key] = cachedSeries{name: name, tags: t}
	c.used += cost
}
