package copyenc

import (
	"reflect"
	"strings"
	"testing"
)

func arrayType(t *testing.T, elemOID uint32) TypeInfo {
	t.Helper()
	b, found := builtinOf(elemOID)
	if !found {
		t.Fatalf("oid %d", elemOID)
	}
	return TypeInfo{OID: b.arrayOID, ElemOID: elemOID, Name: b.name + "[]", ElemName: b.name}
}

func TestArrayCodecs(t *testing.T) {
	// payloads: array_send of the same literal
	tests := []struct {
		elem  uint32
		cases []codecCase
	}{
		{oidInt4, []codecCase{
			ok("{}", "000000000000000000000017", "{}"),
			ok(" { } ", "000000000000000000000017", "{}"),
			ok(" { 1 , 2 } ", "000000010000000000000017000000020000000100000004000000010000000400000002", "{1,2}"),
			ok("{{1,2},{3,NULL}}", "00000002000000010000001700000002000000010000000200000001"+
				"000000040000000100000004000000020000000400000003ffffffff", "{{1,2},{3,NULL}}"),
			ok("{ { 1 } , { 2 } }", "0000000200000000000000170000000200000001000000010000000100000004000000010000000400000002", "{{1},{2}}"),
			ok(`{" 1 ","+2"}`, "000000010000000000000017000000020000000100000004000000010000000400000002", "{1,2}"),
			ok(`{1,\2}`, "000000010000000000000017000000020000000100000004000000010000000400000002", "{1,2}"),
			bad("{1,x}", `element "x": not an integer`), bad(`{""}`, `element "": not an integer`),
			bad(`{"NULL"}`, "not an integer"), bad(`{N\ULL}`, "not an integer"),
			bad("{1,2147483648}", "out of range for type integer"),
			bad("", `must start with "{"`), bad("1", `must start with "{"`), bad("[1:3]={1,2}", "incompatible"), bad("[2:1]={1}", "upper bound"), bad("[1:1]{1}", "assignment"),
			bad("[1:1]={{1}}", "incompatible"), bad("[:1]={1}", "dimension value"),
			ok(" [0:1] = {1,2}", "000000010000000000000017000000020000000000000004000000010000000400000002", "[0:1]={1,2}"),
			bad("{1,2", "unterminated"), bad("{1,2,", "unterminated"), bad("{", "unterminated"), bad("{{1}", "unterminated"),
			bad("{1,2} x", "junk after"), bad("{}x", "junk after"), bad("{1}}", "junk after"),
			bad("{{},{}}", "empty sub-array"), bad("{{}}", "empty sub-array"), bad("{{1},{}}", "empty sub-array"),
			bad("{{1,2},{3}}", "different sizes"), bad("{{1},{2,3}}", "different sizes"),
			bad("{{{1},{2}},{{3}}}", "different sizes"),
			bad("{1,{2}}", "sub-array where an element is expected"), bad("{{1},2}", "element where a sub-array"),
			bad("{1,,2}", "missing element"), bad("{,}", "missing element"), bad("{,1}", "missing element"),
			bad("{1,}", "missing element"), bad("{1 2}", "not an integer"), bad(`{"1" 2}`, `expected "," or "}"`),
			bad(`{1"2"}`, `unexpected '"'`), bad("{a{}", "unexpected '{'"), bad(`{"1}`, "unterminated quoted"),
			bad(`{1\`, "unterminated"), bad("{{{{{{{1}}}}}}}", "more than 6 dimensions"),
		}},
		{oidInt2, []codecCase{
			ok("{{{{{{1}}}}}}", "000000060000000000000015"+strings.Repeat("0000000100000001", 6)+"000000020001", "{{{{{{1}}}}}}"),
		}},
		{oidText, []codecCase{
			ok(`{1,NULL,null,"NULL"}`, "00000001000000010000001900000004000000010000000131ffffffffffffffff000000044e554c4c",
				`{1,NULL,NULL,"NULL"}`),
			ok(`{"a b","c\"d","e\\f",""}`, "0000000100000000000000190000000400000001000000036120620000000363226400000003655c6600000000",
				`{"a b","c\"d","e\\f",""}`),
			ok("{ a b ,x}", "0000000100000000000000190000000200000001000000036120620000000178", `{"a b",x}`),
			ok(`{a\ ,\,}`, "0000000100000000000000190000000200000001000000026120000000012c", `{"a ",","}`),
			ok(`{"{}","x,y","\t"}`, "0000000100000000000000190000000300000001000000027b7d00000003782c790000000174",
				`{"{}","x,y",t}`),
			ok("{日本,\"😀 \"}", "000000010000000000000019000000020000000100000006e697a5e69cac00000005f09f988020", `{日本,"😀 "}`),
			ok("{\"tab\there\",\"nl\nx\"}", "0000000100000000000000190000000200000001000000087461620968657265000000046e6c0a78",
				"{\"tab\there\",\"nl\nx\"}"),
			bad("{\"a\x00\"}", "contains NUL"), bad("{\xff}", "invalid UTF-8"),
		}},
		{oidTimestamptz, []codecCase{
			ok(`{"2024-01-02 03:04:05+02",infinity}`,
				"0000000100000000000004a00000000200000001000000080002b0ead7eeab40000000087fffffffffffffff",
				`{"2024-01-02 01:04:05+00",infinity}`),
			bad("{2024-01-02 03:04:05,x}", `element "x"`),
		}},
		{oidNumeric, []codecCase{
			ok("{1.50,NaN}", "0000000100000000000006a400000002000000010000000c0002000000000002000113880000000800000000c0000000",
				"{1.50,NaN}"),
		}},
		{oidBool, []codecCase{
			ok("{t,no}", "000000010000000000000010000000020000000100000001010000000100", "{t,f}"),
		}},
		{oidJSONB, []codecCase{
			ok(`{"{\"a\": 1}",null}`, "000000010000000100000eda000000020000000100000009017b2261223a20317dffffffff",
				`{"{\"a\": 1}",NULL}`),
			bad(`{"\"\\u0000\""}`, `\u0000`),
		}},
		{oidUUID, []codecCase{
			ok("{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}",
				"000000010000000000000b86000000010000000100000010a0eebc999c0b4ef8bb6d6bb9bd380a11",
				"{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}"),
		}},
		{oidDate, []codecCase{
			ok("{2024-01-02}", "00000001000000000000043a0000000100000001000000040000223f", "{2024-01-02}"),
			ok(`{"0044-03-15 BC"}`, "00000001000000000000043a000000010000000100000004fff49d7b", `{"0044-03-15 BC"}`),
		}},
		{oidVarchar, []codecCase{
			ok("{ab,c}", "00000001000000000000041300000002000000010000000261620000000163", "{ab,c}"),
		}},
		{oidInt8, []codecCase{
			ok(`{" 1 "}`, "0000000100000000000000140000000100000001000000080000000000000001", "{1}"),
		}},
	}
	for _, tt := range tests {
		runCodecCases(t, arrayType(t, tt.elem), tt.cases)
	}
}

func TestArrayDecoded(t *testing.T) {
	c, _ := Lookup(arrayType(t, oidText))
	out, err := c.AppendBinary(nil, []byte(`{{"a",NULL,"\\"},{b,"",c}}`))
	if err != nil {
		t.Fatal(err)
	}
	oid, dims, elems := decodeArray(t, onlyField(t, out))
	want := [][]byte{[]byte("a"), nil, []byte(`\`), []byte("b"), {}, []byte("c")}
	if oid != oidText || !reflect.DeepEqual(dims, []int{2, 3}) || !reflect.DeepEqual(elems, want) {
		t.Fatalf("oid %d dims %v elems %q", oid, dims, elems)
	}
}

func TestQuoteArrayElem(t *testing.T) {
	for in, want := range map[string]string{
		"": `""`, "x": "x", "null": `"null"`, "NuLL": `"NuLL"`, "nulls": "nulls", "a b": `"a b"`,
		`a"b`: `"a\"b"`, `a\b`: `"a\\b"`, "{": `"{"`, "}": `"}"`, ",": `","`, "\t": "\"\t\"", "é": "é",
		`""`: `"\"\""`,
	} {
		got := quoteArrayElem([]byte("<"+in), 1)
		if string(got) != "<"+want {
			t.Errorf("quote %q = %q, want %q", in, got[1:], want)
		}
	}
}
