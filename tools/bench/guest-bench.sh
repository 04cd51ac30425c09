#!/bin/sh
# The bench, run in the guest by `make bench`: on one soft-RoCE device, raw
# RDMA WRITE and READ bandwidth (perftest's ib_write_bw and ib_read_bw, both
# ends in this guest) against SMB2 READ and WRITE through the driver (the
# smbd-side responder serving, the client tool's bench mode driving), at
# 1 MiB, 64 KiB and 4 KiB. An SMB2 READ is served by RDMA WRITE, so it is
# compared with ib_write_bw; an SMB2 WRITE by RDMA READ, so with ib_read_bw.
# The responder serves on libsmbd (smb2-*), on libsmbd's tevent glue
# (tevent-smb2-*), and, where make bench could build it, as it was before
# libsmbd, on raw ioctls (ioctl-smb2-*); libsmbd-vs-ioctl-* and
# tevent-vs-ioctl-* are the library's cost (1.00: none).
# Each size runs its cases back to back, so that a ratio compares
# numbers taken under the same load. Prints one line per case,
#   BENCH <case> <MB/s> ratio=<through the driver / raw>
# (MB = 10^6 bytes), then
#   BENCH summary cases=<n> min-ratio=<x> geomean-ratio=<y>
# over the smb2-* cases. Ratios only: it fails when a tool fails or prints
# nothing parsable, never on a number.
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
# report 0.00. Its client stays on one CPU.
cpu=$(($(nproc) - 1))

work=$(mktemp -d)
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

fail() {
	echo "bench: $*" >&2
	exit 1
}

show() {
	sed 's/^/    /' "$1" >&2
}

# size in bytes -> the case suffix: 1m, 64k, 4k
label() {
	if [ $(($1 % 1048576)) = 0 ]; then echo "$(($1 / 1048576))m"
	elif [ $(($1 % 1024)) = 0 ]; then echo "$(($1 / 1024))k"
	else echo "$1"; fi
}

