"""Reference tables generated from the code when the documentation is built.

Directives (used in the Markdown pages as fenced blocks, e.g. ```` ```{technique-catalogue} ````):

* ``parameter-types``: every concrete parameter class of :mod:`tunerlib.parameters` (those with a
  JSON ``kind``): constructor, kind, description (the docstring's first sentence).
* ``technique-catalogue``: every listed name of the technique catalogue with its one-line
  description and its options (type, default, legal range or choices).
* ``cli-reference``: every command of ``tunerlib`` and every option of a tuner script
  (:class:`tunerlib.TuningOptions`), from their argparse parsers.

Each directive writes Markdown that the page's parser (MyST) reads, so the tables look like the
hand-written ones.
"""
from __future__ import annotations

import argparse
import dataclasses
import inspect
import re
from typing import Any, Iterable, List, Sequence

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective


def cell(text: Any) -> str:
    """One Markdown table cell: no line breaks, ``|`` escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def code(text: Any) -> str:
    """Inline code that survives a table cell (backticks inside are doubled around)."""
    text = cell(text)
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> List[str]:
    """A Markdown pipe table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines + [""]


def first_sentence(doc: str | None) -> str:
    """The first sentence (or line) of a docstring, reST roles made plain."""
    text = " ".join(inspect.cleandoc(doc or "").split("\n\n")[0].split())
    text = re.sub(r":\w+:`~?([^`]+)`", r"``\1``", text)
    match = re.match(r"(.+?[.])(\s|$)", text)
    return (match.group(1) if match else text).replace("``", "`")


# ---- parameter types ------------------------------------------------------------------------------
def parameter_classes() -> List[type]:
    """The concrete parameter classes of ``tunerlib.parameters.__all__`` (those with a JSON kind)."""
    import tunerlib.parameters as P
    found = [getattr(P, n) for n in P.__all__]
    return [c for c in found if inspect.isclass(c) and issubclass(c, P.Parameter) and getattr(c, "kind", "")]


def parameter_lines() -> List[str]:
    rows = []
    for cls in parameter_classes():
        params = list(inspect.signature(cls.__init__).parameters.values())[1:]
        args = ", ".join(p.name if p.default is inspect.Parameter.empty else f"{p.name}={p.default!r}"
                         for p in params)
        rows.append([f"{{py:class}}`~tunerlib.parameters.{cls.__name__}`", code(f"{cls.__name__}({args})"),
                     code(cls.kind), first_sentence(cls.__doc__)])
    return table(["class", "constructor", "JSON kind", "values"], rows)


# ---- technique catalogue --------------------------------------------------------------------------
def _bound(value: Any) -> str:
    return "" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def option_text(option: Any) -> str:
    """``name`` (type) = default, range or choices."""
    kind = getattr(option.type, "__name__", str(option.type))
    text = f"`{option.name}` ({kind}) = `{option.default!r}`"
    if option.choices:
        text += " of " + ", ".join(f"`{c!r}`" for c in option.choices)
    elif option.lo is not None or option.hi is not None:
        text += f" in [{_bound(option.lo) or '-inf'}, {_bound(option.hi) or 'inf'}]"
    if option.optional and option.default is not None:
        text += " or None"
    return text


def technique_lines() -> List[str]:
    """A summary table of every listed name, then one section per technique that takes options."""
    from tunerlib.techniques import registry
    catalogue = registry()
    aliases = {name: group for group in catalogue.aliases() for name in group}
    rows, sections = [], []
    for name, description in catalogue.describe():
        presets = catalogue.presets(name)
        options = [dataclasses.replace(o, default=presets.get(o.name, o.default)) for o in catalogue.options(name)]
        same = [a for a in aliases.get(name, ()) if a != name]
        note = f" Same technique as {', '.join(f'`{a}`' for a in same)}." if same else ""
        label = "technique-" + re.sub(r"[^a-z0-9]+", "-", name.lower())
        listed = ", ".join(o.name for o in options) if len(options) <= 3 else f"{len(options)} options"
        shown = f"{{ref}}`{listed} <{label}>`" if options else "none"
        rows.append([f"`{name}`", cell(description) + note, shown])
        if options:
            sections += [f"({label})=", f"### `{name}`", "", cell(description) + note, ""]
            sections += [f"- {option_text(o)}" + (f": {cell(o.doc)}" if o.doc else "") for o in options] + [""]
    return table(["name", "what it is", "options"], rows) + ["## Options", ""] + sections


