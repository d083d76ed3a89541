"""A sound subset of CEL for CRD ``x-kubernetes-validations`` rules, evaluated offline.

Supported: literals (integers, doubles, strings in single or double quotes, ``true``, ``false``, ``null``, lists),
``self`` and ``oldSelf``, field selection (``self.a.b``), indexing (``self.a[0]``, ``self.m['k']``), ``has(x.f)``,
``size(x)`` / ``x.size()``, ``x.startsWith(s)``, ``x.endsWith(s)``, ``x.contains(s)``, ``in``, the operators
``! - * / % + < <= > >= == != && || ?:`` with CEL's precedence, and CEL's commutative ``&&``/``||`` (an error on
one side is absorbed when the other side decides).  Everything else (macros such as ``all``/``exists``,
``matches``, quantities, other functions, message expressions) raises :class:`Unsupported`: the caller reports
"cannot verify", never "passed".  A runtime error (a missing field, a type mismatch) raises :class:`EvalError`.

Semantics follow the CEL language definition (github.com/google/cel-spec doc/langdef.md) and the Kubernetes
rules of ``x-kubernetes-validations`` (k8s.io/apiextensions-apiserver ``pkg/apiserver/schema/cel``): ``self``
is the value of the schema node the rule sits on; a rule that names ``oldSelf`` is a transition rule, evaluated
only on an update where the old object has the node too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


class Unsupported(Exception):
    """The rule uses CEL beyond the supported subset."""


class EvalError(Exception):
    """The rule cannot be evaluated on this value (CEL runtime error: no such key, wrong type)."""


_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<num>\d+\.\d+(?:[eE][+-]?\d+)?|\d+[uU]?)
  | (?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>&&|\|\||==|!=|<=|>=|[-+*/%<>!?:.,()\[\]{}])
""", re.VERBOSE)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"'}
_RESERVED = {"in"}


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    at = 0
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None:
            raise Unsupported(f"cannot read {text[at:at + 10]!r}")
        at = match.end()
        kind = match.lastgroup or ""
        if kind != "ws":
            out.append((kind, match.group()))
    out.append(("end", ""))
    return out


Node = tuple[Any, ...]


class _Parser:
    """Recursive descent over CEL's grammar (langdef.md "Syntax")."""

    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.at = 0

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.at]

    def take(self, value: str | None = None) -> tuple[str, str]:
        token = self.tokens[self.at]
        if value is not None and token[1] != value:
            raise Unsupported(f"expected {value!r}, found {token[1] or 'the end'!r}")
        self.at += 1
        return token

    def parse(self) -> Node:
        node = self.expr()
        if self.peek()[0] != "end":
            raise Unsupported(f"unexpected {self.peek()[1]!r}")
        return node

    def expr(self) -> Node:
        cond = self.or_()
        if self.peek()[1] == "?":
            self.take("?")
            yes = self.or_()
            self.take(":")
            no = self.expr()
            return ("cond", cond, yes, no)
        return cond

    def or_(self) -> Node:
        node = self.and_()
        while self.peek()[1] == "||":
            self.take()
            node = ("or", node, self.and_())
        return node

    def and_(self) -> Node:
        node = self.relation()
        while self.peek()[1] == "&&":
            self.take()
            node = ("and", node, self.relation())
        return node

    def relation(self) -> Node:
        node = self.addition()
        while self.peek()[1] in ("==", "!=", "<", "<=", ">", ">=", "in"):
            op = self.take()[1]
            node = ("bin", op, node, self.addition())
        return node

    def addition(self) -> Node:
        node = self.multiplication()
        while self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            node = ("bin", op, node, self.multiplication())
        return node

    def multiplication(self) -> Node:
        node = self.unary()
        while self.peek()[1] in ("*", "/", "%"):
            op = self.take()[1]
            node = ("bin", op, node, self.unary())
        return node

    def unary(self) -> Node:
        if self.peek()[1] == "!":
            self.take()
            return ("not", self.unary())
        if self.peek()[1] == "-":
            self.take()
            return ("neg", self.unary())
        return self.member()

    def member(self) -> Node:
        node = self.primary()
        while True:
            value = self.peek()[1]
            if value == ".":
                self.take()
                kind, name = self.take()
                if kind != "id":
                    raise Unsupported(f"expected a field name after '.', found {name!r}")
                node = ("call", name, node, self.arguments()) if self.peek()[1] == "(" else ("field", node, name)
            elif value == "[":
                self.take()
                index = self.expr()
                self.take("]")
                node = ("index", node, index)
            else:
                return node

    def arguments(self) -> list[Node]:
        self.take("(")
        args: list[Node] = []
        while self.peek()[1] != ")":
            args.append(self.expr())
            if self.peek()[1] != ",":
                break
            self.take(",")
        self.take(")")
        return args

    def primary(self) -> Node:
        kind, value = self.take()
        if kind == "num":
            if value[-1] in "uU":
                raise Unsupported("unsigned integers")
            return ("lit", float(value) if "." in value else int(value))
        if kind == "str":
            return ("lit", re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), value[1:-1]))
        if kind == "id":
            if value in ("true", "false"):
                return ("lit", value == "true")
            if value == "null":
                return ("lit", None)
            if value in _RESERVED:
                raise Unsupported(f"unexpected {value!r}")
            if self.peek()[1] == "(":
                return ("call", value, None, self.arguments())
            return ("var", value)
        if value == "(":
            node = self.expr()
            self.take(")")
            return node
        if value == "[":
            items: list[Node] = []
            while self.peek()[1] != "]":
                items.append(self.expr())
                if self.peek()[1] != ",":
                    break
                self.take(",")
            self.take("]")
            return ("list", items)
        raise Unsupported(f"unexpected {value or 'end'!r}")


