package sqlfn_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/pgts/pgts/internal/sqlfn"
)

// TestVersionCoversSQL: the helpers' SQL is the one recorded for
// sqlfn.Version. A change to the SQL without a new Version would never
// reach the databases that have the helpers already (catalog.Migrate
// reinstalls only when the installed version is lower): bump Version and
// record the new digest here.
func TestVersionCoversSQL(t *testing.T) {
	digests := map[int]string{
		1: "133bcb6d6506c037a067175f4db06ab6df3cd4ac4ac9ad01dacee229c16cba46",
		2: "71ee8c2ed28a67bda422f5d00d2f586144c8cdcf357590ff286e8f941493a6af",
	}
	sum := sha256.Sum256([]byte(sqlfn.Install()))
	got := hex.EncodeToString(sum[:])
	want, ok := digests[sqlfn.Version]
	if !ok || got != want {
		t.Fatalf("the helpers' SQL (sha256 %s) is not the one recorded for version %d (%q): if the SQL changed, bump sqlfn.Version and record the digest for it", got, sqlfn.Version, want)
	}
}
