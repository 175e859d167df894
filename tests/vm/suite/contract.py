# The JSON contract (doc/json/COMMAND.schema.json): where a command's --json
# output breaks its schema. Imported by the QEMU suite (every kpeek run with
# --json, host-side and live, is validated beside its check) and run as a
# script by tests/cli (`contract.py OUTPUT KPEEK-ARGS...`).
import json
import os
import sys
import threading

DOC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "doc", "json"))
_validators = {}
_lock = threading.Lock()

# kpeek's global options that take a value as the next argument (cli/main.c).
GLOBAL_WITH_VALUE = {"-c", "--core", "-m", "--system-map", "--kallsyms", "--btf", "--arch"}


def schema_errors(command, doc):
    """Lines saying where doc breaks COMMAND.schema.json (at most 10)."""
    try:
        import jsonschema
    except ImportError:
        return ["python3-jsonschema is not installed: the JSON contract cannot be checked"]
    path = os.path.join(DOC, "%s.schema.json" % command)
    with _lock:
        if command not in _validators:
            try:
                with open(path) as f:
                    _validators[command] = jsonschema.Draft202012Validator(json.load(f))
            except (OSError, ValueError) as e:
                _validators[command] = "no usable doc/json/%s.schema.json: %s" % (command, e)
        v = _validators[command]
    if isinstance(v, str):
        return [v]
    return ["%s schema: %s at /%s" % (command, e.message[:200], "/".join(str(p) for p in e.absolute_path))
            for e in v.iter_errors(doc)][:10]


def command_of(args):
    """The command of a kpeek argument list: the first word that is neither
    a global option nor its value."""
    i = 0
    while i < len(args):
        a = args[i]
        if a in GLOBAL_WITH_VALUE:
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        return a
    return None


def wants_json(args):
    cmd = command_of(args)
    return cmd is not None and any(a in ("-j", "--json") for a in args) and \
        not ("--help" in args or "-h" in args)


def run_errors(args, rc, out):
    """Where the output of `kpeek ARGS` (exit rc) breaks its command's
    schema: [] when it holds or the run wrote no JSON by design (an error
    before any output: stdout empty)."""
    if not args or not wants_json(args) or rc is None or rc > 2:
        return []
    if not out.strip():
        return [] if rc != 0 else ["exit 0 without a JSON document"]
    try:
        doc = json.loads(out)
    except ValueError as e:
        return ["--json output is not one JSON document (%s)" % e]
    return schema_errors(command_of(args), doc)


def main(argv):
    """--runs DIR: every N.out with N.args (exit status, then one argument
    a line) in DIR, as tests/cli/lib.sh keeps them; a line per breach."""
    if len(argv) != 3 or argv[1] != "--runs":
        print("usage: contract.py --runs DIR", file=sys.stderr)
        return 2
    bad = 0
    names = sorted((n for n in os.listdir(argv[2]) if n.endswith(".args")), key=lambda n: int(n.split(".")[0]))
    for name in names:
        with open(os.path.join(argv[2], name)) as f:
            rc, *args = f.read().splitlines()
        with open(os.path.join(argv[2], name[:-5] + ".out"), errors="replace") as f:
            out = f.read()
        for e in run_errors(args, int(rc), out):
            print("kpeek %s: %s" % (" ".join(args), e))
            bad += 1
    return 1 if bad or not names else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
