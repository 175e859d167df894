# SPDX-License-Identifier: MIT
"""drgn.helpers.linux.slab's names, from kpeek.helpers.linux."""
from kpeek.helpers.linux import *  # noqa: F401,F403
from kpeek.helpers.linux import __all__  # noqa: F401
