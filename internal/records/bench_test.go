package records

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const benchRows = 100_000

// benchData returns benchRows rows of one of the benchmark shapes.
func benchData(shape string) []byte {
	var b bytes.Buffer
	x := uint64(42)
	for i := range benchRows {
		x = x*6364136223846793005 + 1442695040888963407
		v := x >> 40
		switch shape {
		case "numeric": // 10 numeric columns
			fmt.Fprintf(&b, "%d,%d,%d.%02d,-%d.%d,%d,%d,0.%d,%d,%d,%d\n",
				1710324000+i, v%1000, v%100, v%97, v%50, v%9, v, v%7, v%1000003, v%3, v%65536, i)
		case "quoted": // time, device, quoted text with delimiters, doubled quotes and line breaks
			fmt.Fprintf(&b, "\"2024-03-13 10:%02d:%02d+00\",\"dev-%d\",\"%d.%d\",\"a, \"\"quoted\"\" note\nover two lines\",\"\"\r\n",
				v%60, i%60, v%1000, v%100, v%10)
		case "text": // COPY text with escapes and NULLs
			fmt.Fprintf(&b, "2024-03-13 10:%02d:%02d+00\tdev-%d\t%d.%d\t\\N\tline one\\nline\\ttwo \\\\ %d\n",
				v%60, i%60, v%1000, v%100, v%10, v)
		}
	}
	return b.Bytes()
}

func benchReader(b *testing.B, data []byte, opts Options, open func() io.Reader) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	records := 0
	for b.Loop() {
		r, err := NewReader(open(), opts)
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			records++
		}
	}
	if records != b.N*benchRows {
		b.Fatalf("%d records, want %d", records, b.N*benchRows)
	}
	b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkCSVNumeric(b *testing.B) {
	data := benchData("numeric")
	benchReader(b, data, DefaultOptions(CSV), func() io.Reader { return bytes.NewReader(data) })
}

func BenchmarkCSVQuoted(b *testing.B) {
	data := benchData("quoted")
	benchReader(b, data, DefaultOptions(CSV), func() io.Reader { return bytes.NewReader(data) })
}

func BenchmarkText(b *testing.B) {
	data := benchData("text")
	benchReader(b, data, DefaultOptions(Text), func() io.Reader { return bytes.NewReader(data) })
}

func BenchmarkTSV(b *testing.B) {
	data := []byte(strings.ReplaceAll(string(benchData("numeric")), ",", "\t"))
	benchReader(b, data, DefaultOptions(TSV), func() io.Reader { return bytes.NewReader(data) })
}

// BenchmarkCSVNumericZstd reads the numeric CSV through Open from a
// zstd-compressed file; MB/s count decompressed bytes.
func BenchmarkCSVNumericZstd(b *testing.B) {
	data := benchData("numeric")
	path := filepath.Join(b.TempDir(), "in.csv.zst")
	if err := os.WriteFile(path, zstded(b, string(data)), 0o600); err != nil {
		b.Fatal(err)
	}
	var rc io.ReadCloser
	defer func() {
		if rc != nil {
			rc.Close()
		}
	}()
	benchReader(b, data, DefaultOptions(CSV), func() io.Reader {
		if rc != nil {
			rc.Close()
		}
		var err error
		if rc, _, err = Open(path); err != nil {
			b.Fatal(err)
		}
		return rc
	})
}

// BenchmarkEncodingCSV is the standard library's reader on the numeric
// CSV, for comparison (it has no NULLs, line ends of records or limits).
func BenchmarkEncodingCSV(b *testing.B) {
	data := benchData("numeric")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	records := 0
	for b.Loop() {
		r := csv.NewReader(bytes.NewReader(data))
		r.ReuseRecord = true
		for {
			_, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			records++
		}
	}
	b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
}

// benchSplit measures the Splitter alone: the part of parallel parsing
// that stays on one goroutine, so it bounds the speed-up. MB/s count the
// input.
func benchSplit(b *testing.B, data []byte, opts Options) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(data), opts)
		if err != nil {
			b.Fatal(err)
		}
		sp, err := r.Split(512 << 10)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			c, err := sp.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n += c.Len()
			sp.Recycle(c)
		}
		if n != len(data) {
			b.Fatalf("chunks hold %d bytes, want %d", n, len(data))
		}
	}
}

func BenchmarkSplitCSVNumeric(b *testing.B) {
	benchSplit(b, benchData("numeric"), DefaultOptions(CSV))
}

// BenchmarkSplitCSVQuoted: every record has quotes, so the splitter
// follows them byte by byte.
func BenchmarkSplitCSVQuoted(b *testing.B) {
	benchSplit(b, benchData("quoted"), DefaultOptions(CSV))
}

func BenchmarkSplitText(b *testing.B) {
	benchSplit(b, benchData("text"), DefaultOptions(Text))
}
