"""What a host's CPU gives under load when it shares a machine with other hosts of the cluster.

``preflight.cpu_scores`` scores hosts one at a time, so a host's score is what its quota lets one process do on
an idle machine. Hosts that show one boot id run on one kernel, hence on one machine's cores (the lab's nodes,
containers); when the cluster is busy they all want their quota at once, and if the quotas add up to more than
the machine's cores, each gets its proportional part of the cores (the kernel's fair scheduler divides CPU
time by weight, and the quotas cap it; Linux CFS bandwidth control). A quota raised past that part gives a host
nothing while the others are busy: the lab's CPU x2 at 25% -> 50% of each of four nodes on two cores measured
-6% written, +6% read while each host's score alone doubled.

``load_scores`` turns the scores measured alone into the scores under load that the models take as
``cpu_score``; hosts with no boot id, or alone on their machine, keep their score. It assumes every host of
the cluster busy at once, which a Gluster I/O path makes nearly so (clients and bricks work on every
operation), and so errs low where some hosts idle.
"""

from __future__ import annotations

from collections.abc import Mapping

from .facts import HostFacts


def load_factor(quota_cores: float | None, cores: int, quotas: list[float | None]) -> float:
    """The part of a host's score alone that it keeps with every host of its machine busy.

    Parameters
    ----------
    quota_cores : the host's CPU quota in cores (None: none, the machine's cores).
    cores : the machine's cores.
    quotas : the quotas of every cluster host on the machine, this one included.

    Returns
    -------
    float in (0, 1]: the cores the host gets under load (its quota times cores over the quotas' sum, when they
    add up to more than the cores), over what its score alone had (its quota, at most the one core the score's
    single process can use).
    """
    if cores <= 0:
        return 1.0
    mine = _asked(quota_cores, cores)
    total = sum(_asked(q, cores) for q in quotas)
    if total <= cores:
        return 1.0
    return min(1.0, (cores * mine / total) / min(mine, 1.0))


def _asked(quota_cores: float | None, cores: int) -> float:
    """The cores a host with that quota wants of its machine when busy (no quota: all of them)."""
    return min(quota_cores, cores) if quota_cores else float(cores)


def _shared_machines(facts: Mapping[str, HostFacts]) -> list[list[str]]:
    """The keys of ``facts`` per machine that two or more hosts share (one boot id, cores known)."""
    machines: dict[str, list[str]] = {}
    for key, f in facts.items():
        if f.boot_id and f.cpus:
            machines.setdefault(f.boot_id, []).append(key)
    return [keys for keys in machines.values() if len(keys) > 1]


def _quota(f: HostFacts) -> float | None:
    return float(f.cpu_quota_cores) if f.cpu_quota_cores else None


def load_scores(facts: Mapping[str, HostFacts]) -> dict[str, float]:
    """Each scored host's CPU score under load (``load_factor`` times its score alone), by address."""
    out = {address: float(f.cpu_score) for address, f in facts.items() if f.cpu_score}
    for keys in _shared_machines(facts):
        quotas = [_quota(facts[k]) for k in keys]
        for k, q in zip(keys, quotas):
            if k in out:
                out[k] *= load_factor(q, facts[k].cpus or 0, quotas)
    return out


def scaled_quotas(facts: Mapping[str, HostFacts], scale: float) -> dict[str, HostFacts]:
    """The facts as they would be with every host's CPU quota times ``scale`` (a host with no quota gets one
    of ``scale`` times the machine's cores): its score alone follows the quota up to the one core its single
    process can use. What a quota upgrade of every host gives, for ``load_scores`` to share."""
    out: dict[str, HostFacts] = {}
    for address, f in facts.items():
        if not (f.cpus and f.cpu_score):
            out[address] = f
            continue
        quota = float(f.cpu_quota_cores or f.cpus)
        new = min(quota * scale, float(f.cpus))
        alone = float(f.cpu_score) * min(new, 1.0) / min(quota, 1.0)
        out[address] = f.model_copy(update={"cpu_quota_cores": new if new < f.cpus else None, "cpu_score": alone})
    return out


def machine_notes(facts: Mapping[str, HostFacts]) -> dict[str, str]:
    """For each host that shares a machine with others of the cluster, in words: with whom, the cores the
    quotas ask of it, and the part of its CPU score a host keeps under load (``load_factor``); by key of
    ``facts`` (host names), for ``glmodel check``."""
    out: dict[str, str] = {}
    for keys in _shared_machines(facts):
        cores = facts[keys[0]].cpus or 0
        quotas = [_quota(facts[k]) for k in keys]
        asked = sum(_asked(q, cores) for q in quotas)
        for k, q in zip(keys, quotas):
            kept = load_factor(q, cores, quotas)
            out[k] = (f"shares one machine's {cores} core(s) with {', '.join(o for o in keys if o != k)}: their CPU "
                      f"limits ask {asked:g}; under load it keeps {100 * kept:.0f}% of its CPU score alone")
    return out
