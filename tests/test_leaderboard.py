"""The leaderboard's rank rule on made-up systems, and on the kit's systems."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import leaderboard, settings
from helpers.errors import InputError
from helpers.significance import holm, permutation_test


def _systems(rng: np.random.Generator, n: int = 1000) -> dict[str, np.ndarray]:
    """Two systems that are the same system (one set of outcomes, a few flipped), and one far better."""
    base = rng.random(n) < 0.75
    twin = base.copy()
    flip = rng.choice(n, 10, replace=False)
    twin[flip] = ~twin[flip]
    better = base | (rng.random(n) < 0.6)  # right wherever base is, and on most of the rest
    return {"base": base, "twin": twin, "better": better}


def test_equal_systems_tie_and_a_clearly_better_one_ranks_alone():
    board = leaderboard.leaderboard(_systems(np.random.default_rng(0)), alpha=0.05)
    rank = board.table.set_index("system")["rank"]
    assert rank.to_dict() == {"better": 1, "base": 2, "twin": 2}
    assert board.table.system.iloc[0] == "better"
    assert board.table.set_index("system").beats["better"] == "base, twin"
    assert not board.pairs.set_index(["a", "b"]).significant[("base", "twin")]


def test_p_values_are_the_paired_permutation_tests_holm_adjusted_over_every_pair():
    correct = _systems(np.random.default_rng(1))
    board = leaderboard.leaderboard(correct, alpha=0.05, n_resamples=2000, seed=3)
    raw = [permutation_test(correct[a].astype(float), correct[b].astype(float), n_resamples=2000,
                            seed=3).p_value for a, b in zip(board.pairs.a, board.pairs.b, strict=True)]
    assert np.allclose(board.pairs.p, raw)
    assert np.allclose(board.pairs.holm_p, holm(raw))
    assert len(board.pairs) == 3  # every pair, once


def test_a_difference_significant_only_before_holm_does_not_separate_ranks():
    assert leaderboard.ranks(["a", "b", "c"], [("a", "b")]) == [1, 2, 1]
    assert leaderboard.ranks(["a", "b", "c"], []) == [1, 1, 1]
    assert leaderboard.ranks(["a", "b", "c"], [("a", "c"), ("b", "c")]) == [1, 1, 3]
    rng = np.random.default_rng(2)
    a = rng.random(2000) < 0.80
    b = a.copy()  # b misses 30 reviews a gets right, and gets 15 that a misses
    b[np.flatnonzero(a)[:30]] = False
    b[np.flatnonzero(~a)[:15]] = True
    board = leaderboard.leaderboard({"a": a, "b": b, "c": a.copy()}, alpha=0.05)
    pair = board.pairs.set_index(["a", "b"]).loc[("a", "b")]
    assert pair.p < 0.05 <= pair.holm_p  # alone the test would separate them; over three pairs, not
    assert set(board.table["rank"]) == {1}


def test_the_course_alpha_is_the_default(monkeypatch):
    monkeypatch.setattr(settings, "alpha", lambda: 0.5)
    assert leaderboard.leaderboard(_systems(np.random.default_rng(0)), n_resamples=100).alpha == 0.5


@pytest.mark.parametrize("correct, message", [
    ({"a": [True, False]}, "at least two"),
    ({"a": [True, False], "b": [True]}, "same items"),
    ({"a": [True, False], "": [True, True]}, "non-empty strings"),
    ({"a": [True, False], "b": [0.5, 1]}, "only True/False"),
])
def test_bad_input_is_one_clear_error(correct, message):
    with pytest.raises(InputError, match=message):
        leaderboard.leaderboard(correct, alpha=0.05)
    with pytest.raises(InputError, match="listed system"):
        leaderboard.ranks(["a"], [("a", "a")])


def test_the_text_and_the_figure_show_every_system(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    board = leaderboard.leaderboard(_systems(np.random.default_rng(0)), alpha=0.05, n_resamples=200)
    text = leaderboard.describe(board)
    assert all(name in text for name in ("base", "twin", "better")) and "Holm over 3 pairs" in text
    ax = leaderboard.plot(board)
    shown = [f"{row.rank}. {row.system}" for row in board.table.itertuples()]
    assert [t.get_text() for t in ax.get_yticklabels()] == shown[::-1]  # the best on top
    ax.figure.savefig(tmp_path / "board.png")


def test_kit_leaderboard_ranks_the_kit_s_systems_and_keeps_the_user_s_figure(corpora, tmp_path, capsys):
    from helpers.cli import main
    from helpers.systems import ranked

    figure = tmp_path / "board.png"
    figure.write_bytes(b"the student's own picture")
    assert main(["leaderboard", "--systems", "nb,nb-presence,nbsvm", "--figure", str(figure)]) == 0
    out, err = capsys.readouterr()
    board = ranked(["nb", "nb-presence", "nbsvm"], progress=False)
    assert board.table.system.iloc[0] == "nbsvm" and board.table["rank"].iloc[0] == 1
    for row in board.table.itertuples():
        assert f"{row.rank}" in out and row.system in out
    assert "Holm over 3 pairs" in out
    assert figure.read_bytes() == b"the student's own picture"  # never overwritten: a copy beside it
    [drawn] = [p for p in tmp_path.glob("board*.png") if p != figure]
    assert drawn.read_bytes().startswith(b"\x89PNG") and drawn.name in err
    assert main(["leaderboard", "--systems", "nb"]) == 1  # one system is no leaderboard
    assert "at least two" in capsys.readouterr().err
