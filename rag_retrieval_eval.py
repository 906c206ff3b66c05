#!/usr/bin/env python3
"""Score saved retrieval rankings against relevance labels, exactly as trec_eval does.

Usage:
  python3 rag_retrieval_eval.py FIXTURE [--k K]        seed mode: recall@K and MRR@K
  python3 rag_retrieval_eval.py FIXTURE -m R@10,nDCG@10 [-m AP ...]
  python3 rag_retrieval_eval.py --qrels QRELS --run RUN [-m MEASURE ...]

Library use (after copying this one file into a repo):
  from rag_retrieval_eval import evaluate
  evaluate({"q1": ["d1"]}, {"q1": ["d9", "d1"]}, k=3)

Exit statuses: 0 evaluated; 1 a gate failed; 2 bad input or usage.
Standard library only; Python 3.9 or newer.
"""
import argparse
import json
import math
import os
import sys
from bisect import bisect_right
from collections import namedtuple

PROG = "rag_retrieval_eval"
DEFAULT_K = 3


# === Errors ===

class EvalError(ValueError):
    """Bad input or usage: one line naming the place, the query and the value.

    Raised by every reader and validator; only ``main`` turns it into a
    message on stderr and exit status 2.  Anything else is our own bug and
    keeps its traceback.
    """


def show(value, limit=60):
    """A value as it goes into a one-line message: repr'd and cut short."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def fail(where, problem, query=None):
    """Raise EvalError for ``where`` (file, line or JSON path)."""
    parts = [p for p in (where, None if query is None else "query %s" % show(query), problem) if p]
    raise EvalError(": ".join(parts))


def first_few(ids, limit=3):
    """'a', 'b', 'c' and 4 more: enough IDs to find the problem, never a wall."""
    ids = list(ids)
    text = ", ".join(show(i) for i in ids[:limit])
    return text if len(ids) <= limit else "%s and %d more" % (text, len(ids) - limit)


# === Validation ===

def check_id(value, where, query=None, what="document ID"):
    """Return ``value`` if it is a non-blank string, else raise EvalError."""
    if not isinstance(value, str):
        fail(where, "%s must be a string, not %s %s" % (what, type(value).__name__, show(value)), query)
    if not value.strip():
        fail(where, "%s %s is blank" % (what, show(value)), query)
    return value


def check_ids(ids, where="ids", query=None):
    """Validate a ranked list of document IDs and return it.

    IDs must be non-blank strings and none may appear twice; an empty list is
    a valid (empty) ranking.

    >>> check_ids(["d1", "d2"])
    ['d1', 'd2']
    >>> check_ids(["d1", "d1"], "runs.q1")
    Traceback (most recent call last):
    ...
    rag_retrieval_eval.EvalError: runs.q1[1]: document 'd1' appears twice (first at runs.q1[0])
    """
    if not isinstance(ids, list):
        fail(where, "expected a list of document IDs, not %s %s" % (type(ids).__name__, show(ids)), query)
    seen = {}
    for i, doc in enumerate(ids):
        check_id(doc, "%s[%d]" % (where, i), query)
        if doc in seen:
            fail("%s[%d]" % (where, i), "document %s appears twice (first at %s[%d])"
                 % (show(doc), where, seen[doc]), query)
        seen[doc] = i
    return ids


def check_grade(value, where, query):
    """Return an integer grade; bools and floats (even 1.0) are refused."""
    if type(value) is not int:
        fail(where, "grade %s is not an integer" % show(value), query)
    return value


def check_score(value, where, query):
    """Return a finite float score."""
    if type(value) not in (int, float) or not math.isfinite(value):
        fail(where, "score %s is not a finite number" % show(value), query)
    return float(value)


def check_cutoff(value):
    """Return a cutoff if it is a positive int (bools and '10' are refused).

    >>> check_cutoff(10)
    10
    >>> check_cutoff(0)
    Traceback (most recent call last):
    ...
    rag_retrieval_eval.EvalError: cutoff must be a positive integer, not 0
    """
    if type(value) is int and value > 0:
        return value
    raise EvalError("cutoff must be a positive integer, not %s" % show(value))


def parse_cutoff(text):
    """A cutoff written on the command line: ASCII digits only ('1.5', '1e3', '+3' are refused)."""
    digits = text.strip()
    if digits.isascii() and digits.isdigit() and int(digits) > 0:
        return int(digits)
    raise EvalError("cutoff must be a positive integer, not %s" % show(text))


# === Judged rankings ===

# What every measure needs of one query, and nothing more: the ranks (1-based,
# after --depth) of the retrieved documents that carry a label.  Unlabeled
# documents only push labeled ones down, so they are counted, never kept.
Judged = namedtuple("Judged", "rel_ranks gains judged_ranks num_ret num_rel ideal")
Judged.__doc__ = """One query's judged ranking.

