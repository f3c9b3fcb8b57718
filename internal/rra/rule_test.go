package rra

import (
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// configText is a daemon configuration with three [[ds]] sections, as a
// user writes them.
const configText = `
[[ds]]
regexp = '^servers\.db\d+\.'
consolidation = "rrd"
step = "1m"
rras = ["1m:7d", "max:1h:30d:0.5"]

[[ds]]
regexp = '^servers\.'
consolidation = "rrd"
step = "10s"
heartbeat = "2h"
rras = ["10s:6h", "1m:7d", "1h:1y"]

[[ds]]
regexp = ".*"
consolidation = "RRD"
step = "10s"
heartbeat = "2h"
rras = ["10s:6h", "1m:24h", "10m:93d", "1d:5y:0.9"]
`

func TestRulesFromTOML(t *testing.T) {
	var cfg struct {
		DS []RuleConfig `toml:"ds"`
	}
	if _, err := toml.Decode(configText, &cfg); err != nil {
		t.Fatal(err)
	}
	rules, err := ParseRules(cfg.DS)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 3 {
		t.Fatalf("%d rules, want 3", len(rules))
	}
	db := rules[0]
	if db.Step != time.Minute || db.Heartbeat != 2*time.Minute || len(db.Archives) != 2 ||
		db.Archives[1] != (ArchiveSpec{Max, time.Hour, 30 * 24 * time.Hour, 0.5, 720}) {
		t.Errorf("rule 1 = %+v", db)
	}
	if last := rules[2].Archives[3]; last != (ArchiveSpec{WMean, 24 * time.Hour, 5 * Year, 0.9, 1825}) {
		t.Errorf("rule 3 archive 4 = %+v", last)
	}

	// First match wins: the db rule shadows the servers rule, which
	// shadows the catch-all.
	for _, c := range []struct {
		name string
		want int
	}{
		{"servers.db1.cpu", 0},
		{"servers.web1.cpu", 1},
		{"servers.dbx.cpu", 1},
		{"apps.servers.db1.cpu", 2}, // the patterns are anchored with ^
		{"", 2},
	} {
		r, ok := Match(rules, c.name)
		if !ok || r != &rules[c.want] {
			t.Errorf("Match(%q) = %p, %v; want rule %d", c.name, r, ok, c.want+1)
		}
	}
	if r, ok := Match(rules[:2], "apps.x"); ok || r != nil {
		t.Errorf("Match without a catch-all = %v, %v; want none", r, ok)
	}

	// A parsed rule shares one schema among its callers.
	s1, err1 := rules[1].Schema()
	s2, err2 := rules[1].Schema()
	if err1 != nil || err2 != nil || s1 != s2 {
		t.Errorf("Schema() = %p, %v and %p, %v; want one shared schema", s1, err1, s2, err2)
	}
	if s1.NumArchives() != 3 || s1.Step() != 10*time.Second || s1.Heartbeat() != 2*time.Hour {
		t.Errorf("schema of rule 2: %v, %v, %d archives", s1.Step(), s1.Heartbeat(), s1.NumArchives())
	}
}

func TestGraphiteRule(t *testing.T) {
	xff := 0.25
	r, err := ParseRule(RuleConfig{Regexp: "x", Step: "10s", Aggregation: "Sum", XFF: &xff,
		RRAs: []string{"10s:6h", "max:1m:7d", "1h:1y:0.9"}})
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := r.Schema()
	if !sc.Graphite() || r.Heartbeat != 0 || sc.Heartbeat() != 0 {
		t.Errorf("default consolidation: graphite %v, heartbeat %v", sc.Graphite(), r.Heartbeat)
	}
	want := []string{"sum:10s:6h:0.25", "max:1m:1w:0.25", "sum:1h:1y:0.25"}
	for i, w := range want {
		if got := sc.Archive(i).String(); got != w {
			t.Errorf("archive %d = %s, want %s", i, got, w)
		}
	}
	// The saved form parses back to the same schema.
	specs := make([]ArchiveSpec, len(want))
	for i, w := range want {
		specs[i], _ = ParseArchiveSpec(w)
	}
	if sc2, err := NewSchema(10*time.Second, 0, specs); err != nil || !sc2.Graphite() {
		t.Errorf("NewSchema from the saved form: %v, %v", sc2, err)
	}
}

func TestRuleByHand(t *testing.T) {
	a, err := ParseArchiveSpec("1m:1d")
	if err != nil {
		t.Fatal(err)
	}
	r := Rule{Step: time.Minute, Heartbeat: time.Hour, Archives: []ArchiveSpec{a}}
	if sc, err := r.Schema(); err != nil || sc.Step() != time.Minute {
		t.Errorf("Schema() = %v, %v", sc, err)
	}
	if _, ok := Match([]Rule{r}, "x"); ok {
		t.Error("a rule without a pattern matched")
	}
}

func TestParseRulesErrors(t *testing.T) {
	good := RuleConfig{Regexp: ".*", Step: "10s", RRAs: []string{"10s:1h"}}
	for _, c := range []struct {
		mod  func(*RuleConfig)
		want string
	}{
		{func(c *RuleConfig) { c.Regexp = "(" }, `ds section 1 (regexp "("): regexp "(": error parsing regexp`},
		{func(c *RuleConfig) { c.Regexp = strings.Repeat("a", 5000) }, "regexp of 5000 bytes exceeds the limit of 4096"},
		{func(c *RuleConfig) { c.Step = "" }, "no step"},
		{func(c *RuleConfig) { c.Step = "10" + "x" }, `step: parsing duration "10x"`},
		{func(c *RuleConfig) { c.Heartbeat = "soon"; c.Consolidation = "rrd" }, `heartbeat: parsing duration "soon"`},
		{func(c *RuleConfig) { c.Heartbeat = "1m" }, `a heartbeat applies only with consolidation = "rrd"`},
		{func(c *RuleConfig) { c.Consolidation = "whisper" }, `unknown consolidation "whisper"`},
		{func(c *RuleConfig) { c.Aggregation = "wmean" }, `unknown aggregation "wmean"`},
		{func(c *RuleConfig) { c.Aggregation = "sum"; c.Consolidation = "rrd" }, "aggregation and xff apply only with Graphite consolidation"},
		{func(c *RuleConfig) { x := 1.0; c.XFF = &x }, "xff 1 is outside [0, 1)"},
		{func(c *RuleConfig) { c.RRAs = []string{"1m:1d", "10s:1h"} }, "each archive's step must be a multiple of the one before"},
		{func(c *RuleConfig) { c.RRAs = []string{"10s:1d", "1m:1h"} }, "each archive must span more than the one before"},
		{func(c *RuleConfig) { c.RRAs = nil }, "no archives"},
		{func(c *RuleConfig) { c.RRAs = []string{"10s:1h", "7s:1m"} }, `parsing archive "7s:1m": span 1m is not a multiple of step 7s`},
		{func(c *RuleConfig) { c.RRAs = []string{"15s:1h"} }, "not a multiple of the DS step 10s"},
		{func(c *RuleConfig) { c.RRAs = make([]string, 40) }, "40 archives exceed the limit of 32"},
		{func(c *RuleConfig) { c.Step = "60y"; c.Consolidation = "rrd" }, "heartbeat 120y is over 100 years"},
	} {
		bad := good
		c.mod(&bad)
		_, err := ParseRules([]RuleConfig{bad})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseRules(%+v) = %v, want an error containing %q", bad, err, c.want)
		}
	}
	if _, err := ParseRules([]RuleConfig{good, {Regexp: "x"}}); err == nil ||
		!strings.HasPrefix(err.Error(), `ds section 2 (regexp "x"): no step`) {
		t.Errorf("error does not name the section: %v", err)
	}
}
