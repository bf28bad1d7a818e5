"""The ``kit`` command: fetch data, inspect the set-up, release, grade and run notebooks.

Every sub-command prints a clear one-line message (no traceback) and exits with status 1
when the user has something to fix (a ``KitError``); Ctrl-C ends it with "interrupted" and
status 130 (``kit check``: SIGTERM too, with status 143). Each imports what it needs when it
runs, so ``kit --help`` answers at once.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import textwrap
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from helpers import fetch, log, settings
from helpers.course import config, stops
from helpers.course.arguments import positive_float, positive_int
from helpers.course.safe_text import printable
from helpers.course.startup import skip_slow_imports, use_reference_blas
from helpers.errors import KitError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from helpers.course.classroom import classgrade, cluster
    from helpers.course.classroom.record import Record
    from helpers.course.engine import sandbox

DISTRIBUTION = "sentiment-practical-kit"
#: The commands only instructors run, in the course repository: a student copy's ``kit --help``
#: does not list them, and each says it is for instructors.
INSTRUCTOR_COMMANDS = ("release", "grade", "references", "bakeoff", "course")
#: How ``kit bakeoff`` names its default test set on the leaderboard's page.
DEFAULT_TEST_SET = "the kit's held-out IMDB test reviews"
#: What ``kit --help`` says the command is, in a student copy.
STUDENT_DESCRIPTION = "The `kit` command: fetch the data, open the practical in JupyterLab, check your work."
#: The exit status after Ctrl-C (128 + SIGINT), as shells report it.
INTERRUPTED = 130

INFO_PACKAGES = ("nltk", "gensim", "scikit-learn", "scipy", "numpy", "pandas", "matplotlib",
                 "tqdm", "nbval", "jupyterlab", "pytest")


#: What each profile means, for ``kit info``.
PROFILES = {"quick": "Doc2Vec trains 10 epochs on one core, reproducibly: the checked outputs' models",
            "full": "Doc2Vec trains gensim's 20 epochs on every core: better models, outputs not checked"}


def cmd_fetch(args: argparse.Namespace) -> None:
    status = fetch.fetch(args.only, source=args.source, verify=args.verify, progress=sys.stderr.isatty())
    for name, state in status.items():
        print(f"{name:<18} {state}")
    print(f"data folder: {settings.data_dir()}")


def cmd_info(args: argparse.Namespace) -> None:
    print(f"python        {platform.python_version()}")
    for name in INFO_PACKAGES:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "not installed"
        print(f"{name:<13} {version}")
    print(f"data folder   {settings.data_dir()}")
    print(f"data source   {settings.data_source() or 'network (official URLs)'}")
    print(f"profile       {settings.profile()} ({PROFILES[settings.profile()]}; KIT_PROFILE chooses)")
    from helpers.course.notebook import environment  # its current() loads numpy and its BLAS: only here

    seed = settings.hash_seed()
    print(f"hash seed     PYTHONHASHSEED={seed if seed is not None else '(unset)'}"
          + ("" if seed == "0" else " (the reference outputs need 0; kit lab and kit check set it)"))
    print(f"BLAS          {environment.current()['blas']}")
    for name in fetch.DATASETS:
        folder = settings.data_dir() / fetch.DATASETS[name].folder
        if fetch.is_verified(name):
            state = "verified"
        elif folder.exists():
            state = "present but NOT verified (run `kit fetch`)"
        else:
            state = "missing (run `kit fetch`)"
        print(f"  {name:<18} {state}")
    from helpers.course.student import integrity

    print(f"library       {integrity.summary()}")


def cmd_release(args: argparse.Namespace) -> None:
    from helpers.course.notebook import release, student_copy

    student_copy.require_course_repository("release")
    if args.binder_repo and not args.student_repo:
        raise KitError("--binder-repo goes with --student-repo DIR: it names the repository DIR is "
                       "published as.")
    if args.student_repo:
        if args.check or args.force:
            raise KitError("--student-repo takes neither --check nor --force: it never overwrites "
                           "a file it did not write, or one changed since.")
        written = student_copy.write_student_copy(Path(args.student_repo), binder_repo=args.binder_repo)
        repository = student_copy.students_repository(args.binder_repo)
        print(f"student copy: {len(written)} files in {Path(args.student_repo).resolve()} (no solutions/, "
              f"tests/, benchmarks/); publish it as the students' repository, {repository}, which its "
              "README names.")
        return
    changed = release.release(check=args.check, force=args.force)
    names = ", ".join(p.name for p in changed) or "none"
    if args.check:
        if changed:
            raise KitError(f"notebooks/ is out of date ({names}); run `kit release` and commit.")
        print("notebooks/ is in sync with solutions/.")
    else:
        print(f"wrote: {names}")


def grade_files() -> str:
    """The files ``kit grade`` reads from the instructor and writes for them (its ``--help``)."""
    from helpers.course.classroom import layout

    return f"""files in SUBMISSIONS_DIR:
  you write (the kit only reads them):
    {layout.ROSTER_FILE:<26}folder,student_id,name,email: names the LMS files' students
    {layout.OVERRIDES_FILE:<26}student,notebook,exercise,points,comment: your corrections
    {layout.SHEET_PREFIX + "NN_topic.csv":<26}the written answers: type each one's points (and a comment)
  the kit writes (a file you edited is kept; the new one goes beside it, stamped):
    {layout.GRADES_FILE:<26}every exercise of every student, corrections applied
    {layout.FEEDBACK_DIR + "/STUDENT/":<26}NN_topic.html and .md for each student
    {layout.SUMMARY_FILE:<26}points per student and notebook (--summary)
    {layout.EXPORT_FILES["canvas"]:<26}Canvas's gradebook import (--summary, with {layout.ROSTER_FILE})
    {layout.EXPORT_FILES["moodle"]:<26}Moodle's grade import (--summary, with {layout.ROSTER_FILE})
    {layout.RECORDS_DIR + "/":<26}the results kept (one record per student and notebook)
