package graphite

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"

	"github.com/pgts/pgts/internal/ingest"
)

// The pickle opcodes the restricted machine runs. Every other opcode,
// notably GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, the
// persistent-id, extension, dict, set, None, bool and buffer opcodes, is
// refused with ingest.ErrUnsupported.
const (
	opMark            = '('
	opStop            = '.'
	opPop             = '0'
	opPopMark         = '1'
	opDup             = '2'
	opFloat           = 'F'
	opInt             = 'I'
	opBinInt          = 'J'
	opBinInt1         = 'K'
	opLong            = 'L'
	opBinInt2         = 'M'
	opString          = 'S'
	opBinString       = 'T'
	opShortBinString  = 'U'
	opUnicode         = 'V'
	opBinUnicode      = 'X'
	opAppend          = 'a'
	opAppends         = 'e'
	opGet             = 'g'
	opBinGet          = 'h'
	opLongBinGet      = 'j'
	opList            = 'l'
	opPut             = 'p'
	opBinPut          = 'q'
	opLongBinPut      = 'r'
	opTuple           = 't'
	opEmptyList       = ']'
	opEmptyTuple      = ')'
	opBinFloat        = 'G'
	opBinBytes        = 'B'
	opShortBinBytes   = 'C'
	opProto           = 0x80
	opTuple1          = 0x85
	opTuple2          = 0x86
	opTuple3          = 0x87
	opLong1           = 0x8a
	opLong4           = 0x8b
	opShortBinUnicode = 0x8c
	opBinUnicode8     = 0x8d
	opBinBytes8       = 0x8e
	opMemoize         = 0x94
	opFrame           = 0x95
)

// maxProto is the highest pickle protocol version accepted.
const maxProto = 5

// kind is the type of a value built by the machine.
type kind uint8

const (
	kStr    kind = iota + 1 // bytes src[a:a+b]
	kStrBuf                 // bytes strBuf[a:a+b] (unescaped text)
	kInt                    // int64(n)
	kFloat                  // math.Float64frombits(n)
	kList                   // lists[a]
	kTuple                  // items[a:a+b]
)

// value is one object built by the machine. Objects are referred to by
// their index in vm.vals, so shared references (memo, DUP) never copy.
type value struct {
	kind kind
	a, b uint32
	n    uint64
}

// vm is a pickle machine restricted to building lists, tuples, strings
// and numbers. It never calls, imports or instantiates anything: it only
// fills slices of plain values, bounded by the frame it runs.
// Its slices are reused from one frame to the next.
type vm struct {
	src    []byte
	pos    int
	vals   []value
	stack  []int32
	marks  []int32
	memo   []int32 // -1: unset
	memoN  int     // entries set, for MEMOIZE
	lists  [][]int32
	listsN int
	items  []int32
	strBuf []byte
	// maxList bounds the length of any list or tuple.
	maxList int
}

// pickleErr returns a syntax error about the frame at offset at.
func pickleErr(at int, format string, args ...any) error {
	return fmt.Errorf("%w: pickle at offset %d: %s", ingest.ErrSyntax, at, fmt.Sprintf(format, args...))
}

