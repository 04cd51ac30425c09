#!/bin/sh
# make check-debug: on the debug kernel (KASAN, kmemleak, lockdep, atomic
# sleep, list and object debugging, UBSAN), one guest boot each for the
# guest tier, the RDMA path with registered memory, the fuzzing of the
# running driver from the network and through its ioctls, the e2e
# scenarios with Samba and the cifs client, the faults with the soak, and
# the network's faults between two hosts (a pair of guests) with theirs.
# A boot fails on any kernel report (tools/vm/run.sh); kmemleak scans after
# each tier script, at checkpoints of the e2e and fault boots, and after
# the module's unload at the end of every boot. Logs go to $SMBD_BUILD/check-debug; the figures are
# printed at the end. SMBD_CHECK_DEBUG_BOOTS="tier fuzz" reruns only those
# boots (of tier registered-rw fuzz e2e faults net-faults), and
# SMBD_CHECK_DEBUG_BOOTS=pending those that have not passed on the same
# inputs (the sources every boot runs: driver, libraries, tests, tools,
# the Samba series); the figures then come from their logs and the other
# boots' logs of earlier runs, which count only when made of the same
# inputs. So a whole run may span sessions.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
SMBD_BUILD=${SMBD_BUILD:-$repo/build}
export SMBD_BUILD
# the boots, the longest first
all="net-faults e2e faults tier fuzz registered-rw"
boots=${SMBD_CHECK_DEBUG_BOOTS:-$all}
logs=$SMBD_BUILD/check-debug
# inputs: what a boot's verdict depends on, by content (the kernel and
# Samba caches are keyed by theirs, from these files)
# (files not yet added to git count too)
git -C "$repo" rev-parse --git-dir >/dev/null 2>&1 || {
	echo "check-debug: $repo is not a git checkout: the inputs of a boot are its files in git" >&2
	exit 2
}
inputs=$(cd "$repo" && git ls-files -z -c -o --exclude-standard -- driver \
	include libsmbd tests tools samba-patches CMakeLists.txt Makefile |
	xargs -0 sha256sum | sha256sum | cut -c1-16)
# passed_here <boot>: it passed on these inputs
passed_here() { grep -qs "^inputs=$inputs " "$logs/$1.passed"; }
if [ "$boots" = pending ]; then
	boots=
	for b in $all; do passed_here "$b" || boots="$boots${boots:+ }$b"; done
	[ -n "$boots" ] || echo "check-debug: every boot passed on these inputs ($inputs)" >&2
fi

# The boots run in SMBD_CHECK_DEBUG_JOBS lanes at once (default 1). More
# lanes fill the time a boot's tests wait out the timeouts they test, but
# whether that gains is not measured: beside the two-host boot (two
# guests) on 2 cores, the e2e guest got about 80 % of one core. Each lane
# takes the next boot not yet taken; a boot's progress is printed when it
# ends.
jobs=${SMBD_CHECK_DEBUG_JOBS:-1}
case $jobs in
''|*[!0-9]*|0*)
	echo "check-debug: SMBD_CHECK_DEBUG_JOBS is a number of boots, 1 or more, not '$jobs'" >&2
	exit 2 ;;
esac
for b in $boots; do
	case " $all " in *" $b "*) ;; *)
		echo "check-debug: no boot '$b' (the boots: $all)" >&2
		exit 2 ;;
	esac
done

paths=$("$here/prepare.sh" debug) || exit 1
kernel=$(echo "$paths" | sed -n 1p)
samba=$(echo "$paths" | sed -n 2p)
driver=$(echo "$paths" | sed -n 3p)
mkdir -p "$logs"

# spec <name>: the boot's scenario, guest parameters and runner (pair.sh
# boots two guests)
spec() {
	runner=run.sh params=
	case $1 in
	tier)
		scenario=tests/vm/tier.sh
		params=smbd.tier=ioctl.sh,install.sh,responder.sh,unload.sh,rdma-kill.sh,scenarios.sh ;;
	# ib_core is built into the debug kernel: force_mr comes from the boot
	registered-rw)
		scenario=tests/vm/tier.sh
		params="smbd.tier=registered-rw.sh ib_core.force_mr=1" ;;
	fuzz)
		scenario=tests/vm/tier.sh
		params="smbd.tier=net-fuzz.sh,ioctl-fuzz.sh smbd.fuzz_conversations=600" ;;
	e2e) scenario=tests/e2e/guest.sh ;;
	faults) scenario=tests/e2e/faults.sh ;;
	net-faults) scenario=tests/e2e/net-faults.sh runner=pair.sh ;;
	esac
}

# boot <name>
# KASAN reports only its first finding of a boot without kasan_multi_shot,
# so one finding would hide the rest of the boot's.
# A hung task fails the boot in any case; hung_task_panic ends it there,
# with every blocked task's stack on the console, instead of at the boot's
# time limit. That limit only catches a guest that stopped making progress
# without a hung task: two hours, since a boot that shares the machine
# with another (the e2e one took 2659 s alone with six scenarios) runs at
# half speed or less.
boot() {
	spec "$1"
	rm -f "$logs/$1.log" "$logs/$1.passed"
	start=$(date +%s)
	if SMBD_VM_KERNEL=$kernel SMBD_VM_DRIVER=$driver \
		SMBD_VM_ARGS="smbd.samba=$samba kasan_multi_shot hung_task_panic=1 $params" \
		SMBD_VM_MEM=3072 \
		SMBD_VM_TIMEOUT=${SMBD_VM_TIMEOUT:-7200} \
		"$repo/tools/vm/$runner" "$scenario" >"$logs/$1.log" 2>&1; then
		took=$(($(date +%s) - start))
		echo "inputs=$inputs seconds=$took date=$(date -u +%FT%TZ)" \
			>"$logs/$1.passed"
		echo "== check-debug: $1 passed in $took s" >&2
	else
		{
			echo "== check-debug: $1 FAILED after $(($(date +%s) - start)) s:"
			tail -n 60 "$logs/$1.log"
		} >&2
	fi
}