--summary and --feedback-only rebuild grades.csv too: every file follows the same records and
corrections."""


def cmd_grade(args: argparse.Namespace) -> None:
    from helpers import owned
    from helpers.course.classroom import answers, classgrade, exports, feedback, gradebook, layout, summaries
    from helpers.course.notebook import student_copy

    student_copy.require_course_repository("grade")
    submissions = Path(args.submissions)
    if not (args.feedback_only or args.summary):
        require_linux("grade")
    if args.prepare:
        done = classgrade.prepare(notebooks=_graded_names(args.notebook), force=args.force)
        _say(f"prepared: {', '.join(done) or 'nothing (every solution was prepared already)'}")
        return
    result = None
    if not args.feedback_only and not args.summary:
        result = classgrade.grade(submissions, notebook=args.notebook, jobs=args.jobs, timeout=args.timeout,
                                  student=args.student, force=args.force, limits=limits_of(args),
                                  scheduler=args.scheduler, on_graded=_graded_line())
        _say(owned.where_written("grades", layout.grades_path(submissions), result.grades))
        for notebook, sheet in result.sheets:
            intended = layout.sheet_path(submissions, notebook)
            _say(owned.where_written(f"written answers to {notebook}", intended, sheet))
    records = result.records if result is not None else gradebook.read_graded(submissions)
    if not records:
        raise KitError(f"Nothing graded in {submissions} yet: run `kit grade {submissions}`.")
    if result is None:  # the corrections may have changed since the last grading run
        _say(owned.where_written("grades", layout.grades_path(submissions),
                                 gradebook.write_grades(submissions, records)))
    grades = gradebook.grades_table(records)
    if args.feedback_only:
        written = feedback.write_all_feedback(submissions, records)
        _say(f"{len(written)} feedback files written under {layout.feedback_root(submissions)}")
        return
    written = answers.written_marks(submissions)
    _say(summaries.summary(grades, written).to_string())
    review = summaries.flagged(grades)
    if not review.empty:
        _say(f"\n{len(review)} exercise(s) flagged for review (graded all the same):")
        _say(review.to_string(index=False))
    if args.summary:
        _say("\n" + summaries.pass_rates(grades).to_string(index=False))
        path = summaries.write_summary(submissions, grades, written)
        _say("\n" + owned.where_written("class table", layout.summary_path(submissions), path))
        exported = exports.write_exports(submissions, grades, written)
        for lms, written_to in zip(layout.EXPORT_FILES, exported, strict=False):
            intended = layout.export_path(submissions, lms)
            _say(owned.where_written(f"{lms.capitalize()} import", intended, written_to))
        if not exported:
            _say(f"(no {layout.ROSTER_FILE}: add one, with columns folder, student_id, name, email, "
                 "for Canvas and Moodle import files)")


def _graded_line() -> Callable[[classgrade.Task, Record], None]:
    """What ``kit grade`` says as each notebook is graded: its score and the problem with the
    whole notebook, if any; and, once, that a job ran without bubblewrap."""
    from helpers.course.engine.sandbox import SUBPROCESS

    warned: list[classgrade.Task] = []

    def say(task: classgrade.Task, record: Record) -> None:
        if record.sandbox == SUBPROCESS and not warned:
            warned.append(task)
            _say(f"kit grade: {task} was graded without bubblewrap (on a machine that lacks it): "
                 "its student code could read and change that machine's files.", file=sys.stderr)
        problem = f" ({record.problem_line})" if record.problem_line else ""
        _say(f"{task.student} {task.notebook}: {record.passed}/{len(record.exercises)}{problem}", flush=True)

    return say


def _say(text: str, **kwargs) -> None:
    """``print`` what ``kit grade`` says, ``printable``: names, flags and errors in it come
    from students' notebooks, and no escape code of theirs may reach the terminal."""
    print(printable(text), **kwargs)


def require_linux(command: str) -> None:
    """Raise one clear ``KitError`` where ``kit COMMAND`` cannot run: it grades in a Linux
    sandbox (bubblewrap, taskset, prlimit, /proc)."""
    if not sys.platform.startswith("linux"):
        raise KitError(f"`kit {command}` needs Linux: it grades each notebook in a Linux sandbox "
                       f"(bubblewrap, taskset, prlimit), which {platform.system() or sys.platform} "
                       "does not have. Grade on a Linux machine (WSL works); `--summary` and "
                       "`--feedback-only` work here.")


