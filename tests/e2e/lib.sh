# Helpers of the e2e scenarios (sourced by tests/e2e/guest.sh).
E2E_DIR=/srv/smbdirect-e2e
E2E_MNT=/mnt/e2e
E2E_USER=e2e
E2E_PASS=e2e-Passw0rd
# twice the largest RDMA transfer (8 MiB); smbd.e2e_big_mb=64 on the guest's
# command line (SMBD_E2E_ARGS) makes a longer run
E2E_BIG_MB=${E2E_BIG_MB:-16}
# every size class of 1..16 KiB with each of 7 misalignments (16 x 7)
E2E_SMALL=${E2E_SMALL:-112}
# "interfaces" of smb.conf (E2E_INTERFACES), and one where the administrator
# calls the link RDMA capable
E2E_RDMA_INTERFACES="smbd0;capability=RSS,capability=RDMA"
E2E_PASSED=0
E2E_FAILED=0
E2E_WHY=
# when the last scenario ended (scenario_result), or the guest's run began
E2E_LAST_RESULT=$(date +%s)
COUNTERS=/sys/class/misc/smbd/counters
E2E_IWARP_ADDR=10.56.0.1
SMBD_PID=

fail() { E2E_WHY="$*"; return 1; }
counter() { cat "$COUNTERS/$1"; }
owned_connections() {
	grep -c 'state=owned' /sys/kernel/debug/smbdirect/connections
}
# "transport:port" of each owned connection, from the driver's list
connection_ports() {
	sed -n 's/^id=[0-9]* state=owned transport=\([a-z]*\) local=[^ ]*:\([0-9]*\) .*/\1:\2/p' \
		/sys/kernel/debug/smbdirect/connections | sort | paste -sd, -
}
IB_ON_IWARP=/sys/module/smbdirect/parameters/ib_on_iwarp_port
# the owner of each owned connection, and the smbd serving TCP port 445
connection_owners() {
	sed -n 's/^id=[0-9]* state=owned .* owner_pid=\([0-9]*\) .*/\1/p' \
		/sys/kernel/debug/smbdirect/connections | sort -u | paste -sd, -
}
tcp_smbd_pids() {
	ss -tnpH state established '( sport = :445 )' |
		sed -n 's/.*"smbd[^"]*",pid=\([0-9]*\).*/\1/p' | sort -u | paste -sd, -
}

# smbd's processes by name (pgrep -x; procps warns about a pattern over
# 15 characters): 4.22 names a client's process "smbd[<client's address>]"
# (cut to 15 characters) and the cleanup daemon "smbd-cleanupd"
# (process_set_title()); 4.17 calls them "smbd" and "cleanupd"
SMBD_CLIENT_NAME='smbd(\[.*)?'
SMBD_CLEANUPD_NAME='.*cleanupd'

# on_server <command>: the shell command, in the server's shell: here in
# one guest; in the client guest of a pair (tools/e2e/run.sh with
# SMBD_E2E_PAIR=1), sent with the scenario's settings (server_env) to
# serve_client in the server guest through the directory both share.
# Prints its output and returns its status; when it fails, E2E_WHY says
# why (unless called in a command substitution).
on_server() {
	[ "${SMBD_ROLE:-}" = client ] || { eval "$1"; return; }
	# numbered in a file, as a command substitution or a pipe runs this
	# in a subshell
	srv_n=$(($(cat "$SMBD_SHARED/seq" 2>/dev/null || echo 0) + 1))
	echo $srv_n >"$SMBD_SHARED/seq"
	srv_req=$SMBD_SHARED/req.$srv_n
	printf '%s%s\n' "$(server_env)" "$1" >"$srv_req.new" &&
		mv "$srv_req.new" "$srv_req"
	srv_i=0
	until [ -e "$SMBD_SHARED/rc.$srv_n" ]; do
		srv_i=$((srv_i + 1))
		[ $srv_i -lt 6000 ] && [ ! -e "$SMBD_SHARED/server-exit" ] ||
			fail "the server did not answer: $1" || return 125
		sleep 0.1
	done
	cat "$SMBD_SHARED/out.$srv_n"
	srv_rc=$(cat "$SMBD_SHARED/rc.$srv_n")
	[ "$srv_rc" = 0 ] ||
		fail "server: $(tail -n 1 "$SMBD_SHARED/out.$srv_n")" ||
		return "$srv_rc"
}

# The settings of a scenario the server's side reads, as assignments.
server_env() {
	for srv_v in E2E_CONF_EXTRA E2E_SERVER E2E_SMBD_RDMA; do
		eval "srv_val=\${$srv_v-}"
		printf "%s='%s'; " "$srv_v" \
			"$(printf '%s' "$srv_val" | sed "s/'/'\\\\''/g")"
	done
}

# serve_client: in the server guest of a pair, runs what the client's
# on_server sends, in order, until it sends "end" (returns 0) or exits
# without (returns 1). A command that fails prints why (E2E_WHY). The
# commands run in this shell (start_smbd sets SMBD_PID): one that changes
# directory does it in a subshell.
serve_client() {
	n=1
	# the client stops waiting for answers when this shell ends
	trap 'touch "$SMBD_SHARED/server-exit"' EXIT
	touch "$SMBD_SHARED/server-ready"
	while :; do
		req=$SMBD_SHARED/req.$n
		if [ -e "$req" ]; then
			cmd=$(cat "$req")
			req_rc=0
			if [ "${cmd##*; }" = end ]; then
				: >"$SMBD_SHARED/out.$n"
			else
				E2E_WHY=
				eval "$cmd" >"$SMBD_SHARED/out.$n" 2>&1
				req_rc=$?
				[ $req_rc = 0 ] ||
					echo "$E2E_WHY" >>"$SMBD_SHARED/out.$n"
			fi
			echo $req_rc >"$SMBD_SHARED/rc.$n.new"
			mv "$SMBD_SHARED/rc.$n.new" "$SMBD_SHARED/rc.$n"
			[ "${cmd##*; }" != end ] || return 0
			n=$((n + 1))
		elif [ -e "$SMBD_SHARED/client-exit" ]; then
			echo "the client ended without its last request" >&2
			return 1
		else
			sleep 0.1
		fi
	done
}

# await_server: in the client guest of a pair, until serve_client runs
await_server() {
	wait_for 3000 [ -e "$SMBD_SHARED/server-ready" ] ||
		fail "the server guest did not get ready"
}

# wait_for <tries> <command...>: runs the command every tenth of a second
# until it succeeds, at most <tries> times
wait_for() {
	wait_n=$1
	shift
	until "$@"; do
		wait_n=$((wait_n - 1))
		[ $wait_n -gt 0 ] || return 1
		sleep 0.1
	done
}

# server_file_is <path in the share> <file>: the server's disk holds the
# file's bytes there
server_file_is() {
	[ "$(on_server "md5sum <\"\$E2E_DIR/share/$1\"")" = "$(md5sum <"$2")" ]
}

# The client's data: the big file, checksummed once, and the small files
# cut from it.
test_data() {
	mkdir -p "$E2E_DIR" "$E2E_MNT" || fail "cannot make directories" ||
		return 1
	dd if=/dev/urandom of="$E2E_DIR/big" bs=1M count="$E2E_BIG_MB" \
		2>/dev/null || fail "no test data" || return 1
	E2E_BIG_SUM=$(md5sum <"$E2E_DIR/big")
	small_files || fail "no small files"
}

e2e_setup() {
	mkdir -p "$E2E_DIR"/lock "$E2E_DIR"/state "$E2E_DIR"/cache \
		"$E2E_DIR"/private "$E2E_DIR"/run "$E2E_DIR"/share \
		"$E2E_DIR"/log "$E2E_MNT" || fail "cannot make directories"
	id "$E2E_USER" >/dev/null 2>&1 ||
		useradd -M -u 4242 "$E2E_USER" || fail "useradd failed"
	chown "$E2E_USER" "$E2E_DIR/share"
	test_data || return 1
	write_conf auto
	printf '%s\n%s\n' "$E2E_PASS" "$E2E_PASS" |
		"$SMBD_SAMBA/bin/pdbedit" -s "$E2E_DIR/smb.conf" -a -t \
			-u "$E2E_USER" >"$E2E_DIR/log/pdbedit.log" 2>&1 ||
		fail "pdbedit: $(tail -n 1 "$E2E_DIR/log/pdbedit.log")"
}

# smb.conf with "server signing" = $1, "server max protocol" = $2 (SMB3)
write_conf() {
	cat >"$E2E_DIR/smb.conf" <<CONF
[global]
	netbios name = E2E
	server role = standalone server
	passdb backend = tdbsam
	server smb direct = yes
	server min protocol = SMB3_00
	server max protocol = ${2:-SMB3}
	server signing = $1
	interfaces = "${E2E_INTERFACES:-smbd0;capability=RSS}"
	smb ports = 445
	log file = $E2E_DIR/log/log.%m
	log level = 1
	lock directory = $E2E_DIR/lock
	state directory = $E2E_DIR/state
	cache directory = $E2E_DIR/cache
	private dir = $E2E_DIR/private
	pid directory = $E2E_DIR/run
	ncalrpc dir = $E2E_DIR/run/ncalrpc
	load printers = no
	disable spoolss = yes
${E2E_CONF_EXTRA:-}
[e2e]
	path = $E2E_DIR/share
	read only = no
CONF
}

