package bench

import (
	"testing"

	"github.com/pgts/pgts/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
