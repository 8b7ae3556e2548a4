"""Server-rendered SVG bar charts: no script, no inline style (the CSP allows neither).

Each chart has a <title> and <desc> and the page shows the same numbers as a table.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .i18n import whole_number

WIDTH = 600
HEIGHT = 180
PAD_LEFT = 52
PAD_BOTTOM = 22
PAD_TOP = 10
PAD_RIGHT = 28  # room for the last date label


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    label: str  # the bar's tooltip: "2026-03-02: 14"


@dataclass(frozen=True)
class BarChart:
    title: str
    description: str
    bars: list[Bar]
    ticks: list[tuple[float, str]]  # y position, value
    x_labels: list[tuple[float, str]]  # x position, label
    width: int = WIDTH
    height: int = HEIGHT
    plot_left: int = PAD_LEFT
    plot_bottom: int = HEIGHT - PAD_BOTTOM
    plot_right: int = WIDTH - PAD_RIGHT


def bar_chart(
    title: str,
    description: str,
    labels: Sequence[str],
    values: Sequence[float],
    *,
    value_text: Sequence[str] | None = None,
    maximum: float | None = None,
    tick_text: Sequence[str] | None = None,
    every: int = 1,
) -> BarChart:
    top = maximum if maximum is not None else max([*values, 1])
    plot_w = WIDTH - PAD_LEFT - PAD_RIGHT
    plot_h = HEIGHT - PAD_BOTTOM - PAD_TOP
    step = plot_w / max(1, len(values))
    texts = value_text or [whole_number(round(v)) for v in values]
    bars = []
    for i, value in enumerate(values):
        h = plot_h * (value / top) if top else 0
        bars.append(
            Bar(
                x=round(PAD_LEFT + i * step + step * 0.12, 2),
                y=round(HEIGHT - PAD_BOTTOM - h, 2),
                width=round(step * 0.76, 2),
                height=round(h, 2),
                label=f"{labels[i]}: {texts[i]}",
            )
        )
    # Counts get whole-number ticks: "0.5 reviews" is not a thing.
    whole = maximum is None
    if whole and top < 2:
        ticks_values = [0.0, float(top)]
    else:
        ticks_values = [0.0, float(math.ceil(top / 2)) if whole else top / 2, float(top)]
    # Counts in the page's language ("12,000", "12.000"); a share's ticks come as tick_text.
    tick_labels = tick_text or [whole_number(round(v)) for v in ticks_values]
    ticks = [
        (round(HEIGHT - PAD_BOTTOM - plot_h * (v / top), 2), t)
        for v, t in zip(ticks_values, tick_labels, strict=False)
    ]
    x_labels = [
        (round(PAD_LEFT + i * step + step / 2, 2), labels[i]) for i in range(0, len(labels), every)
    ]
    return BarChart(title, description, bars, ticks, x_labels)
