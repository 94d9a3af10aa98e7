"""The statistics every command uses, in one place: summaries of the methodology studies (``summary``), ratios
of two sets of measurements with their intervals and tests (``ratios``: Welch, run-level, TOST, Holm), a run's
own shift measured in a session and ratios that count it (``drift``), how large a change a campaign can detect
(``power``), replicate error (``pure_error``), the accuracy of predictions against measurements (``accuracy``:
MAPE, coverage), and the prediction interval for a new setting from a few (``prediction``). Pure functions on
plain numbers; the search, verify, the report, compare and the bottleneck model import them from here."""
