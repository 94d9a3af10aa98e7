"""Strict YAML reading shared by every input file (cluster, volume, plan, scenarios)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

from ..errors import ConfigError

if TYPE_CHECKING:
    from pydantic import BaseModel


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice in one mapping (PyYAML silently keeps the last one)."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"key '{key}' appears twice in one mapping", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


MAX_NODES = 200_000  # values a file may expand to, aliases counted each time they are used
MAX_ECHO = 160  # characters of a value a message may repeat back (under text.MAX_TOKEN)


def expanded_size(doc: Any, limit: int = MAX_NODES) -> int:
    """How many values ``doc`` holds with every alias expanded, counting up to just past ``limit`` (an alias
    bomb, a few lines that expand to billions of values, is measured in at most ``limit`` steps)."""
    count, todo = 0, [doc]
    while todo and count <= limit:
        node = todo.pop()
        count += 1
        if isinstance(node, dict):
            todo.extend(node.keys())
            todo.extend(node.values())
        elif isinstance(node, (list, tuple)):
            todo.extend(node)
    return count


def parse_yaml(text: str, source: str) -> Any:
    """Parse YAML text; a syntax error becomes one ConfigError line with the file and line number, and a
    document that expands (through aliases) to more than ``MAX_NODES`` values is refused before anything
    reads it."""
    doc = _load(text, source)
    if expanded_size(doc) > MAX_NODES:
        raise ConfigError(source, "", f"expands to more than {MAX_NODES:,} values (aliases counted each time "
                          "they are used); glmodel's input files are far smaller (is it the right file?)")
    return doc


def _load(text: str, source: str) -> Any:
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - _StrictLoader derives from SafeLoader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(source, where, f"not valid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(source, "", f"not valid YAML: {exc}") from None


MAX_INPUT_BYTES = 4 << 20  # a cluster of thousands of hosts, or a plan of any size, fits in far less


def read_text(path: Path) -> str:
    """Read an input file, turning OS errors into a one-line ConfigError. A file larger than
    ``MAX_INPUT_BYTES`` is refused before it is read: parsing and validating one of millions of entries would
    take minutes and gigabytes only to refuse it then."""
    try:
        size = path.stat().st_size
        if path.is_file() and size > MAX_INPUT_BYTES:
            raise ConfigError(str(path), "", f"is {size / 1e6:.1f} MB; glmodel's input files are at most "
                              f"{MAX_INPUT_BYTES >> 20} MB (is it the right file?)")
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(str(path), "", "file not found") from None
    except IsADirectoryError:
        raise ConfigError(str(path), "", "is a directory, expected a YAML file") from None
    except UnicodeDecodeError:
        raise ConfigError(str(path), "", "not a UTF-8 text file") from None
    except OSError as exc:
        raise ConfigError(str(path), "", f"cannot read: {exc.strerror}") from None


def validation_message(exc: Any, source: str, model: type[Any] | None = None) -> ConfigError:
    """Turn a pydantic ValidationError into one line naming the key path and what is allowed."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    loc = tuple(first.get("loc", ()))
    key = format_loc(loc)
    msg = _explain(first)
    if first.get("type") == "extra_forbidden" and model is not None:
        allowed = allowed_keys(model, loc[:-1])
        if allowed:
            msg += f"; allowed here: {', '.join(allowed)}"
    more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    return ConfigError(source, key or "(top level)", msg + more)


def format_loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif str(part).startswith(("function-", "tagged-union", "union[")):
            continue  # pydantic's internal step names are noise to a user
        else:
            out += ("." if out else "") + str(part)
    return out


def _explain(err: dict[str, Any]) -> str:
    kind = err.get("type", "")
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "required key is missing"
    msg = str(err.get("msg", "invalid value"))
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    return shorten(msg)


def shorten(text: str, limit: int = MAX_ECHO) -> str:
    """A message that repeats a user's value back, cut to ``limit`` characters with the length said."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def allowed_keys(model: type[Any], loc: tuple[Any, ...]) -> list[str]:
    """Field names of the pydantic model reached by following ``loc`` from ``model`` (empty if unknown)."""
    from pydantic import BaseModel

    current: Any = model
    for part in loc:
        current = _unwrap_model(current, want_container=isinstance(part, int))
        if isinstance(part, int):
            continue
        if isinstance(current, type) and issubclass(current, BaseModel) and part in current.model_fields:
            current = current.model_fields[part].annotation
        else:
            return []
    current = _unwrap_model(current, want_container=False)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return [f.alias or name for name, f in current.model_fields.items()]
    return []


def _unwrap_model(tp: Any, want_container: bool) -> Any:
    """Strip Optional/Union/Annotated/list/tuple wrappers to reach a model class."""
    import typing

    from pydantic import BaseModel

    for _ in range(6):
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            return tp
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if not args:
            return tp
        models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
        tp = models[0] if models else args[-1] if typing.get_origin(tp) is dict else args[0]
    return tp


M = TypeVar("M", bound="BaseModel")


def load_model(path: str | Path, model: type[M], expected: str) -> M:
    """Read a YAML file holding one mapping and validate it as ``model``; every failure is one ConfigError line.

    ``expected`` says what the mapping should hold, for a file that is not a mapping at all.
    """
    from pydantic import ValidationError

    p = Path(path)
    data = parse_yaml(read_text(p), str(p))
    if not isinstance(data, dict):
        raise ConfigError(str(p), "", f"expected a mapping {expected}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_message(exc, str(p), model) from None
