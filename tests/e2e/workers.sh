# Background cifs I/O for the faults and the soak, and the checks around
# it (sourced after lib.sh).
# Each worker writes one of eight slices of the test data to a file of its
# own, cached (cp) or O_DIRECT (dd) in turn, and reads it back O_DIRECT,
# so from the server; it logs every step. A read that succeeds with other
# bytes than written is a mismatch, whatever a fault did; a step that fails
# during a fault is an error, and the file is not counted until a later
# write of it succeeds.
WORK_DIR=$E2E_DIR/work
WORKER_PIDS=
# what the mount asks for (mount_share)
OPTS="rdma,vers=3.1.1"
SOAK_SECONDS=${E2E_SOAK_SECONDS:-240}
SOAK_EVERY=${E2E_SOAK_EVERY:-40}
# how long a worker may take to end its step once told to stop; one that
# takes longer is stuck in the client's kernel, and so is the client
STUCK_SECONDS=300
CLIENT_STUCK=
WORKERS=0
# the rounds that failed, the faults injected (and their names, one per
# injection), the bytes verified
FAILED=0
INJECTED=0
KINDS=
VERIFIED=0

workers_setup() {
	mkdir -p "$WORK_DIR"
	k=0
	while [ $k -lt 8 ]; do
		# 256 KiB to 2 MiB, not page multiples: RDMA and a short tail
		dd if="$E2E_DIR/big" of="$WORK_DIR/slice$k" bs=4096 \
			skip=$((k * 64)) count=$(((k + 1) * 64)) status=none
		head -c -$((k * 511 + 1)) "$WORK_DIR/slice$k" >"$WORK_DIR/t" &&
			mv "$WORK_DIR/t" "$WORK_DIR/slice$k"
		k=$((k + 1))
	done
}

# put_slice <k> <file> <0: through the page cache, 1: O_DIRECT>
put_slice() {
	if [ "$3" = 0 ]; then
		cp "$WORK_DIR/slice$1" "$2" 2>/dev/null
	else
		dd if="$WORK_DIR/slice$1" of="$2" bs=65536 oflag=direct \
			status=none 2>/dev/null
	fi
}

# worker <index> <directory on the mount> <log>
worker() {
	n=0
	while [ ! -e "$WORK_DIR/stop" ]; do
		k=$(((n * 3 + $1) % 8))
		f=w$1-$((n % 4))
		if ! put_slice "$k" "$2/$f" $((n % 2)); then
			echo "writeerr $f $k" >>"$3"
			sleep 0.5
		elif ! dd if="$2/$f" iflag=direct bs=1048576 status=none \
			>"$WORK_DIR/r$1" 2>/dev/null; then
			echo "wrote $f $k" >>"$3"
			echo "readerr $f $k" >>"$3"
			sleep 0.5
		elif cmp -s "$WORK_DIR/r$1" "$WORK_DIR/slice$k"; then
			echo "wrote $f $k" >>"$3"
			echo "ok $f $k $(stat -c %s "$WORK_DIR/slice$k")" >>"$3"
		else
			echo "wrote $f $k" >>"$3"
			echo "MISMATCH $f $k" >>"$3"
		fi
		n=$((n + 1))
	done
	touch "$WORK_DIR/done$1"
}

# workers_start <count>
workers_start() {
	rm -f "$WORK_DIR/stop" "$WORK_DIR"/log* "$WORK_DIR"/done*
	mkdir -p "$E2E_MNT/work" || fail "mkdir on the mount failed" || return 1
	WORKER_PIDS=
	j=0
	while [ $j -lt "$1" ]; do
		: >"$WORK_DIR/log$j"
		worker $j "$E2E_MNT/work" "$WORK_DIR/log$j" &
		WORKER_PIDS="$WORKER_PIDS $!"
		j=$((j + 1))
	done
	WORKERS=$1
}

