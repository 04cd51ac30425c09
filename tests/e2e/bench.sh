#!/bin/sh
# Samba through the driver against ksmbd, the same client and guest, back to
# back: fio (libaio, O_DIRECT, so every request crosses the wire at its
# size; cifs serves direct I/O asynchronously) reads and writes sequentially
# at each size and queue depth, from one mount and from CLIENTS mounts of
# separate sessions (nosharesock: a connection each, so Samba serves them
# from as many smbd processes). Each case runs for a few seconds; the guest's
# CPU time over it (client and server alike, /proc/stat) per GiB moved is
# steadier under emulation than the throughput; last, a perf profile of
# 4 KiB reads for each server. The share is on ext4 (on a RAM disk), as on
# a real server. MB = 10^6 bytes/s.
#   BENCH-DETAIL <server>-<case> <MB/s> iops=<n> cpu-per-gib=<s> answers-per-request=<PDUs sent per PDU received>
#   BENCH samba-vs-ksmbd-<case> <Samba MB/s> ratio=<Samba/ksmbd> cpu-per-gib=<Samba's s> cpu-ratio=<Samba/ksmbd>
#   BENCH scaling-<case> <Samba's MB/s over its c1 case's> ratio=<Samba's scaling/ksmbd's>
#   BENCH-PROFILE <server>-read-4k-qd<depth>-c1 <share of samples> <process> <binary>
# with <case> = <read|write>-<size>-qd<depth>-c<clients>; scaling is what
# separate sessions gain over one, Samba's smbd processes against ksmbd's
# threads. A case a server could not run is BENCH-UNMEASURED, its ratios
# "none"; the bench fails only when nothing was measured
# (tools/bench/lib.sh).
set -u
. "$SMBD_REPO/tests/e2e/lib.sh"
BENCH_STATE=$(mktemp -d)
. "$SMBD_REPO/tools/bench/lib.sh"
E2E_BIG_MB=1	# e2e_setup's files; the bench writes its own
SIZES="4k 64k 1m"
DEPTHS="1 16"
CLIENTS="1 4"
RUNTIME=5	# seconds a case
FILE_MB=32	# per mount
MOUNTS=$(echo "$CLIENTS" | tr ' ' '\n' | sort -n | tail -n 1)

e2e_setup && ext4_share $((MOUNTS * FILE_MB * 2)) ||
	{ echo "BENCH setup failed: $E2E_WHY"; ext4_share_off; exit 1; }

# the guest's busy CPU time so far, in clock ticks
busy_ticks() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
}

# fio_jobs <rw> <size> <depth> <clients> [once]: a fio job file, a job per
# mount, each on a file of its own (one file opened from four sessions
# corrupts a list in Debian 6.1's ksmbd, smb2_open()), for RUNTIME seconds
# or once over the files
fio_jobs() {
	printf '[global]\nrw=%s\nbs=%s\niodepth=%s\nsize=%sm\n' "$1" "$2" "$3" "$FILE_MB"
	printf 'direct=1\nioengine=libaio\ngroup_reporting\n'
	[ -n "${5:-}" ] || printf 'time_based\nruntime=%s\n' "$RUNTIME"
	i=1
	while [ "$i" -le "$4" ]; do
		printf '[c%s]\nfilename=%s-%s/bench-%s\n' "$i" "$E2E_MNT" "$i" "$i"
		i=$((i + 1))
	done
}

# fio_case <rw> <size> <depth> <clients> [once]: "<case> <MB/s> <iops>
# <cpu-per-gib> <answers>", answers the PDUs the driver sent per PDU it
# received (1.00: one response a request, no interim ones; none: the
# server does not use the driver)
fio_case() {
	fio_jobs "$@" >"$E2E_DIR/bench.fio"
	t0=$(busy_ticks) in0=$(counter pdus_received) out0=$(counter pdus_sent)
	out=$(fio --output-format=terse --terse-version=3 "$E2E_DIR/bench.fio") ||
		return 1
	t1=$(busy_ticks) in1=$(counter pdus_received) out1=$(counter pdus_sent)
	# terse v3: read KiB, KiB/s, IOPS in fields 6-8, write's in 47-49
	echo "$out" | awk -F';' -v c="$1-$2-qd$3-c$4" -v w="$1" \
		-v cpu="$(( t1 - t0 ))" -v hz="$(getconf CLK_TCK)" \
		-v rcvd="$(( in1 - in0 ))" -v sent="$(( out1 - out0 ))" '
	{
		f = w == "read" ? 6 : 47
		kib = $f; bw = $(f + 1); iops = $(f + 2)
		if (kib <= 0)
			exit 1
		answers = rcvd > 0 ? sprintf("%.2f", sent / rcvd) : "none"
		printf "%s %.1f %d %.2f %s\n", c, bw * 1024 / 1e6, iops, cpu / hz / (kib / 1048576), answers
	}'
}

