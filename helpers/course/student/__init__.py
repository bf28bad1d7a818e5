"""The student's side of the kit.

- ``check``: ``kit check NN`` and ``check("N.M")``, the self-check; ``progress``: the
  progress table ``kit check`` alone prints from the saved checks, without running anything.
- ``workspace``: the student's blank working copies in ``work/``; ``copies``: which notebooks
  there are the student's copies of a release (a second copy, a renamed one); ``kernel``: the lab's
  Jupyter kernel, which imports the kit before the notebook's folder; ``reveal``: the kernel's
  folding of what answers a "predict first" question until it is opened; ``unsaved``: what
  the lab ran but the student did not save, which ``kit check`` names; ``lab_contents``: the
  lab's contents manager, which refuses to serve ``solutions/`` and ``notebooks/``;
  ``integrity``: the library of a student copy as released (``helpers/RELEASED.sha256``).
"""
