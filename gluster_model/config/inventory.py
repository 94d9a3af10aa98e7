"""Ansible inventories (INI or YAML) -> cluster-file data, so operators can reuse what they already have.

Groups named ``servers``/``gluster_servers`` and ``clients``/``gluster_clients`` (one level of ``:children``
is followed) become the cluster's servers and clients. Host variables understood: ``ansible_host``,
``ansible_port``/``ansible_ssh_port``, ``ansible_user``/``ansible_ssh_user``, ``ansible_ssh_private_key_file``,
and ``glmodel_*`` keys for the rest (``glmodel_brick_paths`` comma-separated, ``glmodel_mount_root``,
``glmodel_known_hosts``, ``glmodel_network_name``, ``glmodel_network_gbps``, ``glmodel_base_filesystem``).
Other Ansible variables are ignored; an unknown ``glmodel_*`` variable is an error.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any, Literal

from ..errors import ConfigError

SERVER_GROUPS = ("servers", "gluster_servers")
CLIENT_GROUPS = ("clients", "gluster_clients")
_HOST_VARS = {"glmodel_brick_paths", "glmodel_mount_root", "glmodel_glusterd_socket", "glmodel_network_name",
              "glmodel_network_gbps", "glmodel_base_filesystem", "glmodel_disk", "glmodel_price"}
_GLOBAL_VARS = {"glmodel_known_hosts", "glmodel_cluster_name"}


def looks_like_inventory(path: Path, text: str) -> Literal["ini", "yaml", "cluster"]:
    """Tell an Ansible inventory from a glmodel cluster file by extension, then by shape."""
    if path.suffix in (".ini", ".cfg", ".hosts"):
        return "ini"
    if path.suffix in (".yaml", ".yml", ".json"):
        return "cluster"  # a YAML inventory is recognised after parsing (top-level 'all' and no 'servers')
    first = next((ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith(("#", ";"))), "")
    return "ini" if first.startswith("[") and first.endswith("]") else "cluster"


def _parse_ini(text: str, source: str) -> tuple[dict[str, dict[str, dict[str, str]]], dict[str, list[str]], dict[str, dict[str, str]]]:
    """Return (group -> host -> vars, group -> child groups, group -> group vars)."""
    hosts: dict[str, dict[str, dict[str, str]]] = {}
    children: dict[str, list[str]] = {}
    gvars: dict[str, dict[str, str]] = {}
    section, kind = "ungrouped", "hosts"
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            if not line.endswith("]"):
                raise ConfigError(source, f"line {lineno}", f"unterminated section header {line!r}")
            name = line[1:-1].strip()
            section, _, kind = name.partition(":")
            kind = kind or "hosts"
            if kind not in ("hosts", "vars", "children"):
                raise ConfigError(source, f"line {lineno}", f"section kind ':{kind}' is not one of :vars, :children")
            continue
        try:
            words = shlex.split(line, comments=True)
        except ValueError as exc:
            raise ConfigError(source, f"line {lineno}", f"cannot split line: {exc}") from None
        if kind == "children":
            children.setdefault(section, []).append(words[0])
        elif kind == "vars":
            key, sep, value = line.partition("=")
            if not sep:
                raise ConfigError(source, f"line {lineno}", "expected key=value in a :vars section")
            gvars.setdefault(section, {})[key.strip()] = value.strip().strip("'\"")
        else:
            hv: dict[str, str] = {}
            for w in words[1:]:
                key, sep, value = w.partition("=")
                if not sep:
                    raise ConfigError(source, f"line {lineno}", f"host variable {w!r} is not key=value")
                hv[key] = value
            hosts.setdefault(section, {})[words[0]] = hv
    return hosts, children, gvars


def _from_yaml(data: dict[str, Any], source: str) -> tuple[dict[str, dict[str, dict[str, str]]], dict[str, list[str]], dict[str, dict[str, str]]]:
    hosts: dict[str, dict[str, dict[str, str]]] = {}
    children: dict[str, list[str]] = {}
    gvars: dict[str, dict[str, str]] = {}

    def walk(name: str, node: Any, path: str) -> None:
        if node is None:
            return
        if not isinstance(node, dict):
            raise ConfigError(source, path, "expected a mapping with hosts, vars or children")
        for key in node:
            if key not in ("hosts", "vars", "children"):
                raise ConfigError(source, f"{path}.{key}", "unknown key; allowed here: hosts, vars, children")
        if path.count(".children.") > 32:  # only a YAML alias that contains itself nests this deep
            raise ConfigError(source, path, "groups nested more than 32 deep (an alias that contains itself?)")
        for key in ("hosts", "vars", "children"):
            if not isinstance(node.get(key) or {}, dict):
                raise ConfigError(source, f"{path}.{key}", f"expected a mapping (name: ...), got a "
                                  f"{type(node[key]).__name__}")
        for h, hv in (node.get("hosts") or {}).items():
            if not isinstance(hv or {}, dict):
                raise ConfigError(source, f"{path}.hosts.{h}", "expected a mapping of host variables")
            hosts.setdefault(name, {})[str(h)] = {k: str(v) for k, v in (hv or {}).items()}
        gvars.setdefault(name, {}).update({k: str(v) for k, v in (node.get("vars") or {}).items()})
        for child, sub in (node.get("children") or {}).items():
            children.setdefault(name, []).append(str(child))
            walk(str(child), sub, f"{path}.children.{child}")

    for top, node in data.items():
        walk(str(top), node, str(top))
    return hosts, children, gvars


def inventory_to_cluster_data(content: Any, source: str, fmt: Literal["ini", "yaml"]) -> dict[str, Any]:
    """Convert an inventory into the mapping a cluster file would hold."""
    if fmt == "ini":
        hosts, children, gvars = _parse_ini(str(content), source)
    else:
        hosts, children, gvars = _from_yaml(content, source)

    def members(group: str, seen: tuple[str, ...] = ()) -> dict[str, dict[str, str]]:
        if group in seen:
            raise ConfigError(source, f"{group}:children", f"groups contain each other in a cycle "
                              f"({' -> '.join([*seen, group])}); a group cannot be its own member")
        out: dict[str, dict[str, str]] = {}
        for child in children.get(group, []):
            for h, hv in members(child, (*seen, group)).items():
                out[h] = {**gvars.get(child, {}), **hv}
        for h, hv in hosts.get(group, {}).items():
            out[h] = {**out.get(h, {}), **hv}
        return {h: {**gvars.get(group, {}), **hv} for h, hv in out.items()}

    server_group = next((g for g in SERVER_GROUPS if members(g)), None)
    if server_group is None:
        raise ConfigError(source, "groups", f"no hosts in a server group; name one of: {', '.join(SERVER_GROUPS)}")
    client_group = next((g for g in CLIENT_GROUPS if members(g)), None)
    allvars = {**gvars.get("all", {})}

    ssh: dict[str, Any] = {}
    for var, key in (("ansible_user", "user"), ("ansible_ssh_user", "user"), ("ansible_port", "port"),
                     ("ansible_ssh_port", "port"), ("ansible_ssh_private_key_file", "identity_file"),
                     ("glmodel_known_hosts", "known_hosts")):
        if var in allvars:
            ssh[key] = allvars[var]

    def entry(name: str, hv: dict[str, str], where: str) -> dict[str, Any]:
        merged = {**allvars, **hv}
        unknown = sorted(k for k in merged if k.startswith("glmodel_") and k not in _HOST_VARS | _GLOBAL_VARS)
        if unknown:
            raise ConfigError(source, f"{where}.{unknown[0]}",
                              f"unknown variable; allowed: {', '.join(sorted(_HOST_VARS | _GLOBAL_VARS))}")
        e: dict[str, Any] = {"host": merged.get("ansible_host", name)}
        if name != e["host"]:
            e["name"] = name
        override: dict[str, Any] = {}
        for var, key in (("ansible_user", "user"), ("ansible_ssh_user", "user"), ("ansible_port", "port"),
                         ("ansible_ssh_port", "port"), ("ansible_ssh_private_key_file", "identity_file")):
            if var in hv:
                override[key] = hv[var]
        if override:
            e["ssh"] = override
        if "glmodel_brick_paths" in merged:
            e["brick_paths"] = [p.strip() for p in merged["glmodel_brick_paths"].split(",") if p.strip()]
        for var, key in (("glmodel_mount_root", "mount_root"), ("glmodel_glusterd_socket", "glusterd_socket")):
            if var in merged:
                e[key] = merged[var]
        hw: dict[str, Any] = {}
        if "glmodel_network_name" in merged or "glmodel_network_gbps" in merged:
            hw["network"] = {"name": merged.get("glmodel_network_name", "network"),
                             "gbps": merged.get("glmodel_network_gbps")}
        for var, key in (("glmodel_base_filesystem", "base_filesystem"), ("glmodel_disk", "disk"),
                         ("glmodel_price", "price")):
            if var in merged:
                hw[key] = merged[var]
        if hw:
            e["hardware"] = hw
        return e

    data: dict[str, Any] = {
        "name": allvars.get("glmodel_cluster_name", Path(source).stem or "cluster"),
        "servers": [entry(h, hv, f"{server_group}.{h}") for h, hv in members(server_group).items()],
    }
    if client_group:
        data["clients"] = [entry(h, hv, f"{client_group}.{h}") for h, hv in members(client_group).items()]
    if ssh:
        data["ssh"] = ssh
    return data
