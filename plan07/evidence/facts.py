"""Per-file recon facts: one Python module's definitions, imports and raw call references, read
with the standard `ast` module before any cross-file resolution. Pure (source text in, facts out).

Names are kept raw here (`("self", "load")`, `("auth", "SessionConfig")`); plan07.evidence.resolve
turns them into qualified entities once every module of the repository is known.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Chain = tuple[str, ...]  # a dotted reference: ("pkg", "auth", "load"); head "self"/"super" special


# A call site: (its chain, the positional arguments there, the keyword names there, a `**kw`
# counted as "**"). A plain tuple: sympy's parse makes ~360k of them.
CallRef = tuple[Chain, int, tuple[str, ...]]


@dataclass
class Def:
    """A class, function, method or test, with everything resolution needs and no body text."""

    qualname: str  # dotted inside its module: "SessionManager.load"
    kind: str  # class | function | method | test
    line: int
    signature: str
    doc: str = ""  # first docstring line
    bases: list[Chain] = field(default_factory=list)
    decorators: list[Chain] = field(default_factory=list)
    annotations: list[Chain] = field(default_factory=list)
    calls: list[CallRef] = field(default_factory=list)
    by_name: list[CallRef] = field(default_factory=list)  # `x.m()`, x of unknown type: ("m",)
    refs: list[Chain] = field(default_factory=list)  # names passed as values (`Thread(target=f)`)
    attr_types: dict[str, Chain] = field(default_factory=dict)  # class: self.x / x: T -> T
    params: list[str] = field(default_factory=list)  # function: parameter names, in order
    returns: Chain | None = None  # function: the one class its return annotation names
    defaults: int = 0  # function: how many parameters have a default value
    structured: bool = False  # class: dataclass / TypedDict / NamedTuple / pydantic at parse time
    field_signature: str = ""  # class: `class C(timeout: int = 30)` from its annotated fields
    field_defaults: int = 0  # class: how many annotated fields have a default


@dataclass
class ModuleFacts:
    name: str  # dotted module name: "pkg.auth"
    file: str  # path relative to the repository root, "/" separated
    is_package: bool
    kind: str = "module"  # module | migration | test (a test module is still kind module)
    is_test_file: bool = False
    doc: str = ""
    bindings: dict[str, str] = field(default_factory=dict)  # local name -> qualified dotted name
    imports: list[str] = field(default_factory=list)  # every imported qualified name, in order
    stars: list[str] = field(default_factory=list)  # modules star-imported (`from .sets import *`)
    defs: list[Def] = field(default_factory=list)
    top_calls: list[CallRef] = field(default_factory=list)  # calls at module level
    top_by_name: list[CallRef] = field(default_factory=list)  # by-name calls at module level
    top_refs: list[Chain] = field(default_factory=list)  # values at module level (registries)
    var_types: dict[str, Chain | None] = field(default_factory=dict)  # module variable -> class
    migration_models: list[str] = field(default_factory=list)  # Django models a migration touches
