#!/bin/sh
# SPDX-License-Identifier: MIT
# Missing privileges give actionable one-line errors. What can be tested
# without touching the host kernel: an unreadable dump, BTF or kallsyms file
# (as user nobody when run as root, else with mode 000), kallsyms whose
# addresses kptr_restrict zeroed, and Debian's placeholder System.map.
# /proc/kcore (CAP_SYS_RAWIO, lockdown) is covered by the QEMU suite, not here:
# no test reads the host's kernel.
#   tests/safety/privileges.sh [BUILD_TREE]    (default build; needs `make all`)
# Prints one line per check and a closing "safety: N passed, N failed".
set -u
. "$(dirname "$0")/lib"
for f in "$kpeek" "$mkseeds"; do
	[ -x "$f" ] || { fail "setup: $f is missing (run make all)"; summary; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/kp-priv-XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
chmod 755 "$work"
"$mkseeds" "$work/seeds" >/dev/null || { fail "setup: mkseeds failed"; summary; }
dump=$work/dump.core
cp "$work/seeds/fuzz_kernel_open/seed-0" "$dump"
chmod 644 "$dump"

# As root, drop to nobody; otherwise files of mode 000 are unreadable to us.
if [ "$(id -u)" -eq 0 ]; then
	if command -v setpriv >/dev/null 2>&1 && id nobody >/dev/null 2>&1; then
		asuser="setpriv --reuid=nobody --regid=nogroup --clear-groups --"
		unreadable=600
	else
		asuser=
	fi
else
	asuser=" "
	unreadable=000
fi

# expect NAME PATTERN... -- kpeek ARGS: kpeek must fail with one line on stderr
# matching every PATTERN (grep -E).
expect() {
	name=$1
	shift
	pats=
	while [ "$1" != "--" ]; do
		pats="$pats
$1"
		shift
	done
	shift
	# shellcheck disable=SC2086 # $run is a command prefix
	$run "$kpeek" "$@" >"$work/out" 2>"$work/err"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		fail "$name: kpeek succeeded, expected an error"
		return
	fi
	lines=$(wc -l <"$work/err")
	if [ "$lines" -ne 1 ]; then
		fail "$name: expected one line on stderr, got $lines" "$(head -5 "$work/err")"
		return
	fi
	echo "$pats" | while IFS= read -r p; do
		[ -z "$p" ] && continue
		grep -qE -- "$p" "$work/err" || echo "$p"
	done >"$work/missing"
	if [ -s "$work/missing" ]; then
		fail "$name: message lacks $(tr '\n' ' ' <"$work/missing")" "$(cat "$work/err")"
	else
		pass "$name: $(cat "$work/err")"
	fi
}

if [ -n "$asuser" ]; then
	run=$asuser
	cp "$dump" "$work/secret.core"
	chmod "$unreadable" "$work/secret.core"
	expect "unreadable dump" "secret.core" "[Pp]ermission denied" -- -c "$work/secret.core" info
	cp "$work/seeds/fuzz_btf/seed-0" "$work/secret.btf"
	chmod "$unreadable" "$work/secret.btf"
	expect "unreadable BTF file" "secret.btf" "[Pp]ermission denied" -- \
		-c "$dump" --btf "$work/secret.btf" print init_task.pid
	printf 'ffffffff9f001200 D init_task\n' >"$work/secret.kallsyms"
	chmod "$unreadable" "$work/secret.kallsyms"
	expect "unreadable kallsyms file" "secret.kallsyms" "[Pp]ermission denied" -- \
		-c "$dump" --kallsyms "$work/secret.kallsyms" info
	mkdir "$work/closed"
	cp "$dump" "$work/closed/dump.core"
	chmod "${unreadable%?}0" "$work/closed"
	expect "dump in an unsearchable directory" "closed/dump.core" "[Pp]ermission denied" -- \
		-c "$work/closed/dump.core" info
	chmod 755 "$work/closed"
else
	echo "skip unreadable-file checks: running as root without setpriv/nobody"
fi

run=
# /proc/kallsyms as an unprivileged user under kptr_restrict: every address 0.
printf '0000000000000000 T _text\n0000000000000000 T startup_64\n0000000000000000 D init_task\n0000000000000000 t ext4_mount\t[ext4]\n' \
	>"$work/zeroed.kallsyms"
expect "kptr_restrict-zeroed kallsyms" "zeroed.kallsyms" "kptr_restrict" "CAP_SYSLOG" -- \
	-c "$dump" --kallsyms "$work/zeroed.kallsyms" info
echo 'ffffffffffffffff B The real System.map is in the linux-image-6.1.0-57-amd64-dbg package' \
	>"$work/System.map"
expect "Debian placeholder System.map" "System.map" "placeholder" "dbg" -- \
	-c "$dump" -m "$work/System.map" info
expect "missing dump" "no-such.core" "No such file" -- -c "$work/no-such.core" info
expect "directory as dump" "is a directory" -- -c "$work" info

summary
