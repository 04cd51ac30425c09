#!/bin/sh
# Samba through the driver against ksmbd, the same client and guest, in one
# run: O_DIRECT reads and writes of one file at each I/O size, so every
# request crosses the wire at that size. MB = 10^6 bytes/s.
#   BENCH-DETAIL <server>-<op>-<size> <MB/s>
#   BENCH samba-smbdirect-vs-ksmbd-<op>-<size> <Samba MB/s> ratio=<Samba/ksmbd>
# A case a server could not run is BENCH-UNMEASURED, its ratio "none"; the
# bench fails only when nothing was measured (tools/bench/lib.sh).
set -u
. "$SMBD_REPO/tests/e2e/lib.sh"
BENCH_STATE=$(mktemp -d)
. "$SMBD_REPO/tools/bench/lib.sh"
E2E_BIG_MB=${E2E_BENCH_MB:-32}
SIZES=${E2E_BENCH_SIZES:-4k 64k 1m}

e2e_setup || { echo "BENCH setup failed: $E2E_WHY"; exit 1; }

bytes_of() {
	case $1 in *k) echo $(( ${1%k} * 1024 )) ;; *m) echo $(( ${1%m} * 1048576 )) ;; esac
}

# mbps <bytes> <start ns> <end ns>
mbps() { awk -v b="$1" -v s="$2" -v e="$3" 'BEGIN { printf "%.1f", b / ((e - s) / 1e9) / 1e6 }'; }

# measure <server>: one line "op size mbps" per case
measure() {
	E2E_SERVER=$1
	start_server auto || return 1
	mount -t cifs "//$SMBD_ADDR/e2e" "$E2E_MNT" \
		-o "rdma,vers=3.1.1,username=$E2E_USER,password=$E2E_PASS" ||
		fail "mount failed" || return 1
	for size in $SIZES; do
		bs=$(bytes_of "$size")
		# 4 KiB requests are slow under TCG: a quarter of the data
		total=$((E2E_BIG_MB * 1048576))
		[ "$bs" -ge 65536 ] || total=$((total / 4))
		count=$((total / bs))
		t0=$(date +%s%N)
		dd if="$E2E_DIR/big" of="$E2E_MNT/bench" bs="$bs" count="$count" \
			oflag=direct 2>/dev/null || fail "write failed" || return 1
		t1=$(date +%s%N)
		dd if="$E2E_MNT/bench" of=/dev/null bs="$bs" count="$count" \
			iflag=direct 2>/dev/null || fail "read failed" || return 1
		t2=$(date +%s%N)
		echo "write $size $(mbps "$total" "$t0" "$t1")"
		echo "read $size $(mbps "$total" "$t1" "$t2")"
		rm -f "$E2E_MNT/bench"
	done
	umount "$E2E_MNT"
	stop_server
}

# run <server>: its cases, or why it could not run them
run() {
	measure "$1" >"$E2E_DIR/bench.$1" && return
	echo "BENCH-UNMEASURED $1 $E2E_WHY" >>"$E2E_DIR/bench.$1"
	mountpoint -q "$E2E_MNT" && umount "$E2E_MNT"
	stop_server
}
run samba
run ksmbd
e2e_teardown

# value <server> <op> <size>: its BENCH-DETAIL line, or BENCH-UNMEASURED;
# sets v, empty when unmeasured
value() {
	v=$(awk -v o="$2" -v s="$3" '$1 == o && $2 == s { print $3 }' "$E2E_DIR/bench.$1")
	if [ -n "$v" ]; then
		echo "BENCH-DETAIL $1-$2-$3 $v"
	else
		unmeasured "$1-$2-$3" "$(sed -n "s/^BENCH-UNMEASURED $1 //p" "$E2E_DIR/bench.$1")"
	fi
}
for size in $SIZES; do
	for op in write read; do
		value samba "$op" "$size"
		samba=$v
		value ksmbd "$op" "$size"
		c="samba-smbdirect-vs-ksmbd-$op-$size"
		if [ -n "$samba" ]; then
			report "$c" "$samba" "$v"
		else
			unmeasured "$c" "Samba's case was not measured"
		fi
	done
done
rc=0
summary >/dev/null || rc=1
rm -rf "$BENCH_STATE"
exit $rc