# lane: boots the next boot no lane has taken (mkdir is atomic) until none
# is left
claims=$(mktemp -d)
trap 'rm -rf "$claims"' EXIT
lane() {
	for b in $all; do
		case " $boots " in *" $b "*) ;; *) continue ;; esac
		mkdir "$claims/$b" 2>/dev/null || continue
		boot "$b"
	done
}
echo "== check-debug: inputs $inputs; to run: ${boots:-nothing}, $jobs at a time" >&2
run_start=$(date +%s)
lanes=
i=0
while [ $i -lt "$jobs" ]; do
	lane &
	lanes="$lanes $!"
	i=$((i + 1))
done
# shellcheck disable=SC2086 # one pid each
wait $lanes

# The figures, from the logs.
field() { sed -n "s/.*$1 .*\\b$2=\\([^ ]*\\).*/\\1/p" "$logs"/*.log | head -n 1; }
gtests=$(cat "$logs"/*.log | sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\..*/\1/p' |
	awk '{s += $1} END {print s + 0}')
scripts=$(grep -c '^== tests/vm/.*: [0-9]* s$' "$logs"/tier.log "$logs"/registered-rw.log 2>/dev/null |
	awk -F: '{s += $2} END {print s + 0}')
reports=$(grep -l 'the kernel reported a problem' "$logs"/*.log | wc -l)
scans=$(cat "$logs"/*.log | grep -c '^KMEMLEAK .* clean seconds=')
scan_seconds=$(cat "$logs"/*.log |
	sed -n 's/^KMEMLEAK .* clean seconds=\([0-9]*\)$/\1/p' |
	awk '{s += $1} END {print s + 0}')
leaks=$(cat "$logs"/*.log | grep -c '^KMEMLEAK .* unreferenced objects')
e2e=$(sed -n 's/^E2E summary //p' "$logs"/e2e.log 2>/dev/null)
echo "CHECK-DEBUG kernel $(basename "$kernel") (KASAN, kmemleak, lockdep, UBSAN)"
echo "CHECK-DEBUG tier: $scripts scripts, $gtests gtest cases passed"
echo "CHECK-DEBUG network fuzzing: $(field NETFUZZ conversations) conversations (seed $(field NETFUZZ seed)), $(field NETFUZZ server_disconnects) ended by the driver, $(field NETFUZZ valid_checks) valid checks, result $(field NETFUZZ result)"
echo "CHECK-DEBUG ioctl fuzzing: $(field IOCTLFUZZ ioctls) ioctls in $(field IOCTLFUZZ processes) processes x $(field IOCTLFUZZ threads) threads (seed $(field IOCTLFUZZ seed)), $(field IOCTLFUZZ forks) forks, result $(field IOCTLFUZZ result)"
echo "CHECK-DEBUG e2e: ${e2e:-not run}"
echo "CHECK-DEBUG faults: $(field 'FAULT summary' faults_injected) injected, soak: $(sed -n 's/^SOAK \(PASS\|FAIL\) //p' "$logs"/faults.log 2>/dev/null | head -n 1)"
echo "CHECK-DEBUG network faults on two hosts: $(field 'NETEM summary' faults_injected) injected ($(field 'NETEM summary' by_kind)), soak: $(sed -n 's/^NETEM soak \(PASS\|FAIL\) //p' "$logs"/net-faults.log 2>/dev/null | head -n 1)"
echo "CHECK-DEBUG data verified: $(field 'FAULT summary' data_verified_bytes) bytes in the faults and soak, mismatches $(field SOAK mismatches); $(field 'NETEM summary' data_verified_bytes) bytes in the network faults and soak, mismatches $(field 'NETEM soak' mismatches)"
echo "CHECK-DEBUG kmemleak: $scans scans clean ($scan_seconds s of scanning), $leaks with leaks"
echo "CHECK-DEBUG kernel reports: $reports"
# The figures above add up every boot's log, also those kept from an
# earlier run: say which is which. A boot passed on other inputs does not
# count.
failed=
status=
booted=0
for b in $all; do
	if [ ! -e "$logs/$b.log" ]; then
		r="not run"
	elif passed_here "$b"; then
		r=passed
		booted=$((booted + $(sed -n 's/.* seconds=\([0-9]*\).*/\1/p' "$logs/$b.passed")))
	elif [ -e "$logs/$b.passed" ]; then
		r="passed on other inputs"
	else
		r=FAILED
	fi
	[ "$r" = passed ] || failed="$failed $b"
	[ "$r" = "not run" ] || case " $boots " in *" $b "*) ;; *) r="$r in an earlier run" ;; esac
	status="$status${status:+, }$b $r"
done
echo "CHECK-DEBUG boots: $status"
echo "CHECK-DEBUG wall time: $(($(date +%s) - run_start)) s, lanes: $jobs; the passed boots took $booted s (inputs $inputs)"
if [ -n "$failed" ]; then
	echo "CHECK-DEBUG FAILED:$failed (logs in $logs)"
	exit 1
fi
echo "CHECK-DEBUG passed"
