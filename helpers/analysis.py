"""Error analysis: which reviews a system gets most confidently wrong, and why.

- ``ranked_errors``: misclassified reviews by how far on the wrong side of the decision
  boundary they fall (SVM margin, NB log-odds), from cached CV predictions.
- ``Explainer``: a bag-of-words model refitted as in one CV fold, with each feature's
  contribution to a review's decision (NB log-probability ratios, SVM weight × feature
  value) and the text highlighted word by word (``highlight``); for the headline SVM-BOW,
  whose features are chosen by inner CV (``evaluation.FeatureChoice``), the setting that
  choice makes (``chosen_setting``).
- ``changed``: a system with one setting changed, in every candidate of a feature choice.
- ``nearest_reviews``: a review's most similar training reviews (tf-idf or Doc2Vec vectors);
  ``nearest_training_review`` the nearest of every review at once, and ``same_critic`` whether
  it is by the same signed critic.
- Error cues and a rule-based first guess at an error's category (``error_cues``,
  ``suggest_categories``); the sheet a student annotates is ``helpers.annotation``.
- ``error_rate_by``: error rate in bins of a review property (length, opinion words).
- ``change_effect``: what a change to a system did to each kind of error (closing the loop).
- ``unpaired_difference``: two accuracies measured on different items (CV and deployment),
  their difference with Newcombe's interval and Fisher's exact test.
"""

from __future__ import annotations

import dataclasses
import functools
import html
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.stats import fisher_exact
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.preprocessing import normalize
from sklearn.svm import LinearSVC

from helpers import data, settings, storage, systems
from helpers.errors import InputError, KitError
from helpers.evaluation import PREDICTION_COLUMNS, BowSystem, FeatureChoice, System, make_svm
from helpers.features import make_vectorizer, mark_negation
from helpers.naive_bayes import NaiveBayes
from helpers.significance import accuracy_interval
from helpers.text import snippet, token_spans, tokenize, tokenized
from helpers.validation import (
    check_array,
    check_binary,
    check_int,
    check_lexicon,
    check_number,
    check_same_length,
    check_table,
    check_texts,
)

REVIEW_COLUMNS = ("doc_id", "label", "text")
CUE_COLUMNS = ("negated", "late_contrast", "opinion_density", "comparison", "rating")
THRESHOLD_CUES = ("negated", "comparison", "opinion_density")

# --------------------------------------------------------------------------- ranking errors


def ranked_errors(predictions: pd.DataFrame, reviews: pd.DataFrame | None = None,
                  n: int | None = None) -> pd.DataFrame:
    """Misclassified reviews, most confidently wrong first.

    Parameters
    ----------
    predictions : DataFrame
        One system's CV predictions (``helpers.evaluation.cross_validate``).
    reviews : DataFrame, optional
        Review texts with ``doc_id``, ``label``, ``text`` (default the 2,000 reviews).
    n : int, optional
        Keep only the top ``n``.

    Returns
    -------
    DataFrame
        doc_id, system, label, prediction, score, margin (``|score|``: distance on the
        wrong side of the boundary; NB log-odds or SVM margin), fold, C, text; ordered by
        margin, largest first (ties by doc_id).

    Raises
    ------
    InputError
        ``predictions`` or ``reviews`` lacks a column or repeats a doc_id; ``correct`` is not
        True/False or 0/1; a misclassified review is not among ``reviews``; ``n`` is not a
        whole number >= 1.
    """
    check_table(predictions, "predictions", PREDICTION_COLUMNS, min_rows=0)
    if n is not None:
        check_int(n, "n")
    reviews = data.load_movie_reviews() if reviews is None else reviews
    check_table(reviews, "reviews", REVIEW_COLUMNS)
    for table, name in ((predictions, "predictions"), (reviews, "reviews")):
        if table.doc_id.duplicated().any():
            raise InputError(f"{name} repeats doc_id(s) {table.doc_id[table.doc_id.duplicated()].iloc[0]!r}: "
                             "one row per review.")
    correct: np.ndarray | list[bool] = (check_binary(predictions.correct, "predictions.correct")
                                        if len(predictions) else [])
    wrong = predictions[~np.asarray(correct, dtype=bool)].copy()
    unknown = sorted(set(wrong.doc_id) - set(reviews.doc_id))
    if unknown:
        raise InputError(f"reviews lacks the misclassified review(s) {', '.join(map(repr, unknown[:5]))}: "
                         "give the reviews the predictions were made for.")
    wrong["margin"] = wrong.score.abs()
    wrong = wrong.merge(reviews[["doc_id", "label", "text"]], on="doc_id", validate="one_to_one")
    wrong = wrong.sort_values(["margin", "doc_id"], ascending=[False, True], ignore_index=True)
    columns = ["doc_id", "system", "label", "prediction", "score", "margin", "fold", "C", "text"]
    return wrong[columns].head(n) if n is not None else wrong[columns]


# --------------------------------------------------------------------------- explanations


def _check_reviews(reviews: pd.DataFrame) -> None:
    check_table(reviews, "reviews", ("label", "text"))
    check_texts(reviews.text, "reviews.text")
    if reviews.label.nunique() != 2:
        found = sorted(map(str, reviews.label.unique()))
        raise InputError(f"reviews must have two labels (pos and neg), got {found}.")


