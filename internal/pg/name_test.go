package pg

import (
	"strings"
	"testing"
)

// TestColumnNameErrorsSayColumn: a bad --time-column or --hash-column is
// a column name, not a table name, and has no schema.
func TestColumnNameErrorsSayColumn(t *testing.T) {
	if got, err := ColumnName(`"My Time"`); err != nil || got != "My Time" {
		t.Fatalf(`ColumnName("My Time") = %q, %v`, got, err)
	}
	if got, err := ColumnName(`Time`); err != nil || got != "time" {
		t.Fatalf(`ColumnName(Time) = %q, %v`, got, err)
	}
	for _, bad := range []string{`"unterminated`, `a.b`, ``, `x"y`} {
		_, err := ColumnName(bad)
		if err == nil || !strings.Contains(err.Error(), "column name") || strings.Contains(err.Error(), "table") {
			t.Errorf("ColumnName(%q) = %v, want an error about a column name", bad, err)
		}
	}
}
