package graphite

import (
	"bytes"
	"fmt"

	"github.com/pgts/pgts/internal/ingest"
)

// setPath parses a Graphite path, plain ("a.b.c") or tagged
// ("a.b.c;k1=v1;k2=v2", Graphite 1.1), into p.Name and p.Tags, which it
// appends to p.Tags[:0] and sorts by key.
//
// The tag rules are carbon's (TaggedSeries.validateTagAndValue): a key
// is not empty and holds none of ";!^="; a value is not empty, holds no
// ";" and does not start with "~". Beyond carbon, duplicate keys and the
// key "name" (which carbon overwrites with the metric name) are refused,
// and keys and values must also pass ingest.ValidTag.
//
// Parsed paths are remembered in sc, and a path found there is not
// parsed again.
func setPath(p *ingest.Point, path []byte, l ingest.Limits, in *ingest.Interner, sc *ingest.SeriesCache) error {
	if name, tags, ok := sc.Get(path); ok {
		p.Name = name
		p.Tags = append(p.Tags[:0], tags...)
		return nil
	}
	if err := parsePath(p, path, l, in); err != nil {
		return err
	}
	sc.Put(path, p.Name, p.Tags)
	return nil
}

// parsePath is setPath without the cache.
func parsePath(p *ingest.Point, path []byte, l ingest.Limits, in *ingest.Interner) error {
	name, rest, tagged := bytes.Cut(path, []byte{';'})
	if err := ingest.ValidNameBytes(name, l); err != nil {
		return err
	}
	if tagged && len(bytes.TrimLeft(name, "~")) == 0 {
		// carbon uses the name, stripped of "~", as the value of its
		// "name" tag, which must not be empty.
		return fmt.Errorf("%w %s: a tagged name must hold more than \"~\"", ingest.ErrName, ingest.Clip(name))
	}
	p.Name = in.String(name)
	p.Tags = p.Tags[:0]
	if !tagged {
		return nil
	}
	for {
		seg, more, _ := bytes.Cut(rest, []byte{';'})
		if err := appendTag(p, seg, l, in); err != nil {
			return err
		}
		if more == nil {
			break
		}
		rest = more
	}
	return ingest.SortTags(p.Tags)
}

// appendTag parses one "key=value" segment of a tagged path into p.Tags.
func appendTag(p *ingest.Point, seg []byte, l ingest.Limits, in *ingest.Interner) error {
	if len(p.Tags) == l.MaxTags {
		return fmt.Errorf("%w: more than %d tags", ingest.ErrTag, l.MaxTags)
	}
	key, value, ok := bytes.Cut(seg, []byte{'='})
	switch {
	case !ok || len(key) == 0:
		return fmt.Errorf("%w %s: want key=value", ingest.ErrTag, ingest.Clip(seg))
	case bytes.IndexAny(key, "!^") >= 0:
		return fmt.Errorf("%w: key %s holds '!' or '^'", ingest.ErrTag, ingest.Clip(key))
	case string(key) == "name":
		return fmt.Errorf("%w: key \"name\" is reserved for the metric name", ingest.ErrTag)
	case len(value) > 0 && value[0] == '~':
		return fmt.Errorf("%w %s: value %s starts with '~'", ingest.ErrTag, ingest.Clip(key), ingest.Clip(value))
	}
	if err := ingest.ValidTagBytes(key, value, l); err != nil {
		return err
	}
	p.Tags = append(p.Tags, ingest.Tag{Key: in.String(key), Value: in.String(value)})
	return nil
}
