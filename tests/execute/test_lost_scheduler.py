"""A call to a gone scheduler ends the run with one error, worded in one place."""

from concurrent.futures import CancelledError

import pytest

from campaign.errors import CampaignError
from campaign.execute.shell import lost_scheduler, scheduler_calls

LOST = (
    "lost the Dask scheduler at tcp://10.0.0.1:8786 ({}); the 7 results finished in this run "
    "are saved: run the same command again (with a running scheduler) to finish the rest"
)


def lost(error):
    return lost_scheduler("tcp://10.0.0.1:8786", 7, error)


def refuse(error):
    raise error


@pytest.mark.parametrize(
    "error", [OSError("connection refused"), CancelledError(), RuntimeError("client closed")]
)
def test_a_lost_scheduler_is_one_campaign_error(error):
    with pytest.raises(CampaignError) as raised:
        with scheduler_calls(lost):
            refuse(error)
    assert str(raised.value) == LOST.format(type(error).__name__)
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


def test_other_errors_pass_through_and_results_come_back():
    with pytest.raises(ValueError, match="^a bug$"):
        with scheduler_calls(lost):
            refuse(ValueError("a bug"))
    with scheduler_calls(lost):
        value = sum([1, 2])
    assert value == 3
