"""EASY as the datacenter reference simulator runs it (``backfill_after_start: false``): a
pass that started a job at the head of the queue backfills nothing."""

from __future__ import annotations

from campaign.models.rigid.policies.easy import Easy


class DatacenterEasy(Easy):
    backfill_after_start = False
