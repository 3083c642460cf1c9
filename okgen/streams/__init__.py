"""Evolving-fact streams: tracks of dated facts across the days of a series, the questions asked
at every interval while their answers change, OAKS's JSON format and OAKS's metrics.

Modules: :mod:`~okgen.streams.tracks` (per-day statuses and gold sequences),
:mod:`~okgen.streams.questions` (options and distractors), :mod:`~okgen.streams.build`
(``okgen stream build``), :mod:`~okgen.streams.store` (folders, verification),
:mod:`~okgen.streams.publish` (archives, publish, pull), :mod:`~okgen.streams.oaks` (import and
export), :mod:`~okgen.streams.metrics` (Acc, AL, DS, PM, transition classes),
:mod:`~okgen.streams.evaluate` (``okgen eval --stream``) and :mod:`~okgen.streams.report`.
See docs/streams.md.
"""
