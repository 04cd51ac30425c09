#!/bin/sh
# Samba through the driver against ksmbd, the same client and guest, in one
# run: O_DIRECT reads and writes of one file at each I/O size, so every
# request crosses the wire at that size. MB = 10^6 bytes/s.
#   BENCH-DETAIL <server>-<op>-<size> <MB/s>
#   BENCH samba-smbdirect-vs-ksmbd-<op>-<size> <Samba MB/s> ratio=<Samba/ksmbd>
set -u
. "$SMBD_REPO/tests/e2e/lib.sh"
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

measure samba >$E2E_DIR/bench.samba || { echo "BENCH samba failed: $E2E_WHY"; exit 1; }
measure ksmbd >$E2E_DIR/bench.ksmbd || { echo "BENCH ksmbd failed: $E2E_WHY"; exit 1; }
e2e_teardown
while read -r op size mb; do
	echo "BENCH-DETAIL samba-$op-$size $mb"
	k=$(awk -v o="$op" -v s="$size" '$1 == o && $2 == s { print $3 }' $E2E_DIR/bench.ksmbd)
	echo "BENCH-DETAIL ksmbd-$op-$size $k"
	echo "BENCH samba-smbdirect-vs-ksmbd-$op-$size $mb ratio=$(awk -v a="$mb" -v b="$k" 'BEGIN { printf "%.2f", a / b }')"
done <$E2E_DIR/bench.samba
