"""``apex-voice run --config campaign.yaml``: the run's options kept in a file.

The file's keys are :class:`~.campaign_request.CampaignRequest`'s field names (``max_turns``;
``max-turns`` is read the same), its values what the flags take. It is validated by the same
model as the flags, so a wrong key or value is refused naming the file, the key and the value.
An option given on the command line wins over the file. Relative paths in the file (``data``,
``out``, ``token_file``, ``env_file``) are relative to the file's own directory, so a campaign
file means the same from wherever it is run.

What the file set is recorded in ``campaign.json`` (``config``) and never in the campaign's
identity: a value measures the same whether it came from the file or from a flag.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

import typer
import yaml
from pydantic import ValidationError

from harness.results.campaign_files import CampaignConfigUsed

from .campaign_request import CampaignRequest

__all__ = ["PATH_KEYS", "given_on_command_line", "request_with_config"]

#: Keys whose relative values are read from the config file's directory.
PATH_KEYS = ("data", "out", "token_file", "env_file")


def request_with_config(
    config: Path | None, flags: Mapping[str, Any], given: set[str]
) -> tuple[CampaignRequest, CampaignConfigUsed | None]:
    """The request of ``flags`` (every option's value) over the file ``config``: a key of the file
    counts unless its option is in ``given`` (typed on the command line). Exits 2 on a bad file."""
    if config is None:
        return _validated("", dict(flags)), None
    values = _file_values(config)
    from_file = _validated(f"{config}: ", values)
    overridden = sorted(key for key in values if key in given)
    merged = {**flags, **from_file.model_dump(exclude_unset=True), **{k: v for k, v in flags.items() if k in given}}
    used = CampaignConfigUsed(path=str(config.resolve()), values=from_file.model_dump(mode="json", exclude_unset=True),
                              overridden=overridden)
    return _validated("", merged), used


def given_on_command_line(ctx: typer.Context, names: Mapping[str, Any]) -> set[str]:
    """The options of ``names`` the user typed (or set by environment), not left at their defaults.

    Compared by name: typer may carry its own copy of click, whose ``ParameterSource`` is another enum."""
    sources = {name: ctx.get_parameter_source(name) for name in names}
    return {name for name, source in sources.items() if getattr(source, "name", None) in ("COMMANDLINE", "ENVIRONMENT")}


def _file_values(config: Path) -> dict[str, Any]:
    """The file's mapping, keys as field names, relative paths made relative to the file."""
    try:
        loaded = yaml.safe_load(config.read_text(encoding="utf-8"))
    except OSError as exc:
        _refuse(f"--config {config}: {exc.strerror or exc}")
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        _refuse(f"--config {config}: not YAML: {exc}")
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        _refuse(f"--config {config}: a mapping of run options is expected (key: value), not a {type(loaded).__name__}")
    values = {str(key).replace("-", "_"): value for key, value in loaded.items()}
    for key in PATH_KEYS:
        value = values.get(key)
        if isinstance(value, str) and value:
            path = Path(value).expanduser()
            values[key] = str(path if path.is_absolute() else config.parent / path)
    return values


def _validated(where: str, values: dict[str, Any]) -> CampaignRequest:
    """``values`` as a request; the first problem refused naming ``where`` (the file), the key and the value."""
    try:
        return CampaignRequest.model_validate(values)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(part) for part in error["loc"]) or "?"
        value = values.get(str(error["loc"][0]), error.get("input")) if error["loc"] else error.get("input")
        if error["type"] == "extra_forbidden":
            known = ", ".join(CampaignRequest.model_fields)
            _refuse(f"{where}key {key!r} is not a run option (the keys: {known})")
        _refuse(f"{where}key {key!r}: value {value!r}: {error['msg']}")


def _refuse(line: str) -> NoReturn:
    typer.echo(f"error: {line}", err=True)
    raise typer.Exit(2)
