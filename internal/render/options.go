package render

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Options configures the API. Start from [DefaultOptions]; [New] fills
// zero fields with the defaults, then validates.
type Options struct {
	// Now is the clock for relative times ("-1h", "now").
	Now func() time.Time
	// Logger receives one line per failed request (storage errors).
	Logger *slog.Logger
	// Location is the time zone for wall-clock times ("14:00_20240101",
	// "today") and CSV timestamps; a request's tz parameter overrides it.
	Location *time.Location
	// Version is what /version answers; Grafana needs a semantic version of
	// at least 1.1 to fetch /functions and enable its full editor.
	Version string

	// MaxTargets bounds the targets of one /render request.
	MaxTargets int
	// MaxExprLen bounds one target expression, bytes.
	MaxExprLen int
	// MaxDepth bounds call nesting in one target.
	MaxDepth int
	// MaxDataPoints bounds the maxDataPoints parameter; larger requests are
	// refused with 400.
	MaxDataPoints int
	// MaxSeries bounds the series one request may fetch, over all targets.
	MaxSeries int
	// MaxPoints bounds the points one request holds at once, fetched or
	// computed, over all targets and functions (8 bytes each); past it the
	// request fails with 400 asking for a shorter range. An aggregate
	// folded while reading (funcs_stream.go) holds one batch and its result.
	MaxPoints int
	// MinStep, seconds, is the finest step the Source can return. When set,
	// a fetch is refused before reading storage if series × range/MinStep
	// exceeds MaxPoints; 0 checks only what the Source returned.
	MinStep int64
	// MaxFindResults bounds the nodes one /metrics/find, /metrics/expand or
	// /metrics/index.json request returns.
	MaxFindResults int
	// MaxBodyBytes bounds a POST body.
	MaxBodyBytes int64
}

// DefaultOptions returns the defaults: UTC, version 1.1.10, 64 targets of
// at most 8 KiB nested 32 deep, maxDataPoints up to 100,000, 10,000 series
// and 5,000,000 points (40 MB of values) per request, 100,000 find results,
// 1 MiB bodies.
func DefaultOptions() Options {
	return Options{
		Now:            time.Now,
		Logger:         slog.New(slog.DiscardHandler),
		Location:       time.UTC,
		Version:        "1.1.10",
		MaxTargets:     64,
		MaxExprLen:     8 << 10,
		MaxDepth:       32,
		MaxDataPoints:  100_000,
		MaxSeries:      10_000,
		MaxPoints:      5_000_000,
		MaxFindResults: 100_000,
		MaxBodyBytes:   1 << 20,
	}
}

// withDefaults returns o with zero fields taken from DefaultOptions.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.Now == nil {
		o.Now = d.Now
	}
	if o.Logger == nil {
		o.Logger = d.Logger
	}
	if o.Location == nil {
		o.Location = d.Location
	}
	if o.Version == "" {
		o.Version = d.Version
	}
	set := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	set(&o.MaxTargets, d.MaxTargets)
	set(&o.MaxExprLen, d.MaxExprLen)
	set(&o.MaxDepth, d.MaxDepth)
	set(&o.MaxDataPoints, d.MaxDataPoints)
	set(&o.MaxSeries, d.MaxSeries)
	set(&o.MaxPoints, d.MaxPoints)
	set(&o.MaxFindResults, d.MaxFindResults)
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = d.MaxBodyBytes
	}
	return o
}

// Validate reports the first invalid field.
func (o Options) Validate() error {
	switch {
	case o.Now == nil:
		return errors.New("render options: Now is nil")
	case o.Logger == nil:
		return errors.New("render options: Logger is nil")
	case o.Location == nil:
		return errors.New("render options: Location is nil")
	case o.Version == "":
		return errors.New("render options: Version is empty")
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"MaxTargets", int64(o.MaxTargets)}, {"MaxExprLen", int64(o.MaxExprLen)},
		{"MaxDepth", int64(o.MaxDepth)}, {"MaxDataPoints", int64(o.MaxDataPoints)},
		{"MaxSeries", int64(o.MaxSeries)}, {"MaxPoints", int64(o.MaxPoints)},
		{"MaxFindResults", int64(o.MaxFindResults)}, {"MaxBodyBytes", o.MaxBodyBytes},
	} {
		if f.v <= 0 {
			return fmt.Errorf("render options: %s must be positive, got %d", f.name, f.v)
		}
	}
	if o.MinStep < 0 {
		return fmt.Errorf("render options: MinStep must not be negative, got %d", o.MinStep)
	}
	return nil
}
