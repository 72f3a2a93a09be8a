"""The embedding actor pool's size on a cluster (``ray_env.pool_size``): exact values, no Ray."""

from __future__ import annotations

import pytest

from ragingest.pipeline.ray_env import pool_size

GIB = 2**30
SHARE, ACTOR_MEMORY = 0.5, 3 << 29  # the engine's: half a CPU and 1.5 GiB per actor


@pytest.mark.parametrize(
    ("cpus", "requested", "files", "memory", "actors"),
    [
        (2, None, 100, None, 2),  # default: one per CPU
        (8, None, 100, 64 * GIB, 8),
        (8, None, 3, 64 * GIB, 3),  # never more actors than files
        (8, 12, 100, None, 12),  # asked for: more than one per CPU is allowed ...
        (8, 20, 100, None, 15),  # ... until no split task would get its half CPU
        (1, 2, 100, None, 1),  # two actors would hold the only CPU: a deadlock
        (2, 4, 100, None, 3),
        (8, None, 100, 4 * GIB, 2),  # what the cluster's memory holds
        (1, None, 100, GIB, 1),  # never under one
        (0.5, None, 100, None, 1),
    ],
)
def test_pool_size(cpus, requested, files, memory, actors):
    assert pool_size(cpus, requested, files, memory, SHARE, ACTOR_MEMORY) == actors