rel_ranks     sorted ranks of retrieved documents with grade >= the relevance level
gains         (rank, grade) of retrieved documents with grade > 0, by rank
judged_ranks  sorted ranks of retrieved documents that carry any label
num_ret       documents retrieved (after --depth)
num_rel       labeled documents with grade >= the relevance level (R)
ideal         grades > 0 of all labeled documents, largest first
"""


def judge(ranks, num_ret, labels, level=1):
    """Build a Judged record from {doc: rank} of the labeled retrieved documents.

    >>> judge({"d2": 2, "d1": 3}, 3, {"d1": 1, "d2": 1}).rel_ranks
    [2, 3]
    """
    judged = sorted((rank, labels[doc]) for doc, rank in ranks.items())
    grades = labels.values()
    return Judged(rel_ranks=[r for r, g in judged if g >= level and g >= 0],
                  gains=[(r, g) for r, g in judged if g > 0],
                  judged_ranks=[r for r, _ in judged],
                  num_ret=num_ret,
                  num_rel=sum(1 for g in grades if g >= level and g >= 0),
                  ideal=sorted((g for g in grades if g > 0), reverse=True))


def rank_list(docids, labels, depth=None):
    """{doc: rank} for labeled documents of a ranking given in list order, and num_ret."""
    num_ret = len(docids) if depth is None else min(depth, len(docids))
    present = [d for d in labels if d in docids] if len(labels) < 8 else None
    if present is not None:
        ranks = {d: docids.index(d) + 1 for d in present}
    else:
        ranks = {d: i + 1 for i, d in enumerate(docids[:num_ret]) if d in labels}
    return {d: r for d, r in ranks.items() if r <= num_ret}, num_ret


# === Measures ===

Measure = namedtuple("Measure", "name func cutoff aggregate trec_name doc")
MEASURES = {}


def measure(name, cutoff, aggregate="mean", trec_name=None):
    """Register a measure.  cutoff: 'required', 'optional' or 'none'."""
    def register(func):
        MEASURES[name] = Measure(name, func, cutoff, aggregate, trec_name,
                                 func.__doc__.strip().splitlines()[0])
        return func
    return register


def _found(q, k):
    """How many relevant documents are ranked within k."""
    return len(q.rel_ranks) if k is None else bisect_right(q.rel_ranks, k)


@measure("R", cutoff="required", trec_name="recall_{k}")
def recall(q, k):
    """Recall: relevant documents within k / all relevant documents (R).

    0 when R is 0, as in trec_eval.

    >>> recall(judge({"d2": 2, "d1": 3}, 3, {"d1": 1, "d2": 1}), 2)
    0.5
    """
    return _found(q, k) / q.num_rel if q.num_rel else 0.0


@measure("RR", cutoff="optional", trec_name="recip_rank")
def reciprocal_rank(q, k):
    """Reciprocal rank: 1 / rank of the first relevant document (within k), else 0.

    >>> reciprocal_rank(judge({"d2": 2, "d1": 3}, 3, {"d1": 1, "d2": 1}), None)
    0.5
    >>> reciprocal_rank(judge({"d2": 2}, 3, {"d2": 1}), 1)
    0.0
    """
    if q.rel_ranks and (k is None or q.rel_ranks[0] <= k):
        return 1.0 / q.rel_ranks[0]
    return 0.0


def parse_measure(text):
    """('R@10', 'R', 10) for 'R@10'; names are case-insensitive, output canonical.

    >>> parse_measure("rr@05")
    ('RR@5', 'RR', 5)
    """
    base, at, cut = text.strip().partition("@")
    names = {n.lower(): n for n in MEASURES}
    name = names.get(base.lower())
    if name is None:
        raise EvalError("unknown measure %s" % show(text))
    spec = MEASURES[name]
    if not at:
        if spec.cutoff == "required":
            raise EvalError("measure %s needs a cutoff, as in %s@10" % (show(text), name))
        return name, name, None
    if spec.cutoff == "none":
        raise EvalError("measure %s takes no cutoff" % show(text))
    try:
        k = parse_cutoff(cut)
    except EvalError:
        raise EvalError("measure %s: cutoff must be a positive integer" % show(text)) from None
    return "%s@%d" % (name, k), name, k


# === Evaluation ===

def apply_policies(qrels, runs, level, missing_run="error", unlabeled="error",
                   no_relevant="error", where=""):
    """Decide which queries are evaluated; return (qids, skipped, zeroed).

    qids follow the qrels' order.  skipped and zeroed map a reason to the
    query IDs it affected, so that nothing leaves an average silently.
    """
    missing = [q for q in qrels if q not in runs]
    extra = [q for q in runs if q not in qrels]
    bad = []
    if missing and missing_run == "error":
        bad.append("%d labeled quer%s no ranking (%s)"
                   % (len(missing), "y has" if len(missing) == 1 else "ies have", first_few(missing)))
    if extra and unlabeled == "error":
        bad.append("%d ranked quer%s no labels (%s)"
                   % (len(extra), "y has" if len(extra) == 1 else "ies have", first_few(extra)))
    if bad:
        fail(where, "query sets differ: %s; see --missing-run and --unlabeled" % "; ".join(bad))
    no_rel = [q for q in qrels if not any(g >= level and g >= 0 for g in qrels[q].values())
              and not (q in missing and missing_run == "skip")]
    if no_rel and no_relevant == "error":
        fail(where, "%d quer%s no relevant label at level %d (%s): incomplete labels, not a zero; "
             "see --no-relevant" % (len(no_rel), "y has" if len(no_rel) == 1 else "ies have",
                                     level, first_few(no_rel)))
    skipped = {"missing_run": missing if missing_run == "skip" else [],
               "unlabeled": extra,
               "no_relevant": no_rel if no_relevant == "skip" else []}
    zeroed = {"missing_run": missing if missing_run == "zero" else [],
              "no_relevant": no_rel if no_relevant == "zero" else []}
    dropped = set(skipped["missing_run"]) | set(skipped["no_relevant"])
    return [q for q in qrels if q not in dropped], skipped, zeroed


def score(judged, specs):
    """{qid: {measure name: value}} for parsed measure specs [(name, base, k)]."""
    return {qid: {name: MEASURES[base].func(j, k) for name, base, k in specs}
            for qid, j in judged.items()}


def aggregate(per_query, specs):
    """Means (or sums, for counts) over the evaluated queries, in their order."""
    out = {}
    for name, base, _ in specs:
        values = [row[name] for row in per_query.values()]
        total = sum(values)
        if MEASURES[base].aggregate == "sum":
            out[name] = total
        else:
            out[name] = total / len(values) if values else 0.0
    return out


# === Readers: JSON ===

class _DuplicateKeys(dict):
    """A JSON object that had a key twice; validators report it with its path."""
    duplicate = None


def _object_pairs(pairs):
    obj = dict(pairs)
    if len(obj) < len(pairs):
        seen = set()
        obj = _DuplicateKeys(obj)
        obj.duplicate = next(k for k, _ in pairs if k in seen or seen.add(k))
    return obj


def check_object(obj, where, what, query=None):
    """A JSON object without repeated keys."""
    if not isinstance(obj, dict):
        fail(where, "expected an object of %s, not %s %s" % (what, type(obj).__name__, show(obj)), query)
    if isinstance(obj, _DuplicateKeys):
        fail(where, "key %s appears twice" % show(obj.duplicate), query)
    return obj


def read_text(path):
    """The text of a file (or '-' for stdin) as UTF-8; a BOM is dropped."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except OSError as exc:
        fail(path, "cannot read: %s" % (exc.strerror or exc))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        fail("%s:%d" % (path, line), "not UTF-8: byte 0x%02x at offset %d" % (data[exc.start], exc.start))


