package ingest

import (
	"errors"
	"fmt"
	"strconv"
)

// Kinds of refusal. Every error a parser returns wraps exactly one of
// them; test with errors.Is.
var (
	// ErrSyntax: the input is not well-formed for its protocol (a line
	// with too few fields, a truncated pickle, invalid protobuf).
	ErrSyntax = errors.New("malformed input")
	// ErrName: a metric name is empty, too long or holds a byte that is
	// not allowed.
	ErrName = errors.New("invalid name")
	// ErrTag: a tag is malformed, too long, duplicated, or there are too
	// many.
	ErrTag = errors.New("invalid tag")
	// ErrValue: a value is not a number, not finite, or out of range.
	ErrValue = errors.New("invalid value")
	// ErrTimestamp: a timestamp is not a number or is outside [MinTime,
	// MaxTime).
	ErrTimestamp = errors.New("invalid timestamp")
	// ErrLimit: a message or one of its parts exceeds a Limits bound.
	ErrLimit = errors.New("limit exceeded")
	// ErrUnsupported: well-formed input that this parser refuses by
	// design (a pickle opcode building objects other than lists, tuples,
	// strings and numbers).
	ErrUnsupported = errors.New("unsupported input")
)

// kinds lists the kinds of refusal, for Kind.
var kinds = [...]error{ErrSyntax, ErrName, ErrTag, ErrValue, ErrTimestamp, ErrLimit, ErrUnsupported}

// Kind returns the kind of refusal err wraps (ErrSyntax, ErrName, ...),
// or nil when it wraps none, so that a receiver can count refusals by
// kind: its Error text ("malformed input", "invalid name", ...) makes a
// short label.
func Kind(err error) error {
	for _, k := range kinds {
		if errors.Is(err, k) {
			return k
		}
	}
	return nil
}

// LineError is a refusal of one line of a multi-line message.
type LineError struct {
	// Line is the 1-based line number within the message, counting every
	// newline (blank and comment lines too); 0 when it is unknown.
	Line int
	Err  error
}

func (e *LineError) Error() string {
	if e.Line <= 0 {
		return "line ?: " + e.Err.Error()
	}
	return "line " + strconv.Itoa(e.Line) + ": " + e.Err.Error()
}

func (e *LineError) Unwrap() error { return e.Err }

// EntryError is a refusal of one entry of a binary message: an element
// of a Graphite pickle list, a time series of a remote-write request.
type EntryError struct {
	// Index is the 0-based position of the entry in its message.
	Index int
	Err   error
}

func (e *EntryError) Error() string {
	return "entry " + strconv.Itoa(e.Index) + ": " + e.Err.Error()
}

func (e *EntryError) Unwrap() error { return e.Err }

// Stats tells what a parser did with one multi-entry message.
type Stats struct {
	// Points is the number of points appended to dst.
	Points int
	// Rejected counts the entries refused; each parser documents what an
	// entry is. FirstErr is the first refusal.
	Rejected int
	// Ignored counts values left out by design, not errors: Influx
	// string fields, Prometheus NaN samples (staleness markers) and
	// native histograms.
	Ignored int
	// FirstErr is the first refusal, a *LineError or *EntryError; nil
	// when Rejected is 0.
	FirstErr error
}

// Reject counts one refused entry and keeps err if it is the first.
func (s *Stats) Reject(err error) {
	s.Rejected++
	if s.FirstErr == nil {
		s.FirstErr = err
	}
}

// clipBytes is how much of a bad input an error message quotes.
const clipBytes = 64

// Clip returns s quoted with %q, cut to its first 64 bytes with "..."
// after the closing quote when longer, for error messages that quote bad
// input of any size.
func Clip[T ~string | ~[]byte](s T) string {
	if len(s) <= clipBytes {
		return strconv.Quote(string(s))
	}
	return strconv.Quote(string(s[:clipBytes])) + "..."
}

// LimitError reports that what, of n bytes, exceeds the limit of max
// bytes; it wraps ErrLimit.
func LimitError(what string, n, max int) error {
	return fmt.Errorf("%s of %d bytes exceeds the limit of %d: %w", what, n, max, ErrLimit)
}