def chosen_setting(system: BowSystem | FeatureChoice, reviews: pd.DataFrame) -> tuple[BowSystem, float]:
    """The bag-of-words setting, and its C, that ``system`` trains when trained on ``reviews``.

    A ``FeatureChoice`` (the headline ``svm-bow``) scores every candidate setting with every C
    of its grid by inner CV on ``reviews`` alone and keeps the best, exactly as
    ``evaluation.cross_validate`` does in each outer fold and ``evaluation.fit_predict`` on
    its training reviews; its choice is cached under ``data/results/`` (keyed by the system
    and the reviews' labels and texts). A ``BowSystem`` is its own setting, with the C its
    inner CV chooses (NaN for NB).

    Parameters
    ----------
    system : BowSystem or FeatureChoice
    reviews : DataFrame
        Training reviews with ``label`` and ``text``, in the order the system trains on them
        (the inner CV's round-robin groups follow it).

    Returns
    -------
    (BowSystem, float)
        The setting (one of ``system.candidates`` for a feature choice) and its C.

    Raises
    ------
    InputError
        ``system`` is neither; ``reviews`` lacks the label or text column, a text is not a
        string, or the labels are not two classes.
    """
    if not isinstance(system, BowSystem | FeatureChoice):
        raise InputError(f"system must be a BowSystem or a FeatureChoice, not {type(system).__name__}.")
    _check_reviews(reviews)
    if not isinstance(system, FeatureChoice):
        return system, _tuned(system, reviews)[1]
    # a feature choice's inner CV scores every candidate with every C (about 15 s on 1,800
    # reviews), and notebook 05 asks for the same choice again in every run: it is cached
    candidate, C = storage.cached(_choice_path(system, reviews), lambda: _tuned(system, reviews),
                                  _write_choice, functools.partial(_read_choice, system=system))
    return system.candidates[candidate], C


#: The libraries whose versions key a cached choice or fit (nltk: negation marking and stemming).
FIT_LIBRARIES = ("numpy", "scipy", "scikit-learn", "nltk")


def _tuned(system: BowSystem | FeatureChoice, reviews: pd.DataFrame) -> tuple[int, float]:
    """The inner CV's choice on ``reviews``: the candidate's position (0 for a BowSystem), C."""
    rows = np.arange(len(reviews))
    # features() cuts a test part too: one training row, as tf-idf refuses an empty one
    X, _ = system.features(system.represent(reviews), rows, rows[:1])
    model, C = system.fit_tuned(X, reviews.label.to_numpy())
    return int(getattr(model, "candidate", 0)), float(C)


def _choice_path(system: FeatureChoice, reviews: pd.DataFrame) -> Path:
    """Where a feature choice's choice on ``reviews`` is cached: keyed by the system and the
    reviews' labels and texts, in order (the inner CV's round-robin groups follow it)."""
    key = storage.key({"artefact": "feature choice", "system": system.key(),
                       "reviews": storage.content_digest(reviews, ["label", "text"])},
                      libraries=FIT_LIBRARIES)
    return settings.data_dir() / "results" / f"{key}.json"


def _write_choice(choice: tuple[int, float], path: Path) -> None:
    path.write_text(json.dumps({"candidate": choice[0], "C": choice[1]}))


def _read_choice(path: Path, system: FeatureChoice) -> tuple[int, float] | None:
    """A cached choice, if it names one of the system's candidates and a C of its grid."""
    found = json.loads(path.read_text())
    if not isinstance(found, dict):
        return None
    candidate, C = found.get("candidate"), found.get("C")
    if not (type(candidate) is int and 0 <= candidate < len(system.candidates)
            and type(C) in (int, float) and C in system.candidates[candidate].Cs):
        return None
    return candidate, float(C)


#: A fitted explanation: the vectorizer, each feature's weight, the intercept and C.
_Fit = tuple[CountVectorizer, np.ndarray, float, float]
#: What a cached fit holds: the features in column order, the vocabulary's own order (as
#: columns), one weight per column, the intercept and C.
_FIT_KEYS = {"features", "order", "weights", "intercept", "C"}


def _fit_path(setting: BowSystem, C: float, reviews: pd.DataFrame) -> Path:
    """Where an explainer of ``setting`` with ``C`` fitted on ``reviews`` is cached: keyed by
    them (the reviews by their labels and texts, in order) and the libraries that fit it."""
    key = storage.key({"artefact": "explainer", "setting": setting.key(), "C": C,
                       "reviews": storage.content_digest(reviews, ["label", "text"])},
                      libraries=FIT_LIBRARIES)
    return settings.data_dir() / "results" / f"explainer_{key}.json"


def _write_fit(fit: _Fit, path: Path) -> None:
    vectorizer, weights, intercept, C = fit
    # a float's JSON text is its repr, which reads back as the same float
    path.write_text(json.dumps({"features": vectorizer.get_feature_names_out().tolist(),
                                "order": list(vectorizer.vocabulary_.values()), "weights": weights.tolist(),
                                "intercept": intercept, "C": C}))