// run executes src and returns the index of the value STOP returned.
func (m *vm) run(src []byte) (int32, error) {
	m.src, m.pos = src, 0
	m.vals, m.stack, m.marks, m.items, m.strBuf = m.vals[:0], m.stack[:0], m.marks[:0], m.items[:0], m.strBuf[:0]
	m.memo, m.memoN, m.listsN = m.memo[:0], 0, 0
	for m.pos < len(src) {
		at := m.pos
		op := src[at]
		m.pos++
		var err error
		switch op {
		case opProto:
			var v []byte
			if v, err = m.take(1); err == nil && v[0] > maxProto {
				err = pickleErr(at, "protocol %d is not supported", v[0])
			}
		case opFrame:
			_, err = m.take(8) // a framing hint; the frame is already whole
		case opStop:
			if m.visible() < 1 {
				return 0, pickleErr(at, "STOP with an empty stack")
			}
			if m.pos != len(src) {
				return 0, pickleErr(m.pos, "%d bytes after STOP", len(src)-m.pos)
			}
			return m.stack[len(m.stack)-1], nil
		case opMark:
			m.marks = append(m.marks, int32(len(m.stack)))
		case opPop:
			switch {
			case m.visible() > 0:
				m.stack = m.stack[:len(m.stack)-1]
			case len(m.marks) > 0:
				m.marks = m.marks[:len(m.marks)-1]
			default:
				err = pickleErr(at, "POP with an empty stack")
			}
		case opPopMark:
			var from int
			if from, err = m.popMark(at); err == nil {
				m.stack = m.stack[:from]
			}
		case opDup:
			if err = m.need(at, 1); err == nil {
				m.stack = append(m.stack, m.stack[len(m.stack)-1])
			}
		case opPut, opBinPut, opLongBinPut, opMemoize:
			err = m.put(at, op)
		case opGet, opBinGet, opLongBinGet:
			err = m.get(at, op)
		case opInt, opLong:
			err = m.textInt(at, op)
		case opBinInt, opBinInt1, opBinInt2:
			err = m.binInt(op)
		case opLong1, opLong4:
			err = m.binLong(at, op)
		case opFloat:
			var line []byte
			if line, err = m.line(at); err == nil {
				f, ok := ingest.ParseFloat(bytes.TrimSpace(line))
				if !ok {
					err = pickleErr(at, "FLOAT %s is not a number", ingest.Clip(line))
				}
				m.push(value{kind: kFloat, n: math.Float64bits(f)})
			}
		case opBinFloat:
			var v []byte
			if v, err = m.take(8); err == nil {
				m.push(value{kind: kFloat, n: binary.BigEndian.Uint64(v)})
			}
		case opString:
			err = m.quotedString(at)
		case opUnicode:
			err = m.rawUnicode(at)
		case opBinString, opShortBinString, opBinUnicode, opShortBinUnicode, opBinUnicode8,
			opBinBytes, opShortBinBytes, opBinBytes8:
			err = m.counted(at, op)
		case opEmptyList:
			m.push(value{kind: kList, a: m.newList()})
		case opList:
			var from int
			if from, err = m.popMark(at); err == nil {
				l := m.newList()
				m.lists[l] = append(m.lists[l], m.stack[from:]...)
				m.stack = m.stack[:from]
				err = m.checkLen(at, len(m.lists[l]))
				m.push(value{kind: kList, a: l})
			}
		case opAppend:
			if err = m.need(at, 2); err == nil {
				v := m.stack[len(m.stack)-1]
				m.stack = m.stack[:len(m.stack)-1]
				err = m.appendTo(at, m.stack[len(m.stack)-1], v)
			}
		case opAppends:
			var from int
			if from, err = m.popMark(at); err == nil {
				if from <= m.base() {
					err = pickleErr(at, "APPENDS without a list below its MARK")
				} else {
					err = m.appendTo(at, m.stack[from-1], m.stack[from:]...)
					m.stack = m.stack[:from]
				}
			}
		case opEmptyTuple:
			m.pushTuple(len(m.stack))
		case opTuple:
			var from int
			if from, err = m.popMark(at); err == nil {
				if err = m.checkLen(at, len(m.stack)-from); err == nil {
					m.pushTuple(from)
				}
			}
		case opTuple1, opTuple2, opTuple3:
			n := int(op-opTuple1) + 1
			if err = m.need(at, n); err == nil {
				m.pushTuple(len(m.stack) - n)
			}
		default:
			return 0, fmt.Errorf("%w: pickle opcode %q (%#02x) at offset %d builds objects other than lists, tuples, strings and numbers",
				ingest.ErrUnsupported, rune(op), op, at)
		}
		if err != nil {
			return 0, err
		}
	}
	return 0, pickleErr(len(src), "truncated: no STOP opcode")
}

// visible returns how many stack items lie above the innermost mark, the
// only ones an opcode may use (as in Python 3's unpickler).
func (m *vm) visible() int {
	return len(m.stack) - m.base()
}

// base returns the stack position of the innermost mark, 0 without one.
func (m *vm) base() int {
	if len(m.marks) == 0 {
		return 0
	}
	return int(m.marks[len(m.marks)-1])
}

func (m *vm) need(at, n int) error {
	if m.visible() < n {
		return pickleErr(at, "opcode %q needs %d stack items", rune(m.src[at]), n)
	}
	return nil
}

// popMark removes the innermost mark and returns its stack position.
func (m *vm) popMark(at int) (int, error) {
	if len(m.marks) == 0 {
		return 0, pickleErr(at, "opcode %q without a MARK", rune(m.src[at]))
	}
	from := int(m.marks[len(m.marks)-1])
	m.marks = m.marks[:len(m.marks)-1]
	return from, nil
}

func (m *vm) checkLen(at, n int) error {
	if n > m.maxList {
		return fmt.Errorf("%w: pickle at offset %d: a sequence of more than %d elements", ingest.ErrLimit, at, m.maxList)
	}
	return nil
}

