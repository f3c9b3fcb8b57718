package copyenc

import (
	"encoding/binary"
	"math"
	"strconv"
)

// Codec parses the text form of one column type and appends the value in
// a COPY format. Codecs are immutable and safe for concurrent use.
//
// On error both methods return dst unchanged (bytes past len(dst) may have
// been overwritten); a bad value is reported as a *ValueError.
type Codec interface {
	// AppendBinary parses the text form of a non-NULL value (as
	// PostgreSQL's input function would accept it for the common
	// spellings) and appends the complete binary COPY field (int32 length
	// + payload) to dst.
	AppendBinary(dst, text []byte) ([]byte, error)
	// AppendText validates the text form and appends the field escaped for
	// COPY text format.
	AppendText(dst, text []byte) ([]byte, error)
}

// TypeInfo describes a column type as read from pg_attribute and pg_type.
type TypeInfo struct {
	Name     string // format_type() output, e.g. "character varying(20)", "integer[]"
	OID      uint32 // pg_type oid of the column type
	ElemOID  uint32 // element type oid for arrays (pg_type.typelem), else 0
	ElemName string // format_type() of the element type, for arrays
}

// PostgreSQL's built-in type oids (stable across versions).
const (
	oidBool        = 16
	oidName        = 19
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidText        = 25
	oidJSON        = 114
	oidFloat4      = 700
	oidFloat8      = 701
	oidBpchar      = 1042
	oidVarchar     = 1043
	oidDate        = 1082
	oidTimestamp   = 1114
	oidTimestamptz = 1184
	oidNumeric     = 1700
	oidUUID        = 2950
	oidJSONB       = 3802
)

// kind selects a scalar codec's parser.
type kind uint8

const (
	kindBool kind = iota + 1
	kindInt2
	kindInt4
	kindInt8
	kindFloat4
	kindFloat8
	kindNumeric
	kindText // text, varchar, bpchar
	kindName
	kindUUID
	kindJSON
	kindJSONB
	kindTimestamp
	kindTimestamptz
	kindDate
)

type builtin struct {
	kind     kind
	name     string // format_type() without a typmod
	arrayOID uint32
}

// builtinOf returns the built-in type with the given oid.
func builtinOf(oid uint32) (builtin, bool) {
	switch oid {
	case oidBool:
		return builtin{kindBool, "boolean", 1000}, true
	case oidInt2:
		return builtin{kindInt2, "smallint", 1005}, true
	case oidInt4:
		return builtin{kindInt4, "integer", 1007}, true
	case oidInt8:
		return builtin{kindInt8, "bigint", 1016}, true
	case oidFloat4:
		return builtin{kindFloat4, "real", 1021}, true
	case oidFloat8:
		return builtin{kindFloat8, "double precision", 1022}, true
	case oidNumeric:
		return builtin{kindNumeric, "numeric", 1231}, true
	case oidText:
		return builtin{kindText, "text", 1009}, true
	case oidVarchar:
		return builtin{kindText, "character varying", 1015}, true
	case oidBpchar:
		return builtin{kindText, "character", 1014}, true
	case oidName:
		return builtin{kindName, "name", 1003}, true
	case oidUUID:
		return builtin{kindUUID, "uuid", 2951}, true
	case oidJSON:
		return builtin{kindJSON, "json", 199}, true
	case oidJSONB:
		return builtin{kindJSONB, "jsonb", 3807}, true
	case oidTimestamp:
		return builtin{kindTimestamp, "timestamp without time zone", 1115}, true
	case oidTimestamptz:
		return builtin{kindTimestamptz, "timestamp with time zone", 1185}, true
	case oidDate:
		return builtin{kindDate, "date", 1182}, true
	}
	return builtin{}, false
}

// Lookup returns the codec for a column type, or false when the type is
// not one this package encodes in binary (the caller then loads the whole
// table with text COPY and TextPassthrough for this column).
//
// Types are matched by oid, so a domain over a supported type (which has
// its own oid) is not matched and goes through text COPY, where the server
// checks the domain's constraints as usual.
//
// Typmods need no client-side handling: for varchar(n), char(n),
// numeric(p,s) and timestamp(p), PostgreSQL's binary receive functions
// apply the column's typmod exactly as the text input functions do
// (varcharrecv and bpcharrecv call varchar_input / bpchar_input with it,
// numeric_recv calls apply_typmod after reading the digits, timestamp_recv
// calls AdjustTimestampForTypmod, and COPY passes attr->atttypmod to every
// receive function, array elements included via array_recv), so a value
// sent in binary is rounded, padded or rejected exactly as the same text
// would be.
//
// Dates and timestamps are read as in a session whose TimeZone is UTC;
// LookupIn reads them as in another session.
func Lookup(t TypeInfo) (Codec, bool) { return LookupIn(t, UTC()) }

