#!/bin/sh
# The bench, run in the guest by `make bench`: on one soft-RoCE device, raw
# RDMA WRITE and READ bandwidth (perftest's ib_write_bw and ib_read_bw, both
# ends in this guest) against SMB2 READ and WRITE through the driver (the
# smbd-side responder serving, the client tool's bench mode driving), at
# 1 MiB, 64 KiB and 4 KiB. An SMB2 READ is served by RDMA WRITE, so it is
# compared with ib_write_bw; an SMB2 WRITE by RDMA READ, so with ib_read_bw.
# The responder serves on libsmbd (smb2-*), on libsmbd's tevent glue
# (tevent-smb2-*), both sending a READ's response with its RDMA WRITE;
# on libsmbd sending it after the WRITE's RDMA_DONE (after-done-smb2-*,
# rw-reply-vs-after-done-* the gain), and, where make bench could build
# it, as it was before libsmbd, on raw ioctls (ioctl-smb2-*), which also
# answers after RDMA_DONE: libsmbd-vs-ioctl-* is the library's cost (1.00:
# none), tevent-vs-poll-* the tevent glue's.
# Each size runs its cases back to back, so that a ratio compares
# numbers taken under the same load. Prints one line per case,
#   BENCH <case> <MB/s> ratio=<through the driver / raw>
# (MB = 10^6 bytes; ratio=none when the raw case could not be measured),
# or BENCH-UNMEASURED <case> <why>, then
#   BENCH summary cases=<n> min-ratio=<x> geomean-ratio=<y>
# over the smb2-* cases. Ratios only: it fails when no case could be
# measured, never on a number (tools/bench/lib.sh).
set -eu
bin=$SMBD_BUILD/tools
# the pre-libsmbd responder, built by make bench from history when it can
ioctl_responder=$SMBD_BUILD/ioctl/tools/responder/smbdirect-responder
dev=rxe0
seconds=5	# per case; perftest measures between margins of D/4 s (1 s) at each end
depth=16	# operations outstanding, for perftest (-t) and the client alike
sizes="1048576 65536 4096"
port=18515	# perftest's TCP exchange port, one more for each run
limit=$((seconds * 6 + 60))	# a tool that takes longer than this has hung
# perftest times itself with the TSC, which the guest's vCPUs do not keep in
# sync ("Marking TSC unstable"): a client that moves between them can
# report 0.00. Its client stays on one CPU, and a raw case that reads 0 is
# measured again.
cpu=$(($(nproc) - 1))

