"""The course tooling: what instructors and the test suite use to release, run and grade notebooks.

Notebooks and their release:

- ``config``: paths, the notebook pattern, nbval arguments and the reference environment;
  ``arguments``: the argument types of the ``kit`` command and the tooling's own commands.
- ``release``: ``solutions/`` → the students' ``notebooks/`` (the notebook format: exercise,
  check, hidden-check and answer cells).
- ``runner``: ``kit run``; ``references``: ``kit references``, rewriting solutions' reference
  outputs; ``environment``: the floating-point kernels and library versions a run uses;
  ``tolerances``: how far checked numbers move under other BLAS kernels.

The grading engine (one phase per module, called through ``grading.grade``):

- ``merge``: a student's notebook merged into the graded one.
- ``nbval_run``: the graded notebook run under nbval in its own process; ``nbval_plugin``:
  the pytest plugin that compares outputs (``compare``, the one comparison) and reports how
  each cell ended, as data; ``sandbox``: where a class's student code runs.
- ``verdict``: the one decision per exercise (``Verdict``), which every reader renders.
- ``grading``: ``grade``, the engine's one entry, for ``kit check``, ``kit grade`` and the tests.

Students and classes:

- ``check``: ``kit check`` and ``check("N.M")``, the self-check.
- ``workspace``: the student's blank working copies in ``work/``; ``kernel``: the lab's
  Jupyter kernel, which imports the kit before the notebook's folder; ``lab_contents``: the
  lab's contents manager, which refuses to serve ``solutions/``; ``student_copy``:
  ``kit release --student-repo``, a copy of the kit without solutions.
- ``classgrade``: ``kit grade`` on a class; ``cluster``: its tasks in threads or on Dask;
  ``layout``: where everything of a class lives in its submissions folder;
  ``gradebook``: the grading records, the instructor's corrections and the tables from them;
  ``exports``: the class table for Canvas and Moodle, through a roster; ``feedback``: one
  feedback file per student and notebook; ``answers``: the written answers' sheets and marks;
  ``flags``: what an instructor should look at in a student's code.

The course library (``helpers.*`` outside this package) never imports from here.
"""