# smbd_ready: what start_smbd waits for. E2E_SMBD_RDMA=on: the master
# registered as the driver's listener; off: it logged that it could not;
# tcp: SMB Direct is off in smb.conf, TCP port 445 listens
smbd_ready() {
	case ${E2E_SMBD_RDMA:-on} in
	on) listening yes 1 ;;
	off) grep -q "SMB Direct is off" "$E2E_DIR/log/smbd.out" ;;
	tcp) tcp_445_listens ;;
	esac
}

# a socket listens on TCP port 445 (state 0A: a connection of an earlier
# server to that port may linger)
tcp_445_listens() {
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
		awk '$2 ~ /:01BD$/ && $4 == "0A" { found = 1 } END { exit !found }'
}

# listening yes|no [tries] [pid]: whether the smbd master (or process
# [pid]) holds the driver's listener, waiting up to [tries] (100) tenths
# of a second for it
listening() {
	tries=0
	while :; do
		now=no
		grep -q "listener_pid=${3:-$SMBD_PID}" \
			/sys/kernel/debug/smbdirect/sessions 2>/dev/null && now=yes
		[ "$now" = "$1" ] && return 0
		tries=$((tries + 1))
		[ $tries -lt "${2:-100}" ] || return 1
		sleep 0.1
	done
}

# start_smbd <server signing>: $E2E_CONF_EXTRA adds [global] lines,
# E2E_SMBD_RDMA says what it waits for (smbd_ready)
start_smbd() {
	write_conf "$1"
	# its own session: at exit the parent signals its whole process group
	setsid "$SMBD_SAMBA/sbin/smbd" -s "$E2E_DIR/smb.conf" -F --no-process-group \
		--debug-stdout >"$E2E_DIR/log/smbd.out" 2>&1 &
	SMBD_PID=$!
	i=0
	until smbd_ready; do
		i=$((i + 1))
		[ $i -lt 300 ] && kill -0 "$SMBD_PID" 2>/dev/null ||
			fail "smbd did not start listening: $(tail -n 3 "$E2E_DIR/log/smbd.out")" ||
			return 1
		sleep 0.1
	done
}

# start_smbd_tcp: smbd with "server smb direct" off (a reload may turn
# it on)
start_smbd_tcp() {
	E2E_CONF_EXTRA="	server smb direct = no" E2E_SMBD_RDMA=tcp start_smbd auto
}

# the processes that hold /dev/smbd open
device_holders() {
	for fd in /proc/[0-9]*/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = /dev/smbd ] || continue
		p=${fd#/proc/}
		echo "${p%%/*}"
	done | sort -u | paste -sd' ' -
}

stop_smbd() {
	[ -n "$SMBD_PID" ] || return 0
	kill -TERM "$SMBD_PID" 2>/dev/null
	wait "$SMBD_PID" 2>/dev/null || true
	SMBD_PID=
	# children end with their connections
	i=0
	while pgrep -x "$SMBD_CLIENT_NAME" >/dev/null && [ $i -lt 100 ]; do
		i=$((i + 1))
		sleep 0.1
	done
}

# ksmbd, the in-kernel reference server, on the same share and user. It
# serves RDMA on 445, which the driver holds only while an smbd is
# registered; the client tries 5445 first, finds no listener there and
# falls back to 445.
start_ksmbd() {
	mkdir -p /etc/ksmbd
	cat >/etc/ksmbd/ksmbd.conf <<CONF
[global]
	netbios name = E2EK
	server signing = $1
	server multi channel support = yes
	interfaces = smbd0
[e2e]
	path = $E2E_DIR/share
	read only = no
CONF
	ksmbd.adduser -a -p "$E2E_PASS" "$E2E_USER" >/dev/null 2>&1 ||
		ksmbd.adduser -u -p "$E2E_PASS" "$E2E_USER" >/dev/null 2>&1 ||
		fail "ksmbd.adduser failed" || return 1
	# a module of the e2e kernel, which ksmbd.mountd does not load
	modprobe ksmbd || fail "cannot load ksmbd" || return 1
	ksmbd.mountd >"$E2E_DIR/log/ksmbd.out" 2>&1 ||
		fail "ksmbd.mountd failed: $(tail -n 2 "$E2E_DIR/log/ksmbd.out")" ||
		return 1
	i=0
	until tcp_445_listens; do
		i=$((i + 1))
		[ $i -lt 300 ] || fail "ksmbd did not listen on 445" || return 1
		sleep 0.1
	done
	# its RDMA listener comes after the TCP one (ksmbd_conn_transport_init()):
	# a mount between the two found no RDMA listener (under load)
	until rdma res show cm_id 2>/dev/null | grep -q 'LISTEN.*\[ksmbd\]'; do
		i=$((i + 1))
		[ $i -lt 600 ] || fail "ksmbd did not listen for RDMA" || return 1
		sleep 0.1
	done
}

stop_ksmbd() {
	ksmbd.control -s >/dev/null 2>&1
	i=0
	while pgrep -x ksmbd.mountd >/dev/null && [ $i -lt 100 ]; do
		i=$((i + 1))
		sleep 0.1
	done
}

# soft-iWARP on a netdev of its own, so that its address takes siw0 (the
# e2e kernel builds siw); down again before ksmbd starts, which would
# move its RDMA port to 5445 on seeing an iWARP device
siw_up() {
	modprobe siw && ip link add smbd1 type dummy && ip link set smbd1 up &&
		ip addr add "$E2E_IWARP_ADDR/24" dev smbd1 &&
		rdma link add siw0 type siw netdev smbd1 ||
		fail "soft-iWARP setup failed"
}
siw_down() {
	rdma link delete siw0
	ip link delete smbd1
	modprobe -r siw
}

start_server() {
	case ${E2E_SERVER:-samba} in
	samba) start_smbd "$1" ;;
	ksmbd) start_ksmbd "$1" ;;
	esac
}

stop_server() {
	case ${E2E_SERVER:-samba} in
	samba) stop_smbd ;;
	ksmbd) stop_ksmbd ;;
	esac
}

e2e_teardown() {
	stop_smbd
	stop_ksmbd
}

# kmemleak on the debug kernel (tools/vm/kmemleak.sh)
no_leaks() {
	sh "$SMBD_REPO/tools/vm/kmemleak.sh" "$1" ||
		fail "kmemleak found unreferenced objects"
}

# warm_up_mount: on the debug kernel (kmemleak), one mount over SMB Direct
# before the first scenario, whose outcome is printed and counts for
# nothing: under TCG the boot's first session setup there has outlasted
# the driver's 30 s setup_timeout (cifs then fails with -112) while later
# ones in the same boot did not, whatever smbd served them.
warm_up_mount() {
	[ -e /sys/kernel/debug/kmemleak ] || return 0
	started=$(date +%s)
	if mount_e2e "rdma,vers=3.1.1"; then
		umount "$E2E_MNT"
		echo "E2E warm-up: the boot's first mount over SMB Direct took $(($(date +%s) - started)) s"
	else
		echo "E2E warm-up: the boot's first mount over SMB Direct failed after $(($(date +%s) - started)) s: $E2E_WHY"
	fi
	E2E_WHY=
	E2E_LAST_RESULT=$(date +%s)
}

# leak_checkpoint <label>: kmemleak on every host, at a few points of a
# boot rather than after each scenario or fault: two scans take about
# 100 s on the debug kernel under TCG, and a leak stays unreferenced once
# made, so the check after the module's unload at the end of every boot
# (tools/vm/guest-run.sh) finds it too; a checkpoint narrows it down to
# the scenarios since the last one. Prints "E2E <label> FAIL" on a leak,
# which fails the run.
leak_checkpoint() {
	E2E_WHY=
	ok=0
	on_server "no_leaks $1" || ok=1
	[ "${SMBD_ROLE:-}" != client ] || no_leaks "$1" || ok=1
	# the scans' time is no scenario's
	E2E_LAST_RESULT=$(date +%s)
	[ "$ok" = 0 ] && return 0
	E2E_FAILED=$((E2E_FAILED + 1))
	echo "E2E leak-checkpoint-$1 FAIL $E2E_WHY"
	return 1
}

# The client's view: channels of the session (primary + extra).
client_channels() {
	extra=$(sed -n 's/.*Extra Channels: \([0-9]*\).*/\1/p' \
		/proc/fs/cifs/DebugData | head -n 1)
	echo $((1 + ${extra:-0}))
}

