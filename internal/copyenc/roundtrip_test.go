package copyenc

// Round trips through a real PostgreSQL: the definitive check that the
// client-side parsing matches the server's input functions. For each
// column type, the same literals are loaded three ways:
//
//	b  binary COPY of AppendBinary's encoding
//	t  text COPY of AppendText's canonical spelling
//	x  text COPY of the literal itself, parsed by PostgreSQL
//
// and the three tables must hold identical values (compared by their text
// output, which tells -0 from 0 and 1.50 from 1.5).

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type roundTrip struct {
	sqlType string
	lits    []string
}

func roundTrips() []roundTrip {
	rng := rand.New(rand.NewPCG(1, 2))
	tsLits := []string{
		"2024-01-02", "2024-01-02 03:04", "2024-01-02T03:04:05", "2024-01-02t03:04:05", "2024-01-02  \t03:04:05",
		"  2024-01-02 03:04:05 \n", "2024-1-2 3:4:5", "2024-01-02 03:04:05Z", "2024-01-02 03:04:05z",
		"2024-01-02 03:04:05 Z", "2024-01-02 03:04:05 UTC", "2024-01-02 03:04:05utc", "2024-01-02 03:04:05-00",
		"2024-01-02 05:04:05+02", "2024-01-02 05:34:05+0230", "2024-01-02 05:34:05 +02:30",
		"2024-01-02 00:34:05-02:30", "2024-01-02 19:04:06+15:59:59", "2024-01-02 03:04:05.5",
		"2024-01-02 03:04:05.1234564", "2024-01-02 03:04:05.1234565", "2024-01-02 03:04:05.1234566",
		"2024-01-02 03:04:05.123456789+00", "2000-01-01 00:00:00.0000005", "2000-01-01 00:00:00.0000015",
		"2000-01-01 00:00:00.0000025", "2024-01-01 23:59:59.9999996", "2024-01-01 24:00:00", "2024-12-31 24:00",
		"2024-02-29 12:00", "1969-12-31 23:59:59.999999", "1900-02-28 12:00:00.5", "0001-01-01 00:00:00",
		"9999-12-31 23:59:59.999999", "10000-01-01", "0002024-01-02 03:04:05", "0044-03-15 12:00:00 BC",
		"0044-03-15 14:00:00+02 bc", "0001-02-29 00:00 BC", "4714-11-24 00:00:00 BC", "294276-12-31 23:59:59.999999",
		"infinity", " INFINITY ", "-infinity",
	}
	for range 200 { // random instants, zones and 7–9 fraction digits
		lo := int64(minPGMicros + microsPerDay)
		span := uint64(endPGMicros - minPGMicros - 2*microsPerDay)
		s := string(appendPGTimestampText(nil, int64(uint64(lo)+rng.Uint64N(span)))) // modular: lo < 0
		s, bc := strings.CutSuffix(s, " BC")
		s = strings.TrimSuffix(s, "+00")
		if !strings.Contains(s, ".") {
			s += "."
		}
		s += strconv.Itoa(rng.IntN(1000))
		s += fmt.Sprintf("%c%02d:%02d", "+-"[rng.IntN(2)], rng.IntN(16), rng.IntN(60))
		if bc {
			s += " BC"
		}
		tsLits = append(tsLits, s)
	}
	floatLits := []string{
		"1.5", " 1.5 ", "1.", ".5", "+.5", "0.1", "1e+5", "1E5", "-0", "-0.0e10", "0e999999", "NaN", "nan",
		"Infinity", "+inFinity", "inf", "+INF", "-Infinity", "-inf", "5e-324", "3e-324", "2.4703282292062328e-324",
		"1.7976931348623157e308", "0.30000000000000004", "123456789012345678901234567890",
		"2.2250738585072011e-308", "9007199254740993", "1e22", "1e23", "8.98846567431158e307",
	}
	for range 300 { // random doubles, shortest and 20-digit spellings
		f := math.Float64frombits(rng.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		floatLits = append(floatLits, strconv.FormatFloat(f, 'g', -1, 64), strconv.FormatFloat(f, 'e', 19, 64))
	}
	float4Lits := []string{"1.5", "0.1", "-0", "NaN", "Infinity", "-inf", "1e-45", "3.4028235e38", "16777217",
		"1.000000059604644775390625000000000001", "1.00000005960464477539062499", "7.1e-46"}
	for range 200 {
		f := math.Float32frombits(rng.Uint32())
		if f != f || math.IsInf(float64(f), 0) {
			continue
		}
		float4Lits = append(float4Lits, strconv.FormatFloat(float64(f), 'g', -1, 32),
			strconv.FormatFloat(float64(f), 'e', 15, 64))
	}
	numLits := []string{
		"0", "0.00", "-0.00", "000", "0e-3", "1", "+1", " \t1\n", "10000", "12345.678", "0.0001", "0.00012",
		"1e-3", "1.5e10", "1.5E+10", "1.500e-2", "-1.5e-3", "1e-5", "123.4500", "1.", ".5",
		"10000000000000000000000000000e-10", "1234567890123456789012345678901234567890",
		"0.000000000000000000000000000000000000001234", "-99999999999999999999.99999999999999999999",
		"-123456789012345678901234567890.1234567890", "NaN", "nan", "1e1000", "-1e-1000",
	}
	for range 200 { // random 1–45 digit decimals with exponents
		var b strings.Builder
		if rng.IntN(2) == 0 {
			b.WriteByte('-')
		}
		n := 1 + rng.IntN(45)
		point := rng.IntN(n + 1)
		for i := range n {
			if i == point {
				b.WriteByte('.')
			}
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
		if rng.IntN(3) == 0 {
			fmt.Fprintf(&b, "e%d", rng.IntN(81)-40)
		}
		numLits = append(numLits, b.String())
	}
	textLits := []string{"", "abc", " a ", "日本語", "😀", "tab\there\\ nl\n", "\\N", "\x01\x7f", "NULL", "a\rb", "\\.", `"q"`}
	uuidLits := []string{
		"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
		"{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}", "a0eebc999c0b4ef8bb6d6bb9bd380a11",
		"{a0eebc999c0b4ef8bb6d6bb9bd380a11}", "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11", "a0eebc99-9c0b4ef8-bb6d6bb9bd380a11",
	}
	jsonLits := []string{`{"a":1}`, ` [1, 2.5e3, "x", null, true] `, `"\ud83d\ude00"`, "1e400", `"日本"`, "\"tab\\there\"",
		`{"b":2,"a":1,"a":3}`, "-0", `{"\ud83d\ude00":"\u00e9"}`}
	return []roundTrip{
		{"boolean", []string{"t", "TRUE", " yes ", "on", "1", "f", "no", "OFF", "0", "tr", "of", "n", "\v1\f"}},
		{"smallint", []string{"0", "-0", "-32768", "32767", " +12 ", "00000000000000000000000000012", "\t\n\v\f\r12"}},
		{"integer", []string{"2147483647", "-2147483648", "-1"}},
		{"bigint", []string{"9223372036854775807", "-9223372036854775808"}},
		{"real", float4Lits},
		{"double precision", floatLits},
		{"numeric", numLits},
		{"numeric(10,2)", []string{"1.005", "-1.005", "12345678.994", "0.001", "NaN", "1e-3", "99999999.99"}},
		{"text", textLits},
		{"character varying(5)", []string{"abc", "abcde", "abcde   ", "日本語"}},
		{"character(3)", []string{"a", "abc", "abc  ", " "}},
		{"name", []string{"n", strings.Repeat("n", 63), "日本"}},
		{"uuid", uuidLits},
		{"json", append([]string{`"\u0000"`, `"\ud800"`}, jsonLits...)},
		{"jsonb", jsonLits},
		{"timestamp with time zone", append([]string{"294277-01-01 00:30:00+01"}, tsLits...)},
		{"timestamp without time zone", tsLits},
		{"timestamp(3) with time zone", tsLits},
		{"timestamp(0) without time zone", tsLits},
		{"date", []string{"1970-01-01", " 1969-12-31 ", "2024-02-29", "2024-1-2", "0001-12-31 BC", "0001-12-31 bc",
			"4714-11-24 BC", "5874897-12-31", "infinity", "-Infinity", "10000-01-01"}},
		{"integer[]", []string{"{}", " { } ", " { 1 , 2 } ", "{{1,2},{3,NULL}}", "{ { 1 } , { 2 } }", `{" 1 ","+2"}`,
			`{1,\2}`, "{{{1,2},{3,4}},{{5,6},{7,8}}}"}},
		{"smallint[]", []string{"{{{{{{1}}}}}}", "{-32768,NULL}"}},
		{"bigint[]", []string{`{" 1 "}`}},
		{"text[]", []string{`{1,NULL,null,"NULL"}`, `{"a b","c\"d","e\\f",""}`, "{ a b ,x}", `{a\ ,\,}`,
			`{"{}","x,y","\t"}`, "{日本,\"😀 \"}", "{\"tab\there\",\"nl\nx\"}", `{"\\N"}`, "{{a,b},{c,d}}"}},
		{"character varying(3)[]", []string{"{ab,c}", `{"abc   "}`}},
		{"character(2)[]", []string{"{{a},{b}}"}},
		{"name[]", []string{"{a,b}"}},
		{"timestamp with time zone[]", []string{`{"2024-01-02 03:04:05+02",infinity}`, `{"0044-03-15 12:00:00 BC",NULL}`}},
		{"timestamp without time zone[]", []string{`{"2024-01-02 03:04:05.1234565+02",-infinity}`}},
		{"date[]", []string{"{2024-01-02}", `{"0044-03-15 BC"}`}},
		{"numeric[]", []string{"{1.50,NaN}", "{1e-3,-0.00}"}},
		{"numeric(5,1)[]", []string{"{1.05,2.25}"}},
		{"real[]", []string{"{1.5,-0,NaN,-inf}"}},
		{"double precision[]", []string{"{1e300,5e-324,0.1}"}},
		{"boolean[]", []string{"{t,no,NULL}"}},
		{"jsonb[]", []string{`{"{\"a\": 1}",null}`, `{"[1, 2]","\"x\""}`}},
		{"json[]", []string{`{"{\"a\":1}"}`}},
		{"uuid[]", []string{"{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11,NULL}"}},
	}
}

// columnType reads the TypeInfo of column v of table as the loader does.
func columnType(ctx context.Context, t *testing.T, conn *pgx.Conn, table string) TypeInfo {
	var ti TypeInfo
	var oid, elem int64
	err := conn.QueryRow(ctx, `SELECT format_type(a.atttypid, a.atttypmod), a.atttypid::int8, t.typelem::int8,
			coalesce(format_type(t.typelem, NULL), '')
		FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
		WHERE a.attrelid = $1::regclass AND a.attname = 'v'`, table).Scan(&ti.Name, &oid, &elem, &ti.ElemName)
	if err != nil {
		t.Fatal(err)
	}
	ti.OID, ti.ElemOID = uint32(oid), uint32(elem)
	return ti
}

func copyIn(ctx context.Context, conn *pgx.Conn, table string, data []byte, binary bool) error {
	sql := "COPY " + table + " FROM STDIN"
	if binary {
		sql += " (FORMAT binary)"
		data = append(append(bytes.Clone(BinaryHeader), data...), BinaryTrailer...)
	}
	_, err := conn.PgConn().CopyFrom(ctx, bytes.NewReader(data), sql)
	return err
}

func TestRoundTripPostgreSQL(t *testing.T) {
	ctx := context.Background()
	conn := pgtest.Conn(t)
	for i, rt := range roundTrips() {
		t.Run(rt.sqlType, func(t *testing.T) {
			tables := [3]string{fmt.Sprintf("b%d", i), fmt.Sprintf("t%d", i), fmt.Sprintf("x%d", i)}
			for _, name := range tables {
				if _, err := conn.Exec(ctx, "CREATE TABLE "+name+" (id int PRIMARY KEY, v "+rt.sqlType+")"); err != nil {
					t.Fatal(err)
				}
			}
			ti := columnType(ctx, t, conn, tables[0])
			c, found := Lookup(ti)
			if !found {
				t.Fatalf("no codec for %+v", ti)
			}
			bw, tw := NewBinaryWriter(0), NewTextWriter(0)
			var raw []byte
			for id, lit := range append(rt.lits, "") {
				bw.BeginRow(2)
				bw.Int4(int32(id))
				tw.BeginRow(2)
				tw.Int4(int32(id))
				raw = strconv.AppendInt(raw, int64(id), 10)
				if id == len(rt.lits) { // a NULL row
					bw.Null()
					tw.Null()
					raw = append(raw, "\t\\N\n"...)
					continue
				}
				if err := bw.Field(c, []byte(lit)); err != nil {
					t.Fatalf("binary: %v", err)
				}
				if err := tw.Field(c, []byte(lit)); err != nil {
					t.Fatalf("text: %v", err)
				}
				raw = append(appendEscaped(append(raw, '\t'), lit), '\n')
			}
			for k, data := range [][]byte{bw.Bytes(), tw.Bytes(), raw} {
				if err := copyIn(ctx, conn, tables[k], data, k == 0); err != nil {
					t.Errorf("COPY into %s (%s): %v", tables[k], [3]string{"binary", "canonical text", "literal text"}[k], err)
					findCulprit(ctx, t, conn, rt.sqlType, c, rt.lits, k)
					return
				}
			}
			rows, err := conn.Query(ctx, fmt.Sprintf(`SELECT x.id, x.v::text, b.v::text, t.v::text
				FROM x%[1]d x JOIN b%[1]d b USING (id) JOIN t%[1]d t USING (id)
				WHERE x.v::text IS DISTINCT FROM b.v::text OR x.v::text IS DISTINCT FROM t.v::text`, i))
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var id int
				var x, b, tt *string
				if err := rows.Scan(&id, &x, &b, &tt); err != nil {
					t.Fatal(err)
				}
				t.Errorf("%q: PostgreSQL reads %s, binary COPY stored %s, canonical text %s", rt.lits[id], deref(x), deref(b), deref(tt))
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+tables[0]).Scan(&n); err != nil || n != len(rt.lits)+1 {
				t.Errorf("%d rows, %v", n, err)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "NULL"
	}
	return strconv.Quote(*s)
}

// findCulprit loads the literals one by one to name the one the server
// refused.
func findCulprit(ctx context.Context, t *testing.T, conn *pgx.Conn, sqlType string, c Codec, lits []string, way int) {
	if _, err := conn.Exec(ctx, "CREATE TEMP TABLE culprit (id int, v "+sqlType+")"); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, "DROP TABLE culprit")
	for _, lit := range lits {
		w := NewBinaryWriter(0)
		var data []byte
		switch way {
		case 0:
			w.BeginRow(2)
			w.Int4(0)
			_ = w.Field(c, []byte(lit))
			data = w.Bytes()
		case 1:
			data, _ = c.AppendText([]byte("0\t"), []byte(lit))
			data = append(data, '\n')
		default:
			data = append(appendEscaped([]byte("0\t"), lit), '\n')
		}
		if err := copyIn(ctx, conn, "culprit", data, way == 0); err != nil {
			t.Errorf("  %q: %v", lit, err)
		}
	}
}

// TestRoundTripRejects checks spellings this package rejects that every
// supported PostgreSQL version rejects too, and that the server applies
// the column's typmod to binary input exactly as to text.
func TestRoundTripRejects(t *testing.T) {
	ctx := context.Background()
	conn := pgtest.Conn(t)
	for i, tc := range []struct {
		sqlType string
		lit     string
		ours    bool // rejected here too (false: only the server can tell)
	}{
		{"integer", "2147483648", true}, {"integer", "abc", true}, {"integer", "", true}, {"integer", "1.5", true},
		{"smallint", "-32769", true}, {"boolean", "o", true}, {"boolean", "truex", true},
		{"double precision", "1e309", true}, {"double precision", "1e-400", true}, {"double precision", "1e", true},
		{"real", "3.5e38", true}, {"real", "1e-46", true}, {"numeric", ".", true}, {"numeric", "-nan", true},
		{"uuid", " a0eebc999c0b4ef8bb6d6bb9bd380a11", true}, {"uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1-1", true},
		{"jsonb", `"\u0000"`, true}, {"jsonb", `"\ud800"`, true}, {"json", `{"a":1,}`, true},
		{"timestamp with time zone", "2024-02-30", true}, {"timestamp with time zone", "2023-02-29 10:00", true},
		{"timestamp with time zone", "0000-01-01", true}, {"timestamp with time zone", "294277-01-01", true},
		{"timestamp with time zone", "2024-01-01 24:00:01", true}, {"timestamp with time zone", "4714-11-23 BC", true},
		{"timestamp with time zone", "2024-01-02 10:00:00+16", true}, {"timestamp with time zone", "294276-12-31 23:59:59-01", true},
		{"date", "5874898-01-01", true}, {"date", "2024-13-01", true},
		{"integer[]", "{{1,2},{3}}", true}, {"integer[]", "{1,{2}}", true}, {"integer[]", "{1,,2}", true},
		{"integer[]", "{{{{{{{1}}}}}}}", true}, {"integer[]", "{1,2} x", true}, {"text[]", `{"a" b}`, true},
		{"character varying(3)", "abcd", false}, {"character(2)", "abc", false},
		{"numeric(5,2)", "1234.5", false}, {"numeric(5,2)[]", "{1,1234.5}", false},
	} {
		table := fmt.Sprintf("r%d", i)
		if _, err := conn.Exec(ctx, "CREATE TABLE "+table+" (v "+tc.sqlType+")"); err != nil {
			t.Fatal(err)
		}
		if err := copyIn(ctx, conn, table, append(appendEscaped(nil, tc.lit), '\n'), false); err == nil {
			t.Errorf("%s %q: PostgreSQL accepts it", tc.sqlType, tc.lit)
		}
		c, found := Lookup(columnType(ctx, t, conn, table))
		if !found {
			t.Fatalf("%s: no codec", tc.sqlType)
		}
		w := NewBinaryWriter(0)
		w.BeginRow(1)
		err := w.Field(c, []byte(tc.lit))
		if tc.ours {
			if err == nil {
				t.Errorf("%s %q: accepted here", tc.sqlType, tc.lit)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s %q: %v", tc.sqlType, tc.lit, err)
		}
		if err := copyIn(ctx, conn, table, w.Bytes(), true); err == nil {
			t.Errorf("%s %q: binary COPY accepted what text COPY rejects", tc.sqlType, tc.lit)
		}
	}
}

// TestRoundTripWriters loads one row through each writer's typed methods
// and reads it back.
func TestRoundTripWriters(t *testing.T) {
	ctx := context.Background()
	conn := pgtest.Conn(t)
	const cols = `(b boolean, i2 smallint, i4 integer, i8 bigint, f4 real, f8 double precision, ts timestamptz,
		tsl timestamp, d date, s text, tx varchar, u uuid, j json, jb jsonb, n integer)`
	write := func(w FieldWriter) {
		w.BeginRow(15)
		w.Bool(true)
		w.Int2(math.MinInt16)
		w.Int4(math.MaxInt32)
		w.Int8(math.MinInt64)
		w.Float4(float32(math.Copysign(0, -1)))
		w.Float8(5e-324)
		w.Timestamp(-1)
		w.Timestamp(-63517780800_000000)
		w.Date(-719163)
		w.String("a\tb\\c\n日本")
		w.Text([]byte("\\N"))
		w.UUID([16]byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11})
		w.JSON([]byte(`{"k": [1, "\u0000"]}`))
		w.JSONB([]byte(`{"k": [1, 2]}`))
		w.Null()
		w.BeginRow(15)
		w.Bool(false)
		w.Int2(0)
		w.Int4(0)
		w.Int8(0)
		w.Float4(float32(math.NaN()))
		w.Float8(math.Inf(-1))
		w.Timestamp(InfinityMicros)
		w.Timestamp(NegInfinityMicros)
		w.Date(InfinityDays)
		w.String("")
		w.Text(nil)
		w.UUID([16]byte{})
		w.JSON([]byte(`1`))
		w.JSONB([]byte(`"x"`))
		w.Int4(7)
	}
	want := []string{
		`t|-32768|2147483647|-9223372036854775808|-0|5e-324|1969-12-31 23:59:59.999999+00|0044-03-15 12:00:00 BC|0001-12-31 BC|` +
			"a\tb\\c\n日本" + `|\N|a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11|{"k": [1, "\u0000"]}|{"k": [1, 2]}|NULL`,
		`f|0|0|0|NaN|-Infinity|infinity|-infinity|infinity|||00000000-0000-0000-0000-000000000000|1|"x"|7`,
	}
	bw, tw := NewBinaryWriter(0), NewTextWriter(0)
	write(bw)
	write(tw)
	for k, name := range []string{"wb", "wt"} {
		if _, err := conn.Exec(ctx, "CREATE TABLE "+name+" "+cols); err != nil {
			t.Fatal(err)
		}
		data := [][]byte{bw.Bytes(), tw.Bytes()}[k]
		if err := copyIn(ctx, conn, name, data, k == 0); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rows, err := conn.Query(ctx, `SELECT concat_ws('|', b, i2, i4, i8, f4, f8, ts, tsl, d, s, tx, u, j, jb, coalesce(n::text, 'NULL'))
			FROM `+name+` ORDER BY b DESC`)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\ngot  %q\nwant %q", name, got, want)
		}
	}
}
