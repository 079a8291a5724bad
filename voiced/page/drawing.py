"""The cell drawn from above as SVG, from the cell file and the confirmed scene: every site
with its stack (bottom to top, drawn upwards), the named poses, the tool stands, and the arm
from its base to where the tool centre point is, with what it holds.

Built on the server from the same scene the status shows, so the drawing never disagrees with
it; every name is escaped. Works for any cell: it reads only sites, poses and tools.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from html import escape

from voiced.robot import physics
from voiced.robot.cell import Cell
from voiced.robot.scene import Scene

WIDTH, HEIGHT, MARGIN = 720, 420, 60
BLOCK_W, BLOCK_H = 30, 11
"""One object on a stack, in pixels."""
COLOURS = {
    "red": "#d32f2f", "green": "#388e3c", "blue": "#1976d2", "yellow": "#fbc02d",
    "orange": "#f57c00", "purple": "#7b1fa2", "bread": "#d7a86e", "meat": "#8d3b2f",
    "cheese": "#ffd54f", "lettuce": "#7cb342", "tomato": "#e53935",
}  # fmt: skip
"""A colour by a word of the object's name; other names get one from their hash."""
ARM = "#37474f"
SITE_KINDS = {"supply": "#90a4ae", "zone": "#5c6bc0", "buffer": "#8d6e63",
              "arrangement": "#26a69a", "scatter": "#bdbdbd"}  # fmt: skip


def colour_of(name: str) -> str:
    for word in name.lower().replace("_", " ").split():
        if word in COLOURS:
            return COLOURS[word]
    hue = zlib.crc32(name.encode()) % 360
    return f"hsl({hue}, 55%, 50%)"


class _Plan:
    """Robot base-frame x/y (mm) to drawing pixels: x to the right, y up."""

    def __init__(self, points: Iterable[tuple[float, float]]) -> None:
        xs, ys = zip(*[(0.0, 0.0), *points], strict=True)
        self.x0, self.y0 = min(xs), min(ys)
        span_x, span_y = max(max(xs) - self.x0, 1.0), max(max(ys) - self.y0, 1.0)
        self.scale = min((WIDTH - 2 * MARGIN) / span_x, (HEIGHT - 2 * MARGIN) / span_y)

    def __call__(self, x: float, y: float) -> tuple[float, float]:
        px = MARGIN + (x - self.x0) * self.scale
        py = HEIGHT - MARGIN - (y - self.y0) * self.scale
        return round(px, 1), round(py, 1)


def cell_svg(cell: Cell, scene: Scene) -> str:
    """The drawing, one <svg> element."""
    points = [(s.x, s.y) for s in cell.sites.values()]
    points += [(p.pose.x, p.pose.y) for p in cell.poses.values()]
    points += [(t.stand.x, t.stand.y) for t in cell.tools.values()]
    points.append((scene.pose.x, scene.pose.y))
    plan = _Plan(points)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'class="cell-drawing" role="img" aria-label="the {escape(cell.name)} cell from above">',
        f'<rect class="floor" x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#f5f5f0"/>',
        *_poses(cell, scene, plan),
        *_tools(cell, scene, plan),
        *_sites(cell, scene, plan),
        *_arm(scene, plan),
        # Last, over the arm, with a halo: the arm parked at a site covered its name.
        '<g class="site-names">',
        *_site_names(cell, plan),
        "</g>",
        "</svg>",
    ]
    return "".join(parts)


def _site_names(cell: Cell, plan: _Plan) -> list[str]:
    out: list[str] = []
    labels: list[tuple[float, float, int]] = []
    for site in cell.sites.values():
        x, y = plan(site.x, site.y)
        # Sites close together (a pyramid's three) would write over each other: the first
        # is named, the others keep their name as a tooltip.
        size = len(site.name)
        if all(abs(x - lx) > 2.5 * (size + n) + 2 or abs(y - ly) > 10 for lx, ly, n in labels):
            labels.append((x, y, size))
            out.append(
                f'<text x="{x}" y="{y + 14}" font-size="10" text-anchor="middle" '
                f'fill="#455a64" stroke="#f5f5f0" stroke-width="3" paint-order="stroke" '
                f'data-site-name="{escape(site.name)}">{escape(site.name.replace("_", " "))}</text>'
            )
    return out


