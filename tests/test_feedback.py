"""Feedback files: what each student is told, safe to open whatever their code printed."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from test_gradebook import make_exercise, make_record, missing_notebook, record_json

from helpers.course.classroom import feedback, gradebook, layout
from helpers.course.classroom.feedback import HIDDEN_NOTE
from helpers.course.classroom.record import Record
from helpers.course.notebook.compare import EXPECTED, GOT
from helpers.errors import KitError

SECRET = "SECRET-ANSWER 0.8731"
HOSTILE = "<script>alert('x')</script>"
TRACEBACK = "Traceback (most recent call last):\n  File \"<cell>\", line 3\nValueError: shapes"


def record() -> Record:
    """alice's 01: one of each status, a visible and a hidden failing check, a flag, a note."""
    return Record.from_json(stored())


def stored() -> dict:
    """``record()`` as stored, to change before reading it."""
    return record_json("alice", "01_naive_bayes", [
        make_exercise("1.1", "passed", title="Naive Bayes from scratch"),
        make_exercise("1.2", "failed", 2.0, check="accuracy on the dev set", expected="0.8125",
                      got="0.5", error="AssertionError: printed output differs", traceback=TRACEBACK),
        make_exercise("1.3", "failed", check="hidden check", hidden=True, expected=SECRET,
                      got="0.1234", error="AssertionError: hidden check failed"),
        make_exercise("1.4", "blocked", flags="reads the reference outputs"),
        make_exercise("1.5", "not done"),
    ], file="01_naive_bayes (1).ipynb",
        note="graded '01_naive_bayes (1).ipynb' (matched by its kit metadata)")


def both(rec: Record) -> tuple[str, str]:
    return feedback.render_html(rec), feedback.render_markdown(rec)


def test_feedback_names_the_file_and_tells_each_exercise():
    for text in both(record()):
        assert "01_naive_bayes (1).ipynb" in text
        assert "matched by its kit metadata" in text
        assert "Naive Bayes from scratch" in text
        assert "Points: 1 / 6" in text
        assert "41.2 s wall" in text and "60.3 s CPU" in text and "812.5 MB" in text
        assert text.count(feedback.FLAGGED) == 1
    markdown = feedback.render_markdown(record())
    rows = [line for line in markdown.splitlines() if re.match(r"\| 1\.\d ", line)]
    assert rows == [
        "| 1.1 | Naive Bayes from scratch | passed | 1 / 1 |",
        "| 1.2 | Exercise 1.2 | failed | 0 / 2 |",
        "| 1.3 | Exercise 1.3 | failed | 0 / 1 |",
        "| 1.4 | Exercise 1.4 | blocked; flagged for review | 0 / 1 |",
        "| 1.5 | Exercise 1.5 | not done | 0 / 1 |",
    ]
    # a section for each exercise that did not pass, none for the one that did
    headings = [line for line in markdown.splitlines() if line.startswith("## ")]
    assert [h.split()[2].rstrip(":") for h in headings] == ["1.2", "1.3", "1.4", "1.5"]
    assert "blocked by 1.1 (not done yet)" in markdown


def test_a_visible_check_shows_expected_beside_got_labelled():
    page, markdown = both(record())
    pair = re.search(r'<div class="pair">(.*?)</div></div>', page, re.S).group(1)
    assert re.search(rf"<h4>{re.escape(EXPECTED)}</h4><pre>0\.8125</pre>.*"
                     rf"<h4>{re.escape(GOT)}</h4><pre>0\.5</pre>", pair, re.S)
    assert re.search(rf"\*\*{re.escape(EXPECTED)}\*\*\n\n```text\n0\.8125\n```\n\n"
                     rf"\*\*{re.escape(GOT)}\*\*\n\n```text\n0\.5\n```", markdown)
    for text in (page, markdown):
        assert "accuracy on the dev set" in text
        assert "ValueError: shapes" in text


def test_a_hidden_check_never_shows_its_expected_output():
    for text in both(record()):
        assert SECRET not in text
        assert "0.8731" not in text
        assert text.count(HIDDEN_NOTE) == 1
        assert "0.1234" in text  # what the student's code printed is still shown
        assert text.count(EXPECTED) == 1  # only exercise 1.2's


