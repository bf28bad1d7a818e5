"""What an instructor should look at in a student's code, besides whether it passed.

A check compares outputs; it cannot tell *how* an output was made. The graded run therefore
reads the student's code that can act on an exercise's checks — its exercise cell and the
cells the student added from the end of the previous exercise's checks to the end of its own —
and flags, per exercise:

- a use of the kit's reference implementation of any of the notebook's exercises (the names
  in each exercise's ``{"kit": {"reference": [...]}}`` metadata, read anywhere in the code;
  one exercise's cell may carry another's reference to it), reached under any
  name: the module that defines it imported (``import helpers.naive_bayes as m``), or its name
  in a string, written out or joined (``getattr(m, "Naive" + "Bayes")``, ``vars()["NaiveBayes"]``);
- a builtin redefined at the top level (``print = ...``, ``def open(...)``), or a library
  patched (``np.allclose = ...``), or an ``__eq__`` defined (an answer equal to anything);
- the kernel or the interpreter touched (``get_ipython``, ``IPython``, ``sys``, ``builtins``,
  ``globals``, ``vars``, ``locals``, ``exec``, ``eval``, ``compile``, ``setattr``), which is how
  input transformers and hooks that replay reference outputs are installed, and how names are
  reached without being written (``sys.modules``, ``vars()``);
- a module imported by a computed name (``importlib``, ``__import__``, ``pkgutil``, ``pickle``,
  ``attrgetter``), or an attribute read
  by one (``getattr(m, "inner_cv_" + "accuracy")``), which hides from the other flags what it
  reaches;
- the running program looked into (``inspect``, ``linecache``, ``gc``, ``ctypes``, or a
  frame's, a function's or a module's insides: ``f_back``, ``tb_frame``, ``__code__``,
  ``__dict__``, ``sys.modules``...), which is how code reaches what it does not name;
- the course tooling imported (``helpers.course``: grading, references), or a path into
  ``solutions/``, ``SOLUTIONS_DIR`` or a notebook file (the reference outputs and hidden
  checks live there);
- a decimal literal of three or more significant digits that equals a number printed by the
  exercise's checks and does not occur in the solution (an answer typed in, not computed).

These flags read the code the student handed in, outside the student's process: nothing the
student's code does at run time can switch them off. They are a reviewer's aid, not a proof:
code can always reach a module by a route no reading of it foresees; the hidden checks, run
in the grader on secret inputs, are what a wrong answer cannot pass. A flagged exercise is still graded; its
row carries the reasons. Code that cannot be parsed
is flagged as such. An added cell that is a copy of one of the notebook's own cells is not
the student's code.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
from decimal import Decimal
from pathlib import Path

from nbformat import NotebookNode

from helpers import syntax
from helpers.course.notebook.cells import exercise_id, exercises
from helpers.course.notebook.compare import tokens

BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_")) | {"__import__"}
KERNEL_NAMES = frozenset({"get_ipython", "IPython", "__builtins__", "builtins", "sys", "globals", "vars",
                          "locals", "exec", "eval", "compile", "setattr", "__dict__"})
COMPUTED_IMPORT = frozenset({"importlib", "__import__", "pkgutil", "pickle", "attrgetter"})
INTROSPECTION = frozenset({"inspect", "linecache", "gc", "ctypes", "dis", "marshal"})
FRAME_ATTRIBUTES = frozenset({"f_back", "f_globals", "f_locals", "f_code", "tb_frame", "gi_frame",
                              "cr_frame", "__code__", "__globals__", "__closure__", "co_consts",
                              "__subclasses__", "__dict__", "modules"})
SOLUTIONS_PATH = re.compile(r"(^|[/\\])solutions([/\\]|$)|\.ipynb\b|SOLUTIONS_DIR")
TOOLING = "helpers.course"
TYPED_DIGITS = 3  # significant digits from which a literal equal to an output looks typed in
#: The course library, whose modules define the reference implementations.
LIBRARY = Path(__file__).resolve().parents[2]


@functools.cache
def library_modules() -> dict[str, frozenset[str]]:
    """The course library's modules (``helpers.naive_bayes``) and the names each defines at
    its top level, read from their source (no module is imported)."""
    found = {}
    for path in sorted(LIBRARY.glob("*.py")):
        tree = syntax.parse(path.read_text(encoding="utf-8"))
        found[f"{LIBRARY.name}.{path.stem}"] = frozenset(_top_level_bindings(tree))
    return found


def reference_modules(reference: frozenset[str]) -> frozenset[str]:
    """The course library's modules that define one of the ``reference`` names."""
    return frozenset(module for module, names in library_modules().items() if names & reference)


