"""Who signed a review: the critics of the 2,000 Pang & Lee reviews, found by their signatures.

The polarity dataset keeps no author field, but many reviews carry their critic's signature
as the newsgroup post had it: a byline at the top or a closing line. The corpus is
lowercased and tokenised (``"( c ) 1999 , jamey hughton"``), and its "©" became "?".

**The rule.** Only a review's first ``HEAD`` and last ``TAIL`` tokens are read (where
signatures stand; the body names actors and directors). In them, the first of these
signatures that matches, in this order, names the critic:

1. a byline: ``review by NAME``, ``reviewed by NAME``, ``reviews by NAME``, ``a NAME
   review``, ``by NAME ( c )``, and at the very start ``NAME's ... review`` (``susan
   granger's review of``, ``the happy bastard's quick movie review``) or ``by NAME``;
2. a copyright line: ``copyright [( c )] [YEAR] [by] NAME``, ``( c ) [YEAR ,] NAME``,
   ``? YEAR NAME`` (the "©" the corpus lost), ``written by NAME , MONTH`` (a dated closing
   line, not a film's credits);
3. a column note: ``( NAME has ... column`` (``( michael redman has written this column for
   23 years ...``);
4. a critic's own closing formula that names them: ``where's NAME coming from ?``
   (JoBlo's), ``the NAME movie gauge`` (Susan Granger's);
5. an email address: the name just before it (``jeremy dennison mr . orange@centuryinter .
   net``), or else the word joined to its "@" (``venom8@hotmail . com`` signs as ``venom8``).

NAME is two name words with an optional middle initial (``christopher e . meadows``), or,
in the start-of-review possessive, up to four (``bob the happy bastard``); a name word is
letters (with ``'`` or ``-``) and not an English stop word or a word of reviewing
(``SIGNATURE_STOP_WORDS``). Names are normalised (lowercase, single spaces, initials
``e .`` → ``e.``), and a name that is the last words of exactly one longer name found in
the same texts is that critic (``redman`` → ``michael redman``, ``the happy bastard`` →
``bob the happy bastard``).

**What it finds** in the 2,000 reviews (``critic_table``; notebook 00 prints it): 122
reviews signed by 27 critics, six of whom sign 12 to 22 reviews each; every one of those six
has reviews in both classes, spread over the whole range of review numbers (JoBlo's 22 run
from cv000 to cv993) and over six to ten of the ten round-robin folds. The signatures found
were read by eye in every review (``tests/test_critics.py`` holds a sample).

**Known misses.** A critic who signs nowhere in the head or tail, or only with a formula
that names no one, is not found. Among the 1,878 unsigned reviews, by eye: 23 end with one
critic's rating on "the 0 to 10 scale and ... the -4 to +4 scale", 23 with "<title> runs
1 : 36 . it is rated r for ...", 8 open with "seen <date> at <cinema> ... [theater rating : ...]", 15
end with the Flying Inkpot's rating key (an outlet's, with several writers), and 4 are
JoBlo's, who names himself in the third person but leaves out his closing formula. Each
such group is likely one critic's, so folds made from this rule are critic-disjoint for the
signed critics only. The rule finds signatures, not authors: two critics who sign with one
name would be one critic, and a review quoting another critic's byline in its head or tail
would be given to that critic (none seen in the 2,000).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from helpers import overlap
from helpers.errors import InputError
from helpers.validation import check_int, check_labels, check_same_length, check_table, check_texts

#: Tokens read at each end of a review: bylines stand in the first, closing lines in the last
#: (JoBlo's closing list of films runs to about 70 tokens after his formula).
HEAD = 50
TAIL = 100
#: Words that are never part of a critic's name, besides English stop words.
SIGNATURE_STOP_WORDS = frozenset(ENGLISH_STOP_WORDS | {
    "film", "films", "movie", "movies", "review", "reviews", "reviewed", "rating", "ratings",
    "copyright", "web", "site", "page", "quick", "quickie", "capsule", "short", "full",
    "star", "stars", "critic", "critics", "spoiler", "spoilers", "written", "extended",
})
#: Passes of ``critic_disjoint_folds``'s improvement over its greedy placement (it stops sooner).
MAX_PASSES = 20
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_YEAR = r"(?:19|20)\d\d"
_WORD = r"[a-z][a-z'-]*[a-z]"
_INITIAL = r"[a-z] \. "
# the name's words are checked against SIGNATURE_STOP_WORDS after a match (``_is_name``)
_NAME = rf"(?P<name>{_WORD} (?:{_INITIAL})?{_WORD})\b"
_ONE = rf"(?P<name>{_WORD})\b"
_LONG = rf"(?P<name>(?:the )?{_WORD}(?: (?:the |{_INITIAL})?{_WORD}){{0,3}})"
#: The signatures, in order of precedence (the module docstring states them in words).
SIGNATURES: tuple[tuple[str, re.Pattern], ...] = tuple((kind, re.compile(pattern)) for kind, pattern in (
    ("byline", rf"\breview(?:ed|s)? by {_NAME}"),
    ("byline", rf"(?:^|[^a-z] )a {_NAME} review\b"),
    ("byline", rf"\bby {_NAME} \( c \)"),
    ("byline", rf"^(?:[^a-z]+ )?{_LONG}'s (?:[a-z0-9-]+ ){{0,2}}review\b"),
    ("byline", rf"^by {_NAME}"),
    ("copyright", rf"\bcopyright (?:\( c \) )?(?:{_YEAR} )?(?:by )?{_NAME}"),
    ("copyright", rf"\( c \) (?:{_YEAR} ,? )?{_NAME}"),
    ("copyright", rf"\? {_YEAR} {_NAME}"),
    ("copyright", rf"\bwritten by {_NAME} , (?:{_MONTHS})\b"),
    ("column", rf"\( {_NAME} has [^)]{{0,60}}\bcolumn\b"),
    ("formula", rf"\bwhere's {_ONE} coming from \?"),
    ("formula", rf"\bthe {_ONE} movie gauge\b"),
    ("email", rf"{_NAME} (?:[a-z0-9_]+ \. )*[a-z0-9_]+@[a-z0-9-]+ \. "),
    ("address", r"(?:^| )(?P<name>[a-z0-9_.-]+)@[a-z0-9-]+ \. "),
))


def _ends(text: str) -> tuple[str, str]:
    """A review's first HEAD and last TAIL tokens."""
    tokens = text.split()
    return " ".join(tokens[:HEAD]), " ".join(tokens[-TAIL:])


