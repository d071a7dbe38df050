"""Where the repository and the tests' own files are, whichever room a test lives in."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
