"""The pipelines: each ties the stages together for one command, in the order of the data
flow. `run` (spec, plan, execute and ledger round by round, results.nc), `verify` (a sample
rerun and compared bit for bit), `merge` (shard folders joined, `merge_folders` checking they
hold one campaign), `remetric` (metrics recomputed from kept outputs), `kept_outputs` (the
outputs tasks kept, chosen, shown, extracted) and `sizing_pilot` (`plan --estimate`).

What two pipelines share lives in its stage: results.nc is written by
`campaign.results.writing`, the tasks dispatch sends are built by `campaign.execute.items`,
the parsers that define a campaign's metrics are `campaign.results.metric_parsers`.
"""