def reference_names(cell: NotebookNode) -> frozenset[str]:
    """The names an exercise declares as the kit's reference implementation (``kit.reference``)."""
    return frozenset(cell.get("metadata", {}).get("kit", {}).get("reference", []))


def _top_level_bindings(tree: ast.Module) -> list[str]:
    """Names the cell binds at its top level: assignments, defs, classes, import aliases."""
    names = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names += [alias.asname or alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [t.id for target in targets for t in ast.walk(target) if isinstance(t, ast.Name)]
    return names


def _read_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """Bare names read and modules imported (dotted parts too); and attributes read."""
    names: set[str] = set()
    attributes: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            attributes.add(node.attr)
        elif isinstance(node, ast.Import):
            names |= {part for alias in node.names for part in (alias.name, *alias.name.split("."))}
        elif isinstance(node, ast.ImportFrom):
            names |= {alias.name for alias in node.names}
            if node.module:
                names |= {node.module, *node.module.split(".")}
    return names, attributes


def _imported_modules(tree: ast.Module) -> set[str]:
    """The dotted names of the modules the code binds by importing them (``import helpers.x as
    m``; ``from helpers import x`` binds ``helpers.x``), not those it takes a name from."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def _named_in_strings(tree: ast.Module, names: frozenset[str]) -> set[str]:
    """Which of ``names`` the code's string values hold, as whole words (a docstring, or any
    string standing alone as a statement, is no value the code can use)."""
    alone = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    texts = [node.value for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in alone]
    texts += [text for node in ast.walk(tree) if isinstance(node, ast.BinOp) and (text := _joined(node))]
    return {name for name in names for text in texts if re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text)}


def _computed_getattr(tree: ast.Module) -> bool:
    """Whether the code calls ``getattr`` with a name that is not written out as a string."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
               and (len(node.args) < 2 or not isinstance(node.args[1], ast.Constant))
               for node in ast.walk(tree))


def _joined(node: ast.AST) -> str:
    """The text that string constants joined with ``+`` make (``"Naive" + "Bayes"``), else ""."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _joined(node.left), _joined(node.right)
        return left + right if left and right else ""
    return ""


def _bound_anywhere(tree: ast.Module) -> set[str]:
    """Every name the code binds, at any depth (variables, arguments, defs, import aliases)."""
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add(node.asname or node.name.split(".")[0])
    return bound


def _imported(tree: ast.Module) -> set[str]:
    """The names the code's imports bind (``np`` in ``import numpy as np``)."""
    return {alias.asname or alias.name.split(".")[0] for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom) for alias in node.names}


def _patched(tree: ast.Module) -> list[str]:
    """Attributes assigned on objects the code did not create (``np.allclose = ...``): a
    module it imports is not its own."""
    own = _bound_anywhere(tree) - _imported(tree)
    patched = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id not in own:
                patched.append(f"{ast.unparse(node.value)}.{node.attr}")
    return patched


def _significant(value: Decimal) -> int:
    return len(value.normalize().as_tuple().digits)


def _decimals(text: str) -> set[Decimal]:
    return {Decimal(t.text) for line in text.splitlines() for t in tokens(line)
            if t.kind == "number" and "." in t.text}


def _literals(tree: ast.AST) -> set[Decimal]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, float):
            found.add(Decimal(repr(node.value)))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and \
                isinstance(node.operand, ast.Constant) and isinstance(node.operand.value, float):
            found.add(-Decimal(repr(node.operand.value)))
    return found


