package render

import (
	"math"
	"testing"
)

// The expected values are the C library's (glibc) sin of each argument,
// as graphite-web computes it, written as hexadecimal floats; each is also
// the correctly rounded sine (checked against an 80-digit decimal sum).
// Integers near 1.79e9 where sin is closest to zero (where Go's math.Sin
// is off by more than 1e-12 relative), timestamps, small and huge
// arguments. glibc is not correctly rounded everywhere (sin(1795567740)),
// so only arguments where it is are listed.
var libmSin = []struct{ x, want float64 }{
	{1790053268, 0x1.0bc668bcd61c4p-17},
	{1790261609, 0x1.1fc36b46f110dp-23},
	{1790469950, -0x1.14c484170c5f5p-17},
	{1790574298, -0x1.73570ef405b69p-19},
	{1790782639, -0x1.66df6559f0f2ep-18},
	{1790886987, -0x1.7c552a4e36896p-18},
	{1791095328, -0x1.486b850b785e2p-19},
	{1791199676, -0x1.1f7f66912e3c7p-17},
	{1791408017, 0x1.e73e04e7e83eap-22},
	{1791616358, 0x1.010b8642b406dp-17},
	{1791720706, 0x1.c23b0645703a5p-19},
	{1791929047, 0x1.3f6d69b13d0fbp-18},
	{1773856391, -0x1.da57f088a1104p-3},
	{1680986534, 0x1.ab11f449cc9abp-1},
	{1811969249, -0x1.eefd41296b131p-1},
	{1625923578, -0x1.6b049b3ed04ebp-3},
	{1638888934, 0x1.3ca74af32a184p-3},
	{1887699461, 0x1.efde8d7b5b1cfp-1},
	{1650535682, -0x1.fb7af04dadf4ap-3},
	{1796327743, -0x1.f1231829cf950p-1},
	{1631137934, 0x1.7dc035ca43141p-2},
	{1872427486, -0x1.19cdc9eba759fp-3},
	{1715265209, -0x1.fa24881d50814p-1},
	{1620130331, -0x1.7914ec466a5e3p-1},
	{1646142571, 0x1.eed158dad9443p-1},
	{1832811755, -0x1.97c0b56b2fa05p-2},
	{1824504467, -0x1.55b3dd78c4a0ap-1},
	{1637503345, -0x1.d77d5094d945dp-1},
	{1729204964, -0x1.89c5028b1171cp-1},
	{1648701179, 0x1.d03ebffbb7102p-1},
	{1895841241, -0x1.cb9d9659bc5b7p-1},
	{1827912004, -0x1.52006c6fca6fep-3},
	{-0x1.1a2b55adda11ap+3, -0x1.240af6ee74deep-1},
	{0x1.4f1f774f3bb60p+0, 0x1.ee907096c91ecp-1},
	{0x1.1e5e28b1dbef2p+3, 0x1.d5073fb367adcp-2},
	{0x1.4e670008c7540p+1, 0x1.026c8e0b3063dp-1},
	{0x1.a8f1b3de88a20p+0, 0x1.fdf7943d88999p-1},
	{-0x1.186885a1d4ee8p+3, -0x1.3abb56f5a114cp-1},
	{0x1.b5f8da7de0210p+0, 0x1.fafd00dea9a57p-1},
	{-0x1.20434971e64bap+3, -0x1.9e54f01e86a21p-2},
	{-0x1.6503e8788bf95p+2, 0x1.4bb94c2302735p-1},
	{0x1.221fd0a56b790p+0, 0x1.cfc6e6d862a74p-1},
	{-0x1.1872dda9dec57p+996, -0x1.fa238918fc62ep-1},
	{-0x1.ee9092163a468p+993, 0x1.a2cfdaa151643p-2},
	{0x1.f1b061cb012d0p+992, 0x1.ef35477a9dc45p-1},
	{0x1.b1b9929dc5968p+993, -0x1.3ebd7ed32256dp-1},
	{0x1.708c399c20c58p+993, -0x1.ddcf350960d40p-1},
	{0x1.56e1fc2f8f359p-997, 0x1.56e1fc2f8f359p-997},
	{0x1.8000000000000p+1, 0x1.210386db6d55bp-3},
	{0x1.6300000000000p+8, -0x1.f9bd0307d1de3p-16},
	{0x1.9639000000000p+16, -0x1.40efdf1eb8de7p-16},
	{0x1.0f0cf064dd592p+73, -0x1.b453ab76bf397p-1},
	{-0x1.0f0cf064dd592p+73, 0x1.b453ab76bf397p-1},
	{0x1.0000000000000p+60, -0x1.a94adab06665cp-1},
	{0x1.0000000000000p-1, 0x1.eaee8744b05f0p-2},
	{0x1.12e0be826d695p-30, 0x1.12e0be826d695p-30},
}

func TestSinMatchesLibm(t *testing.T) {
	for _, c := range libmSin {
		if got := sinRounded(c.x); got != c.want {
			t.Errorf("sin(%v) = %x, want %x (Go's math.Sin: %x)", c.x, got, c.want, math.Sin(c.x))
		}
	}
	if got := sinRounded(math.Copysign(0, -1)); !math.Signbit(got) || got != 0 {
		t.Errorf("sin(-0) = %v, want -0", got)
	}
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got := sinRounded(x); !math.IsNaN(got) {
			t.Errorf("sin(%v) = %v, want NaN", x, got)
		}
	}
}

func BenchmarkSinRounded(b *testing.B) {
	x := 1.79e9
	for i := 0; i < b.N; i++ {
		sinRounded(x + float64(i))
	}
}
