"""Error analysis helpers: ranking, explanations, neighbours, cues, reporting."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.svm import LinearSVC

from helpers import analysis, evaluation, storage, systems
from helpers.errors import InputError, KitError
from helpers.evaluation import SVM_MAX_ITER, BowSystem, FeatureChoice
from helpers.features import make_vectorizer, mark_negation
from helpers.naive_bayes import NaiveBayes
from helpers.text import tokenized

LEXICON = {"pos": frozenset({"good", "great", "fun"}), "neg": frozenset({"bad", "dull", "awful"})}


@pytest.fixture
def reviews() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for i in range(40):
        label = "pos" if i % 2 else "neg"
        words = rng.choice(["great", "fun", "good"] if label == "pos" else ["dull", "awful", "bad"], 4)
        rows.append((f"d{i}", i % 4, label, " ".join([*words, "the", "film", "not", "plot"])))
    return pd.DataFrame(rows, columns=["doc_id", "fold", "label", "text"])


def test_ranked_errors_most_confident_first(reviews):
    predictions = pd.DataFrame({"doc_id": ["d0", "d1", "d2", "d3"], "fold": 0, "system": "x",
                                "prediction": ["pos", "neg", "neg", "neg"], "score": [0.5, -2.0, -1.0, -3.0],
                                "correct": [False, False, True, False], "C": 0.1})
    errors = analysis.ranked_errors(predictions, reviews)
    assert errors.doc_id.tolist() == ["d3", "d1", "d0"]
    assert errors.margin.tolist() == [3.0, 2.0, 0.5]
    assert errors.label.tolist() == ["pos", "pos", "neg"]
    assert analysis.ranked_errors(predictions, reviews, n=1).doc_id.tolist() == ["d3"]


@pytest.mark.parametrize("system", [BowSystem("nb"), BowSystem("nb", ngram="uni+bi", binary=True),
                                    BowSystem("svm", ngram="uni+bi", binary=True)])
def test_contributions_add_up_to_the_models_score(reviews, system):
    explainer = analysis.Explainer(system, C=0.1).fit(reviews)
    vectorizer = make_vectorizer(system.ngram, binary=system.binary)
    X = vectorizer.fit_transform(tokenized(reviews.text))
    if system.classifier == "nb":
        model = NaiveBayes().fit(X, reviews.label)
    else:
        model = LinearSVC(C=0.1, random_state=0, max_iter=SVM_MAX_ITER).fit(X, reviews.label)
    text = "a great film , not bad , fun fun"
    expected = model.decision_function(vectorizer.transform([text.split()]))[0]
    assert explainer.score(text) == pytest.approx(expected)
    table = explainer.contributions(text)
    assert (table.contribution.abs().diff().dropna() <= 1e-12).all()
    if not system.binary:
        assert table.set_index("feature").value["fun"] == 2


def test_token_weights_share_bigram_weights_and_keep_offsets(reviews):
    explainer = analysis.Explainer(BowSystem("nb", ngram="uni+bi", binary=True)).fit(reviews)
    weight = dict(zip(explainer.features_, explainer.weights_, strict=True))
    text = "Great<br />FILM unseen"
    spans = explainer.token_weights(text)
    assert [text[s:e] for s, e, _ in spans] == ["Great", "FILM", "unseen"]
    bigram = weight.get("great film", 0.0)
    assert spans[0][2] == pytest.approx(weight["great"] + bigram / 2)
    assert spans[1][2] == pytest.approx(weight["film"] + bigram / 2)
    assert spans[2][2] == 0.0


def test_highlighted_html_and_plain_text():
    weights = [(3, 7, 1.0), (12, 15, 0.0), (16, 20, -0.5)]
    shown = analysis.Highlighted("<b>good</b> but dull", weights, n_marked=1)
    page = shown._repr_html_()
    assert "&lt;b&gt;" in page and "<b>" not in page
    assert "rgba(0, 140, 60, 1.00)" in page and "rgba(210, 30, 30, 0.50)" in page
    assert str(shown) == "<b>[+good]</b> but dull"
    assert str(analysis.Highlighted("good but dull", [(0, 4, 1.0), (9, 13, -2.0)])) == "[+good] but [-dull]"


def _two_words(pos: str, neg: str) -> pd.DataFrame:
    rows = [(f"d{i}", i % 3, "pos" if i % 2 else "neg", pos if i % 2 else neg) for i in range(30)]
    return pd.DataFrame(rows, columns=["doc_id", "fold", "label", "text"])


def test_explainer_chooses_c_again_on_other_data():
    # Separable by one word each, every C scores alike and inner CV keeps the first; when the
    # classes differ in how often they use "film", a tiny C (close to comparing class means)
    # calls every review negative, and inner CV needs the larger C.
    system = BowSystem("svm", Cs=(0.001, 1.0))
    explainer = analysis.Explainer(system)
    assert explainer.fit(_two_words("great", "dull")).C_ == 0.001
    assert explainer.fit(_two_words("great film", "film film film film film")).C_ == 1.0
    assert explainer.C is None
    given = analysis.Explainer(system, C=0.1).fit(_two_words("great", "dull"))
    assert (given.C, given.C_) == (0.1, 0.1)
    assert np.isnan(analysis.Explainer(BowSystem("nb")).fit(_two_words("great", "dull")).C_)


def test_explainer_refuses_what_it_cannot_take_apart():
    with pytest.raises(KitError, match="bag-of-words system without tf-idf"):
        analysis.Explainer(BowSystem("svm", tfidf=True))


def _by_frequency() -> pd.DataFrame:
    # Both classes use the same words, so presence cannot tell them apart; how often is all.
    rows = [(f"d{i}", i % 3, "pos" if i % 2 else "neg", "film film film film dull" if i % 2 else "film dull")
            for i in range(30)]
    return pd.DataFrame(rows, columns=["doc_id", "fold", "label", "text"])


PRESENCE, FREQUENCY = BowSystem("svm", binary=True, Cs=(0.1,)), BowSystem("svm", Cs=(0.1, 1.0))


def test_chosen_setting_is_the_candidate_the_inner_cv_prefers(empty_data_dir):  # its cache there
    reviews = _by_frequency()
    setting, C = analysis.chosen_setting(FeatureChoice((PRESENCE, FREQUENCY)), reviews)
    assert setting == FREQUENCY and C in FREQUENCY.Cs
    # what fit_predict trains: the same candidate's predictions
    choice = evaluation.fit_predict(FeatureChoice((PRESENCE, FREQUENCY)), train=reviews, test=reviews)
    assert (choice.C == C).all() and choice.correct.all()
    # a BowSystem is its own setting, with the C its inner CV chooses
    assert analysis.chosen_setting(PRESENCE, reviews) == (PRESENCE, 0.1)
    with pytest.raises(InputError, match="BowSystem or a FeatureChoice"):
        analysis.chosen_setting("svm-bow", reviews)


def test_a_feature_choice_s_choice_is_cached_and_a_bad_cache_is_made_again(empty_data_dir, monkeypatch):
    reviews, system = _by_frequency(), FeatureChoice((PRESENCE, FREQUENCY))
    chosen = analysis.chosen_setting(system, reviews)
    [stored] = (empty_data_dir / "results").glob("*.json")
    with monkeypatch.context() as patched:
        patched.setattr(analysis, "_tuned", lambda *args: pytest.fail("chose again, cache unread"))
        assert analysis.chosen_setting(system, reviews) == chosen
    # other reviews (one label changed) are another choice
    other = reviews.assign(label=reviews.label.where(reviews.index != 0, "pos"))
    analysis.chosen_setting(system, other)
    assert len(list((empty_data_dir / "results").glob("*.json"))) == 2
    # a C outside the candidate's grid, even under a checksum that matches, is chosen again
    stored.write_text('{"candidate": 1, "C": 0.5}')
    (stored.parent / (stored.name + ".sha256")).write_text(storage.sha256sum(stored) + "\n")
    assert analysis.chosen_setting(system, reviews) == chosen
    assert list(stored.parent.glob("*.corrupt-*"))


#: A feature choice of one rich candidate: uni+bi presence, negation marked, a cut-off.
RICH = FeatureChoice((BowSystem("svm", ngram="uni+bi", binary=True, negation=True, min_df=2, Cs=(0.1, 1.0)),))


@pytest.mark.parametrize("system", [FeatureChoice((PRESENCE, FREQUENCY)), RICH], ids=["by-frequency", "rich"])
def test_a_feature_choice_s_explainer_is_cached_as_fitted(empty_data_dir, monkeypatch, reviews, system):
    reviews = pd.concat([reviews, _by_frequency()], ignore_index=True)
    fitted = analysis.Explainer(system).fit(reviews)
    assert list((empty_data_dir / "results").glob("explainer_*.json"))
    with monkeypatch.context() as patched:
        patched.setattr(analysis.Explainer, "_fitted", lambda *_: pytest.fail("fitted again, cache unread"))
        read = analysis.Explainer(system).fit(reviews)
    assert (read.setting_, read.C_, read.intercept_) == (fitted.setting_, fitted.C_, fitted.intercept_)
    assert read.features_.tolist() == fitted.features_.tolist()
    assert np.array_equal(read.weights_, fitted.weights_)  # bit for bit: JSON keeps a float's repr
    assert read.vectorizer_.get_params() == fitted.vectorizer_.get_params()  # as fitting leaves it
    assert list(read.vectorizer_.vocabulary_.items()) == list(fitted.vectorizer_.vocabulary_.items())
    for text in [*reviews.text, "not a good film, not dull at all", "a word never seen"]:
        assert read.score(text) == fitted.score(text)
        assert read.contributions(text).equals(fitted.contributions(text))
        assert read.token_weights(text) == fitted.token_weights(text)
        assert str(read.highlight(text)) == str(fitted.highlight(text))


def test_an_explainer_s_cache_is_keyed_by_its_reviews_and_a_bad_one_is_fitted_again(empty_data_dir):
    reviews, system = _by_frequency(), FeatureChoice((PRESENCE, FREQUENCY))
    fitted = analysis.Explainer(system).fit(reviews)
    [stored] = (empty_data_dir / "results").glob("explainer_*.json")
    analysis.Explainer(system).fit(reviews.assign(label=reviews.label.where(reviews.index != 0, "pos")))
    assert len(list((empty_data_dir / "results").glob("explainer_*.json"))) == 2  # one label changed
    whole = json.loads(stored.read_text())
    for damage in ({"weights": whole["weights"][1:]}, {"order": whole["order"][:-1]}, {"C": 1.0},
                   {"features": [*whole["features"][:-1], whole["features"][0]]}, {"intercept": None}):
        stored.write_text(json.dumps({**whole, **damage}))  # under a checksum that matches
        (stored.parent / (stored.name + ".sha256")).write_text(storage.sha256sum(stored) + "\n")
        again = analysis.Explainer(system).fit(reviews)
        assert np.array_equal(again.weights_, fitted.weights_) and again.C_ == fitted.C_, damage
        assert json.loads(stored.read_text()) == whole, damage  # fitted again and stored anew
    assert len(list(stored.parent.glob("explainer_*.corrupt-*"))) == 5


def test_a_bow_system_s_explainer_is_not_cached(empty_data_dir):
    analysis.Explainer(BowSystem("nb")).fit(_by_frequency())
    assert not list((empty_data_dir / "results").glob("explainer_*.json"))


def test_explainer_of_a_feature_choice_fits_the_chosen_setting(empty_data_dir):
    reviews = _by_frequency()
    explainer = analysis.Explainer(FeatureChoice((PRESENCE, FREQUENCY))).fit(reviews)
    assert explainer.setting_ == FREQUENCY
    vectorizer = make_vectorizer("unigram")
    model = LinearSVC(C=explainer.C_, random_state=0, max_iter=SVM_MAX_ITER).fit(
        vectorizer.fit_transform(tokenized(reviews.text)), reviews.label)
    text = "film film film dull"
    expected = model.decision_function(vectorizer.transform([text.split()]))[0]
    assert explainer.score(text) == pytest.approx(expected)
    with pytest.raises(InputError, match="give C only with a BowSystem"):
        analysis.Explainer(FeatureChoice((PRESENCE,)), C=0.1)
    with pytest.raises(KitError, match="chose tf-idf"):
        analysis.Explainer(FeatureChoice((BowSystem("svm", tfidf=True),))).fit(reviews)


def test_explainer_marks_negation_as_its_setting_counts(reviews):
    system = BowSystem("svm", negation=True)
    explainer = analysis.Explainer(system, C=0.1).fit(reviews)
    vectorizer = make_vectorizer("unigram")
    model = LinearSVC(C=0.1, random_state=0, max_iter=SVM_MAX_ITER).fit(
        vectorizer.fit_transform([mark_negation(t) for t in tokenized(reviews.text)]), reviews.label)
    text = "great fun , not plot bad ."
    expected = model.decision_function(vectorizer.transform([mark_negation(text.split())]))[0]
    assert explainer.score(text) == pytest.approx(expected)
    assert "plot_NEG" in set(explainer.contributions(text).feature)  # bad_NEG: never seen in training
    weights = dict(zip(explainer.features_, explainer.weights_, strict=True))
    assert explainer.token_weights(text)[4][2] == pytest.approx(weights["plot_NEG"])


def test_changed_changes_every_candidate_of_a_feature_choice():
    choice = FeatureChoice((PRESENCE, FREQUENCY), inner_folds=4)
    negated = analysis.changed(choice, negation=True)
    assert negated == FeatureChoice((BowSystem("svm", binary=True, Cs=(0.1,), negation=True),
                                     BowSystem("svm", Cs=(0.1, 1.0), negation=True)), inner_folds=4)
    assert analysis.changed(PRESENCE, min_df=2) == BowSystem("svm", binary=True, Cs=(0.1,), min_df=2)
    assert not choice.candidates[0].negation  # the original is left as it was
    for call, message in [(lambda: analysis.changed(choice), "Give one or more"),
                          (lambda: analysis.changed(choice, colour="red"), "unknown: colour"),
                          (lambda: analysis.changed("svm-bow", min_df=2), "BowSystem or a FeatureChoice")]:
        with pytest.raises(InputError, match=message):
            call()


def test_a_fold_explainer_of_another_model_than_the_fold_s_says_so(empty_data_dir, monkeypatch):
    reviews, choice = _by_frequency(), FeatureChoice((PRESENCE, FREQUENCY))
    cv = evaluation.cross_validate(choice, "choice", reviews=reviews, use_cache=False, progress=False,
                                   n_jobs=1)
    monkeypatch.setattr(analysis.data, "load_movie_reviews", lambda: reviews)
    monkeypatch.setattr(analysis.systems, "system", lambda name: choice)
    monkeypatch.setattr(analysis.systems, "predictions", lambda name, progress: cv)
    explainer = analysis.fold_explainer("d1", "choice")
    assert explainer.score(reviews.text.iloc[1]) == pytest.approx(cv.score.iloc[1], abs=analysis.SCORE_ATOL)
    # the same C, another score: the cached predictions are another model's
    monkeypatch.setattr(analysis.systems, "predictions", lambda name, progress: cv.assign(score=cv.score + 1))
    with pytest.raises(KitError, match="delete data/results/"):
        analysis.fold_explainer("d1", "choice")


def test_fold_explainer_reproduces_the_cached_cv_score(corpora):
    predictions = systems.predictions("nb", progress=False)
    wrong = analysis.ranked_errors(predictions).iloc[0]
    explainer = analysis.fold_explainer(wrong.doc_id, "nb")
    assert explainer.score(wrong.text) == pytest.approx(wrong.score)
    with pytest.raises(InputError, match="doc_id must be one of the 2,000 movie reviews' ids, not 'cv999_0'"):
        analysis.fold_explainer("cv999_0", "nb")


def test_nearest_reviews_come_from_other_folds(reviews):
    vectors = np.eye(5)[np.arange(len(reviews)) % 5]  # d0, d5, d10, ... point the same way
    found = analysis.nearest_reviews("d0", k=3, vectors=vectors, reviews=reviews)
    assert found.doc_id.tolist() == ["d5", "d10", "d15"]  # d20 is in d0's fold
    assert found.similarity.tolist() == [1.0, 1.0, 1.0]
    by_text = analysis.nearest_reviews("d0", k=2, reviews=reviews)
    assert list(by_text.columns) == ["doc_id", "label", "similarity", "snippet"]
    with pytest.raises(InputError, match="doc_id must be the id of one review of the table, not 'nope'"):
        analysis.nearest_reviews("nope", reviews=reviews)
    with pytest.raises(InputError, match=f"vectors must have one row per review \\({len(reviews)}\\), not 3"):
        analysis.nearest_reviews("d0", vectors=np.eye(3), reviews=reviews)


def test_error_cues():
    cues = analysis.error_cues("not good , not bad and never dull . the plot is fun", LEXICON)
    assert cues["negated"] == pytest.approx(3 / 4)
    assert cues["opinion_density"] == pytest.approx(4 / 13)
    turned = "good good great fun and good . " * 6 + "but dull , awful , bad , bad"
    turn = analysis.error_cues(turned, LEXICON)
    assert turn["late_contrast"] == 1.0
    no_turn = analysis.error_cues("but dull , awful . " + "good great fun . " * 5, LEXICON)
    assert no_turn["late_contrast"] == 0.0
    assert analysis.error_cues("worse than the original sequel", LEXICON)["comparison"] == pytest.approx(60)
    rated = "memento ( 10/10 ) and this : 3 out of 4 , or 11/10"
    assert analysis.explicit_rating(rated) == pytest.approx(0.875)
    assert np.isnan(analysis.explicit_rating("no rating here , 1986"))


def test_suggest_categories_first_rule_wins():
    cues = pd.DataFrame({"negated": [0.5, 0.5, 0.5, 0.0, 0.0, 0.0], "late_contrast": [0, 1, 0, 0, 0, 0],
                         "opinion_density": [0.1, 0.1, 0.1, 0.1, 0.01, 0.1], "comparison": [0, 0, 0, 5, 0, 0],
                         "rating": [0.9, np.nan, 0.9, np.nan, np.nan, 0.2]})
    labels = ["neg", "neg", "pos", "pos", "pos", "neg"]
    thresholds = {"negated": 0.3, "comparison": 1.0, "opinion_density": 0.05}
    assert analysis.suggest_categories(cues, labels, thresholds).tolist() == [
        "rating_mismatch", "late_contrast", "negation", "comparison", "plot_summary", "other"]
    ramp = [0, 1, 2, 3, 4.0]
    ramps = pd.DataFrame({"negated": ramp, "comparison": ramp, "opinion_density": ramp})
    assert analysis.cue_thresholds(ramps) == {
        "negated": 3.0, "comparison": 3.0, "opinion_density": 1.0}


def test_error_rate_by_quantile_bins():
    values = np.arange(10.0)
    correct = np.array([0, 0, 1, 1, 1, 1, 1, 1, 1, 0], dtype=bool)
    table = analysis.error_rate_by(values, correct, bins=5)
    assert table.error_rate.tolist() == [1.0, 0.0, 0.0, 0.0, 0.5]
    assert table["count"].tolist() == [2] * 5 and table.low.tolist() == [0, 2, 4, 6, 8]


def test_opinion_word_counts():
    assert analysis.opinion_word_counts(["good , bad and good", "plain"], LEXICON).tolist() == [3, 0]


@pytest.mark.parametrize("call, message", [
    (lambda r: analysis.ranked_errors(pd.DataFrame({"doc_id": ["d0"]}), r), "predictions lacks the column"),
    (lambda r: analysis.ranked_errors(_predictions(["d0", "d0"]), r), "predictions repeats doc_id"),
    (lambda r: analysis.ranked_errors(_predictions(["zz"]), r), "reviews lacks the misclassified review"),
    (lambda r: analysis.ranked_errors(_predictions(["d0"]), r, n=-1), "n must be at least 1"),
    (lambda r: analysis.ranked_errors(_predictions(["d0"], correct=[np.nan]), r), "only True/False"),
    (lambda r: analysis.Explainer(BowSystem("nb")).fit(r.assign(label="pos")), "two labels"),
    (lambda r: analysis.Explainer(BowSystem("nb")).fit(r.drop(columns="text")), "lacks the column"),
    (lambda r: analysis.nearest_reviews("d0", k=0, reviews=r), "k must be at least 1"),
    (lambda r: analysis.nearest_reviews("d0", vectors=np.full((len(r), 2), np.nan), reviews=r), "NaN"),
    (lambda r: analysis.error_cues(None, LEXICON), "text must be a string"),
    (lambda r: analysis.error_cues("fine", {"pos": "good"}), "'pos' and 'neg' sets"),
    (lambda r: analysis.explicit_rating(7), "text must be a string"),
    (lambda r: analysis.cue_thresholds(pd.DataFrame({"negated": [1.0]})), "lacks the column"),
    (lambda r: analysis.cue_thresholds(analysis.cue_table(r, LEXICON), share=1.5), "share must be in"),
    (lambda r: analysis.suggest_categories(analysis.cue_table(r, LEXICON), ["pos"], {}), "equal length"),
    (lambda r: analysis.opinion_word_counts("good", LEXICON), "list of texts"),
    (lambda r: analysis.error_rate_by([1.0, np.inf], [True, False]), "NaN or infinite"),
    (lambda r: analysis.error_rate_by([1.0, 2.0], [True, False], bins=0), "bins must be at least 1"),
    (lambda r: analysis.error_rate_by([1.0, 2.0], ["yes", "no"]), "numbers only"),
])
def test_bad_arguments_are_one_clear_input_error(reviews, call, message):
    with pytest.raises(InputError, match=message):
        call(reviews)


def _predictions(doc_ids, correct=None):
    return pd.DataFrame({"doc_id": doc_ids, "fold": 0, "system": "x", "prediction": "pos", "score": 1.0,
                         "correct": correct if correct is not None else False, "C": 0.1})


def test_change_effect_counts_fixed_and_new_errors_per_category():
    categories = pd.Series(["negation", "negation", "other", "other", "other"], index=list("abcde"))
    before = pd.DataFrame({"doc_id": list("xabcde"), "correct": [True, False, False, True, False, True]})
    after = pd.DataFrame({"doc_id": list("edcbax"), "correct": [False, True, True, True, True, False]})
    table = analysis.change_effect(categories, before, after)
    assert table.loc["negation"].tolist() == [2, 2, 0, 2, 0]
    assert table.loc["other"].tolist() == [3, 1, 1, 1, 1]
    assert table.loc["total"].tolist() == [5, 3, 1, 3, 1] and table.index[0] == "other"


@pytest.mark.parametrize("categories,before,message", [
    (pd.Series([], dtype=object), None, "non-empty Series"),
    (pd.Series(["x", 3], index=["a", "b"]), None, "non-empty Series"),
    (pd.Series(["x", "y"], index=["a", "a"]), None, "twice"),
    (pd.Series(["x"], index=["zz"]), None, "no prediction for 1"),
    (pd.Series(["x"], index=["a"]), pd.DataFrame({"doc_id": ["a"]}), "correct"),
])
def test_change_effect_refuses_what_it_cannot_count(categories, before, message):
    after = pd.DataFrame({"doc_id": ["a"], "correct": [True]})
    with pytest.raises(InputError, match=message):
        analysis.change_effect(categories, after if before is None else before, after)


def test_nearest_training_review_looks_only_in_other_folds():
    vectors = np.array([[1.0, 0.0], [1.0, 0.1], [0.9, 0.5], [0.0, 1.0]])
    assert analysis.nearest_training_review(vectors, [0, 0, 1, 1]).tolist() == [2, 2, 1, 1]
    assert analysis.nearest_training_review(vectors, [0, 1, 2, 3]).tolist() == [1, 0, 1, 2]
    sparse = analysis.nearest_training_review(sp.csr_matrix(vectors), [0, 0, 1, 1])
    assert sparse.tolist() == [2, 2, 1, 1]
    with pytest.raises(InputError, match="at least two folds"):
        analysis.nearest_training_review(vectors, [0, 0, 0, 0])
    with pytest.raises(InputError, match="one fold per row of vectors \\(4\\)"):
        analysis.nearest_training_review(vectors, [0, 1])


def test_same_critic_needs_both_reviews_signed_by_one_critic():
    critics = pd.Series(["joblo", "joblo", pd.NA, "berardinelli", None], index=[10, 11, 12, 13, 14])
    assert analysis.same_critic(critics, [1, 0, 2, 0, 4]).tolist() == [True, True, False, False, False]
    assert analysis.same_critic([None, None], [1, 0]).tolist() == [False, False]
    with pytest.raises(InputError, match="one row position \\(a whole number\\) per review \\(5\\)"):
        analysis.same_critic(critics, [1.0, 0, 2, 0, 4])
    with pytest.raises(InputError, match="row positions from 0 to 4"):
        analysis.same_critic(critics, [1, 0, 2, 0, 5])


def test_unpaired_difference_combines_two_wilson_intervals():
    from scipy.stats import fisher_exact

    from helpers.significance import accuracy_interval

    a, b = [True] * 1752 + [False] * 248, [True] * 811 + [False] * 189
    found = analysis.unpaired_difference(a, b)
    (p_a, low_a, high_a), (p_b, low_b, high_b) = accuracy_interval(a), accuracy_interval(b)
    assert found["difference"] == pytest.approx(0.876 - 0.811)
    difference = found["difference"]
    assert found["low"] == pytest.approx(difference - np.sqrt((p_a - low_a) ** 2 + (high_b - p_b) ** 2))
    assert found["high"] == pytest.approx(difference + np.sqrt((high_a - p_a) ** 2 + (p_b - low_b) ** 2))
    assert found["low"] > 0
    assert found["p_value"] == pytest.approx(fisher_exact([[1752, 248], [811, 189]]).pvalue)
    same = analysis.unpaired_difference([True, False] * 50, [True, False] * 50)
    assert same["difference"] == 0 and same["low"] < 0 < same["high"] and same["p_value"] == pytest.approx(1)
    wider = analysis.unpaired_difference(a, b, confidence=0.99)
    assert wider["low"] < found["low"] and wider["high"] > found["high"]
    with pytest.raises(InputError, match="correct_b must hold only True/False or 0/1"):
        analysis.unpaired_difference(a, [0.5, 1])
