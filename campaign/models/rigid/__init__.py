"""A library for simulating rigid parallel jobs: sites under local scheduling policies (one
class per policy, ``policies``), availability profiles, and one event loop that drives one
site or a grid of sites. The ``jobs`` and ``grid`` models are built on it."""