def _read_fit(path: Path, setting: BowSystem, C: float) -> _Fit | None:
    """A cached fit of ``setting`` with ``C``, if whole (``_fit_problem``); its vectorizer is
    the setting's with the fitted vocabulary, as fitting leaves it."""
    found = json.loads(path.read_text())
    if _fit_problem(found, C):
        return None
    vectorizer = _vectorizer_of(setting)
    vectorizer.vocabulary_ = {found["features"][column]: column for column in found["order"]}
    vectorizer.fixed_vocabulary_ = False
    return vectorizer, np.asarray(found["weights"]), found["intercept"], C


def _vectorizer_of(setting: BowSystem) -> CountVectorizer:
    """The setting's vectorizer, unfitted (an explainer's features are never tf-idf)."""
    return make_vectorizer(setting.ngram, binary=setting.binary, stemming=setting.stemming,
                           min_df=setting.min_df)


def _fit_problem(found: object, C: float) -> bool:
    """Whether a cached fit is not whole: its keys, distinct features, every column once in
    ``order``, one finite float weight per feature, a finite float intercept, and ``C``."""
    if not isinstance(found, dict) or set(found) != _FIT_KEYS:
        return True
    features, order, weights = found["features"], found["order"], found["weights"]
    if not (isinstance(features, list) and features and all(isinstance(f, str) for f in features)
            and len(set(features)) == len(features) and isinstance(order, list)
            and all(type(i) is int for i in order) and sorted(order) == list(range(len(features)))
            and isinstance(weights, list) and len(weights) == len(features)):
        return True
    values = np.asarray(weights)
    intercept = found["intercept"]
    return not (values.dtype == float and np.isfinite(values).all() and type(intercept) is float
                and np.isfinite(intercept) and found["C"] == C)


def changed(system: BowSystem | FeatureChoice, **changes) -> BowSystem | FeatureChoice:
    """``system`` with some of its settings changed; in a ``FeatureChoice``, in every candidate.

    So a change to SVM-BOW (``changed(systems.system("svm-bow"), negation=True)``) keeps its
    procedure: the features and C are still chosen by inner CV, now among changed candidates.

    Parameters
    ----------
    system : BowSystem or FeatureChoice
    **changes
        ``BowSystem`` fields and their new values (``negation=True``, ``min_df=2``, ...).

    Raises
    ------
    InputError
        ``system`` is neither, no change is given, or a change names no ``BowSystem`` field.
    """
    fields = {f.name for f in dataclasses.fields(BowSystem)}
    unknown = sorted(set(changes) - fields)
    if not isinstance(system, BowSystem | FeatureChoice):
        raise InputError(f"system must be a BowSystem or a FeatureChoice, not {type(system).__name__}.")
    if not changes or unknown:
        raise InputError(f"Give one or more BowSystem settings to change ({', '.join(sorted(fields))})"
                         + (f"; unknown: {', '.join(unknown)}." if unknown else "."))
    if isinstance(system, FeatureChoice):
        return dataclasses.replace(system, candidates=tuple(dataclasses.replace(c, **changes)
                                                            for c in system.candidates))
    return dataclasses.replace(system, **changes)


