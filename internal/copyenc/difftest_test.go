package copyenc

// The differential test: a generated corpus of valid and invalid values
// is read by the codecs and by PostgreSQL's own input functions
// (`SELECT typsend(v::type)`), and every difference in acceptance or in
// the stored bytes fails the test, except those the allow-list
// (testdata/differences-allowed.txt) names with a reason.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/pgtest"
)

// diffPerType is how many values each type's first run generates; the
// runs of a date/time type in further session zones generate
// diffPerExtraZone each (a third of them at the zone's DST transitions).
const (
	diffPerType      = 100_000
	diffPerExtraZone = 25_000
)

// diffType is one type of the differential test.
type diffType struct {
	sql   string // SQL type
	oid   uint32 // its oid, or the array's oid
	elem  uint32 // element oid for arrays
	send  string // send function giving the binary COPY payload
	bytes bool   // compare the stored bytes (false: acceptance only)
	gen   func(r *rand.Rand, g *genCtx) string
	zones []string // session zones to run under (nil: UTC only)
}

// genCtx is what the generators know of the server.
type genCtx struct {
	abbrevs []string
	names   []string
	zone    string // the session zone of the run
	loc     *zone
}

// dstZones are the session zones of the date/time runs: no DST, a DST
// zone of each hemisphere, a half-hour zone, and Lord Howe's half-hour DST.
var dstZones = []string{"UTC", "America/New_York", "Asia/Kolkata", "Europe/Paris", "Australia/Lord_Howe"}

func diffTypes() []diffType {
	return []diffType{
		{sql: "timestamp with time zone", oid: oidTimestamptz, send: "timestamptz_send", bytes: true, gen: genTimestamp, zones: dstZones},
		{sql: "timestamp without time zone", oid: oidTimestamp, send: "timestamp_send", bytes: true, gen: genTimestamp, zones: []string{"America/New_York"}},
		{sql: "date", oid: oidDate, send: "date_send", bytes: true, gen: genTimestamp, zones: []string{"Asia/Kolkata"}},
		{sql: "boolean", oid: oidBool, send: "boolsend", bytes: true, gen: genBool},
		{sql: "smallint", oid: oidInt2, send: "int2send", bytes: true, gen: genInt},
		{sql: "integer", oid: oidInt4, send: "int4send", bytes: true, gen: genInt},
		{sql: "bigint", oid: oidInt8, send: "int8send", bytes: true, gen: genInt},
		{sql: "real", oid: oidFloat4, send: "float4send", bytes: true, gen: genFloat},
		{sql: "double precision", oid: oidFloat8, send: "float8send", bytes: true, gen: genFloat},
		{sql: "numeric", oid: oidNumeric, send: "numeric_send", bytes: true, gen: genNumeric},
		{sql: "uuid", oid: oidUUID, send: "uuid_send", bytes: true, gen: genUUID},
		{sql: "json", oid: oidJSON, send: "json_send", bytes: true, gen: genJSON},
		{sql: "jsonb", oid: oidJSONB, send: "jsonb_send", bytes: false, gen: genJSON},
		{sql: "text", oid: oidText, send: "textsend", bytes: true, gen: genText},
		{sql: "name", oid: oidName, send: "namesend", bytes: true, gen: genText},
		{sql: "integer[]", oid: 1007, elem: oidInt4, send: "array_send", bytes: true, gen: genArrayOf(genInt)},
		{sql: "text[]", oid: 1009, elem: oidText, send: "array_send", bytes: true, gen: genArrayOf(genText)},
		{sql: "numeric[]", oid: 1231, elem: oidNumeric, send: "array_send", bytes: true, gen: genArrayOf(genNumeric)},
		{sql: "timestamp with time zone[]", oid: 1185, elem: oidTimestamptz, send: "array_send", bytes: true,
			gen: genArrayOf(genTimestamp), zones: []string{"America/New_York"}},
	}
}

// allowed is one entry of the allow-list.
type allowed struct {
	typ    *regexp.Regexp
	reason string // a substring of the codec's refusal reason
	why    string
}

