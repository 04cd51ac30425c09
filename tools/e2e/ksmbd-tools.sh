#!/bin/sh
# ksmbd-tools for the reference server: 3.4.7 (Debian 12) cannot connect
# IPC$ against the 6.1 ksmbd, so the version from Debian 12's backports is
# installed, the backports suite added to the configured Debian source when
# it is missing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
installed=$(dpkg-query -W -f='${Version}' ksmbd-tools 2>/dev/null || true)
if [ -n "$installed" ] && dpkg --compare-versions "$installed" ge 3.5; then
	exit 0
fi
export DEBIAN_FRONTEND=noninteractive
echo "ksmbd-tools: installing the backports version" >&2
# add_apt_source updates the index itself
if apt-cache policy 2>/dev/null | grep -q 'bookworm-backports'; then
	as_root apt-get update -qq
else
	add_apt_source backports deb bookworm-backports
fi
as_root apt-get install -y -qq --no-install-recommends -t bookworm-backports \
	ksmbd-tools >/dev/null
installed=$(dpkg-query -W -f='${Version}' ksmbd-tools)
dpkg --compare-versions "$installed" ge 3.5 ||
	{ echo "ksmbd-tools: got $installed, need 3.5 or newer" >&2; exit 1; }
