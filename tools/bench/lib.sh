# The bench's bookkeeping, shared by tools/bench/guest-bench.sh and
# tests/e2e/bench.sh and tested on the host (tests/bench/lib-test.sh): what
# counts as a measurement, measuring again, and the lines it prints. A case
# that cannot be measured is reported as such and the bench goes on; it
# fails only when nothing was measured. Sourced; $BENCH_STATE is a
# directory the caller owns.

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

# positive MBPS: MBPS is a number above zero
positive() {
	awk -v v="$1" 'BEGIN { exit !(v ~ /^[0-9]+(\.[0-9]*)?$/ && v + 0 > 0) }'
}

# again N FUNCTION ARGS...: runs FUNCTION, which sets mbps (or returns
# non-zero and sets why), up to N times until mbps is positive. perftest
# times itself with the TSC, which can read 0 under emulation.
again() {
	n=$1 try=0
	shift
	while [ $try -lt "$n" ]; do
		try=$((try + 1))
		mbps= why=
		if "$@"; then
			positive "$mbps" && return 0
			why="measured $mbps MB/s, $try of $n times"
		fi
	done
	mbps=
	return 1
}

# unmeasured CASE WHY: a case the bench could not measure
unmeasured() {
	echo "BENCH-UNMEASURED $1 $2"
}

# report CASE MBPS [BASE [nosummary]]: one BENCH line. A case compared with
# BASE gets its ratio, counted in the summary unless told not to; with BASE
# unmeasured (empty) its ratio is "none".
report() {
	echo "$1" >>"$BENCH_STATE/measured"
	if [ $# = 2 ]; then
		echo "BENCH $1 $2 ratio=1.00"
		return
	fi
	if ! positive "$3"; then
		echo "BENCH $1 $2 ratio=none"
		return
	fi
	echo "BENCH $1 $2 ratio=$(awk -v v="$2" -v b="$3" 'BEGIN { printf "%.2f", v / b }')"
	[ $# = 4 ] || echo "$2 $3" >>"$BENCH_STATE/ratios"
}

# summary: the summary line over the ratios counted; fails when no case
# was measured at all
summary() {
	touch "$BENCH_STATE/ratios" "$BENCH_STATE/measured"
	awk '
	{ r = $1 / $2; n++; s += log(r); if (n == 1 || r < min) min = r }
	END {
		if (n)
			printf "BENCH summary cases=%d min-ratio=%.2f geomean-ratio=%.2f\n", n, min, exp(s / n)
		else
			print "BENCH summary cases=0 min-ratio=none geomean-ratio=none"
	}' "$BENCH_STATE/ratios"
	[ -s "$BENCH_STATE/measured" ] || {
		echo "bench: no case could be measured" >&2
		return 1
	}
}
