"""Scenarios from files, YAML strings or dicts, with overrides."""
import numbers
import os

import yaml

from . import _fathom

_MAX_DEPTH = 64  # as the YAML reader's (scenarios/yaml_guard.h)


def _plain(value, key, depth=0, within=()):
    """`value` as plain YAML data (dicts with text keys, lists, text, numbers, booleans, None), or
    InputError naming the key at fault: a value YAML cannot hold (PyYAML raised RepresenterError), a
    dict or list inside itself or nested past 64 levels (PyYAML raised RecursionError). Numbers of
    other types (numpy's) become int or float."""
    if depth > _MAX_DEPTH:
        raise _fathom.InputError(f"key '{key}': nested deeper than {_MAX_DEPTH} levels")
    if isinstance(value, (dict, list, tuple)):
        if any(value is w for w in within):
            raise _fathom.InputError(f"key '{key}': a {type(value).__name__} inside itself")
        within = within + (value,)
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise _fathom.InputError(f"key '{key}': keys are names (text), got {k!r} ({type(k).__name__})")
            _text(k, f"key '{key}'")
            out[k] = _plain(v, f"{key}.{k}" if key else k, depth + 1, within)
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{key}[{i}]", depth + 1, within) for i, v in enumerate(value)]
    if isinstance(value, str):
        return _text(value, f"key '{key}'")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    kind = type(value).__name__
    raise _fathom.InputError(f"key '{key}': {'an' if kind[0] in 'aeiou' else 'a'} {kind} is not a scenario value "
                             "(text, a number, true or false, a list or a mapping)")


def _text(s, where):
    """`s`, or InputError when it cannot be UTF-8 (a lone surrogate, as from bytes decoded with
    surrogateescape): pybind11 raised TypeError."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise _fathom.InputError(f"{where}: not UTF-8 text at character {e.start}") from None
    return s


def _format(value, key):
    """An override's value as the YAML text the CLI's --set takes."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, dict)):
        return yaml.safe_dump(_plain(value, key), default_flow_style=True, width=1 << 20).strip()
    return str(_plain(value, key))


def _overrides(overrides, kwargs):
    out = []
    items = list((overrides or {}).items()) + [(k.replace("__", "."), v) for k, v in kwargs.items()]
    for key, value in items:
        if not isinstance(key, str) or not key:
            raise _fathom.InputError(f"override keys are dotted key names (parallel.tp), got {key!r}")
        _text(key, "an override key")
        out.append(f"{key}={_format(value, key)}")
    return out


class Scenario:
    """A loaded, validated scenario. Build one with fathom.load(); `with_` gives a copy with more
    overrides (dotted keys in a dict, or keyword arguments with __ for the dots)."""

    def __init__(self, spec):
        self._spec = spec  # (path, yaml text, name, overrides): enough to load it again elsewhere
        path, text, name, overrides = spec
        self._core = _fathom.load(path, text, name, overrides)

    @classmethod
    def _from_spec(cls, spec):
        return cls(spec)

    def with_(self, overrides=None, **kwargs):
        path, text, name, base = self._spec
        return Scenario((path, text, name, list(base) + _overrides(overrides, kwargs)))

    name = property(lambda self: self._core.name)
    file = property(lambda self: self._core.file)
    kind = property(lambda self: self._core.kind)
    model = property(lambda self: self._core.model)
    gpus = property(lambda self: self._core.gpus)
    warnings = property(lambda self: self._core.warnings)

    def __repr__(self):
        return f"Scenario({self.name!r}, kind={self.kind}, model={self.model}, gpus={self.gpus})"


def load(source, overrides=None, **kwargs):
    """A Scenario from a file path, a YAML string or a dict; `overrides` and keyword arguments
    (with __ for dots: parallel__tp=2) set keys as the CLI's --set does."""
    if isinstance(source, Scenario):
        return source.with_(overrides, **kwargs) if (overrides or kwargs) else source
    extra = _overrides(overrides, kwargs)
    if isinstance(source, dict):
        return Scenario(("", yaml.safe_dump(_plain(source, ""), sort_keys=False), "<dict>", extra))
    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source and not source.lstrip().startswith("{")):
        return Scenario((_text(os.fspath(source), "a scenario path"), "", "", extra))
    if isinstance(source, str):
        return Scenario(("", _text(source, "<string>"), "<string>", extra))
    raise TypeError(f"a scenario is a file path, a YAML string or a dict, not {type(source).__name__}")
