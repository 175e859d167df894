# SPDX-License-Identifier: MIT
"""python3 -m kpeek [-c DUMP] [SCRIPT [ARG...]]: an interactive console with
prog bound to the kernel (the running one through /proc/kcore without -c),
like drgn without arguments; with SCRIPT, runs it with prog bound."""
import argparse
import code
import runpy
import sys

import kpeek
import kpeek.helpers.linux


def main():
    ap = argparse.ArgumentParser(prog="python3 -m kpeek", description=__doc__)
    ap.add_argument("-c", "--core", help="a dump file (default: /proc/kcore)")
    ap.add_argument("script", nargs=argparse.REMAINDER, help="a script to run")
    args = ap.parse_args()
    try:
        prog = kpeek.Program(args.core) if args.core else kpeek.program_from_kernel()
    except (OSError, kpeek.Error, LookupError, ValueError) as e:
        print("kpeek: %s" % e, file=sys.stderr)
        return 1
    ns = {"prog": prog, "kpeek": kpeek}
    for name in kpeek.__all__:
        ns[name] = getattr(kpeek, name)
    for name in kpeek.helpers.linux.__all__:
        ns[name] = getattr(kpeek.helpers.linux, name)
    if args.script:
        sys.argv = args.script
        runpy.run_path(args.script[0], init_globals=ns, run_name="__main__")
        return 0
    banner = "kpeek %s: %r bound to prog; helpers of kpeek.helpers.linux imported" % (
        kpeek.libkpeek_version, prog)
    code.interact(banner=banner, local=ns, exitmsg="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
