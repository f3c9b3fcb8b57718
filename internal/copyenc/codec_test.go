package copyenc

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// codecCase is one spelling of a value: accepted with the expected binary
// payload (hex, without the length word) and canonical text, or rejected
// with a reason containing reason.
type codecCase struct {
	in     string
	bin    string // "" for NULL-free rejection cases
	text   string // canonical text, before COPY escaping
	reason string // non-empty: the input must be rejected
}

func ok(in, bin, text string) codecCase { return codecCase{in: in, bin: bin, text: text} }
func bad(in, reason string) codecCase   { return codecCase{in: in, reason: reason} }

func runCodecCases(t *testing.T, ti TypeInfo, cases []codecCase) {
	t.Helper()
	c, found := Lookup(ti)
	if !found {
		t.Fatalf("no codec for %+v", ti)
	}
	prefix := []byte("prefix")
	for _, tc := range cases {
		bin, errB := c.AppendBinary(bytes.Clone(prefix), []byte(tc.in))
		txt, errT := c.AppendText(bytes.Clone(prefix), []byte(tc.in))
		if tc.reason != "" {
			for _, r := range []struct {
				out []byte
				err error
			}{{bin, errB}, {txt, errT}} {
				var ve *ValueError
				if !errors.As(r.err, &ve) {
					t.Errorf("%s %q: accepted (%q), want rejection (%s)", ti.Name, tc.in, r.out, tc.reason)
					continue
				}
				if !strings.Contains(ve.Reason, tc.reason) {
					t.Errorf("%s %q: reason %q, want %q", ti.Name, tc.in, ve.Reason, tc.reason)
				}
				if !bytes.Equal(r.out, prefix) {
					t.Errorf("%s %q: rejected but returned %q", ti.Name, tc.in, r.out)
				}
			}
			continue
		}
		if errB != nil || errT != nil {
			t.Errorf("%s %q: rejected: %v / %v", ti.Name, tc.in, errB, errT)
			continue
		}
		if !bytes.HasPrefix(bin, prefix) || !bytes.HasPrefix(txt, prefix) {
			t.Errorf("%s %q: dst prefix clobbered", ti.Name, tc.in)
			continue
		}
		payload := onlyField(t, bin[len(prefix):])
		if want := mustHex(tc.bin); !bytes.Equal(payload, want) {
			t.Errorf("%s %q: binary % x, want % x", ti.Name, tc.in, payload, want)
		}
		if got, want := string(txt[len(prefix):]), string(appendEscaped(nil, tc.text)); got != want {
			t.Errorf("%s %q: text %q, want %q", ti.Name, tc.in, got, want)
		}
	}
}

