package bench

import (
	"os"
	"testing"

	"github.com/pgts/pgts/internal/pgtest"
)

func TestMain(m *testing.M) {
	if os.Getenv(vmParentEnv) != "" {
		os.Exit(vmParent())
	}
	if os.Getenv(fakeVMEnv) != "" {
		os.Exit(fakeVM())
	}
	pgtest.Main(m)
}
