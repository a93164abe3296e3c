"""The plan DAG drawn as text: Mermaid (`mermaid`) and Graphviz dot (`dot`), for
`plan07 show --format`. Pure.
"""

from __future__ import annotations

import re

from plan07.model import PlanDAG


def _mid(node_id: str) -> str:
    """A Mermaid-safe node key (ids may hold '.', ':' or '-'); the label keeps the real id."""
    return re.sub(r"[^A-Za-z0-9_]", "_", node_id)


def mermaid(dag: PlanDAG) -> str:
    """The plan DAG as a Mermaid flowchart: node states as classes, checkpoints as hexagons."""
    lines = ["flowchart TD"]
    for n in dag.nodes:
        label = f"{n.id} {n.obligation}<br/>{n.target_entity}".replace('"', "'")
        cls = n.state if n.status != "alternative" else "alt"
        lines.append(f'  {_mid(n.id)}["{label}"]:::{cls}')
    lines += [f"  {_mid(a)} --> {_mid(b)}" for a, b in dag.edges]
    for cp in dag.checkpoints[1:]:
        lines.append(f"  {cp.id}{{{{{cp.id}}}}}")
        lines.append(f"  {_mid(cp.after[-1])} -.-> {cp.id}")
    lines += ["  classDef complete fill:#c8f7c5", "  classDef failed fill:#f7c5c5",
              "  classDef pending fill:#fff", "  classDef alt fill:#eee,stroke-dasharray:4"]
    return "\n".join(lines) + "\n"


def dot(dag: PlanDAG) -> str:
    """The plan DAG as Graphviz dot: node states as fill colours, checkpoints as hexagons."""
    fills = {"complete": "#c8f7c5", "failed": "#f7c5c5", "pending": "white"}
    lines = ["digraph plan {", "  rankdir=TB; node [shape=box, style=filled];"]
    for n in dag.nodes:
        style = ', style="filled,dashed"' if n.status == "alternative" else ""
        label = f"{n.id} {n.obligation}\\n{n.target_entity}".replace('"', "'")
        lines.append(f'  "{n.id}" [label="{label}", fillcolor="{fills[n.state]}"{style}];')
    lines += [f'  "{a}" -> "{b}";' for a, b in dag.edges]
    for cp in dag.checkpoints[1:]:
        lines.append(f'  "{cp.id}" [shape=hexagon, fillcolor="#ddeeff"];')
        lines.append(f'  "{cp.after[-1]}" -> "{cp.id}" [style=dashed];')
    return "\n".join(lines) + "\n}\n"
