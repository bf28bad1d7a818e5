"""Exercise 7.1, my_tau_var (the coefficient of variation of tau_p, optionally bias-corrected)
and correction_reverses (does the correction change which of two sets varies more?)."""

EXERCISE = "7.1"

_HEAD = '''
def my_tau_var(tau_values, bias_correction=True):
    values = np.asarray(tau_values, dtype=float)
'''

_TAU_VAR = _HEAD + '''
    cv = values.std(ddof=1) / values.mean()
    return cv * (1 + 1 / (4 * len(values))) if bias_correction else cv
'''

_REVERSES = '''

def correction_reverses(taus_a, taus_b):
'''

_CORRECT_REVERSES = _REVERSES + '''
    corrected = my_tau_var(taus_a) > my_tau_var(taus_b)
    uncorrected = my_tau_var(taus_a, False) > my_tau_var(taus_b, False)
    return bool(corrected != uncorrected)'''

MISTAKES = {
    "the population standard deviation (ddof=0)": _HEAD + '''
    cv = values.std() / values.mean()
    return cv * (1 + 1 / (4 * len(values))) if bias_correction else cv''' + _CORRECT_REVERSES,
    "the correction applied whatever bias_correction says": _HEAD + '''
    cv = values.std(ddof=1) / values.mean()
    return cv * (1 + 1 / (4 * len(values)))''' + _CORRECT_REVERSES,
    "the correction 1 + 1/n instead of 1 + 1/(4n)": _HEAD + '''
    cv = values.std(ddof=1) / values.mean()
    return cv * (1 + 1 / len(values)) if bias_correction else cv''' + _CORRECT_REVERSES,
    "the variance over the mean (no square root)": _HEAD + '''
    cv = values.var(ddof=1) / values.mean()
    return cv * (1 + 1 / (4 * len(values))) if bias_correction else cv''' + _CORRECT_REVERSES,
    "reversed whenever the numbers of targets differ": _TAU_VAR + _REVERSES + '''
    return len(taus_a) != len(taus_b)''',
    "whether the first set varies more (corrected), not whether the correction changes that":
        _TAU_VAR + _REVERSES + '''
    return bool(my_tau_var(taus_a) > my_tau_var(taus_b))''',
    "the correction 'matters' when it moves either value by more than 0.01": _TAU_VAR + _REVERSES + '''
    return bool(abs(my_tau_var(taus_a) - my_tau_var(taus_a, False)) > 0.01
                or abs(my_tau_var(taus_b) - my_tau_var(taus_b, False)) > 0.01)''',
    "both sets corrected with the first set's n": _TAU_VAR + _REVERSES + '''
    factor = 1 + 1 / (4 * len(taus_a))
    corrected = my_tau_var(taus_a, False) * factor > my_tau_var(taus_b, False) * factor
    uncorrected = my_tau_var(taus_a, False) > my_tau_var(taus_b, False)
    return bool(corrected != uncorrected)''',
}
