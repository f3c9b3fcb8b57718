package pg

import (
	"strings"
	"testing"
)

// TestSplitQualifiedEmpty: an empty name says it is empty (it used to
// say that "" ends with a dot).
func TestSplitQualifiedEmpty(t *testing.T) {
	if _, _, err := SplitQualified(""); err == nil || err.Error() != "table name is empty" {
		t.Errorf("SplitQualified(\"\") = %v, want \"table name is empty\"", err)
	}
	if _, err := ColumnName(""); err == nil || !strings.Contains(err.Error(), "column name is empty") {
		t.Errorf("ColumnName(\"\") = %v", err)
	}
}