work=$(mktemp -d)
BENCH_STATE=$work
. "$(dirname "$0")/lib.sh"
responder=
server=
cleanup() {
	for p in $server $responder; do
		kill -TERM "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

show() {
	sed 's/^/    /' "$1" >&2
}

# wait_listen PORT PID: until a TCP socket listens on PORT, while PID lives
wait_listen() {
	i=0
	until ss -Hltn "sport = :$1" | grep -q .; do
		kill -0 "$2" 2>/dev/null || return 1
		i=$((i + 1))
		[ $i -lt 600 ] || return 1
		sleep 0.1
	done
}

# raw OP SIZE: ib_OP_bw server and client over rxe0, once; sets mbps, or why
raw() {
	tool=ib_$1_bw
	bytes=$2
	port=$((port + 1))
	set -- "$tool" -d "$dev" -p "$port" -s "$2" -D "$seconds" -t "$depth" -F
	timeout "$limit" "$@" >"$work/server.log" 2>&1 &
	server=$!
	wait_listen "$port" "$server" || {
		show "$work/server.log"
		why="$tool server did not start listening on port $port"
		return 1
	}
	rc=0
	timeout "$limit" taskset -c "$cpu" "$@" "$SMBD_ADDR" >"$work/client.log" 2>&1 || rc=$?
	wait "$server" || rc=$((rc + 1))
	server=
	[ $rc = 0 ] || {
		show "$work/client.log"
		show "$work/server.log"
		why="$tool failed: $*"
		return 1
	}
	mbps=$(perftest_mbps "$work/client.log" "$bytes") || {
		show "$work/client.log"
		why="no 'BW average' result for $bytes bytes in the output of: $*"
		return 1
	}
}

# smb2 OP SIZE: the client's bench mode against the responder; sets mbps,
# or why
smb2() {
	op=$1
	bytes=$2
	set -- "$bin/client/smbdirect-client" --addr "$SMBD_ADDR" --bench "$1" \
		--size "$2" --depth "$depth" --seconds "$seconds"
	rc=0
	timeout "$limit" "$@" >"$work/client.log" 2>&1 || rc=$?
	[ $rc = 0 ] || {
		show "$work/client.log"
		echo "bench: the responder's log:" >&2
		show "$work/responder.log"
		why="smbdirect-client failed (exit $rc): $*"
		return 1
	}
	mbps=$(awk -v op="$op" -v size="$bytes" '
	/^BENCHRESULT / {
		lines++
		delete f
		for (i = 2; i <= NF; i++) {
			eq = index($i, "=")
			if (eq)
				f[substr($i, 1, eq - 1)] = substr($i, eq + 1)
		}
		ok = f["op"] == op && f["size"] == size &&
			f["mbps"] ~ /^[0-9]+(\.[0-9]*)?$/
		v = f["mbps"]
	}
	END {
		if (lines != 1 || !ok)
			exit 1
		printf "%.1f\n", v
	}' "$work/client.log") || {
		show "$work/client.log"
		why="no single parsable 'BENCHRESULT op=$op size=$bytes ... mbps=' line from: $*"
		return 1
	}
}

# The driver's RDMA latency histogram: one "bound count" line per bucket.
latency() {
	sed 's/lt_us=//; s/count=//' /sys/kernel/debug/smbdirect/rdma_latency
}

# detail CASE BEFORE: where a case through the driver spends its time, from
# the histogram's growth since BEFORE: the RDMA operations it ran and the
# bucket that holds their median latency (ioctl to completion).
detail() {
	latency | paste -d ' ' "$2" - | awk -v c="$1" '
	{ b[NR] = $1; n[NR] = $4 - $2; total += n[NR] }
	END {
		if (!total) { printf "BENCH-DETAIL %s rdma-ops=0\n", c; exit }
		for (i = 1; i <= NR; i++) {
			seen += n[i]
			if (seen * 2 >= total) break
		}
		printf "BENCH-DETAIL %s rdma-ops=%d rdma-median-latency-us<%s\n", c, total, b[i]
	}'
}

# start_responder BINARY [OPTION]: serving new sessions, in the background;
# or why not
start_responder() {
	"$@" --no-io-log >"$work/responder.log" 2>&1 &
	responder=$!
	i=0
	until grep -q "LISTEN: new sessions" "$work/responder.log"; do
		if ! kill -0 "$responder" 2>/dev/null || [ $i -ge 300 ]; then
			stop_responder
			why="the responder did not start: $*"
			return 1
		fi
		i=$((i + 1))
		sleep 0.1
	done
}

stop_responder() {
	kill -TERM "$responder" 2>/dev/null || true
	wait "$responder" || show "$work/responder.log"
	responder=
}

# case_smb2 CASE OP SIZE BASE [nosummary]: one case against the responder
# running; sets mbps, empty when unmeasured
case_smb2() {
	c=$1 op=$2 size=$3
	shift 3
	latency >"$work/lat"
	if smb2 "$op" "$size"; then
		report "$c" "$mbps" "$@"
		detail "$c" "$work/lat"
	else
		unmeasured "$c" "$why"
		mbps=
	fi
}

# cases_smb2 LABEL PREFIX SIZE SUMMARY RESPONDER...: its read and write
# cases (SUMMARY: "" or nosummary), both unmeasured when the responder does
# not start; sets op_read and op_write
cases_smb2() {
	l=$1 prefix=$2 size=$3 ns=$4
	shift 4
	op_read= op_write=
	if ! start_responder "$@"; then
		unmeasured "${prefix}smb2-read-$l" "$why"
		unmeasured "${prefix}smb2-write-$l" "$why"
		return
	fi
	case_smb2 "${prefix}smb2-read-$l" read "$size" "$write" $ns
	op_read=$mbps
	case_smb2 "${prefix}smb2-write-$l" write "$size" "$read" $ns
	op_write=$mbps
	stop_responder
}

# both CASE A B: A against B, a ratio outside the summary, where both
# sides were measured
both() {
	[ -z "$2" ] || [ -z "$3" ] || report "$1" "$2" "$3" nosummary
}

echo "bench: $dev on smbd0 at $SMBD_ADDR, ${seconds}s per case, $depth operations outstanding, MB = 10^6 bytes"

[ -x "$ioctl_responder" ] ||
	echo "BENCH-SKIP ioctl-smb2-*: no pre-libsmbd responder was built (its commit is not in this clone)"

for size in $sizes; do
	l=$(label "$size")
	if again 3 raw write "$size"; then report "raw-write-$l" "$mbps"
	else unmeasured "raw-write-$l" "$why"; fi
	write=$mbps
	if again 3 raw read "$size"; then report "raw-read-$l" "$mbps"
	else unmeasured "raw-read-$l" "$why"; fi
	read=$mbps

	cases_smb2 "$l" "" "$size" "" "$bin/responder/smbdirect-responder"
	lib_read=$op_read lib_write=$op_write
	cases_smb2 "$l" tevent- "$size" nosummary \
		"$bin/responder/smbdirect-responder" --tevent
	tevent_read=$op_read tevent_write=$op_write
	cases_smb2 "$l" after-done- "$size" nosummary \
		"$bin/responder/smbdirect-responder" --no-rw-reply
	after_read=$op_read after_write=$op_write
	both "rw-reply-vs-after-done-read-$l" "$lib_read" "$after_read"
	for op in read write; do
		eval "lib=\$lib_$op tevent=\$tevent_$op"
		both "tevent-vs-poll-$op-$l" "$tevent" "$lib"
	done

	[ -x "$ioctl_responder" ] || continue
	cases_smb2 "$l" ioctl- "$size" nosummary "$ioctl_responder"
	for op in read write; do
		eval "ioctl=\$op_$op after=\$after_$op"
		both "libsmbd-vs-ioctl-$op-$l" "$after" "$ioctl"
	done
done

summary
