# The repository's own tests: calibration/ is its own rootdir and is never collected here.
collect_ignore = ["calibration"]
