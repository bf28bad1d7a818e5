"""The course tooling: what instructors and the test suite use to run and grade notebooks.

- ``config``: paths, the notebook pattern, nbval arguments and the reference environment.
- ``release``: ``solutions/`` → the students' ``notebooks/``.
- ``compare``: the one comparison of a checked cell's output with its reference.
- ``nbval_plugin``: the pytest plugin that puts that comparison into nbval.
- ``grading``: ``kit grade``.
- ``runner``: ``kit run``.
- ``environment``: the floating-point kernels and library versions a run uses.
- ``references``: ``kit references``, rewriting solutions' reference outputs.
- ``tolerances``: measures how far checked numbers move under other BLAS kernels.
- ``workspace``: the student's blank working copies in ``work/``.
- ``kernel``: the lab's Jupyter kernel, which imports the kit before the notebook's folder.
- ``lab_contents``: the lab's contents manager, which refuses to serve ``solutions/``.
- ``student_copy``: ``kit release --student-repo``, a copy of the kit without solutions.

The course library (``helpers.*`` outside this package) never imports from here.
"""