def parse_json(text, path):
    """Parse JSON text; errors name the line and column."""
    if not text.strip():
        fail(path, "file is empty")
    try:
        return json.loads(text, object_pairs_hook=_object_pairs)
    except json.JSONDecodeError as exc:
        fail("%s:%d:%d" % (path, exc.lineno, exc.colno), "invalid JSON: %s" % exc.msg)
    except RecursionError:
        fail(path, "invalid JSON: nested too deeply")


def qrels_from_json(obj, where="qrels"):
    """{qid: {doc: grade}} from {"q": ["d", ...]} (grade 1) or {"q": {"d": grade}}."""
    check_object(obj, where, "query IDs to labels")
    qrels = {}
    for qid, labels in obj.items():
        path = "%s.%s" % (where, qid)
        check_id(qid, where, what="query ID")
        if isinstance(labels, list):
            qrels[qid] = dict.fromkeys(check_ids(labels, path, qid), 1)
        else:
            check_object(labels, path, "document IDs to grades", qid)
            qrels[qid] = {check_id(doc, path, qid): check_grade(g, "%s.%s" % (path, doc), qid)
                          for doc, g in labels.items()}
    return qrels


def run_from_json(obj, where="runs"):
    """{qid: (docids, scores or None)} from list or {doc: score} rankings."""
    check_object(obj, where, "query IDs to rankings")
    runs = {}
    for qid, ranking in obj.items():
        path = "%s.%s" % (where, qid)
        check_id(qid, where, what="query ID")
        if isinstance(ranking, list):
            runs[qid] = (check_ids(ranking, path, qid), None)
        else:
            check_object(ranking, path, "document IDs to scores", qid)
            docs = [check_id(doc, path, qid) for doc in ranking]
            runs[qid] = (docs, [check_score(s, "%s.%s" % (path, d), qid) for d, s in ranking.items()])
    return runs


