// Package readme checks what a new user runs first, from a clean clone:
// the set-up scripts behind `make demo` and `make test`, and every command
// block of README.md, in order, on a fresh embedded cluster. It has tests
// only.
package readme
