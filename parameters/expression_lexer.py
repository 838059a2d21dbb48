"""The tokenizer of the constraint expression language, and :class:`ConstraintError`.

:func:`_tokenize` turns an expression string into tokens (numbers, strings, names -- identifiers or
any name between backticks --, keywords, operators); a character or word outside the language is
refused with a one-line :class:`ConstraintError` that names its column (:func:`_fail`) and says what
to write instead.  The parser (:mod:`.expression_parser`) reads the tokens; the language and its error
policy are described in :mod:`.expression`.
"""
from __future__ import annotations

import keyword
import re
from typing import Any, List


class ConstraintError(ValueError):
    """A constraint is malformed or failed to evaluate (message is one line and names the fix)."""


# --------------------------------------------------------------------------- tokenizer
_NUMBER = re.compile(r"([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][+-]?[0-9]+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPERATORS = ("**", "//", "<=", ">=", "==", "!=", "+", "-", "*", "/", "%", "<", ">", "(", ")",
              "[", "]", ",")
_KEYWORDS = {"and", "or", "not", "in", "True", "False"}
_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t"}
_BAD_CHARS = {
    "=": ("'=' is assignment", "compare with '=='"),
    "!": ("'!' is not an operator", "use 'not' or '!='"),
    "&": ("bitwise/C operators are not supported", "use 'and'"),
    "|": ("bitwise/C operators are not supported", "use 'or'"),
    "^": ("bitwise operators are not supported", "use '**' for powers"),
    "~": ("bitwise operators are not supported", "use 'not' or '-'"),
    ".": ("attribute access is not allowed", "constraints may only read parameters by name"),
    "{": ("sets and dicts are not supported", "use a list literal [a, b]"),
    "}": ("sets and dicts are not supported", "use a list literal [a, b]"),
}


class _Tok:
    __slots__ = ("kind", "value", "pos")

    def __init__(self, kind: str, value: Any, pos: int) -> None:
        self.kind, self.value, self.pos = kind, value, pos  # kind: NUM STR NAME KW OP END


def _fail(text: str, pos: int, problem: str, hint: str) -> ConstraintError:
    shown = text if len(text) <= 80 else text[:77] + "..."
    return ConstraintError(f"constraint {shown!r}: {problem} at column {pos + 1}; {hint}")


def _tokenize(text: str) -> List[_Tok]:
    toks: List[_Tok] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        if _NUMBER.match(text, i):
            i = _read_number(text, i, toks)
        elif _NAME.match(text, i):
            i = _read_name(text, i, toks)
        elif ch in "'\"":
            i = _read_string(text, i, toks)
        elif ch == "`":
            end = text.find("`", i + 1)
            if end < 0 or end == i + 1:
                raise _fail(text, i, "unterminated or empty `quoted name`", "close it with a backtick")
            _check_name(text, i, text[i + 1:end])
            toks.append(_Tok("NAME", text[i + 1:end], i))
            i = end + 1
        else:
            op = next((o for o in _OPERATORS if text.startswith(o, i)), None)
            if op is None:
                problem, hint = _BAD_CHARS.get(ch, (f"unexpected character {ch!r}",
                                                    "see the operator list in tunerlib.parameters.constraints"))
                raise _fail(text, i, problem, hint)
            toks.append(_Tok("OP", op, i))
            i += len(op)
    toks.append(_Tok("END", None, n))
    return toks


def _read_number(text: str, i: int, toks: List[_Tok]) -> int:
    m = _NUMBER.match(text, i)
    assert m is not None
    lit, end = m.group(0), m.end()
    if end < len(text) and (text[end].isalnum() or text[end] == "_"):
        raise _fail(text, i, f"malformed number starting {text[i:end + 1]!r}",
                    "write decimal numbers like 8, 0.5 or 1e3")
    is_int = m.group(1).isdigit() and not m.group(2)
    if is_int and len(lit) > 1 and lit[0] == "0" and lit.strip("0"):
        raise _fail(text, i, f"leading zeros in {lit!r}", "write the number without leading zeros")
    toks.append(_Tok("NUM", int(lit) if is_int else float(lit), i))
    return end


def _check_name(text: str, pos: int, name: str) -> None:
    if name.startswith("__"):
        raise _fail(text, pos, f"name {name!r} starts with '__'", "dunder names are not allowed")


def _read_name(text: str, i: int, toks: List[_Tok]) -> int:
    m = _NAME.match(text, i)
    assert m is not None
    word = m.group(0)
    if word in _KEYWORDS:
        toks.append(_Tok("KW", word, i))
    elif keyword.iskeyword(word):
        hint = "use '==' or '!='" if word == "is" else "only and/or/not/in/True/False are supported"
        raise _fail(text, i, f"'{word}' is not supported in constraints", hint)
    else:
        _check_name(text, i, word)
        toks.append(_Tok("NAME", word, i))
    return m.end()


def _read_string(text: str, i: int, toks: List[_Tok]) -> int:
    quote, j, out = text[i], i + 1, []
    while j < len(text) and text[j] != quote:
        if text[j] == "\n":
            break
        if text[j] == "\\":
            esc = text[j + 1] if j + 1 < len(text) else ""
            if esc not in _ESCAPES:
                what = f"'\\{esc}'" if esc.isprintable() else f"(a backslash before {esc!r})"
                raise _fail(text, j, f"unsupported escape {what}", "use \\\\, \\', \\\", \\n or \\t")
            out.append(_ESCAPES[esc])
            j += 2
            continue
        out.append(text[j])
        j += 1
    if j >= len(text) or text[j] != quote:
        raise _fail(text, i, "unterminated string", f"close it with {quote}")
    toks.append(_Tok("STR", "".join(out), i))
    return j + 1