class Explainer:
    """A bag-of-words system refitted on given reviews, whose decisions can be taken apart.

    A linear model's decision for a review is a sum over its features,
    ``score = intercept + sum_j x_j w_j``: for NB, ``w_j = log P(w_j | pos) - log P(w_j | neg)``
    and the intercept is the log prior ratio; for the SVM, ``w`` is its weight vector.

    Parameters
    ----------
    system : BowSystem or FeatureChoice
        The features and classifier (tf-idf weighting is not supported). A feature choice
        (the headline ``svm-bow``) first chooses its setting and C by inner CV on the reviews
        given to ``fit`` (``chosen_setting``), as its cross-validation and ``fit_predict`` do.
    C : float, optional
        The SVM's C (a ``BowSystem`` only); default: chosen by inner CV on the reviews given
        to ``fit``, as ``system.fit_tuned`` does.

    Attributes
    ----------
    setting_ : BowSystem
        The setting fitted: ``system``, or the candidate a feature choice chose.
    C_ : float
        The C the SVM was fitted with: ``C``, or the one inner CV chose; NaN for NB.
    vectorizer_ : CountVectorizer
        The vocabulary, fitted on the reviews.
    features_ : ndarray of str
        The feature names, column by column.
    weights_ : ndarray of shape (n_features,)
        Each feature's weight ``w_j``.
    intercept_ : float
    """

    def __init__(self, system: System, C: float | None = None) -> None:
        if isinstance(system, FeatureChoice):
            if C is not None:
                raise InputError("A feature choice chooses its setting and C together: give C "
                                 "only with a BowSystem.")
        elif not isinstance(system, BowSystem) or system.tfidf:
            raise KitError("Explanations need a bag-of-words system without tf-idf "
                           "(nb, nb-presence, svm-bow).")
        self.system, self.C = system, C

    def fit(self, reviews: pd.DataFrame) -> Explainer:
        """Fit the vocabulary and classifier on ``reviews`` (doc_id, label, text).

        A feature choice's fit (of the setting and C it chose) is cached under ``results/``,
        keyed by the setting, C, the reviews' labels and texts and the libraries' versions, and
        read back as fitted.

        Raises
        ------
        InputError
            ``reviews`` lacks the label or text column, a text is not a string, or the
            labels are not two classes.
        KitError
            A feature choice chose a tf-idf setting, which cannot be taken apart.
        """
        _check_reviews(reviews)
        if isinstance(self.system, FeatureChoice):
            self.setting_, C = chosen_setting(self.system, reviews)
            if self.setting_.tfidf:
                raise KitError("The feature choice chose tf-idf features on these reviews, which an "
                               "explanation cannot take apart.")
            # notebook 05 refits SVM-BOW's explainers in every run: about 7 s each, most of it the
            # uni+bi vocabulary, so the fit of the chosen setting and C is cached
            fit = storage.cached(_fit_path(self.setting_, C, reviews), lambda: self._fitted(reviews, C),
                                 _write_fit, functools.partial(_read_fit, setting=self.setting_, C=C))
        else:
            self.setting_ = self.system
            fit = self._fitted(reviews, self.C)
        self.vectorizer_, self.weights_, self.intercept_, self.C_ = fit
        self.features_ = self.vectorizer_.get_feature_names_out()
        return self

    def _fitted(self, reviews: pd.DataFrame, C: float | None) -> _Fit:
        """The vectorizer fitted on ``reviews``, the classifier's weights, intercept and C."""
        s = self.setting_
        vectorizer = _vectorizer_of(s)
        X = vectorizer.fit_transform([self._tokens(tokens) for tokens in tokenized(reviews.text)])
        model, C = self._fit_classifier(X, reviews.label.to_numpy(), C)
        if s.classifier == "nb":
            return (vectorizer, model.feature_log_prob_[1] - model.feature_log_prob_[0],
                    float(model.class_log_prior_[1] - model.class_log_prior_[0]), C)
        return vectorizer, model.coef_[0], float(model.intercept_[0]), C

    def _tokens(self, tokens: list[str]) -> list[str]:
        """A document's tokens as the setting counts them: negation marked if it marks it."""
        return mark_negation(list(tokens)) if self.setting_.negation else list(tokens)

    def _fit_classifier(self, X: sp.csr_matrix, y: np.ndarray,
                        C: float | None) -> tuple[NaiveBayes | LinearSVC, float]:
        if self.setting_.classifier == "svm" and C is not None:
            return make_svm(C).fit(X, y), float(C)
        return self.setting_.fit_tuned(X, y)

    def contributions(self, text: str) -> pd.DataFrame:
        """Each feature of ``text`` with its value, weight and contribution (value × weight).

        Returns
        -------
        DataFrame
            feature, value, weight, contribution; strongest (by |contribution|) first.
            ``intercept_ + contribution.sum()`` is the model's score for the text.
        """
        x = self.vectorizer_.transform([self._tokens(tokenize(text))]).tocsr()
        columns = x.indices
        frame = pd.DataFrame({"feature": self.features_[columns], "value": x.data,
                              "weight": self.weights_[columns]})
        frame["contribution"] = frame.value * frame.weight
        order = np.lexsort((frame.feature, -frame.contribution.abs()))
        return frame.iloc[order].reset_index(drop=True)

    def score(self, text: str) -> float:
        """The model's score for ``text`` (positive means ``pos``)."""
        return self.intercept_ + float(self.contributions(text).contribution.sum())

    def token_weights(self, text: str) -> list[tuple[int, int, float]]:
        """A weight per token of ``text`` for highlighting: (start, end, weight).

        A token's weight is its unigram's weight plus half the weight of each bigram it is
        part of (so a bigram's weight is shared by its two words). Features unseen in
        training weigh 0.
        """
        spans = token_spans(text)
        words = self._tokens(self.vectorizer_.build_tokenizer()([t for *_, t in spans]))
        vocabulary = self.vectorizer_.vocabulary_

        def weight(feature: str) -> float:
            column = vocabulary.get(feature)
            return 0.0 if column is None else float(self.weights_[column])

        result = np.array([weight(w) for w in words])
        for i in range(len(words) - 1):  # bigram lookups find nothing in a unigram vocabulary
            shared = weight(f"{words[i]} {words[i + 1]}") / 2
            result[i] += shared
            result[i + 1] += shared
        return [(start, end, float(w)) for (start, end, _), w in zip(spans, result, strict=True)]

    def highlight(self, text: str, n_marked: int = 15) -> Highlighted:
        """``text`` with every word coloured by its weight (see ``Highlighted``)."""
        check_int(n_marked, "n_marked", minimum=0)
        return Highlighted(text, self.token_weights(text), n_marked)