def _graded_names(number: str | None) -> list[str] | None:
    return [p.stem for p in config.notebooks_in(config.SOLUTIONS_DIR, [number])] if number else None


def cmd_run(args: argparse.Namespace) -> None:
    from helpers.course.notebook import runner

    which = "solutions" if args.solutions else "notebooks"
    table = runner.run(which, args.numbers, Path(args.out) if args.out else None, args.timeout)
    print(table.drop(columns="output").to_string(index=False))
    print(f"\ntotal {table.seconds.sum():.0f} s, peak {table.peak_mb.max()} MB; "
          f"executed copies in {Path(table.output.iloc[0]).parent}")
    if (table.status != "ok").any() and which == "solutions":
        raise KitError("some solution notebooks failed; see the status column.")


def cmd_references(args: argparse.Namespace) -> None:
    from helpers.course.notebook import references

    written = references.write_references(args.numbers, timeout=args.timeout)
    print(f"references written: {', '.join(p.name for p in written)}; run `kit release` and commit both.")


def cmd_results(args: argparse.Namespace) -> None:
    from helpers import systems

    table = systems.results_table(args.systems, progress=not args.json)
    if args.json:
        print(json.dumps(table.to_dict(orient="records"), indent=2))
    else:
        shown = table.assign(accuracy=(100 * table["accuracy"]).round(1), std=(100 * table["std"]).round(1))
        print(shown.rename(columns={"accuracy": "accuracy %", "std": "std %"}).to_string(index=False))


def cmd_leaderboard(args: argparse.Namespace) -> None:
    from helpers import leaderboard, owned, systems

    board = systems.ranked(args.systems, progress=not args.json)
    if args.json:
        print(json.dumps({"alpha": board.alpha, "systems": board.table.to_dict(orient="records"),
                          "pairs": board.pairs.to_dict(orient="records")}, indent=2))
    else:
        print(leaderboard.describe(board))
    if args.figure:
        import matplotlib

        matplotlib.use("Agg")
        figure = leaderboard.plot(board).figure
        figure.tight_layout()
        intended = Path(args.figure)
        written = owned.write_owned(intended, lambda tmp: figure.savefig(tmp, format="png", dpi=120))
        print(owned.where_written("the leaderboard's figure", intended, written), file=sys.stderr)


def cmd_bakeoff(args: argparse.Namespace) -> None:
    from helpers import leaderboard, owned, systems
    from helpers.course.classroom import bakeoff, layout
    from helpers.course.notebook import student_copy

    student_copy.require_course_repository("bakeoff")
    require_linux("bakeoff")
    submissions = Path(args.submissions)
    if not submissions.is_dir():
        raise KitError(f"{submissions} is not a folder of student folders.")
    test = bakeoff.read_test_set(Path(args.test)) if args.test else bakeoff.default_test_set()
    described = f"{Path(args.test).name if args.test else DEFAULT_TEST_SET} ({len(test):,} reviews)"
    names = [] if args.no_baselines else (args.baselines or list(systems.NAMES))
    aliases = bakeoff.read_aliases(Path(args.aliases), [folder.name for folder in layout.student_folders(
        submissions)]) if args.aliases else None

    def said(entry: bakeoff.Entry) -> None:
        kept = ", kept from an earlier run" if entry.kept else ""
        _say(f"{entry.student}: " + (entry.problem or f"answered ({entry.seconds} s{kept})"))

    result = bakeoff.bakeoff(submissions, test, names, timeout=args.timeout, limits=limits_of(args),
                             jobs=args.jobs, budget=args.budget, again=args.again, aliases=aliases,
                             on_entry=said)
    print(leaderboard.describe(result.board))
    for row in result.unranked.itertuples():
        _say(f"no rank: {row.student}: {row.problem}")
    for student, flags in result.flagged.items():
        _say(f"to read: {student}: {'; '.join(flags)}")
    for intended, written in bakeoff.write(result, submissions, described):
        _say(owned.where_written(f"the bake-off's {intended.suffix[1:]} file", intended, written))


def cmd_course_check(args: argparse.Namespace) -> None:
    from helpers.course import course_file

    folder = Path(args.course)
    found = course_file.problems(folder)
    for problem in found:
        print(printable(problem))
    if found:
        raise KitError(f"{len(found)} problem{'s' if len(found) > 1 else ''} in {folder}: mend them and "
                       "run `kit course check` again.")
    print(f"{folder}: no problem: the course file, the briefs, the rubric and the session plan agree "
          "with each other and with solutions/.")


def cmd_annotate(args: argparse.Namespace) -> None:
    from helpers import annotation, owned

    if args.n < 1:
        raise KitError("-n must be at least 1.")
    intended = Path(args.out) if args.out else annotation.sheet_path()
    written = annotation.write_annotation_sheet(annotation.annotation_sheet(args.system, args.n), intended)
    print(owned.where_written(f"the {args.n} most confident errors of {args.system}", intended, written))
    print(f"Fill in category, fixability ({'/'.join(annotation.FIXABILITY)}), source "
          f"({'/'.join(annotation.SOURCES)}) and note, then read it back in notebook 05.")


