"""Checks of the MLR's assumptions: Ramsey's RESET (linearity), Breusch–Pagan (constant variance), VIF.

References
----------
Ramsey, J. B. (1969), "Tests for specification errors in classical linear least-squares regression analysis",
*J. R. Stat. Soc. B* 31(2), 350–371.
Breusch, T. S., Pagan, A. R. (1979), "A simple test for heteroscedasticity and random coefficient variation",
*Econometrica* 47(5), 1287–1294.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .linear import OlsFit

ALPHA = 0.05


@dataclass(frozen=True)
class Diagnostics:
    reset_p: float | None
    breusch_pagan_p: float | None
    vif: dict[str, float] = field(default_factory=dict)
    findings: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"reset_p": self.reset_p, "breusch_pagan_p": self.breusch_pagan_p, "vif": self.vif,
                "findings": list(self.findings)}


def diagnose(fit: OlsFit) -> Diagnostics:
    """Run the three checks where the data allow them and say in words what failed."""
    import numpy as np
    from statsmodels.stats.diagnostic import het_breuschpagan, linear_reset
    from statsmodels.stats.outliers_influence import variance_inflation_factor

    res = fit.result
    findings: list[str] = []
    reset_p = bp_p = None
    k = fit.x.shape[1]
    if res.df_resid > 3 and k > 1:
        import warnings

        from statsmodels.tools.sm_exceptions import SingularMatrixWarning

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                reset_p = float(linear_reset(res, power=[2, 3], use_f=True).pvalue)
            except (ValueError, np.linalg.LinAlgError):
                reset_p = None
        if any(issubclass(w.category, SingularMatrixWarning) for w in caught):
            # Too few distinct fitted values: ŷ² and ŷ³ are combinations of the columns already there.
            reset_p = None
            findings.append("linearity cannot be tested here (RESET needs more distinct configurations)")
        try:
            bp_p = float(het_breuschpagan(res.resid, fit.x)[1])
        except (ValueError, np.linalg.LinAlgError):
            bp_p = None
    if reset_p is not None and np.isfinite(reset_p) and reset_p < ALPHA:
        findings.append(f"linearity fails (RESET p = {reset_p:.2g}): throughput is not a straight-line function "
                        "of these features; prefer a model that fits the curvature")
    if bp_p is not None and np.isfinite(bp_p) and bp_p < ALPHA:
        findings.append(f"the error variance is not constant (Breusch–Pagan p = {bp_p:.2g}): OLS intervals are "
                        "too narrow where throughput is high and too wide where it is low")
    vif: dict[str, float] = {}
    if k > 2:
        for j, label in enumerate(fit.model.labels()[1:], start=1):
            with np.errstate(divide="ignore"):
                vif[label] = float(variance_inflation_factor(fit.x, j))
        high = [f"{lbl} ({v:.0f})" for lbl, v in vif.items() if v > 10]
        if high:
            findings.append("collinear predictors (VIF > 10): " + ", ".join(high) +
                            "; their separate coefficients are not reliable")
    return Diagnostics(reset_p, bp_p, vif, tuple(findings))
