"""The instructor's side: grading a class and what comes of it.

- ``classgrade``: ``kit grade`` on a class; ``cluster``: its tasks in threads or on Dask;
  ``layout``: where everything of a class lives in its submissions folder; ``record``: one
  student's notebook graded (typed, stored as JSON); ``gradebook``: the grading records and
  ``grades.csv``; ``overrides``: the instructor's corrections; ``summaries``: ``gradebook.csv``
  and the class tables; ``spreadsheet``: CSV text no spreadsheet runs, and the instructor's
  tables read back; ``exports``: the class table for Canvas
  and Moodle, through a roster; ``feedback``: one feedback file per student and notebook;
  ``answers``: the written answers' sheets and marks; ``bakeoff``: ``kit bakeoff``, every
  student's entry scored once in the sandbox on held-out reviews, and the class leaderboard.
"""
