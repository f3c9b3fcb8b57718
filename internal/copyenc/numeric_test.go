package copyenc

import (
	"strings"
	"testing"
)

func TestNumericCodec(t *testing.T) {
	forty := "1234567890123456789012345678901234567890"
	// Binary payloads are numeric_send's output for the same text, except
	// that ±Infinity is sent with dscale 0 (numeric_send shows 32, a
	// by-product of its header bits; numeric_recv ignores dscale there).
	cases := []codecCase{
		ok("0", "0000000000000000", "0"),
		ok("0.00", "0000000000000002", "0.00"),
		ok("-0.00", "0000000000000002", "0.00"),
		ok("000", "0000000000000000", "0"),
		ok("0e-3", "0000000000000003", "0.000"),
		ok("1", "00010000000000000001", "1"),
		ok("+1", "00010000000000000001", "1"),
		ok(" \t1\n", "00010000000000000001", "1"),
		ok("10000", "00010001000000000001", "10000"),
		ok("12345.678", "0003000100000003000109291a7c", "12345.678"),
		ok("0.0001", "0001ffff000000040001", "0.0001"),
		ok("0.00012", "0002ffff00000005000107d0", "0.00012"),
		ok("1e-3", "0001ffff00000003000a", "0.001"),
		ok("1.5e10", "00010002000000000096", "15000000000"),
		ok("1.5E+10", "00010002000000000096", "15000000000"),
		ok("1.500e-2", "0001ffff000000050096", "0.01500"),
		ok("-1.5e-3", "0001ffff40000004000f", "-0.0015"),
		ok("1e-5", "0001fffe0000000503e8", "0.00001"),
		ok("123.4500", "0002000000000004007b1194", "123.4500"),
		ok("1.", "00010000000000000001", "1"),
		ok(".5", "0001ffff0000000113 88", "0.5"),
		ok("10000000000000000000000000000e-10", "000100040000000a0064", "1000000000000000000.0000000000"),
		ok(forty, "000a00090000000004d2162e23340d801ed204d2162e23340d801ed2", forty),
		ok("0.000000000000000000000000000000000000001234", "0002fff60000002a000c0d48",
			"0.000000000000000000000000000000000000001234"),
		ok("-99999999999999999999.99999999999999999999",
			"000a000440000014270f270f270f270f270f270f270f270f270f270f",
			"-99999999999999999999.99999999999999999999"),
		ok("-123456789012345678901234567890.1234567890",
			"000b00074000000a000c0d801ed204d2162e23340d801ed204d2162e2328",
			"-123456789012345678901234567890.1234567890"),
		ok("NaN", "00000000c0000000", "NaN"),
		ok("nan", "00000000c0000000", "NaN"),
		ok("Infinity", "00000000d0000020", "Infinity"),
		ok("+inf", "00000000d0000020", "Infinity"),
		ok("-Infinity", "00000000f0000020", "-Infinity"),
		ok("-INF", "00000000f0000020", "-Infinity"),
		ok("1e1000", "000100fa000000000001", "1"+strings.Repeat("0", 1000)),
		bad("", "not a number"), bad(" ", "not a number"), bad(".", "not a number"), bad("-", "not a number"),
		bad("1e", "not a number"), bad("1e+", "not a number"), ok("1e 5", "0001000100000000000a", "100000"),
		bad("1.2.3", "not a number"), bad("--1", "not a number"), bad("1_000", "not a number"),
		bad("0x10", "not a number"), bad("-nan", "not a number"), bad("Infinityx", "not a number"),
		bad("1,5", "not a number"), bad("1e1073741823", "value overflows numeric format"),
		bad("1e131072", "value overflows numeric format"), bad("1e-16384", "value overflows numeric format"),
		ok("0e20000", "0000000000000000", "0"),
		bad("1e-99999999999999999999", "value overflows numeric format"),
		bad("0."+strings.Repeat("0", numericMaxDscale+1), "value overflows numeric format"),
		bad(strings.Repeat("9", 4*numericMaxWeight+5), "value overflows numeric format"),
	}
	runCodecCases(t, TypeInfo{OID: oidNumeric, Name: "numeric(10,2)"}, cases)

	// the largest magnitude and scale PostgreSQL stores
	c := mustLookup(t, oidNumeric)
	for _, s := range []string{
		strings.Repeat("9", 4*numericMaxWeight+4),
		"0." + strings.Repeat("0", numericMaxDscale-1) + "1",
	} {
		out, err := c.AppendBinary(nil, []byte(s))
		if err != nil {
			t.Fatalf("%d digits: %v", len(s), err)
		}
		if got := decodeNumeric(t, onlyField(t, out)); got != s {
			t.Fatalf("%d digits decode to %d", len(s), len(got))
		}
	}
}
