#!/bin/sh
# checkpatch.pl --strict over the driver and the UAPI header, as a kernel
# reviewer runs it, from Debian's linux-source-6.12 (the newer rules; only
# the script and its data files, cached outside the checkout by package
# version). Prints each finding and one summary line; fails on any.
#
# Waived, and only where named: the protocol core's error list is an
# X-macro (one table gives each error its enum value, name and text), which
# checkpatch reads as a complex macro without parentheses, a reused argument
# and, in the helpers that take one column each, unused arguments; the list
# cannot be parenthesized, X is a macro name, not a value with side
# effects, and a helper takes every column by design.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$repo/tools/lib.sh"
need_packages checkpatch linux-source-6.12

version=$(dpkg-query -W -f='${Version}' linux-source-6.12)
cache=$(cache_root)/checkpatch/$version
if [ ! -f "$cache/.complete" ]; then
	rm -rf "$cache"
	mkdir -p "$cache"
	tar -xJf /usr/src/linux-source-6.12.tar.xz -C "$cache" \
		--strip-components=1 linux-source-6.12/scripts/checkpatch.pl \
		linux-source-6.12/scripts/spelling.txt \
		linux-source-6.12/scripts/const_structs.checkpatch
	touch "$cache/.complete"
fi

cd "$repo"
run() {
	perl "$cache/scripts/checkpatch.pl" --strict --no-tree --terse \
		--show-types --quiet "$@" || true
}
# the files that define or expand X-macro lists (one line per code, counter
# or reason) are spared the rules such lists cannot meet
lists="driver/proto/proto_error.h
driver/proto/proto_error.c
driver/stats.h
driver/stats.c
include/uapi/linux/smbd.h"
files=$(git ls-files 'driver/*.[ch]' include/uapi/linux/smbd.h |
	grep -vxF "$lists")
# shellcheck disable=SC2086 # lists of paths without spaces
found=$( { run -f $files
	run --ignore COMPLEX_MACRO,MACRO_ARG_REUSE,MACRO_ARG_UNUSED,TRAILING_SEMICOLON,BRACKET_SPACE \
		-f $lists
	} | grep -v '^total:' || true)
n=$(printf '%s' "$found" | grep -c . || true)
[ -z "$found" ] || printf '%s\n' "$found"
echo "checkpatch --strict ($version): $(echo "$files" | wc -l) + $(echo "$lists" | wc -l) files, $n findings"
[ "$n" -eq 0 ]