# ---- command line ---------------------------------------------------------------------------------
def _option_rows(parser: argparse.ArgumentParser) -> List[List[str]]:
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        if action.option_strings:
            words = ", ".join(action.option_strings)
            if action.nargs != 0:
                metavar = action.metavar or (action.dest.upper() if not action.choices else
                                             "{" + ",".join(map(str, action.choices)) + "}")
                words += f" [{metavar}]" if action.nargs == "?" else f" {metavar}" + (
                    " ..." if action.nargs in ("+", "*") else "")
        else:
            words = action.metavar or action.dest
        help_text = (action.help or "").replace("%%", "%")
        rows.append([code(words), cell(help_text)])
    return rows


def cli_lines() -> List[str]:
    from tunerlib.cli import build_parser
    from tunerlib.options import TuningOptions
    parser = build_parser()
    lines = ["### Tuner scripts", "",
             "Every tuner script (`python my_tuner.py ...`) takes these options, and the ones its "
             "`TuningOptions` subclass adds.", ""]
    lines += table(["option", "meaning"], _option_rows(TuningOptions.parser(prog="my_tuner.py")))
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {choice.dest: choice.help for choice in sub._choices_actions}
    for name, command in sorted(sub.choices.items()):
        lines += [f"### `tunerlib {name}`", "", cell(helps.get(name) or command.description or ""), ""]
        lines += [code(command.format_usage().replace("usage: ", "").strip()), ""]
        rows = _option_rows(command)
        nested = [a for a in command._actions if isinstance(a, argparse._SubParsersAction)]
        for group in nested:
            for sub_name, sub_command in sorted(group.choices.items()):
                rows += [[code(f"{sub_name} {words.strip('`')}"), text] for words, text in _option_rows(sub_command)]
                if not _option_rows(sub_command):
                    rows.append([code(sub_name), ""])
        if rows:
            lines += table(["argument", "meaning"], rows)
    return lines


# ---- directives -----------------------------------------------------------------------------------
class _Generated(SphinxDirective):
    has_content = False

    def lines(self) -> List[str]:
        raise NotImplementedError

    def run(self) -> List[nodes.Node]:
        container = nodes.container()
        self.state.nested_parse(StringList(self.lines(), source="generated"), self.content_offset, container)
        return container.children


class ParameterTypes(_Generated):
    def lines(self) -> List[str]:
        return parameter_lines()


class TechniqueCatalogue(_Generated):
    def lines(self) -> List[str]:
        return technique_lines()


class CliReference(_Generated):
    def lines(self) -> List[str]:
        return cli_lines()


DIRECTIVES = {"parameter-types": ParameterTypes, "technique-catalogue": TechniqueCatalogue,
              "cli-reference": CliReference}


def generated_pages(app: Any, env: Any, added: Any, changed: Any, removed: Any) -> List[str]:
    """Pages that use a directive of this module: always read again, since the code they are
    generated from may have changed while their Markdown source did not."""
    marks = tuple("{" + name + "}" for name in DIRECTIVES)
    found = []
    for docname in env.found_docs:
        path = env.doc2path(docname)
        try:
            text = open(path, encoding="utf-8").read()
        except OSError:
            continue
        if any(mark in text for mark in marks):
            found.append(docname)
    return found


def setup(app: Any) -> dict:
    for name, directive in DIRECTIVES.items():
        app.add_directive(name, directive)
    app.connect("env-get-outdated", generated_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