def split_fixture(obj, path):
    """The "qrels" and "runs" members of a fixture object."""
    if not isinstance(obj, dict):
        fail(path, 'expected a JSON object with "qrels" and "runs", not %s' % type(obj).__name__)
    check_object(obj, path, '"qrels" and "runs"')
    missing = [key for key in ("qrels", "runs") if key not in obj]
    if missing:
        fail(path, "missing %s: a fixture is {\"qrels\": {...}, \"runs\": {...}}"
             % " and ".join('"%s"' % m for m in missing))
    return obj["qrels"], obj["runs"]


# === Ranking ===

def rank_run(runs, qrels, depth=None):
    """{qid: Judged} for every ranked query that has labels."""
    judged = {}
    for qid, (docids, scores) in runs.items():
        labels = qrels.get(qid)
        if labels is None:
            continue
        if scores is not None:
            docids = [d for _, d in sorted(zip(scores, docids), reverse=True)]
        judged[qid] = judge(*rank_list(docids, labels, depth), labels)
    return judged


def run_evaluation(qrels, runs, specs, level=1, depth=None, missing_run="error",
                   unlabeled="error", no_relevant="error", where=""):
    """Apply the query policies, rank, score and aggregate: the general result."""
    qids, skipped, zeroed = apply_policies(qrels, runs, level, missing_run, unlabeled,
                                           no_relevant, where)
    ranked = rank_run(runs, qrels, depth)
    judged = {q: ranked[q] if q in ranked else judge({}, 0, qrels[q], level) for q in qids}
    per_query = score(judged, specs)
    return {"queries": len(per_query), "measures": aggregate(per_query, specs),
            "per_query": per_query, "skipped": skipped, "zeroed": zeroed}


