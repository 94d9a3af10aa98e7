"""Ansible inventories (INI or YAML) -> cluster-file data, so operators can reuse what they already have.

Groups named ``servers``/``gluster_servers``/``hc_nodes`` (gluster-ansible's hyperconverged deployments) and
``clients``/``gluster_clients`` (``:children`` followed) become the cluster's servers and clients; without a
client group the servers mount the volumes themselves, as hyperconverged nodes do. Host names may be Ansible
ranges (``gfs[01:03].lab``, ``10.0.0.[1:9:2]``, ``rack-[a:c]``: ``expand_hosts``) and carry a port
(``gfs1:2222``, ``[2001:db8::1]:2222``). Host variables understood: ``ansible_host`` (or the older
``ansible_ssh_host``), ``ansible_port``/``ansible_ssh_port``, ``ansible_user``/``ansible_ssh_user``,
``ansible_ssh_private_key_file``/``ansible_private_key_file``, and ``glmodel_*`` keys for the rest
(``glmodel_brick_paths`` comma-separated,
``glmodel_mount_root``, ``glmodel_known_hosts``, ``glmodel_network_name``, ``glmodel_network_gbps``,
``glmodel_base_filesystem``). Brick directories come from ``glmodel_brick_paths``, else from gluster-ansible's
own variables: the mount points of ``gluster_infra_mount_devices`` (one filesystem each, on LVM), the
directories holding ``gluster_features_hci_volumes`` bricks, or ``gluster_cluster_bricks``. Other Ansible
variables are ignored; an unknown ``glmodel_*`` variable is an error. Every message names the group, host and
variable, never the cluster-file field they became.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any, Literal

from ..errors import ConfigError

SERVER_GROUPS = ("servers", "gluster_servers", "hc_nodes")
CLIENT_GROUPS = ("clients", "gluster_clients")
_HOST_VARS = {"glmodel_brick_paths", "glmodel_mount_root", "glmodel_glusterd_socket", "glmodel_network_name",
              "glmodel_network_gbps", "glmodel_base_filesystem", "glmodel_disk", "glmodel_price"}
_GLOBAL_VARS = {"glmodel_known_hosts", "glmodel_cluster_name"}


_GROUP_KEYS = {"hosts", "vars", "children"}
# Ansible's connection variables glmodel reads, older names first so that the current one wins where both are set
_SSH_VARS = (("ansible_ssh_user", "user"), ("ansible_user", "user"), ("ansible_ssh_port", "port"),
             ("ansible_port", "port"), ("ansible_private_key_file", "identity_file"),
             ("ansible_ssh_private_key_file", "identity_file"))


MAX_RANGE_HOSTS = 4096  # hosts one range pattern may name: more is a typo (node[1:10000]), not a cluster
_SECTION = re.compile(r"^\[([^\]]+)\]\s*(?:[#;].*)?$")  # [group], [group:vars], a comment after it
_RANGE = re.compile(r"\[([0-9]*|[a-zA-Z]):([0-9]+|[a-zA-Z])(?::([0-9]+))?\]")


def is_yaml_inventory(data: Any) -> bool:
    """A parsed YAML file is an inventory when it has no ``servers`` key and its top level is groups (mappings of
    hosts, vars and children), as Ansible's YAML inventories are (``all:`` or named groups such as ``hc_nodes:``)."""
    if not isinstance(data, dict) or not data or "servers" in data:
        return False
    return "all" in data or all(node is None or (isinstance(node, dict) and node and set(node) <= _GROUP_KEYS)
                                for node in data.values())


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
        if line.startswith("[") and "]" not in line:
            raise ConfigError(source, f"line {lineno}", f"unterminated section header {line!r}")
        header = _SECTION.match(line)  # else a host line, even one starting "[": [2001:db8::1]:2222 ...
        if header:
            name = header.group(1).strip()
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
            hosts.setdefault(section, {}).update(inventory_hosts(words[0], hv, source, f"line {lineno}"))
    return hosts, children, gvars


