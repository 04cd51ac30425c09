#!/bin/sh
# What the packages in $1 (make deb) depend on, installed on this host:
# the first alternative of each Pre-Depends and Depends, without versions
# (apt-get takes the candidate) or recommends, the packages' own left
# out; so that make e2e's guest, which shares this host's system, can
# dpkg -i them.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 <packages dir>" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/../.." && pwd)
. "$repo/tools/lib.sh"
own=$(for d in "$1"/*.deb; do dpkg-deb -f "$d" Package; done)
deps=$(for d in "$1"/*.deb; do dpkg-deb -f "$d" Pre-Depends Depends; done |
	sed 's/^[A-Za-z-]*: //' | tr ',' '\n' |
	sed 's/|.*//; s/(.*)//; s/:any//; s/[[:space:]]//g' | sed '/^$/d' |
	sort -u | grep -vxF "$own" || true)
# shellcheck disable=SC2086 # the package list is split on purpose
need_packages packages $deps
