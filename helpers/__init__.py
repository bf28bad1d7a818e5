"""Helpers for the Sentiment Practical Kit.

One module per topic: ``data`` (fetching and loading corpora), ``text`` (the shared
tokeniser), ``features``, ``naive_bayes``, ``significance``, ``evaluation`` (cross-validation
and the results store), and the course tooling (``release``, ``grading``, ``runner``,
``cli``).
"""

__version__ = "0.1.0"
