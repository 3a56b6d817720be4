"""The generic judge (S6.4-S6.8): blinding, fences, the grader-address scan, one request per cell
and its strict reply, saved judgments, the grading folder's lock and the judge's options.

It knows no suite: a suite's checks hand it items (``items.Item``) and sections of material
(``items.Section``), and it hands back verdicts.
"""
