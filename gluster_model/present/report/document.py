"""A report as a document: headings, paragraphs, lead sentences, tables and figures, rendered to HTML (styles
inline, images as local files, nothing fetched) and to Markdown. Sections build a Doc; this module only renders."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ... import __version__

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class Block:
    kind: str              # h2 | h3 | p | lead | table | img
    text: str = ""
    frame: Any = None
    anchor: str = ""


@dataclass
class Doc:
    title: str
    blocks: list[Block] = field(default_factory=list)

    def h2(self, text: str, anchor: str) -> None:
        self.blocks.append(Block("h2", text, anchor=anchor))

    def h3(self, text: str) -> None:
        self.blocks.append(Block("h3", text))

    def p(self, text: str) -> None:
        self.blocks.append(Block("p", text))

    def lead(self, text: str) -> None:
        """A sentence of the answer, set apart from the body text."""
        self.blocks.append(Block("lead", text))

    def table(self, frame: pd.DataFrame, caption: str = "") -> None:
        if frame is not None and not frame.empty:
            self.blocks.append(Block("table", caption, frame))

    def img(self, name: str | None, alt: str) -> None:
        if name:
            self.blocks.append(Block("img", alt, anchor=name))


def _fmt(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, float):
        return f"{v:,.4g}" if abs(v) < 1000 else f"{v:,.0f}"
    return str(v)


def to_html(doc: Doc) -> str:
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(doc.title)}"
             "</title><style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
             "table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:.85em}th,td{border:1px solid #ccc;"
             "padding:3px 7px;text-align:right}th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}"
             "caption{text-align:left;font-weight:bold;padding:.3em 0}img{max-width:100%;display:block;"
             "margin:.5em 0 1.5em}nav a{margin-right:1em}.wide{overflow-x:auto}.lead{font-size:1.1em;line-height:1.45;"
             "border-left:4px solid #4c78a8;padding:.3em .8em;margin:.6em 0;background:#f5f8fc}h1{margin-bottom:.2em}"
             "</style></head><body>",
             f"<h1>{html.escape(doc.title)}</h1>"]
    nav = [b for b in doc.blocks if b.kind == "h2"]
    parts.append("<nav>" + "".join(f"<a href=\"#{b.anchor}\">{html.escape(b.text)}</a>" for b in nav) + "</nav>")
    for b in doc.blocks:
        if b.kind == "h2":
            parts.append(f"<section id=\"{b.anchor}\"><h2>{html.escape(b.text)}</h2></section>")
        elif b.kind == "h3":
            parts.append(f"<h3>{html.escape(b.text)}</h3>")
        elif b.kind == "p":
            parts.append(f"<p>{html.escape(b.text)}</p>")
        elif b.kind == "lead":
            parts.append(f"<p class=\"lead\">{html.escape(b.text)}</p>")
        elif b.kind == "table":
            head = "".join(f"<th>{html.escape(str(c))}</th>" for c in b.frame.columns)
            body = "".join("<tr>" + "".join(f"<td>{html.escape(_fmt(v))}</td>" for v in row) + "</tr>"
                           for row in b.frame.itertuples(index=False))
            cap = f"<caption>{html.escape(b.text)}</caption>" if b.text else ""
            parts.append(f"<div class=\"wide\"><table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody>"
                         "</table></div>")
        elif b.kind == "img":
            parts.append(f"<img src=\"{html.escape(b.anchor)}\" alt=\"{html.escape(b.text)}\">")
    parts.append(f"<p><small>glmodel {__version__}</small></p></body></html>")
    return "\n".join(parts)


def to_markdown(doc: Doc) -> str:
    out = [f"# {doc.title}", ""]
    for b in doc.blocks:
        if b.kind == "h2":
            out += [f"## {b.text}", ""]
        elif b.kind == "h3":
            out += [f"### {b.text}", ""]
        elif b.kind == "p":
            out += [b.text, ""]
        elif b.kind == "lead":
            out += [f"> {b.text}", ""]
        elif b.kind == "table":
            cols = [str(c) for c in b.frame.columns]
            if b.text:
                out += [f"**{b.text}**", ""]
            out.append("| " + " | ".join(cols) + " |")
            out.append("|" + "|".join("---" for _ in cols) + "|")
            out += ["| " + " | ".join(_fmt(v).replace("|", "/") for v in row) + " |"
                    for row in b.frame.itertuples(index=False)]
            out.append("")
        elif b.kind == "img":
            out += [f"![{b.text}]({b.anchor})", ""]
    return "\n".join(out)
