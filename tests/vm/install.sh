#!/bin/sh
# The programs built against the installed libsmbd (make install-check) on
# the real device: open, query, a pool buffer, the tevent glue.
set -eu
dir=$SMBD_BUILD/install-check
[ -x "$dir/consumer" ] || { echo "install.sh: run make install-check first" >&2; exit 1; }
export LD_LIBRARY_PATH
LD_LIBRARY_PATH=$(cat "$dir/libdir")
"$dir/consumer"
"$dir/consumer-tevent"
