#!/usr/bin/env bash
# Installs what pgts' build, tests and demo need on a Debian machine:
# Go modules, and PostgreSQL's server from Debian's packages when no server
# binaries are found (only as root; otherwise it says what to install).
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

apt_install() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "missing: $*; install it with: sudo apt-get install $*" >&2
		exit 1
	fi
	echo "installing $* from Debian's packages" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "$@" >/dev/null
}

if ! have_postgres; then
	apt_install postgresql
fi
# pgts report's tests open the HTML report in headless Chromium.
if ! command -v chromium >/dev/null 2>&1; then
	apt_install chromium
fi
for want in "$@"; do
	case "$want" in
	chromium) command -v chromium >/dev/null 2>&1 || apt_install chromium ;;
	esac
done
go mod download
