"""Every benchmark's code (``benchmarks/`` holds the scripts that call it and their
results): runner latency (:mod:`.runner`), grading per family (:mod:`.grading`), GRPO
grading throughput (:mod:`.throughput`), vector envs (:mod:`.vector`) and Ray
(:mod:`.ray`). Speed is reported as ratios against a baseline measured in the same run.

Layer: the top, beside ``cli``: it drives whole environments.
"""
