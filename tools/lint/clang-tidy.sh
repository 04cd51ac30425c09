#!/bin/sh
# clang-tidy (.clang-tidy) over libsmbd and the tools, with the compile
# commands of the userspace build in $SMBD_BUILD (make build writes them);
# prints the findings and fails on any.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${SMBD_BUILD:-$repo/build}
[ -f "$build/compile_commands.json" ] ||
	{ echo "clang-tidy: no $build/compile_commands.json: run make build" >&2; exit 1; }
cd "$repo"
files=$(git ls-files 'libsmbd/*.cpp' 'tools/*.cpp')
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# shellcheck disable=SC2086 # a list of paths without spaces
printf '%s\n' $files | xargs -P "$(nproc)" -n 1 \
	clang-tidy -p "$build" --quiet >"$log" 2>&1 || true
found=$(grep -E ': (warning|error):' "$log" || true)
[ -z "$found" ] || grep -v "warnings generated\.$" "$log"
echo "clang-tidy: $(echo "$files" | wc -l) files," \
	"$(printf '%s' "$found" | grep -c . || true) findings"
[ -z "$found" ]
