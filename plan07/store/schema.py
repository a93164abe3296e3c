"""The shipped JSON Schemas: generated from plan07.model, read from plan07/schemas/, and used to
validate every artifact read from disk before it is used (I/O: reads package data and files).

`python -m plan07.store.schema --write` regenerates the files; tests/test_schemas.py fails on drift.
"""

from __future__ import annotations

import json
import sys
from functools import cache
from importlib import import_module, resources
from pathlib import Path
from typing import Any

from plan07 import caps
from plan07.errors import InputError

# name -> "module:Model". Names are what `plan07 schema NAME` takes.
SCHEMAS: dict[str, str] = {
    "requirement": "plan07.model:Requirement",
    "obligation": "plan07.model:Obligation",
    "decomposition": "plan07.model:Decomposition",
    "evidence": "plan07.model:Evidence",
    "order": "plan07.model:OrderResult",
    "plan-dag": "plan07.model:PlanDAG",
    "driver-view": "plan07.model:DriverView",
    "plan": "plan07.model:PlanArtifact",
    "feedback": "plan07.model:Feedback",
    "proof": "plan07.model.proof:Proof",
}


def model_for(name: str) -> Any:
    if name not in SCHEMAS:
        raise InputError(
            f"unknown schema {name!r}; known: {', '.join(sorted(SCHEMAS))}", field="NAME"
        )
    mod, _, attr = SCHEMAS[name].partition(":")
    return getattr(import_module(mod), attr)


def generate(name: str) -> dict[str, Any]:
    """The JSON Schema of artifact `name`, as generated from its model (serialization shape)."""
    schema: dict[str, Any] = model_for(name).model_json_schema(by_alias=True, mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://plan07.dev/schemas/{name}.schema.json"
    return schema


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


@cache
def shipped(name: str) -> dict[str, Any]:
    """The schema file shipped inside the package."""
    model_for(name)  # name check
    text = resources.files("plan07.schemas").joinpath(f"{name}.schema.json").read_text("utf-8")
    result: dict[str, Any] = json.loads(text)
    return result


def _json_path(parts: Any) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


def validate(name: str, data: Any, *, source: str | None = None) -> None:
    """Validate `data` against the shipped schema `name`; raise InputError naming the JSON path."""
    import jsonschema  # lazy: ~0.1 s to import, not needed on every path

    validator_cls = jsonschema.validators.validator_for(shipped(name))
    validator = validator_cls(shipped(name))
    errors = sorted(validator.iter_errors(data), key=lambda e: (list(e.absolute_path), e.message))
    if errors:
        err = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise InputError(f"{err.message}{more}", field=_json_path(err.absolute_path), source=source)


def read_json(path: str | Path, *, what: str) -> Any:
    """Read a JSON file (or '-' for stdin) with an error naming the file and the place; a FIFO or
    a directory, an oversized or over-deep document are refused (plan07.store.boundedio)."""
    from plan07.store.boundedio import loads, read_text

    try:
        if str(path) == "-":  # stdin: read to one byte past the cap, no further
            cap_name, cap = caps.input_cap(what)
            buffer = getattr(sys.stdin, "buffer", None)  # a text stream (a test's) has none
            data = buffer.read(cap + 1) if buffer is not None else sys.stdin.read(cap + 1)
            if len(data) > cap:
                raise InputError(f"{what} on stdin is over {cap} bytes", source="-",
                                 cap=f"{cap_name} {cap}")
            text = data if isinstance(data, str) else data.decode("utf-8")
        else:
            text = read_text(path, what=what)
    except UnicodeDecodeError as exc:
        raise InputError(f"cannot read {what}: {exc}", source=str(path)) from None
    return loads(text, source=str(path))


def load(name: str, path: str | Path) -> Any:
    """Read artifact `name` from disk: JSON, then the shipped JSON Schema, then the model."""
    data = read_json(path, what=name)
    return parse(name, data, source=str(path))


def parse(name: str, data: Any, *, source: str | None = None) -> Any:
    """Validate an in-memory JSON value against the shipped schema, then build the model."""
    from plan07.store.boundedio import depth_exceeds, too_deep

    if depth_exceeds(data, caps.JSON_MAX_DEPTH):
        raise too_deep(source, name)
    try:
        validate(name, data, source=source)
    except RecursionError:
        raise too_deep(source, name) from None
    return parse_model(name, data, source=source)


def parse_model(name: str, data: Any, *, source: str | None = None,
                text: str | None = None) -> Any:
    """Build the model of artifact `name` from a JSON value with the model's own checks only
    (what `parse` runs after the shipped schema), or from its JSON `text` in strict mode (no
    string taken for a number: as strict as the schema): a failure is one InputError naming the
    JSON path (`nodes[2].state`), never pydantic's multi-line text."""
    from pydantic import ValidationError

    from plan07.store.boundedio import too_deep

    try:
        if text is not None:
            return model_for(name).model_validate_json(text, strict=True)
        return model_for(name).model_validate(data)
    except RecursionError:
        raise too_deep(source, name) from None
    except ValidationError as exc:  # model-level checks the schema cannot express
        err = exc.errors()[0]
        raise InputError(
            err["msg"], field=_json_path(err["loc"]) if err["loc"] else None, source=source
        ) from None


def main(argv: list[str]) -> int:
    out_dir = Path(__file__).parents[1] / "schemas"
    if argv[:1] == ["--write"]:
        for name in SCHEMAS:
            (out_dir / f"{name}.schema.json").write_text(render(generate(name)), "utf-8")
        print(f"wrote {len(SCHEMAS)} schemas to {out_dir}")
        return 0
    print("usage: python -m plan07.store.schema --write", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
