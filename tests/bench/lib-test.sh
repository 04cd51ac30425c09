#!/bin/sh
# tools/bench/lib.sh on the host: perftest's 0.00 is not a measurement and
# is measured again, an unmeasured case is reported and the bench goes on,
# a ratio without its reference is "none", and only a bench that measured
# nothing fails.
set -u
here=$(cd "$(dirname "$0")" && pwd)
BENCH_STATE=$(mktemp -d)
trap 'rm -rf "$BENCH_STATE"' EXIT
. "$here/../../tools/bench/lib.sh"
failed=0

expect() {
	if [ "$2" = "$3" ]; then
		echo "ok   $1"
	else
		echo "FAIL $1: got '$2', expected '$3'"
		failed=1
	fi
}

perftest() {
	cat <<OUT
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 4096       1000             $1               $1 		   0.000000
---------------------------------------------------------------------------------------
OUT
}

perftest 0.00 >"$BENCH_STATE/zero"
perftest 1000.00 >"$BENCH_STATE/some"
expect "perftest's 0.00 parses" "$(perftest_mbps "$BENCH_STATE/zero" 4096)" 0.0
expect "perftest's MB are 2^20 bytes" "$(perftest_mbps "$BENCH_STATE/some" 4096)" 1048.6
expect "another size has no result" "$(perftest_mbps "$BENCH_STATE/some" 65536 || echo none)" none
expect "0.0 is not a measurement" "$(positive 0.0 && echo yes || echo no)" no
expect "empty is not a measurement" "$(positive '' && echo yes || echo no)" no
expect "1048.6 is a measurement" "$(positive 1048.6 && echo yes || echo no)" yes

# a tool that reads the numbers it reports from a list, one per run
: >"$BENCH_STATE/runs"
tool() {
	echo run >>"$BENCH_STATE/runs"
	mbps=$(sed -n "$(wc -l <"$BENCH_STATE/runs")p" "$BENCH_STATE/list")
	[ "$mbps" != fail ] || { why="the tool failed"; return 1; }
}
printf '0.0\n0.0\n512.0\n' >"$BENCH_STATE/list"
again 3 tool && r=ok || r=unmeasured
expect "0.0 twice, then a number: measured on the third run" "$r $mbps $(wc -l <"$BENCH_STATE/runs")" "ok 512.0 3"

: >"$BENCH_STATE/runs"
printf '0.0\n0.0\n0.0\n9.0\n' >"$BENCH_STATE/list"
again 3 tool && r=ok || r=unmeasured
expect "0.0 three times: unmeasured, no fourth run" "$r [$mbps] $(wc -l <"$BENCH_STATE/runs")" "unmeasured [] 3"
expect "why says so" "$why" "measured 0.0 MB/s, 3 of 3 times"

: >"$BENCH_STATE/runs"
printf 'fail\nfail\nfail\n' >"$BENCH_STATE/list"
again 3 tool && r=ok || r=unmeasured
expect "a tool that fails: unmeasured, with its reason" "$r $why" "unmeasured the tool failed"

expect "nothing measured: the summary fails" "$(summary 2>/dev/null; echo "rc=$?")" "BENCH summary cases=0 min-ratio=none geomean-ratio=none
rc=1"
expect "an unmeasured case" "$(unmeasured raw-write-4k "$why")" "BENCH-UNMEASURED raw-write-4k the tool failed"
expect "a ratio without its reference" "$(report smb2-read-4k 40.0 '')" "BENCH smb2-read-4k 40.0 ratio=none"
expect "a ratio" "$(report smb2-read-1m 300.0 600.0)" "BENCH smb2-read-1m 300.0 ratio=0.50"
expect "a ratio left out of the summary" "$(report tevent-smb2-read-1m 150.0 600.0 nosummary)" "BENCH tevent-smb2-read-1m 150.0 ratio=0.25"
expect "a reference" "$(report raw-write-1m 600.0)" "BENCH raw-write-1m 600.0 ratio=1.00"
expect "the summary: one ratio counted, the bench passes" "$(summary; echo "rc=$?")" "BENCH summary cases=1 min-ratio=0.50 geomean-ratio=0.50
rc=0"
exit $failed