def _is_name(name: str, kind: str) -> bool:
    """Whether a matched name is one: no word a stop word (``it's`` counts as ``its``).

    Initials aside; "the" only inside a name of three words or more (``bob the happy bastard``).
    """
    if kind == "address":
        return True
    words = [word.replace("'", "") for word in name.split() if len(word) > 1]
    if len(words) >= 3:
        words = [word for word in words if word != "the"]
    return bool(words) and not SIGNATURE_STOP_WORDS.intersection(words)


def _normal(name: str) -> str:
    """A name in one spelling: single spaces, initials as ``e.``."""
    return " ".join(re.sub(r"\b([a-z]) \. ", r"\1. ", name).split())


def _first_name(pattern: re.Pattern, part: str, kind: str) -> str | None:
    """The first match of ``pattern`` in ``part`` whose name passes ``_is_name``, normalised."""
    found = pattern.search(part)
    while found:
        if _is_name(found.group("name"), kind):
            return _normal(found.group("name"))
        found = pattern.search(part, found.start() + 1)
    return None


def signature(text: str) -> tuple[str, str] | None:
    """The first signature in a review's head or tail, as (kind, normalised name), or None.

    The rule of ``signed_critic`` for one review, before names are merged across reviews.
    """
    head, tail = _ends(text)
    for kind, pattern in SIGNATURES:
        # a signature anchored at the review's start is looked for in its head only
        for part in (head,) if pattern.pattern.startswith("^") else (head, tail):
            name = _first_name(pattern, part, kind)
            if name:
                return kind, name
    return None


def _merged(names: pd.Series) -> pd.Series:
    """Each name, or the one longer name found that ends with its words."""
    found = set(names.dropna())
    longer = {}
    for name in found:
        ends = [other for other in found if other != name and other.endswith(" " + name)]
        if len(ends) == 1:
            longer[name] = ends[0]
    return names.map(lambda name: longer.get(name, name), na_action="ignore")


