"""Exercise 7.1, my_tau_var: the coefficient of variation of tau_p, optionally bias-corrected."""

EXERCISE = "7.1"

_HEAD = '''
def my_tau_var(tau_values, bias_correction=True):
    values = np.asarray(tau_values, dtype=float)
'''

MISTAKES = {
    "the population standard deviation (ddof=0)": _HEAD + '''
    cv = values.std() / values.mean()
    return cv * (1 + 1 / (4 * len(values))) if bias_correction else cv''',
    "the correction applied whatever bias_correction says": _HEAD + '''
    cv = values.std(ddof=1) / values.mean()
    return cv * (1 + 1 / (4 * len(values)))''',
    "the correction 1 + 1/n instead of 1 + 1/(4n)": _HEAD + '''
    cv = values.std(ddof=1) / values.mean()
    return cv * (1 + 1 / len(values)) if bias_correction else cv''',
    "the variance over the mean (no square root)": _HEAD + '''
    cv = values.var(ddof=1) / values.mean()
    return cv * (1 + 1 / (4 * len(values))) if bias_correction else cv''',
}
