package records

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func gzipped(t *testing.T, members ...string) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, m := range members {
		w := gzip.NewWriter(&out)
		if _, err := io.WriteString(w, m); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes()
}

func zstded(t testing.TB, frames ...string) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, f := range frames {
		w, err := zstd.NewWriter(&out)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, f); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes()
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// csvRows is a CSV input of n records that compresses no better than
// real data, so that it takes several reads even compressed.
func csvRows(n int) string {
	var b strings.Builder
	x := uint64(1)
	for range n {
		x = x*6364136223846793005 + 1442695040888963407
		fmt.Fprintf(&b, "2024-03-13 10:%02d:00+00,%d,\"q\"\"%x\"\n", x>>58, x>>40, x>>20)
	}
	return b.String()
}

func TestOpen(t *testing.T) {
	big := csvRows(20000)
	skippable := append([]byte{0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 'p', 'g', 't'}, zstded(t, "a,b\n")...)
	for _, c := range []struct {
		name string
		data []byte
		comp Compression
		want string
	}{
		{"plain", []byte(big), Uncompressed, big},
		{"empty", nil, Uncompressed, ""},
		{"short", []byte("a\n"), Uncompressed, "a\n"},
		{"gzip", gzipped(t, big), Gzip, big},
		{"gzip members", gzipped(t, "a,b\n", "", "c,d\n"), Gzip, "a,b\nc,d\n"},
		{"zstd", zstded(t, big), Zstd, big},
		{"zstd frames", zstded(t, "a,b\n", "c,d\n"), Zstd, "a,b\nc,d\n"},
		{"zstd skippable frame first", skippable, Zstd, "a,b\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, "input.csv", c.data) // the name says nothing
			rc, info, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if info.Name != path || info.Size != int64(len(c.data)) || info.Compression != c.comp {
				t.Fatalf("info = %+v, want size %d, %v", info, len(c.data), c.comp)
			}
			got, err := io.ReadAll(rc)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Fatalf("read %d bytes, want %d", len(got), len(c.want))
			}
			if p := info.Progress(); p != int64(len(c.data)) {
				t.Fatalf("Progress() = %d after reading all of %d bytes", p, len(c.data))
			}
			if err := rc.Close(); err != nil {
				t.Fatal(err)
			}
			if err := rc.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
		})
	}
}

// TestOpenProgress checks that progress on compressed input follows the
// compressed bytes while the records are read.
func TestOpenProgress(t *testing.T) {
	big := csvRows(100000)
	for _, c := range []struct {
		name string
		data []byte
	}{{"gzip", gzipped(t, big)}, {"zstd", zstded(t, big)}} {
		t.Run(c.name, func(t *testing.T) {
			rc, info, err := Open(writeFile(t, "in", c.data))
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			r, err := NewReader(rc, csvOpts(nil))
			if err != nil {
				t.Fatal(err)
			}
			var n int
			var mid int64
			for {
				_, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if n++; n == 50000 {
					mid = info.Progress()
				}
			}
			if n != 100000 {
				t.Fatalf("%d records, want 100000", n)
			}
			if mid <= 0 || mid >= info.Size || info.Progress() != info.Size {
				t.Fatalf("progress %d half-way and %d at the end of %d bytes", mid, info.Progress(), info.Size)
			}
		})
	}
}

func TestOpenStdin(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	data := gzipped(t, "a,b\n")
	go func() {
		pw.Write(data)
		pw.Close()
	}()
	stdin := os.Stdin
	os.Stdin = pr
	defer func() { os.Stdin = stdin; pr.Close() }()
	rc, info, err := Open("-")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	if err != nil || string(got) != "a,b\n" {
		t.Fatalf("read %q, %v", got, err)
	}
	rc.Close()
	if info.Name != "stdin" || info.Size != -1 || info.Compression != Gzip || info.Progress() != int64(len(data)) {
		t.Fatalf("info = %+v, progress %d", info, info.Progress())
	}
	// Close leaves stdin open.
	if _, err := pr.Stat(); err != nil {
		t.Fatalf("stdin closed: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	// A zstd frame asking for a 1 GiB window.
	bigWindow := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 20 << 3, 0x01, 0x00, 0x00}
	for _, c := range []struct {
		name string
		data []byte
		want string // in the error of Open, or of reading
	}{
		{"xz", []byte{0xfd, '7', 'z', 'X', 'Z', 0, 0, 4}, "xz-compressed input is not supported"},
		{"lz4", []byte{0x04, 0x22, 0x4d, 0x18, 0x64}, "lz4-compressed input is not supported"},
		{"bzip2", []byte("BZh91AY&SY\x00"), "bzip2-compressed input is not supported"},
		{"bad gzip header", []byte{0x1f, 0x8b, 0x09}, "gzip header"},
		{"truncated gzip", gzipped(t, csvRows(100))[:50], "unexpected EOF"},
		{"corrupt gzip", corrupt(gzipped(t, csvRows(1000))), "gzip: invalid checksum|flate: corrupt input"},
		{"truncated zstd", zstded(t, csvRows(100))[:30], "unexpected EOF"},
		{"zstd window", bigWindow, "zstd window larger than 128 MiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rc, _, err := Open(writeFile(t, "in", c.data))
			if err == nil {
				_, err = io.ReadAll(rc)
				rc.Close()
			}
			if err == nil || !containsAny(err.Error(), strings.Split(c.want, "|")) {
				t.Fatalf("error %v, want one with %q", err, c.want)
			}
		})
	}
	if _, _, err := Open(filepath.Join(t.TempDir(), "missing.csv")); !os.IsNotExist(err) {
		t.Fatalf("Open of a missing file: %v", err)
	}
	if _, _, err := Open(t.TempDir()); err == nil {
		t.Fatal("Open of a directory succeeded")
	}
	// "BZh" starting a CSV file is data.
	rc, info, err := Open(writeFile(t, "in", []byte("BZh,x\n")))
	if err != nil || info.Compression != Uncompressed {
		t.Fatalf("Open = %v, %v", info.Compression, err)
	}
	rc.Close()
}

// corrupt flips the bits of a byte in the middle of b.
func corrupt(b []byte) []byte {
	b[len(b)/2] ^= 0xff
	return b
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