def evaluate(qrels, runs, k=DEFAULT_K):
    """Recall@k and MRR@k of JSON-shaped qrels and runs: the seed script's result.

    qrels: {qid: [relevant doc, ...]} or {qid: {doc: grade}}
    runs:  {qid: [doc, ...]} in rank order, or {qid: {doc: score}}
    Returns {"k", "queries", "mean_recall_at_k", "mrr_at_k", "per_query"};
    raises EvalError (a ValueError) on bad data or differing query sets.

    >>> evaluate({"q1": ["d1"]}, {"q1": ["d9", "d1"]}, k=3)["mrr_at_k"]
    0.5
    """
    k = check_cutoff(k)
    result = run_evaluation(qrels_from_json(qrels), run_from_json(runs),
                            [("R@%d" % k, "R", k), ("RR@%d" % k, "RR", k)])
    return seed_result(result, k)


def seed_result(result, k):
    """The seed script's output shape from a general result with R@k and RR@k."""
    r, rr = "R@%d" % k, "RR@%d" % k
    return {"k": k, "queries": result["queries"],
            "mean_recall_at_k": result["measures"][r], "mrr_at_k": result["measures"][rr],
            "per_query": {q: {"recall": row[r], "rr": row[rr]}
                          for q, row in result["per_query"].items()}}


# === Command line ===

EPILOG = """\
inputs:
  FIXTURE is a JSON object {"qrels": {...}, "runs": {...}}.
  qrels: {"q1": ["d1", "d2"]} (each listed ID has grade 1)
         or {"q1": {"d1": 2, "d7": 0}} (integer grades; <= 0 is judged non-relevant)
  runs:  {"q1": ["d9", "d2"]} (list order is the ranking)
         or {"q1": {"d9": 12.5, "d2": 3.0}} (score descending, ties by ID descending)
  An explicitly empty ranking is valid and scores zero.

measures:
%s

exit statuses:
  0 evaluated (and every gate passed); 1 a gate failed; 2 bad input or usage

examples:
  python3 rag_retrieval_eval.py retrieval_fixture.json --k 3
  python3 rag_retrieval_eval.py retrieval_fixture.json --k 1 3 10
"""


def _cutoff_arg(text):
    try:
        return parse_cutoff(text)
    except EvalError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one line and exit status 2."""

    def error(self, message):
        raise EvalError("%s (see --help)" % message)


def measure_help():
    lines = []
    for spec in MEASURES.values():
        shape = {"required": "%s@k", "optional": "%s, %s@k", "none": "%s"}[spec.cutoff]
        names = shape % ((spec.name,) * shape.count("%s"))
        lines.append("  %-18s %s" % (names, spec.doc))
    return "\n".join(lines)


def build_parser():
    parser = _Parser(prog="rag_retrieval_eval.py", formatter_class=argparse.RawDescriptionHelpFormatter,
                     description=__doc__.split("\n\n")[0], epilog=EPILOG % measure_help())
    parser.add_argument("fixture", help="JSON fixture with qrels and runs")
    parser.add_argument("--k", nargs="+", type=_cutoff_arg, metavar="K",
                        help="cutoff(s) for R@k and RR@k (default %d)" % DEFAULT_K)
    return parser


def main(argv=None):
    """Parse, load, compute, print; return the exit status."""
    try:
        args = build_parser().parse_args(argv)
        ks = args.k or [DEFAULT_K]
        qrels_obj, runs_obj = split_fixture(parse_json(read_text(args.fixture), args.fixture),
                                            args.fixture)
        qrels = qrels_from_json(qrels_obj, "%s: qrels" % args.fixture)
        runs = run_from_json(runs_obj, "%s: runs" % args.fixture)
        specs = [s for k in ks for s in (("R@%d" % k, "R", k), ("RR@%d" % k, "RR", k))]
        result = run_evaluation(qrels, runs, specs, where=args.fixture)
    except EvalError as exc:
        sys.stderr.write("%s: error: %s\n" % (PROG, exc))
        return 2
    except SystemExit as exc:  # --help
        return exc.code
    if len(ks) == 1:
        result = seed_result(result, ks[0])
    print(json.dumps(result, indent=2))
    return 0


def _run_script():
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:  # `... | head` closed our stdout: not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = 0
    sys.exit(status)


if __name__ == "__main__":
    _run_script()
