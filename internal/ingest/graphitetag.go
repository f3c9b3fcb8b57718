package ingest

import (
	"bytes"
	"fmt"
)

// NameTag is the key under which Influx line protocol and Prometheus
// remote write keep a tag or label called "name" (Telegraf's diskio and
// net inputs, cAdvisor's container name): Graphite reserves "name" for
// the metric name, so the series "diskio.reads" with name=sda is
// "diskio.reads;name_=sda", selected by seriesByTag('name_=sda').
const NameTag = "name_"

// TagKey returns the key a tag key of Influx line protocol or remote
// write is kept under: NameTag for "name", key itself otherwise. A
// series that also has a NameTag tag is refused as having a duplicate
// key (SortTags). It does not allocate.
func TagKey(key []byte) []byte {
	if string(key) == "name" {
		return nameTag
	}
	return key
}

var nameTag = []byte(NameTag)

// GraphiteTagBytes reports whether key=value may be a tag of a Graphite
// 1.1 tagged series "name;key=value", the form in which the render API
// names every tagged series whatever protocol brought it. The rules are
// carbon's (TaggedSeries.validateTagAndValue): a key holds none of
// ";!^=", a value holds no ";" and does not start with "~". The key
// "name" is refused too: Graphite uses it for the metric name, and carbon
// would silently overwrite it. The checks of ValidTagBytes (emptiness,
// length, characters) are the caller's. The error wraps ErrTag. It does
// not allocate unless it returns an error.
func GraphiteTagBytes(key, value []byte) error {
	switch {
	case bytes.IndexAny(key, ";!^=") >= 0:
		return fmt.Errorf("%w: key %s holds one of ';', '!', '^', '=' (Graphite tag syntax)", ErrTag, Clip(key))
	case string(key) == "name":
		return fmt.Errorf("%w: key \"name\" is reserved for the metric name", ErrTag)
	case bytes.IndexByte(value, ';') >= 0:
		return fmt.Errorf("%w %s: value %s holds ';' (Graphite tag syntax)", ErrTag, Clip(key), Clip(value))
	case len(value) > 0 && value[0] == '~':
		return fmt.Errorf("%w %s: value %s starts with '~' (Graphite tag syntax)", ErrTag, Clip(key), Clip(value))
	}
	return nil
}

// GraphiteNameBytes reports whether name may be the name of a Graphite
// series, tagged or not: it holds no ';', which would start the tags,
// and a tagged name holds more than '~' (carbon strips leading '~' to
// make the value of its "name" tag, which must not be empty). The checks
// of ValidNameBytes are the caller's. The error wraps ErrName.
func GraphiteNameBytes(name []byte, tagged bool) error {
	if bytes.IndexByte(name, ';') >= 0 {
		return fmt.Errorf("%w %s: holds ';', which starts Graphite tags", ErrName, Clip(name))
	}
	if tagged && len(bytes.TrimLeft(name, "~")) == 0 {
		return fmt.Errorf("%w %s: a tagged name must hold more than \"~\"", ErrName, Clip(name))
	}
	return nil
}
