"""Helpers for the Sentiment Practical Kit.

The course library, which the notebooks import, holds one topic per module:

- the data: ``fetch`` (the data sets, their checksums, downloading and extracting them),
  ``files`` (checksums, atomic writes, a bad file set aside),
  ``data`` (the corpus loaders), ``own_reviews`` (your own labelled reviews), ``settings``
  (data folder, data source, profile), ``errors`` (``KitError``, ``InputError``),
  ``storage`` (every computed cache: one key, atomic writes, a checksum verified on read),
  ``owned`` (files written for people, never overwriting one they changed), ``validation``
  (the argument checks every public function makes), ``log`` (the one channel for
  diagnostics);
- text and features: ``text`` (the shared tokeniser, HTML line breaks, snippets),
  ``corpus`` (corpus statistics), ``critics`` (the signed critics of the 2,000 reviews),
  ``features`` (bag-of-words vectorizers), ``overlap`` (train-test overlap and
  near-duplicates, which the folds keep together);
- models and their evaluation: ``naive_bayes``, ``nbsvm`` (Wang and Manning's NB-scaled SVM),
  ``evaluation`` (cross-validation, the results store, the ``System`` protocol), ``systems``
  (the headline systems), ``leaderboard`` (every system ranked, every pair tested),
  ``significance`` (paired tests, the Wilson interval), ``embeddings`` (Doc2Vec models and
  vectors), ``embedding_space`` (what the vector space encodes: similarities, probes);
- the labs: ``analysis`` (error analysis), ``annotation`` (the error-annotation sheet),
  ``projector`` (Embedding Projector export), ``transport`` (transportability),
  ``leakage`` (notebook 08's analysis of overlap), ``adversarial`` (Zelligs and Claudes),
  ``bakeoff`` (the class bake-off's rules, a dry run of an entry and its cross-validation);
- in a notebook: ``exercises`` (an unfinished exercise's error is one line, not a traceback);
- code read as code: ``syntax`` (Python parsed into a tree, safely from several threads).

On top of it sit the ``kit`` command (``cli``) and the course tooling, ``helpers.course``
(its modules are listed in its own docstring). The library never imports either.

Importing the library changes nothing in the process: no environment variable, no hook. The
kit's own processes set up what the reference outputs need (``helpers.course.startup``: the
reference BLAS kernels before numpy loads; ``helpers.course.config.apply_reference_env``: those
and the hash seed for the kernels they start; Binder's ``start`` likewise), and the kit's
kernel, which ``kit lab`` and Binder start, shows an unfinished exercise in one line
(``exercises.show_unfinished_briefly``).
"""

__version__ = "0.1.0"