def cmd_export_projector(args: argparse.Namespace) -> None:
    from helpers import embeddings, owned, projector

    if args.docs < 0 or args.words < 0:
        raise KitError("--docs and --words must not be negative.")
    config = embeddings.sample_config(dm=1) if args.model == "dm" else embeddings.config_for()
    exported = projector.export_kit_embeddings(config, args.docs, args.words, args.out)
    for kind, paths in exported.items():
        print(f"{kind}: {paths['vectors']}\n{' ' * len(kind)}  {paths['metadata']}")
    if "words" not in exported:
        print("(no word vectors: this model trained none; use --model dm)")
    written = exported["documents"]["config"]
    folder = written.parent
    print(owned.where_written("the TensorBoard config", folder / projector.CONFIG, written))
    print(f"Load each pair at https://projector.tensorflow.org (Load > Choose file), or run "
          f"`tensorboard --logdir {folder}` (pip install tensorboard).")


def cmd_work(args: argparse.Namespace) -> None:
    from helpers.course.student import workspace

    if args.update:
        for name, backup in workspace.update(args.update).items():
            print(f"{name:<26} the current release" + (f"; your copy is now {backup}" if backup else ""))
    for name, state in workspace.seed().items():
        print(f"{name:<26} {state}")
    print(f"workspace: {settings.work_dir()}")


def cmd_check(args: argparse.Namespace) -> None:
    if not args.notebook and not args.run:
        _saved_progress()
        return
    with stops.sigterm_raises():
        _run_checks(args.notebook, args.timeout)


def _saved_progress() -> None:
    """``kit check`` alone: the progress table from the verdicts the checks saved; nothing runs."""
    from helpers.course.student import progress

    if not config.notebooks_in(settings.work_dir()):
        raise KitError(f"Your workspace {settings.work_dir()} has no notebooks yet; run `kit work`.")
    copies = progress.workspace_copies()
    print(progress.report(progress.workspace_progress(copies=copies), progress.copies_lines(copies)))
    print("\nNothing ran: these are the verdicts each notebook's last check saved. `kit check NN` runs "
          "notebook NN's checks and says, per exercise, what fails and why; `kit check --run` runs "
          "every notebook changed since its last check.")


def _run_checks(names: list[str], timeout: float) -> None:
    """``kit check NN ...`` (each runs) or ``kit check --run`` (every workspace copy changed
    since its check): the verdicts, then the progress table of the notebooks checked, also
    when Ctrl-C or SIGTERM stops it (then with the exercises decided before the stop)."""
    from helpers.course.student import check, progress

    rows: list[progress.Progress] = []
    for copy, reference in _copies_to_check(names):
        try:
            verdicts, state = check.check_copy(copy, reference, timeout, reuse=not names,
                                               keep=_in_workspace(copy), progress=True, go_on=_before_run)
        except check.CheckInterrupted as stop:
            _say_verdicts(copy, stop.verdicts, f"stopped; the exercises decided before the stop "
                          f"({len(stop.verdicts)}):", detailed=True)
            rows.append(progress.row(copy, reference, [v.record() for v in stop.verdicts], progress.STOPPED))
            print("\n" + progress.report(rows), flush=True)
            raise
        except KeyboardInterrupt:
            if rows:
                print("\n" + progress.report(rows), flush=True)
            raise
        rows.append(progress.row(copy, reference, [v.record() for v in verdicts], state))
        if state != progress.SKIPPED:
            kept = " (unchanged since its last check)" if state == progress.KEPT else ""
            passed = sum(v.passed for v in verdicts)
            _say_verdicts(copy, verdicts, f"{passed}/{len(verdicts)} exercises pass the visible checks "
                          f"(grading also runs hidden ones){kept}", detailed=bool(names))
    if not rows:
        return
    print("\n" + progress.report(rows))
    if not names:
        print("\n`kit check NN` says, per exercise, what fails and why.")
    _all_pass(rows)


def _copies_to_check(names: list[str]) -> list[tuple[Path, Path]]:
    """Each copy to check with its release: the ones ``names`` names, or every workspace copy
    of a released notebook; a notebook without exercises is left out (named, with a word).
    A copy the lab ran code in that it does not hold (not saved) is named too."""
    from helpers.course.student import check, progress, unsaved

    work = settings.work_dir()
    if names:
        copies = [check.working_copy(name) for name in names]
    else:  # each released notebook's newest copy; the student's own notebooks are not checked
        copies = [mine[0] for mine in progress.workspace_copies(work).values()]
    if not copies:
        raise KitError(f"Your workspace {work} has no notebooks yet; run `kit work`.")
    found = []
    for copy in dict.fromkeys(copies):
        reference = check.released_for(copy)
        if _in_workspace(copy) and (note := check.copies_note(copy)):
            print(f"{copy.name}: {note}.", flush=True)
        if _in_workspace(copy) and (note := unsaved.unsaved_note(copy)):
            print(f"{copy.name}: {note}.", flush=True)
        if check.has_exercises(reference):
            found.append((copy, reference))
        elif names:
            print(f"{copy.name} has no exercises to check.")
    return found


def _in_workspace(copy: Path) -> bool:
    """Whether ``copy`` is in the workspace (only there are its checks saved)."""
    return copy.resolve().parent == settings.work_dir().resolve()


