"""The owner's review of a grading folder (SPEC S7): the queue, the terminal and markdown reviews,
the helpfulness review, and the files they keep (``docs/review.md``).

The review only adds files to a grading folder (``review.json``, ``reviews/<n>.json``); it never
rewrites a graded cell, so ``grade-ai --changed`` and the review cannot overwrite each other.
"""
