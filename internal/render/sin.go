package render

import (
	"math"
	"math/big"
	"sync"
)

// sinRounded returns sin(x) correctly rounded to float64 (but for
// arguments within 2^-75 of a rounding midpoint), as the C library's sin
// is in practice. Go's math.Sin reduces large arguments with an absolute
// error near 2^-53, so next to a zero crossing (sin(1.8e9) can be 1e-7)
// its relative error reaches 1e-9: the value graphite-web prints
// differs, not just its last bit. Here x is reduced by π/2 exactly in
// big.Float arithmetic wide enough for any float64, and the reduced
// argument's sine or cosine is summed at 128 bits.
func sinRounded(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return math.NaN()
	}
	if x == 0 {
		return x // keeps -0
	}
	_, e := math.Frexp(x)
	prec := uint(max(e, 0)) + 192
	halfPi := sinHalfPi(prec)

	bx := new(big.Float).SetPrec(prec).SetFloat64(x)
	// k = round(x / (π/2)); r = x - k·π/2, |r| ≤ π/4.
	q := new(big.Float).SetPrec(prec).Quo(bx, halfPi)
	k := roundHalfAway(q)
	kf := new(big.Float).SetPrec(prec).SetInt(k)
	r := new(big.Float).SetPrec(prec).Mul(kf, halfPi)
	r.Sub(bx, r)

	quad := new(big.Int).And(k, big.NewInt(3)).Int64()
	r128 := new(big.Float).SetPrec(128).Set(r)
	var v *big.Float
	switch quad {
	case 0:
		v = taylor(r128, true)
	case 1:
		v = taylor(r128, false)
	case 2:
		v = taylor(r128, true)
		v.Neg(v)
	default:
		v = taylor(r128, false)
		v.Neg(v)
	}
	f, _ := v.Float64()
	return f
}

// taylor sums sin(r) (sine true) or cos(r) at r's precision; |r| ≤ π/4
// so the terms fall fast (about 20 of them reach 2^-130).
func taylor(r *big.Float, sine bool) *big.Float {
	prec := r.Prec()
	r2 := new(big.Float).SetPrec(prec).Mul(r, r)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	n := int64(0)
	if sine {
		term.Set(r)
		n = 1
	}
	sum := new(big.Float).SetPrec(prec).Set(term)
	if term.Sign() == 0 {
		return sum
	}
	limit := sum.MantExp(nil) - int(prec) - 8
	den := new(big.Float).SetPrec(prec)
	for i := 0; i < 64; i++ {
		// term *= -r² / ((n+1)(n+2))
		term.Mul(term, r2)
		den.SetInt64((n + 1) * (n + 2))
		term.Quo(term, den)
		term.Neg(term)
		n += 2
		sum.Add(sum, term)
		if term.Sign() == 0 || term.MantExp(nil) < limit {
			break
		}
	}
	return sum
}

// roundHalfAway rounds a big.Float to the nearest integer.
func roundHalfAway(q *big.Float) *big.Int {
	h := new(big.Float).SetPrec(q.Prec()).SetFloat64(0.5)
	if q.Sign() < 0 {
		h.Neg(h)
	}
	t := new(big.Float).SetPrec(q.Prec()).Add(q, h)
	i, _ := t.Int(nil) // truncates toward zero
	return i
}

var (
	piOnce sync.Once
	piWide *big.Float // π to piBits bits
)

// piBits covers the reduction of the largest float64 (2^1024) with 192
// bits to spare.
const piBits = 1024 + 256

// sinHalfPi returns π/2 rounded to prec bits.
func sinHalfPi(prec uint) *big.Float {
	piOnce.Do(func() { piWide = machinPi(piBits + 32) })
	h := new(big.Float).SetPrec(prec).Set(piWide)
	return h.SetMantExp(h, -1)
}

// machinPi computes π = 16·atan(1/5) − 4·atan(1/239) at prec bits.
func machinPi(prec uint) *big.Float {
	a := atanInv(5, prec)
	b := atanInv(239, prec)
	a.Mul(a, new(big.Float).SetPrec(prec).SetInt64(16))
	b.Mul(b, new(big.Float).SetPrec(prec).SetInt64(4))
	return a.Sub(a, b)
}

// atanInv is atan(1/n) = Σ (-1)^k / ((2k+1)·n^(2k+1)) at prec bits.
func atanInv(n int64, prec uint) *big.Float {
	nf := new(big.Float).SetPrec(prec).SetInt64(n)
	n2 := new(big.Float).SetPrec(prec).Mul(nf, nf)
	pow := new(big.Float).SetPrec(prec).Quo(new(big.Float).SetPrec(prec).SetInt64(1), nf) // 1/n^(2k+1)
	sum := new(big.Float).SetPrec(prec).Set(pow)
	term := new(big.Float).SetPrec(prec)
	den := new(big.Float).SetPrec(prec)
	for k := int64(1); ; k++ {
		pow.Quo(pow, n2)
		den.SetInt64(2*k + 1)
		term.Quo(pow, den)
		if term.Sign() == 0 || term.MantExp(nil) < -int(prec)-8 {
			break
		}
		if k%2 == 1 {
			sum.Sub(sum, term)
		} else {
			sum.Add(sum, term)
		}
	}
	return sum
}