@dataclass(frozen=True)
class Highlighted:
    """A text with a weight per token: HTML in a notebook, plain text elsewhere.

    In HTML, words pushing towards ``pos`` are green and towards ``neg`` red, the stronger
    the darker (hover to see the weight). As plain text, the ``n_marked`` strongest
    distinct words are marked ``[+word]`` or ``[-word]``.
    """

    text: str
    weights: list[tuple[int, int, float]]
    n_marked: int = 15

    def _pieces(self):
        position = 0
        for start, end, weight in self.weights:
            yield self.text[position:start], None
            yield self.text[start:end], weight
            position = end
        yield self.text[position:], None

    def _repr_html_(self) -> str:
        scale = max((abs(w) for *_, w in self.weights), default=0.0) or 1.0
        parts = []
        for piece, weight in self._pieces():
            if weight is None or weight == 0:
                parts.append(html.escape(piece))
                continue
            colour = "0, 140, 60" if weight > 0 else "210, 30, 30"
            parts.append(f'<span style="background: rgba({colour}, {abs(weight) / scale:.2f})" '
                         f'title="{weight:+.3f}">{html.escape(piece)}</span>')
        return f'<div style="line-height: 1.8">{"".join(parts)}</div>'

    def __str__(self) -> str:
        strongest: dict[str, float] = {}
        for start, end, weight in self.weights:
            word = self.text[start:end].lower()
            if abs(weight) > abs(strongest.get(word, 0.0)):
                strongest[word] = weight
        marked = set(sorted(strongest, key=lambda w: (-abs(strongest[w]), w))[:self.n_marked])
        return "".join(f"[{'+' if weight > 0 else '-'}{piece}]"
                       if weight is not None and piece.lower() in marked else piece
                       for piece, weight in self._pieces())

    __repr__ = __str__


#: How far a refitted model's score for a review may be from its cross-validated one (they
#: agree to about 1e-15: the same liblinear fit on the same features).
SCORE_ATOL = 1e-6


def fold_explainer(doc_id: str, name: str = "svm-bow") -> Explainer:
    """The model that made the CV prediction for ``doc_id``: refitted on that review's
    training folds, with the C its fold chose (a headline bag-of-words system).

    For ``svm-bow``, whose features are chosen by inner CV too, the choice is made again on
    the training folds (``chosen_setting``): the same setting and C as in the fold.
    """
    reviews = data.load_movie_reviews()
    row = reviews.loc[reviews.doc_id == doc_id]
    if row.empty:
        raise InputError(f"doc_id must be one of the 2,000 movie reviews' ids, not {doc_id!r}.")
    fold = int(row.fold.iloc[0])
    predictions = systems.predictions(name, progress=False)
    C, score = predictions.loc[predictions.doc_id == doc_id, ["C", "score"]].iloc[0]
    system = systems.system(name)
    if not isinstance(system, FeatureChoice):
        return Explainer(system, C=None if np.isnan(C) else float(C)).fit(reviews[reviews.fold != fold])
    explainer = Explainer(system).fit(reviews[reviews.fold != fold])
    # the choice made again (or cached) must be the fold's, or this explains another model:
    # the same C, and the same score for the review (another setting with that C scores it apart)
    refitted = explainer.score(row.text.iloc[0])
    if explainer.C_ != C or not np.isclose(refitted, score, rtol=0, atol=SCORE_ATOL):
        raise KitError(f"The model refitted on {doc_id}'s training folds (C = {explainer.C_:g}) scores it "
                       f"{refitted:.6f}, but the cached {name} predictions used C = {C:g} and scored "
                       f"{score:.6f}: delete data/results/ and run again.")
    return explainer


NEIGHBOUR_SNIPPET_WORDS = 25


def nearest_reviews(doc_id: str, k: int = 3, vectors: np.ndarray | None = None,
                    reviews: pd.DataFrame | None = None) -> pd.DataFrame:
    """The ``k`` training reviews most similar to ``doc_id`` (those outside its CV fold).

    Parameters
    ----------
    vectors : ndarray, optional
        One row per review (e.g. Doc2Vec vectors, in the reviews' order); default tf-idf
        of unigrams with English stop words removed.

    Returns
    -------
    DataFrame
        doc_id, label, similarity (cosine), snippet; most similar first.

    Raises
    ------
    InputError
        ``k`` not a whole number >= 1; ``reviews`` lacks a column; ``vectors`` not a 2-D
        array of finite numbers (or a sparse matrix) with one row per review; ``doc_id``
        not among the reviews.
    """
    check_int(k, "k")
    reviews = data.load_movie_reviews() if reviews is None else reviews
    check_table(reviews, "reviews", (*REVIEW_COLUMNS, "fold"))
    if vectors is not None and not sp.issparse(vectors):
        vectors = check_array(vectors, "vectors", ndim=2)
    where = np.flatnonzero(reviews.doc_id.to_numpy() == doc_id)
    if len(where) != 1:
        raise InputError(f"doc_id must be the id of one review of the table, not {doc_id!r}.")
    if vectors is None:
        vectors = TfidfVectorizer(stop_words="english").fit_transform(reviews.text)
    if vectors.shape[0] != len(reviews):
        raise InputError(f"vectors must have one row per review ({len(reviews)}), not {vectors.shape[0]}.")
    unit = normalize(vectors)
    product = unit @ unit[where[0]].T
    similarity = (product.toarray() if sp.issparse(product) else np.asarray(product)).ravel()
    candidates = np.flatnonzero(reviews.fold.to_numpy() != reviews.fold.iloc[where[0]])
    best = candidates[np.argsort(-similarity[candidates], kind="stable")[:k]]
    return pd.DataFrame({"doc_id": reviews.doc_id.to_numpy()[best], "label": reviews.label.to_numpy()[best],
                         "similarity": similarity[best],
                         "snippet": [snippet(t, NEIGHBOUR_SNIPPET_WORDS)
                                     for t in reviews.text.to_numpy()[best]]})


