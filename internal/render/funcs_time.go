package render

import (
	"math"
	"strconv"
	"time"
)

// This file holds the Transform functions that re-bucket time:
// smartSummarize, hitcount and timeStack.

// alignStart truncates t (unix seconds, in loc) to the start of its unit:
// "y", "mon", "w" (optionally "w<isoweekday>"), "d", "h", "min", "s".
func alignStart(t int64, unit string, loc *time.Location) (int64, error) {
	tm := time.Unix(t, 0).In(loc)
	y, mo, d := tm.Date()
	switch u := unitOf(unit); u {
	case "y":
		return time.Date(y, 1, 1, 0, 0, 0, 0, loc).Unix(), nil
	case "mon":
		return time.Date(y, mo, 1, 0, 0, 0, 0, loc).Unix(), nil
	case "w":
		want := 1
		if c := unit[len(unit)-1]; c >= '0' && c <= '9' {
			want = int(c - '0')
		}
		iso := int(tm.Weekday())
		if iso == 0 {
			iso = 7
		}
		back := iso - want
		if back < 0 {
			back += 7
		}
		return time.Date(y, mo, d, 0, 0, 0, 0, loc).AddDate(0, 0, -back).Unix(), nil
	case "d":
		return time.Date(y, mo, d, 0, 0, 0, 0, loc).Unix(), nil
	case "h":
		return time.Date(y, mo, d, tm.Hour(), 0, 0, 0, loc).Unix(), nil
	case "min":
		return time.Date(y, mo, d, tm.Hour(), tm.Minute(), 0, 0, loc).Unix(), nil
	case "s":
		return t, nil
	}
	return 0, inputErrorf("invalid alignTo unit %q", unit)
}

// unitOf is graphite-web's getUnitString: the unit s starts with.
func unitOf(u string) string {
	switch {
	case hasPrefixAny(u, "s"):
		return "s"
	case hasPrefixAny(u, "min"):
		return "min"
	case hasPrefixAny(u, "h"):
		return "h"
	case hasPrefixAny(u, "d"):
		return "d"
	case hasPrefixAny(u, "w"):
		return "w"
	case hasPrefixAny(u, "mon"):
		return "mon"
	case hasPrefixAny(u, "y"):
		return "y"
	}
	return ""
}

