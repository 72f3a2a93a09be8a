#!/usr/bin/env python3
"""Re-verify this tuning set (every reference span and every sources.json hash) with
``bench/data/check_set.py``: ``python3 check.py``; exit status 0 when everything holds."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from check_set import main  # bench/data is not a package

if __name__ == "__main__":
    sys.exit(main(os.path.dirname(os.path.abspath(__file__))))
