"""Server-rendered SVG bar charts: no script, no inline style (the CSP allows neither).

Each chart has a <title> and <desc> and the page shows the same numbers as a table. Each
bar or day is an element of its own with its value as a label (a tooltip on hover, read out
on keyboard focus), and a chart without data is not drawn: the page says what will be there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date

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
    plot_top: int = PAD_TOP
    plot_bottom: int = HEIGHT - PAD_BOTTOM
    plot_right: int = WIDTH - PAD_RIGHT
    focus: int = -1  # the bar that takes the chart's one tab stop (-1: the last)

    @property
    def opens_at_end(self) -> bool:
        """Whether the chart, too wide for a phone's screen, opens scrolled to its end: a
        history up to now, whose last bar is the one in focus (as the heatmap opens on today)."""
        return len(self.bars) > 1 and self.focus == len(self.bars) - 1


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
    focus: int = -1,
    axis_labels: Sequence[str] | None = None,
) -> BarChart:
    # Counts get whole-number ticks, "0.5 reviews" being no thing: their axis ends on a whole
    # number, an even one past 2, so that the middle tick is whole too (0, 2, 4 for a
    # largest count of 3, not 0, 2, 3).
    whole = maximum is None
    top = maximum if maximum is not None else float(math.ceil(max([*values, 1])))
    if whole and top > 2 and top % 2:
        top += 1
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
    ticks_values = [0.0, float(top)] if whole and top < 2 else [0.0, top / 2, float(top)]
    # Counts in the page's language ("12,000", "12.000"); a share's ticks come as tick_text.
    tick_labels = tick_text or [whole_number(round(v)) for v in ticks_values]
    ticks = [
        (round(HEIGHT - PAD_BOTTOM - plot_h * (v / top), 2), t)
        for v, t in zip(ticks_values, tick_labels, strict=False)
    ]
    # Under the axis, a shorter form where the bars' own labels are long (a day and time).
    shown = axis_labels or labels
    x_labels = [
        (round(PAD_LEFT + i * step + step / 2, 2), shown[i]) for i in range(0, len(shown), every)
    ]
    return BarChart(title, description, bars, ticks, x_labels, focus=focus % max(1, len(bars)))


CELL = 12  # a day's square, with its gap
GAP = 2
HEAT_LEFT = 34  # room for weekday names
HEAT_TOP = 18  # room for month names
LEVELS = 4


@dataclass(frozen=True)
class HeatCell:
    x: int
    y: int
    level: int  # 0: no answers; 1 to LEVELS: a share of the busiest day
    label: str


@dataclass(frozen=True)
class Heatmap:
    title: str
    description: str
    cells: list[HeatCell]
    months: list[tuple[int, str]]  # x position, month name
    weekdays: list[tuple[int, str]]  # y position, weekday name
    width: int
    height: int
    legend: list[tuple[int, str]]  # level, what it stands for


def heatmap(
    title: str,
    description: str,
    days: Sequence[tuple[date, int]],
    *,
    first_weekday: int,
    day_label: Callable[[date, int], str],
    month_name: Callable[[date], str],
    weekday_names: Sequence[str],
    legend_text: Callable[[int, int], str],
) -> Heatmap:
    """A year of days as squares: a column per week starting on `first_weekday` (0: Monday),
    a row per weekday, shaded by the day's count against the busiest day's."""
    busiest = max([count for _day, count in days] or [0])
    start = days[0][0] if days else date.today()
    offset = (start.weekday() - first_weekday) % 7  # the first column's empty days
    cells = []
    months = []
    for i, (day, count) in enumerate(days):
        column, row = divmod(i + offset, 7)
        x, y = HEAT_LEFT + column * CELL, HEAT_TOP + row * CELL
        cells.append(HeatCell(x, y, _level(count, busiest), day_label(day, count)))
        if day.day == 1 or i == 0:
            months.append((x, month_name(day)))
    if len(months) > 1 and months[1][0] - months[0][0] < 3 * CELL:
        months.pop(0)  # a few days of a month at the start: its name would run into the next
    weekdays = [
        (HEAT_TOP + row * CELL + CELL - GAP - 1, weekday_names[(first_weekday + row) % 7])
        for row in (0, 2, 4, 6)
    ]
    columns = (len(days) + offset + 6) // 7
    # Each shade with the most answers it stands for; one no count reaches is left out.
    most = {_level(count, busiest): count for count in range(1, busiest + 1)}
    legend = [(0, legend_text(0, 0)), *((lvl, legend_text(lvl, n)) for lvl, n in most.items())]
    return Heatmap(
        title,
        description,
        cells,
        months,
        weekdays,
        width=HEAT_LEFT + columns * CELL + 2 * CELL,  # room for the last month's name
        height=HEAT_TOP + 7 * CELL + GAP,
        legend=legend,
    )


def _level(count: int, busiest: int) -> int:
    return math.ceil(LEVELS * count / busiest) if count and busiest else 0