def _before_run(copy: Path) -> bool:
    """Say a check is about to run ``copy``; first ask, when it would train a model the
    practical has not trained yet (``check.training_notice``). False: the student said no."""
    from helpers.course.student import check

    notice = check.training_notice(copy.name)
    if notice and not _agreed(notice):
        print(f"{copy.name}: not checked.", flush=True)
        return False
    print(f"{copy.name}: running it in a fresh kernel against the released checks ...", flush=True)
    return True


def _agreed(notice: str) -> bool:
    """Print ``notice`` and ask to go on, on a terminal; without one, go on (it was said, and
    Ctrl-C stops it)."""
    print(notice, flush=True)
    if not sys.stdin.isatty():
        print("(No terminal to answer on: going on. Ctrl-C stops it.)", flush=True)
        return True
    try:
        return input("Go on? [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False


def _say_verdicts(copy: Path, verdicts: list, summary: str, detailed: bool) -> None:
    """One line for a notebook checked; with ``detailed``, one more per exercise."""
    from helpers.course.engine.wording import describe

    print(f"{copy.name}: {summary}", flush=True)
    for verdict in verdicts if detailed else ():
        print(textwrap.indent(describe(verdict), "  "), flush=True)


def _all_pass(rows: list) -> None:
    """Exit status 1 (a KitError) unless every exercise of every notebook checked passes."""
    from helpers.course.student import progress

    skipped = [row.notebook for row in rows if row.state == progress.SKIPPED]
    checked = [row for row in rows if row.state != progress.SKIPPED]
    total = sum(len(row.exercises) for row in checked)
    failing = total - sum(row.count("passed") for row in checked)
    unchecked = f" Not checked: {', '.join(skipped)}." if skipped else ""
    if failing:
        raise KitError(f"{failing} of {total} exercises do not pass yet.{unchecked}")
    if skipped:
        raise KitError(unchecked.strip())


def cmd_lab(args: argparse.Namespace) -> None:
    from helpers.course.student import integrity, workspace

    for name, state in workspace.seed().items():
        if state != workspace.YOURS:
            print(f"{name}: {state}")
    library = integrity.notice()
    if library:  # said, and the lab opens all the same: the student may want to look around
        print(f"kit: {library}")
    # Kernels inherit the server's environment; gensim's initial vectors depend on Python's
    # hash seed, so the reference outputs need it fixed before Jupyter starts.
    config.apply_reference_env()
    settings.set_environment(lab_environment(settings.environment()))
    command = [sys.executable, "-m", "jupyterlab", *lab_arguments(settings.work_dir()), *args.jupyter_args]
    sys.stdout.flush()  # execv drops what Python still buffers (all of it, into a pipe)
    os.execv(command[0], command)


def lab_environment(environ: dict[str, str] | os._Environ) -> dict[str, str]:
    """The lab's Jupyter paths: the kit's server settings and its kernel (see
    ``helpers.course.student.kernel``) first, then whatever ``environ`` had."""
    from helpers.course.student.kernel import KERNEL_DATA_DIR

    return {name: os.pathsep.join([str(folder), *filter(None, [environ.get(name)])])
            for name, folder in (("JUPYTER_CONFIG_PATH", config.LAB_CONFIG_DIR),
                                 ("JUPYTER_PATH", KERNEL_DATA_DIR))}


def lab_arguments(work: Path) -> list[str]:
    """JupyterLab's root and first page: the repository (so ``data/`` is in reach) at ``work``.

    A workspace outside the repository is served from its own parent folder.
    """
    root = settings.REPO_ROOT if work.is_relative_to(settings.REPO_ROOT) else work.parent
    page = work.relative_to(root).as_posix()
    return [f"--ServerApp.root_dir={root}", f"--LabApp.default_url=/lab/tree/{page}"]


def _version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed)"


def notebook_number(text: str) -> str:
    """argparse type: a notebook number, ``1`` or ``01``."""
    if not text.isdigit() or len(text) > 2:
        raise argparse.ArgumentTypeError(f"{text!r} is not a notebook number such as 01")
    return text.zfill(2)


def system_name(text: str) -> str:
    """argparse type: one headline system name (spaces around it ignored)."""
    from helpers import systems

    name = text.strip()
    if name not in systems.NAMES:
        raise argparse.ArgumentTypeError(f"{text!r} is not a system; choose from {', '.join(systems.NAMES)}")
    return name


def system_names(text: str) -> list[str]:
    """argparse type: comma-separated headline system names, e.g. ``nb, svm-bow`` (at least one)."""
    names = list(dict.fromkeys(system_name(part) for part in text.split(",") if part.strip()))
    if not names:
        raise argparse.ArgumentTypeError("give at least one system name, e.g. --systems nb,svm-bow")
    return names


def cluster_arg(text: str) -> cluster.Scheduler:
    """argparse type: ``local:N`` or a Dask scheduler address (see ``cluster.scheduler_arg``)."""
    from helpers.course.classroom import cluster
    return cluster.scheduler_arg(text)


