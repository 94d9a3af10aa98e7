"""Modelling: features and encodings, the study's MLR and its challengers, validation, importance, artifacts.

Data flow: ``dataset.trial_frame`` → ``features.Schema`` → learners (``linear``, ``learners``) →
``validate`` and ``importance`` → ``fit.fit_metric`` → ``artifact`` (the model file, with each metric's measured ``domain``, that ``glmodel predict`` reads).
"""
