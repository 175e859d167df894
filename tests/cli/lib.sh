# SPDX-License-Identifier: MIT
# The helpers of the CLI test scripts (tests/cli/run, tests/cli/hostile),
# sourced after they set KPEEK, T (the scratch folder), GOLDEN, passed and
# failed.

ok() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1: $2"; }

# run ARGS...: runs kpeek in $T (so paths print as given); sets rc; output
# in $T/out and $T/err.
run() {
	(cd "$T" && exec "$KPEEK" "$@") >"$T/out" 2>"$T/err"
	rc=$?
	case " $* " in
	*" -j "* | *" --json "*) contract "$@" ;;
	esac
}

# contract ARGS...: keeps a --json run's output, its arguments and exit
# status for contract_verdict.
contract() {
	contract_runs=$((${contract_runs:-0} + 1))
	mkdir -p "$T/contract.d"
	cp "$T/out" "$T/contract.d/$contract_runs.out"
	{ echo "$rc"; printf '%s\n' "$@"; } >"$T/contract.d/$contract_runs.args"
}

# contract_verdict: one test, json-contract: every --json run's output
# meets its command's schema (doc/json/COMMAND.schema.json, checked by
# tests/vm/suite/contract.py, as the QEMU suite checks its runs).
contract_verdict() {
	if [ "${contract_runs:-0}" -gt 0 ] &&
	   python3 "$top/tests/vm/suite/contract.py" --runs "$T/contract.d" >"$T/contract" 2>&1; then
		ok "json-contract (${contract_runs} --json runs, each valid against its schema)"
	else
		fail json-contract "$(head -c 3000 "$T/contract")"
	fi
}

is_json() {
	python3 -m json.tool <"$T/out" >/dev/null 2>"$T/jsonerr"
}

# golden NAME ARGS...: exit 0, empty stderr, stdout = golden/NAME.out
# (NAME ending in -json: stdout must also be valid JSON).
golden() {
	n=$1
	shift
	golden_exit "$n" 0 "$@"
}

# golden_exit NAME RC ARGS...: the same with exit status RC (kpeek diff
# exits 1 when the values differ).
golden_exit() {
	name=$1 want=$2
	shift 2
	run "$@"
	if [ "${UPDATE:-}" = 1 ]; then
		mkdir -p "$GOLDEN"
		cp "$T/out" "$GOLDEN/$name.out"
	fi
	if [ "$rc" -ne "$want" ]; then
		fail "$name" "exit $rc, expected $want; stderr: $(head -c 300 "$T/err")"
	elif [ -s "$T/err" ]; then
		fail "$name" "stderr not empty: $(head -c 300 "$T/err")"
	elif [ ! -f "$GOLDEN/$name.out" ]; then
		fail "$name" "no golden file $GOLDEN/$name.out (UPDATE=1 makes it)"
	elif ! diff -u "$GOLDEN/$name.out" "$T/out" >"$T/diff"; then
		fail "$name" "stdout differs from golden/$name.out:"
		cat "$T/diff"
	else
		case $name in
		*-json)
			if is_json; then ok "$name"; else fail "$name" "invalid JSON: $(cat "$T/jsonerr")"; fi ;;
		*) ok "$name" ;;
		esac
	fi
}

# error NAME RC PATTERN ARGS...: exit status RC, exactly one stderr line
# matching PATTERN (grep -E). stdout is not checked here.
error() {
	name=$1 want=$2 pat=$3
	shift 3
	run "$@"
	lines=$(wc -l <"$T/err")
	if [ "$rc" -ne "$want" ]; then
		fail "$name" "exit $rc, expected $want; stderr: $(head -c 300 "$T/err")"
	elif [ "$lines" -ne 1 ]; then
		fail "$name" "expected one line on stderr, got $lines:"
		cat "$T/err"
	elif ! grep -Eq "$pat" "$T/err"; then
		fail "$name" "stderr '$(cat "$T/err")' does not match '$pat'"
	else
		ok "$name"
	fi
}

# check NAME 'SHELL CONDITION': a condition over the last run's files.
check() {
	if eval "$2"; then ok "$1"; else fail "$1" "check failed: $2"; fi
}

