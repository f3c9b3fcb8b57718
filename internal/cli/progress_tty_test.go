package cli

import (
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSizelessPtyGetsProgressLines: on a pseudo-terminal without a size
// (as some CI runners and `script` give), the progress bar drew nothing
// at all; such a terminal gets the periodic progress lines, one with a
// size the bar.
func TestSizelessPtyGetsProgressLines(t *testing.T) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pts.Close()
	fd := int(pts.Fd())
	if err := unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{}); err != nil {
		t.Fatal(err)
	}
	if barTerminal(fd) {
		t.Error("a pseudo-terminal without a size gets the bar, which draws nothing there")
	}
	if err := unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 80}); err != nil {
		t.Fatal(err)
	}
	if !barTerminal(fd) {
		t.Error("an 80x24 terminal does not get the bar")
	}
	if barTerminal(-1) {
		t.Error("an invalid descriptor is a terminal")
	}
}
