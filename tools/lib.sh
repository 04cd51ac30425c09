# Shell helpers the build and test scripts share; sourced, not run.
# shellcheck shell=sh

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# the packages of "$@" that are not installed
missing() {
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || echo "$p"
	done
}

# need_packages <what> <package>...: installs what is missing (after an
# apt-get update), saying so on stderr as <what>; silent when nothing is.
need_packages() {
	what=$1
	shift
	todo=$(missing "$@")
	[ -n "$todo" ] || return 0
	echo "$what: installing $(echo "$todo" | tr '\n' ' ')" >&2
	as_root apt-get update -qq
	# shellcheck disable=SC2086 # the package list is split on purpose
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $todo >/dev/null
}

# where long builds and downloads are cached, outside the checkout
cache_root() {
	echo "${SMBD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/smbdirect}"
}

# add_apt_source <name> <types> <suite>: the suite's main component, of the
# Debian archive the machine already uses (its URI, and its Signed-By,
# which apt requires to be the same for every entry of one archive), as
# /etc/apt/sources.list.d/smbdirect-<name>.sources; then apt-get update
add_apt_source() {
	list=/etc/apt/sources.list.d/debian.sources
	uri=$(sed -n '/^URIs:/{s/^URIs: *//;p;q}' "$list" 2>/dev/null || true)
	signed=$(sed -n '/^Signed-By:/{p;q}' "$list" 2>/dev/null || true)
	if [ -z "$uri" ]; then
		uri=$(sed -n 's/^deb \(\[[^]]*\] \)\?\([^ ]*\) [a-z]* .*/\2/p' \
			/etc/apt/sources.list 2>/dev/null | head -n 1)
		signed=$(sed -n 's/^deb \[.*signed-by=\([^] ]*\).*/Signed-By: \1/p' \
			/etc/apt/sources.list 2>/dev/null | head -n 1)
	fi
	[ -n "$uri" ] || { echo "$1: no Debian archive configured to add $3 of" >&2; return 1; }
	printf 'Types: %s\nURIs: %s\nSuites: %s\nComponents: main\n%s\n' \
		"$2" "$uri" "$3" "$signed" |
		as_root tee "/etc/apt/sources.list.d/smbdirect-$1.sources" >/dev/null
	as_root apt-get update -qq
}
