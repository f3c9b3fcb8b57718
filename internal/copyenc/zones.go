package copyenc

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Zones is what a PostgreSQL session knows about time zones when it reads
// a date or timestamp: the session's TimeZone (for values written without
// a zone), the time zone abbreviations (the server's
// timezone_abbreviations set, 'Default' unless changed), the full zone
// names it can load, and the DateStyle field order for ambiguous dates.
//
// A Zones is immutable after NewZones but for an internal cache of loaded
// zones; it is safe for concurrent use. Zone data comes from the system
// tzdata through time.LoadLocation, the files PostgreSQL on Debian reads
// too (it is built --with-system-tzdata).
type Zones struct {
	session   zone
	name      string // the session zone as configured
	order     DateOrder
	abbrevs   map[string]Abbrev // lower-case abbreviation → offset
	names     map[string]string // lower-case zone name → name as on disk
	zIsUTC    bool              // "z" is the abbreviation of UTC
	mu        sync.RWMutex
	locations map[string]*time.Location // by name as on disk
}

// DateOrder is the field order DateStyle gives to an ambiguous numeric
// date such as 01/02/03.
type DateOrder uint8

const (
	MDY DateOrder = iota // DateStyle '…, MDY' (PostgreSQL's default)
	DMY                  // '…, DMY'
	YMD                  // '…, YMD'
)

// Abbrev is one time zone abbreviation as pg_timezone_abbrevs lists it.
type Abbrev struct {
	Name   string // any case
	Offset int    // seconds east of UTC
	IsDST  bool
	// Dynamic marks an abbreviation whose offset depends on the date
	// (defined in the server's set by a zone name, not an offset); values
	// using it are refused rather than guessed.
	Dynamic bool
}

// ZonesConfig describes a session for NewZones.
type ZonesConfig struct {
	// Session is the session's TimeZone setting: a zone name
	// ("America/New_York", any case), "UTC", or a POSIX offset spec
	// without daylight-saving rules ("<+05>-05", "UTC+3"), which is how
	// PostgreSQL shows a numeric setting. Empty means UTC.
	Session string
	// DateOrder is DateStyle's field order.
	DateOrder DateOrder
	// Abbrevs is the abbreviation set; nil means none (only Z, the
	// numeric offsets and full names are then understood).
	Abbrevs []Abbrev
	// Names lists the zone names the server knows (pg_timezone_names);
	// nil means every zone file under the system tzdata directory.
	Names []string
}

// ZoneInfoDir is where the system tzdata lives on Debian, for both Go and
// PostgreSQL.
const ZoneInfoDir = "/usr/share/zoneinfo"

// NewZones builds the session's zone knowledge; it fails when the session
// zone cannot be understood.
func NewZones(cfg ZonesConfig) (*Zones, error) {
	z := &Zones{order: cfg.DateOrder, abbrevs: map[string]Abbrev{}, locations: map[string]*time.Location{}}
	for _, a := range cfg.Abbrevs {
		z.abbrevs[strings.ToLower(a.Name)] = a
	}
	a, ok := z.abbrevs["z"]
	z.zIsUTC = ok && a.Offset == 0 && !a.Dynamic
	names := cfg.Names
	if names == nil {
		names = systemZoneNames(ZoneInfoDir)
	}
	z.names = make(map[string]string, len(names))
	for _, n := range names {
		z.names[strings.ToLower(n)] = n
	}
	session := cfg.Session
	if session == "" {
		session = "UTC"
	}
	zn, reason := z.named([]byte(strings.ToLower(session)))
	if reason != "" {
		return nil, fmt.Errorf("time zone %q: %s", session, reason)
	}
	z.session, z.name = zn, session
	return z, nil
}

// utcAbbrevs are the abbreviations of UTC in PostgreSQL's Default set.
var utcAbbrevs = []Abbrev{{Name: "z"}, {Name: "zulu"}, {Name: "utc"}, {Name: "ut"}, {Name: "gmt"}}

// utcZones is the default session: UTC, MDY, UTC's abbreviations only.
var utcZones = func() *Zones {
	z, err := NewZones(ZonesConfig{Abbrevs: utcAbbrevs, Names: []string{}})
	if err != nil {
		panic(err)
	}
	return z
}()

// UTC returns a session in UTC with MDY dates that knows only UTC's
// abbreviations (Z, UTC, GMT, ...) and no zone names.
func UTC() *Zones { return utcZones }

// SessionZone names the session's zone as configured.
func (z *Zones) SessionZone() string { return z.name }