func TestLookup(t *testing.T) {
	for oid, want := range map[uint32]string{
		16: "boolean", 19: "name", 20: "bigint", 21: "smallint", 23: "integer", 25: "text",
		114: "json", 700: "real", 701: "double precision", 1042: "character",
		1043: "character varying", 1082: "date", 1114: "timestamp without time zone",
		1184: "timestamp with time zone", 1700: "numeric", 2950: "uuid", 3802: "jsonb",
	} {
		c, ok := Lookup(TypeInfo{OID: oid})
		if !ok {
			t.Errorf("oid %d: no codec", oid)
			continue
		}
		if got := c.(*scalarCodec).name; got != want {
			t.Errorf("oid %d: name %q, want %q", oid, got, want)
		}
		b, _ := builtinOf(oid)
		ac, ok := Lookup(TypeInfo{OID: b.arrayOID, ElemOID: oid})
		if !ok {
			t.Errorf("array of oid %d (oid %d): no codec", oid, b.arrayOID)
			continue
		}
		if got := ac.(*arrayCodec).name; got != want+"[]" {
			t.Errorf("array oid %d: name %q", b.arrayOID, got)
		}
	}
	for _, ti := range []TypeInfo{
		{OID: 18, Name: `"char"`},                        // not supported
		{OID: 1186, Name: "interval"},                    // not supported
		{OID: 1007, ElemOID: 20, Name: "integer[]"},      // element does not match the array type
		{OID: 30, ElemOID: 26, Name: "oidvector"},        // typelem set, but not an array of ours
		{OID: 600, ElemOID: 701, Name: "point"},          // typelem set, not an array
		{OID: 1231, ElemOID: 0, Name: "numeric[]"},       // array oid without its element
		{OID: 99999, ElemOID: 23, Name: "my_int_domain"}, // domain or user type
	} {
		if _, ok := Lookup(ti); ok {
			t.Errorf("%+v: got a codec", ti)
		}
	}
	c, _ := Lookup(TypeInfo{OID: 1043, Name: "character varying(20)"})
	_, err := c.AppendBinary(nil, []byte("a\x00"))
	if want := `invalid input for type character varying(20): "a\x00" (contains NUL)`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

func TestValueError(t *testing.T) {
	c := mustLookup(t, oidFloat8)
	_, err := c.AppendBinary(nil, []byte("1.2.3"))
	if want := `invalid input for type double precision: "1.2.3" (not a number)`; err == nil || err.Error() != want {
		t.Fatalf("%v, want %s", err, want)
	}
	if !IsValueError(fmt.Errorf("row 3: %w", err)) || IsValueError(errors.New("x")) {
		t.Fatal("IsValueError")
	}
	long := strings.Repeat("é", 100)
	_, err = c.AppendBinary(nil, []byte(long))
	var ve *ValueError
	if !errors.As(err, &ve) || len(ve.Value) > maxQuoted+3 || !strings.HasSuffix(ve.Value, "...") ||
		!strings.HasPrefix(long, strings.TrimSuffix(ve.Value, "...")) {
		t.Fatalf("long value kept as %q", ve.Value)
	}
}

func TestTextPassthrough(t *testing.T) {
	c := TextPassthrough()
	out, err := c.AppendText([]byte("x"), []byte("(1,2)\t\\"))
	if err != nil || string(out) != "x(1,2)\\t\\\\" {
		t.Fatalf("%q, %v", out, err)
	}
	out, err = c.AppendBinary([]byte("x"), []byte("1"))
	if !errors.Is(err, ErrNoBinaryCodec) || string(out) != "x" {
		t.Fatalf("%q, %v", out, err)
	}
}

func TestBoolCodec(t *testing.T) {
	var cases []codecCase
	for _, s := range []string{"t", "T", "tr", "tru", "true", "TRUE", " TrUe ", "y", "ye", "yes", "YES", "on", "ON", "1", "\t1\n", "\v\fon\r"} {
		cases = append(cases, ok(s, "01", "t"))
	}
	for _, s := range []string{"f", "fa", "fal", "fals", "false", "FALSE", "n", "no", "NO", "of", "off", "OFF", "0", " 0 "} {
		cases = append(cases, ok(s, "00", "f"))
	}
	for _, s := range []string{"", " ", "o", "truex", "yess", "onn", "offf", "10", "01", "2", "-1", "nope", "t rue", "\x00"} {
		cases = append(cases, bad(s, "not a boolean"))
	}
	runCodecCases(t, TypeInfo{OID: oidBool, Name: "boolean"}, cases)
}

func TestIntCodecs(t *testing.T) {
	syntax := "not an integer"
	common := []codecCase{
		bad("", syntax), bad(" ", syntax), bad("+", syntax), bad("-", syntax), bad("- 12", syntax),
		bad("1 2", syntax), bad("1_000", syntax), bad("0x1F", syntax), bad("0o17", syntax),
		bad("0b1", syntax), bad("12e1", syntax), bad("1.0", syntax), bad("１２", syntax),
		bad("++1", syntax), bad("1-", syntax), bad("NaN", syntax),
	}
	runCodecCases(t, TypeInfo{OID: oidInt2, Name: "smallint"}, append([]codecCase{
		ok("0", "0000", "0"), ok("-0", "0000", "0"), ok(" 12 ", "000c", "12"), ok("+12", "000c", "12"),
		ok("\t\n\v\f\r12\r\f\v\n\t", "000c", "12"), ok("00000000000000000000000000012", "000c", "12"),
		ok("32767", "7fff", "32767"), ok("-32768", "8000", "-32768"),
		bad("32768", "out of range for type smallint"), bad("-32769", "out of range for type smallint"),
		bad("99999999999999999999999", "out of range for type smallint"),
		bad("99999999999999999999999x", syntax),
	}, common...))
	runCodecCases(t, TypeInfo{OID: oidInt4, Name: "integer"}, append([]codecCase{
		ok("2147483647", "7fffffff", "2147483647"), ok("-2147483648", "80000000", "-2147483648"),
		ok("-1", "ffffffff", "-1"),
		bad("2147483648", "out of range for type integer"), bad("-2147483649", "out of range for type integer"),
	}, common...))
	runCodecCases(t, TypeInfo{OID: oidInt8, Name: "bigint"}, append([]codecCase{
		ok("9223372036854775807", "7fffffffffffffff", "9223372036854775807"),
		ok("-9223372036854775808", "8000000000000000", "-9223372036854775808"),
		bad("9223372036854775808", "out of range for type bigint"),
		bad("-9223372036854775809", "out of range for type bigint"),
		bad("18446744073709551616", "out of range for type bigint"),
	}, common...))
}

func TestFloatCodecs(t *testing.T) {
	syntax := "not a number"
	common := []codecCase{
		bad("", syntax), bad(".", syntax), bad("1e", syntax), bad("1e+", syntax), bad("e5", syntax),
		bad("1.2.3", syntax), bad("0x", syntax), bad("0x1p", syntax), bad("0x_1p0", syntax), bad("1_0", syntax),
		bad("1e 5", syntax), bad("- 1", syntax), bad("infinit", syntax), bad("nan(1", syntax), bad("nan(-1)", syntax),
		bad("Inf1", syntax), bad("1,5", syntax), bad("１", syntax),
	}
	runCodecCases(t, TypeInfo{OID: oidFloat8, Name: "double precision"}, append([]codecCase{
		ok("1.5", "3ff8000000000000", "1.5"), ok(" 1.5 ", "3ff8000000000000", "1.5"),
		ok("\v1.5\f", "3ff8000000000000", "1.5"), ok("1.", "3ff0000000000000", "1"),
		ok(".5", "3fe0000000000000", "0.5"), ok("+.5", "3fe0000000000000", "0.5"),
		ok("0.1", "3fb999999999999a", "0.1"), ok("1e+5", "40f86a0000000000", "100000"),
		ok("1E5", "40f86a0000000000", "100000"), ok("-0", "8000000000000000", "-0"),
		ok("-0.0e10", "8000000000000000", "-0"), ok("0e999999", "0000000000000000", "0"),
		ok("NaN", "7ff8000000000000", "NaN"), ok("nan", "7ff8000000000000", "NaN"),
		// glibc's strtod, as float8in uses it: hex floats, signed NaNs and NaN payloads
		ok("0x1p3", "4020000000000000", "8"), ok("0X10", "4030000000000000", "16"),
		ok("-0x1p-1074", "8000000000000001", "-5e-324"), ok("-nan", "fff8000000000000", "-NaN"),
		ok("+nan", "7ff8000000000000", "NaN"), ok("nan(123)", "7ff800000000007b", "NaN(123)"),
		ok("nan(0x10)", "7ff8000000000010", "NaN(16)"), ok("nan()", "7ff8000000000000", "NaN"),
		ok("Infinity", "7ff0000000000000", "Infinity"), ok("+inFinity", "7ff0000000000000", "Infinity"),
		ok("inf", "7ff0000000000000", "Infinity"), ok("+INF", "7ff0000000000000", "Infinity"),
		ok("-Infinity", "fff0000000000000", "-Infinity"), ok("-inf", "fff0000000000000", "-Infinity"),
		ok("5e-324", "0000000000000001", "5e-324"), ok("3e-324", "0000000000000001", "5e-324"),
		ok("1.7976931348623157e308", "7fefffffffffffff", "1.7976931348623157e+308"),
		ok("0.30000000000000004", "3fd3333333333334", "0.30000000000000004"),
		ok("123456789012345678901234567890", "45f8ee90ff6c373e", "1.2345678901234568e+29"),
		ok("2.2250738585072011e-308", "000fffffffffffff", "2.225073858507201e-308"),
		bad("1e309", "out of range for type double precision"),
		bad("-1e400", "out of range for type double precision"),
		bad("1e-400", "out of range for type double precision"),
		bad("2e-324", "out of range for type double precision"),
		bad("1e99999999999999999999", "out of range for type double precision"),
	}, common...))
	runCodecCases(t, TypeInfo{OID: oidFloat4, Name: "real"}, append([]codecCase{
		ok("1.5", "3fc00000", "1.5"), ok("0.1", "3dcccccd", "0.1"), ok("-0", "80000000", "-0"),
		ok("NaN", "7fc00000", "NaN"), ok("Infinity", "7f800000", "Infinity"), ok("-inf", "ff800000", "-Infinity"),
		ok("0x1p3", "41000000", "8"), ok("-nan", "ffc00000", "-NaN"), ok("nan(123)", "7fc0007b", "NaN(123)"),
		ok("1e-45", "00000001", "1e-45"), ok("3.4028235e38", "7f7fffff", "3.4028235e+38"),
		// rounded once to float32, not through float64 (through float64 it would be 3f800000)
		ok("1.000000059604644775390625000000000001", "3f800001", "1.0000001"),
		ok("1.00000005960464477539062499", "3f800000", "1"),
		bad("3.5e38", "out of range for type real"), bad("1e-46", "out of range for type real"),
	}, common...))
}

func TestUUIDCodec(t *testing.T) {
	const hex = "a0eebc999c0b4ef8bb6d6bb9bd380a11"
	const canon = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
	var cases []codecCase
	for _, s := range []string{
		canon, strings.ToUpper(canon), "{" + canon + "}", hex, "{" + hex + "}",
		"a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11", "a0eebc99-9c0b4ef8-bb6d6bb9bd380a11", "A0EEBC999C0B4EF8BB6D6BB9BD380A11",
	} {
		cases = append(cases, ok(s, hex, canon))
	}
	for _, s := range []string{
		"", " " + canon, canon + " ", "{" + canon, canon + "}", "-" + hex, hex + "-", "a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11",
		"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1-1", "a0e-ebc99-9c0b-4ef8-bb6d-6bb9bd380a11", hex[:31], hex + "0",
		"g0eebc999c0b4ef8bb6d6bb9bd380a11", "{{" + hex + "}}",
	} {
		cases = append(cases, bad(s, "not a uuid"))
	}
	runCodecCases(t, TypeInfo{OID: oidUUID, Name: "uuid"}, cases)
}

func TestTextCodecs(t *testing.T) {
	for _, ti := range []TypeInfo{
		{OID: oidText, Name: "text"}, {OID: oidVarchar, Name: "character varying(3)"},
		{OID: oidBpchar, Name: "character(3)"}, {OID: oidName, Name: "name"},
	} {
		runCodecCases(t, ti, []codecCase{
			ok("", "", ""), ok("abc", "616263", "abc"), ok(" a ", "206120", " a "),
			ok("日本語", "e697a5e69cace8aa9e", "日本語"), ok("😀", "f09f9880", "😀"),
			ok("tab\there\\ nl\n", "74616209686572655c206e6c0a", "tab\there\\ nl\n"),
			ok("\\N", "5c4e", "\\N"), ok("\x01\x7f", "017f", "\x01\x7f"),
			bad("a\x00b", "contains NUL"), bad("\xff", "invalid UTF-8"), bad("a\xc3", "invalid UTF-8"),
			bad("\xed\xa0\x80", "invalid UTF-8"), // an encoded surrogate
			bad("\xc0\xaf", "invalid UTF-8"),     // overlong
		})
	}
	runCodecCases(t, TypeInfo{OID: oidName, Name: "name"}, []codecCase{
		ok(strings.Repeat("n", 63), strings.Repeat("6e", 63), strings.Repeat("n", 63)),
		bad(strings.Repeat("n", 64), "longer than 63 bytes"),
	})
}

func TestJSONCodecs(t *testing.T) {
	both := []codecCase{
		ok(`{"a":1}`, `7b2261223a317d`, `{"a":1}`), ok(` [1, 2.5e3, "x", null, true] `, "205b312c20322e3565332c202278222c206e756c6c2c20747275655d20", ` [1, 2.5e3, "x", null, true] `),
		ok(`"\ud83d\ude00"`, "225c75643833645c756465303022", `"\ud83d\ude00"`), ok("1e400", "31653430 30", "1e400"),
		ok(`"日本"`, "22e697a5e69cac22", `"日本"`), ok("\"tab\\there\"", "227461625c746865726522", "\"tab\\there\""),
		bad(``, "not valid JSON"), bad(` `, "not valid JSON"), bad(`{"a":1,}`, "not valid JSON"),
		bad(`{'a':1}`, "not valid JSON"), bad(`[1] x`, "not valid JSON"), bad(`01`, "not valid JSON"),
		bad("\"a\nb\"", "not valid JSON"), bad(`NaN`, "not valid JSON"), bad(`"\x"`, "not valid JSON"),
		bad("\"\xff\"", "invalid UTF-8"), bad("\"\x00\"", "contains NUL"),
	}
	runCodecCases(t, TypeInfo{OID: oidJSON, Name: "json"}, append([]codecCase{
		ok(`"\u0000"`, "225c753030303022", `"\u0000"`), ok(`"\ud800"`, "225c756438303022", `"\ud800"`),
	}, both...))
	jsonbBoth := make([]codecCase, 0, len(both))
	for _, c := range both {
		if c.reason == "" {
			c.bin = "01" + c.bin
		}
		jsonbBoth = append(jsonbBoth, c)
	}
	runCodecCases(t, TypeInfo{OID: oidJSONB, Name: "jsonb"}, append([]codecCase{
		bad(`"\u0000"`, `\u0000 is not allowed in jsonb`), bad(`{"a":"x\u0000"}`, `\u0000`),
		bad(`"\ud800"`, "unpaired"), bad(`"\udc00"`, "unpaired"), bad(`"\ud800x"`, "unpaired"),
		bad(`"\ud800\u0041"`, "unpaired"), bad(`["\ud83d"]`, "unpaired"),
		ok(`"\\u0000"`, "01225c5c753030303022", `"\\u0000"`),
		ok(`{"\ud83d\ude00":"\u00e9"}`, "017b225c75643833645c7564653030223a225c753030653922 7d", `{"\ud83d\ude00":"\u00e9"}`),
	}, jsonbBoth...))
}
