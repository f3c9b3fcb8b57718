package rra

import (
	"errors"
	"fmt"
	"regexp"
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
//	heartbeat = "2h"
//	rras = ["10s:6h", "1m:7d", "max:1h:30d:0.5", "1h:1y"]
//
// Step and Heartbeat are ParseDuration durations; an empty Heartbeat
// means twice the step. RRAs are ParseArchiveSpec strings.
type RuleConfig struct {
	Regexp    string   `toml:"regexp"`
	Step      string   `toml:"step"`
	Heartbeat string   `toml:"heartbeat"`
	RRAs      []string `toml:"rras"`
}

// Rule gives the series whose names match Pattern their DS step,
// heartbeat and archives. A Rule from ParseRule carries its compiled
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
	r.Heartbeat = 2 * r.Step
	if c.Heartbeat != "" {
		if r.Heartbeat, err = ParseDuration(c.Heartbeat); err != nil {
			return Rule{}, fmt.Errorf("heartbeat: %w", err)
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
