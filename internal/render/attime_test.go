package render

import (
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	// Friday 2024-03-15 12:34:56 UTC, an injected clock.
	now := time.Date(2024, 3, 15, 12, 34, 56, 0, time.UTC)
	day := func(y int, m time.Month, d, h, min int) time.Time { return time.Date(y, m, d, h, min, 0, 0, time.UTC) }
	tests := []struct {
		in   string
		want time.Time
	}{
		{"now", now},
		{"", now},
		{"-1h", now.Add(-time.Hour)},
		{"now-1h", now.Add(-time.Hour)},
		{"-5min", now.Add(-5 * time.Minute)},
		{"-5minutes", now.Add(-5 * time.Minute)},
		{"-30s", now.Add(-30 * time.Second)},
		{"-7d", now.AddDate(0, 0, -7)},
		{"-2w", now.AddDate(0, 0, -14)},
		{"-1mon", now.AddDate(0, 0, -30)},
		{"-1y", now.AddDate(0, 0, -365)},
		{"+1h", now.Add(time.Hour)},
		{"now+1d", now.AddDate(0, 0, 1)},
		{"-1h30min", now.Add(-90 * time.Minute)},
		{"1700000000", time.Unix(1700000000, 0).UTC()},
		{"20240101", day(2024, 1, 1, 0, 0)},
		{"14:30_20240101", day(2024, 1, 1, 14, 30)},
		{"04:00_20231231", day(2023, 12, 31, 4, 0)},
		{"noon", day(2024, 3, 15, 12, 0)},
		{"midnight", day(2024, 3, 15, 0, 0)},
		{"teatime", day(2024, 3, 15, 16, 0)},
		{"noon yesterday", day(2024, 3, 14, 12, 0)},
		{"today", day(2024, 3, 15, 0, 0)},
		{"tomorrow", day(2024, 3, 16, 0, 0)},
		{"yesterday-1h", day(2024, 3, 13, 23, 0)},
		{"4pm", day(2024, 3, 15, 16, 0)},
		{"9am", day(2024, 3, 15, 9, 0)},
		{"03/10/2024", day(2024, 3, 10, 0, 0)},
		{"03/10/24", day(2024, 3, 10, 0, 0)},
		{"jan5", day(2024, 1, 5, 0, 0)},
		{"feb 28", day(2024, 2, 28, 0, 0)},
		{"monday", day(2024, 3, 11, 0, 0)},
		{"friday", day(2024, 3, 15, 0, 0)},
		{"NOW-1H", now.Add(-time.Hour)},
	}
	for _, tt := range tests {
		got, err := ParseTime(tt.in, now, time.UTC)
		if err != nil {
			t.Errorf("ParseTime(%q): %v", tt.in, err)
			continue
		}
		if !got.Equal(tt.want) {
			t.Errorf("ParseTime(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestParseTimeZone(t *testing.T) {
	loc := time.FixedZone("UTC+2", 2*3600)
	now := time.Date(2024, 3, 15, 12, 0, 0, 0, time.UTC)
	got, err := ParseTime("14:00_20240315", now, loc)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2024, 3, 15, 12, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestParseTimeErrors(t *testing.T) {
	now := time.Date(2024, 3, 15, 12, 34, 56, 0, time.UTC)
	for _, in := range []string{
		"-5m",        // Graphite has no bare "m" unit
		"-1x",        // unknown unit
		"-h",         // no number
		"bogus",      // unknown reference
		"jan",        // month without day
		"99:99",      // bad time of day
		"-99999999y", // overflow
		"02/30/2024", // no such date
		"1" + string(make([]byte, 100)),
	} {
		if got, err := ParseTime(in, now, time.UTC); err == nil {
			t.Errorf("ParseTime(%q) = %v, want error", in, got)
		}
	}
}

func TestParseOffset(t *testing.T) {
	tests := map[string]time.Duration{
		"":       0,
		"1h":     time.Hour,
		"-1d":    -24 * time.Hour,
		"+10min": 10 * time.Minute,
		"2weeks": 14 * 24 * time.Hour,
	}
	for in, want := range tests {
		got, err := ParseOffset(in)
		if err != nil || got != want {
			t.Errorf("ParseOffset(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}