# run_scenario <name> <workload> <mount options> <channels> <mode>
# mode: rdma (the big file both ways by RDMA), inline (by PDUs only), some
# (some file bytes both ways by RDMA: a TCP session with an RDMA channel).
# E2E_ADDR: the server address to mount (default $SMBD_ADDR); E2E_CONN:
# every RDMA connection must be this transport:port; E2E_IB_ON_IWARP: the driver's
# ib_on_iwarp_port (N: RoCE on 5445 is refused) for the scenario;
# E2E_RDMA_CHANNELS: channels that are RDMA (default: all), and when fewer,
# the primary is TCP and the driver's connections must be owned by the smbd
# that serves the TCP connection (Windows' flow). What concerns the server
# runs on_server: in a pair, in the server guest.
run_scenario() {
	name=$1 workload=$2 opts=$3 want_channels=$4 mode=$5
	E2E_WHY= E2E_OWNERS=
	[ -z "${E2E_IB_ON_IWARP:-}" ] ||
		on_server "echo $E2E_IB_ON_IWARP >$IB_ON_IWARP"
	if [ -z "${E2E_EXT4:-}" ] || on_server "ext4_share 128"; then
		scenario "$workload" "$opts" "$want_channels" "$mode"
		ok=$?
	else
		ok=1
	fi
	[ -z "${E2E_IB_ON_IWARP:-}" ] || on_server "echo Y >$IB_ON_IWARP"
	mountpoint -q "$E2E_MNT" && umount "$E2E_MNT"
	on_server 'stop_server; rm -rf "${E2E_DIR:?}/share/"*'
	[ -z "${E2E_EXT4:-}" ] || on_server ext4_share_off || ok=1
	scenario_result "$name" $ok
}

# scenario_result <name> <status>: the scenario's line, ending with the
# seconds since the line before ([N s]); the server's and the kernel's last
# words when it failed.
scenario_result() {
	ok=$2
	now=$(date +%s)
	took="[$((now - E2E_LAST_RESULT)) s]"
	E2E_LAST_RESULT=$now
	if [ "$ok" = 0 ]; then
		E2E_PASSED=$((E2E_PASSED + 1))
		echo "E2E $1 PASS $E2E_DETAIL $took"
	else
		E2E_FAILED=$((E2E_FAILED + 1))
		echo "E2E $1 FAIL $E2E_WHY $took"
		on_server 'tail -n 20 "$E2E_DIR/log/smbd.out"' | sed 's/^/  smbd: /'
		dmesg | tail -n 15 | sed 's/^/  kernel: /'
		[ "${SMBD_ROLE:-}" != client ] ||
			on_server 'dmesg | tail -n 15' | sed 's/^/  server kernel: /'
	fi
}

smb2() {
	"$SMBD_BUILD/tools/client/smbdirect-smb2" --addr "${E2E_ADDR:-$SMBD_ADDR}" \
		--user "$E2E_USER" --password "$E2E_PASS" --share e2e "$@" 2>&1
}

# smb2_reloaded <pattern>: after a SIGHUP, SMB Direct sessions until one
# negotiates what <pattern> says (the parent reloads when its loop next
# turns: the first sessions may still meet the old policy); with signing
# mandatory the session's RDMA I/O is refused, as smb2-signed-no-rdma
# checks
smb2_reloaded() {
	kill -HUP "$SMBD_PID"
	i=0
	until out=$(smb2 session); printf '%s\n' "$out" | grep -q "$1"; do
		i=$((i + 1))
		[ $i -lt 10 ] || break
		sleep 1
	done
	[ $i -lt 10 ] && return 0
	fail "after the reload: $(printf '%s\n' "$out" | grep -v '^SMB2' | tail -n 1; printf '%s\n' "$out" | tail -n 1)"
	printf '%s\n' "$out" | sed 's/^/  smb2: /'
	return 1
}

# smb2_reload: smbd reloads (SIGHUP) a configuration with another protocol
# range and mandatory signing, then one with another NetBIOS name (which
# makes the ServerGuid): each next SMB Direct session, and an SMB Direct
# channel binding to a TCP session, gets what the configuration answers,
# which the kernel gives from the policy
smb2_reload() {
	E2E_WHY= E2E_DETAIL=
	ok=1
	if start_smbd auto; then
		if ! out=$(smb2 session) ||
			! printf '%s\n' "$out" | grep -q 'negotiated SMB 3.1.1, signing enabled'; then
			fail "before the reload: $(printf '%s\n' "$out" | tail -n 1)"
		elif write_conf mandatory SMB3_02 &&
			smb2_reloaded 'negotiated SMB 3.0.2, signing required' &&
			E2E_CONF_EXTRA="	netbios name = E2E2" write_conf auto &&
			smb2_reloaded 'negotiated SMB 3.1.1, signing enabled'; then
			if out=$(smb2 windows-flow); then
				ok=0
				E2E_DETAIL="3.1.1 signing enabled, 3.0.2 signing required, a new ServerGuid bound to"
			else
				fail "after the new NetBIOS name: $(printf '%s\n' "$out" | tail -n 1)"
				printf '%s\n' "$out" | sed 's/^/  smb2: /'
			fi
		fi
	fi
	stop_smbd
	scenario_result smb2-reload $ok
}

# smb2_remote_names: what a client's NEGOTIATE says of it (%a, %R) reaches
# smb.conf over SMB Direct as over TCP: each tree connect's root preexec
# names a file after them
smb2_remote_names() {
	E2E_WHY= E2E_DETAIL=
	ok=1
	names=$E2E_DIR/log/remote-names
	rm -rf "$names"
	mkdir -p "$names"
	if E2E_CONF_EXTRA="	root preexec = touch $names/%a-%R" start_smbd auto; then
		if ! out=$(smb2 session); then
			fail "over SMB Direct: $(printf '%s\n' "$out" | tail -n 1)"
		else
			rdma=$(ls "$names" | paste -sd " " -)
			rm -f "$names"/*
			if ! out=$(smb2 --tcp session); then
				fail "over TCP: $(printf '%s\n' "$out" | tail -n 1)"
			else
				tcp=$(ls "$names" | paste -sd " " -)
				if [ -z "$tcp" ] || [ "$rdma" != "$tcp" ]; then
					fail "%a-%R over SMB Direct '$rdma', over TCP '$tcp'"
				else
					ok=0
					E2E_DETAIL="%a-%R $rdma over both"
				fi
			fi
		fi
	fi
	stop_smbd
	rm -rf "$names"
	scenario_result smb2-remote-names $ok
}

# smb2_reload_on_off: "server smb direct" off at start, turned on by a
# reload; a configuration SMB Direct cannot serve (no SMB 3) takes the
# listener down rather than leave the old answer; a good one brings it
# back
smb2_reload_on_off() {
	E2E_WHY= E2E_DETAIL=
	ok=1
	if start_smbd_tcp; then
		if listening yes 20; then
			fail "SMB Direct served while off"
		elif ! write_conf auto || ! kill -HUP "$SMBD_PID" ||
			! listening yes; then
			fail "turned on by a reload: no listener"
		elif ! out=$(smb2 session); then
			fail "turned on: $(printf '%s\n' "$out" | tail -n 1)"
		elif ! E2E_CONF_EXTRA="	server min protocol = SMB2_10" \
			write_conf auto SMB2_10 || ! kill -HUP "$SMBD_PID" ||
			! listening no; then
			fail "a configuration without SMB 3 left the listener up"
		elif ! write_conf auto || ! kill -HUP "$SMBD_PID" ||
			! listening yes; then
			fail "a good configuration again: no listener"
		elif ! out=$(smb2 session); then
			fail "back on: $(printf '%s\n' "$out" | tail -n 1)"
		else
			ok=0
			E2E_DETAIL="off, on, off without SMB 3, on again"
		fi
	fi
	stop_smbd
	scenario_result smb2-reload-on-off $ok
}

# live_channel_kept <id> <when>: connection <id> is still the mount's
# (owned), no connection ended, and the big file reads back through it
# from the server
live_channel_kept() {
	[ "$(owned_ids)" = "$1" ] ||
		fail "$2: the mount's connection $1 is now '$(owned_ids)'" ||
		return 1
	[ "$(disconnects)" = "$E2E_DISCONNECTS" ] ||
		fail "$2: connections ended (disconnect_* $E2E_DISCONNECTS, now $(disconnects))" ||
		return 1
	echo 3 >/proc/sys/vm/drop_caches
	[ "$(md5sum <"$E2E_MNT/live")" = "$E2E_BIG_SUM" ] ||
		fail "$2: the file read back differs"
}
# the connections that ended, whatever the reason
disconnects() { cat "$COUNTERS"/disconnect_* | awk '{ n += $1 } END { print n }'; }
# the ids of the connections an smbd owns
owned_ids() {
	sed -n 's/^id=\([0-9]*\) state=owned .*/\1/p' \
		/sys/kernel/debug/smbdirect/connections | paste -sd' ' -
}
# conn_ids_are <ids>: waits up to 10 s for the connections that end to
# be gone, in any state (the driver counts a connection's end before it
# removes it)
conn_ids_are() {
	wait_for 100 conn_ids_equal "$1" ||
		fail "connections '$(conn_ids)', expected '$1'"
}
conn_ids_equal() { [ "$(conn_ids)" = "$1" ]; }
conn_ids() {
	sed -n 's/^id=\([0-9]*\) .*/\1/p' \
		/sys/kernel/debug/smbdirect/connections | paste -sd' ' -
}

