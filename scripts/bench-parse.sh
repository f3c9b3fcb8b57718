#!/usr/bin/env bash
# bench-parse.sh: the file parser's wall time per row with one goroutine
# against GOMAXPROCS goroutines, beside what the cores give two processes
# that share nothing.
#
# Runs BenchmarkFileParse (internal/copyload: read, parse, encode and batch
# 1 M conditions CSV rows, without a server) ROUNDS times in three ways,
# interleaved:
#
#   cpu1  -cpu 1: one goroutine
#   cpuN  -cpu N (N = nproc): the parallel parser, N parsers
#   pair  N -cpu 1 processes at once, pinned one per core (taskset); its
#         figure is the wall time per row had they shared the rows,
#         1 / (1/a + 1/b + ...): the most any split of the work could get
#         from these cores in that round
#
# Each way runs BEST times per round and keeps its fastest run, so that a
# moment when the host slows one core weighs on one run, not the round.
# Prints each round's figures, then the medians of the rounds' ratios to
# cpu1 (the goal of the parallel parser: cpuN ≤ 0.55 with two cores).
#
#   ROUNDS=9 BEST=3 ROWS=3000000 scripts/bench-parse.sh
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-9}
BEST=${BEST:-3}
ROWS=${ROWS:-3000000}
N=$(nproc)
if [ "$N" -lt 2 ]; then
	echo "bench-parse: this machine has one core; nothing to compare" >&2
	exit 1
fi

mkdir -p bin
go test -c -o bin/copyload.test ./internal/copyload
run() { # run GOMAXPROCS [taskset cpu]: prints ns/row
	local cmd=(bin/copyload.test -test.run '^$' -test.bench '^BenchmarkFileParse$' -test.benchtime "${ROWS}x" -test.cpu "$1")
	if [ $# -gt 1 ]; then cmd=(taskset -c "$2" "${cmd[@]}"); fi
	"${cmd[@]}" | awk '/ns\/row/ { for (i = 2; i < NF; i++) if ($(i+1) == "ns/row") print $i }'
}
best() { # best OF-COMMAND...: the lowest of BEST runs
	local b=""
	for _ in $(seq "$BEST"); do
		v=$("$@")
		b=$(awk -v a="$b" -v v="$v" 'BEGIN { print (a == "" || v < a) ? v : a }')
	done
	echo "$b"
}
pair() {
	local dir pids=() i
	dir=$(mktemp -d)
	for i in $(seq 0 $((N - 1))); do
		run 1 "$i" >"$dir/$i" &
		pids+=($!)
	done
	wait "${pids[@]}"
	cat "$dir"/* | awk '{ s += 1 / $1 } END { print 1 / s }'
	rm -rf "$dir"
}

out=$(mktemp)
trap 'rm -f "$out"' EXIT
printf '%-6s %10s %10s %10s %8s %8s\n' round cpu1 cpu$N pair "cpu$N/1" pair/1
for r in $(seq "$ROUNDS"); do
	a=$(best run 1)
	b=$(best run "$N")
	c=$(best pair)
	echo "$r $a $b $c" >>"$out"
	awk -v r="$r" -v a="$a" -v b="$b" -v c="$c" \
		'BEGIN { printf "%-6s %10.1f %10.1f %10.1f %8.3f %8.3f\n", r, a, b, c, b / a, c / a }'
done
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo
echo "medians of $ROUNDS rounds (ns/row, best of $BEST runs each):"
printf '  cpu1 %s   cpu%s %s   pair %s\n' "$(awk '{print $2}' "$out" | median)" "$N" \
	"$(awk '{print $3}' "$out" | median)" "$(awk '{print $4}' "$out" | median)"
printf '  ratio to cpu1, median of the rounds: cpu%s %s   pair %s\n' "$N" \
	"$(awk '{print $3 / $2}' "$out" | median)" "$(awk '{print $4 / $2}' "$out" | median)"
