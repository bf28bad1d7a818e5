"""The course tooling: what instructors and the test suite use to release, run and grade notebooks.

One sub-package per phase, each importing only the ones listed after it (the layer contract,
``tests/test_project.py``): ``kit`` (``helpers.cli``) → ``student`` | ``classroom`` → ``engine``
→ ``notebook`` → this package's own modules → the course library.

- ``notebook``: the notebook format and what is done to notebooks — release (and the student
  copy of the kit, released without solutions), merge, the one comparison, reference outputs,
  tolerances, running them.
- ``engine``: the grading engine — a graded notebook run under nbval, in a sandbox for a
  class, and one verdict per exercise.
- ``student``: the student's side — ``kit check``, the workspace, the lab's kernel and
  contents manager, the integrity of a student copy's library.
- ``classroom``: the instructor's side — ``kit grade`` on a class, its records, gradebook,
  exports, feedback and answer sheets; ``kit bakeoff``, the class bake-off.

Shared by all of them:

- ``config``: paths, the notebook pattern, nbval arguments and the reference environment;
  ``course_file``: the course's assessment files (``course/``) read and checked against each
  other and the notebooks (``kit course check``);
  ``arguments``: the argument types of the ``kit`` command and the tooling's own commands;
  ``memory``: the one sampler of the memory a group of processes holds (the runner's
  kernels, a sandboxed job, a benchmark); ``safe_text``: the one boundary every text from a
  student crosses before it is written to a file or a terminal (``printable``); ``stops``:
  Ctrl-C and SIGTERM as one exception, with the exit status each calls for; ``startup``:
  what the kit's own processes do before they read a notebook (go without an optional module
  jsonschema would spend 2 s importing).

The course library (``helpers.*`` outside this package) never imports from here.
"""