# smb2_reload_live: a cifs mount over SMB Direct stays through reloads,
# each after a SIGHUP has taken effect: "server smb direct" turned off
# (the listener goes; live connections stay with their smbd) and on
# again (it comes back), and a new "server smb direct max io size"
# (for new connections only; a session of our client shows it, and its
# connection's end is not counted against the mount's): after each, the
# same connection, owned, no connection ended, and the big file reads
# back through it
smb2_reload_live() {
	E2E_WHY= E2E_DETAIL=
	ok=1
	if start_smbd auto; then
		if ! mount_e2e "rdma,vers=3.1.1"; then
			:
		elif ! cp "$E2E_DIR/big" "$E2E_MNT/live"; then
			fail "cannot write the file"
		else
			id=$(owned_ids) E2E_DISCONNECTS=$(disconnects)
			if [ -z "$id" ]; then
				fail "no connection owned for the mount"
			elif ! E2E_CONF_EXTRA="	server smb direct = no" \
				write_conf auto || ! kill -HUP "$SMBD_PID" ||
				! listening no; then
				fail "SMB Direct turned off: the listener stayed"
			elif ! live_channel_kept "$id" "turned off"; then
				:
			elif ! write_conf auto || ! kill -HUP "$SMBD_PID" ||
				! listening yes; then
				fail "SMB Direct turned on again: no listener"
			elif ! live_channel_kept "$id" "turned on again"; then
				:
			elif ! E2E_CONF_EXTRA="	server smb direct max io size = 1048576" \
				write_conf auto ||
				! smb2_reloaded "MaxReadWriteSize 1048576$"; then
				:
			elif ! conn_ids_are "$id" ||
				! E2E_DISCONNECTS=$(disconnects) ||
				! live_channel_kept "$id" "max io size changed"; then
				:
			else
				ok=0
				E2E_DETAIL="connection $id kept through off, on and a new max io size"
			fi
			rm -f "$E2E_MNT/live"
		fi
		mountpoint -q "$E2E_MNT" && ! umount "$E2E_MNT" &&
			{ ok=1; fail "umount failed"; }
	fi
	stop_smbd
	scenario_result smb2-reload-live $ok
}

# smb2_holder stopped|refusing: a new SMB Direct session of a ClientGuid
# whose smbd (a TCP session's) cannot take it: stopped (SIGSTOP), it does
# not answer, and the child forked for the session waits for it a while;
# forked while "server smb direct" was off and turned on by a reload, it
# refuses at once. Either way the child serves the session itself and
# logs the holder's answer: NT_STATUS_IO_TIMEOUT for none,
# NT_STATUS_NOT_SUPPORTED for the refusal. A stopped smbd, continued,
# finds the connection claimed.
smb2_holder() {
	E2E_WHY= E2E_DETAIL=
	ok=1 holder= cued=
	case $1 in
	stopped) answer=NT_STATUS_IO_TIMEOUT started="start_smbd auto" ;;
	refusing) answer=NT_STATUS_NOT_SUPPORTED started=start_smbd_tcp ;;
	esac
	if $started && on_cue_start rdma-after-tcp-on-cue; then
		holder=$(tcp_smbd_pids)
		if [ -z "$holder" ]; then
			fail "no smbd of the TCP session: '$holder'"
		elif [ "$1" = stopped ]; then
			if kill -STOP "$holder"; then
				cued=1
			else
				fail "cannot stop the TCP session's smbd '$holder'"
			fi
		elif ! write_conf auto || ! kill -HUP "$SMBD_PID" ||
			! listening yes; then
			fail "SMB Direct turned on by a reload: no listener"
		else
			cued=1
		fi
		on_cue_end && ok=0
		[ "$1" != stopped ] || [ -z "$cued" ] || kill -CONT "$holder"
		if [ -z "$cued" ]; then
			ok=1
		elif [ $ok = 0 ] && ! grep -q "not passed to its holder: $answer" \
			"$E2E_DIR/log/smbd.out"; then
			ok=1
			fail "the child did not log the holder's answer $answer: $(
				grep "not passed to its holder" "$E2E_DIR/log/smbd.out")"
		fi
		[ $ok != 0 ] ||
			E2E_DETAIL="the TCP session's smbd $holder $1: $answer"
	fi
	on_cue_done
	stop_smbd
	scenario_result "smb2-rdma-after-$1-holder" $ok
}

# on_cue_start <check>: the client's <check> (one that waits for a line on
# standard input) in the background, until it says it waits; its output
# goes to $cue_out
on_cue_start() {
	cue_fifo=$E2E_DIR/cue.fifo cue_out=$E2E_DIR/cue.out cue_client=
	rm -f "$cue_fifo" && mkfifo "$cue_fifo" ||
		fail "mkfifo $cue_fifo" || return 1
	smb2 "$1" <"$cue_fifo" >"$cue_out" &
	cue_client=$!
	exec 9>"$cue_fifo"
	wait_for 300 grep -qs "waiting for a line" "$cue_out" ||
		fail "the client did not reach its cue: $(tail -n 1 "$cue_out")"
}
# on_cue_end: the client gets its line; its verdict
on_cue_end() {
	# a client that ended already reads no line: no SIGPIPE here
	! kill -0 "$cue_client" 2>/dev/null || (echo go >&9) 2>/dev/null
	exec 9>&-
	wait "$cue_client"
	rc=$? cue_client=
	[ $rc = 0 ] ||
		fail "$(sed -n 's/^SMB2 \(.* FAIL .*\)/\1/p' "$cue_out")"
}
# on_cue_done: a client still waiting gets no line; its output, if the
# scenario failed; its files gone
on_cue_done() {
	[ -z "${cue_client:-}" ] || { exec 9>&-; wait "$cue_client"; }
	cue_client=
	[ -n "${cue_out:-}" ] || return 0
	[ "$ok" = 0 ] || [ ! -e "$cue_out" ] || sed 's/^/  smb2: /' "$cue_out"
	rm -f "$cue_fifo" "$cue_out"
}

# smb2_debug_class: the smbdirect debug class alone at level 10 logs the
# SMB Direct transport's level-5 message of a new channel and none of
# smb2's per-request level-10 ones, and smb2 alone the other way round
# (smbd logs to stdout without headers, so the classes are told apart
# by their messages)
smb2_debug_class_session() {
	E2E_CONF_EXTRA="	log level = 1 $1:10" start_smbd auto || return 1
	out=$(smb2 session) ||
		fail "session with $1:10: $(printf '%s\n' "$out" | tail -n 1)"
	r=$?
	stop_smbd
	return $r
}
smb2_debug_class() {
	E2E_WHY= E2E_DETAIL=
	ok=1
	log=$E2E_DIR/log/smbd.out
	channel='SMB Direct channel from' request='opcode\[SMB2_OP_'
	if ! smb2_debug_class_session smbdirect; then
		:
	elif ! grep -q "$channel" "$log" || grep -q "$request" "$log"; then
		fail "smbdirect:10: $(grep -c "$channel" "$log") channel and $(grep -c "$request" "$log") request messages, expected some and none"
	elif ! smb2_debug_class_session smb2; then
		:
	elif grep -q "$channel" "$log" || ! grep -q "$request" "$log"; then
		fail "smb2:10: $(grep -c "$channel" "$log") channel and $(grep -c "$request" "$log") request messages, expected none and some"
	else
		ok=0
		E2E_DETAIL="smbdirect:10 and smb2:10 each log their own class alone"
	fi
	scenario_result smb2-debug-class $ok
}

# testparm_warns <warning expected, or "" for none> <signing> [<max
# protocol>]: what testparm says of "server smb direct" for the smb.conf
# of write_conf (and E2E_CONF_EXTRA)
testparm_warns() {
	write_conf "$2" "${3:-}"
	got=$("$SMBD_SAMBA/bin/testparm" -s "$E2E_DIR/smb.conf" 2>&1 >/dev/null |
		grep -i 'smb direct')
	if [ -z "$1" ]; then
		[ -z "$got" ] || fail "unexpected: $got"
	else
		printf '%s\n' "$got" | grep -q "$1" ||
			fail "no warning '$1' (got: ${got:-none})"
	fi || return 1
	# each warning ends its line (a C string escaped twice printed "\n")
	! printf '%s\n' "$got" | grep -qF '\n' ||
		fail "a warning does not end its line: $got"
}

# testparm_smb_direct: testparm warns where "server smb direct = yes"
# cannot work or Windows would not use it, and not otherwise
testparm_smb_direct() {
	E2E_WHY= E2E_DETAIL=
	ok=1
	if ! testparm_warns "" auto; then
		:
	elif ! E2E_CONF_EXTRA="	server min protocol = SMB2_10" \
		testparm_warns "needs 'server max protocol' SMB3_00" auto SMB2_10; then
		:
	elif ! E2E_CONF_EXTRA="	server multi channel support = no" \
		testparm_warns "no RDMA channel binds" auto; then
		:
	elif ! E2E_CONF_EXTRA="	server smb encrypt = required" \
		testparm_warns "encrypt = required. SMB Direct moves no" auto; then
		:
	elif ! testparm_warns "signing = mandatory. SMB Direct" mandatory; then
		:
	elif ! E2E_CONF_EXTRA="	server smb direct max io size = 4096" \
		testparm_warns "max io size' is below 65536" auto; then
		:
	elif ! E2E_CONF_EXTRA="	server smb direct pool size = 8M" \
		testparm_warns "" auto; then
		:
	elif ! E2E_CONF_EXTRA="	server smb direct pool size = 4M" \
		testparm_warns "4194304 bytes, is below 'server smb direct max io size', 8388608" auto; then
		:
	elif ! E2E_CONF_EXTRA="	server smb direct pool size = 4096" \
		testparm_warns "pool size' is below one buffer of the smbdirect module, 1048576 bytes" auto; then
		:
	elif ! E2E_CONF_EXTRA="	server smb direct pool size = 1G" \
		testparm_warns "pool size' is above the 67108864 bytes" auto; then
		:
	elif ! rmmod smbdirect; then
		fail "cannot unload the module"
	else
		# no module, no device
		testparm_warns "device cannot be opened" auto && ok=0
		insmod "$SMBD_DRIVER" || { ok=1; fail "insmod failed"; }
	fi
	[ $ok != 0 ] || E2E_DETAIL="9 warnings, none for a working configuration"
	scenario_result testparm-smb-direct $ok
}

