"""What an instructor should look at in a student's code, besides whether it passed.

A check compares outputs; it cannot tell *how* an output was made. The graded run therefore
reads the student's code (the exercise cell and every cell the student added before it) and
flags, per exercise:

- a call or import of the kit's reference implementation of that exercise (the names in the
  exercise's ``{"kit": {"reference": [...]}}`` metadata);
- a builtin redefined (``print = ...``, ``def open(...)``, ``import x as __import__``);
- the kernel touched (``get_ipython``, ``IPython``, ``__builtins__``, ``sys.modules``), which
  is how input transformers and hooks that replay reference outputs are installed;
- a path into ``solutions/`` (the reference outputs live there);
- a decimal literal that equals a number printed by the exercise's checks and does not
  occur in the solution (an answer typed in, not computed).

A flagged exercise is still graded; its row carries the reasons. Code that cannot be parsed
is flagged as such (it cannot be read for the rest).
"""

from __future__ import annotations

import ast
import builtins
import re
from decimal import Decimal, InvalidOperation

from nbformat import NotebookNode

from helpers.course.compare import tokens
from helpers.course.release import exercise_id, exercises

BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_")) | {"__import__"}
KERNEL_NAMES = frozenset({"get_ipython", "IPython", "__builtins__", "builtins"})
SOLUTIONS_PATH = re.compile(r"(^|[/\\])solutions([/\\]|$)")


def reference_names(cell: NotebookNode) -> frozenset[str]:
    """The names an exercise declares as the kit's reference implementation (``kit.reference``)."""
    return frozenset(cell.get("metadata", {}).get("kit", {}).get("reference", []))


def _bound_names(node: ast.AST) -> list[str]:
    """Names a statement binds: assignment targets, def/class names, import aliases."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
        return [node.id]
    if isinstance(node, ast.alias):
        return [node.asname or node.name.split(".")[0]]
    return []


def _used_names(node: ast.AST) -> list[str]:
    """Dotted names a node reads or imports (``helpers.naive_bayes``, ``NaiveBayes``)."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.alias):
        return [node.name, *node.name.split(".")]
    if isinstance(node, ast.ImportFrom) and node.module:
        return [node.module, *node.module.split(".")]
    return []


def _decimals(text: str) -> set[Decimal]:
    return {Decimal(t.text) for line in text.splitlines() for t in tokens(line)
            if t.kind == "number" and "." in t.text}


def _literals(tree: ast.AST) -> set[Decimal]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, float):
            try:
                found.add(Decimal(repr(node.value)))
            except InvalidOperation:
                continue
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
        tree = ast.parse(code)
    except SyntaxError:
        return ["code that cannot be parsed"]
    flags = set()
    for node in ast.walk(tree):
        for name in _bound_names(node):
            if name in BUILTINS:
                flags.add(f"redefines the builtin {name}")
        used = set(_used_names(node))
        for name in sorted(used & reference):
            flags.add(f"uses the kit's reference implementation ({name})")
        if used & KERNEL_NAMES:
            flags.add("touches the kernel (get_ipython, builtins or sys.modules)")
        if isinstance(node, ast.Attribute) and node.attr == "modules" and \
                isinstance(node.value, ast.Name) and node.value.id == "sys":
            flags.add("touches the kernel (get_ipython, builtins or sys.modules)")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                SOLUTIONS_PATH.search(node.value):
            flags.add("reads the solutions folder")
    solution_literals = _literals(ast.parse(solution)) if solution else set()
    for value in sorted(_literals(tree) & _decimals(printed) - solution_literals):
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
    outputs = {c.id: "".join(o.get("text", "") for o in c.get("outputs", []) if o.get("name") == "stdout")
               for c in reference.cells if c.cell_type == "code"}
    found: dict[str, list[str]] = {}
    seen: list[NotebookNode] = []
    items = {ex.id: ex for ex in exercises(reference)}
    for cell in graded.cells:
        if cell.cell_type == "code" and cell.id in student_cells:
            seen.append(cell)
        ex = exercise_id(cell)
        if ex is None or ex not in items:
            continue
        printed = "".join(outputs.get(cell_id, "") for cell_id in items[ex].cell_ids)
        model = solutions.get(ex)
        reasons = []
        for student in seen:
            for reason in code_flags(student.source, reference_names(model) if model else frozenset(),
                                     printed, model.source if model else ""):
                reasons.append(f"cell {student.id}: {reason}")
        found[ex] = reasons
    return found