def limits_of(args: argparse.Namespace) -> sandbox.Limits:
    """The sandbox limits given on the command line (``add_limit_options``)."""
    from helpers.course.engine import sandbox
    return sandbox.Limits(memory_mb=args.memory_mb, cpu_seconds=args.cpu_seconds, processes=args.processes,
                          output_mb=args.output_mb, disk_mb=args.disk_mb)


def add_limit_options(parser: argparse.ArgumentParser) -> None:
    """The sandbox's limits as options of a command that runs student code (grade, bakeoff)."""
    defaults = sandbox_defaults()
    for flag, name, unit in (("--memory-mb", "memory_mb", "MB of address space per process"),
                             ("--cpu-seconds", "cpu_seconds", "CPU seconds per process"),
                             ("--processes", "processes", "processes and threads at once"),
                             ("--output-mb", "output_mb", "MB of output per notebook"),
                             ("--disk-mb", "disk_mb", "MB the notebook may write")):
        parser.add_argument(flag, type=positive_int, default=getattr(defaults, name), metavar="N",
                            help=f"sandbox limit: {unit} (default %(default)s)")


def sandbox_defaults() -> sandbox.Limits:
    """The grading sandbox's default limits (``sandbox.Limits()``)."""
    from helpers.course.engine import sandbox
    return sandbox.Limits()


def cmd_for_instructors(args: argparse.Namespace) -> None:
    """What an instructors' command does in a student copy: say so."""
    raise KitError(f"this is a student copy ({config.SOLUTIONS_DIR} does not exist); `kit {args.command}` is "
                   "for instructors: instructors run it in the course repository.")


class StudentCopyParser(argparse.ArgumentParser):
    """``kit`` in a student copy: an instructors' command (``INSTRUCTOR_COMMANDS``), which its
    ``--help`` does not list, is not parsed but said to be for instructors."""

    def parse_known_args(self, args: Iterable[str] | None = None,
                         namespace: object = None) -> tuple[Any, list[str]]:
        args = sys.argv[1:] if args is None else list(args)
        if args and args[0] in INSTRUCTOR_COMMANDS:
            return argparse.Namespace(command=args[0], func=cmd_for_instructors, log_level=log.NORMAL), []
        return super().parse_known_args(args, namespace)