// systemZoneNames lists the zone files under dir, as PostgreSQL's
// pg_timezone_names does (without the posix/ and right/ copies).
func systemZoneNames(dir string) []string {
	var names []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			if rel == "posix" || rel == "right" {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.Contains(rel, ".") || rel == "posixrules" || rel == "Factory" {
			return nil
		}
		if b, err := os.ReadFile(path); err != nil || len(b) < 4 || string(b[:4]) != "TZif" {
			return nil
		}
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	return names
}

// zone is a fixed offset (loc nil) or a tzdata location.
type zone struct {
	loc   *time.Location
	fixed int // seconds east of UTC when loc is nil
}

// named resolves a lower-case zone name or POSIX offset spec as pg_tzset
// does: a zone file first (case-insensitively), then a POSIX spec.
func (z *Zones) named(lower []byte) (zone, string) {
	if name, ok := z.names[string(lower)]; ok {
		z.mu.RLock()
		loc := z.locations[name]
		z.mu.RUnlock()
		if loc == nil {
			var err error
			if loc, err = time.LoadLocation(name); err != nil {
				return zone{}, "cannot be loaded: " + err.Error()
			}
			z.mu.Lock()
			z.locations[name] = loc
			z.mu.Unlock()
		}
		if alwaysUTC(loc) {
			// UTC, Etc/UTC, Zulu...: read as the fixed zone "utc" is,
			// without a look-up of the zone's history per value.
			return zone{}, ""
		}
		return zone{loc: loc}, ""
	}
	if string(lower) == "utc" || string(lower) == "gmt" {
		return zone{}, ""
	}
	return posixZone(lower)
}

// alwaysUTC reports a zone whose offset is zero at every time: one
// period without bounds, at offset 0.
func alwaysUTC(loc *time.Location) bool {
	t := time.Unix(0, 0).In(loc)
	start, end := t.ZoneBounds()
	_, off := t.Zone()
	return off == 0 && start.IsZero() && end.IsZero()
}

// posixZone reads a POSIX TZ spec as PostgreSQL's tzparse does, for a
// standard zone only: a name (any run of bytes but digits, ',', '-' and
// '+', or <...>) and an offset west of UTC ([+-]hh[:mm[:ss]], hours up to
// 167). A spec with a daylight-saving part is refused.
func posixZone(s []byte) (zone, string) {
	i := 0
	if i < len(s) && s[i] == '<' {
		for i < len(s) && s[i] != '>' {
			i++
		}
		if i == len(s) {
			return zone{}, "not a known time zone"
		}
		i++
	} else {
		for i < len(s) && !isDigit(s[i]) && s[i] != ',' && s[i] != '-' && s[i] != '+' {
			i++
		}
		if i == 0 {
			return zone{}, "not a known time zone"
		}
	}
	sign := 1
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		if s[i] == '-' {
			sign = -1
		}
		i++
	}
	secs, n := posixSecs(s[i:])
	if n == 0 {
		return zone{}, "not a known time zone"
	}
	i += n
	if i != len(s) {
		return zone{}, reasonPosixDST
	}
	return zone{fixed: -sign * secs}, ""
}

// reasonPosixDST refuses a POSIX TZ spec with daylight-saving rules.
const reasonPosixDST = "is a POSIX time zone spec with daylight-saving rules, which the loader does not evaluate; use a zone name"

// posixSecs reads hh[:mm[:ss]] as tzcode's getsecs (hours 0-167, minutes
// 0-59, seconds 0-60) and returns seconds and the bytes read (0 when
// malformed).
func posixSecs(s []byte) (int, int) {
	p := dateScanner{s: s}
	h, ok := p.digits(1, 3)
	if !ok || h > 167 {
		return 0, 0
	}
	secs := h * 3600
	if p.byte(':') {
		m, ok := p.digits(1, 2)
		if !ok || m > 59 {
			return 0, 0
		}
		secs += m * 60
		if p.byte(':') {
			sec, ok := p.digits(1, 2)
			if !ok || sec > 60 {
				return 0, 0
			}
			secs += sec
		}
	}
	return secs, p.i
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// offsetAt returns the zone's offset (seconds east of UTC) for the local
// wall-clock time given as seconds since 1970-01-01 00:00 local, the way
// PostgreSQL's DetermineTimeZoneOffset resolves it: a time in a
// spring-forward gap takes the offset before the transition (so 02:30 in
// New York on a spring-forward night is 03:30 EDT), a time in a fall-back
// overlap the offset after it (the later, standard-time instant).
func (zn zone) offsetAt(local int64) int {
	if zn.loc == nil {
		return zn.fixed
	}
	prev := time.Unix(local-86400, 0).In(zn.loc)
	_, before := prev.Zone()
	_, end := prev.ZoneBounds()
	if end.IsZero() {
		return before
	}
	boundary := end.Unix()
	_, after := end.In(zn.loc).Zone()
	bt := local - int64(before)
	at := local - int64(after)
	switch {
	case bt < boundary && at < boundary:
		return before
	case bt > boundary && at >= boundary:
		return after
	case bt > at:
		return before
	}
	return after
}

// AbbrevsSQL reads the session's time zone abbreviations as Abbrev
// fields: name, offset in seconds east, is_dst, dynamic. PostgreSQL does
// not say which abbreviations are defined by a zone name (their offset
// follows the zone's history); an abbreviation whose offset differs
// from today's on any of a set of dates from 1800 to 2035 is marked
// dynamic.
const AbbrevsSQL = `SELECT a.abbrev, extract(epoch FROM a.utc_offset)::int, a.is_dst,
	EXISTS (SELECT 1 FROM unnest(ARRAY['1800-01-01','1900-01-01','1940-07-01','1950-07-01','1975-01-01',
			'1985-07-01','1995-01-01','2005-07-01','2012-01-01','2015-07-01','2022-01-01','2035-07-01']) d
		WHERE (d || ' 12:00:00 ' || a.abbrev)::timestamptz
			<> ((d || ' 12:00:00')::timestamp - a.utc_offset) AT TIME ZONE 'UTC')
	FROM pg_timezone_abbrevs a`

// NamesSQL lists the zone names the server knows.
const NamesSQL = `SELECT name FROM pg_timezone_names`