# --------------------------------------------------------------------------- error cues

NEGATORS = frozenset({"not", "no", "never", "nothing", "nobody", "none", "neither", "nor",
                      "hardly", "barely", "without", "cannot"})
CONTRASTS = frozenset({"but", "however", "although", "though", "yet", "nevertheless", "nonetheless"})
COMPARISONS = frozenset({"than", "unlike", "compared", "comparison", "sequel", "remake",
                         "original", "predecessor", "previous", "similar"})
CATEGORIES = ("rating_mismatch", "late_contrast", "negation", "comparison", "plot_summary", "other")
NEGATION_WINDOW = 3
LATE_START = 0.75
UNUSUAL_SHARE = 0.25
RATING_HIGH, RATING_LOW = 0.6, 0.4
_RATING = re.compile(r"\b(\d+(?:\.\d+)?) ?(?:/|out of) ?(4|5|10)\b")


def _negated(tokens: list[str], i: int, window: int = NEGATION_WINDOW) -> bool:
    return any(t in NEGATORS or t.endswith("n't") for t in tokens[max(0, i - window):i])


def _polarity(tokens: list[str], lexicon: dict[str, frozenset[str]]) -> int:
    return sum(t in lexicon["pos"] for t in tokens) - sum(t in lexicon["neg"] for t in tokens)


def explicit_rating(text: str) -> float:
    """The mean of the ratings written in ``text`` ("7/10", "3 out of 4"), scaled to [0, 1];
    NaN if there are none."""
    tokenize(text)  # refuses anything but a string, as every text function does
    found = [float(a) / float(b) for a, b in _RATING.findall(text.lower()) if float(a) <= float(b)]
    return float(np.mean(found)) if found else float("nan")


def error_cues(text: str, lexicon: dict[str, frozenset[str]]) -> dict[str, float]:
    """Measurable hints at why a review is hard to classify.

    Parameters
    ----------
    lexicon : dict
        ``{"pos": words, "neg": words}`` (``helpers.data.load_opinion_lexicon()``).

    Returns
    -------
    dict
        ``negated``: share of opinion words with a negator ("not", "n't", "never", …) up to
        3 tokens before; ``late_contrast``: 1 if a contrast word ("but", "however", …) in the
        last quarter of the review turns the lexicon polarity (sign of #pos − #neg words) of
        what follows against what precedes it, else 0; ``opinion_density``: opinion words per
        token (low in plot summaries); ``comparison``: comparison words ("than", "sequel",
        "original", …) per 100 tokens; ``rating``: ``explicit_rating(text)``.

    Raises
    ------
    InputError
        ``text`` is not a string; ``lexicon`` lacks ``pos``/``neg`` word sets.
    """
    check_lexicon(lexicon)
    tokens = tokenize(text)
    opinion = [i for i, t in enumerate(tokens) if t in lexicon["pos"] or t in lexicon["neg"]]
    late = [i for i, t in enumerate(tokens) if t in CONTRASTS and i >= LATE_START * len(tokens)]
    turn = 0.0
    if late:
        before, after = _polarity(tokens[:late[-1]], lexicon), _polarity(tokens[late[-1]:], lexicon)
        turn = float(np.sign(before) * np.sign(after) < 0)
    n = max(len(tokens), 1)
    return {
        "negated": float(np.mean([_negated(tokens, i) for i in opinion])) if opinion else 0.0,
        "late_contrast": turn,
        "opinion_density": len(opinion) / n,
        "comparison": 100 * sum(t in COMPARISONS for t in tokens) / n,
        "rating": explicit_rating(text),
    }


def cue_table(reviews: pd.DataFrame, lexicon: dict[str, frozenset[str]] | None = None) -> pd.DataFrame:
    """``error_cues`` for every review (index: doc_id)."""
    check_table(reviews, "reviews", ("doc_id", "text"), min_rows=0)
    lexicon = data.load_opinion_lexicon() if lexicon is None else lexicon
    return pd.DataFrame([error_cues(t, lexicon) for t in reviews.text], index=pd.Index(reviews.doc_id))


def cue_thresholds(cues: pd.DataFrame, share: float = UNUSUAL_SHARE) -> dict[str, float]:
    """Cut-offs marking a cue as unusual: the top ``share`` of reviews for negation and
    comparison, the bottom ``share`` for opinion density (computed on a reference corpus)."""
    check_table(cues, "cues", THRESHOLD_CUES)
    share = check_number(share, "share", 0, 1, low_open=True, high_open=True)
    return {"negated": float(cues.negated.quantile(1 - share)),
            "comparison": float(cues.comparison.quantile(1 - share)),
            "opinion_density": float(cues.opinion_density.quantile(share))}


