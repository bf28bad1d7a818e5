"""Notebooks: their format, release and reference outputs.

- ``cells``: the notebook format (exercise, check, hidden-check and answer cells), read;
  ``release``: ``solutions/`` → the students' ``notebooks/`` in that format;
  ``student_copy``: ``kit release --student-repo``, a copy of the kit without solutions (an
  instructor's step: not in the copy itself).
- ``answer_text``: what a student wrote in an answer cell (no imports: ``kit check``'s table).
- ``merge``: a student's notebook merged into the graded one.
- ``compare``: the one comparison of a checked cell's output with its reference.
- ``runner``: ``kit run``; ``references``: ``kit references``, rewriting solutions' reference
  outputs; ``environment``: the floating-point kernels and library versions a run uses;
  ``tolerances``: how far checked numbers move under other BLAS kernels.
"""