def _sites(cell: Cell, scene: Scene, plan: _Plan) -> list[str]:
    out: list[str] = []
    for site in cell.sites.values():
        x, y = plan(site.x, site.y)
        kind = SITE_KINDS.get(site.kind, "#9e9e9e")
        active = " active" if site.name == scene.active_zone else ""
        out.append(
            f'<g class="site{active}" data-site="{escape(site.name)}"><title>{escape(site.name)}'
            f'</title><rect x="{x - BLOCK_W / 2 - 3}" y="{y - 2}" width="{BLOCK_W + 6}" '
            f'height="5" fill="{kind}"/>'
        )
        stack = scene.stacks.get(site.name, ())
        # A site resting on others (the top of a pyramid) starts above their stacks.
        below = max((len(scene.stacks.get(s, ())) for s in site.supports), default=0)
        for level, obj in enumerate(stack, start=below):
            top = y - 2 - (level + 1) * BLOCK_H
            out.append(
                f'<rect class="object" data-object="{escape(obj)}" x="{x - BLOCK_W / 2}" '
                f'y="{top}" width="{BLOCK_W}" height="{BLOCK_H - 1}" rx="2" '
                f'fill="{colour_of(obj)}"><title>{escape(obj)}</title></rect>'
            )
        if len(stack) > 1 or (stack and cell.objects[stack[0]].supply):
            out.append(
                f'<text x="{x + BLOCK_W / 2 + 4}" y="{y - 4}" font-size="9" fill="#607d8b">'
                f"{len(stack)}</text>"
            )
        out.append("</g>")
    return out


def _poses(cell: Cell, scene: Scene, plan: _Plan) -> list[str]:
    here = physics.position_name(cell, scene.pose)
    out: list[str] = []
    for named in cell.poses.values():
        x, y = plan(named.pose.x, named.pose.y)
        fill = "#ff7043" if named.name == here else "#b0bec5"
        out.append(
            f'<g class="pose" data-pose="{escape(named.name)}">'
            f'<path d="M{x} {y - 6}L{x + 6} {y}L{x} {y + 6}L{x - 6} {y}Z" fill="{fill}"/>'
            f'<text x="{x + 9}" y="{y + 4}" font-size="10" fill="#546e7a">'
            f"{escape(named.name)}</text></g>"
        )
    return out


def _tools(cell: Cell, scene: Scene, plan: _Plan) -> list[str]:
    out: list[str] = []
    for tool in cell.tools.values():
        x, y = plan(tool.stand.x, tool.stand.y)
        on_stand = scene.tool != tool.name
        label = escape(tool.name) if on_stand else f"{escape(tool.name)} (on the arm)"
        out.append(
            f'<g class="tool-stand" data-tool="{escape(tool.name)}">'
            f'<rect x="{x - 12}" y="{y - 8}" width="24" height="16" fill="none" '
            f'stroke="#6d4c41" stroke-width="2"/>'
            + (f'<rect x="{x - 8}" y="{y - 4}" width="16" height="8" fill="#6d4c41"/>'
               if on_stand else "")
            + f'<text x="{x}" y="{y + 22}" font-size="10" text-anchor="middle" '
            f'fill="#5d4037">{label}</text></g>'
        )  # fmt: skip
    return out


def _arm(scene: Scene, plan: _Plan) -> list[str]:
    bx, by = plan(0.0, 0.0)
    x, y = plan(scene.pose.x, scene.pose.y)
    out = [
        f'<g class="arm"><circle cx="{bx}" cy="{by}" r="14" fill="{ARM}"/>'
        f'<line x1="{bx}" y1="{by}" x2="{x}" y2="{y}" stroke="{ARM}" stroke-width="8" '
        f'stroke-linecap="round" opacity="0.8"/>'
        f'<circle class="tcp" cx="{x}" cy="{y}" r="7" fill="#ff5722" stroke="#fff"/>'
    ]
    if scene.holding:
        out.append(
            f'<rect class="held" data-object="{escape(scene.holding)}" x="{x - BLOCK_W / 2}" '
            f'y="{y - 24}" width="{BLOCK_W}" height="{BLOCK_H}" rx="2" '
            f'fill="{colour_of(scene.holding)}" stroke="#000"/>'
        )
    if scene.tool:
        out.append(
            f'<text x="{x + 10}" y="{y + 16}" font-size="10" fill="{ARM}">{escape(scene.tool)}'
            "</text>"
        )
    out.append("</g>")
    return out
