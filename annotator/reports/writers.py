"""The report as JSON, CSV, LaTeX or Markdown (``FORMATS``: format -> writer(report) -> text).

Every table is written with its title and metric in words; a cell reads "value [low, high] n=N"
(Markdown, LaTeX) or has its own columns (CSV); split values and metric names in words. CSV cells that
a spreadsheet would run as a formula (starting with = + - @, a tab or a carriage return) get a leading
apostrophe, as the evaluation's CSV export does (OWASP "CSV injection"): study, model and domain
names come from people.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable

from annotator.core.cells import guard_cell

DIGITS = 3


def split_text(value) -> str:
    """A split value as people read it: None as "–", numbers without trailing zeros."""
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _num(x, digits: int = DIGITS) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def cell_text(cell: dict) -> str:
    """ "0.750 [0.301, 0.954] n=4", "0.500 n=1", or "–" for no answers."""
    if not cell or cell.get("n", 0) == 0 or cell.get("value") is None:
        return "–"
    ci = cell.get("ci")
    return _num(cell["value"]) + (f" [{_num(ci[0])}, {_num(ci[1])}]" if ci else "") + f" n={cell['n']}"


def paired_text(p: dict) -> str:
    """ "+0.250 [0.083, 0.604] p=0.172 n=12" or "–"."""
    if not p or p.get("diff") is None:
        return "–"
    ci = p.get("ci")
    out = f"{p['diff']:+.{DIGITS}f}" + (f" [{_num(ci[0])}, {_num(ci[1])}]" if ci else "")
    return out + (f" p={p['p']:.3f}" if p.get("p") is not None else "") + f" n={p['n']}"


def to_json(report: dict) -> str:
    return json.dumps(report, ensure_ascii=False, indent=1) + "\n"


def to_csv(report: dict) -> str:
    """One line per table, split cell and column: table, metric (words), the split fields (in words),
    column, value, ci_low, ci_high, n, and the paired comparison against people (diff, its interval,
    p, pairs) on model columns."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    fields = []
    for t in report["tables"]:
        fields.extend(f for f in t["by_words"] if f not in fields)
    writer.writerow(
        [
            "table",
            "metric",
            *fields,
            "column",
            "value",
            "ci_low",
            "ci_high",
            "n",
            "diff_vs_human",
            "diff_ci_low",
            "diff_ci_high",
            "p",
            "pairs",
        ]
    )
    for t in report["tables"]:
        for row in t["rows"]:
            split = {words: row["split"][name] for name, words in zip(t["by"], t["by_words"])}
            for column, cell in row["cells"].items():
                pairs = [p for name, p in row["paired"].items() if name == column or name.startswith(column + " vs ")]
                p = pairs[0] if pairs else {}
                ci, dci = cell.get("ci") or [None, None], p.get("ci") or [None, None]
                writer.writerow(
                    [
                        guard_cell(v)
                        for v in (
                            t["title"],
                            t["metric_words"],
                            *[split_text(split[f]) if f in split else "" for f in fields],
                            column,
                            cell["value"],
                            ci[0],
                            ci[1],
                            cell["n"],
                            p.get("diff"),
                            dci[0],
                            dci[1],
                            p.get("p"),
                            p.get("n"),
                        )
                    ]
                )
    return buf.getvalue()


def _grid(t: dict) -> tuple[list[str], list[list[str]]]:
    """Header and body of one table: split fields, one column per respondent, one per paired comparison."""
    paired_names = []
    for row in t["rows"]:
        paired_names.extend(n for n in row["paired"] if n not in paired_names)
    header = [
        *t["by_words"],
        *t["columns"],
        *[f"human − {n}" if " vs " not in n else n.replace(" vs ", " vs. ") for n in paired_names],
    ]
    body = []
    for row in t["rows"]:
        body.append(
            [
                *[split_text(row["split"][f]) for f in t["by"]],
                *[cell_text(row["cells"].get(c, {})) for c in t["columns"]],
                *[paired_text(row["paired"].get(n, {})) for n in paired_names],
            ]
        )
    return header, body


def to_markdown(report: dict) -> str:
    out = []
    for t in report["tables"]:
        header, body = _grid(t)
        out.append(f"### {t['title']}: {t['metric_words']}\n")
        esc = [[c.replace("|", "\\|") for c in line] for line in [header, *body]]
        out.append("| " + " | ".join(esc[0]) + " |")
        out.append("|" + "|".join("---" for _ in header) + "|")
        out.extend("| " + " | ".join(line) + " |" for line in esc[1:])
        out.append("")
    out.append(f"_{report['intervals']}; {report['n_resamples']} resamples, seed {report['seed']}._\n")
    return "\n".join(out)


_LATEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "−": "$-$",
    "–": "--",
    "·": r"$\cdot$",
}


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped."""
    return "".join(_LATEX.get(ch, ch) for ch in str(text))


def to_latex(report: dict) -> str:
    """A ``tabular`` per table (booktabs rules), with its caption."""
    out = []
    for t in report["tables"]:
        header, body = _grid(t)
        out.append("\\begin{table}[t]\n\\centering\\small")
        out.append(f"\\caption{{{latex_escape(t['title'])}: {latex_escape(t['metric_words'])}}}")
        out.append("\\begin{tabular}{" + "l" * len(t["by"]) + "r" * (len(header) - len(t["by"])) + "}")
        out.append("\\toprule")
        out.append(" & ".join(latex_escape(h) for h in header) + " \\\\")
        out.append("\\midrule")
        out.extend(" & ".join(latex_escape(c) for c in line) + " \\\\" for line in body)
        out.append("\\bottomrule\n\\end{tabular}\n\\end{table}\n")
    return "\n".join(out)


FORMATS: dict[str, Callable[[dict], str]] = {"json": to_json, "csv": to_csv, "latex": to_latex, "md": to_markdown}
CONTENT_TYPES = {
    "json": "application/json",
    "csv": "text/csv; charset=utf-8",
    "latex": "text/x-tex; charset=utf-8",
    "md": "text/markdown; charset=utf-8",
}
