#!/bin/sh
# clang-format over the userspace C and C++ (libsmbd, tools, tests) against
# .clang-format; prints the files that differ and fails if any does. The
# driver follows the kernel's style instead (checkpatch.sh).
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
files=$(git ls-files '*.c' '*.cpp' '*.h' | grep -v '^driver/\|^include/')
bad=
for f in $files; do
	clang-format --dry-run --Werror "$f" 2>/dev/null || bad="$bad $f"
done
[ -z "$bad" ] || echo "clang-format: differ:$bad (clang-format -i to fix)"
echo "clang-format: $(echo "$files" | wc -l) files, $(echo "$bad" | wc -w) differ"
[ -z "$bad" ]
