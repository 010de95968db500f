"""The options of a run are checked once, each bad value refused in one line naming it."""

import math

import pytest

from campaign.cluster.cluster_options import ClusterOptions
from campaign.errors import BadValue
from campaign.execute import WAIT_WORKERS_SECONDS, ExecutionOptions


@pytest.mark.parametrize(
    "given, message",
    [
        ({"retries": -1}, "retries -1 must be >= 0"),
        ({"task_timeout": 0}, "task_timeout 0 must be > 0 seconds"),
        ({"wait_workers": -1.0}, "wait_workers -1.0 must be >= 0 seconds"),
        ({"wait_workers": math.nan}, "wait_workers nan must be >= 0 seconds"),
        ({"batch_size": 0}, "batch_size 0 must be >= 1"),
    ],
)
def test_a_bad_execution_option_is_refused_by_its_parameter_name(given, message):
    with pytest.raises(BadValue) as raised:
        ExecutionOptions(**given)
    assert str(raised.value) == message
    assert raised.value.parameter == next(iter(given))


def test_execution_options_default_to_what_run_uses():
    options = ExecutionOptions()
    assert (options.retries, options.task_timeout, options.wait_workers) == (1, None, 60.0)
    assert (options.replicate_tail, options.locality, options.batch_size) == (True, True, None)
    assert ExecutionOptions(wait_workers=math.inf).wait_workers == math.inf


def test_bad_cluster_options_are_refused_by_their_parameter_name():
    with pytest.raises(BadValue, match="^workers 0 must be >= 1$"):
        ClusterOptions(workers=0)
    with pytest.raises(BadValue, match="^workers 2 sizes the embedded cluster; with a sch"):
        ClusterOptions(workers=2, scheduler="tcp://127.0.0.1:8786")


def test_without_a_cluster_file_the_wait_for_workers_is_the_default():
    assert ClusterOptions().default_wait(WAIT_WORKERS_SECONDS) == WAIT_WORKERS_SECONDS
    assert ClusterOptions(workers=2).default_wait(5.0) == 5.0
