# SPDX-License-Identifier: MIT
"""Helpers for kernel data structures, as drgn.helpers (see kpeek.helpers.linux)."""