def suggest_categories(cues: pd.DataFrame, labels, thresholds: dict[str, float]) -> pd.Series:
    """A rule-based first guess at each error's category (the first rule that fires).

    In order: ``rating_mismatch`` (the ratings written in the text point the other way
    from the label: ≥ 0.6 for a negative review, ≤ 0.4 for a positive one; often they rate
    *other* films), ``late_contrast``, ``negation``, ``comparison``, ``plot_summary``
    (few opinion words), else ``other``.

    Raises
    ------
    InputError
        ``cues`` lacks a cue column; ``labels`` not one per row of ``cues``; ``thresholds``
        lacks a cut-off or one is not a finite number.
    """
    check_table(cues, "cues", CUE_COLUMNS, min_rows=0)
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise InputError("labels must be 1-D: one label per row of cues.")
    check_same_length(cues=cues, labels=labels)
    if not isinstance(thresholds, dict) or not set(THRESHOLD_CUES) <= set(thresholds):
        raise InputError(f"thresholds must be the dict cue_thresholds returns ({', '.join(THRESHOLD_CUES)}).")
    for name in THRESHOLD_CUES:
        check_number(thresholds[name], f"thresholds[{name!r}]")
    rules = [
        ("rating_mismatch", ((cues.rating >= RATING_HIGH) & (labels == "neg"))
         | ((cues.rating <= RATING_LOW) & (labels == "pos"))),
        ("late_contrast", cues.late_contrast > 0),
        ("negation", cues.negated >= thresholds["negated"]),
        ("comparison", cues.comparison >= thresholds["comparison"]),
        ("plot_summary", cues.opinion_density <= thresholds["opinion_density"]),
    ]
    suggestion = pd.Series("other", index=cues.index, name="suggested_category")
    for name, fires in reversed(rules):  # earlier rules overwrite later ones
        suggestion[fires.to_numpy()] = name
    return suggestion


def opinion_word_counts(texts, lexicon: dict[str, frozenset[str]] | None = None) -> np.ndarray:
    """How many opinion-lexicon words (positive or negative, with repeats) each text has."""
    texts = check_texts(texts, "texts", allow_empty=True)
    lexicon = data.load_opinion_lexicon() if lexicon is None else check_lexicon(lexicon)
    words = lexicon["pos"] | lexicon["neg"]
    return np.array([sum(t in words for t in tokenize(text)) for text in texts])


# --------------------------------------------------------------------------- reporting


def error_rate_by(values, correct, bins: int = 5) -> pd.DataFrame:
    """Error rate in ``bins`` quantile bins of a per-review value (e.g. length).

    Returns
    -------
    DataFrame
        One row per bin: low, high (the bin's value range), count, error_rate.

    Raises
    ------
    InputError
        ``values`` not finite numbers; ``correct`` not True/False or 0/1; either empty or of
        different lengths; ``bins`` not a whole number >= 1.
    """
    values, correct = check_array(values, "values"), check_binary(correct, "correct")
    check_same_length(values=values, correct=correct)
    check_int(bins, "bins")
    codes = pd.qcut(values, bins, labels=False, duplicates="drop")
    frame = pd.DataFrame({"bin": codes, "value": values, "error": ~correct})
    return frame.groupby("bin").agg(low=("value", "min"), high=("value", "max"),
                                    count=("error", "size"), error_rate=("error", "mean")).reset_index()


