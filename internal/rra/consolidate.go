package rra

import "math"

// mix returns the mean m of some known time moved toward v, which holds
// for a fraction f in (0, 1] of the combined known time: m*(1-f) + v*f.
//
// It returns m exactly when v == m, so the mean of a constant is that
// constant, and it cannot overflow for finite inputs: operands of the
// same sign are combined as m + (v-m)*f, of opposite signs as a sum of
// two terms no larger than the inputs.
func mix(m, v, f float64) float64 {
	switch {
	case v == m:
		return m
	case (m < 0) != (v < 0):
		return m*(1-f) + v*f
	}
	return m + (v-m)*f
}

// slotAcc is the open slot of one archive: the consolidation so far of
// its known PDPs, and their known time.
type slotAcc struct {
	// val is the time-weighted mean, minimum, maximum or latest of the
	// known PDPs, per the archive's CF; 0 while known is 0.
	val float64
	// known is the known time of the slot so far, in micros.
	known int64
}

// add consolidates a span of known PDPs, all with mean m and together
// holding known > 0 micros of known time.
func (s *slotAcc) add(cf CF, m float64, known int64) {
	if s.known == 0 {
		s.val, s.known = m, known
		return
	}
	switch cf {
	case WMean:
		s.val = mix(s.val, m, float64(known)/float64(s.known+known))
	case Min:
		s.val = min(s.val, m)
	case Max:
		s.val = max(s.val, m)
	case Last:
		s.val = m
	}
	s.known += known
}

// take returns the value of the slot as it closes and empties it: NaN
// when it has no known time or more unknown time than a allows.
func (s *slotAcc) take(a *archParams) float64 {
	v := s.val
	if s.known == 0 || a.step-s.known > a.maxUnknown {
		v = math.NaN()
	}
	*s = slotAcc{}
	return v
}

// uniform returns the value of a slot of a made of PDPs that all have
// mean m and known time k (micros, 0 for unknown PDPs) each.
func (a *archParams) uniform(dsStep int64, m float64, k int64) float64 {
	known := a.step / dsStep * k
	if known == 0 || a.step-known > a.maxUnknown {
		return math.NaN()
	}
	return m
}