def expand_hosts(pattern: str, source: str, where: str) -> list[str]:
    """The hosts an inventory's host pattern names, as Ansible expands them: ``gfs[01:03].lab`` is gfs01.lab,
    gfs02.lab, gfs03.lab (a leading zero keeps the width), ``10.0.0.[1:9:2]`` every second address, ``node-[a:c]``
    letters; several ranges multiply. A name without ``[`` is itself. ConfigError (naming ``where``) for a range
    that is malformed, runs backwards or names more than ``MAX_RANGE_HOSTS`` hosts."""
    m = _RANGE.search(pattern)
    if m is None:
        if "[" in pattern or "]" in pattern:
            raise ConfigError(source, where, f"{pattern!r}: a host range is [start:end] or [start:end:step] of "
                              "numbers or single letters, e.g. gfs[01:03].example.com")
        return [pattern]
    start, end, step_text = m.group(1) or "0", m.group(2), m.group(3)
    step = int(step_text) if step_text else 1
    if step < 1:
        raise ConfigError(source, where, f"{pattern!r}: a range's step is 1 or more")
    if start.isdecimal() != end.isdecimal():
        raise ConfigError(source, where, f"{pattern!r}: a range runs from a number to a number or a letter to a letter")
    if start.isdecimal():
        width = len(start) if start.startswith("0") and len(start) > 1 else 0
        if width and len(end) != width:
            raise ConfigError(source, where, f"{pattern!r}: a zero-padded range gives its end the same width "
                              f"({start}:{'0' * max(width - len(end), 0)}{end})")
        first, last = int(start), int(end)
        names = [str(i).zfill(width) for i in range(first, last + 1, step)] if first <= last else []
    else:
        first, last = ord(start), ord(end)
        names = [chr(i) for i in range(first, last + 1, step)] if first <= last and start.islower() == end.islower() \
            else []
    if not names:
        raise ConfigError(source, where, f"{pattern!r}: the range runs backwards or mixes cases; give it as start:end")
    if len(names) > MAX_RANGE_HOSTS:
        raise ConfigError(source, where, f"{pattern!r} names {len(names)} hosts; at most {MAX_RANGE_HOSTS}")
    out: list[str] = []
    for name in names:
        out += expand_hosts(pattern[:m.start()] + name + pattern[m.end():], source, where)
        if len(out) > MAX_RANGE_HOSTS:
            raise ConfigError(source, where, f"{pattern!r} names more than {MAX_RANGE_HOSTS} hosts")
    return out


def host_port(pattern: str) -> tuple[str, str | None]:
    """An inventory host's name and the SSH port written after it, as Ansible reads them: ``gfs1:2222``,
    ``gfs[01:03]:2222``, ``[2001:db8::1]:2222``; an IPv6 address alone (``2001:db8::1``) has no port."""
    head, sep, port = pattern.rpartition(":")
    if not sep or not port.isdecimal() or ":" in re.sub(r"\[[^\]]*\]", "", head):
        return pattern, None
    if head.startswith("[") and head.endswith("]") and ":" in head:
        head = head[1:-1]  # a bracketed IPv6 address, not a range
    return head, port


def inventory_hosts(pattern: str, variables: dict[str, Any], source: str, where: str) -> dict[str, dict[str, Any]]:
    """Each host an inventory's host entry names (``expand_hosts``) with its variables; a port written after the
    name is its ``ansible_port`` unless a variable gives one."""
    name, port = host_port(pattern)
    extra = {"ansible_port": port} if port and "ansible_port" not in variables else {}
    return {host: {**extra, **variables} for host in expand_hosts(name, source, where)}


def _value(v: Any) -> Any:
    """A YAML variable as Ansible reads it: lists and mappings kept (gluster-ansible's brick variables are), the
    rest as text."""
    return v if isinstance(v, (list, dict)) else str(v)


def _structured(value: Any) -> Any:
    """An INI variable holding a list or mapping is written as YAML/JSON inline text; read it so."""
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        import yaml

        try:
            return yaml.safe_load(value)
        except yaml.YAMLError:
            return value
    return value


def brick_dirs(merged: dict[str, Any], source: str, where: str) -> tuple[list[str], str] | None:
    """The host's brick directories and the variable they came from, or None when no variable gives any."""
    if "glmodel_brick_paths" in merged:
        return [p.strip() for p in str(merged["glmodel_brick_paths"]).split(",") if p.strip()], "glmodel_brick_paths"
    mounts = _structured(merged.get("gluster_infra_mount_devices"))
    if mounts:
        if not isinstance(mounts, list) or not all(isinstance(m, dict) and m.get("path") for m in mounts):
            raise ConfigError(source, f"{where}.gluster_infra_mount_devices",
                              "expected a list of mappings each with a path (as gluster-ansible writes them)")
        return list(dict.fromkeys(str(m["path"]) for m in mounts)), "gluster_infra_mount_devices"
    hci = _structured(merged.get("gluster_features_hci_volumes"))
    if hci:
        if not isinstance(hci, list) or not all(isinstance(v, dict) and v.get("brick") for v in hci):
            raise ConfigError(source, f"{where}.gluster_features_hci_volumes",
                              "expected a list of mappings each with a brick (as gluster-ansible writes them)")
        return list(dict.fromkeys(str(Path(str(v["brick"])).parent) for v in hci)), "gluster_features_hci_volumes"
    if merged.get("gluster_cluster_bricks"):
        return ([b.strip() for b in str(merged["gluster_cluster_bricks"]).split(",") if b.strip()],
                "gluster_cluster_bricks")
    return None


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
            hosts.setdefault(name, {}).update(inventory_hosts(
                str(h), {str(k): _value(v) for k, v in (hv or {}).items()}, source, f"{path}.hosts.{h}"))
        gvars.setdefault(name, {}).update({str(k): _value(v) for k, v in (node.get("vars") or {}).items()})
        for child, sub in (node.get("children") or {}).items():
            children.setdefault(name, []).append(str(child))
            walk(str(child), sub, f"{path}.children.{child}")

    for top, node in data.items():
        walk(str(top), node, str(top))
    return hosts, children, gvars


