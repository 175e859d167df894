#!/bin/sh
# SPDX-License-Identifier: MIT
# Read-only by construction: runs kpeek commands under strace against
# synthetic dumps (ELF, kdump-compressed, LiME) and checks, from the system calls
# themselves, that kpeek never opens a dump for writing, never writes to a
# dump's file descriptor, never truncates it and never maps it writable and
# shared; and that the dump's bytes and mtime are unchanged. Then the same
# with the dump chmod 0444, and as user nobody when run as root.
#   tests/safety/readonly.sh [BUILD_TREE]    (default build; needs `make all`)
# Prints one line per check and a closing "safety: N passed, N failed".
set -u
. "$(dirname "$0")/lib"

for f in "$kpeek" "$mkseeds"; do
	if [ ! -x "$f" ]; then
		fail "setup: $f is missing (run make all)"
		summary
	fi
done
if ! command -v strace >/dev/null 2>&1; then
	fail "setup: strace is not installed (scripts/install-deps check)"
	summary
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/kp-readonly-XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
# Sticky and world-writable: strace runs as nobody writes its log here.
chmod 1777 "$work"
"$mkseeds" "$work/seeds" >/dev/null || { fail "setup: mkseeds failed"; summary; }
# The synthetic kernel (fuzz/synthkernel.h) as an ELF core with notes, as
# kdump-compressed and as LiME: fuzz_kernel_open seeds 0, 2 and 6.
cp "$work/seeds/fuzz_kernel_open/seed-0" "$work/dump.core"
cp "$work/seeds/fuzz_kernel_open/seed-2" "$work/dump.kdump"
cp "$work/seeds/fuzz_kernel_open/seed-6" "$work/dump.lime"

# The commands of a session; some may fail (the synthetic kernel has no
# modules or log): only their system calls are judged, and info must work.
commands() {
	d=$1
	echo "info"
	echo "sym init_task jiffies 0xffffffff9f000100"
	echo "rd init_task 64"
	echo "rd -p 0x1000 32"
	echo "print init_task.comm jiffies avenrun"
	echo "vtop init_task 0xffff888000002000"
	echo "ps"
	echo "lsmod"
	echo "loadavg"
	echo "dmesg"
	echo "check"
	echo "report"
	echo "panic"
	echo "list -H -o task_struct.tasks init_task.tasks"
	echo "--json info"
	echo "--kallsyms $d.kallsyms sym init_task"
	echo "--btf $d.btf print init_task.pid"
	echo "diff jiffies $d"
	echo "--raw rd -p 0 16"
	# Writes a new file, never the source: and refuses to overwrite the dump.
	echo "snapshot --quiet -o $work/snap-$$-$(basename "$d")-$(date +%s%N).core"
	echo "snapshot --quiet -o $d"
}

# The dump's side files (a kallsyms text and a raw BTF file) are inputs too.
for d in "$work/dump.core" "$work/dump.kdump" "$work/dump.lime"; do
	"$kpeek" -c "$d" sym init_task jiffies _text >/dev/null 2>&1
	"$kpeek" -c "$d" --json sym init_task >/dev/null 2>&1
	printf 'ffffffff9f001200 D init_task\nffffffff9f000000 T _text\n' >"$d.kallsyms"
	cp "$work/seeds/fuzz_btf/seed-0" "$d.btf"
done

# Checks one strace log for write access to exactly file $2 (the dump or a
# side file): its path in quotes (opens, truncate) or behind an fd (<path>).
check_log() {
	log=$1
	file=$2
	bad=$(grep -E -e "\"$file\"" -e "<$file>" "$log" | grep -E \
		-e '(open|openat|openat2)\(.*(O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND)' \
		-e '^[0-9]+ +creat\(' -e '^[0-9]+ +(truncate|ftruncate)\(' \
		-e "^[0-9]+ +(write|pwrite64|writev|pwritev|pwritev2)\([0-9]+<$file>" \
		-e 'mmap\(.*PROT_WRITE.*MAP_SHARED' -e 'mmap\(.*MAP_SHARED.*PROT_WRITE' \
		| head -5)
	if [ -n "$bad" ]; then
		echo "$bad"
		return 1
	fi
	return 0
}

