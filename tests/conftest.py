"""Puts tests/ on sys.path so that test modules can ``from oracle import ...``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