def inventory_to_cluster_data(content: Any, source: str, fmt: Literal["ini", "yaml"],
                              places: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """Convert an inventory into the mapping a cluster file would hold; ``places`` (when given) gets, per list
    of hosts, each entry's group and host (``hc_nodes.host1``), so later messages can speak inventory terms."""
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
    for var, key in (*_SSH_VARS, ("glmodel_known_hosts", "known_hosts")):
        if var in allvars:
            ssh[key] = allvars[var]

    def entry(name: str, hv: dict[str, Any], where: str, server: bool) -> dict[str, Any]:
        merged = {**allvars, **hv}
        unknown = sorted(k for k in merged if k.startswith("glmodel_") and k not in _HOST_VARS | _GLOBAL_VARS)
        if unknown:
            raise ConfigError(source, f"{where}.{unknown[0]}",
                              f"unknown variable; allowed: {', '.join(sorted(_HOST_VARS | _GLOBAL_VARS))}")
        # ansible_ssh_host: the name Ansible before 2.0 gave ansible_host, which Ansible still reads
        e: dict[str, Any] = {"host": merged.get("ansible_host", merged.get("ansible_ssh_host", name))}
        if name != e["host"]:
            e["name"] = name
        override: dict[str, Any] = {}
        for var, key in _SSH_VARS:
            if var in hv:
                override[key] = hv[var]
        if override:
            e["ssh"] = override
        bricks = brick_dirs(merged, source, where) if server else None
        if bricks is not None:
            e["brick_paths"] = bricks[0]
        elif server:
            raise ConfigError(source, where, "no brick directories: set glmodel_brick_paths (comma-separated) or "
                              "gluster-ansible's gluster_infra_mount_devices for this host or its group")
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
        "servers": [entry(h, hv, f"{server_group}.{h}", True) for h, hv in members(server_group).items()],
    }
    if client_group:
        data["clients"] = [entry(h, hv, f"{client_group}.{h}", False) for h, hv in members(client_group).items()]
    if places is not None:
        places.update({"servers": [f"{server_group}.{h}" for h in members(server_group)],
                       "clients": [f"{client_group}.{h}" for h in members(client_group)] if client_group else []})
    if ssh:
        data["ssh"] = ssh
    return data


# Cluster-file fields an inventory entry was built from, and the inventory variable each came from.
_VARIABLE_OF = {"host": "ansible_host", "name": "inventory host name", "ssh.port": "ansible_port",
                "ssh.user": "ansible_user", "ssh.identity_file": "ansible_ssh_private_key_file",
                "ssh.known_hosts": "glmodel_known_hosts", "brick_paths": "glmodel_brick_paths",
                "mount_root": "glmodel_mount_root", "glusterd_socket": "glmodel_glusterd_socket",
                "hardware.network.gbps": "glmodel_network_gbps", "hardware.network.name": "glmodel_network_name",
                "hardware.base_filesystem": "glmodel_base_filesystem", "hardware.disk": "glmodel_disk",
                "hardware.price": "glmodel_price"}


def in_inventory_terms(exc: ConfigError, places: dict[str, list[str]]) -> ConfigError:
    """The same problem, its place given as the inventory's group, host and variable instead of the cluster-file
    field (``servers[1].ssh.port`` -> ``gluster_servers.s2.ansible_port``)."""
    import re

    m = re.match(r"^(servers|clients)(?:\[(\d+)\])?(?:\.(.+))?$", exc.key)
    if not m:
        key = {"ssh.port": "all.vars.ansible_port", "ssh.user": "all.vars.ansible_user", "name":
               "all.vars.glmodel_cluster_name"}.get(exc.key, exc.key)
        return ConfigError(exc.source, key, exc.problem)
    kind, index, field = m.groups()
    hosts = places.get(kind) or []
    if index is None or int(index) >= len(hosts):
        return ConfigError(exc.source, f"{kind} group", exc.problem)
    field = re.sub(r"\[\d+\]$", "", field or "")
    variable = _VARIABLE_OF.get(field, field)
    return ConfigError(exc.source, hosts[int(index)] + (f".{variable}" if variable else ""), exc.problem)
