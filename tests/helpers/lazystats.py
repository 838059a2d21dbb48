"""scipy.stats tests, imported on first use: importing scipy.stats costs about 1.6 s, and every test
process imports every test module while collecting, whether or not it runs a statistical test."""


def chisquare(*args, **kwargs):
    """scipy.stats.chisquare."""
    from scipy.stats import chisquare as test
    return test(*args, **kwargs)


def wilcoxon(*args, **kwargs):
    """scipy.stats.wilcoxon."""
    from scipy.stats import wilcoxon as test
    return test(*args, **kwargs)
