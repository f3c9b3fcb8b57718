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

# Another apt or dpkg (unattended-upgrades, a second terminal) may hold
# the package lock: apt then waits for it, up to lock_wait seconds, saying
# so, and fails after that with apt's own message. PGTS_APT_LOCK_POLL is
# the pause between tries (tests set 0; the wait is then a number of tries).
lock_wait=${PGTS_APT_LOCK_WAIT:-600}
lock_poll=${PGTS_APT_LOCK_POLL:-5}

# quiet runs a command with its output kept aside, and shows that output
# when the command fails; an apt command that fails because another holds
# the lock is tried again (bounded).
quiet() {
	local log waited=0 said=
	log=$(mktemp)
	while ! "$@" >"$log" 2>&1; do
		if grep -qiE 'could not get lock|unable to acquire the dpkg frontend lock|is another process using it' "$log" &&
			[ "$waited" -lt "$lock_wait" ]; then
			if [ -z "$said" ]; then
				echo "another apt or dpkg holds the package lock ($(grep -m1 -iE 'lock' "$log")); waiting for it, up to ${lock_wait}s" >&2
				said=1
			fi
			sleep "$lock_poll"
			waited=$((waited + (lock_poll > 0 ? lock_poll : 1)))
			continue
		fi
		echo "failed: $*" >&2
		if [ -n "$said" ]; then
			echo "(the package lock was still held after ${lock_wait}s: wait for the other apt or dpkg to finish, then run this again)" >&2
		fi
		cat "$log" >&2
		rm -f "$log"
		return 1
	done
	if [ -n "$said" ]; then
		echo "the package lock is free; $1 ran" >&2
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