func readAllowList(t *testing.T) []allowed {
	f, err := os.Open("testdata/differences-allowed.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []allowed
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		parts := strings.Split(line, "\t")
		if len(parts) != 3 || parts[2] == "" {
			t.Fatalf("allow-list line %q: want type-regexp TAB refusal-reason TAB why", line)
		}
		out = append(out, allowed{regexp.MustCompile(parts[0]), parts[1], parts[2]})
	}
	return out
}

// serverZones reads the server's abbreviations (marking the ones whose
// offset varies with the date as dynamic) and zone names.
func serverZones(ctx context.Context, t testing.TB, conn *pgx.Conn) ([]Abbrev, []string) {
	abbrevs, names, err := ReadServerZones(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	return abbrevs, names
}

func TestDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("the differential test runs the server over a large corpus")
	}
	ctx := context.Background()
	abbrevs, names := serverZones(ctx, t, pgtest.Conn(t))
	allow := readAllowList(t)
	var abbrevNames []string
	for _, a := range abbrevs {
		abbrevNames = append(abbrevNames, a.Name)
	}
	for ti, dt := range diffTypes() {
		zonesOf := dt.zones
		if zonesOf == nil {
			zonesOf = []string{"UTC"}
		}
		for zi, zname := range zonesOf {
			n := diffPerType
			if zi > 0 {
				n = diffPerExtraZone
			}
			t.Run(dt.sql+"/"+zname, func(t *testing.T) {
				t.Parallel()
				conn := pgtest.Conn(t)
				if _, err := conn.Exec(ctx, "SET DateStyle = 'ISO, MDY'; SET TimeZone = "+quoteLiteral(zname)); err != nil {
					t.Fatal(err)
				}
				z, err := NewZones(ZonesConfig{Session: zname, Abbrevs: abbrevs, Names: names})
				if err != nil {
					t.Fatal(err)
				}
				info := TypeInfo{OID: dt.oid, Name: dt.sql}
				if dt.elem != 0 {
					info.ElemOID = dt.elem
				}
				codec, ok := LookupIn(info, z)
				if !ok {
					t.Fatalf("no codec for %s", dt.sql)
				}
				r := rand.New(rand.NewPCG(uint64(ti+1), uint64(zi+1)))
				g := &genCtx{abbrevs: abbrevNames, names: names, zone: zname, loc: &z.session}
				start := time.Now()
				vals := make([]string, n)
				for i := range vals {
					vals[i] = g.clean(dt.gen(r, g))
				}
				t.Logf("generated in %v", time.Since(start))
				runDiff(ctx, t, conn, dt, codec, vals, allow)
			})
		}
	}
}

// clean drops what a text[] parameter (and COPY) cannot carry.
func (g *genCtx) clean(s string) string { return strings.ReplaceAll(s, "\x00", "") }

type clientResult struct {
	ok  bool
	out []byte
	err error
}

func runDiff(ctx context.Context, t *testing.T, conn *pgx.Conn, dt diffType, codec Codec, vals []string, allow []allowed) {
	start := time.Now()
	client := make([]clientResult, len(vals))
	buf := make([]byte, 0, 1024)
	arena := make([]byte, 0, 32*len(vals))
	for i, v := range vals {
		out, err := codec.AppendBinary(buf[:0], []byte(v))
		if err != nil {
			client[i] = clientResult{err: err}
			continue
		}
		buf = out[:0]
		p := len(arena)
		arena = append(arena, out[4:]...)
		client[i] = clientResult{ok: true, out: arena[p:len(arena):len(arena)]}
	}
	t.Logf("client parsed in %v", time.Since(start))
	start = time.Now()
	server := serverEval(ctx, t, conn, dt, vals, client)
	t.Logf("server answered in %v", time.Since(start))
	var diffs []string
	accepted, refused, allowedN := 0, 0, 0
	for i, v := range vals {
		c, s := client[i], server[i]
		if s.ok {
			accepted++
		} else {
			refused++
		}
		switch {
		case c.ok != s.ok:
			if !c.ok && isAllowed(allow, dt.sql, c.err.Error()) {
				allowedN++
				continue
			}
			reason := ""
			if c.err != nil {
				reason = c.err.Error()
			}
			diffs = append(diffs, fmt.Sprintf("%q: server ok=%v %x, client ok=%v %s", v, s.ok, s.out, c.ok, reason))
		case c.ok && dt.bytes && !bytes.Equal(c.out, s.out):
			diffs = append(diffs, fmt.Sprintf("%q: server stores %x, client sends %x", v, s.out, c.out))
		}
	}
	t.Logf("%s: %d values, server accepted %d, refused %d; %d refusals by the client on the allow-list; %d differences",
		strings.TrimPrefix(t.Name(), "TestDifferential/"), len(vals), accepted, refused, allowedN, len(diffs))
	for i, d := range diffs {
		if i == 30 {
			t.Errorf("... and %d more", len(diffs)-30)
			break
		}
		t.Error(d)
	}
}

