"""A preemptive schedule's executions, built when first read from the flat record a policy
keeps (every job's processors in one list, the times of the jobs suspended)."""

from __future__ import annotations

import numpy as np

from campaign.models.rigid.executions import Executions


def test_executions_follow_the_flat_record():
    # Job 0 ran once on {0, 1}; job 1 once on {2}; job 2 on {3, 4, 5}, suspended at 3, resumed
    # at 6; job 3 on {0}, started late (a penalty): it executes from 5.5, not from its start 5.
    executions = Executions(
        start=np.array([0.0, 1.0, 2.0, 5.0]),
        end=np.array([5.0, 4.0, 9.0, 7.5]),
        size=[2, 1, 3, 1],
        placed=[0, 1, 2, 3, 4, 5, 0],
        offset={0: 0, 1: 2, 2: 3, 3: 6},
        runs={2: (2.0, 3.0, 6.0, 9.0), 3: (5.5, 7.5)},
    )
    expected = (
        ((0.0, 5.0, (0, 1)),),
        ((1.0, 4.0, (2,)),),
        ((2.0, 3.0, (3, 4, 5)), (6.0, 9.0, (3, 4, 5))),
        ((5.5, 7.5, (0,)),),
    )
    assert len(executions) == 4
    assert executions == expected and expected == executions
    assert executions != expected[:3]
    assert executions[2] == expected[2] and list(executions) == list(expected)
    assert repr(executions) == repr(expected)
