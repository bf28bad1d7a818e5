"""The grading engine: one phase per module, called through ``grading.grade``.

- ``nbval_run``: the graded notebook run under nbval in its own process; ``nbval_plugin``:
  the pytest plugin that compares outputs (``notebook.compare``) and reports how each cell
  ended, as data; ``sandbox``: where a class's student code runs, put together from
  ``limits`` (what a job may use, its cores and its user), ``bubblewrap`` (the command and
  environment it sees) and ``supervise`` (starting, watching and killing it).
- ``hidden``: hidden checks, run by the grader, which asks the kernel (``callee``) to call
  the student's functions and reads the answers as plain data only (``plain``).
- ``verdict``: the one decision per exercise (``Verdict``), which every reader renders;
  ``wording``: a verdict in words, as ``kit check`` and ``check()`` show it.
- ``flags``: what an instructor should look at in a student's code.
- ``grading``: ``grade``, the engine's one entry, for ``kit check``, ``kit grade`` and the tests.
"""
