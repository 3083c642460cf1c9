"""Series of daily snapshots, longitudinal evaluation, cutoff estimates and timelines.

Light imports only; see :mod:`okgen.series.store` (build, list, verify),
:mod:`okgen.series.publish` (archives, publish, pull), :mod:`okgen.series.evaluate`
(``okgen eval --series``), :mod:`okgen.series.stats` (buckets, block-bootstrap intervals,
moving average), :mod:`okgen.series.cutoff` (step-model cutoff estimate) and
:mod:`okgen.series.timeline` (tables and plots).
"""