func isAllowed(allow []allowed, typ, reason string) bool {
	for _, a := range allow {
		if a.typ.MatchString(typ) && strings.Contains(reason, a.reason) {
			return true
		}
	}
	return false
}

type serverResult struct {
	ok  bool
	out []byte
}

// serverEval asks the server for send(v::type) of every value: the values
// the client accepted in set-based chunks (a chunk that fails is redone
// value by value), the others value by value in a PL/pgSQL loop with an
// exception block per value. Each chunk answers with one bytea: per value
// an int32 length (-1: refused) and the send output.
func serverEval(ctx context.Context, t *testing.T, conn *pgx.Conn, dt diffType, vals []string, client []clientResult) []serverResult {
	fn := "pg_temp.try_" + strings.NewReplacer(" ", "_", "[]", "_arr").Replace(dt.sql)
	_, err := conn.Exec(ctx, fmt.Sprintf(`CREATE OR REPLACE FUNCTION %s(vals bytea[]) RETURNS bytea
		LANGUAGE plpgsql AS $f$
		DECLARE v bytea; b bytea; res bytea[] := '{}';
		BEGIN
			FOREACH v IN ARRAY vals LOOP
				BEGIN
					b := %s(convert_from(v, 'UTF8')::%s);
					res := res || (int4send(octet_length(b)) || b);
				EXCEPTION WHEN others THEN
					res := res || int4send(-1);
				END;
			END LOOP;
			RETURN (SELECT string_agg(x, ''::bytea ORDER BY i) FROM unnest(res) WITH ORDINALITY u(x, i));
		END $f$`, fn, dt.send, dt.sql))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]serverResult, len(vals))
	var good, bad []int
	for i := range vals {
		if client[i].ok {
			good = append(good, i)
		} else {
			bad = append(bad, i)
		}
	}
	split := func(idx []int, agg []byte) {
		for _, i := range idx {
			if len(agg) < 4 {
				t.Fatalf("%s: short answer", fn)
			}
			n := int32(uint32(agg[0])<<24 | uint32(agg[1])<<16 | uint32(agg[2])<<8 | uint32(agg[3]))
			agg = agg[4:]
			if n < 0 {
				out[i] = serverResult{}
				continue
			}
			out[i] = serverResult{ok: true, out: agg[:n:n]}
			agg = agg[n:]
		}
		if len(agg) != 0 {
			t.Fatalf("%s: %d bytes left over", fn, len(agg))
		}
	}
	texts := func(idx []int) [][]byte {
		b := make([][]byte, len(idx))
		for k, i := range idx {
			b[k] = []byte(vals[i])
		}
		return b
	}
	const chunk = 4000
	oneByOne := func(idx []int) {
		var agg []byte
		if err := conn.QueryRow(ctx, "SELECT "+fn+"($1)", texts(idx)).Scan(&agg); err != nil {
			t.Fatal(err)
		}
		split(idx, agg)
	}
	setSQL := fmt.Sprintf(`SELECT string_agg(int4send(octet_length(x)) || x, ''::bytea ORDER BY i)
		FROM (SELECT i, %s(convert_from(v, 'UTF8')::%s) AS x FROM unnest($1::bytea[]) WITH ORDINALITY u(v, i)) s`, dt.send, dt.sql)
	for lo := 0; lo < len(good); lo += chunk {
		idx := good[lo:min(lo+chunk, len(good))]
		var agg []byte
		if err := conn.QueryRow(ctx, setSQL, texts(idx)).Scan(&agg); err != nil {
			oneByOne(idx)
			continue
		}
		split(idx, agg)
	}
	for lo := 0; lo < len(bad); lo += chunk {
		oneByOne(bad[lo:min(lo+chunk, len(bad))])
	}
	return out
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
