"""(c)(d)(f) The plan and its loop, §3.3-§3.6: the pipeline in memory, the scheduler, the driver,
the transitions of a persisted plan, retry, scoped replan, the runtime backstop, revision and
when a plan may terminate. Pure: values in, values out; the caller does the I/O.
"""