# perftest_mbps FILE SIZE: the "BW average" column of perftest's result line
# for SIZE in MB/s (10^6 bytes/s). perftest's header names its columns
# ("#bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]");
# its MB are 2^20 bytes (ib_write_bw --help, --report_gbits), and with
# --report_gbits the unit would be Gb/sec (10^9 bits).
perftest_mbps() {
	awk -v size="$2" '
	/#bytes/ && /average\[/ {
		col = 0; n = 0
		for (i = 1; i <= NF; i++) {
			if ($i == "BW")
				continue	# "BW peak[..]", "BW average[..]": one column each
			n++
			if ($i ~ /^average\[/) {
				col = n
				unit = $i
			}
		}
		next
	}
	col && $1 == size && NF >= col { v = $col }
	END {
		if (!col || v !~ /^[0-9]+(\.[0-9]*)?$/)
			exit 1
		if (unit ~ /\[MB\/sec\]/)
			f = 1048576 / 1e6
		else if (unit ~ /\[Gb\/sec\]/)
			f = 1e9 / 8 / 1e6
		else
			exit 1
		printf "%.1f\n", v * f
	}' "$1"
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

# raw OP SIZE: ib_OP_bw server and client over rxe0; sets mbps
raw() {
	tool=ib_$1_bw
	bytes=$2
	port=$((port + 1))
	set -- "$tool" -d "$dev" -p "$port" -s "$2" -D "$seconds" -t "$depth" -F
	timeout "$limit" "$@" >"$work/server.log" 2>&1 &
	server=$!
	wait_listen "$port" "$server" || {
		show "$work/server.log"
		fail "$tool server did not start listening on port $port"
	}
	if ! timeout "$limit" taskset -c "$cpu" "$@" "$SMBD_ADDR" >"$work/client.log" 2>&1; then
		show "$work/client.log"
		show "$work/server.log"
		fail "$tool client failed: $*"
	fi
	wait "$server" || { show "$work/server.log"; fail "$tool server failed: $*"; }
	server=
	mbps=$(perftest_mbps "$work/client.log" "$bytes") || {
		show "$work/client.log"
		fail "no 'BW average' result for $bytes bytes in the output of: $*"
	}
}

# smb2 OP SIZE: the client's bench mode against the responder; sets mbps
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
		fail "smbdirect-client failed (exit $rc): $*"
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
		fail "no single parsable 'BENCHRESULT op=$op size=$bytes ... mbps=' line from: $*"
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

# report CASE MBPS [BASE [nosummary]]: one BENCH line; a case through the
# driver has the MB/s it is compared with, and its ratio counts in the
# summary unless told not to
report() {
	if [ $# = 2 ]; then
		echo "BENCH $1 $2 ratio=1.00"
		return
	fi
	ratio=$(awk -v v="$2" -v b="$3" 'BEGIN {
		if (b <= 0) exit 1
		printf "%.2f\n", v / b
	}') || fail "$1: the case it is compared with measured $3 MB/s"
	echo "BENCH $1 $2 ratio=$ratio"
	[ $# = 4 ] || echo "$2 $3" >>"$work/ratios"
}

# start_responder BINARY [OPTION]: serving new sessions, in the background
start_responder() {
	"$@" --no-io-log >"$work/responder.log" 2>&1 &
	responder=$!
	i=0
	until grep -q "LISTEN: new sessions" "$work/responder.log"; do
		kill -0 "$responder" 2>/dev/null || { show "$work/responder.log"; fail "the responder exited: $*"; }
		i=$((i + 1))
		[ $i -lt 300 ] || { show "$work/responder.log"; fail "the responder did not start: $*"; }
		sleep 0.1
	done
}

stop_responder() {
	kill -TERM "$responder" 2>/dev/null || true
	wait "$responder" || { show "$work/responder.log"; fail "the responder failed"; }
	responder=
}

echo "bench: $dev on smbd0 at $SMBD_ADDR, ${seconds}s per case, $depth operations outstanding, MB = 10^6 bytes"

[ -x "$ioctl_responder" ] ||
	echo "BENCH-SKIP ioctl-smb2-*: no pre-libsmbd responder was built (its commit is not in this clone)"

: >"$work/ratios"
for size in $sizes; do
	l=$(label "$size")
	raw write "$size"
	write=$mbps
	report "raw-write-$l" "$write"
	raw read "$size"
	read=$mbps
	report "raw-read-$l" "$read"

	start_responder "$bin/responder/smbdirect-responder"
	latency >"$work/lat"
	smb2 read "$size"
	lib_read=$mbps
	report "smb2-read-$l" "$mbps" "$write" && detail "smb2-read-$l" "$work/lat"
	latency >"$work/lat"
	smb2 write "$size"
	lib_write=$mbps
	report "smb2-write-$l" "$mbps" "$read" && detail "smb2-write-$l" "$work/lat"
	stop_responder

	start_responder "$bin/responder/smbdirect-responder" --tevent
	smb2 read "$size"
	report "tevent-smb2-read-$l" "$mbps" "$write" nosummary
	tevent_read=$mbps
	smb2 write "$size"
	report "tevent-smb2-write-$l" "$mbps" "$read" nosummary
	tevent_write=$mbps
	stop_responder

	[ -x "$ioctl_responder" ] || continue
	start_responder "$ioctl_responder"
	smb2 read "$size"
	report "ioctl-smb2-read-$l" "$mbps" "$write" nosummary
	report "libsmbd-vs-ioctl-read-$l" "$lib_read" "$mbps" nosummary
	report "tevent-vs-ioctl-read-$l" "$tevent_read" "$mbps" nosummary
	smb2 write "$size"
	report "ioctl-smb2-write-$l" "$mbps" "$read" nosummary
	report "libsmbd-vs-ioctl-write-$l" "$lib_write" "$mbps" nosummary
	report "tevent-vs-ioctl-write-$l" "$tevent_write" "$mbps" nosummary
	stop_responder
done

awk '
{ r = $1 / $2; n++; s += log(r); if (n == 1 || r < min) min = r }
END {
	if (n)
		printf "BENCH summary cases=%d min-ratio=%.2f geomean-ratio=%.2f\n", n, min, exp(s / n)
	else
		print "BENCH summary cases=0 min-ratio=none geomean-ratio=none"
}' "$work/ratios"