def signed_critic(texts: Sequence[str]) -> pd.Series:
    """Each review's signing critic, by the module's rule, or NA where it finds none.

    Parameters
    ----------
    texts : sequence of str
        Reviews in the corpus's form (lowercased, tokens separated by spaces), e.g.
        ``data.load_movie_reviews().text``.

    Returns
    -------
    Series of str (dtype object)
        Index 0 to n - 1, in the order of ``texts``: the critic's normalised name, or
        ``pd.NA`` for a review with no signature the rule knows. Names found in one call are
        merged when one is the last words of exactly one other (``redman`` and ``michael
        redman``), so call it on the whole corpus at once.

    Raises
    ------
    InputError
        ``texts`` not a non-empty sequence of strings (a single string, a None or a number is
        refused, naming its position).
    """
    return _signed(tuple(check_texts(texts, "texts"))).copy()


@cache
def _signed(texts: tuple[str, ...]) -> pd.Series:
    """``signed_critic`` once per process for the same texts: notebooks ask for it several times."""
    names = pd.Series([found[1] if (found := signature(text)) else pd.NA for text in texts], dtype=object)
    return _merged(names)


def critic_in_training(critics: Sequence, folds) -> np.ndarray:
    """Whether a review by each review's signed critic lies in another fold, its training folds.

    Parameters
    ----------
    critics : sequence
        Each review's critic (``signed_critic``), NA for an unsigned review.
    folds : array-like of int
        Each review's fold.

    Returns
    -------
    ndarray of bool
        One per review: True when its critic signed a review in another fold (so a model
        tested on it was trained on that critic's writing); False for unsigned reviews.

    Raises
    ------
    InputError
        ``critics`` and ``folds`` of other lengths or empty; ``folds`` not whole numbers.
    """
    names = pd.Series(check_labels(critics, "critics"), dtype=object)
    folds = np.asarray(folds)
    if folds.ndim != 1 or not np.issubdtype(folds.dtype, np.integer):
        raise InputError("folds must be a 1-D array of whole numbers, one per review.")
    check_same_length(critics=names, folds=folds)
    signed = names.notna().to_numpy()
    spread = pd.Series(folds[signed]).groupby(names[signed].to_numpy()).nunique()
    return signed & (names.map(spread, na_action="ignore").fillna(0).to_numpy() > 1)


def critic_table(reviews: pd.DataFrame) -> pd.DataFrame:
    """How many reviews each signed critic holds, of which class, where in the ids and folds.

    Parameters
    ----------
    reviews : DataFrame
        With ``cv`` (the review's number), ``fold``, ``label`` and ``text``, as
        ``data.load_movie_reviews()`` returns them (the whole corpus: see ``signed_critic``).

    Returns
    -------
    DataFrame
        One row per signed critic, most reviews first (then by name): ``critic``, ``reviews``,
        ``pos``, ``neg``, ``lowest_cv`` and ``highest_cv`` (the smallest and largest review
        number held, over both classes), ``folds`` (how many of the reviews' folds they fall in).

    Raises
    ------
    InputError
        ``reviews`` not a table with those columns, or a text not a string.
    """
    check_table(reviews, "reviews", ("cv", "fold", "label", "text"))
    critic = signed_critic(reviews.text).to_numpy()
    signed = reviews.assign(critic=critic)[pd.notna(critic)]
    table = signed.groupby("critic").agg(
        reviews=("cv", "size"), pos=("label", lambda labels: int((labels == "pos").sum())),
        neg=("label", lambda labels: int((labels == "neg").sum())), lowest_cv=("cv", "min"),
        highest_cv=("cv", "max"), folds=("fold", "nunique"))
    return (table.reset_index().sort_values(["reviews", "critic"], ascending=[False, True])
            .reset_index(drop=True))


