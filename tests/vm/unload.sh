#!/bin/sh
# Module unload is refused while a file of /dev/smbd is open (the open file
# pins the module), and works again once it is closed.
set -e
exec 3<>/dev/smbd
if rmmod smbdirect 2>/dev/null; then
	echo "rmmod succeeded with /dev/smbd open" >&2
	exit 1
fi
exec 3>&-
grep -q '^smbdirect ' /proc/modules
echo "unload refused while /dev/smbd was open"