// LookupIn is Lookup for a session described by z: a timestamptz written
// without a zone is in z's session zone, abbreviations and zone names
// are z's, and ambiguous dates follow z's DateStyle order.
func LookupIn(t TypeInfo, z *Zones) (Codec, bool) {
	if b, ok := builtinOf(t.OID); ok {
		return &scalarCodec{kind: b.kind, name: nameOr(t.Name, b.name), zones: z}, true
	}
	if t.ElemOID == 0 {
		return nil, false
	}
	b, ok := builtinOf(t.ElemOID)
	if !ok || b.arrayOID != t.OID {
		return nil, false
	}
	elem := &scalarCodec{kind: b.kind, name: nameOr(t.ElemName, b.name), zones: z}
	return newArrayCodec(nameOr(t.Name, b.name+"[]"), t.ElemOID, elem), true
}

func nameOr(name, def string) string {
	if name != "" {
		return name
	}
	return def
}

// TextPassthrough returns the codec for a column whose type has no binary
// codec: AppendText escapes the text for COPY text format without looking
// at it (the server parses it), and AppendBinary always fails with
// ErrNoBinaryCodec.
func TextPassthrough() Codec { return passthrough{} }

type passthrough struct{}

func (passthrough) AppendBinary(dst, _ []byte) ([]byte, error) { return dst, ErrNoBinaryCodec }

func (passthrough) AppendText(dst, text []byte) ([]byte, error) {
	return appendEscaped(dst, text), nil
}

// scalarCodec is the codec of one built-in base type.
type scalarCodec struct {
	kind  kind
	name  string
	zones *Zones // how dates and timestamps are read
}

// TimestampCodec reports whether c is the codec of timestamp (withTZ
// false) or timestamp with time zone (withTZ true) that reads text in z's
// session: then c.AppendBinary(dst, text) appends what a BinaryWriter's
// Timestamp(micros) appends for the micros z.ParseTimestamp (withTZ) or
// z.ParseLocalTimestamp gives for that text, so a caller that already
// has them need not parse the text again.
func TimestampCodec(c Codec) (z *Zones, withTZ, ok bool) {
	sc, ok := c.(*scalarCodec)
	if !ok || sc.kind != kindTimestamp && sc.kind != kindTimestamptz {
		return nil, false, false
	}
	return sc.zones, sc.kind == kindTimestamptz, true
}

// AppendBinary implements Codec.
func (c *scalarCodec) AppendBinary(dst, text []byte) ([]byte, error) {
	out, reason := c.appendBinary(dst, text)
	if reason != "" {
		return dst, valueError(c.name, text, reason)
	}
	return out, nil
}

// AppendText implements Codec. It writes the value's canonical spelling
// (the one the binary path would store), not the input text, so text and
// binary COPY load the same value.
func (c *scalarCodec) AppendText(dst, text []byte) ([]byte, error) {
	start := len(dst)
	out, reason := c.appendCanonical(dst, text)
	if reason != "" {
		return dst, valueError(c.name, text, reason)
	}
	return escapeInPlace(out, start), nil
}

