"""python/pto_runtime/scene/__main__.py — ``python -m pto_runtime.scene PATH...`` (see runner)."""

import sys

from .runner import main

sys.exit(main())