def test_html_escapes_everything_a_student_wrote():
    rec = stored()
    rec["file"] = f"{HOSTILE}.ipynb"
    rec["note"] = HOSTILE
    rec["exercises"][1].update(got=HOSTILE, traceback=f"{TRACEBACK}\n{HOSTILE}", reason=HOSTILE,
                               where=HOSTILE)
    page = feedback.render_html(Record.from_json(rec))
    assert "<script" not in page.lower()
    assert page.count("&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;") == 6
    assert not re.search(r"<(img|link|iframe|object|embed)\b|\bsrc=|https?://", page)
    assert "default-src 'none'" in page


def test_markdown_fences_hold_any_backticks():
    rec = stored()
    nasty = "````\n# not a heading\n```python\nprint(1)"
    rec["exercises"][1]["traceback"] = nasty
    markdown = feedback.render_markdown(Record.from_json(rec))
    fence = "`" * 5
    assert f"{fence}text\n{nasty}\n{fence}\n" in markdown
    assert "\n# not a heading" not in markdown.split(fence)[0]


def test_markdown_escapes_html_and_links_outside_fences():
    rec = stored()
    rec["note"] = "<b>bold</b> [link](http://x)"
    rec["exercises"][1]["reason"] = "Error with `ticks` and <i>"
    markdown = feedback.render_markdown(Record.from_json(rec))
    assert "Note: \\<b\\>bold\\</b\\> \\[link\\](http://x)" in markdown
    assert "Error: ``Error with `ticks` and <i>``" in markdown


def test_partial_credit_says_it_is_the_checks_that_passed():
    rec = make_record(exercises=[make_exercise("1.2", "failed", 3.0, partial=2.0)])
    for page in (feedback.render_html(rec), feedback.render_markdown(rec)):
        assert "2 / 3 (the checks that passed)" in page


def test_a_missing_notebook_says_so():
    rec = missing_notebook("bob", "02_logistic", ["2.1"])
    for text in both(rec):
        assert "no notebook was found to grade" in text
        assert "Problem with the whole notebook" in text and "notebook missing" in text
        assert "nothing ran" in text
        assert "Points: 0 / 1" in text


def test_write_feedback_writes_both_files(tmp_path):
    written = feedback.write_feedback(tmp_path, record())
    folder = tmp_path / layout.FEEDBACK_DIR / "alice"
    assert written == [folder / "01_naive_bayes.html", folder / "01_naive_bayes.md"]
    assert written[0].read_text() == feedback.render_html(record())
    assert written[1].read_text() == feedback.render_markdown(record())


def test_write_all_feedback_reads_the_records_and_keeps_edited_files(tmp_path):
    for rec in (record(), missing_notebook("bob", "02_logistic", ["2.1"])):
        gradebook.write_record(tmp_path, rec)
    written = feedback.write_all_feedback(tmp_path)
    assert [p.relative_to(tmp_path).as_posix() for p in written] == [
        "feedback/alice/01_naive_bayes.html", "feedback/alice/01_naive_bayes.md",
        "feedback/bob/02_logistic.html", "feedback/bob/02_logistic.md"]

    edited = written[1]
    edited.write_text("an instructor's comments\n")
    regraded = replace(record(), note="graded again")
    again = feedback.write_all_feedback(tmp_path, [regraded])
    assert again[0] == written[0] and "graded again" in again[0].read_text()
    assert again[1] != edited and again[1].parent == edited.parent
    assert "graded again" in again[1].read_text()
    assert edited.read_text() == "an instructor's comments\n"


def test_feedback_of_a_bad_record_cannot_be_asked_for(tmp_path):
    with pytest.raises(KitError, match="'status'"):
        make_record(exercises=[make_exercise(status="passed") | {"status": "done"}])
    with pytest.raises(KitError, match="'student'"):
        replace(record(), student="../bob")  # a Record is checked when made, so no file is written
    assert not (tmp_path / layout.FEEDBACK_DIR).exists()