def code_flags(code: str, reference: frozenset[str] = frozenset(), printed: str = "",
               solution: str = "") -> list[str]:
    """Flag one piece of student code (see the module docstring); one reason per flag.

    Parameters
    ----------
    code : str
        The student's code.
    reference : frozenset of str
        Names of the kit's reference implementation of this exercise.
    printed : str
        What the exercise's checks print in the reference (for typed-in answers).
    solution : str
        The solution's code: literals it uses are not flagged.

    Returns
    -------
    list of str
        Sorted, without repeats; empty when nothing needs a look.
    """
    try:
        tree = syntax.parse(code)
    except syntax.UNPARSABLE:
        return ["code that cannot be parsed"]
    flags = set()
    own = set(_top_level_bindings(tree))
    for name in sorted(own & BUILTINS):
        flags.add(f"redefines the builtin {name}")
    names, attributes = _read_names(tree)
    for name in sorted((names | attributes) & reference):
        flags.add(f"uses the kit's reference implementation ({name})")
    for module in sorted(_imported_modules(tree) & reference_modules(reference)):
        flags.add(f"imports the module of the kit's reference implementation ({module})")
    for name in sorted(_named_in_strings(tree, reference | reference_modules(reference))):
        flags.add(f"names the kit's reference implementation in a string ({name})")
    if any(name == TOOLING or name.startswith(f"{TOOLING}.") for name in names) \
            or _named_in_strings(tree, frozenset({TOOLING})):
        flags.add(f"uses the course tooling ({TOOLING})")
    if names & KERNEL_NAMES:
        flags.add(f"touches the kernel or interpreter ({', '.join(sorted(names & KERNEL_NAMES))})")
    if names & COMPUTED_IMPORT:
        flags.add(f"imports by a computed name ({', '.join(sorted(names & COMPUTED_IMPORT))})")
    if _computed_getattr(tree):
        flags.add("reads an attribute by a computed name (getattr)")
    looked = (names & INTROSPECTION) | (attributes & FRAME_ATTRIBUTES)
    if looked:
        flags.add(f"looks into the running program ({', '.join(sorted(looked))})")
    for target in _patched(tree):
        flags.add(f"patches {target}")
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "__eq__":
            flags.add("defines __eq__ (an answer that can equal anything)")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                SOLUTIONS_PATH.search(node.value):
            flags.add("reads the solutions or a notebook file")
    solution_literals = _literals(syntax.parse(solution)) if solution else set()
    for value in sorted(_literals(tree) & _decimals(printed) - solution_literals):
        if _significant(value) >= TYPED_DIGITS:
            flags.add(f"a literal that equals a reference output ({value})")
    return sorted(flags)


def exercise_flags(graded: NotebookNode, reference: NotebookNode, solution: NotebookNode,
                   student_cells: set[str]) -> dict[str, list[str]]:
    """Flags per exercise of one graded notebook.

    Parameters
    ----------
    graded : NotebookNode
        The notebook that was run (reference cells, the student's exercise and added cells).
    reference : NotebookNode
        The graded reference (for the checks' printed outputs).
    solution : NotebookNode
        The instructor's notebook (for the reference names and the solution's literals).
    student_cells : set of str
        Ids of the cells in ``graded`` whose code is the student's.

    Returns
    -------
    dict
        Exercise id -> reasons (``"cell <id>: ..."``), for every exercise.
    """
    solutions = {exercise_id(c): c for c in solution.cells if exercise_id(c)}
    # every exercise's references, for each exercise: one reached in another's cell is still one
    every_reference = frozenset().union(*(reference_names(c) for c in solutions.values()))
    outputs = {c.id: "".join(o.get("text", "") for o in c.get("outputs", []) if o.get("name") == "stdout")
               for c in reference.cells if c.cell_type == "code"}
    copies = {c.source for c in reference.cells if c.cell_type == "code" and not exercise_id(c)}
    items = exercises(reference)
    found: dict[str, list[str]] = {ex.id: [] for ex in items}
    ends = {ex.cell_ids[-1]: ex for ex in items}
    pending: list[NotebookNode] = []
    for cell in graded.cells:
        if cell.cell_type == "code" and cell.id in student_cells and cell.source not in copies:
            pending.append(cell)
        ex = ends.get(cell.id)
        if ex is None:
            continue
        model = solutions.get(ex.id)
        printed = "".join(outputs.get(cell_id, "") for cell_id in ex.cell_ids)
        for student in pending:
            for reason in code_flags(student.source, every_reference, printed, model.source if model else ""):
                found[ex.id].append(f"cell {student.id}: {reason}")
        pending = []
    return found