# smbcontrol_smbdirect_status: with a cifs mount over SMB Direct,
# "smbcontrol all smbdirect-status" shows the parent listening, and the
# mount's connection, by the driver's id, in the smbd the driver says
# owns it; at its exit the parent leaves none of its messaging behind
smbcontrol_smbdirect_status() {
	E2E_WHY= E2E_DETAIL=
	ok=1
	if start_smbd auto; then
		if ! mount_e2e "rdma,vers=3.1.1"; then
			:
		else
			# id=<id> state=owned ... owner_pid=<pid>
			set -- $(sed -n 's/^id=\([0-9]*\) state=owned .* owner_pid=\([0-9]*\) .*/\1 \2/p' \
				/sys/kernel/debug/smbdirect/connections)
			out=$("$SMBD_SAMBA/bin/smbcontrol" -s "$E2E_DIR/smb.conf" \
				all smbdirect-status 2>&1)
			# each line after "PID <pid>: " belongs to that pid
			conn=$(printf '%s\n' "$out" | awk -v pid="${2:-none}" -v id="${1:-none}" '
				/^PID / { p = $2; sub(/:$/, "", p) }
				p == pid && $1 == "connection" && $2 == id && $3 == "from" { print }')
			if [ $# != 2 ]; then
				fail "the driver owns $(($# / 2)) connections, expected 1"
			elif ! printf '%s\n' "$out" |
				grep -q "^PID $SMBD_PID: SMB Direct: listening for new sessions"; then
				fail "the parent $SMBD_PID did not say it listens: $out"
			elif [ -z "$conn" ]; then
				fail "no connection $1 in smbd $2's answer: $out"
			else
				ok=0
				E2E_DETAIL="smbd $2:$conn"
			fi
			umount "$E2E_MNT" || { ok=1; fail "umount failed"; }
		fi
	fi
	parent=$SMBD_PID
	stop_smbd
	# the parent frees its messaging before its device handle at exit:
	# it must not make it anew (which nothing then removes)
	if [ $ok = 0 ]; then
		for f in "$E2E_DIR/lock/msg.lock/$parent" \
			"$E2E_DIR/private/msg.sock/$parent"; do
			[ ! -e "$f" ] || { ok=1; fail "the parent left $f at its exit"; }
		done
	fi
	scenario_result smbcontrol-smbdirect-status $ok
}

# smbstatus_json: a cifs mount over SMB Direct, one over TCP and one over
# NetBIOS (port 139), each a session of its own; smbstatus --json must show
# the first's channel as "smbdirect" with the id of the connection the
# driver has owned for it and that connection's counters (a 1 MiB file
# written through the mount took RDMA READs of at least its size), the
# second's as "tcp" and the third's as "nbt" (the lines whose smbstatus
# lists channels: 4.22)
smbstatus_json() {
	E2E_WHY= E2E_DETAIL=
	ok=1
	tcp_mnt=$E2E_MNT-tcp nbt_mnt=$E2E_MNT-nbt
	mkdir -p "$tcp_mnt" "$nbt_mnt"
	if E2E_CONF_EXTRA="	smb ports = 445 139" start_smbd auto; then
		if ! mount_e2e "rdma,vers=3.1.1"; then
			:
		elif ! mount_e2e "vers=3.1.1" "$tcp_mnt"; then
			umount "$E2E_MNT"
		elif ! mount_e2e "vers=3.1.1,port=139,servern=E2E" "$nbt_mnt"; then
			umount "$tcp_mnt"
			umount "$E2E_MNT"
		else
			id=$(owned_ids)
			wrote=no
			dd if=/dev/urandom of="$E2E_MNT/counted" bs=1M count=1 \
				conv=fsync 2>/dev/null && wrote=yes
			# each channel's transport and connection id, a line each,
			# and an SMB Direct channel's counters on one of their own
			chans=$("$SMBD_SAMBA/bin/smbstatus" -s "$E2E_DIR/smb.conf" \
				--json 2>"$E2E_DIR/log/smbstatus.err" | python3 -c '
import json, sys
for s in json.load(sys.stdin).get("sessions", {}).values():
    for c in s.get("channels", {}).values():
        print(c.get("transport"), c.get("smbdirect_connection_id", "-"))
        n = c.get("smbdirect_counters")
        if n is not None:
            print("counters", c.get("smbdirect_connection_id"),
                  n["pdus_received"], n["rdma_read_bytes"])
' 2>&1)
			counters=$(printf '%s\n' "$chans" | sed -n "s/^counters $id //p")
			if [ "$wrote" != yes ]; then
				fail "writing 1 MiB through the RDMA mount failed"
			elif [ -z "$id" ]; then
				fail "no connection owned for the mount"
			elif ! printf '%s\n' "$chans" | grep -qx "smbdirect $id"; then
				fail "no channel says: smbdirect $id; the channels: $chans; smbstatus said: $(cat "$E2E_DIR/log/smbstatus.err")"
			elif ! printf '%s\n' "$chans" | grep -qx "tcp -"; then
				fail "no channel says: tcp; the channels: $chans"
			elif ! printf '%s\n' "$chans" | grep -qx "nbt -"; then
				fail "no channel says: nbt; the channels: $chans"
			elif [ -z "$counters" ]; then
				fail "the SMB Direct channel has no smbdirect_counters: $chans"
			elif ! echo "$counters" | {
				read -r pdus rdma_read
				[ "$pdus" -gt 0 ] && [ "$rdma_read" -ge 1048576 ]
			}; then
				fail "the counters (PDUs received, RDMA READ bytes) are $counters after a 1 MiB write"
			else
				ok=0
				E2E_DETAIL=$(printf '%s\n' "$chans" | paste -sd, -)
			fi
			rm -f "$E2E_MNT/counted"
			umount "$nbt_mnt" || { ok=1; fail "umount failed"; }
			umount "$tcp_mnt" || { ok=1; fail "umount failed"; }
			umount "$E2E_MNT" || { ok=1; fail "umount failed"; }
		fi
	fi
	stop_smbd
	rmdir "$tcp_mnt" "$nbt_mnt"
	scenario_result smbstatus-json $ok
}

# smb2_small_pool: each smbd's pool smaller than the largest transfer
# (4 buffers of 1 MiB): smbd offers no READ or WRITE larger than its pool,
# and serves the largest it offers; with the pool held, WRITEs wait for
# it, CANCEL ends one, and none waits without bound
smb2_small_pool() {
	if rmmod smbdirect && insmod "$SMBD_DRIVER" pool_buffers=4; then
		run_smb2 smb2-small-pool max-io
		run_smb2 smb2-pool-wait --timeout 30 pool-wait
	else
		E2E_WHY="cannot load the module with 4 pool buffers"
		scenario_result smb2-small-pool 1
	fi
	rmmod smbdirect 2>/dev/null
	insmod "$SMBD_DRIVER"
}

# smb2_reload_pool_size: a reload to a larger "server smb direct pool
# size" changes no process's pool until smbd starts again (it says so),
# so a channel binding to the session of an older process, which has the
# pool of 4 buffers, is offered no more than 4 MiB, and transfers of that
# size move on it
smb2_reload_pool_size() {
	E2E_WHY= E2E_DETAIL=
	ok=1 offers=
	if E2E_CONF_EXTRA="	server smb direct pool size = 4M" start_smbd auto &&
		on_cue_start bind-max-io-on-cue; then
		if ! E2E_CONF_EXTRA="	server smb direct pool size = 8M" \
			write_conf auto || ! kill -HUP "$SMBD_PID"; then
			fail "cannot reload smbd"
		else
			wait_for 300 grep -q "pool size' changes when smbd starts again" \
				"$E2E_DIR/log/smbd.out"
			said=$?
			on_cue_end
			ended=$?
			offers=$(sed -n 's/.*MaxReadSize \([0-9]*\), MaxWriteSize \([0-9]*\)$/\1,\2/p' \
				"$cue_out" | paste -sd' ' -)
			if [ "$offers" != "4194304,4194304 4194304,4194304" ]; then
				fail "offered (MaxReadSize,MaxWriteSize) before and after the reload: '$offers', expected 4194304 both times${E2E_WHY:+; $E2E_WHY}"
			elif [ $said != 0 ]; then
				fail "smbd did not say the pool stays until it starts again"
			elif [ $ended = 0 ]; then
				ok=0
				E2E_DETAIL="MaxReadSize,MaxWriteSize before and after the reload: $offers"
			fi
		fi
	fi
	on_cue_done
	stop_smbd
	scenario_result smb2-reload-pool-size $ok
}

# smb2_fork_device: the processes smbd forks once it holds the device
# (here notifyd and cleanupd, restarted) must let go of it, or they keep
# its listener past the parent's exit and no smbd after it can listen
smb2_fork_device() {
	E2E_WHY= E2E_DETAIL=
	ok=1
	if start_smbd auto; then
		old="$(pgrep -x smbd-notifyd) $(pgrep -x "$SMBD_CLEANUPD_NAME")"
		# shellcheck disable=SC2086 # two pids
		kill -KILL $old
		# the parent restarts them a second after they died
		i=0
		until n=$(pgrep -x smbd-notifyd) &&
			c=$(pgrep -x "$SMBD_CLEANUPD_NAME") &&
			[ "$n $c" != "$old" ]; do
			i=$((i + 1))
			[ $i -lt 100 ] || break
			sleep 0.1
		done
		held=$(device_holders)
		if [ $i -ge 100 ]; then
			fail "notifyd and cleanupd were not restarted"
		elif printf ' %s ' "$held" | grep -Eq " ($n|$c) "; then
			fail "the restarted notifyd ($n) or cleanupd ($c) holds /dev/smbd: holders $held"
		else
			stop_smbd
			held=$(device_holders)
			if [ -n "$held" ]; then
				fail "/dev/smbd still held after smbd stopped: $held"
			elif ! start_smbd auto; then
				:
			elif ! out=$(smb2 session); then
				fail "after the restart: $(printf '%s\n' "$out" | tail -n 1)"
			else
				ok=0
				E2E_DETAIL="notifyd and cleanupd restarted without the device; smbd restarted and served"
			fi
		fi
	fi
	stop_smbd
	scenario_result smb2-fork-device $ok
}

# pool_reads <trace> <count>: of the pread64 calls of <count> bytes in
# <trace> (strace -f of openat, close, mmap and pread64, the last two
# raw), "<in> <out>": how many read into a mapping of /dev/smbd and how
# many into other memory
pool_reads() {
	awk -v want="$2" '
	function hex(s,   i, n) {
		n = 0
		s = tolower(s)
		sub(/^0x/, "", s)
		for (i = 1; i <= length(s); i++)
			n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return n
	}
	function args(call,   line) {
		line = $0
		sub(".* " call "\\(", "", line)
		return split(line, a, /, */)
	}
	function mapped(pid, len) {
		if (match($0, / = 0x[0-9a-f]+$/)) {
			lo[++n] = hex(substr($0, RSTART + 3))
			hi[n] = lo[n] + len
		} else {
			pending[pid] = len
		}
	}
	{ pid = $1 }
	/ openat\(.*"\/dev\/smbd"/ {
		if (match($0, / = [0-9]+$/))
			dev[pid, substr($0, RSTART + 3) + 0] = 1
		else
			opening[pid] = 1
		next
	}
	/<\.\.\. openat resumed>/ {
		if ((pid in opening) && match($0, / = [0-9]+$/))
			dev[pid, substr($0, RSTART + 3) + 0] = 1
		delete opening[pid]
		next
	}
	# a descriptor closed and taken again is not the device any more
	/ close\([0-9]+/ {
		args("close")
		delete dev[pid, a[1] + 0]
		next
	}
	/ mmap\(/ {
		args("mmap")
		if ((pid, hex(a[5])) in dev)
			mapped(pid, hex(a[2]))
		next
	}
	/<\.\.\. mmap resumed>/ {
		if (pid in pending) {
			len = pending[pid]
			delete pending[pid]
			mapped(pid, len)
		}
		next
	}
	/ pread64\(/ {
		args("pread64")
		if (hex(a[3]) != want)
			next
		at = hex(a[2])
		inside = 0
		for (i = 1; i <= n; i++)
			if (at >= lo[i] && at + want <= hi[i])
				inside = 1
		if (inside)
			pool++
		else
			other++
	}
	END { print pool + 0, other + 0 }' "$1"
}

# trace_smbd <trace> <strace options...>: strace -f of the smbd master and
# what it starts, into <trace>, once attached; sets tracer (its pid)
trace_smbd() {
	t=$1
	shift
	strace -f -qq -e signal=none "$@" -o "$t" -p "$SMBD_PID" 2>/dev/null &
	tracer=$!
	i=0
	until grep -Eq "^TracerPid:[[:space:]]+$tracer\$" "/proc/$SMBD_PID/status"; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "strace did not attach to smbd" || return 1
		sleep 0.1
	done
}

# untrace: strace stopped, its output complete
untrace() {
	[ -z "$tracer" ] || { kill "$tracer"; wait "$tracer" 2>/dev/null; }
	tracer=
}

# traced_session <size>: our client's signed session, RDMA READs and
# WRITEs of <size> bytes among its I/O, then the trace complete
traced_session() {
	out=$(smb2 --size "$1" session) ||
		fail "$(printf '%s\n' "$out" | tail -n 1)" || return 1
	untrace
}

# traced_reads <size> <judge> <strace options...>: traced_session of
# <size> against an smbd under strace with those options, then
# <judge> <trace> <size>, which sets E2E_DETAIL or fails; smbd stopped
traced_reads() {
	trace=$E2E_DIR/reads.trace
	tracer=
	ok=1
	size=$1 judge=$2
	shift 2
	start_smbd auto && trace_smbd "$trace" "$@" &&
		traced_session "$size" && "$judge" "$trace" "$size" && ok=0
	untrace
	rm -f "$trace"
	stop_smbd
	return $ok
}

# reads_into_pool <trace> <size>: every pread64 of <size> bytes wrote into
# a /dev/smbd mapping
reads_into_pool() {
	# shellcheck disable=SC2046 # two numbers
	set -- $(pool_reads "$1" "$2") "$2"
	[ "$1" != 0 ] && [ "$2" = 0 ] ||
		fail "of the reads of $3 bytes, $1 into the pool and $2 into other memory" ||
		return 1
	E2E_DETAIL="$1 reads of $3 bytes, each into the pool"
}

# smb2_read_into_pool: an RDMA READ reads the file straight into the pool
# memory its RDMA WRITE sends from, with no copy through a buffer of
# smbd's own: every pread64 of the transfer's size (strace on smbd and
# the processes and threads it starts) writes into a /dev/smbd mapping
smb2_read_into_pool() {
	E2E_WHY= E2E_DETAIL=
	traced_reads 1048576 reads_into_pool \
		-e trace=openat,close,mmap,pread64 -e raw=mmap,pread64
	scenario_result smb2-read-into-pool $?
}

# ext4_share <MiB>: the share on ext4 (4 KiB blocks, as mkfs makes for a
# real disk) on a RAM disk of that size, empty, the file system of a real
# server: unlike tmpfs under overlayfs it reads what the page cache holds
# without waiting (RWF_NOWAIT); ext4_share_off undoes it, and fails when
# the share stays mounted
ext4_share() {
	ext4_share_off &&
		modprobe brd rd_nr=1 rd_size=$(($1 * 1024)) &&
		mkfs.ext4 -q -F -b 4096 /dev/ram0 &&
		mount /dev/ram0 "$E2E_DIR/share" &&
		rmdir "$E2E_DIR/share/lost+found" &&
		chown "$E2E_USER" "$E2E_DIR/share" ||
		fail "no ext4 file system on a RAM disk for the share"
}

ext4_share_off() {
	if mountpoint -q "$E2E_DIR/share" && ! umount "$E2E_DIR/share"; then
		umount -l "$E2E_DIR/share"
		fail "the share's ext4 was still in use"
		return 1
	fi
	! grep -q '^brd ' /proc/modules || modprobe -r brd ||
		fail "the RAM disk could not be unloaded"
}

# reads_at_once <trace> <size>: every read of <size> bytes was a preadv2
# with RWF_NOWAIT that returned all of it, none a pread64
reads_at_once() {
	nowait=$(grep -cE "iov_len=$2}\], 1, [0-9]+, RWF_NOWAIT\) = $2\$" "$1")
	pool=$(grep -cE "(pread64\(|<\.\.\. pread64 resumed>).*, $2, [0-9]+\) = $2\$" "$1")
	[ "$nowait" != 0 ] && [ "$pool" = 0 ] ||
		fail "of the reads of $2 bytes, $nowait read at once and $pool by the thread pool" ||
		return 1
	E2E_DETAIL="$nowait reads of $2 bytes, each at once"
}

# smb2_read_cached: on a file system that reads without waiting (ext4;
# the e2e share's tmpfs under overlayfs cannot), a READ of at most 64 KiB
# whose data the page cache holds is read by smbd's event loop, not handed
# to its thread pool: every read of the transfer's size is a preadv2 with
# RWF_NOWAIT that returned all of it, none a pread64 (the pool's). The
# memory it reads into is the one smb2-read-into-pool proves, which the
# READ hands to whichever read runs.
smb2_read_cached() {
	E2E_WHY= E2E_DETAIL=
	ok=1
	if ext4_share 64 &&
		traced_reads 65536 reads_at_once -e trace=preadv2,pread64; then
		ok=0
	fi
	ext4_share_off || ok=1
	scenario_result smb2-read-cached $ok
}

# smb2_scavenger_device: a durable handle whose connection ended makes the
# parent fork its scavenger, which must let go of the parent's device as
# the other forked processes do, or it keeps its listener until it exits
smb2_scavenger_device() {
	E2E_WHY= E2E_DETAIL=
	ok=1
	if start_smbd auto; then
		if ! out=$(smb2 durable-disconnect); then
			fail "$(printf '%s\n' "$out" | tail -n 1)"
		else
			i=0
			until s=$(pgrep -x smbd-scavenger); do
				i=$((i + 1))
				[ $i -lt 100 ] || break
				sleep 0.1
			done
			held=$(device_holders)
			if [ -z "$s" ]; then
				fail "no scavenger started"
			elif printf ' %s ' "$held" | grep -q " $s "; then
				fail "the scavenger ($s) holds /dev/smbd: holders $held"
			else
				ok=0
				E2E_DETAIL="the scavenger ($s) runs without the device"
			fi
		fi
	fi
	stop_smbd
	scenario_result smb2-scavenger-device $ok
}

# smb2_no_listener: another process (the responder) holds the device's
# listener, so smbd's SMB Direct setup fails and it serves TCP alone: no
# interface may then be marked RDMA capable
smb2_no_listener() {
	E2E_WHY= E2E_DETAIL=
	ok=1
	"$SMBD_BUILD/tools/responder/smbdirect-responder" \
		>"$E2E_DIR/log/responder.out" 2>&1 &
	rpid=$!
	if ! listening yes 100 "$rpid"; then
		fail "the responder did not listen: $(tail -n 2 "$E2E_DIR/log/responder.out")"
	elif E2E_SMBD_RDMA=off start_smbd auto; then
		if out=$(smb2 --tcp interfaces-no-rdma); then
			ok=0
			E2E_DETAIL="smbd without the listener marks no interface RDMA capable"
		else
			E2E_WHY=$(printf '%s\n' "$out" | tail -n 1)
			printf '%s\n' "$out" | sed 's/^/  smb2: /'
		fi
	fi
	stop_smbd
	kill "$rpid" 2>/dev/null
	wait "$rpid" 2>/dev/null
	scenario_result smb2-no-listener $ok
}

# smb2_bind_interfaces_only: TCP listens on the addresses of "interfaces"
# alone, and so must SMB Direct, which the kernel takes on every address
smb2_bind_interfaces_only() {
	E2E_WHY= E2E_DETAIL=
	ok=1
	if E2E_CONF_EXTRA="	bind interfaces only = yes
	interfaces = $SMBD_ADDR" start_smbd auto; then
		if ! out=$(smb2 session); then
			fail "over $SMBD_ADDR, in interfaces: $(printf '%s\n' "$out" | tail -n 1)"
		elif out=$(E2E_ADDR=$SMBD_ADDR6 smb2 --timeout 5 session); then
			fail "a session to $SMBD_ADDR6, not in interfaces, was served"
		elif ! grep -q "to $SMBD_ADDR6 refused: not an address of" \
			"$E2E_DIR/log/smbd.out"; then
			fail "the session to $SMBD_ADDR6 failed otherwise: $(printf '%s\n' "$out" | tail -n 1)"
		else
			ok=0
			E2E_DETAIL="$SMBD_ADDR served, $SMBD_ADDR6 refused"
		fi
	fi
	stop_smbd
	scenario_result smb2-bind-interfaces-only $ok
}

# run_smb2 <name> <smbdirect-smb2 arguments>: checks of our client, which
# drives the server as Windows does (tools/client/smb2_checks.cpp), against
# E2E_SERVER with E2E_SIGNING as above. The line counts the bytes the
# driver moved by RDMA; E2E_RDMA_IN: the bytes it must have pulled;
# E2E_EXPECT: lines (one per line) each of which must end a step of the
# checks.
run_smb2() {
	name=$1
	shift
	E2E_WHY= E2E_DETAIL=
	ok=1
	if start_server "${E2E_SIGNING:-auto}"; then
		r0=$(counter rdma_read_bytes) w0=$(counter rdma_write_bytes)
		[ -z "${E2E_COUNT:-}" ] || c0=$(counter "$E2E_COUNT")
		if out=$(smb2 "$@"); then
			ok=0
		else
			E2E_WHY=$(printf '%s\n' "$out" | sed -n 's/^SMB2 \(.* FAIL .*\)/\1/p' |
				paste -sd';' -)
			# a usage error or a crash prints no check line
			[ -n "$E2E_WHY" ] ||
				E2E_WHY="smbdirect-smb2: $(printf '%s\n' "$out" | tail -n 1)"
			printf '%s\n' "$out" | sed 's/^/  smb2: /'
		fi
		pulled=$(( $(counter rdma_read_bytes) - r0 ))
		E2E_DETAIL="$(printf '%s\n' "$out" | grep -c '^SMB2 .* PASS') checks rdma_in=$pulled rdma_out=$(( $(counter rdma_write_bytes) - w0 ))"
		[ $ok != 0 ] || [ -z "${E2E_RDMA_IN:-}" ] ||
			[ "$pulled" = "$E2E_RDMA_IN" ] ||
			{ ok=1; E2E_WHY="RDMA pulled $pulled bytes, expected $E2E_RDMA_IN"; }
		# E2E_COUNT=<counter> grows by one (a refusal the driver counts)
		if [ $ok = 0 ] && [ -n "${E2E_COUNT:-}" ]; then
			grew=$(( $(counter "$E2E_COUNT") - c0 ))
			[ "$grew" = 1 ] ||
				{ ok=1; E2E_WHY="$E2E_COUNT grew by $grew, expected 1"; }
		fi
		# E2E_EXPECT: lines each of which ends some step of the checks
		if [ $ok = 0 ] && [ -n "${E2E_EXPECT:-}" ]; then
			missing=$(printf '%s\n' "$E2E_EXPECT" | while IFS= read -r want; do
				printf '%s\n' "$out" | awk -v w="$want" '
					substr($0, length($0) - length(w) + 1) == w { f = 1 }
					END { exit !f }' || printf '%s\n' "$want"
			done)
			[ -z "$missing" ] ||
				{ ok=1; E2E_WHY="no step says: $missing"; }
		fi
	fi
	stop_server
	rm -rf "${E2E_DIR:?}/share/"*
	scenario_result "$name" $ok
}

# The scenarios of the cifs client over the network, in one guest
# (guest.sh) or between two (pair.sh).
cifs_scenarios() {
	# new session over RDMA (flow 2) with each SMB 3 dialect the client offers:
	# 3.1.1 with the share on ext4, where small reads of cached data (the small
	# files, read back in pages past their ends) are read at once; 3.0.2 with
	# Samba's io_uring VFS module, which Debian ships, doing the file I/O
	E2E_EXT4=1 run_scenario rdma-3.1.1 rdma_files "rdma,vers=3.1.1" 1 rdma
	E2E_CONF_EXTRA="	vfs objects = io_uring" \
		run_scenario rdma-3.0.2-io-uring rdma_files "rdma,vers=3.0.2" 1 rdma
	# a second RDMA channel binds to the session (flow 1): its SESSION_SETUP is
	# signed with the channel key from the preauth hash the driver's bytes gave
	run_scenario multichannel rdma_files \
		"rdma,vers=3.1.1,multichannel,max_channels=2" 2 rdma
	# RDMA port 445, as a Linux 7.0 or Windows client on RoCE reaches it: with
	# 5445 serving iWARP only, this client's first try there is refused and
	# counted, and it falls back to 445
	E2E_IB_ON_IWARP=N E2E_CONN=roce:445 run_scenario rdma-445 rdma_files \
		"rdma,vers=3.1.1" 1 rdma
	# Windows' flow: the session starts over TCP; the client reads the
	# interfaces, adds an RDMA channel to the one marked RDMA capable and binds
	# it to the TCP session, in the smbd child serving the TCP connection (the
	# e2e kernel's cifs takes RDMA channels on a TCP session, as Windows does)
	E2E_RDMA_CHANNELS=1 run_scenario windows-flow rdma_files \
		"vers=3.1.1,multichannel,max_channels=2" 2 some
	# flow 2 over IPv6
	E2E_ADDR=$SMBD_ADDR6 run_scenario ipv6 rdma_files "rdma,vers=3.1.1" 1 rdma
	# signing required: the client moves file data inline, never by RDMA (its
	# writes one page at a time: see put_file)
	E2E_SIGNING=mandatory E2E_WRITER=direct run_scenario signed rdma_files \
		"rdma,vers=3.1.1" 1 inline
}

# The same client and workloads against ksmbd, the reference.
ksmbd_scenarios() {
	E2E_SERVER=ksmbd run_scenario ksmbd-rdma-3.1.1 rdma_files "rdma,vers=3.1.1" 1 rdma
	E2E_SERVER=ksmbd E2E_SIGNING=mandatory E2E_WRITER=direct \
		run_scenario ksmbd-signed rdma_files "rdma,vers=3.1.1" 1 inline
}

# mount_e2e <cifs options>: the share at $E2E_MNT, the address by ip=,
# which takes IPv6 too (the UNC's host is a name)
mount_e2e() {
	mount -t cifs "//e2e-server/e2e" "${2:-$E2E_MNT}" \
		-o "$1,ip=${E2E_ADDR:-$SMBD_ADDR},username=$E2E_USER,password=$E2E_PASS" ||
		fail "mount -o $1 failed: $(dmesg | grep CIFS | tail -n 1)"
}

# The driver's counters of a scenario's traffic, in scenario()'s order.
TRAFFIC='for c in rdma_read_bytes rdma_write_bytes bytes_received bytes_sent rdma_writes rdma_replies; do counter $c; done'

scenario() {
	workload=$1 opts=$2 want_channels=$3 mode=$4
	on_server "start_server ${E2E_SIGNING:-auto}" || return 1
	wrong0=$(on_server "counter conn_wrong_port")
	mount_e2e "$opts" || return 1
	rdma_channels=${E2E_RDMA_CHANNELS:-$want_channels}
	# the client's own report of its connection
	[ "$rdma_channels" != "$want_channels" ] ||
		grep -q "^SMBDirect" /proc/fs/cifs/DebugData ||
		fail "the mount is not over RDMA" || return 1
	# extra channels are added right after the mount
	i=0
	while [ "$(client_channels)" -lt "$want_channels" ] && [ $i -lt 300 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	channels=$(client_channels)
	driver_conns=$(on_server owned_connections)
	E2E_CONNS=$(on_server connection_ports)
	[ "$channels" = "$want_channels" ] ||
		fail "$channels channels, expected $want_channels" || return 1
	# ksmbd: nothing may go through the driver
	[ "${E2E_SERVER:-samba}" = samba ] || rdma_channels=0
	[ "$driver_conns" = "$rdma_channels" ] ||
		fail "the driver carries $driver_conns connections, expected $rdma_channels" ||
		return 1
	if [ "$rdma_channels" != 0 ] && [ "$rdma_channels" != "$want_channels" ]; then
		owners=$(on_server connection_owners) tcp=$(on_server tcp_smbd_pids)
		[ -n "$tcp" ] && [ "$owners" = "$tcp" ] ||
			fail "RDMA channels owned by smbd $owners, the TCP connection served by smbd ${tcp:-none}" ||
			return 1
		E2E_OWNERS=" owner=$owners tcp_smbd=$tcp"
	fi
	if [ -n "${E2E_CONN:-}" ]; then
		[ -z "$(echo "$E2E_CONNS" | tr , '\n' | grep -vx "$E2E_CONN")" ] ||
			fail "connections other than $E2E_CONN: $E2E_CONNS" ||
			return 1
	fi
	E2E_WRONG_PORT=$(( $(on_server "counter conn_wrong_port") - wrong0 ))
	[ "${E2E_IB_ON_IWARP:-}" != N ] || [ "$E2E_WRONG_PORT" -ge 1 ] ||
		fail "no RoCE request on 5445 was refused" || return 1

	# the client reconnects transparently: a server that failed must not pass
	reconnects0=$(dmesg | grep -c 'RDMA transport re-established')
	set -- $(on_server "$TRAFFIC")
	[ $# = 6 ] || fail "the server's counters: $*" || return 1
	r0=$1 w0=$2 in0=$3 out0=$4 writes0=$5 replies0=$6
	"$workload" || return 1
	umount "$E2E_MNT" || fail "umount failed" || return 1
	reconnects=$(( $(dmesg | grep -c 'RDMA transport re-established') - reconnects0 ))
	[ "$reconnects" = 0 ] ||
		fail "the client had to reconnect $reconnects times" || return 1
	panic=$(on_server 'grep -m1 -A12 PANIC "$E2E_DIR/log/smbd.out" 2>/dev/null || true') ||
		fail "no answer from the server" || return 1
	[ -z "$panic" ] ||
		fail "smbd panicked: $(echo "$panic" | grep -m1 smbdirect)" ||
		return 1
	set -- $(on_server "$TRAFFIC")
	[ $# = 6 ] || fail "the server's counters: $*" || return 1
	pulled=$(($1 - r0)) pushed=$(($2 - w0))
	inline_in=$(($3 - in0)) inline_out=$(($4 - out0))
	writes=$(($5 - writes0)) replies=$(($6 - replies0))
	bytes=$((E2E_BIG_MB * 1048576))
	[ "${E2E_SERVER:-samba}" = samba ] || mode=none
	case $mode in
	none)
		[ "$pulled" = 0 ] && [ "$pushed" = 0 ] && [ "$inline_in" = 0 ] ||
			fail "the driver carried traffic of another server" ||
			return 1 ;;
	rdma)
		# the big file went both ways by RDMA
		[ "$pulled" -ge "$bytes" ] && [ "$pushed" -ge "$bytes" ] ||
			fail "RDMA moved $pulled bytes in and $pushed out, expected at least $bytes each" ||
			return 1
		# READs read into pool memory go out with their response (a
		# READ whose data waited for the pool answers after the WRITE)
		[ "$replies" -gt 0 ] ||
			fail "none of $writes RDMA WRITEs carried its READ response" ||
			return 1 ;;
	some)
		[ "$pulled" -gt 0 ] && [ "$pushed" -gt 0 ] ||
			fail "RDMA moved $pulled bytes in and $pushed out, expected some each way" ||
			return 1 ;;
	inline)
		[ "$pulled" = 0 ] && [ "$pushed" = 0 ] ||
			fail "RDMA moved $pulled/$pushed bytes on a signed mount" ||
			return 1
		[ "$inline_in" -ge "$bytes" ] && [ "$inline_out" -ge "$bytes" ] ||
			fail "PDUs carried $inline_in bytes in and $inline_out out, expected at least $bytes each" ||
			return 1 ;;
	esac
	E2E_DETAIL="channels=$channels conns=${E2E_CONNS:-none}${E2E_OWNERS:-} wrong_port=$E2E_WRONG_PORT rdma_in=$pulled rdma_out=$pushed replies_with_writes=$replies/$writes pdu_in=$inline_in pdu_out=$inline_out $E2E_WORK"
}

# put_file <from> <to>: through the page cache, or with E2E_WRITER=direct
# as O_DIRECT writes of at most one page each. Debian 6.1's client corrupts
# inline (not RDMA) writes that span pages: smbd_send() sizes each page's
# pieces by what remains of the whole request, so they run past the page.
# Only signed or encrypted mounts send data inline, and there a server
# rejects the corrupted requests by their signature.
put_file() {
	case ${E2E_WRITER:-cached} in
	direct) dd if="$1" of="$2" bs=4096 oflag=direct status=none ;;
	*) cp "$1" "$2" ;;
	esac
}

# put_files <dir> <to-dir>: every file of <dir> as put_file writes it, by
# one cp when cached (a process per file costs more than its I/O here)
put_files() {
	case ${E2E_WRITER:-cached} in
	direct)
		for f in "$1"/*; do
			put_file "$f" "$2/${f##*/}" || return 1
		done ;;
	*) cp "$1"/* "$2/" ;;
	esac
}

# $E2E_DIR/small: E2E_SMALL files of 1..16 KiB (both sides of the client's
# 4 KiB RDMA threshold) cut from the big file, and their checksums; made
# once, as forking per file costs more than the file's I/O under emulation
small_files() {
	rm -rf "$E2E_DIR/small"
	mkdir "$E2E_DIR/small" || return 1
	i=0
	while [ $i -lt "$E2E_SMALL" ]; do
		dd if="$E2E_DIR/big" of="$E2E_DIR/small/f$i" \
			iflag=skip_bytes,count_bytes skip=$i \
			count=$(( (i % 16 + 1) * 1024 - i % 7 - i )) status=none ||
			return 1
		i=$((i + 1))
	done
	(cd "$E2E_DIR/small" && md5sum f*) >"$E2E_DIR/small.sums"
}

# Write the big file and the small ones, read them back with the client's
# cache dropped, compare checksums on both sides; list, rename, delete.
rdma_files() {
	m=$E2E_MNT
	put_file "$E2E_DIR/big" "$m/big" || fail "writing the big file failed" ||
		return 1
	mkdir "$m/small" || fail "mkdir failed" || return 1
	put_files "$E2E_DIR/small" "$m/small" ||
		fail "writing the small files failed" || return 1
	sync
	echo 3 >/proc/sys/vm/drop_caches
	[ "$(md5sum <"$m/big")" = "$E2E_BIG_SUM" ] ||
		fail "the big file read back differs" || return 1
	server_file_is big "$E2E_DIR/big" ||
		fail "the big file on the server differs" || return 1
	[ "$(on_server '(cd "$E2E_DIR/share/small" && md5sum f*)')" = \
		"$(cat "$E2E_DIR/small.sums")" ] ||
		fail "small files on the server differ" || return 1
	(cd "$m/small" && md5sum -c --quiet "$E2E_DIR/small.sums") ||
		fail "small files read back differ" || return 1
	n=$(ls "$m/small" | wc -l)
	[ "$n" = "$E2E_SMALL" ] || fail "listing shows $n files" || return 1
	mv "$m/big" "$m/renamed" &&
		on_server '[ -f "$E2E_DIR/share/renamed" ] && [ ! -e "$E2E_DIR/share/big" ]' ||
		fail "rename failed" || return 1
	rm -r "$m/small" "$m/renamed" &&
		left=$(on_server 'ls "$E2E_DIR/share"') && [ -z "$left" ] ||
		fail "delete failed" || return 1
	E2E_WORK="big=${E2E_BIG_MB}MiB small=$E2E_SMALL writes=${E2E_WRITER:-cached}"
}
