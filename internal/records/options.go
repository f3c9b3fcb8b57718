package records

import (
	"errors"
	"fmt"
	"strings"
)

// Format is an input format.
type Format int

// The formats. The zero value is CSV.
const (
	CSV  Format = iota // PostgreSQL's CSV (RFC 4180 and more, see the package doc)
	TSV                // tab-separated values: no quoting, no escapes
	Text               // PostgreSQL's COPY text format: backslash escapes
)

func (f Format) String() string {
	switch f {
	case CSV:
		return "csv"
	case TSV:
		return "tsv"
	case Text:
		return "text"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// Defaults and bounds of Options.
const (
	// DefaultMaxRecordBytes is what COPY accepts: PostgreSQL refuses a
	// line, and a field, longer than 1 GiB. Memory is taken only by the
	// records that long, a few times their size (see the package doc).
	DefaultMaxRecordBytes = MaxMaxRecordBytes
	DefaultMaxFields      = 1600 // PostgreSQL's limit on the columns of a table
	// MaxMaxRecordBytes bounds MaxRecordBytes: PostgreSQL refuses a field
	// longer than 1 GiB anyway.
	MaxMaxRecordBytes = 1 << 30
	// MaxMaxFields bounds MaxFields.
	MaxMaxFields = 1 << 16
)

// Options configure a Reader. Start from DefaultOptions: a zero Delimiter,
// Quote, Escape, MaxRecordBytes or MaxFields takes its default, but Null is
// used as it is (the empty string is a valid spelling of NULL in every
// format).
type Options struct {
	Format Format
	// Delimiter separates fields: ',' by default for CSV, '\t' for TSV
	// and Text. It cannot be CR or LF; in Text it cannot be a backslash, a
	// period, a lower-case ASCII letter or a digit (PostgreSQL's rule: such
	// bytes mean something after a backslash).
	Delimiter byte
	// Quote (CSV only, '"' by default) opens and closes quoted sections.
	Quote byte
	// Escape (CSV only, by default the same as Quote) escapes a quote or
	// itself inside quotes.
	Escape byte
	// Null is the raw spelling of NULL: "" in CSV (an unquoted empty
	// field), `\N` in Text and TSV. It cannot contain CR, LF, the
	// delimiter or (CSV) the quote.
	Null string
	// Header: the first record names the columns. Header returns it; Next
	// does not.
	Header bool
	// Strict (CSV only) makes a quote that is not the first byte of a
	// field, and data after a closing quote, record errors (RFC 4180)
	// instead of PostgreSQL's reading of them. Record boundaries are the
	// same either way.
	Strict bool
	// MaxRecordBytes bounds a record's raw size in bytes, line end
	// excluded (default and at most MaxMaxRecordBytes, 1 GiB). A longer
	// record is a record error. It bounds the memory a record takes.
	MaxRecordBytes int
	// MaxRecordName, when set, is how the user sets MaxRecordBytes (a
	// flag, say): the reason of a record over it names it.
	MaxRecordName string
	// MaxFields bounds the fields of a record (default 1600, at most
	// MaxMaxFields). A record with more is a record error.
	MaxFields int
}

// DefaultOptions returns the defaults of PostgreSQL's COPY for format f.
func DefaultOptions(f Format) Options {
	o := Options{Format: f, MaxRecordBytes: DefaultMaxRecordBytes, MaxFields: DefaultMaxFields}
	switch f {
	case CSV:
		o.Delimiter, o.Quote, o.Escape = ',', '"', '"'
	default:
		o.Delimiter, o.Null = '\t', `\N`
	}
	return o
}

// withDefaults fills the zero fields that have a default.
func (o Options) withDefaults() Options {
	if o.Delimiter == 0 {
		o.Delimiter = '\t'
		if o.Format == CSV {
			o.Delimiter = ','
		}
	}
	if o.Format == CSV {
		if o.Quote == 0 {
			o.Quote = '"'
		}
		if o.Escape == 0 {
			o.Escape = o.Quote
		}
	}
	if o.MaxRecordBytes == 0 {
		o.MaxRecordBytes = DefaultMaxRecordBytes
	}
	if o.MaxFields == 0 {
		o.MaxFields = DefaultMaxFields
	}
	return o
}

// Validate reports the first option that is invalid, after the defaults
// of the zero fields are applied.
func (o Options) Validate() error {
	o = o.withDefaults()
	switch o.Format {
	case CSV, TSV, Text:
	default:
		return fmt.Errorf("unknown format %d", int(o.Format))
	}
	if isLineEnd(o.Delimiter) {
		return fmt.Errorf("delimiter %q: cannot be a newline or carriage return", o.Delimiter)
	}
	if o.Format == Text && strings.IndexByte(`\.abcdefghijklmnopqrstuvwxyz0123456789`, o.Delimiter) >= 0 {
		return fmt.Errorf("delimiter %q: cannot be a backslash, a period, a lower-case letter or a digit in text format", o.Delimiter)
	}
	if strings.ContainsAny(o.Null, "\r\n") {
		return fmt.Errorf("null %q: cannot contain a newline or carriage return", o.Null)
	}
	if strings.IndexByte(o.Null, o.Delimiter) >= 0 {
		return fmt.Errorf("null %q: cannot contain the delimiter %q", o.Null, o.Delimiter)
	}
	if o.Format == CSV {
		if isLineEnd(o.Quote) || isLineEnd(o.Escape) {
			return fmt.Errorf("quote %q and escape %q cannot be a newline or carriage return", o.Quote, o.Escape)
		}
		if o.Quote == o.Delimiter {
			return fmt.Errorf("delimiter and quote must differ (both %q)", o.Quote)
		}
		if strings.IndexByte(o.Null, o.Quote) >= 0 {
			return fmt.Errorf("null %q: cannot contain the quote %q", o.Null, o.Quote)
		}
	} else {
		if o.Quote != 0 || o.Escape != 0 {
			return errors.New("quote and escape are for CSV only")
		}
		if o.Strict {
			return errors.New("strict is for CSV only")
		}
	}
	if o.MaxRecordBytes < 0 || o.MaxRecordBytes > MaxMaxRecordBytes {
		return fmt.Errorf("max record bytes %d: must be in [1, %d]", o.MaxRecordBytes, MaxMaxRecordBytes)
	}
	if o.MaxFields < 0 || o.MaxFields > MaxMaxFields {
		return fmt.Errorf("max fields %d: must be in [1, %d]", o.MaxFields, MaxMaxFields)
	}
	return nil
}

func isLineEnd(c byte) bool { return c == '\n' || c == '\r' }
