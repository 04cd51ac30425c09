#!/bin/sh
# Print the ABI (e.g. 6.1.0-56-amd64) of the kernel Debian currently packages as
# linux-image-amd64. The module is built for, and the guest boots, that kernel;
# never the host's running kernel.
set -eu
abi=$(apt-cache depends linux-image-amd64 2>/dev/null |
	sed -n 's/^ *Depends: linux-image-\(.*-amd64\)$/\1/p' | head -n 1)
[ -n "$abi" ] || { echo "kernel-abi: linux-image-amd64 not in the apt cache" >&2; exit 1; }
echo "$abi"
