#!/usr/bin/env bash
# Installs what pgts' build and demo need on a Debian machine: Go modules,
# and PostgreSQL's server from Debian's packages when no server binaries are
# found (only as root; otherwise it says what to install). Extra arguments
# name what else a target needs: `make test` passes chromium (pgts report's
# tests open the HTML report in headless Chromium); the demo needs nothing
# more. When apt fails, its own output is shown.
set -euo pipefail

have_postgres() {
	if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then
		return 0
	fi
	for d in /usr/lib/postgresql/*/bin; do
		[ -x "$d/initdb" ] && return 0
	done
	command -v initdb >/dev/null 2>&1
}

# quiet runs a command with its output kept aside, and shows that output
# when the command fails.
quiet() {
	local log
	log=$(mktemp)
	if ! "$@" >"$log" 2>&1; then
		echo "failed: $*" >&2
		cat "$log" >&2
		rm -f "$log"
		return 1
	fi
	rm -f "$log"
}

apt_install() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "missing: $*; install it with: sudo apt-get install $*" >&2
		exit 1
	fi
	echo "installing $* from Debian's packages" >&2
	export DEBIAN_FRONTEND=noninteractive
	quiet apt-get update -q
	quiet apt-get install -y -q "$@"
}

if ! have_postgres; then
	apt_install postgresql
fi
for want in "$@"; do
	case "$want" in
	chromium) command -v chromium >/dev/null 2>&1 || apt_install chromium ;;
	*)
		echo "install-deps.sh: unknown dependency $want" >&2
		exit 2
		;;
	esac
done
go mod download
