"""Exercise 5.1, most_confident_errors: the misclassified reviews with the largest |score|."""

EXERCISE = "5.1"

_HEAD = '''
def most_confident_errors(predictions, n):
'''

MISTAKES = {
    "ranked by the signed score, not its size": _HEAD + '''
    wrong = predictions[~predictions.correct]
    return wrong.sort_values(["score", "doc_id"], ascending=[False, True]).doc_id.head(n).tolist()''',
    "the correct reviews ranked too": _HEAD + '''
    ranked = predictions.assign(margin=predictions.score.abs())
    return ranked.sort_values(["margin", "doc_id"], ascending=[False, True]).doc_id.head(n).tolist()''',
    "least confident first (ascending)": _HEAD + '''
    wrong = predictions[~predictions.correct].assign(margin=lambda t: t.score.abs())
    return wrong.sort_values(["margin", "doc_id"]).doc_id.head(n).tolist()''',
    "ties left in table order (no tie-break by doc_id)": _HEAD + '''
    wrong = predictions[~predictions.correct].assign(margin=lambda t: t.score.abs())
    return wrong.sort_values("margin", ascending=False, kind="stable").doc_id.head(n).tolist()''',
}