// appendBinary appends the binary COPY field for text, or returns a
// reason for rejecting it.
func (c *scalarCodec) appendBinary(dst, text []byte) ([]byte, string) {
	switch c.kind {
	case kindBool:
		v, r := parseBool(text)
		if r != "" {
			return dst, r
		}
		b := byte(0)
		if v {
			b = 1
		}
		return append(dst, 0, 0, 0, 1, b), ""
	case kindInt2, kindInt4, kindInt8:
		v, r := parseInt(text, c.kind)
		if r != "" {
			return dst, r
		}
		return appendIntField(dst, v, c.kind), ""
	case kindFloat4, kindFloat8:
		v, r := parseFloat(text, c.kind == kindFloat4)
		if r != "" {
			return dst, r
		}
		// The bits as parsed: a NaN keeps the sign and payload the
		// server's strtod would give it.
		if c.kind == kindFloat4 {
			dst = append(dst, 0, 0, 0, 4)
			return binary.BigEndian.AppendUint32(dst, math.Float32bits(float32(v))), ""
		}
		dst = append(dst, 0, 0, 0, 8)
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(v)), ""
	case kindNumeric:
		n, r := parseNumeric(text)
		if r != "" {
			return dst, r
		}
		return n.appendBinary(dst), ""
	case kindText, kindName, kindJSON, kindJSONB:
		if r := c.checkText(text); r != "" {
			return dst, r
		}
		if c.kind == kindJSONB {
			dst = appendInt32(dst, int32(len(text)+1))
			dst = append(dst, jsonbVersion)
			return append(dst, text...), ""
		}
		dst = appendInt32(dst, int32(len(text)))
		return append(dst, text...), ""
	case kindUUID:
		u, r := parseUUID(text)
		if r != "" {
			return dst, r
		}
		dst = appendInt32(dst, 16)
		return append(dst, u[:]...), ""
	case kindTimestamp, kindTimestamptz:
		v, r := c.zones.parsePGTimestamp(text, c.kind == kindTimestamptz)
		if r != "" {
			return dst, r
		}
		dst = appendInt32(dst, 8)
		return appendInt64(dst, v), ""
	case kindDate:
		v, r := c.zones.parsePGDate(text)
		if r != "" {
			return dst, r
		}
		dst = appendInt32(dst, 4)
		return appendInt32(dst, v), ""
	}
	return dst, "unsupported type"
}

// appendCanonical appends the canonical text spelling of text's value,
// unescaped, or returns a reason for rejecting it.
func (c *scalarCodec) appendCanonical(dst, text []byte) ([]byte, string) {
	switch c.kind {
	case kindBool:
		v, r := parseBool(text)
		if r != "" {
			return dst, r
		}
		if v {
			return append(dst, 't'), ""
		}
		return append(dst, 'f'), ""
	case kindInt2, kindInt4, kindInt8:
		v, r := parseInt(text, c.kind)
		if r != "" {
			return dst, r
		}
		return appendIntText(dst, v), ""
	case kindFloat4, kindFloat8:
		v, r := parseFloat(text, c.kind == kindFloat4)
		if r != "" {
			return dst, r
		}
		if v != v {
			return appendNaNText(dst, v, c.kind == kindFloat4), ""
		}
		if c.kind == kindFloat4 {
			return appendFloatText(dst, v, 32), ""
		}
		return appendFloatText(dst, v, 64), ""
	case kindNumeric:
		n, r := parseNumeric(text)
		if r != "" {
			return dst, r
		}
		return n.appendText(dst), ""
	case kindText, kindName, kindJSON, kindJSONB:
		if r := c.checkText(text); r != "" {
			return dst, r
		}
		return append(dst, text...), ""
	case kindUUID:
		u, r := parseUUID(text)
		if r != "" {
			return dst, r
		}
		return appendUUIDText(dst, u), ""
	case kindTimestamp, kindTimestamptz:
		v, r := c.zones.parsePGTimestamp(text, c.kind == kindTimestamptz)
		if r != "" {
			return dst, r
		}
		return appendPGTimestampText(dst, v), ""
	case kindDate:
		v, r := c.zones.parsePGDate(text)
		if r != "" {
			return dst, r
		}
		return appendPGDateText(dst, v), ""
	}
	return dst, "unsupported type"
}

// checkText validates a value of a text-like type.
func (c *scalarCodec) checkText(text []byte) string {
	if r := checkString(text); r != "" {
		return r
	}
	switch c.kind {
	case kindName:
		if len(text) >= nameDataLen {
			// namein would silently truncate; refuse to store a different value.
			return "longer than 63 bytes"
		}
	case kindJSON:
		return checkJSON(text, false)
	case kindJSONB:
		return checkJSON(text, true)
	}
	return ""
}

// appendNaNText spells a NaN so that strtod gives back its bits: its
// sign, and its payload as "NaN(n)" when it has one.
func appendNaNText(dst []byte, v float64, is32 bool) []byte {
	var neg bool
	var payload uint64
	if is32 {
		b := math.Float32bits(float32(v))
		neg, payload = b>>31 != 0, uint64(b&(1<<22-1))
	} else {
		b := math.Float64bits(v)
		neg, payload = b>>63 != 0, b&(1<<51-1)
	}
	if neg {
		dst = append(dst, '-')
	}
	dst = append(dst, "NaN"...)
	if payload != 0 {
		dst = append(dst, '(')
		dst = strconv.AppendUint(dst, payload, 10)
		dst = append(dst, ')')
	}
	return dst
}