# workers_gone: every worker left its loop
workers_gone() {
	set -- "$WORK_DIR"/done*
	[ -e "$1" ] && [ $# = "$WORKERS" ]
}

# Each worker ends its step and leaves. One whose step never returns (a
# request the client's kernel never completes) is left behind and
# reported, not waited for.
workers_stop() {
	[ -n "$WORKER_PIDS" ] || return 0
	touch "$WORK_DIR/stop"
	# shellcheck disable=SC2086 # a list of pids
	kill -CONT $WORKER_PIDS 2>/dev/null
	if ! wait_until "$STUCK_SECONDS" workers_gone; then
		WORKER_PIDS=
		CLIENT_STUCK=1
		fail "workers stuck in the client's kernel for $STUCK_SECONDS s" ||
			return 1
	fi
	for p in $WORKER_PIDS; do wait "$p" 2>/dev/null; done
	WORKER_PIDS=
}

# Every file whose last write succeeded holds its slice, read through the
# mount and on the server's disk; no read ever returned other bytes.
workers_verify() {
	WORK_OPS=$(cat "$WORK_DIR"/log* | grep -c '^ok ')
	WORK_ERRORS=$(cat "$WORK_DIR"/log* | grep -c 'err ')
	WORK_MISMATCHES=$(cat "$WORK_DIR"/log* | grep -c '^MISMATCH')
	WORK_VERIFIED=$(cat "$WORK_DIR"/log* | awk '/^ok /{s+=$4} END{print s+0}')
	[ "$WORK_MISMATCHES" = 0 ] ||
		fail "$WORK_MISMATCHES reads returned other bytes than written: $(grep -h MISMATCH "$WORK_DIR"/log* | head -n 3)" ||
		return 1
	[ "$WORK_OPS" -gt 0 ] || fail "no worker completed a write and read" ||
		return 1
	sync
	echo 3 >/proc/sys/vm/drop_caches
	# the last write attempt of each file decides what it must hold
	for log in "$WORK_DIR"/log*; do
		awk '$1 == "wrote" { last[$2] = $3 }
			$1 == "writeerr" { delete last[$2] }
			END { for (f in last) print f, last[f] }' "$log"
	done >"$WORK_DIR/expect"
	while read -r f k; do
		server_file_is "work/$f" "$WORK_DIR/slice$k" ||
			fail "work/$f on the server is not slice $k" || return 1
		dd if="$E2E_MNT/work/$f" iflag=direct bs=1048576 status=none |
			cmp -s - "$WORK_DIR/slice$k" ||
			fail "work/$f read back is not slice $k" || return 1
		WORK_VERIFIED=$((WORK_VERIFIED + 2 * $(stat -c %s "$WORK_DIR/slice$k")))
	done <"$WORK_DIR/expect"
}

# After a fault: the workers stopped, their files and the kept ones
# verified, the mount gone.
work_verified() {
	workers_stop || return 1
	workers_verify || return 1
	kept_verify || return 1
	umount "$E2E_MNT" || fail "umount failed"
}

# Files written before a fault, verified after it.
kept_write() {
	mkdir -p "$E2E_MNT/kept" || fail "mkdir kept failed" || return 1
	cp "$E2E_DIR/big" "$E2E_MNT/kept/big" &&
		for k in 0 3 5 7; do cp "$WORK_DIR/slice$k" "$E2E_MNT/kept/s$k"; done ||
		fail "writing the kept files failed" || return 1
	sync
}

kept_verify() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	KEPT_BYTES=0
	for pair in "big $E2E_DIR/big" "s0 $WORK_DIR/slice0" \
		"s3 $WORK_DIR/slice3" "s5 $WORK_DIR/slice5" "s7 $WORK_DIR/slice7"; do
		set -- $pair
		cmp -s "$E2E_MNT/kept/$1" "$2" ||
			fail "kept/$1 read back differs" || return 1
		server_file_is "kept/$1" "$2" ||
			fail "kept/$1 on the server differs" || return 1
		KEPT_BYTES=$((KEPT_BYTES + 2 * $(stat -c %s "$2")))
	done
}

mount_share() {
	mount -t cifs "//$SMBD_ADDR/e2e" "$E2E_MNT" \
		-o "$OPTS,username=$E2E_USER,password=$E2E_PASS" ||
		fail "mount failed: $(dmesg | grep CIFS | tail -n 1)" || return 1
	grep -q "^SMBDirect" /proc/fs/cifs/DebugData ||
		fail "the mount is not over RDMA" || return 1
}

# wait_until <seconds> <condition>: by the clock, as one try of a
# condition on a mount that is down can itself take seconds
wait_until() {
	end=$(($(date +%s) + $1))
	until eval "$2"; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.2
	done
}

# The mount answers again: a file can be written and read back.
mount_serves() {
	{ echo probe >"$E2E_MNT/probe"; } 2>/dev/null &&
		[ "$(cat "$E2E_MNT/probe" 2>/dev/null)" = probe ]
}

