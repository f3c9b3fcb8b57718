// Package graphite parses the two protocols carbon (Graphite's receiver)
// accepts: plaintext lines and pickle frames. It is the pure-parser layer
// of the daemon's Graphite receivers: no I/O, bounded by ingest.Limits,
// and it never retains its input.
//
// # Glossary
//
//   - path: a metric name, dot-separated ("servers.web1.cpu"), optionally
//     followed by Graphite 1.1 tags: "cpu;host=web1;dc=eu". Tags become
//     Point.Tags, sorted by key; the part before the first ";" is the
//     Point.Name.
//   - plaintext line: "path value [timestamp]" and a newline, fields
//     separated by whitespace. Parser.AppendLine parses one line.
//   - timestamp: seconds since the epoch. An integer, or a float
//     truncated toward zero as carbon's int() does (1700000000.9 is
//     1700000000). -1, or an absent timestamp, means now: the Parser's
//     injected clock, truncated to whole seconds. Points carry micros.
//   - value: a float64 in Go's ParseFloat syntax. NaN (which carbon
//     drops silently), ±Inf and literals beyond the float64 range (1e400)
//     are refused with ingest.ErrValue: they are never stored.
//   - pickle frame: a 4-byte big-endian length (FrameLength) and a
//     Python pickle of a list of (path, (timestamp, value)) tuples, as
//     carbon-relay, carbon-c-relay and the StatsD Graphite backend send.
//     PickleDecoder.Decode decodes one.
//
// # Pickle safety
//
// Loading a pickle in Python runs code; decoding one here does not.
// PickleDecoder runs a small stack machine that only knows the opcodes
// building lists, tuples, strings and integers and floats, plus the
// stack, mark and memo opcodes. Every other opcode (GLOBAL, REDUCE,
// BUILD, INST, OBJ, NEWOBJ, persistent ids, extensions, dicts, sets,
// None, booleans, buffers) refuses the frame with ingest.ErrUnsupported
// as soon as it is read, and so are bytes after STOP (which Python
// would ignore: no carbon client sends them). Every length is checked against the bytes left
// in the frame before use, memo keys against the frame length, and
// sequences against MaxPoints, so the machine's memory is a small
// multiple of the frame, whatever the frame holds. Shared references
// (DUP, memo GET) are references, never copies, so no pickle can make it
// build an exponentially large value.
//
// github.com/kisielk/og-rek (v1.3.0) was considered. It never runs
// Python code either: GLOBAL becomes a Class value and REDUCE a Call
// value, or a Go emulation of _codecs.encode and bytearray. But its
// DecoderConfig has no option to refuse opcodes, so a hostile frame
// would be fully built before any check could reject it, and it
// allocates an interface value per object. The tests use og-rek as an
// independent decoder to cross-check this one.
package graphite