# profile <rw> <size> <depth>: where the guest's CPU goes in one case from
# one mount (perf, sampling every CPU), by process and binary: under
# emulation the samples spread too thin over symbols to rank them
profile() {
	fio_jobs "$1" "$2" "$3" 1 >"$E2E_DIR/bench.fio"
	perf record -a -F 499 -o "$E2E_DIR/perf.data" -- \
		fio --output-format=terse "$E2E_DIR/bench.fio" >/dev/null 2>&1 ||
		return 1
	perf report -i "$E2E_DIR/perf.data" --stdio --no-children \
		--sort comm,dso --percent-limit 1 2>/dev/null |
		awk -v c="$E2E_SERVER-$1-$2-qd$3-c1" '
		/^ *[0-9.]+%/ { $1 = $1; print "BENCH-PROFILE " c " " $0 }' |
		head -n 15
}

# measure <server>: one line per case, or BENCH-UNMEASURED with why
measure() {
	E2E_SERVER=$1
	start_server auto || return 1
	i=1
	while [ "$i" -le "$MOUNTS" ]; do
		mkdir -p "$E2E_MNT-$i"
		mount -t cifs "//$SMBD_ADDR/e2e" "$E2E_MNT-$i" \
			-o "rdma,vers=3.1.1,nosharesock,username=$E2E_USER,password=$E2E_PASS" ||
			fail "mount $i failed" || return 1
		i=$((i + 1))
	done
	# the files, written once, so that no case lays them out
	fio_case write 1m 1 "$MOUNTS" once >/dev/null || fail "writing the files failed" ||
		return 1
	for size in $SIZES; do
		for depth in $DEPTHS; do
			for n in $CLIENTS; do
				for rw in write read; do
					fio_case "$rw" "$size" "$depth" "$n" ||
						echo "BENCH-UNMEASURED $rw-$size-qd$depth-c$n fio failed"
				done
			done
		done
	done
	# small I/O is where the servers differ most: a profile of it
	for depth in $DEPTHS; do
		profile read 4k "$depth" ||
			echo "BENCH-UNMEASURED profile-read-4k-qd$depth perf failed"
	done
}

# unmount, stop the server
finish() {
	i=1
	while [ "$i" -le "$MOUNTS" ]; do
		! mountpoint -q "$E2E_MNT-$i" || umount "$E2E_MNT-$i"
		i=$((i + 1))
	done
	stop_server
	rm -rf "${E2E_DIR:?}/share/"*
}

# run <server>: its cases, or why it could not run them
run() {
	measure "$1" >"$E2E_DIR/bench.$1" ||
		echo "BENCH-UNMEASURED $1 $E2E_WHY" >>"$E2E_DIR/bench.$1"
	finish
}
run samba
run ksmbd
e2e_teardown
ext4_share_off

# value <server> <case>: its BENCH-DETAIL line, or BENCH-UNMEASURED; sets
# v (MB/s) and cpu (s per GiB), empty when unmeasured
value() {
	set -- "$1" "$2" "$(awk -v c="$2" '$1 == c' "$E2E_DIR/bench.$1")"
	v= cpu=
	if [ -n "$3" ]; then
		set -- $3 "$1"
		v=$2 cpu=$4
		echo "BENCH-DETAIL $6-$1 $2 iops=$3 cpu-per-gib=$4 answers-per-request=$5"
	else
		unmeasured "$1-$2" "$(sed -n "s/^BENCH-UNMEASURED \($1\|$2\) //p" "$E2E_DIR/bench.$1" | head -n 1)"
	fi
}

for size in $SIZES; do
	for depth in $DEPTHS; do
		for n in $CLIENTS; do
			for rw in write read; do
				c=$rw-$size-qd$depth-c$n
				value samba "$c"
				samba=$v samba_cpu=$cpu
				value ksmbd "$c"
				if [ -z "$samba" ]; then
					unmeasured "samba-vs-ksmbd-$c" "Samba's case was not measured"
					continue
				fi
				line=$(report "samba-vs-ksmbd-$c" "$samba" "$v")
				cpu_ratio=none
				! positive "$cpu" ||
					cpu_ratio=$(awk -v s="$samba_cpu" -v k="$cpu" 'BEGIN { printf "%.2f", s / k }')
				echo "$line cpu-per-gib=$samba_cpu cpu-ratio=$cpu_ratio"
			done
		done
	done
done
# scale <server> <case> <clients>: the case's MB/s over the same case's
# from one mount; fails when either was not measured
scale() {
	one=$(awk -v c="$2-c1" '$1 == c { print $2 }' "$E2E_DIR/bench.$1")
	many=$(awk -v c="$2-c$3" '$1 == c { print $2 }' "$E2E_DIR/bench.$1")
	positive "$one" && positive "$many" &&
		awk -v a="$many" -v b="$one" 'BEGIN { printf "%.2f\n", a / b }'
}

for size in $SIZES; do
	for depth in $DEPTHS; do
		for n in $CLIENTS; do
			[ "$n" != 1 ] || continue
			for rw in write read; do
				c=$rw-$size-qd$depth
				if ! samba=$(scale samba "$c" "$n"); then
					unmeasured "scaling-$c-c$n" "Samba's cases were not both measured"
					continue
				fi
				ksmbd=$(scale ksmbd "$c" "$n") || ksmbd=
				report "scaling-$c-c$n" "$samba" "$ksmbd" nosummary
			done
		done
	done
done
grep -h '^BENCH-PROFILE' "$E2E_DIR/bench.samba" "$E2E_DIR/bench.ksmbd"
rc=0
summary >/dev/null || rc=1
rm -rf "$BENCH_STATE"
exit $rc
