# SPDX-License-Identifier: MIT
# The Python bindings' tests run on the synthetic dump of tests/tools/mkpydump
# (its truth.json: the generator's own values) built in a temporary
# directory once per session. KPEEK_BUILD names the build tree (default
# build/), whose python/ directory tests/python/run puts on sys.path.
import json
import os
import subprocess

import pytest

TOP = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))


def build_dir():
    b = os.environ.get("KPEEK_BUILD", "build")
    return b if os.path.isabs(b) else os.path.join(TOP, b)


@pytest.fixture(scope="session")
def dump(tmp_path_factory):
    d = tmp_path_factory.mktemp("pydump")
    subprocess.run([os.path.join(build_dir(), "tools", "mkpydump"), str(d)], check=True)
    with open(d / "truth.json") as f:
        truth = json.load(f)
    return str(d / "synth.core"), truth


@pytest.fixture(scope="session")
def truth(dump):
    return dump[1]


@pytest.fixture
def prog(dump):
    import kpeek
    return kpeek.program_from_core_dump(dump[0])
