"""Render benchkill's argparse help texts as the terminal shows them.

sphinx-argparse parses every description, epilog and option help as reStructuredText.
benchkill's help is written for a terminal (:class:`benchkill.cli.main.HelpFormatter`):
plain paragraphs, and indented lines (examples, tables) kept as written, with characters
such as ``*`` in ``results/*.json`` meant literally.  Parsed as reStructuredText those
become broken emphasis and "unexpected indentation" errors.  This extension renders a
paragraph as plain text and a block with indented lines as a literal block (the rule
HelpFormatter itself applies), and the ``Default: ...`` and ``Possible choices: ...`` lines
sphinx-argparse adds as code, so the reference reads like ``benchkill COMMAND --help``.
"""

from __future__ import annotations

import re
import textwrap

from docutils import nodes
from sphinxarg import ext

_DEFAULT = re.compile(r"^Default: ``(.*)``$", re.S)


def _kept_as_written(block: str) -> bool:
    lines = block.splitlines()
    return block.startswith(" ") or any(line.startswith(" ") for line in lines[1:])


def terminal_nodes(text: str) -> list[nodes.Node]:
    """Docutils nodes for one help text: paragraphs, and literal blocks for indented ones."""
    default = _DEFAULT.match(text.strip())
    if default:
        value = default.group(1).replace(r"\`", "`")
        return [nodes.paragraph("", "", nodes.Text("Default: "), nodes.literal(value, value))]
    if text.startswith("Possible choices: "):
        choices = text.strip()[len("Possible choices: ") :]
        return [nodes.paragraph("", "", nodes.Text("Choices: "), nodes.literal(choices, choices))]
    out: list[nodes.Node] = []
    for block in re.split(r"\n\s*\n", text.strip("\n")):
        if not block.strip():
            continue
        if _kept_as_written(block):
            literal = nodes.literal_block(text=textwrap.dedent(block).rstrip())
            literal["language"] = "text"  # terminal text, not code to highlight
            out.append(literal)
        else:
            out.append(nodes.paragraph(text=" ".join(block.split())))
    return out


def render_list(elements, markdown_help, settings=None):  # noqa: ARG001 (the replaced signature)
    out: list[nodes.Node] = []
    for element in elements:
        if isinstance(element, str):
            out += terminal_nodes(element)
        else:  # a definition node from the directive's nested content
            out += element
    return out


def _nested_parse_paragraph(self, text):  # noqa: ARG001
    container = nodes.container()
    container += terminal_nodes(text)
    return container


def setup(app):
    ext.render_list = render_list
    ext.ArgParseDirective._nested_parse_paragraph = _nested_parse_paragraph
    return {"parallel_read_safe": True, "parallel_write_safe": True}
