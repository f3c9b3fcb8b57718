package records

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
)

// Compression is how an input is compressed.
type Compression int

// The compressions Open undoes.
const (
	Uncompressed Compression = iota
	Gzip
	Zstd
)

func (c Compression) String() string {
	switch c {
	case Uncompressed:
		return "none"
	case Gzip:
		return "gzip"
	case Zstd:
		return "zstd"
	}
	return fmt.Sprintf("Compression(%d)", int(c))
}

// MaxZstdWindow bounds the window of zstd input, hence the decoder's
// memory: 128 MiB covers every compression level (--ultra -22 uses
// 128 MiB) and --long's default; a frame asking for more is refused.
const MaxZstdWindow = 128 << 20

// decodeBufSize is the read buffer under a decompressor.
const decodeBufSize = 64 << 10

// Source describes an opened input. Its methods are safe for concurrent
// use, so a progress display may call Progress while a Reader reads.
type Source struct {
	Name        string // the path, or "stdin" for "-"
	Size        int64  // bytes of the file as stored (compressed, if it is); -1 when unknown (a pipe)
	Compression Compression
	read        *atomic.Int64
	file        *os.File // a regular file, for ReaderAt
}

// ReaderAt returns the input as stored when it can be read again at an
// offset, with the offsets of the records read from it: a regular,
// uncompressed file. It is nil otherwise (stdin, a pipe, a compressed
// file). It is valid until the input is closed.
func (s Source) ReaderAt() io.ReaderAt {
	if s.file == nil || s.Compression != Uncompressed {
		return nil
	}
	return s.file
}

// Progress returns the bytes of the file as stored (compressed, if it is)
// consumed so far: with Size, the fraction of the input read, whatever the
// compression.
func (s Source) Progress() int64 {
	if s.read == nil {
		return 0
	}
	return s.read.Load()
}

// Open opens the input at path ("-" is stdin) and undoes its compression,
// detected by magic bytes: gzip (1f 8b; concatenated members are read in
// turn) and zstd (28 b5 2f fd, or a skippable frame first). xz, bzip2 and
// lz4 input is refused with an error that says so. Closing rc closes the
// file (but not stdin) and releases the decompressor.
func Open(path string) (rc io.ReadCloser, info Source, err error) {
	if path == "-" {
		return OpenStream(os.Stdin, "stdin")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, Source{}, err
	}
	size := int64(-1)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	rc, info, err = open(f, path, size, func() { f.Close() })
	if err == nil && size >= 0 {
		info.file = f
	}
	return rc, info, err
}

// OpenStream is Open for an input that is already open (stdin, a pipe):
// it undoes its compression; closing rc does not close r.
func OpenStream(r io.Reader, name string) (rc io.ReadCloser, info Source, err error) {
	return open(r, name, -1, func() {})
}

func open(f io.Reader, name string, size int64, closeFile func()) (rc io.ReadCloser, info Source, err error) {
	info = Source{Name: name, Size: size, read: new(atomic.Int64)}
	raw := &countingReader{r: f, n: info.read}
	var head [10]byte
	n, err := io.ReadFull(raw, head[:])
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		closeFile()
		return nil, Source{}, fmt.Errorf("reading %s: %w", name, err)
	}
	in := io.MultiReader(bytes.NewReader(head[:n]), raw)
	info.Compression, err = sniff(head[:n])
	if err != nil {
		closeFile()
		return nil, Source{}, fmt.Errorf("reading %s: %w", name, err)
	}
	rc = &input{Reader: in, closeFile: closeFile}
	switch info.Compression {
	case Gzip:
		zr, err := gzip.NewReader(bufio.NewReaderSize(in, decodeBufSize))
		if err != nil {
			closeFile()
			return nil, Source{}, fmt.Errorf("reading %s: gzip header: %w", name, err)
		}
		rc = &input{Reader: zr, closeDecoder: zr.Close, closeFile: closeFile}
	case Zstd:
		zr, err := zstd.NewReader(bufio.NewReaderSize(in, decodeBufSize),
			zstd.WithDecoderMaxWindow(MaxZstdWindow), zstd.WithDecoderMaxMemory(MaxZstdWindow))
		if err != nil {
			closeFile()
			return nil, Source{}, fmt.Errorf("reading %s: zstd: %w", name, err)
		}
		rc = &input{Reader: &zstdReader{zr}, closeDecoder: func() error { zr.Close(); return nil }, closeFile: closeFile}
	}
	return rc, info, nil
}

// sniff tells the compression from the first bytes of the input.
func sniff(b []byte) (Compression, error) {
	switch {
	case bytes.HasPrefix(b, []byte{0x1f, 0x8b}):
		return Gzip, nil
	case bytes.HasPrefix(b, []byte{0x28, 0xb5, 0x2f, 0xfd}),
		len(b) >= 4 && b[0]&0xf0 == 0x50 && b[1] == 0x2a && b[2] == 0x4d && b[3] == 0x18:
		return Zstd, nil
	case bytes.HasPrefix(b, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		return 0, errors.New("xz-compressed input is not supported: decompress it first (xz -dc FILE | pgts load TABLE -)")
	case bytes.HasPrefix(b, []byte{0x04, 0x22, 0x4d, 0x18}):
		return 0, errors.New("lz4-compressed input is not supported: decompress it first (lz4 -dc FILE | pgts load TABLE -)")
	case len(b) >= 10 && bytes.HasPrefix(b, []byte("BZh")) && '1' <= b[3] && b[3] <= '9' &&
		(bytes.Equal(b[4:10], []byte{0x31, 0x41, 0x59, 0x26, 0x53, 0x59}) || bytes.Equal(b[4:10], []byte{0x17, 0x72, 0x45, 0x38, 0x50, 0x90})):
		return 0, errors.New("bzip2-compressed input is not supported: decompress it first (bzip2 -dc FILE | pgts load TABLE -)")
	}
	return Uncompressed, nil
}

// input closes the decompressor, then the file.
type input struct {
	io.Reader
	closeDecoder func() error
	closeFile    func()
}

func (in *input) Close() error {
	var err error
	if in.closeDecoder != nil {
		err = in.closeDecoder()
		in.closeDecoder = nil
	}
	if in.closeFile != nil {
		in.closeFile()
		in.closeFile = nil
	}
	return err
}

// zstdReader names the decoder's window error for the user.
type zstdReader struct{ d *zstd.Decoder }

func (z *zstdReader) Read(p []byte) (int, error) {
	n, err := z.d.Read(p)
	if errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		err = fmt.Errorf("zstd window larger than %d MiB (compressed with --long above 27?): %w", MaxZstdWindow>>20, err)
	}
	return n, err
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.n.Add(int64(n))
	}
	return n, err
}
