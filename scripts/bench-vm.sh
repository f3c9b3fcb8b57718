#!/bin/sh
# Prints the path of victoria-metrics at the pinned version, building it
# with `go install` into .bench-tools/bin when it is not there yet.
# When it cannot be built, prints nothing on standard output and one line
# on standard error saying how to get it; exits 0 either way, so that the
# benchmarks run without it.
#
#   scripts/bench-vm.sh v1.151.0
set -u
version=${1:?usage: scripts/bench-vm.sh VERSION}
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$root/.bench-tools/bin
bin=$dir/victoria-metrics
stamp=$bin.version
if [ -x "$bin" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$version" ]; then
	echo "$bin"
	exit 0
fi
mkdir -p "$dir"
pkg=github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics@$version
echo "building VictoriaMetrics $version into $dir (about a minute)" >&2
if GOBIN=$dir ${GO:-go} install "$pkg" >"$dir/build.log" 2>&1; then
	echo "$version" >"$stamp"
	echo "$bin"
else
	echo "VictoriaMetrics skipped: 'GOBIN=$dir go install $pkg' failed (see $dir/build.log); run it by hand to compare with it" >&2
fi
exit 0
