"""The building blocks of configs (``training.learning.config``, each algorithm's own section in
``training.algorithms``, and the YAML values of the command lines): strict YAML, strict
sections and the numbers a float key takes. Below the config and the games, so that both
(and the algorithms the config lists) can use them."""

from __future__ import annotations

import math
import os
import stat
from typing import Annotated

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from envs.engine import MAX_SHOWN, clipped, shown


class ConfigError(ValueError):
    """A config that can't be used; the message names the key path."""


def _number(value):
    """YAML reads 3e-4 (no dot) as a string and 1 as an int: both are numbers for a float key.
    A bool is not, nor is any other string: the strict float check refuses them."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:  # an integer too big for a float
            return math.inf
    return value


Number = Annotated[float, Field(allow_inf_nan=False), BeforeValidator(_number)]
COEF_MAX = 10.0  # loss coefficients: common values are 0.001-1; far above that the loss overflows


class Section(BaseModel):
    """A config section: unknown keys are errors, and values are strict (true is not 1, "5" is
    not 5), except the numbers a float key takes (``Number``)."""

    model_config = ConfigDict(extra="forbid", strict=True)


# ---------------------------------------------------------------- strict YAML
class _StrictLoader(yaml.SafeLoader):
    """SafeLoader without aliases (``*name``): a few lines of nested aliases expand to
    gigabytes (the "billion laughs"), and a config is short enough to write every value out."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise ConfigError(
                f"{self.name}, line {event.start_mark.line + 1}: YAML aliases "
                f"(*{clipped(event.anchor)}) are not allowed in configs: write the value out"
            )
        return super().compose_node(parent, index)


def parse_yaml(text: str, source: str, at: str = ""):
    """YAML ``text`` as data, refusing aliases and repeated keys (YAML would silently keep the
    last one) with a ``ConfigError`` naming ``source`` (a file, ``--set key``) and the key
    path (``at``: the path of the whole text). Invalid YAML raises ``yaml.YAMLError``."""
    loader = _StrictLoader(text)
    loader.name = source  # YAML's own messages name it too
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _refuse_repeated_keys(loader, node, at)
        return loader.construct_document(node)
    except RecursionError:  # PyYAML recurses once per level of nesting
        raise ConfigError(f"{source}: nested too deeply") from None
    except ValueError as exc:  # an integer of over 4300 digits, which Python refuses to read
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"{source}: {clipped(str(exc))}") from None
    finally:
        loader.dispose()


def _refuse_repeated_keys(loader, node, path: str) -> None:
    if isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _refuse_repeated_keys(loader, item, f"{path}[{i}]")
    elif isinstance(node, yaml.MappingNode):
        seen = set()
        for key_node, value in node.value:
            # Only scalar keys are hashable (SafeLoader refuses the others); they are compared
            # as loaded, so 1 and 0x1 are the same key. A "<<" merge is YAML's own override.
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = loader.construct_object(key_node)
            where = f"{path}.{key}" if path else str(key)
            if key in seen:
                raise ConfigError(
                    f"{loader.name}, line {key_node.start_mark.line + 1}: duplicate key {shown(where)} "
                    f"(YAML would silently keep only the last one)"
                )
            seen.add(key)
            _refuse_repeated_keys(loader, value, where)


def yaml_problem(exc: yaml.YAMLError) -> str:
    """What is wrong, in a message's words (a ReaderError, for one, has no ``problem``)."""
    return clipped(str(getattr(exc, "problem", None) or exc))


def read_text(path) -> str:
    """A config file's text. The file is opened without blocking and must be a regular file:
    reading a FIFO would wait forever for a writer, a device may never end."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with open(fd, "rb") as f:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                raise ConfigError(
                    f"can't read config {path}: it is {'a directory' if stat.S_ISDIR(mode) else 'not a regular file'}"
                )
            return f.read().decode("utf-8")
    except OSError as exc:
        raise ConfigError(f"can't read config {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"can't read config {path}: it is not UTF-8 text (byte {exc.start})") from None


def read_yaml(path, error=ConfigError):
    """The data of the YAML file ``path``, read as a config is (a regular UTF-8 file, opened
    without blocking) and parsed strictly (``parse_yaml``); invalid YAML raises ``error``."""
    text = read_text(path)
    try:
        return parse_yaml(text, str(path))
    except yaml.YAMLError as exc:
        raise error(f"{path}: not valid YAML: {clipped(str(exc), 3 * MAX_SHOWN)}") from None