# mount_recovers <seconds>: the mount serves within that time. The probe
# runs aside, so that one the client's kernel never answers ends the wait
# (and the run's use of this client) instead of the run.
mount_recovers() {
	rm -f "$WORK_DIR/serves"
	(until mount_serves; do sleep 0.2; done; touch "$WORK_DIR/serves") &
	probe=$!
	if wait_until "$1" '[ -e "$WORK_DIR/serves" ]'; then
		wait "$probe"
		return 0
	fi
	# stuck if the probe itself never came back from the kernel, not
	# merely because the server never took the client back
	for p in "$probe" $(pgrep -P "$probe"); do
		grep -q '^State:.*D' "/proc/$p/status" 2>/dev/null && CLIENT_STUCK=1
	done
	kill "$probe" 2>/dev/null
	fail "the mount did not serve within $1 s"
}

# client_usable <line's name>: what follows may use the client. Once its
# kernel is stuck, that is the line's failure.
client_usable() {
	[ -z "$CLIENT_STUCK" ] && return 0
	FAILED=$((FAILED + 1))
	echo "$1 FAIL not run: the client's kernel is stuck"
	return 1
}

# The mount gone. On a stuck client anything that looks at the mount
# joins the stuck tasks: it is only detached.
unmount_share() {
	if [ -n "$CLIENT_STUCK" ]; then
		umount -l "$E2E_MNT" 2>/dev/null
	else
		mountpoint -q "$E2E_MNT" && umount -f "$E2E_MNT" 2>/dev/null
		mountpoint -q "$E2E_MNT" && umount -l "$E2E_MNT"
	fi
	true
}

# the client's tasks in uninterruptible sleep
asleep_in_kernel() {
	grep -l '^State:.*D' /proc/[0-9]*/status 2>/dev/null | sed 's,/status,,'
}

# What the client holds when it stops answering: its tasks asleep in the
# kernel and where, the SMB Direct transport cifs reports, and the queue
# pairs and counters of its RDMA device.
client_state() {
	for d in $(asleep_in_kernel); do
		echo "task ${d#/proc/} $(cat "$d/comm" 2>/dev/null):" \
			"$(head -n 6 "$d/stack" 2>/dev/null | awk '{printf "%s ", $2}')"
	done
	timeout 10 grep -A16 '^SMBDirect' /proc/fs/cifs/DebugData
	rdma res show qp
	rdma statistic show
}

disconnects() {
	for f in "$COUNTERS"/disconnect_*; do
		printf '%s=%s ' "${f##*/disconnect_}" "$(cat "$f")"
	done
}

# The reasons whose counts changed between two disconnects() snapshots.
reasons_delta() {
	for kv in $2; do
		name=${kv%%=*}
		before=$(echo "$1" | tr ' ' '\n' | sed -n "s/^$name=//p")
		[ "${kv#*=}" = "${before:-0}" ] ||
			printf '%s+%s ' "$name" $((${kv#*=} - ${before:-0}))
	done
}

# Nothing of the run stays in the driver once smbd and the mount are gone.
driver_idle() {
	wait_until 60 '[ "$(counter conn_active)" = 0 ]' ||
		fail "$(counter conn_active) connections stayed in the driver" ||
		return 1
	[ "$(counter rdma_inflight)" = 0 ] ||
		fail "$(counter rdma_inflight) RDMA operations stayed in flight" ||
		return 1
}

# soak_faults <label> <faults>: one of the faults (fault_<name>, in turn)
# every SOAK_EVERY seconds until SOAK_SECONDS have passed, each followed by
# the mount's recovery; counts them in INJECTED, SOAK_N and KINDS.
soak_faults() {
	soak_label=$1 soak_list=$2
	SOAK_START=$(date +%s)
	SOAK_N=0
	while [ $(($(date +%s) - SOAK_START)) -lt "$SOAK_SECONDS" ]; do
		sleep "$SOAK_EVERY"
		set -- $soak_list
		shift $((SOAK_N % $#))
		f=$1
		FAULT_DID=
		"fault_$(echo "$f" | tr - _)" || return 1
		SOAK_N=$((SOAK_N + 1))
		INJECTED=$((INJECTED + 1))
		KINDS="$KINDS $f"
		echo "$soak_label fault $SOAK_N at $(($(date +%s) - SOAK_START)) s: $f ($FAULT_DID)"
		mount_recovers 300 ||
			fail "the mount did not recover from $f" || return 1
	done
}
