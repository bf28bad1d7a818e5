"""The student's side of the kit.

- ``check``: ``kit check`` and ``check("N.M")``, the self-check.
- ``workspace``: the student's blank working copies in ``work/``; ``kernel``: the lab's
  Jupyter kernel, which imports the kit before the notebook's folder; ``lab_contents``: the
  lab's contents manager, which refuses to serve ``solutions/``; ``student_copy``:
  ``kit release --student-repo``, a copy of the kit without solutions.
"""