// push adds a new value on the stack.
func (m *vm) push(v value) {
	m.vals = append(m.vals, v)
	m.stack = append(m.stack, int32(len(m.vals)-1))
}

// pushTuple replaces the stack items from position from up with a tuple
// of them.
func (m *vm) pushTuple(from int) {
	start := len(m.items)
	m.items = append(m.items, m.stack[from:]...)
	m.stack = m.stack[:from]
	m.push(value{kind: kTuple, a: uint32(start), b: uint32(len(m.items) - start)})
}

// newList returns the index of a new empty list, reusing the backing
// array of a list of an earlier frame.
func (m *vm) newList() uint32 {
	if m.listsN < len(m.lists) {
		m.lists[m.listsN] = m.lists[m.listsN][:0]
	} else {
		m.lists = append(m.lists, nil)
	}
	m.listsN++
	return uint32(m.listsN - 1)
}

// appendTo appends vs to the list that ref refers to.
func (m *vm) appendTo(at int, ref int32, vs ...int32) error {
	target := m.vals[ref]
	if target.kind != kList {
		return pickleErr(at, "APPEND to an object that is not a list")
	}
	l := &m.lists[target.a]
	if err := m.checkLen(at, len(*l)+len(vs)); err != nil {
		return err
	}
	*l = append(*l, vs...)
	return nil
}

// take returns the next n bytes of the frame.
func (m *vm) take(n uint64) ([]byte, error) {
	if n > uint64(len(m.src)-m.pos) {
		return nil, pickleErr(m.pos, "truncated: %d bytes wanted, %d left", n, len(m.src)-m.pos)
	}
	b := m.src[m.pos : m.pos+int(n)]
	m.pos += int(n)
	return b, nil
}

// line returns the argument of a text opcode: the bytes up to the next
// newline, which it consumes.
func (m *vm) line(at int) ([]byte, error) {
	i := bytes.IndexByte(m.src[m.pos:], '\n')
	if i < 0 {
		return nil, pickleErr(at, "truncated: opcode %q without its newline", rune(m.src[at]))
	}
	b := m.src[m.pos : m.pos+i]
	m.pos += i + 1
	return b, nil
}

// put stores the stack top in the memo.
func (m *vm) put(at int, op byte) error {
	if err := m.need(at, 1); err != nil {
		return err
	}
	var key uint64
	switch op {
	case opPut:
		line, err := m.line(at)
		if err != nil {
			return err
		}
		k, ok := ingest.ParseInt(line)
		if !ok || k < 0 {
			return pickleErr(at, "PUT key %s is not a number", ingest.Clip(line))
		}
		key = uint64(k)
	case opBinPut:
		b, err := m.take(1)
		if err != nil {
			return err
		}
		key = uint64(b[0])
	case opLongBinPut:
		b, err := m.take(4)
		if err != nil {
			return err
		}
		key = uint64(binary.LittleEndian.Uint32(b))
	case opMemoize:
		key = uint64(m.memoN)
	}
	// A pickler numbers memo entries from 0 and adds at most one per
	// opcode, so a key beyond the frame length is hostile, not big.
	if key >= uint64(len(m.src)) {
		return pickleErr(at, "memo key %d is beyond what the frame can hold", key)
	}
	for uint64(len(m.memo)) <= key {
		m.memo = append(m.memo, -1)
	}
	if m.memo[key] < 0 {
		m.memoN++
	}
	m.memo[key] = m.stack[len(m.stack)-1]
	return nil
}

// get pushes a memo entry.
func (m *vm) get(at int, op byte) error {
	var key uint64
	switch op {
	case opGet:
		line, err := m.line(at)
		if err != nil {
			return err
		}
		k, ok := ingest.ParseInt(line)
		if !ok || k < 0 {
			return pickleErr(at, "GET key %s is not a number", ingest.Clip(line))
		}
		key = uint64(k)
	case opBinGet:
		b, err := m.take(1)
		if err != nil {
			return err
		}
		key = uint64(b[0])
	case opLongBinGet:
		b, err := m.take(4)
		if err != nil {
			return err
		}
		key = uint64(binary.LittleEndian.Uint32(b))
	}
	if key >= uint64(len(m.memo)) || m.memo[key] < 0 {
		return pickleErr(at, "memo key %d is not set", key)
	}
	m.stack = append(m.stack, m.memo[key])
	return nil
}

