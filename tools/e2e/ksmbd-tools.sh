#!/bin/sh
# ksmbd-tools for the reference server: 3.4.7 (Debian 12) cannot connect
# IPC$ against the 6.1 ksmbd, so the version from Debian 12's backports is
# installed, the backports suite added to the configured Debian source when
# it is missing.
set -eu
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
installed=$(dpkg-query -W -f='${Version}' ksmbd-tools 2>/dev/null || true)
if [ -n "$installed" ] && dpkg --compare-versions "$installed" ge 3.5; then
	exit 0
fi
export DEBIAN_FRONTEND=noninteractive
list=/etc/apt/sources.list.d/smbdirect-backports.sources
if ! apt-cache policy 2>/dev/null | grep -q 'bookworm-backports'; then
	# the URI of the Debian archive the machine already uses
	uri=$(sed -n '/^URIs:/{s/^URIs: *//;p;q}' /etc/apt/sources.list.d/debian.sources \
		2>/dev/null || true)
	[ -n "$uri" ] || uri=$(sed -n 's/^deb \([^ ]*\) bookworm .*/\1/p' \
		/etc/apt/sources.list 2>/dev/null | head -n 1)
	[ -n "$uri" ] || { echo "ksmbd-tools: no Debian source to add backports to" >&2; exit 1; }
	printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
		"$uri" | as_root tee "$list" >/dev/null
fi
echo "ksmbd-tools: installing the backports version" >&2
as_root apt-get update -qq
as_root apt-get install -y -qq --no-install-recommends -t bookworm-backports \
	ksmbd-tools >/dev/null
installed=$(dpkg-query -W -f='${Version}' ksmbd-tools)
dpkg --compare-versions "$installed" ge 3.5 ||
	{ echo "ksmbd-tools: got $installed, need 3.5 or newer" >&2; exit 1; }
