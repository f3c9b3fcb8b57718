package records

import (
	"errors"
	"fmt"
)

// RecordError is the refusal of one record. Next returns it for the
// record and goes on with the next record on the following call, so a
// loader can count and report it and carry on.
type RecordError struct {
	Line    int64  // 1-based line where the record starts
	EndLine int64  // line where it ends (≥ Line)
	Column  int    // 1-based field where the fault is, 0 when it is the whole record
	Offset  int64  // byte offset of the record's start in the (decompressed) input
	End     int64  // offset just past its last byte, line end excluded; -1 when unknown
	Reason  string // what is wrong, lower case, e.g. "unterminated quoted field"
}

func (e *RecordError) Error() string {
	s := fmt.Sprintf("line %d", e.Line)
	if e.EndLine > e.Line {
		s = fmt.Sprintf("lines %d-%d", e.Line, e.EndLine)
	}
	if e.Column > 0 {
		s += fmt.Sprintf(", field %d", e.Column)
	}
	return s + ": " + e.Reason
}

// IsRecordError reports whether err refuses one record only (a
// *RecordError), so that reading may go on; any other error from Next
// but io.EOF ends the input.
func IsRecordError(err error) bool {
	var re *RecordError
	return errors.As(err, &re)
}

// The reasons of record errors.
const (
	reasonUnterminated   = "unterminated quoted field"
	reasonTooLong        = "record longer than %d bytes"
	reasonTooManyFields  = "more than %d fields"
	reasonCSVCarriage    = `unquoted carriage return found in data (quote the field to keep it)`
	reasonCSVNewline     = `unquoted newline found in data (quote the field to keep it)`
	reasonTextCarriage   = `literal carriage return found in data (write it as \r)`
	reasonTextNewline    = `literal newline found in data (write it as \n)`
	reasonMarkerCorrupt  = `end-of-copy marker corrupt: \. must be followed by a line end`
	reasonTrailingEscape = "backslash at the end of the input"
	reasonStrayQuote     = "quote inside an unquoted field"
	reasonAfterQuote     = "data after a closing quote"
)