// textInt runs INT and LONG: a decimal number and a newline ("I01\n"
// and "I00\n", Python's True and False, are read as 1 and 0). Integers
// beyond int64 become the nearest float64.
func (m *vm) textInt(at int, op byte) error {
	line, err := m.line(at)
	if err != nil {
		return err
	}
	digits := bytes.TrimSpace(line)
	if op == opLong && len(digits) > 0 && digits[len(digits)-1] == 'L' {
		digits = digits[:len(digits)-1]
	}
	if n, ok := ingest.ParseInt(digits); ok {
		m.push(value{kind: kInt, n: uint64(n)})
		return nil
	}
	if !isDecimal(digits) {
		return pickleErr(at, "%c %s is not a decimal integer", op, ingest.Clip(line))
	}
	f, _ := ingest.ParseFloat(digits)
	m.push(value{kind: kFloat, n: math.Float64bits(f)})
	return nil
}

// isDecimal reports whether b is an optionally signed run of digits.
func isDecimal(b []byte) bool {
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		b = b[1:]
	}
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// binInt runs BININT (int32), BININT1 (uint8) and BININT2 (uint16),
// little-endian.
func (m *vm) binInt(op byte) error {
	size := uint64(4)
	switch op {
	case opBinInt1:
		size = 1
	case opBinInt2:
		size = 2
	}
	b, err := m.take(size)
	if err != nil {
		return err
	}
	var n int64
	switch op {
	case opBinInt:
		n = int64(int32(binary.LittleEndian.Uint32(b)))
	case opBinInt1:
		n = int64(b[0])
	case opBinInt2:
		n = int64(binary.LittleEndian.Uint16(b))
	}
	m.push(value{kind: kInt, n: uint64(n)})
	return nil
}

// binLong runs LONG1 and LONG4: a little-endian two's complement
// integer of a counted number of bytes. Integers beyond int64 become the
// nearest float64 (±Inf beyond its range).
func (m *vm) binLong(at int, op byte) error {
	var n uint64
	if op == opLong1 {
		b, err := m.take(1)
		if err != nil {
			return err
		}
		n = uint64(b[0])
	} else {
		b, err := m.take(4)
		if err != nil {
			return err
		}
		s := int32(binary.LittleEndian.Uint32(b))
		if s < 0 {
			return pickleErr(at, "LONG4 with a negative byte count")
		}
		n = uint64(s)
	}
	b, err := m.take(n)
	if err != nil {
		return err
	}
	neg := len(b) > 0 && b[len(b)-1]&0x80 != 0
	// Drop redundant sign-extension bytes.
	ext := byte(0)
	if neg {
		ext = 0xff
	}
	for len(b) > 1 && b[len(b)-1] == ext && (b[len(b)-2]&0x80 != 0) == neg {
		b = b[:len(b)-1]
	}
	if len(b) <= 8 {
		var u uint64
		for i := len(b) - 1; i >= 0; i-- {
			u = u<<8 | uint64(b[i])
		}
		if neg && len(b) < 8 {
			u |= ^uint64(0) << (8 * uint(len(b)))
		}
		m.push(value{kind: kInt, n: u})
		return nil
	}
	// Rare: an integer beyond int64. Convert its magnitude exactly.
	mag := make([]byte, len(b))
	for i := range b {
		mag[len(b)-1-i] = b[i]
	}
	x := new(big.Int).SetBytes(mag)
	if neg {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	f, _ := new(big.Float).SetInt(x).Float64()
	m.push(value{kind: kFloat, n: math.Float64bits(f)})
	return nil
}

// counted runs the opcodes whose string argument follows a byte count.
func (m *vm) counted(at int, op byte) error {
	var size uint64 // bytes of the count
	switch op {
	case opShortBinString, opShortBinUnicode, opShortBinBytes:
		size = 1
	case opBinString, opBinUnicode, opBinBytes:
		size = 4
	case opBinUnicode8, opBinBytes8:
		size = 8
	}
	b, err := m.take(size)
	if err != nil {
		return err
	}
	var n uint64
	switch size {
	case 1:
		n = uint64(b[0])
	case 4:
		n = uint64(binary.LittleEndian.Uint32(b))
		if op == opBinString && int32(n) < 0 {
			return pickleErr(at, "BINSTRING with a negative length")
		}
	case 8:
		n = binary.LittleEndian.Uint64(b)
	}
	start := m.pos
	if _, err := m.take(n); err != nil {
		return err
	}
	m.push(value{kind: kStr, a: uint32(start), b: uint32(n)})
	return nil
}

// str returns the bytes of a string value.
func (m *vm) str(v value) []byte {
	if v.kind == kStrBuf {
		return m.strBuf[v.a : v.a+v.b]
	}
	return m.src[v.a : v.a+v.b]
}
