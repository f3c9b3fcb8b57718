//go:build race

package render

// raceEnabled: the race detector makes sync.Pool drop what is put back
// at random, so allocation counts that rely on a pool do not hold.
const raceEnabled = true