func hasPrefixAny(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

func smartSummarize(ev *evaluator, a *args) ([]*series, error) {
	ivs := a.str("intervalString", "")
	interval, err := intervalSeconds(ivs)
	if err != nil {
		return nil, err
	}
	if interval <= 0 {
		return nil, inputErrorf("smartSummarize: interval %q must be positive", ivs)
	}
	fn := a.str("func", "sum")
	agg, _, _ := lookupAgg(fn)
	list := a.seriesList("seriesList")
	if at := a.vals["alignTo"]; at.kind == valString && at.str != "" {
		start, err := alignStart(ev.from, at.str, ev.req.location())
		if err != nil {
			return nil, err
		}
		if list, err = ev.withRange(start, ev.until).evalTarget(a.vals["seriesList"].expr); err != nil {
			return nil, err
		}
	}
	var out []*series
	for _, s := range list {
		if err := ev.req.charge(int((s.end - s.start) / interval)); err != nil {
			return nil, err
		}
		vals, end := summarizeValues(s, agg, interval, s.start, s.end)
		c := s.copyWith("smartSummarize("+s.name+`, "`+ivs+`", "`+fn+`")`, vals)
		c.tags = s.tags.with("smartSummarize", ivs).with("smartSummarizeFunction", fn)
		c.end, c.step = end, interval
		out = append(out, c)
	}
	return out, nil
}

func hitcount(ev *evaluator, a *args) ([]*series, error) {
	ivs := a.str("intervalString", "")
	interval, err := intervalSeconds(ivs)
	if err != nil {
		return nil, err
	}
	if interval <= 0 {
		return nil, inputErrorf("hitcount: interval %q must be positive", ivs)
	}
	align := a.boolean("alignToInterval", false)
	list := a.seriesList("seriesList")
	if align {
		unit := ""
		switch {
		case interval >= 86400:
			unit = "d"
		case interval >= 3600:
			unit = "h"
		case interval >= 60:
			unit = "min"
		}
		start := ev.from
		if unit != "" {
			if start, err = alignStart(ev.from, unit, ev.req.location()); err != nil {
				return nil, err
			}
		}
		if list, err = ev.withRange(start, ev.until).evalTarget(a.vals["seriesList"].expr); err != nil {
			return nil, err
		}
		for i, s := range list {
			c := *s
			c.end = s.start + (s.end-s.start)/interval*interval + interval
			list[i] = &c
		}
	}
	suffix := ""
	if align {
		suffix = ", true"
	}
	var out []*series
	for _, s := range list {
		buckets := int(math.Ceil(float64(s.end-s.start) / float64(interval)))
		if err := ev.req.charge(buckets); err != nil {
			return nil, err
		}
		sums := make([]float64, buckets)
		has := make([]bool, buckets)
		newStart := s.end - int64(buckets)*interval
		put := func(b int64, v float64) {
			sums[b] += v
			has[b] = true
		}
		for i, v := range s.values {
			if isNull(v) {
				continue
			}
			st := s.start + int64(i)*s.step
			sb, sm := floorDiv(st-newStart, interval), pyMod(st-newStart, interval)
			et := st + s.step
			eb, em := floorDiv(et-newStart, interval), pyMod(et-newStart, interval)
			if eb >= int64(buckets) {
				eb, em = int64(buckets)-1, interval
			}
			if sb == eb {
				if sb >= 0 {
					put(sb, v*float64(em-sm))
				}
				continue
			}
			if sb >= 0 {
				put(sb, v*float64(interval-sm))
			}
			for j := max(sb+1, 0); j < eb; j++ {
				put(j, v*float64(interval))
			}
			if em > 0 {
				put(eb, v*float64(em))
			}
		}
		vals := make([]float64, buckets)
		for i := range vals {
			vals[i] = nan
			if has[i] {
				vals[i] = sums[i]
			}
		}
		c := s.copyWith("hitcount("+s.name+`, "`+ivs+`"`+suffix+")", vals)
		c.tags = s.tags.with("hitcount", ivs)
		c.start, c.step = newStart, interval
		out = append(out, c)
	}
	return out, nil
}

func timeStack(ev *evaluator, a *args) ([]*series, error) {
	unit := a.str("timeShiftUnit", "1d")
	if unit != "" && unit[0] >= '0' && unit[0] <= '9' {
		unit = "-" + unit
	}
	d, err := ParseOffset(unit)
	if err != nil {
		return nil, inputErrorf("timeStack: invalid interval %q", unit)
	}
	list := a.seriesList("seriesList")
	if len(list) == 0 {
		return nil, nil
	}
	first := list[0]
	fromF, toF := a.number("timeShiftStart", 0), a.number("timeShiftEnd", 7)
	if toF-fromF > 1000 || math.Abs(fromF) > 1e6 || math.Abs(toF) > 1e6 {
		return nil, inputErrorf("timeStack: more than 1000 shifts or shifts beyond a million")
	}
	from, to := int(fromF), int(toF)
	sec := int64(d.Seconds())
	var out []*series
	for sh := from; sh < to; sh++ {
		shifted, err := ev.withRange(ev.from+sec*int64(sh), ev.until+sec*int64(sh)).evalTarget(a.vals["seriesList"].expr)
		if err != nil {
			return nil, err
		}
		for _, s := range shifted {
			name := "timeShift(" + s.name + ", " + unit + ", " + strconv.Itoa(sh) + ")"
			c := *s
			c.name, c.pathExpr = name, name
			c.tags = s.tags.with("timeShiftUnit", unit).with("timeShift", strconv.Itoa(sh))
			c.start, c.end = first.start, first.end
			out = append(out, &c)
		}
	}
	return out, nil
}