class StudentCommands:
    """The sub-commands of ``kit`` in a student copy: those ``build_parser`` adds, less the
    instructors' (``INSTRUCTOR_COMMANDS``), whose parsers are built and dropped."""

    def __init__(self, commands: argparse._SubParsersAction) -> None:
        self.commands = commands

    def add_parser(self, name: str, **kwargs) -> argparse.ArgumentParser:
        if name in INSTRUCTOR_COMMANDS:
            return argparse.ArgumentParser(add_help=False)
        return self.commands.add_parser(name, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    student = config.is_student_copy()
    description = STUDENT_DESCRIPTION if student else __doc__.splitlines()[0].replace("``", "`")
    parser = (StudentCopyParser if student else argparse.ArgumentParser)(prog="kit", description=description)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    talk = parser.add_mutually_exclusive_group()
    talk.add_argument("-q", "--quiet", action="store_const", dest="log_level", const=log.QUIET,
                      default=log.NORMAL, help="on stderr, warnings only (not what the kit is doing)")
    talk.add_argument("-v", "--verbose", action="store_const", dest="log_level", const=log.VERBOSE,
                      help="on stderr, every diagnostic")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=argparse.ArgumentParser)
    sub = StudentCommands(commands) if student else commands

    fetch_data = sub.add_parser("fetch", help="download (or copy) and verify the corpora")
    fetch_data.add_argument("--source", help="a local folder holding the same files, verified the same way "
                       "(default: KIT_DATA_SOURCE, else the network)")
    fetch_data.add_argument("--only", nargs="+", metavar="NAME", choices=sorted(fetch.DATASETS),
                       help="fetch only these data sets")
    fetch_data.add_argument("--verify", action="store_true",
                            help="hash every extracted file against its manifest (not only sizes and times); "
                                 "extract again what changed")
    fetch_data.set_defaults(func=cmd_fetch)

    info = sub.add_parser("info", help="versions, data folder, and which data sets are verified")
    info.set_defaults(func=cmd_info)

    rel = sub.add_parser("release", help="write the student notebooks/ from solutions/")
    rel.add_argument("--check", action="store_true",
                     help="write nothing; fail if notebooks/ is out of date")
    rel.add_argument("--force", action="store_true",
                     help="overwrite notebooks edited by hand since the last release (a copy of "
                     "each is kept in backups/)")
    rel.add_argument("--student-repo", metavar="DIR",
                     help="write the students' copy of the kit into DIR instead: helpers/, notebooks/ and "
                     "the set-up files, without solutions/, tests/ or benchmarks/")
    rel.add_argument("--binder-repo", metavar="OWNER/NAME",
                     help="with --student-repo: the students' GitHub repository, for the Binder badge, "
                     "git clone and cd commands of the copy's README (default: [course] "
                     "student_repository in course/course.toml)")
    rel.set_defaults(func=cmd_release)

    grade = sub.add_parser("grade", help="grade a folder of student submissions, each in a sandbox; "
                           "keeps results, writes grades.csv and feedback/",
                           formatter_class=argparse.RawDescriptionHelpFormatter,
                           epilog=None if student else grade_files())
    grade.add_argument("submissions", metavar="SUBMISSIONS_DIR",
                       help="one folder per student holding their NN_topic.ipynb files")
    grade.add_argument("--notebook", metavar="NN", type=notebook_number, help="grade only notebook NN")
    grade.add_argument("--student", metavar="NAME", help="grade only this student's folder")
    grade.add_argument("--force", action="store_true", help="grade again what is graded already")
    grade.add_argument("--jobs", type=positive_int, default=config.GRADE_JOBS,
                       help="notebooks graded at once on this machine (default %(default)s)")
    grade.add_argument("--scheduler", metavar="ADDRESS", type=cluster_arg,
                       help="grade on a Dask cluster: a scheduler address, or local:N for N workers here")
    grade.add_argument("--timeout", type=positive_float, default=config.CELL_TIMEOUT, metavar="S",
                       help="seconds allowed per cell (default %(default)s)")
    add_limit_options(grade)
    what = grade.add_mutually_exclusive_group()
    what.add_argument("--prepare", action="store_true",
                      help="only grade the solutions once to build the shared caches (done "
                      "anyway before the first student)")
    what.add_argument("--feedback-only", action="store_true",
                      help="rebuild the feedback files from the kept results; run nothing")
    what.add_argument("--summary", action="store_true",
                      help="print the class table (with the points marked in the answer sheets) and "
                      "pass rates; write gradebook.csv; run nothing")
    grade.set_defaults(func=cmd_grade)

    bake = sub.add_parser("bakeoff", help="score each student's bake-off entry (10_bakeoff.ipynb) once, in "
                          "the sandbox, on test reviews no notebook shows, beside the kit's systems; writes "
                          "the class leaderboard (bakeoff.csv, bakeoff_pairs.csv, bakeoff.html, bakeoff.png)")
    bake.add_argument("submissions", metavar="SUBMISSIONS_DIR",
                      help="one folder per student; an entry is a 10_bakeoff.ipynb that defines "
                      "predict_sentiment(texts)")
    bake.add_argument("--test", metavar="CSV", help="your own test set: a CSV with columns text and label "
                      "(pos/neg) (default: the kit's 2,000 held-out IMDB test reviews)")
    entered = bake.add_mutually_exclusive_group()
    entered.add_argument("--baselines", metavar="NAME,…", type=system_names, default=None,
                         help="the kit's systems to enter, trained on the 2,000 reviews: comma-separated, "
                         "from nb, nb-presence, svm-bow, nbsvm, svm-doc2vec (default all)")
    entered.add_argument("--no-baselines", action="store_true", help="enter none of the kit's systems")
    bake.add_argument("--jobs", type=positive_int, default=config.GRADE_JOBS,
                      help="entries run at once (default %(default)s)")
    bake.add_argument("--timeout", type=positive_float, default=config.CELL_TIMEOUT, metavar="S",
                      help="seconds allowed per cell, and for predict_sentiment's answer "
                      "(default %(default)s)")
    bake.add_argument("--budget", type=positive_float, default=config.BAKEOFF_BUDGET, metavar="S",
                      help="seconds one entry's whole run may take (default %(default)s)")
    bake.add_argument("--aliases", metavar="CSV", help="show each student on the leaderboard and in its "
                      "files by an alias: a CSV with columns student (the folder's name) and alias, one row "
                      "per student folder (default: the folders' names)")
    bake.add_argument("--again", action="store_true",
                      help="run every entry again; by default an entry scored before on the same test set "
                      "from the same notebook is kept (saved in SUBMISSIONS_DIR/bakeoff_entries.json as "
                      "it finishes)")
    add_limit_options(bake)
    bake.set_defaults(func=cmd_bakeoff)

    course = sub.add_parser("course", help="the course's files (course/): `kit course check` checks them")
    course_commands = course.add_subparsers(dest="course_command", required=True)
    course_check = course_commands.add_parser(
        "check", help="check course/course.toml, the briefs, the rubric and the session plan against each "
        "other and the notebooks; exit 1 listing every problem")
    course_check.add_argument("--course", default=str(config.COURSE_FILE.parent), metavar="DIR",
                              help="the course folder to check (default: course/ of the kit)")
    course_check.set_defaults(func=cmd_course_check)

    run = sub.add_parser("run", help="execute notebooks headless; time and memory per notebook")
    group = run.add_mutually_exclusive_group()
    group.add_argument("--notebooks", action="store_true", help="the student notebooks (default)")
    group.add_argument("--solutions", action="store_true",
                       help=argparse.SUPPRESS if student else "the instructor's solutions")
    run.add_argument("numbers", nargs="*", metavar="NN", type=notebook_number, help="only these notebooks")
    run.add_argument("--out", help="folder for executed copies (default runs/<timestamp>)")
    run.add_argument("--timeout", type=positive_float, default=None, metavar="S",
                     help="seconds allowed per cell (default: none)")
    run.set_defaults(func=cmd_run)

    refs = sub.add_parser("references", help="re-run solution notebooks and store their outputs as "
                          "the reference (with the BLAS kernels and versions that wrote them)")
    refs.add_argument("numbers", nargs="*", metavar="NN", type=notebook_number, help="only these notebooks")
    refs.add_argument("--timeout", type=positive_float, default=None, metavar="S",
                      help="seconds allowed per cell")
    refs.set_defaults(func=cmd_references)

    work = sub.add_parser("work", help="copy the notebooks you have not started yet into your "
                          "workspace (work/); never touches a copy you have")
    work.add_argument("--update", nargs="+", metavar="NN", type=notebook_number,
                      help="take the newer release of these notebooks (your copy moves to work/backups/)")
    work.set_defaults(func=cmd_work)

    checking = sub.add_parser("check", help="check your work: alone, your progress table from the saved "
                              "checks (runs nothing); with NN or --run, run your copies against the "
                              "released checks and say, per exercise, what passes")
    checking.add_argument("notebook", nargs="*", metavar="NN",
                          help="notebooks to run, each a number (01), a name (01_naive_bayes) or your "
                          "copy's file (work/01_naive_bayes.ipynb)")
    checking.add_argument("--run", action="store_true",
                          help="run every notebook in work/ changed since its last check")
    checking.add_argument("--timeout", type=positive_float, default=config.CELL_TIMEOUT, metavar="S",
                          help="seconds allowed per cell (default %(default)s)")
    checking.set_defaults(func=cmd_check)

    lab = sub.add_parser("lab", help="open your workspace (work/) in JupyterLab, with PYTHONHASHSEED=0; "
                         "any other option (--no-browser, --port N, --allow-root) goes to jupyter lab",
                         description="Copy the released notebooks you do not have yet into your "
                         "workspace (work/) and open it in JupyterLab, served from the repository "
                         "so data/ is in reach.",
                         epilog="Every option not listed above goes to JupyterLab unchanged, for "
                         "example: kit lab --no-browser --port 8899 --allow-root "
                         "(see: python -m jupyterlab --help).")
    lab.set_defaults(func=cmd_lab)

    annotate = sub.add_parser("annotate", help="write the error-annotation sheet for notebook 05")
    annotate.add_argument("--system", default="svm-bow", help="headline system (default svm-bow)")
    annotate.add_argument("-n", type=int, default=50, help="how many errors, most confident first "
                          "(default 50)")
    annotate.add_argument("--out", help="CSV file to write (default data/annotations/errors.csv); a sheet "
                          "changed since the kit wrote it is kept, and the new one goes beside it")
    annotate.set_defaults(func=cmd_annotate)

    export = sub.add_parser("export-projector",
                            help="write document and word vectors for the Embedding Projector")
    export.add_argument("--model", choices=("dm", "dbow"), default="dm",
                        help="PV-DM on the 10,000-review sample (has word vectors; default) or the "
                        "PV-DBOW of svm-doc2vec (sized by KIT_PROFILE)")
    export.add_argument("--docs", type=int, default=2000, metavar="N",
                        help="IMDB reviews added to the 2,000 movie reviews (default 2000)")
    export.add_argument("--words", type=int, default=5000, metavar="N",
                        help="most frequent words to export (default 5000)")
    export.add_argument("--out", help="folder (default data/projector)")
    export.set_defaults(func=cmd_export_projector)

    results = sub.add_parser("results", help="the headline table: CV accuracy of each system")
    results.add_argument("--systems", metavar="NAME,…", type=system_names,
                         help="comma-separated, from nb, nb-presence, svm-bow, nbsvm, svm-doc2vec "
                         "(default all)")
    results.add_argument("--json", action="store_true",
                         help="print a JSON list of {system, accuracy, std, n}")
    results.set_defaults(func=cmd_results)

    board = sub.add_parser("leaderboard", help="every system on the same folds, ranked: intervals, every "
                           "pair tested (paired permutation test, Holm), ranks only where a test separates")
    board.add_argument("--systems", metavar="NAME,…", type=system_names,
                       help="comma-separated, from nb, nb-presence, svm-bow, nbsvm, svm-doc2vec "
                       "(default all)")
    board.add_argument("--json", action="store_true", help="print the ranked table and the pairs as JSON")
    board.add_argument("--figure", metavar="PNG", help="also draw the leaderboard into this PNG file")
    board.set_defaults(func=cmd_leaderboard)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``kit`` command line; return the exit status."""
    skip_slow_imports()
    use_reference_blas()  # importing this module loads no numpy (tests/test_startup.py)
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    log.set_level(args.log_level)
    if args.command == "lab":
        args.jupyter_args = extra
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        args.func(args)
        sys.stdout.flush()  # here, not at exit: a closed pipe is then caught below
    except KitError as err:
        print(printable(f"kit: {err}"), file=sys.stderr)
        return 1
    except BrokenPipeError:  # the reader stopped early (`kit work | head`): not an error of ours
        _silence_stdout()
        return 1
    except KeyboardInterrupt as stop:  # Ctrl-C or SIGTERM: the user's choice, said in a word
        status = stops.exit_status(stop)
        print("\nkit: " + ("interrupted" if status == INTERRUPTED else "terminated"), file=sys.stderr)
        return status
    return 0


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so Python's last flush at exit cannot raise again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