def change_effect(categories: pd.Series, before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """What a change did to each kind of error: errors before and after, fixed and new.

    Parameters
    ----------
    categories : Series
        A category per review, indexed by doc_id: ``suggest_categories`` for all reviews, or
        your annotated sheet's ``category`` for its rows. Only these reviews are counted.
    before, after : DataFrame
        Predictions of the baseline and of the changed system on the same reviews (doc_id
        and correct columns: ``cross_validate`` or ``fit_predict`` results).

    Returns
    -------
    DataFrame
        One row per category (largest first) and a ``total`` row: reviews, errors_before,
        errors_after, fixed (wrong before, right after), new_errors (right before, wrong after).

    Raises
    ------
    InputError
        ``categories`` is not a Series of strings indexed by doc_id; ``before`` or ``after``
        lacks doc_id or correct, or has a category's doc_id missing; they cover different reviews.
    """
    if not isinstance(categories, pd.Series) or categories.empty or not categories.map(
            lambda c: isinstance(c, str)).all():
        raise InputError("categories must be a non-empty Series of category names indexed by doc_id.")
    if categories.index.has_duplicates:
        raise InputError("categories has a doc_id twice: give each review one category.")
    right = {}
    for name, table in (("before", before), ("after", after)):
        check_table(table, name, ("doc_id", "correct"))
        correct = pd.Series(check_binary(table.correct, f"{name}.correct"), index=pd.Index(table.doc_id))
        missing = categories.index.difference(correct.index)
        if len(missing):
            raise InputError(f"{name} has no prediction for {len(missing)} categorised review(s), "
                             f"e.g. {missing[0]!r}: compare predictions on the same reviews.")
        right[name] = correct.loc[categories.index].to_numpy()
    frame = pd.DataFrame({"category": categories.to_numpy(), "reviews": 1,
                          "errors_before": ~right["before"], "errors_after": ~right["after"],
                          "fixed": ~right["before"] & right["after"],
                          "new_errors": right["before"] & ~right["after"]})
    table = frame.groupby("category").sum().astype(int)
    table = table.sort_values(["reviews", "errors_before"], ascending=False)
    table.loc["total"] = table.sum()
    return table


# --------------------------------------------------------------------------- neighbours' critics


def nearest_training_review(vectors, folds) -> np.ndarray:
    """For each review, the position of its most similar review in another CV fold.

    The reviews of other folds are the ones a review's CV model trained on (as in
    ``nearest_reviews``); similarity is the cosine, and of equals the first wins.

    Parameters
    ----------
    vectors : ndarray or sparse matrix
        One row per review (Doc2Vec vectors, tf-idf rows).
    folds : array-like
        Each review's CV fold; at least two folds.

    Returns
    -------
    ndarray of int
        Row positions, one per review.

    Raises
    ------
    InputError
        ``vectors`` not a 2-D array of finite numbers (or a sparse matrix); ``folds`` not one
        value per row, or a single fold (a review would have no training reviews).
    """
    if not sp.issparse(vectors):
        vectors = check_array(vectors, "vectors", ndim=2)
    folds = np.asarray(folds)
    if folds.ndim != 1 or len(folds) != vectors.shape[0]:
        raise InputError(f"folds must give one fold per row of vectors ({vectors.shape[0]}), "
                         f"got shape {folds.shape}.")
    if len(np.unique(folds)) < 2:
        raise InputError("folds must name at least two folds: a review's training reviews are in the others.")
    unit = normalize(vectors)
    similarity = unit @ unit.T
    similarity = similarity.toarray() if sp.issparse(similarity) else np.asarray(similarity)
    similarity[folds[:, None] == folds[None, :]] = -np.inf  # its own fold: not trained on
    return similarity.argmax(axis=1)


def same_critic(critics, neighbours) -> np.ndarray:
    """Whether each review and its neighbour are signed by one critic (both signed).

    Parameters
    ----------
    critics : Series or array-like
        Each review's critic, or missing (``pd.NA``, None, NaN) where unsigned, as
        ``helpers.critics.signed_critic`` gives them.
    neighbours : array-like of int
        Each review's neighbour, by row position (``nearest_training_review``).

    Returns
    -------
    ndarray of bool
        False where either review is unsigned.

    Raises
    ------
    InputError
        ``neighbours`` not whole numbers, one per review, each a row position.
    """
    critics = pd.Series(critics).reset_index(drop=True)
    positions = np.asarray(neighbours)
    whole = np.issubdtype(positions.dtype, np.integer)
    if positions.ndim != 1 or len(positions) != len(critics) or not whole:
        raise InputError(f"neighbours must be one row position (a whole number) per review ({len(critics)}).")
    if len(positions) and (positions.min() < 0 or positions.max() >= len(critics)):
        raise InputError(f"neighbours must be row positions from 0 to {len(critics) - 1}.")
    mine, theirs = critics, critics.iloc[positions].reset_index(drop=True)
    signed = (mine.notna() & theirs.notna()).to_numpy()
    same = np.zeros(len(critics), dtype=bool)
    same[signed] = mine[signed].to_numpy() == theirs[signed].to_numpy()
    return same


# --------------------------------------------------------------------------- two accuracies


def unpaired_difference(correct_a, correct_b, confidence: float = 0.95) -> dict[str, float]:
    """The difference of two accuracies measured on different items, with its uncertainty.

    Each accuracy is an estimate: a cross-validation accuracy on 2,000 reviews as much as a
    deployment accuracy on 1,000. Asking whether one lies in the other's interval treats the
    first as exact; the difference has an interval of its own. Newcombe's (1998, method 10)
    interval combines the two Wilson intervals (``significance.accuracy_interval``); Fisher's
    exact test (``scipy.stats.fisher_exact``, two-sided) tests whether the two accuracies are
    equal. For the *same* items use a paired test instead (``significance.compare``).

    Parameters
    ----------
    correct_a, correct_b : array-like of bool
        Whether each item of either sample was classified right.
    confidence : float
        The interval's confidence level.

    Returns
    -------
    dict
        accuracy_a, accuracy_b, difference (a − b), low, high (its interval), p_value.

    Raises
    ------
    InputError
        Either sample empty or holding anything but True/False or 0/1; ``confidence``
        outside (0, 1).
    """
    a, b = check_binary(correct_a, "correct_a"), check_binary(correct_b, "correct_b")
    p_a, low_a, high_a = accuracy_interval(a, confidence)
    p_b, low_b, high_b = accuracy_interval(b, confidence)
    difference = p_a - p_b
    table = [[int(a.sum()), int((~a).sum())], [int(b.sum()), int((~b).sum())]]
    return {"accuracy_a": p_a, "accuracy_b": p_b, "difference": difference,
            "low": difference - float(np.hypot(p_a - low_a, high_b - p_b)),
            "high": difference + float(np.hypot(high_a - p_a, p_b - low_b)),
            "p_value": float(fisher_exact(table).pvalue)}
