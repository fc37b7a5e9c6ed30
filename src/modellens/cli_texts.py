"""``modellens report`` of a text classifier on a column of texts.

The column is ``--text-column``, or found by itself when the model is a
scikit-learn text pipeline (its first step a text vectorizer such as
``TfidfVectorizer``) and the file has exactly one column of strings.  The
report is :func:`modellens.report` of those texts (its sections for texts).
"""

from __future__ import annotations

__all__ = ["text_column", "report_texts", "is_text_pipeline"]


def is_text_pipeline(model) -> bool:
    """A scikit-learn model that reads raw texts: a pipeline whose first step is a text
    vectorizer (it has ``build_analyzer``: ``CountVectorizer``, ``TfidfVectorizer``,
    ``HashingVectorizer``)."""
    steps = getattr(model, "steps", None)
    first = steps[0][1] if steps else None
    return first is not None and hasattr(first, "build_analyzer")


def text_column(args, model, frame, io) -> str | None:
    """The column of texts to explain, or None for a report of a table.

    ``io`` holds the command line's ``CLIError`` and ``did_you_mean``.
    """
    if args.text_column is not None:
        if args.text_column not in frame.columns:
            raise io.CLIError(f"--text-column: no column {args.text_column!r} in "
                              f"{str(args.data)!r}; its columns are {list(frame.columns)}."
                              f"{io.did_you_mean(args.text_column, frame.columns)}")
        return args.text_column
    if not is_text_pipeline(model):
        return None
    strings = [c for c in frame.columns if c != args.target
               and getattr(frame[c].dtype, "kind", "O") not in "biufcmM"
               and frame[c].map(lambda v: isinstance(v, str)).any()]
    if len(strings) == 1:
        return strings[0]
    raise io.CLIError(
        f"the model reads texts and {str(args.data)!r} has {len(strings)} columns of text "
        f"({', '.join(map(str, strings)) or 'none'}): name the texts with --text-column "
        "COLUMN.")


def report_texts(args, model, frame, column, io) -> int:
    """Write the report of the texts of ``column``; ``io`` as :func:`text_column`'s, with
    ``say``, ``progress`` and ``log``."""
    import modellens as ml

    given = [name for name, value in (("--target", args.target), ("--features", args.features),
                                      ("--reference", args.reference),
                                      ("--scheduler", args.scheduler),
                                      ("--workers", args.workers),
                                      ("--holdout", args.holdout or None)) if value is not None]
    if given:
        raise io.CLIError(f"{', '.join(given)}: options of a table's report; a report of texts "
                          f"(--text-column {column!r}) takes --rows, --explain, --class, "
                          "--seed, --static and --out.")
    values = frame[column]
    missing = [i for i, v in enumerate(values.tolist()) if not isinstance(v, str)
               and (v is None or v != v)]
    if missing:
        raise io.CLIError(f"--text-column {column!r}: {len(missing)} rows have no text (the "
                          f"first is row {missing[0]}); fill them or drop them.")
    texts = [v if isinstance(v, str) else str(v) for v in values.tolist()]
    for r in args.rows or []:
        if r >= len(texts):
            raise io.CLIError(f"--rows: row {r} does not exist; the data has {len(texts)} "
                              f"texts (0 to {len(texts) - 1}).")
    target = None
    if args.target_class is not None:
        classes = [str(c) for c in getattr(model, "classes_", [])]
        if args.target_class not in classes:
            raise io.CLIError(f"--class {args.target_class!r} is not one of the model's classes "
                              f"{classes}.")
        target = classes.index(args.target_class)  # the column of predict_proba
    io.say(f"modellens report: {type(model).__name__} on {len(texts):,} texts (column "
           f"{column!r} of {args.data.name})", flush=True)
    options = ml.ReportOptions(
        rows=args.rows, n_explain=args.explain, target=target, random_state=args.seed,
        progress=io.progress(), log=io.log("modellens report"), interactive=not args.static,
        title=f"modellens report: {args.model.name}",
        source=f"{type(model).__name__} from {args.model.name}, on {len(texts):,} texts of "
               f"column {column!r} of {args.data.name}",
        unused_columns=[c for c in frame.columns if c != column])
    rep = ml.report(model, texts, options=options)
    path = rep.save(args.out)
    io.say(f"modellens report: wrote {path.resolve()}")
    return 0
