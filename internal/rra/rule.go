package rra

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// maxPatternBytes bounds a rule's regular expression.
const maxPatternBytes = 4096

// RuleConfig is one [[ds]] section of the daemon's configuration file, as
// written by the user:
//
//	[[ds]]
//	regexp = '^servers\.'
//	step = "10s"
//	rras = ["10s:6h", "1m:7d", "1h:1y"]
//	aggregation = "average"   # Graphite consolidation (the default)
//	xff = 0.5
//
//	[[ds]]
//	regexp = '^tgres\.'
//	consolidation = "rrd"     # RRDtool/Tgres time-weighted consolidation
//	step = "10s"
//	heartbeat = "2h"
//	rras = ["10s:6h", "1m:7d", "max:1h:30d:0.5", "1h:1y"]
//
// Consolidation is "graphite" (the default when empty) or "rrd". In
// Graphite consolidation Aggregation is carbon's aggregationMethod
// (average, the default, sum, min, max or last) for every archive that
// names no function of its own, XFF (when set) carbon's xFilesFactor for
// every archive, and Heartbeat must be empty. In RRD consolidation
// Heartbeat is a ParseDuration duration, twice the step when empty, and
// Aggregation and XFF must be empty. Step is a ParseDuration duration;
// RRAs are ParseArchiveSpec strings.
type RuleConfig struct {
	Regexp        string   `toml:"regexp"`
	Consolidation string   `toml:"consolidation"`
	Step          string   `toml:"step"`
	Heartbeat     string   `toml:"heartbeat"`
	Aggregation   string   `toml:"aggregation"`
	XFF           *float64 `toml:"xff"`
	RRAs          []string `toml:"rras"`
}

// Rule gives the series whose names match Pattern their DS step,
// heartbeat and archives. A Heartbeat of 0 is Graphite consolidation. A Rule from ParseRule carries its compiled
// Schema: do not modify it.
type Rule struct {
	// Pattern is matched anywhere in a series name (unanchored, as
	// regexp.MatchString does): anchor it with ^ and $ to match whole
	// names.
	Pattern   *regexp.Regexp
	Step      time.Duration
	Heartbeat time.Duration
	Archives  []ArchiveSpec

	// schema is compiled once by ParseRule and shared by every DS of
	// the rule.
	schema *Schema
}

// ParseRule validates c and returns its Rule.
func ParseRule(c RuleConfig) (Rule, error) {
	var r Rule
	if len(c.Regexp) > maxPatternBytes {
		return Rule{}, fmt.Errorf("regexp of %d bytes exceeds the limit of %d", len(c.Regexp), maxPatternBytes)
	}
	var err error
	if r.Pattern, err = regexp.Compile(c.Regexp); err != nil {
		return Rule{}, fmt.Errorf("regexp %q: %w", clip(c.Regexp), err)
	}
	if c.Step == "" {
		return Rule{}, errors.New("no step")
	}
	if r.Step, err = ParseDuration(c.Step); err != nil {
		return Rule{}, fmt.Errorf("step: %w", err)
	}
	graphite := true
	switch strings.ToLower(c.Consolidation) {
	case "", "graphite":
	case "rrd":
		graphite = false
	default:
		return Rule{}, fmt.Errorf("unknown consolidation %q (want graphite or rrd)", clip(c.Consolidation))
	}
	agg := Average
	if graphite {
		if c.Heartbeat != "" {
			return Rule{}, errors.New(`a heartbeat applies only with consolidation = "rrd"`)
		}
		if c.Aggregation != "" {
			if agg, err = ParseCF(c.Aggregation); err != nil || agg == WMean {
				return Rule{}, fmt.Errorf("unknown aggregation %q (want average, sum, min, max or last)", clip(c.Aggregation))
			}
		}
		if c.XFF != nil && !(*c.XFF >= 0 && *c.XFF < 1) {
			return Rule{}, fmt.Errorf("xff %v is outside [0, 1)", *c.XFF)
		}
	} else {
		if c.Aggregation != "" || c.XFF != nil {
			return Rule{}, errors.New(`aggregation and xff apply only with Graphite consolidation; with consolidation = "rrd" give them per archive`)
		}
		r.Heartbeat = 2 * r.Step
		if c.Heartbeat != "" {
			if r.Heartbeat, err = ParseDuration(c.Heartbeat); err != nil {
				return Rule{}, fmt.Errorf("heartbeat: %w", err)
			}
		}
	}
	if len(c.RRAs) > MaxArchives {
		return Rule{}, fmt.Errorf("%d archives exceed the limit of %d", len(c.RRAs), MaxArchives)
	}
	r.Archives = make([]ArchiveSpec, len(c.RRAs))
	for i, spec := range c.RRAs {
		if r.Archives[i], err = ParseArchiveSpec(spec); err != nil {
			return Rule{}, err
		}
		if graphite {
			a := &r.Archives[i]
			if a.CF == WMean {
				a.CF = agg
			}
			if c.XFF != nil {
				a.XFF = *c.XFF
			}
		}
	}
	if r.schema, err = NewSchema(r.Step, r.Heartbeat, r.Archives); err != nil {
		return Rule{}, err
	}
	return r, nil
}

// ParseRules parses the [[ds]] sections in order; the order is the order
// in which Match tries them.
func ParseRules(cs []RuleConfig) ([]Rule, error) {
	rules := make([]Rule, len(cs))
	for i, c := range cs {
		var err error
		if rules[i], err = ParseRule(c); err != nil {
			return nil, fmt.Errorf("ds section %d (regexp %q): %w", i+1, clip(c.Regexp), err)
		}
	}
	return rules, nil
}

// Schema returns the rule's Schema. For a rule from ParseRule it is
// compiled once and shared, so that the many series of a rule cost one
// Schema; for a Rule built by hand it is compiled at each call.
func (r *Rule) Schema() (*Schema, error) {
	if r.schema != nil {
		return r.schema, nil
	}
	return NewSchema(r.Step, r.Heartbeat, r.Archives)
}

// Match returns the first rule whose pattern matches name, so a specific
// rule must come before a catch-all like ".*"; ok is false when none
// does. The returned pointer is into rules. Match only reads rules, so
// it is safe for concurrent use while nobody modifies them.
func Match(rules []Rule, name string) (r *Rule, ok bool) {
	for i := range rules {
		if rules[i].Pattern != nil && rules[i].Pattern.MatchString(name) {
			return &rules[i], true
		}
	}
	return nil, false
}