def critic_disjoint_folds(reviews: pd.DataFrame, n_folds: int = overlap.N_FOLDS) -> np.ndarray:
    """The reviews' folds with every signed critic's reviews in one fold, classes balanced.

    A review stays in its fold (``reviews.fold``, the kit's round-robin folds with near
    copies together) unless a signed critic wrote it. Each critic's reviews, with their near
    copies (``overlap.similarity_groups`` at ``overlap.NEAR_DUPLICATE``; a copy signed by no
    one, or by another name, joins the group), move together into one fold. The groups are
    placed largest first, each into the fold where the squared distance of the fold's count of
    each class from its share (``class size / n_folds``), summed over classes and folds, grows
    least (the lowest fold number on a tie); then each group in turn moves to another fold
    while that lowers the sum, until none moves. So no test fold holds a signed critic whose
    other reviews are in training. The unsigned reviews' folds fix how even the folds can be:
    in the 2,000 reviews the fold that receives JoBlo's 22 reviews held 184 others, so it
    holds 206 (notebook 08 prints every fold's count per class).

    Parameters
    ----------
    reviews : DataFrame
        With ``fold`` (0 to n_folds - 1), ``label`` and ``text``, as
        ``data.load_movie_reviews()`` returns them.
    n_folds : int
        The number of folds, at least 2; every review's fold must be below it.

    Returns
    -------
    ndarray of int
        One fold per review, in the table's order.

    Raises
    ------
    InputError
        ``reviews`` not a table with those columns, a text not a string, a fold not a whole
        number from 0 to n_folds - 1; ``n_folds`` not a whole number of at least 2.
    """
    check_table(reviews, "reviews", ("fold", "label", "text"))
    n_folds = check_int(n_folds, "n_folds", minimum=2)
    folds = reviews.fold.to_numpy()
    if not (np.issubdtype(folds.dtype, np.integer) and folds.min() >= 0 and folds.max() < n_folds):
        raise InputError(f"reviews.fold must hold whole numbers from 0 to n_folds - 1 = {n_folds - 1}.")
    texts = check_texts(reviews.text, "reviews.text")
    critic = signed_critic(texts)
    groups = _joined(critic.to_numpy(), overlap.similarity_groups(texts))
    labels = pd.Categorical(reviews.label.astype(str))
    moving = np.isin(groups, groups[critic.notna().to_numpy()])
    counts = np.zeros((n_folds, len(labels.categories)))
    np.add.at(counts, (folds[~moving], labels.codes[~moving]), 1)
    sizes = pd.Series(groups[moving]).value_counts(sort=False)
    order = sorted(sizes.index, key=lambda g: (-sizes[g], g))  # largest first, then by number
    members = [np.flatnonzero(groups == group) for group in order]
    adds = np.array([np.bincount(labels.codes[m], minlength=len(labels.categories)) for m in members])
    share = np.bincount(labels.codes, minlength=len(labels.categories)) / n_folds
    folds = folds.copy()
    for group_members, fold in zip(members, _placed(counts, adds, share), strict=True):
        folds[group_members] = fold
    return folds


def _placed(counts: np.ndarray, adds: np.ndarray, share: np.ndarray) -> np.ndarray:
    """A fold for each group (its class counts ``adds``) added to folds holding ``counts``.

    Greedy in the given order, each group where the summed squared distance of the folds'
    class counts from ``share`` grows least; then single groups move while that lowers it.
    """
    counts, placed = counts.copy(), np.empty(len(adds), dtype=np.int64)

    def best(group: int, current: int | None = None) -> int:
        growth = ((counts + adds[group] - share) ** 2 - (counts - share) ** 2).sum(axis=1)
        return current if current is not None and growth[current] <= growth.min() else int(np.argmin(growth))

    for group in range(len(adds)):
        placed[group] = best(group)
        counts[placed[group]] += adds[group]
    for _ in range(MAX_PASSES):
        before = placed.copy()
        for group in range(len(adds)):
            counts[placed[group]] -= adds[group]
            placed[group] = best(group, placed[group])
            counts[placed[group]] += adds[group]
        if (placed == before).all():
            break
    return placed


def _joined(critic: np.ndarray, copies: np.ndarray) -> np.ndarray:
    """One group number per review: reviews signed by one critic, or near copies, share one."""
    n = len(critic)
    signed = np.flatnonzero(pd.notna(critic))
    first = pd.Series(signed).groupby(critic[signed]).transform("min").to_numpy()
    same_copy = pd.Series(np.arange(n)).groupby(copies).transform("min").to_numpy()
    links = sp.coo_matrix((np.ones(len(signed) + n), (np.concatenate([signed, np.arange(n)]),
                                                      np.concatenate([first, same_copy]))), shape=(n, n))
    return connected_components(links, directed=False)[1]