@dataclass(frozen=True)
class Rule:
    """A parsed validation rule; :meth:`evaluate` gives its result for ``self`` (and ``oldSelf``)."""

    text: str
    tree: Node

    @property
    def transition(self) -> bool:
        """True when the rule names ``oldSelf`` (it then runs only on updates)."""
        return _names_old(self.tree)

    def evaluate(self, self_value: Any, old_value: Any = None) -> bool:
        """The rule's result; :class:`EvalError` for a CEL runtime error, :class:`Unsupported` beyond the subset."""
        result = _eval(self.tree, {"self": self_value, "oldSelf": old_value})
        if not isinstance(result, bool):
            raise EvalError(f"the rule gives {_type(result)}, not bool")
        return result


def parse(text: str) -> Rule:
    """Parse a rule; :class:`Unsupported` when it uses CEL beyond the subset."""
    return Rule(text, _Parser(text).parse())


def _names_old(node: Any) -> bool:
    if isinstance(node, tuple):
        if node[:2] == ("var", "oldSelf"):
            return True
        return any(_names_old(part) for part in node)
    if isinstance(node, list):
        return any(_names_old(part) for part in node)
    return False


def _type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, Mapping):
        return "map"
    return type(value).__name__


def _equal(a: Any, b: Any) -> bool:
    """CEL equality: values of different types are unequal (numbers compare by value), lists and maps deeply."""
    ta, tb = _type(a), _type(b)
    if ta != tb and not {ta, tb} <= {"int", "double"}:
        return False
    if ta == "list":
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if ta == "map":
        return set(a) == set(b) and all(_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise EvalError(f"expected bool, got {_type(value)}")
    return value


def _logic(node: Node, env: Mapping[str, Any], decides: bool) -> bool:
    """``&&`` (decides=False) and ``||`` (decides=True) with CEL's error absorption."""
    error: EvalError | None = None
    for side in node[1:]:
        try:
            if _bool(_eval(side, env)) is decides:
                return decides
        except EvalError as exc:
            error = exc
    if error is not None:
        raise error
    return not decides


def _select(value: Any, name: str) -> Any:
    if not isinstance(value, Mapping):
        raise EvalError(f"cannot select {name!r} from {_type(value)}")
    if name not in value:
        raise EvalError(f"no such key: {name}")
    return value[name]


def _has(arg: Node, env: Mapping[str, Any]) -> bool:
    if arg[0] != "field":
        raise Unsupported("has() needs a field selection")
    target = _eval(arg[1], env)
    if not isinstance(target, Mapping):
        raise EvalError(f"has() on {_type(target)}")
    return arg[2] in target


def _size(value: Any) -> int:
    if isinstance(value, (str, list, Mapping)):
        return len(value)
    raise EvalError(f"size() of {_type(value)}")


_STRING_METHODS: dict[str, Callable[[str, str], bool]] = {
    "startsWith": str.startswith, "endsWith": str.endswith, "contains": str.__contains__,
}


def _call(node: Node, env: Mapping[str, Any]) -> Any:
    _, name, target, args = node
    if target is None and name == "has" and len(args) == 1:
        return _has(args[0], env)
    if name == "size" and ((target is None and len(args) == 1) or (target is not None and not args)):
        return _size(_eval(args[0] if target is None else target, env))
    if target is not None and name in _STRING_METHODS and len(args) == 1:
        subject, other = _eval(target, env), _eval(args[0], env)
        if not isinstance(subject, str) or not isinstance(other, str):
            raise EvalError(f"{name}() needs strings")
        return _STRING_METHODS[name](subject, other)
    raise Unsupported(f"function {name}()")


def _arith(op: str, a: Any, b: Any) -> Any:
    ta, tb = _type(a), _type(b)
    if op == "+" and ta == tb and ta in ("string", "list"):
        return a + b
    if ta != tb or ta not in ("int", "double"):
        raise EvalError(f"no such overload: {ta} {op} {tb}")
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if b == 0 and ta == "int":
        raise EvalError("division by zero")
    if op == "/":
        return int(a / b) if ta == "int" else a / b
    if ta == "int":
        return int(a - b * int(a / b))  # CEL's % truncates toward zero, as Go does
    raise EvalError("no such overload: double % double")


def _compare(op: str, a: Any, b: Any) -> bool:
    ta, tb = _type(a), _type(b)
    if not (ta == tb and ta in ("int", "double", "string", "bool")) and not {ta, tb} <= {"int", "double"}:
        raise EvalError(f"no such overload: {ta} {op} {tb}")
    return bool({"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op])


def _eval(node: Node, env: Mapping[str, Any]) -> Any:
    kind = node[0]
    if kind == "lit":
        return node[1]
    if kind == "var":
        if node[1] not in env:
            raise Unsupported(f"variable {node[1]}")
        return env[node[1]]
    if kind == "list":
        return [_eval(item, env) for item in node[1]]
    if kind == "field":
        return _select(_eval(node[1], env), node[2])
    if kind == "index":
        target, key = _eval(node[1], env), _eval(node[2], env)
        if isinstance(target, list) and isinstance(key, int) and not isinstance(key, bool):
            if not 0 <= key < len(target):
                raise EvalError("index out of range")
            return target[key]
        if isinstance(target, Mapping):
            if key not in target:
                raise EvalError(f"no such key: {key}")
            return target[key]
        raise EvalError(f"cannot index {_type(target)}")
    if kind == "call":
        return _call(node, env)
    if kind == "not":
        return not _bool(_eval(node[1], env))
    if kind == "neg":
        value = _eval(node[1], env)
        if _type(value) not in ("int", "double"):
            raise EvalError(f"no such overload: -{_type(value)}")
        return -value
    if kind == "and":
        return _logic(node, env, decides=False)
    if kind == "or":
        return _logic(node, env, decides=True)
    if kind == "cond":
        return _eval(node[2] if _bool(_eval(node[1], env)) else node[3], env)
    if kind == "bin":
        op, a, b = node[1], _eval(node[2], env), _eval(node[3], env)
        if op == "==":
            return _equal(a, b)
        if op == "!=":
            return not _equal(a, b)
        if op == "in":
            if isinstance(b, list):
                return any(_equal(a, item) for item in b)
            if isinstance(b, Mapping):
                return a in b
            raise EvalError(f"no such overload: in {_type(b)}")
        if op in ("<", "<=", ">", ">="):
            return _compare(op, a, b)
        return _arith(op, a, b)
    raise Unsupported(kind)