# Runs one kpeek command under strace (as $RUNAS when set) and checks it.
traced() {
	name=$1
	dump=$2
	shift 2
	log=$work/strace.log
	rm -f "$log"
	# -y prints the path behind every file descriptor argument.
	${RUNAS:-} strace -f -y -qq -o "$log" \
		-e trace=open,openat,openat2,creat,truncate,ftruncate,write,pwrite64,writev,pwritev,pwritev2,mmap \
		"$kpeek" -c "$dump" "$@" >"$work/out" 2>"$work/err"
	rc=$?
	if [ ! -s "$log" ]; then
		fail "$name: strace produced no log" "$(head -3 "$work/err")"
		return 1
	fi
	if ! grep -qF "\"$dump\"" "$log"; then
		fail "$name: the dump was never opened (strace -y missing paths?)" \
			"$(head -3 "$work/err")"
		return 1
	fi
	out=$(check_log "$log" "$dump") && out2=$(check_log "$log" "$dump.kallsyms") &&
		out3=$(check_log "$log" "$dump.btf")
	if [ $? -ne 0 ]; then
		fail "$name: write access to the dump" "$out${out2:-}${out3:-}"
		return 1
	fi
	# Every open of the dump is read-only.
	opens=$(grep -E '(open|openat|openat2)\(' "$log" | grep -F "\"$dump\"" | grep -c 'O_RDONLY')
	if [ "$opens" -lt 1 ]; then
		fail "$name: no O_RDONLY open of the dump"
		return 1
	fi
	echo "$rc" >"$work/rc"
	return 0
}

fingerprint() { echo "$(cksum <"$1") $(stat -c '%Y %s %a' "$1")"; }

session() {
	label=$1
	dump=$2
	before=$(fingerprint "$dump")
	n_ok=0
	tmpcmds=$work/cmds
	commands "$dump" >"$tmpcmds"
	while IFS= read -r line; do
		# shellcheck disable=SC2086 # the command line is split on purpose
		if traced "$label: kpeek $line" "$dump" $line; then
			n_ok=$((n_ok + 1))
		fi
	done <"$tmpcmds"
	ncmds=$(wc -l <"$tmpcmds")
	if [ "$n_ok" -eq "$ncmds" ]; then
		pass "$label: $ncmds commands open the dump read-only and never write to it"
	fi
	traced "$label: kpeek info" "$dump" info && [ "$(cat "$work/rc")" -eq 0 ] &&
		grep -q '^source:' "$work/out" && pass "$label: kpeek info succeeds under strace" ||
		fail "$label: kpeek info failed" "$(head -3 "$work/err")"
	# The snapshot output: created exclusively, private.
	snap=$work/snap-check-$(basename "$dump").core
	rm -f "$snap"
	if traced "$label: kpeek snapshot" "$dump" snapshot --quiet -o "$snap" &&
		[ -f "$snap" ] && [ "$(stat -c %a "$snap")" = 600 ] &&
		grep -E "openat\(.*\"$snap\.tmp-[^\"]*\", O_WRONLY\|O_CREAT\|O_EXCL" "$log" >/dev/null; then
		pass "$label: snapshot creates a new 0600 file with O_EXCL"
	else
		fail "$label: snapshot output not created as expected" "$(head -3 "$work/err")" \
			"$(grep -F "$snap" "$log" | head -3)"
	fi
	rm -f "$snap"
	after=$(fingerprint "$dump")
	if [ "$before" = "$after" ]; then
		pass "$label: dump bytes, size, mode and mtime unchanged"
	else
		fail "$label: the dump changed" "before: $before" "after:  $after"
	fi
}

# The checker itself: a program that does write to a dump must be caught.
cp "$work/dump.core" "$work/victim.core"
strace -f -y -qq -o "$work/self.log" -e trace=openat,write,ftruncate,mmap \
	sh -c 'echo x >>"$1"; python3 -c "import mmap,os,sys; f=os.open(sys.argv[1],os.O_RDWR); mmap.mmap(f,4096,mmap.MAP_SHARED,mmap.PROT_READ|mmap.PROT_WRITE)" "$1" 2>/dev/null; :' \
	sh "$work/victim.core" >/dev/null 2>&1
if check_log "$work/self.log" "$work/victim.core" >/dev/null; then
	fail "checker: a shell appending to the dump was not flagged"
else
	pass "checker: writes to a dump are detected"
fi
rm -f "$work/victim.core"

for d in "$work/dump.core" "$work/dump.kdump" "$work/dump.lime"; do
	kind=${d##*.}
	session "$kind" "$d"
	chmod 0444 "$d" "$d.kallsyms" "$d.btf"
	session "$kind 0444" "$d"
	if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 &&
		id nobody >/dev/null 2>&1; then
		# Not root: the file system enforces 0444 too.
		RUNAS="setpriv --reuid=nobody --regid=nogroup --clear-groups --"
		export RUNAS
		session "$kind 0444 as nobody" "$d"
		unset RUNAS
		RUNAS=
	fi
done

summary
