"""What-if predictions from a saved model file: ``scenarios`` (the question) → ``whatif`` (predictions,
extrapolation flags, bottleneck, costs) with ``capacity`` → ``show`` (table, JSON, CSV, figure).

Nothing here imports pandas, statsmodels or scikit-learn for a linear model, so `glmodel predict` answers fast.
"""
