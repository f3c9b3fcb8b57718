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
	if in == nil || in.budget <= 0 {
		return string(b)
	}
	if s, ok := in.m[string(b)]; ok { // no allocation: the compiler uses b in place
		return s
	}
	s := string(b)
	cost := len(s) + internEntryOverhead
	if cost > in.budget {
		return s
	}
	if in.m == nil || in.used+cost > in.budget {
		// Forget everything rather than track recency: cheap, bounded,
		// and a working set that fits the budget is relearned at once.
		in.m = make(map[string]string)
		in.used = 0
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
	if c == nil || c.m == nil {
		return "", nil, false
	}
	s, ok := c.m[string(raw)]
	return s.name, s.tags, ok
}

// Put remembers that raw parses into name and tags. It copies tags.
func (c *SeriesCache) Put(raw []byte, name string, tags []Tag) {
	if c == nil || c.budget <= 0 {
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
		c.m = make(map[string]cachedSeries)
		c.used = 0
	}
	var t []Tag
	if len(tags) > 0 {
		t = append(make([]Tag, 0, len(tags)), tags...)
	}
	c.m[key] = cachedSeries{name: name, tags: t}
	c.used += cost
}
