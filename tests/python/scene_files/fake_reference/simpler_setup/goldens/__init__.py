"""tests/python/scene_files/fake_reference/simpler_setup/goldens — a stand-in for a reference
checkout's pure-Python golden helpers, which the import hook loads from the checkout."""

import numpy as np


def ramp(n):
    return np.arange(n, dtype=np.float32)
