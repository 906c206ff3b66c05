"""Tests for rag_retrieval_eval: python3 -m unittest -v

Golden values are computed by hand in the comments beside them.  The CLI runs
in-process through main([...]) with stdout and stderr captured; a few tests
run the real script for what only a process shows (exit status at exit, broken
pipes, closed streams, a terminal).  The readers' tests are written once and
run against the reference readers and the fast paths alike.
"""


import atexit


import contextlib


import copy


import csv


import doctest


import fractions


import functools


import gzip


import hashlib


import inspect


import io


import itertools


import json


import math


import os


import py_compile


import random


import re


import shutil


import stat


import statistics


import subprocess


import sys


import tempfile


import threading


import time


import types


import unittest


import unittest.mock


import zlib


from pathlib import Path


from xml.etree import ElementTree


import rag_retrieval_eval as rre


ROOT = Path(__file__).resolve().parent


SCRIPT = ROOT / "rag_retrieval_eval.py"


FIXTURE = ROOT / "retrieval_fixture.json"


SEED_STDOUT = """{
  "k": 3,
  "queries": 3,
  "mean_recall_at_k": 0.6666666666666666,
  "mrr_at_k": 0.5,
  "per_query": {
    "q1": {
      "recall": 1.0,
      "rr": 0.5
    },
    "q2": {
      "recall": 1.0,
      "rr": 1.0
    },
    "q3": {
      "recall": 0.0,
      "rr": 0.0
    }
  }
}
"""


def load_tests(loader, tests, ignore):
    tests.addTests(doctest.DocTestSuite(rre))
    return tests


def unrendered(call, *args, **keywords):
    """A library call's result as the formatters read it: its breaches Breach records."""
    with unittest.mock.patch.object(rre, "jsonable", lambda result: result):
        return call(*args, **keywords)


def cli(*args, stdin=None):
    """Run main([...]) in-process; return (status, stdout, stderr)."""
    out, err, saved = io.StringIO(), io.StringIO(), sys.stdin
    if stdin is not None:
        sys.stdin = types.SimpleNamespace(buffer=io.BytesIO(stdin))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = rre.main([str(a) for a in args])
    finally:
        sys.stdin = saved
    return status, out.getvalue(), err.getvalue()


def without_inputs(value, whole=False):
    """A result, or cli()'s (status, stdout, stderr), with each manifest's "inputs" emptied: all
    that differs between one evaluation of files under other names, or of a library call's
    objects; whole: without the manifest (another --match, say)."""
    if isinstance(value, tuple):
        status, out, err = value
        return (status, json.dumps(without_inputs(json.loads(out), whole), indent=2) + "\n" if out.startswith("{")
                else out, err)
    value = copy.deepcopy(value)
    for result in value["runs"].values() if "runs" in value else [value]:
        if whole:
            del result["manifest"]
        else:
            result["manifest"]["inputs"] = {}
    return value


@functools.lru_cache(maxsize=None)
def reference_module():
    """The module with FAST_PATHS = False: a copy whose twins are the reference ones (made
    once: it keeps no state from one call to the next)."""
    module = types.ModuleType("rag_retrieval_eval_reference")
    module.__file__ = str(SCRIPT)
    source = SCRIPT.read_text(encoding="utf-8").replace("\nFAST_PATHS = True", "\nFAST_PATHS = False", 1)
    exec(compile(source, str(SCRIPT), "exec"), module.__dict__)
    return module


def both_paths(*args, stdin=None):
    """cli(...) through the fast twins and through the reference ones."""
    reference = reference_module()
    saved, rre_main = rre.main, reference.main
    fast = cli(*args, stdin=stdin)
    rre.main = rre_main
    try:
        return fast, cli(*args, stdin=stdin)
    finally:
        rre.main = saved


@functools.lru_cache(maxsize=None)
def runnable_script():
    """The script, compiled once for the test processes: where no bytecode is written
    (PYTHONDONTWRITEBYTECODE), each process would compile the whole file again, which costs
    more than its own work.  The code run is the script's, byte for byte."""
    folder = tempfile.mkdtemp()
    atexit.register(shutil.rmtree, folder, True)
    return py_compile.compile(str(SCRIPT), cfile=os.path.join(folder, SCRIPT.name + "c"), doraise=True)


def cli_process(*args, stdin=None, **popen):
    """Run the real script in its own process; return (status, stdout, stderr).  Every test
    process runs with -S: the script needs no site package, and importing them is slow."""
    proc = subprocess.run([sys.executable, "-S", runnable_script(), *map(str, args)], input=stdin,
                          capture_output=True, **popen)
    return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")


def rejected(test, status, out, err, *fragments):
    """Assert a refusal: exit 2, nothing on stdout, one line on stderr holding each fragment."""
    test.assertEqual((status, out), (2, ""), err)
    test.assertNotIn("Traceback", err)
    test.assertEqual(len(err.splitlines()), 1, err)
    test.assertTrue(err.startswith("rag_retrieval_eval: error: "), err)
    for fragment in fragments:
        test.assertIn(fragment, err)


# (name, file bytes or None for no file, extra CLI args, fragments the one-line message must hold)
FIXTURE_REJECTIONS = [
    ("missing file", None, [], ["nope.json", "cannot read", "No such file"]),
    ("directory", "DIR", [], ["cannot read", "directory"]),
    ("empty file", b"", [], ["f.json", "file is empty"]),
    ("blank file", b"  \n", [], ["file is empty"]),
    ("not UTF-8", b'{"qrels": {"q1": ["d\xff"]}}', [], ["f.json:1", "not UTF-8", "0xff"]),
    ("invalid JSON", b'{"qrels": {"q1": ["d1"],\n "runs": }', [], ["f.json:2:10", "invalid JSON"]),
    ("invalid JSON after blank lines", b'\n\n{"qrels": }', [], ["f.json:3:11", "invalid JSON"]),
    ("deep nesting", b"[" * 100000 + b"]" * 100000, [], ["nested too deeply"]),
    ("top level list", b"[1, 2]", [], ["[0]", "expected an object of fields", "int 1"]),
    ("missing runs", {"qrels": {"q1": ["d1"]}}, [], ['missing "runs"']),
    ("missing both", {"other": 1}, [], ['missing "qrels" and "runs"']),
    ("qrels not object", {"qrels": ["d1"], "runs": {}}, [], ["qrels", "expected an object", "list"]),
    ("runs not object", {"qrels": {"q1": ["d1"]}, "runs": [["d1"]]}, [], ["runs", "list"]),
    ("ranking not a list", {"qrels": {"q1": ["d1"]}, "runs": {"q1": "d1"}}, [],
     ["runs.q1", "'q1'", "str 'd1'"]),
    ("blank document ID", {"qrels": {"q1": ["d1"]}, "runs": {"q1": ["d1", " "]}}, [],
     ["runs.q1[1]", "query 'q1'", "' ' is blank"]),
    ("empty document ID", {"qrels": {"q1": [""]}, "runs": {"q1": ["d1"]}}, [],
     ["qrels.q1[0]", "'' is blank"]),
    ("numeric document ID", {"qrels": {"q1": ["d1"]}, "runs": {"q1": ["d1", 7]}}, [],
     ["runs.q1[1]", "must be a string", "int 7"]),
    ("document ranked twice", {"qrels": {"q1": ["d1"]}, "runs": {"q1": ["d1", "d2", "d1"]}}, [],
     ["runs.q1[2]", "'d1' appears twice", "first at", "runs.q1[0]"]),
    ("document labeled twice", {"qrels": {"q1": ["d1", "d1"]}, "runs": {"q1": ["d1"]}}, [],
     ["qrels.q1[1]", "'d1' appears twice"]),
    ("blank query ID", {"qrels": {" ": ["d1"]}, "runs": {" ": ["d1"]}}, [],
     ["qrels", "query ID ' ' is blank"]),
    ("labeled query without ranking", {"qrels": {"q1": ["d1"], "q2": ["d2"]}, "runs": {"q1": ["d1"]}},
     [], ["query sets differ", "1 labeled query has no ranking ('q2')"]),
    ("ranked query without labels", {"qrels": {"q1": ["d1"]}, "runs": {"q1": ["d1"], "q9": []}},
     [], ["query sets differ", "1 ranked query has no labels ('q9')"]),
    ("many missing queries", {"qrels": {"q%d" % i: ["d"] for i in range(9)}, "runs": {"q0": ["d"]}},
     [], ["8 labeled queries", "'q1', 'q2', 'q3' and 5 more"]),
    ("no relevant label", {"qrels": {"q1": ["d1"], "q2": []}, "runs": {"q1": ["d1"], "q2": ["d1"]}},
     [], ["1 query has no relevant label", "'q2'"]),
    ("grades all zero", {"qrels": {"q1": {"d1": 0}}, "runs": {"q1": ["d1"]}}, [],
     ["no relevant label", "'q1'"]),
    ("non-integer grade", {"qrels": {"q1": {"d1": 1.5}}, "runs": {"q1": ["d1"]}}, [],
     ["qrels.q1.d1", "grade 1.5 is not an integer"]),
    ("boolean grade", {"qrels": {"q1": {"d1": True}}, "runs": {"q1": ["d1"]}}, [],
     ["grade True is not an integer"]),
    ("NaN score", b'{"qrels": {"q1": ["d1"]}, "runs": {"q1": {"d1": NaN}}}', [],
     ["runs.q1.d1", "score nan is not a finite number"]),
    ("infinite score", b'{"qrels": {"q1": ["d1"]}, "runs": {"q1": {"d1": -Infinity}}}', [],
     ["score -inf"]),
    ("string score", {"qrels": {"q1": ["d1"]}, "runs": {"q1": {"d1": "3"}}}, [],
     ["runs.q1.d1", "score '3' is not a finite number"]),
    ("document key twice in scored run",
     b'{"qrels": {"q1": ["d1"]}, "runs": {"q1": {"d1": 1, "d1": 2}}}',
     [], ["runs.q1", "key 'd1' appears twice"]),
    ("query key twice", b'{"qrels": {"q1": ["d1"], "q1": ["d2"]}, "runs": {"q1": ["d1"]}}',
     [], ["qrels", "key 'q1' appears twice"]),
    ("k zero", {"qrels": {"q1": ["d1"]}, "runs": {"q1": ["d1"]}}, ["--k", "0"],
     ["--k", "positive integer", "'0'"]),
    ("k negative", {"qrels": {"q1": ["d1"]}, "runs": {"q1": ["d1"]}}, ["--k=-1"], ["positive integer", "'-1'"]),
    ("k fraction", {"qrels": {"q1": ["d1"]}, "runs": {"q1": ["d1"]}}, ["--k", "1.5"], ["'1.5'"]),
    ("k text", {"qrels": {"q1": ["d1"]}, "runs": {"q1": ["d1"]}}, ["--k", "ten"], ["'ten'"]),
    ("unknown option", {"qrels": {"q1": ["d1"]}, "runs": {"q1": ["d1"]}}, ["--kk", "3"],
     ["unrecognized arguments", "--kk"]),
    ("unknown option, unprintable", {"qrels": {"q1": ["d1"]}, "runs": {"q1": ["d1"]}}, ["--kk=\x01"],
     ["error: unrecognized arguments: --kk=\\x01 (see --help)"]),  # escaped, not quoted
]


def judged(*grades, labels=None, num_ret=None, level=1):
    """A Judged record: grades in rank order, None for an unlabeled document."""
    ranks = {"d%d" % r: r for r, g in enumerate(grades, 1) if g is not None}
    all_labels = {"d%d" % r: g for r, g in enumerate(grades, 1) if g is not None}
    all_labels.update(labels or {})
    return rre.judge(ranks, len(grades) if num_ret is None else num_ret, all_labels, level)


def value(name, q):
    spec = rre.parse_measure(name)
    return rre._scorer(spec)(q, spec.k)


QRELS_TXT = """\
# query q1 has two relevant documents, q2 one (grade 2), q3 none retrieved
q1 0 d1 1
q1 0 d2 1
q1 0 d5 0
q2 0 d3 2
q3 0 d4 1
"""


# q1 is written out of score order and has a tie: d2 and d1 both 2.0, so d2 ranks first
RUN_TXT = """\
q1 Q0 d1 1 2.0 tag
q1 Q0 d9 2 3.5 tag
q1 Q0 d2 3 2.0 tag

q2\tQ0\td3\t1\t7\ttag
q2 Q0 d8 2 6
q3 Q0 d8 1 1.0 tag
q3 Q0 d9 2 0.5 tag
"""


# (name, qrels text, run text, extra args, fragments of the one-line message)
GOOD_RUN = "q1 Q0 d1 1 1.0 t\n"


GOOD_QRELS = "q1 0 d1 1\n"


TREC_REJECTIONS = [
    ("a control character on the third line of labels", "q1 0 d1 1\nq1 0 d2 1\nq1 0 d\x01 1\n",
     GOOD_RUN, [], ["qrels.txt:3: control character '\\x01': not text"]),
    ("qrels mixing 4 and 3 columns", "q1 0 d1 1\nq1 d2 1\n", GOOD_RUN, [],
     ["qrels.txt:2", "expected 4 columns (QID ITER DOCID GRADE) as on line 1", "found 3"]),
    ("qrels mixing 3 and 4 columns", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1 0 d2 1\n", GOOD_RUN, [],
     ["qrels.txt:3", "expected tab-separated 3 columns (QID DOCID GRADE) as on line 2", "found 1"]),
    ("qrels with 5 columns", "q1 0 d1 1 x\n", GOOD_RUN, [], ["qrels.txt:1", "found 5"]),
    ("TSV header twice", "query-id\tcorpus-id\tscore\nq1\td1\t1\nquery-id\tcorpus-id\tscore\n", GOOD_RUN,
     [], ["qrels.txt:3", "query 'query-id'", "grade 'score' is not an integer"]),
    ("non-integer grade", "# c\nq1 0 d1 1.5\n", GOOD_RUN, [], ["qrels.txt:2", "query 'q1'", "grade '1.5'"]),
    ("document labeled twice", "q1 0 d1 1\nq2 0 d1 1\nq1 0 d1 0\n", GOOD_RUN, [],
     ["qrels.txt:3", "query 'q1'", "'d1' is labeled twice (first at line 1)"]),
    ("empty qrels file", "", GOOD_RUN, [], ["qrels.txt", "no labels"]),
    ("qrels of comments only", "# nothing\n\n", GOOD_RUN, [], ["qrels.txt", "no labels"]),
    ("run with 4 columns", GOOD_QRELS, "q1 Q0 d1 1.0\n", [], ["run.txt:1", "expected 5 or more columns", "found 4"]),
    ("run line short among good ones", GOOD_QRELS, GOOD_RUN * 0 + "q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2\n", [],
     ["run.txt:2", "found 4"]),
    ("non-numeric score", GOOD_QRELS, "q1 Q0 d1 1 abc t\n", [], ["run.txt:1", "query 'q1'", "score 'abc'"]),
    ("NaN score", GOOD_QRELS, "q1 Q0 d2 1 2.0 t\nq1 Q0 d1 2 nan t\n", [], ["run.txt:2", "score 'nan'"]),
    ("infinite score", GOOD_QRELS, "q1 Q0 d1 1 -inf t\n", [], ["score '-inf'"]),
    ("overflowing score", GOOD_QRELS, "q1 Q0 d1 1 1e999 t\n", [], ["score '1e999'"]),
    ("score with underscore", GOOD_QRELS, "q1 Q0 d1 1 1_0 t\n", [], ["score '1_0'"]),
    ("document ranked twice", GOOD_QRELS, "q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\nq1 Q0 d1 3 0 t\n", [],
     ["run.txt:3", "query 'q1'", "'d1' is ranked twice (first at line 1)"]),
    ("empty run", GOOD_QRELS, "\n# only a comment\n", [], ["run.txt", "no rankings"]),
    ("run not UTF-8", GOOD_QRELS, b"q1 Q0 d1 1 1.0 t\nq1 Q0 d\xe9 2 0.5 t\n", [], ["run.txt:2", "not UTF-8", "0xe9"]),
    ("qrels not UTF-8", b"q1 0 d\xff 1\n", GOOD_RUN, [], ["qrels.txt:1", "not UTF-8"]),
    ("broken gzip", GOOD_QRELS, b"\x1f\x8b\x08\x00garbage", [], ["run.txt", "cannot read"]),
    ("unknown measures listed at once", GOOD_QRELS, GOOD_RUN, ["-m", "R@10,MAPX,ndcg@x", "-m", "Rprec@5,R"],
     ["unknown measure 'MAPX'", "'ndcg@x': cutoff must be a positive integer", "'Rprec@5' takes no cutoff",
      "'R' needs a cutoff", "known measures: R@k, P@k, RR, RR@k"]),
    ("cutoff zero in a measure", GOOD_QRELS, GOOD_RUN, ["-m", "P@0"], ["'P@0'", "positive integer"]),
    ("bad depth", GOOD_QRELS, GOOD_RUN, ["--depth", "0"], ["--depth", "'0'"]),
    ("bad relevance level", GOOD_QRELS, GOOD_RUN, ["--relevance-level", "-1"], ["relevance level", "'-1'"]),
    ("bad policy", GOOD_QRELS, GOOD_RUN, ["--missing-run", "ignore"], ["--missing-run", "'ignore'"]),
    ("qrels without run", GOOD_QRELS, None, [], ["both --qrels (or --evidence) and --run"]),
    ("fixture and files", GOOD_QRELS, GOOD_RUN, ["FIXTURE"], ["not both"]),
    ("run query without labels", GOOD_QRELS, GOOD_RUN + "q2 Q0 d1 1 1 t\n", [],
     ["run.txt", "query sets differ", "1 ranked query has no labels ('q2')"]),
    ("labeled query without run", GOOD_QRELS + "q2 0 d1 1\n", GOOD_RUN, [],
     ["run.txt", "1 labeled query has no ranking ('q2')"]),
    ("no relevant label names the qrels", GOOD_QRELS + "q2 0 d1 0\n", GOOD_RUN + "q2 Q0 d1 1 1 t\n", [],
     ["qrels.txt", "no relevant label at level 1 ('q2')"]),
    ("missing run file", GOOD_QRELS, "MISSING", [], ["nothere.txt", "cannot read"]),
]


def random_trec_run(rng, contiguous=True):
    """A valid TREC run: ties, comments (one of data width), blank lines, odd spacing,
    5 to 7 columns, a no-break space in an ID; queries contiguous or not."""
    rows = []
    for q in rng.sample(range(8), rng.randint(1, 6)):
        qid = "q%d" % q if rng.random() < 0.8 else "q%d\u00a0" % q
        for d in rng.sample(range(40), rng.randint(1, 12)):
            cols = [qid, "Q0", "d%d" % d, str(d), rng.choice(["1", "2.5", "-0.5", "3e1", "2.50"]), "tag"]
            rows.append(rng.choice([" ", "\t", "  "]).join(cols[:rng.choice([5, 6, 6, 6])])
                        + rng.choice(["", "", " extra"]))
    if not contiguous:
        rng.shuffle(rows)
    for _ in range(rng.randint(0, 3)):
        rows.insert(rng.randint(0, len(rows)), rng.choice(["# q1 Q0 d9 1 5.0 t", "", "#", "   "]))
    end = rng.choice(["\n", "\r\n"])
    text = end.join(rows) + rng.choice([end, ""])
    return (b"\xef\xbb\xbf" if rng.random() < 0.2 else b"") + text.encode()


def random_damage(rng, data):
    """The same run with one mistake (or a lone CR, which is valid) in a random line."""
    lines = data.split(b"\n")
    i = rng.randrange(len(lines))
    lines[i] = rng.choice([
        b"q1 Q0 d1", b"q1 Q0 dx 1 x t", b"q1 Q0 dx 1 nan", b"q1 Q0 dx 1 1_0", b"q1 Q0 dx 1 inf",
        b"q1 Q0 d\xff 1 1", b"q1 Q0 d\x01 1 1", b"q1 Q0 d\x00 1 1", b"q1 Q0 dz 1 1\rq1 Q0 dy 1 2",
        b"q1 Q0 d\xc2\x85 1 1", lines[i] + b"\n" + lines[i] if lines[i].strip() else b"q1 Q0 d1 1 1\nq1 Q0 d1 1 1"])
    return b"\n".join(lines)


QRELS_FOR_RANDOM = {"q%d%s" % (q, s): {"d%d" % d: d % 4 - 1 for d in range(0, 40, 3)}
                    for q in range(8) for s in ("", "\u00a0")}


def outcome(read):
    """('ok', value) or ('error', message) of a read."""
    try:
        return "ok", read()
    except rre.EvalError as exc:
        return "error", str(exc)


def json_fixture(ranking=lambda q: ["d%d" % d for d in range(q, q + 8)]):
    return {"qrels": {"q%d" % q: {"d%d" % d: d % 3 for d in range(0, 40, 2)} for q in range(20)},
            "runs": {"q%d" % q: ranking(q) for q in range(20)}}


def brute_force_p(diffs):
    """The sign-flip p-value by listing every assignment (the definition itself)."""
    observed = abs(sum(diffs))
    sums = [abs(sum(s * d for s, d in zip(signs, diffs))) for signs in
            itertools.product((1, -1), repeat=len(diffs))]
    return sum(1 for x in sums if x >= observed - 1e-9) / len(sums)


def fixture(runs, qrels=None):
    return {"qrels": qrels or {"q1": {"d1": 1, "d2": 1, "d5": 0}, "q2": ["d3"], "q3": ["d4"]},
            "runs": runs}


BASE_RUNS = {"q1": ["d1", "d2", "d9"], "q2": ["d8", "d3", "d9"], "q3": ["d4", "d9", "d10"]}


CAND_RUNS = {"q1": ["d9", "d2", "d1"], "q2": ["d3", "d8", "d9"], "q3": ["d8", "d9", "d10"]}


ONE = {"q1": ["d1"]}


# (name, fixture or None, extra args, fragments): every one exit 2, one line, nothing on stdout
EDGE_REJECTIONS = [
    ("empty labels", {"qrels": {}, "runs": {}}, [], ["qrels: no labels"]),
    ("every query skipped", {"qrels": {"q2": ["d2"]}, "runs": {"q1": ["d1"]}},
     ["--missing-run", "skip", "--unlabeled", "skip"],
     ["no query left to evaluate", "1 missing run ('q2')", "1 unlabeled ('q1')"]),
    ("nothing relevant, skipped", {"qrels": {"q1": []}, "runs": {"q1": ["d1"]}}, ["--no-relevant", "skip"],
     ["no query left to evaluate", "1 no relevant ('q1')"]),
    ("empty run skipped away", {"qrels": ONE, "runs": {}}, ["--missing-run", "skip"], ["no query left"]),
    ("400-digit score", b'{"qrels": {"q1": ["d1"]}, "runs": '
                        b'{"q1": {"d1": 1%s}}}' % (b"0" * 400), [],
     ["runs.q1.d1", "is not a finite number"]),
    ("5000-digit grade", b'{"qrels": {"q1": {"d1": 1%s}}, "runs": '
                         b'{"q1": ["d1"]}}' % (b"0" * 5000), [],
     ["f.json"]),
    ("20-digit grade", b'{"qrels": {"q1": {"d1": 1%s}}, "runs": {"q1": ["d1"]}}' % (b"0" * 20), [],
     ["qrels.q1.d1", "out of range"]),
    ("5000-digit cutoff", {"qrels": ONE, "runs": ONE}, ["-m", "R@1" + "0" * 5000], ["cutoff must be"]),
    ("lone surrogate", b'{"qrels": {"q\\ud800": ["d1"]}, "runs": {"q\\ud800": ["d1"]}}', ["--format", "trec"],
     ["query ID 'q\\ud800' holds a lone surrogate"]),
    ("tab in an ID", {"qrels": {"q1": ["d\t1"]}, "runs": {"q1": ["d\t1"]}}, ["--format", "table"],
     ["qrels.q1[0]", "holds a control character ('\\t')"]),
    ("newline in a scored ID", {"qrels": ONE, "runs": {"q1": {"d\n1": 1.0}}}, [], ["'d\\n1' holds"]),
    ("gate without a baseline", {"qrels": ONE, "runs": ONE}, ["--max-mean-drop", "0.1"],
     ["--max-mean-drop needs --baseline"]),
    ("query gate without a baseline", {"qrels": ONE, "runs": ONE}, ["--max-query-drop", "0"],
     ["--max-query-drop needs --baseline"]),
    ("trec format of a comparison", {"qrels": ONE, "runs": ONE}, ["--baseline", "SELF", "--format", "trec"],
     ["--format trec has no place for a comparison"]),
    ("empty chunk separator", {"qrels": ONE, "runs": ONE}, ["--chunk-separator", ""], ["--chunk-separator"]),
    ("standard input twice", None, ["-", "--baseline", "-"], ["standard input can be read once"]),
    ("zero permutations", {"qrels": ONE, "runs": ONE}, ["--permutations", "0"], ["permutations must be"]),
    ("drop limit with underscore", {"qrels": ONE, "runs": ONE}, ["--baseline", "SELF", "--max-mean-drop", "1_0"],
     ["drop limit", "'1_0'"]),
    ("space before the cutoff", {"qrels": ONE, "runs": ONE}, ["-m", "R @5"],  # blanks separate
     ["'R' needs a cutoff", "unknown measure '@5'"]),
    ("space after the at", {"qrels": ONE, "runs": ONE}, ["-m", "R@ 5"],
     ["'R@': cutoff must be", "measure '5'"]),
    ("ranked ID blank once cut", {"qrels": ONE, "runs": {"q1": ["d1", "#2"]}}, ["--chunk-separator", "#"],
     ["runs.q1", "ranked ID '#2' is blank once cut at '#'"]),
]


SEED_RECORDS = [("q1", ["d1", "d2"], ["d9", "d2", "d1"]), ("q2", ["d3"], ["d3", "d8", "d9"]),
                ("q3", ["d4"], ["d8", "d9", "d10"])]


def json_lines(query="query_id", labels="relevant", ranking="retrieved", records=SEED_RECORDS, extra=True):
    """The seed fixture as JSON Lines, under the given field names (None leaves a role out)."""
    lines = []
    for qid, relevant, retrieved in records:
        record = {query: qid, "question": "what is %s?" % qid} if extra else {query: qid}
        if labels:
            record[labels] = relevant
        if ranking:
            record[ranking] = retrieved
        lines.append(json.dumps(record))
    return "\n".join(lines) + "\n"


def table_rows(markdown):
    """The cells of each Markdown table row: even a naive split at every pipe must hold."""
    return [line.split("|")[1:-1] for line in markdown.splitlines() if line.startswith("|")]


GROUP_QRELS = {"q%d" % i: {"d%d" % i: 1, "x%d" % i: 0} for i in range(12)}


GROUPS = {"billing": ["q0", "q1", "q2", "q3", "q4", "q5"], "multi-hop": ["q8", "q6", "q7"],
          "names": ["q9", "q1"]}  # q1 is in two groups, q10 and q11 in none


def group_run(rank_of):
    """Each query's relevant document d<i> at rank rank_of(i) (None: not retrieved) among fillers."""
    runs = {}
    for i in range(12):
        ranking = ["f%d_%d" % (i, j) for j in range(4)]
        if rank_of(i) is not None:
            ranking.insert(rank_of(i) - 1, "d%d" % i)
        runs["q%d" % i] = ranking
    return runs


BASE_GROUP_RUN = group_run(lambda i: 1 + i % 3)


# multi-hop: RR 1, 1/2, 1/3 -> 1/2 each
CAND_GROUP_RUN = group_run(lambda i: 2 if 6 <= i <= 8 else 1 + i % 3)


def three_runs():
    return {"a.json": group_run(lambda i: 1), "b.json": CAND_GROUP_RUN, "c.json": group_run(lambda i: None if i < 4 else 2)}


GROUP_REJECTIONS = [  # (files, arguments, fragments of the one line on stderr)
    ({"g.json": {"billing": ["q1", "q99"]}}, ["--groups", "g.json"],
     ["g.json: billing[1]: query 'q99': group 'billing' names a query that has no labels"]),
    ({"g.txt": "q1 a\nq99 b\n"}, ["--groups", "g.txt"], ["g.txt:2: query 'q99': group "
                                                         "'b' names a query"]),
    ({"g.json": {"billing": []}}, ["--groups", "g.json"], ["g.json: billing: group "
                                                           "'billing' is empty"]),
    ({"g.json": {}}, ["--groups", "g.json"], ["g.json: no groups"]),
    ({"g.txt": "# nothing\n"}, ["--groups", "g.txt"], ["g.txt: no groups"]),
    ({"g.json": {"a": ["q1", "q2", "q1"]}}, ["--groups", "g.json"],
     ["g.json: a[2]: query 'q1' is listed twice in group 'a' (first at g.json: a[0])"]),
    ({"g.txt": "q1 a\nq2 a\nq1 a\n"}, ["--groups", "g.txt"], ["g.txt:3: query 'q1' is "
                                                              "listed twice in group 'a' "
                                                              "(first at g.txt:1)"]),
    ({"g.txt": "q1 a b\n"}, ["--groups", "g.txt"], ["g.txt:1: expected 2 columns (QID "
                                                    "GROUP), found 3"]),
    ({"g.json": {"a": "q1"}}, ["--groups", "g.json"], ["g.json: a: expected a list of "
                                                       "query IDs, not str"]),
    ({"g.json": {" ": ["q1"]}}, ["--groups", "g.json"], ["group name ' ' is blank"]),
    ({}, ["--max-group-drop", "0.1"], ["--max-group-drop needs --baseline"]),
    ({"b.json": BASE_GROUP_RUN}, ["--baseline", "b.json", "--max-group-drop", "0.1"], ["--max-group-drop needs query groups"]),
    ({"g.json": GROUPS}, ["--groups", "g.json", "--missing-run", "skip", "--unlabeled", "skip"], None),
]


def old_bootstrap_means(column, rng, resamples):
    """Today's method before issue 13, for comparison: rng.choices picks, exact float means."""
    n = len(column)
    return [math.fsum(map(column.__getitem__, rng.choices(range(n), k=n))) / n for _ in range(resamples)]


def statistics_mean(values):
    return math.fsum(values) / len(values)


def statistics_sd(values):
    mean = statistics_mean(values)
    return math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1))


# --- Issue 18: the first real file works ---


def parsed_svg(path):
    import xml.etree.ElementTree as ET
    return ET.parse(str(path)).getroot()


def plot_top(root):
    """Where a plot's first panel starts: below the title's lines."""
    return 36 + 20 * max(1, len(list(root.iter("{http://www.w3.org/2000/svg}tspan"))))


def digits_run():
    """Ten queries labeled with digit IDs; q8 and q9 rank only documents labeled for other queries."""
    qrels = {"q%d" % i: {str(100 + i): 1} for i in range(10)}
    runs = {"q%d" % i: [str(100 + i), "900"] for i in range(8)}
    runs.update({"q8": ["100", "101"], "q9": ["102", "103"]})
    return qrels, runs


# sets A = {{d1, d2}, {d3}}, B = {{d9}}
EVIDENCE_EXAMPLE = {"q1": [[["d1", "d2"], ["d3"]], [["d9"]]]}


EVIDENCE_RANKING = ["d4", "d2", "d5", "d3", "d9"]


EVIDENCE_VALUES = {"EvidenceRecall@3": 0.5, "EvidenceSuccess@3": 0.0, "EvidenceRecall@4": 1.0,
                   "EvidenceSuccess@4": 1.0, "EvidenceRR": 0.25}  # the contract's worked example


EVIDENCE_NAMES = ",".join(EVIDENCE_VALUES)


def evidence_by_loops(sets, ranking, k=None):
    """(EvidenceRecall, EvidenceSuccess, EvidenceRR) within k of a ranking of document IDs,
    from section 16's words, one prefix at a time: the independent implementation."""
    top = ranking if k is None else ranking[:k]

    def complete(prefix, evidence_set):
        return all(any(d in prefix for d in slot) for slot in evidence_set)
    recall = max(sum(1 for slot in s if any(d in top for d in slot)) / len(s) for s in sets)
    success = 1.0 if any(complete(top, s) for s in sets) else 0.0
    rr = next((1.0 / r for r in range(1, len(top) + 1) if any(complete(top[:r], s) for s in sets)), 0.0)
    return recall, success, rr


def random_evidence(rng, docs, chunked):
    """One query's evidence in a random one of the three nestings, and as sets of slots."""
    def slot():
        ids = rng.sample(docs, rng.randint(1, 3))
        return [d + "#%d" % rng.randint(1, 2) if chunked and rng.random() < 0.5 else d for d in ids]
    nesting = rng.choice((1, 2, 3))
    if nesting == 1:
        entry = rng.sample(docs, rng.randint(1, 3))
        return entry, [[[d] for d in entry]]
    sets = [[slot() for _ in range(rng.randint(1, 3))] for _ in range(rng.randint(1, 3) if nesting == 3 else 1)]
    return (sets[0] if nesting == 2 else sets), sets


BUDGET_QRELS = {"q1": ["d1", "d3", "d5"]}


BUDGET_RUN = {"q1": ["d1", "d2", "d3", "d4", "d5"]}


BUDGET_LENGTHS = {"d1": 300, "d2": 900, "d3": 400, "d4": 100, "d5": 200}


BUDGET_VALUES = {"R(tokens=1500)": 1 / 3, "R(tokens=1500,pack=skip)": 2 / 3, "R(tokens=1600)": 2 / 3,
                 "R(tokens=1500,overhead=50)": 1 / 3, "R@5": 1.0}  # the contract's worked example


def ranking_by_loops(scored, labels, lengths, thresh=None, tokens=None, overhead=0, pack="prefix",
                     separator=None, depth=None, judged_only=False):
    """The document IDs a measure sees, from section 17's words in their order: depth (the items
    up to, not including, the one that brings in the (N+1)-th document), floor, budget on the
    chunks as ranked, folding, judged-only."""
    ranked = [d for _, d in sorted(((s, d) for d, s in scored.items()), reverse=True)]
    if depth is not None:
        seen, within = set(), []
        for d in ranked:
            doc = d.split(separator)[0] if separator else d
            if doc not in seen and len(seen) == depth:
                break
            seen.add(doc)
            within.append(d)
        ranked = within
    if thresh is not None:
        ranked = [d for d in ranked if scored[d] >= thresh]
    if tokens is not None:
        kept, total = [], 0
        for d in ranked:
            if total + lengths[d] + overhead <= tokens:
                kept.append(d)
                total += lengths[d] + overhead
            elif pack == "prefix":
                break
        ranked = kept
    if separator:
        ranked = list(dict.fromkeys(d.split(separator)[0] for d in ranked))
    return [d for d in ranked if labels.get(d, -1) >= 0] if judged_only else ranked


def measures_by_loops(ranking, labels, k, filtered):
    """R, P, RR, Success, AP and nDCG within k of a final ranking, with plain loops; P of a
    filtered ranking divides by the documents left (section 17)."""
    top = ranking[:k]
    relevant = [d for d, g in labels.items() if g >= 1]
    hits = [i for i, d in enumerate(top, 1) if labels.get(d, 0) >= 1]
    dcg = sum(labels[d] / math.log2(i + 1) for i, d in enumerate(top, 1) if labels.get(d, 0) > 0)
    ideal = sorted((g for g in labels.values() if g > 0), reverse=True)[:k]
    best = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return {"R": len(hits) / len(relevant) if relevant else 0.0,
            "P": (len(hits) / len(top) if top else 0.0) if filtered else len(hits) / k,
            "RR": 1.0 / hits[0] if hits else 0.0, "Success": 1.0 if hits else 0.0,
            "AP": sum(n / i for n, i in enumerate(hits, 1)) / len(relevant) if relevant else 0.0,
            "nDCG": dcg / best if best else 0.0}


NO_ANSWER_RUN = {"q1": {"d1": 0.82, "d2": 0.41}, "q2": {"d5": 0.44, "d6": 0.40},
                 "q3": {"x1": 0.47, "x2": 0.30}, "q4": {"y1": 0.38}}


NO_ANSWER_VALUES = {"Abstain(thresh=0.45)": 0.5, "Abstain(thresh=0.5)": 1.0, "Success(thresh=0.45)@5": 0.5,
                    "Success(thresh=0.4)@5": 1.0}  # the contract's worked example


NO_ANSWER_NAMES = "Abstain(thresh=0.45),Abstain(thresh=0.5),Success(thresh=0.45)@5,Success(thresh=0.40)@5"


def lengths_through(reader, path):
    """What a lengths reader twin makes of a file's stream."""
    with rre.open_input(str(path)) as stream:
        return reader(stream, str(path))


# Section 24's worked example: labels are facts, the ranking holds chunks of text.
FACTS = ["Paris is the capital of France.", "The Seine flows through Paris."]


CHUNKS = ["Lyon is large.", "Fact: Paris is the capital  of France. More.",
          "Paris is the capital of France, they say.",
          "The Seine flows through Paris. Also Paris is the capital of France."]


def text_log(chunks_of=lambda q: CHUNKS, queries=("q1",)):
    """JSON Lines as a RAG framework writes it: texts, with a line break or two."""
    return "".join(json.dumps({"question": "what about %s?" % q, "id": q, "gold": [{"fact": f} for f in FACTS],
                               "hits": [{"text": c.replace(". ", ".\n", 1), "score": 1.0 - i / 10}
                                        for i, c in enumerate(chunks_of(q))]}) + "\n" for q in queries)


EXPLAIN_EXAMPLE = {"qrels": {"q1": {"d1": 1, "d2": 1, "d3": 0}, "q2": {"d5": 1}},
                   "runs": {"q1": ["d4", "d1", "d3", "d6", "d2"], "q2": ["d7", "d8"]}}


EXPLAIN_BLOCK = {"k": 3, "counts": {"missed": 2, "absent": 0, "not_ranked": 1, "below": 1,
                                    "cut": 0, "unjudged": 1, "unlabeled": 1},
                 "queries": {"q1": {"cause": "below", "missing": {"d2": 5}, "unjudged": ["d4"]},
                             "q2": {"cause": "not_ranked", "missing": {"d5": None},
                                    "unlabeled": ["d7", "d8"], "ranked": 2}}}


def rr_run(*ranks):
    """A run of REPLICATE_QRELS whose query i finds its relevant document at ranks[i]."""
    return {"q%d" % i: ["x%d" % j for j in range(1, rank)] + ["d%d" % i] for i, rank in enumerate(ranks)}


# Six queries, one relevant document each; RR is 1/rank.  The baseline's mean is 5.5/6; the two
# replicates differ from it on q2 (1 instead of 1/2) and q5 (1/2 instead of 1): means 1 and 5/6,
# noise 1/6, unstable q2 and q5.
REPLICATE_QRELS = {"q%d" % i: ["d%d" % i] for i in range(6)}


REPLICATE_RUNS = {"base.json": rr_run(1, 1, 2, 1, 1, 1), "rep1.json": rr_run(1, 1, 1, 1, 1, 1),
                  "rep2.json": rr_run(1, 1, 2, 1, 1, 2),
                  "inside.json": rr_run(1, 1, 2, 1, 1, 4),  # drop 1/8 (0.75 on q5, unstable)
                  # drop 2/9 = 1/18 + noise 1/6 (2/3 on q0, q1)
                  "beyond.json": rr_run(3, 3, 2, 1, 1, 1)}


REPLICATES = ["--replicate", "rep1.json", "--replicate", "rep2.json"]


REPLICATE_REJECTIONS = [  # (arguments after --qrels qrels.json --run inside.json -m RR, fragments)
    (["--replicate", "rep1.json"], ["--replicate needs --baseline: a replicate is another run "
                                    "of the approved"]),
    (["rep1.json"], ["give a FIXTURE or --qrels and --run, not both"]),
    (["--baseline", "base.json", "--replicate", "base.json"],
     ["--baseline base.json and --replicate base.json name the same file: give each run once"]),
    (["--baseline", "base.json", "--replicate", "rep1.json", "--replicate", "./rep1.json"],
     ["--replicate rep1.json and --replicate ./rep1.json name the same file"]),
    (["--baseline", "base.json", "--gate-on", "interval"], ["--gate-on interval needs "
                                                            "--max-mean-drop or "
                                                            "--max-group-drop"]),
    (["--baseline", "base.json", "--gate-on", "interval", "--max-query-drop", "0.1"], ["--gate-on interval needs"]),
    (["--baseline", "base.json", "--gate-on", "median"], ["argument --gate-on: invalid "
                                                          "choice: 'median'"]),
    (["--baseline", "-", "--replicate", "-"], ["standard input can be read once"]),
    (["--baseline", "base.json", "--replicate", "missing.json"], ["missing.json: cannot read"]),
    (["--baseline", "base.json", "--replicate", "short.json"],
     ["short.json: query sets differ: 1 labeled query has no ranking ('q4'); see --missing-run"]),
    (["--baseline", "base.json", "--replicate", "short.json", "--missing-run", "skip"],
     ["short.json: the replicate and the baseline were evaluated on different queries ('q4'); "
      "compare on fixed"]),
    (["--baseline", "base.json", "--replicate", "relabeled.json"], ["relabeled.json: qrels"]),
    (["--baseline", "base.json", "--replicate", "bad.json"], ["bad.json: q0[0]"]),
    (["--baseline", "base.json", "--replicate", "rep1.json", "--format", "trec"], ["--format trec has no place"]),
    (["--baseline", "base.json", "--replicate", "rep1.json", "--summary", "rep1.json"],
     ["--summary rep1.json names rep1.json, which is read or written already"]),
]


def wait_until_blocked_reading(proc, deadline):
    """Return once the process sleeps in a read of a pipe.  A signal that comes between
    Python's check for signals and the read() call is only seen when the read returns:
    the tool would wait for input forever.  Without /proc, a pause stands in."""
    wchan = Path("/proc/%d/wchan" % proc.pid)
    if not wchan.exists():
        time.sleep(0.5)
        return
    while "pipe_read" not in wchan.read_text() and time.monotonic() < deadline:
        time.sleep(0.005)


def trec_run(run, tag="r"):
    """A TREC run file's text of {qid: {doc: score}}."""
    return "".join("%s Q0 %s %d %s %s\n" % (q, d, i, score, tag) for q, ranking in run.items()
                   for i, (d, score) in enumerate(ranking.items(), 1))


class TempDirTestCase(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = Path(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def write(self, name, content):
        path = self.tmp / name
        if isinstance(content, (dict, list)):
            content = json.dumps(content)
        path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
        return path


class TrecRunReaderCases:
    """Run reader tests, written once: the classes below run them on both paths."""

    def read(self, data, qrels=None, opts=rre.Reading(), name="run.txt"):
        raise NotImplementedError

    def reference(self, data, qrels=None, opts=rre.Reading()):
        path = self.write("ref.txt", data)
        with rre.open_input(str(path)) as stream:
            return rre.judge_run(rre.read_trec_run(stream, "run.txt"), rre.Truth(qrels or QRELS_FOR_RANDOM), opts,
                                 "run.txt")

    def test_golden_values(self):
        ranked = self.read(RUN_TXT.encode(), {"q1": {"d1": 1, "d2": 1, "d5": 0}, "q2": {"d3": 2}})
        # q1 in trec order: d9 (3.5), d2 (2.0, the greater ID of the tie), d1 (2.0)
        self.assertEqual(ranked["q1"].judged, rre.judge({"d2": 2, "d1": 3}, 3, {"d1": 1, "d2": 1, "d5": 0}, ranked=3))
        self.assertEqual(ranked["q2"], rre.Ranking(rre.judge({"d3": 1}, 2, {"d3": 2}, ranked=2), 0, ()))
        self.assertIsNone(ranked["q3"])

    def test_messages_name_the_line(self):
        head = "q1 Q0 d1 1 2 t\n# c\n\nq1 Q0 d2 2 1 t\n"
        cases = {
            "q1 Q0 d1 3 0 t\n": "run.txt:5: query 'q1': document 'd1' is ranked twice (first at "
                                "line 1): --duplicates first keeps its best-ranked place",
            "q2 Q0 d1 1 x t\n": "run.txt:5: query 'q2': score 'x' is not a finite number",
            "q2 Q0 d1\n": "run.txt:5: expected 5 or more columns (QID Q0 DOCID RANK SCORE [TAG]), "
                          "found 3: 'q2 Q0 d1'",
            "q2 Q0 d\x01 1 1 t\n": "run.txt:5: control character '\\x01': not text",
            "q2 Q0 d1 1 \u0661 t\n": "run.txt:5: query 'q2': score '\u0661' is not "
                                     "a finite number",
            "q2 Q0 d\u0085 1 1 t\n": "run.txt:5: control character '\\x85': not text",
        }
        for tail, message in cases.items():
            with self.subTest(tail), self.assertRaises(rre.EvalError) as ctx:
                self.read((head + tail).encode())
            self.assertEqual(str(ctx.exception), message)

    def test_line_ends_and_whitespace(self):
        crlf = self.read(RUN_TXT.replace("\n", "\r\n").encode())
        # lone CRs end lines
        self.assertEqual(self.read(RUN_TXT.replace("\n", "\r").encode()), crlf)
        self.assertEqual(crlf, self.read(RUN_TXT.encode()))
        nbsp = self.read("q1\u00a0 Q0 d1\u00a0 1 1 t\n".encode(), {"q1\u00a0": {"d1\u00a0": 1}})
        # a no-break space belongs to the ID
        self.assertEqual(nbsp["q1\u00a0"].judged.rel_ranks, [1])

    def test_random_runs_agree_with_the_reference(self):
        rng = random.Random(7)
        for i in range(60):
            data = random_trec_run(rng, contiguous=i % 3 != 0)
            if i % 4 == 1:
                data = random_damage(rng, data)
            with self.subTest(i=i):
                self.assertEqual(outcome(lambda: self.read(data)), outcome(lambda: self.reference(data)))

    def test_a_broken_gzip_run_is_refused(self):
        packer = zlib.compressobj(wbits=31)  # gzip, cut after whole lines: no end-of-stream marker
        packed = packer.compress("".join("q%d Q0 d%d 1 1.5 t\n" % (i // 9, i) for i in range(300)).encode())
        packed += packer.flush(zlib.Z_FULL_FLUSH)
        with self.assertRaisesRegex(rre.EvalError, "^run.gz: cannot read: Compressed file ended before"):
            self.read(packed, name="run.gz")
        path = self.write("cut.gz", packed)
        # the fast pass declines a broken stream, whatever it read before
        for chunk in (7, 1 << 16):
            with self.subTest(chunk=chunk), rre.open_input(str(path)) as stream:
                self.assertRaises(rre._Decline, rre._fast_pass, stream, rre.Truth(QRELS_FOR_RANDOM), rre.Reading(), chunk)

    def test_chunk_separator_agrees(self):
        data = b"q1 Q0 a#2 1 3 t\nq1 Q0 b#1 2 2 t\nq1 Q0 a#1 3 1 t\n"
        opts = rre.Reading(separator="#")
        ranked = self.read(data, {"q1": {"a": 1, "b": 0}}, opts)
        self.assertEqual((ranked["q1"].judged.rel_ranks, ranked["q1"].folded), ([1], 1))
        with self.assertRaisesRegex(rre.EvalError, r"run.txt: query 'q1': ranked ID '#2' is blank"):
            self.read(data.replace(b"a#2", b"#2"), {"q1": {"a": 1}}, opts)


class JsonReaderCases:
    """JSON fixture and run reading, written once for both paths."""

    def read(self, text, qrels=None, opts=rre.Reading()):
        raise NotImplementedError

    def test_layouts_read_as_the_plain_parse(self):
        scored = json_fixture(lambda q: {"d%d" % d: float(d % 5) for d in range(q, q + 8)})
        for name, text in {"lists": json.dumps(json_fixture()), "scored": json.dumps(scored),
                           "indented": json.dumps(scored, indent=2),
                           "compact": json.dumps(scored, separators=(",", ":")),
                           "boundary-like IDs": json.dumps(json_fixture(
                               lambda q: ["d%d]," % d for d in range(q, q + 8)]))}.items():
            with self.subTest(name):
                data = json.loads(text)
                labels = rre.qrels_from_json(data["qrels"], "f", "qrels")
                expected = rre.judge_run(rre.rankings_from_json(data["runs"], "f", "runs"), rre.Truth(labels),
                                         rre.Reading(), "f", "runs")
                self.assertEqual(self.read(text), (labels, expected))
                self.assertEqual(self.read(json.dumps(data["runs"]), labels), (None, expected))

    def test_errors_read_as_the_reference_words_them(self):
        text = json.dumps(json_fixture())
        cases = {  # each edit falls in the second half
            "ranked twice": (text.replace('"q18": ["d18"', '"q18": ["d19"'),
                             "runs.q18[1]: query 'q18': document 'd19' appears twice"),
            "blank ID": (text.replace('"q18": ["d18"', '"q18": [" "'),
                         "runs.q18[0]: query 'q18': document ID ' ' is blank"),
            "query key twice": (text.replace('"q18": [', '"q1": ['), "runs: key 'q1' appears twice"),
            "scored key twice": (text.replace('"q18": ["d18"', '"q18": {"d1": 1, '
                                                               '"d1": 2}, "x": ["d"'),
                                 "runs.q18: query 'q18': key 'd1' appears twice"),
            "invalid JSON": (text.replace('"q18": ["d18"', '"q18": ["d18" "d0"'),
                             "invalid JSON: Expecting ',' delimiter"),
            "trailing text": (text + " x", "invalid JSON: Extra data"),
            "one trailing character": (text + "x", "invalid JSON: Extra data"),
            "control character": (text.replace('"q18": ["d18"', '"q18": ["d\\t18"'),
                                  "document ID 'd\\t18' holds a control character"),
            "lone surrogate": (text.replace('"q18": [', '"q\\ud800": ['),
                               "query ID 'q\\ud800' holds a lone surrogate"),
            "no labels": ('{"qrels": {}, "runs": {}}', "f.json: qrels: no labels"),
        }
        for name, (text, message) in cases.items():
            with self.subTest(name), self.assertRaises(rre.EvalError) as ctx:
                self.read(text)
            self.assertIn(message, str(ctx.exception))

    def test_unusual_layouts(self):
        labels = {"a": {"d1": 1}}
        fixture = '{"qrels": {"a": ["d1"]}, "runs": {"a": ["d1"]}'
        for text, qrels in [('{"a": ["d1"]}', labels), (' \r\n{ "a" :\t[ "d1" ] }\n', labels),
                            (fixture + "}", None), (fixture + ', "note": 1}', None),
                            ('{"runs": {"a": ["d1"]}, "qrels": {"a": ["d1"]}}', None),
                            ('\n{\n "qrels" : {"a": {"d1": 1}} ,\n "runs" :{ "a" : {"d1": 0.5} }\n}\n', None)]:
            with self.subTest(text=text):
                self.assertEqual(self.read(text, qrels),
                                 (None if qrels else labels, {"a": rre.Ranking(rre.judge({"d1": 1}, 1, {"d1": 1})._replace(ranked=1), 0, ())}))


class ReplicateFilesTestCase(TempDirTestCase):
    """REPLICATE_QRELS and REPLICATE_RUNS written in a folder of their own, the current one."""

    def setUp(self):
        super().setUp()
        os.chdir(self.tmp)
        self.addCleanup(os.chdir, ROOT)
        self.write("qrels.json", REPLICATE_QRELS)
        for name, run in REPLICATE_RUNS.items():
            self.write(name, run)

    def compare(self, run, *args):
        return cli("--qrels", "qrels.json", "--run", run, "--baseline", "base.json", "-m", "RR", *args)


# The README's first answers: a LlamaIndex-style log (query ID, expected IDs, retrieved IDs), the
# same questions after a change of retriever, and the two as TREC files.
RECIPE_LOG = [("q1", ["doc3#2"], ["doc1#0", "doc3#2", "doc7#1", "doc2#4", "doc9#0"]),
              ("q2", ["doc5#1", "doc5#2"], ["doc5#1", "doc8#3", "doc4#0", "doc5#2", "doc6#1"]),
              ("q3", ["doc2#0"], ["doc9#3", "doc1#1", "doc4#2", "doc7#0", "doc8#8"]),
              ("q4", ["doc6#0"], ["doc6#0", "doc6#1", "doc3#3", "doc1#2", "doc2#2"])]
RECIPE_NEW = {"q1": ["doc3#2", "doc1#0", "doc7#1", "doc2#4", "doc9#0"],
              "q3": ["doc2#0", "doc9#3", "doc1#1", "doc4#2", "doc7#0"],
              "q4": ["doc3#3", "doc1#2", "doc6#0", "doc2#2", "doc6#1"]}


class ReadmeRecipesTest(TempDirTestCase):
    """Each of the README's first answers prints what the README shows."""

    def write_recipe_files(self):
        new = [(q, labels, RECIPE_NEW.get(q, ranked)) for q, labels, ranked in RECIPE_LOG]
        for name, rows in (("eval.jsonl", RECIPE_LOG), ("new.jsonl", new)):
            records = [{"query_id": q, "expected_ids": labels, "retrieved_ids": ranked}
                       for q, labels, ranked in rows]
            self.write(name, "".join(json.dumps(record) + "\n" for record in records))
        self.write("qrels.txt", "".join("%s 0 %s 1\n" % (q, d)
                                        for q, labels, _ in RECIPE_LOG for d in labels))
        for name, rows in (("approved.txt", RECIPE_LOG), ("candidate.txt", new), ("run.txt", new)):
            tag = name.partition(".")[0].replace("run", "candidate")
            self.write(name, "".join("%s Q0 %s %d %d %s\n" % (q, d, i + 1, 10 - i, tag)
                                     for q, _, ranked in rows for i, d in enumerate(ranked)))

    def test_each_recipe_prints_what_the_readme_shows(self):
        self.write_recipe_files()
        readme = (Path(__file__).parent / "README.md").read_text(encoding="utf-8")
        recipes = re.findall(r"```\npython3 rag_retrieval_eval.py ([^`]*?)\n```\n"
                             r"<!-- recipe (\w+) -->\n```\n(.*?)\n```", readme, re.S)
        self.assertEqual([key for _, key, _ in recipes], ["LOG", "TREC", "AGREE", "GATE"])
        for command, key, shown in recipes:
            words = command.replace("\\\n", "").split()
            args = [str(self.tmp / a) if (self.tmp / a).exists() else a for a in words]
            with self.subTest(key):
                status, out, err = cli(*args)
                lines = out.rstrip("\n").splitlines()
                if len(lines) > 16:  # the README cuts a long report
                    lines = lines[:15] + ["..."]
                said = err.replace(str(self.tmp) + os.sep, "").rstrip("\n").splitlines()
                self.assertEqual("\n".join(lines + said + ["(exit status %d)" % status]), shown)


class SeedFixtureTest(unittest.TestCase):
    """The tutorial fixture: q1 hits at ranks 2 and 3, q2 at rank 1, q3 misses."""

    def setUp(self):
        data = json.loads(FIXTURE.read_text())
        self.result = rre.evaluate(data["qrels"], data["runs"], 3)

    def test_mean_recall_is_two_thirds(self):
        # q1 2/2, q2 1/1, q3 0/1 -> (1 + 1 + 0) / 3
        self.assertEqual(self.result["mean_recall_at_k"], 0.6666666666666666)
        self.assertEqual(round(self.result["mean_recall_at_k"], 4), 0.6667)

    def test_mrr_is_one_half(self):
        # first hits at ranks 2, 1, none -> (1/2 + 1 + 0) / 3
        self.assertEqual(self.result["mrr_at_k"], 0.5)

    def test_per_query_values(self):
        self.assertEqual(self.result["per_query"], {
            "q1": {"recall": 1.0, "rr": 0.5},
            "q2": {"recall": 1.0, "rr": 1.0},
            "q3": {"recall": 0.0, "rr": 0.0}})

    def test_header_fields(self):
        self.assertEqual((self.result["k"], self.result["queries"]), (3, 3))

    def test_cli_output_is_byte_identical_to_the_seed(self):
        self.assertEqual(cli(FIXTURE, "--k", "3"), (0, SEED_STDOUT, ""))
        # the real script's bytes
        self.assertEqual(cli_process(FIXTURE, "--k", "3"), (0, SEED_STDOUT, ""))

    def test_k_defaults_to_3(self):
        self.assertEqual(cli(FIXTURE)[1], SEED_STDOUT)

    def test_k_1(self):
        # only q2 has its relevant document at rank 1: recall (0 + 1 + 0) / 3
        status, out, _ = cli(FIXTURE, "--k", "1")
        result = json.loads(out)
        self.assertEqual((result["mean_recall_at_k"], result["mrr_at_k"]), (1 / 3, 1 / 3))
        self.assertEqual(result["per_query"]["q1"], {"recall": 0.0, "rr": 0.0})

    def test_k_2_gives_half_recall_on_q1(self):
        result = rre.evaluate({"q1": ["d1", "d2"]}, {"q1": ["d9", "d2", "d1"]}, 2)
        self.assertEqual(result["per_query"]["q1"], {"recall": 0.5, "rr": 0.5})

    def test_several_cutoffs_use_the_general_shape(self):
        status, out, _ = cli(FIXTURE, "--k", "1", "3")
        result = json.loads(out)
        self.assertEqual(status, 0)
        self.assertEqual(list(result["measures"]), ["R@1", "RR@1", "R@3", "RR@3"])
        self.assertEqual(result["measures"]["R@3"], 0.6666666666666666)
        self.assertEqual(result["per_query"]["q1"], {"R@1": 0.0, "RR@1": 0.0, "R@3": 1.0, "RR@3": 0.5})


class LibraryTest(unittest.TestCase):
    def test_import_names(self):
        from rag_retrieval_eval import check_ids, evaluate  # the seed's public names
        self.assertTrue(callable(check_ids) and callable(evaluate))

    def test_errors_are_value_errors_with_a_clear_message(self):
        with self.assertRaises(ValueError) as ctx:
            rre.evaluate({"q1": ["d1"]}, {"q1": ["d1", "d1"]}, 3)
        self.assertEqual(str(ctx.exception),
                         "runs.q1[1]: query 'q1': document 'd1' appears twice (first "
                         "at runs.q1[0])")

    def test_missing_run_entry_never_leaves_the_average_silently(self):
        with self.assertRaisesRegex(ValueError, r"1 labeled query has no ranking \('q2'\)"):
            rre.evaluate({"q1": ["d1"], "q2": ["d2"]}, {"q1": ["d1"]}, 3)

    def test_empty_ranking_is_valid_and_scores_zero(self):
        result = rre.evaluate({"q1": ["d1"], "q2": ["d2"]}, {"q1": [], "q2": ["d2"]}, 3)
        self.assertEqual(result["per_query"]["q1"], {"recall": 0.0, "rr": 0.0})
        self.assertEqual(result["mean_recall_at_k"], 0.5)

    def test_cutoff_larger_than_every_ranking(self):
        result = rre.evaluate({"q1": ["d1", "d2"]}, {"q1": ["d2"]}, 1000)
        self.assertEqual((result["mean_recall_at_k"], result["mrr_at_k"]), (0.5, 1.0))

    def test_bad_cutoffs(self):
        for k in (0, -1, 2.5, "3", True, None):
            with self.subTest(k=k), self.assertRaisesRegex(ValueError, "positive integer"):
                rre.evaluate({"q1": ["d1"]}, {"q1": ["d1"]}, k)

    def test_query_without_relevant_label_is_not_a_zero(self):
        with self.assertRaisesRegex(ValueError, "no relevant label"):
            rre.evaluate({"q1": {"d1": 0}}, {"q1": ["d1"]}, 3)

    def test_graded_and_scored_forms(self):
        # scores rank d2 (5.0) above d1 (1.0); d7 has grade 0: judged, not relevant
        result = rre.evaluate({"q1": {"d1": 2, "d7": 0}}, {"q1": {"d1": 1.0, "d2": 5.0, "d7": 9}}, 3)
        self.assertEqual(result["per_query"]["q1"], {"recall": 1.0, "rr": 1 / 3})

    def test_score_ties_break_by_document_id_descending(self):
        # equal scores: "d2" > "d10" as strings, so d2 is ranked first
        result = rre.evaluate({"q1": ["d10"]}, {"q1": {"d10": 1.0, "d2": 1.0}}, 3)
        self.assertEqual(result["mrr_at_k"], 0.5)

    def test_check_ids(self):
        self.assertEqual(rre.check_ids([]), [])
        for bad, message in ((["d1", " "], "blank"), (["d1", 7], "must be a string"),
                             ("d1", "expected a list"), (["a", "a"], "appears twice")):
            with self.subTest(bad=bad), self.assertRaisesRegex(rre.EvalError, message):
                rre.check_ids(bad)


class FirstHourTest(TempDirTestCase):
    """Issue 48's first hour: a LlamaIndex RetrieverEvaluator log, read as a new user reads it."""

    LOG = [{"query_id": "q1", "query": "How do I reset my password?", "expected_ids": ["n12"],
            "retrieved_ids": ["n40", "n12", "n3", "n9", "n1"],
            "retrieved_scores": [0.83, 0.81, 0.62, 0.55, 0.41]},
           {"query_id": "q2", "query": "Which plans include SSO?", "expected_ids": ["n7"],
            "retrieved_ids": ["n7", "n9", "n2", "n5", "n6"],
            "retrieved_scores": [0.91, 0.77, 0.52, 0.5, 0.44]},
           {"query_id": "q3", "query": "What is the refund window?",
            "expected_ids": ["n21", "n22"], "retrieved_ids": ["n30", "n31", "n21", "n32", "n33"],
            "retrieved_scores": [0.7, 0.69, 0.6, 0.58, 0.57]},
           {"query_id": "q4", "query": "Can I pay in bitcoin?",
            "expected_ids": [],  # no answer in the corpus
            "retrieved_ids": ["n50", "n51", "n52", "n53", "n54"],
            "retrieved_scores": [0.42, 0.4, 0.33, 0.31, 0.3]}]
    ABSTAIN = "R@10,RR,Abstain(thresh=0.45),Abstain(thresh=0.4)"

    def log(self, records=None, name="log.jsonl"):
        return self.write(name, "".join(json.dumps(r) + "\n" for r in records or self.LOG))

    def test_an_empty_label_list_is_named_and_read_as_no_answer_on_request(self):
        log = self.log()
        rejected(self, *cli(log, "-m", "R@10,RR"),
                 "1 query has no relevant label at level 1 ('q4')",
                 "if 'q4' has no answer in the corpus, say so: --empty-labels no-answer, "
                 "\"answerable\": false in a record, or --no-answer FILE")
        status, out, err = cli(log, "-m", self.ABSTAIN, "--empty-labels", "no-answer")
        result = json.loads(out)
        self.assertEqual((status, err, result["queries"], result["no_answer_queries"]),
                         (0, "", 3, 1))
        self.assertEqual(result["per_query"]["q4"],  # its best score is 0.42
                         {"Abstain(thresh=0.45)": 1.0, "Abstain(thresh=0.4)": 0.0})
        self.assertAlmostEqual(result["measures"]["R@10"], (1 + 1 + 0.5) / 3, delta=1e-12)
        self.assertAlmostEqual(result["measures"]["RR"], (1 / 2 + 1 + 1 / 3) / 3, delta=1e-12)
        self.assertEqual(result["manifest"]["no_answer"],  # a saved baseline is checked by it
                         "sha256:" + hashlib.sha256(b"q4\n").hexdigest())
        # --no-answer FILE says the same: the same answer either way, and both together agree
        listed = self.write("na.txt", "q4\n")
        by_file = cli(log, "-m", self.ABSTAIN, "--no-answer", listed)
        self.assertEqual(json.loads(by_file[1])["per_query"], result["per_query"], by_file[2])
        both = cli(log, "-m", "R@10", "--no-answer", listed, "--empty-labels", "no-answer")
        self.assertEqual((both[0], json.loads(both[1])["per_query"]), (0, {
            "q1": {"R@10": 1.0}, "q2": {"R@10": 1.0}, "q3": {"R@10": 0.5}, "q4": {}}), both[2])
        qrels = {r["query_id"]: r["expected_ids"] for r in self.LOG}
        run = {r["query_id"]: r["retrieved_ids"] for r in self.LOG}
        library = rre.score_run(qrels, run, "R@10", empty_labels="no-answer")
        self.assertEqual((library["per_query"]["q4"], library["measures"]["R@10"]),
                         ({}, result["measures"]["R@10"]))
        with self.assertRaisesRegex(rre.EvalError, "empty_labels must be one of"):
            rre.score_run(qrels, run, "R@10", empty_labels="skip")
        rejected(self, *cli(log, "--empty-labels", "skip"),
                 "--empty-labels: invalid choice: 'skip'")

    def test_many_empty_lists_are_counted_few_are_named(self):
        for n, named in ((5, "if 'e0', 'e1', 'e2', 'e3', 'e4' have no answer"),
                         (6, "if the 6 with no label at all have no answer")):
            records = self.LOG[:1] + [{"query_id": "e%d" % i, "expected_ids": [],
                                       "retrieved_ids": ["n1"]} for i in range(n)]
            with self.subTest(empty=n):
                rejected(self, *cli(self.log(records), "-m", "R@5"), named,
                         "--empty-labels no-answer")

    def test_scores_named_like_the_role_are_read(self):
        swapped = [dict(r, retrieved_scores=r["retrieved_scores"][::-1])
                   for r in self.LOG[:3]]  # the last ID scores highest
        out = json.loads(cli(self.log(swapped), "-m", "RR")[1])
        self.assertEqual(out["per_query"],
                         {"q1": {"RR": 1 / 4}, "q2": {"RR": 1 / 5}, "q3": {"RR": 1 / 3}})
        renamed = [{k.replace("retrieved_scores", "scores"): v for k, v in r.items()}
                   for r in swapped]
        self.assertEqual(json.loads(cli(self.log(renamed), "-m", "RR")[1])["per_query"],
                         out["per_query"])
        rejected(self, *cli(self.log([dict(r, scores=[0.9]) for r in renamed]), "-m", "RR"),
                 "log.jsonl:1: scores: query 'q1': expected a list of 5 scores, one per ranked "
                 "ID, not [0.9]")

    def test_the_labels_field_as_evidence(self):
        log = self.log()
        measures = "EvidenceSuccess@5,EvidenceRecall@5,R@5"
        status, out, err = cli(log, "-m", measures, "--fields", "evidence=expected_ids",
                               "--empty-labels", "no-answer", "--format", "csv")
        self.assertEqual((status, out.splitlines()), (0, [
            "query," + measures, "q1,1.0,1.0,1.0", "q2,1.0,1.0,1.0", "q3,0.0,0.5,0.5",
            "q4,,,"]), err)
        same = cli(log, "-m", "EvidenceSuccess@5", "--empty-labels", "no-answer",
                   "--fields", "relevant=expected_ids,evidence=expected_ids")
        self.assertEqual(json.loads(same[1])["measures"], {"EvidenceSuccess@5": 2 / 3}, same[2])
        rejected(self, *cli(log, "-m", "EvidenceSuccess@5", "--fields", "evidence=expected_ids"),
                 "('q4')", "--empty-labels no-answer")  # the empty list, not a missing set
        rejected(self, *cli(log, "-m", "R@5", "--fields", "evidence=retrieved_ids"),
                 "field 'retrieved_ids' would give both the ranking and the evidence sets")
        rejected(self, *cli(log, "-m", "R@5", "--fields", "relevant=retrieved_scores"),
                 "field 'retrieved_scores' would give both the labels and the scores")

    def test_an_argument_file_holds_a_long_fields(self):
        nested = [{"qid": r["query_id"], "gold": [{"id": d} for d in r["expected_ids"]],
                   "hits": [{"id": d, "score": s}
                            for d, s in zip(r["retrieved_ids"], r["retrieved_scores"])]}
                  for r in self.LOG[:3]]
        log = self.log(nested)
        fields = "query=qid,relevant=gold[].id,retrieved=hits[].id,scores=hits[].score"
        args = self.write("args.txt", "--fields\n%s\n-m\nR@2,RR\n\n--format\ntable\n" % fields)
        typed = cli(log, "--fields", fields, "-m", "R@2,RR", "--format", "table")
        self.assertEqual(typed[:2], (0, "query     R@2      RR\nall    0.6667  0.6111\n"
                                        "3 queries evaluated\n"))
        self.assertEqual(cli(log, "@%s" % args), typed)  # one positional beside: still our form
        self.assertEqual(cli("@%s" % self.write("all.txt", "%s\n@%s\n" % (log, args))), typed)
        rejected(self, *cli(log, "@%s" % (self.tmp / "nope.txt")), "No such file", "nope.txt")
        looped, bad = self.tmp / "loop.txt", self.tmp / "bad.txt"
        looped.write_text("@%s\n" % looped)
        bad.write_bytes(b"\xff\xfe-m\n")
        rejected(self, *cli(log, "@%s" % looped), "argument file @%s names itself" % looped)
        status, out, err = cli(log, "@%s" % bad)  # 3.12's argparse reads bytes as surrogates
        said = "argument file @%s is no UTF-8 text" % bad if sys.version_info < (3, 12) else ""
        rejected(self, status, out, err, said)  # a user's mistake: never a traceback
        status, out, err = cli("--help")
        text = " ".join(out.split())
        self.assertEqual(status, 0)
        for fragment in ("a KEY may be a path: keys joined by '.', '[]' after a key for each "
                         "element of its list (such as retrieved=documents[].id",
                         "--empty-labels {error,no-answer}"):
            self.assertIn(fragment, text)

    def test_judged_only_leaves_a_long_log_absent(self):
        labels = {"d1": 1, "j1": 0, "j2": 0}  # d1 is missing from 32 ranked documents
        ranked = ["j1", "j2"] + ["u%d" % i for i in range(30)]
        log = self.log([{"query_id": "q1", "expected_ids": labels, "retrieved_ids": ranked}])
        for flags, cause in (([], "absent"), (["--judged-only"], "absent"), (["--depth", "10"],
                                                                              "not_ranked")):
            with self.subTest(flags):
                out = cli(log, "-m", "R@10", "--explain", *flags)[1]
                self.assertEqual(json.loads(out)["explain"]["queries"]["q1"]["cause"], cause)

    def test_a_group_counts_a_cut_as_no_miss(self):
        qrels = self.write("q.txt", "q1 0 d1 1\n")
        run = self.write("r.txt", "q1 Q0 d2 1 0.9 t\nq1 Q0 d1 2 0.3 t\n")
        status, out, err = cli("--qrels", qrels, "--run", run, "-m", "R(thresh=0.5)@3", "--explain",
                               "--groups", self.write("g.json", {"g": ["q1"]}))
        result = json.loads(out)  # d1 is in the top 3, below the floor: cut, not missed
        self.assertEqual(result["groups"]["g"]["explain"], dict(
            missed=0, absent=0, not_ranked=0, below=0, cut=1, unjudged=0, unlabeled=1), err)

    def test_explanations_say_what_a_short_log_can_say(self):
        log = self.log()
        args = ("--explain", "--empty-labels", "no-answer")
        status, out, err = cli(log, "-m", "R@10", *args)
        note = ("rag_retrieval_eval: note: --explain: unjudged would mean merely unlabeled where "
                "the labels name only relevant documents, as those of 1 query do: their unlabeled "
                "documents in the top 10 are not listed (JSON: \"unlabeled\")\n")
        self.assertEqual((status, err), (0, note))
        self.assertEqual(json.loads(out)["explain"]["queries"], {"q3": {
            "cause": "not_ranked", "missing": {"n22": None},
            "unlabeled": ["n30", "n31", "n32", "n33"], "ranked": 5}})
        table = cli(log, "-m", "R@10", *args, "--format", "table")[1]
        self.assertIn("1 query missed (0 absent, 1 not in the ranking, 0 below), 0 cut; 0 with "
                      "unjudged documents in the top 10\n"
                      "  q3: not in the ranking (5 ranked); n22 not ranked\n", table)
        markdown = cli(log, "-m", "R@10", *args, "--format", "markdown")[1]
        self.assertIn("- q3: not in the ranking (5 ranked); n22 not ranked", markdown)
        self.assertIn("- --explain: unjudged would mean merely unlabeled", markdown)
        self.assertEqual(cli(log, "-m", "R@10", *args, "--format", "csv")[1].splitlines()[0:4:3],
                         ["query,R@10,absent,not_ranked,below,unjudged", "q3,0.5,0,1,0,0"])
        # a ranking longer than K: absent from it; labels that judge n30 non-relevant list
        # the unjudged documents
        graded = [dict(r, expected_ids={"n21": 1, "n22": 1, "n30": 0})
                  if r["query_id"] == "q3" else r for r in self.LOG]
        status, out, err = cli(self.log(graded, "graded.jsonl"), "-m", "R@3", *args)
        self.assertEqual(json.loads(out)["explain"]["queries"]["q3"],
                         {"cause": "absent", "missing": {"n22": None}, "unjudged": ["n31"]}, err)
        self.assertEqual(err, "")  # q3, the only miss, has its unjudged listed: nothing to note
        deep = json.loads(cli(log, "-m", "R@3", *args, "--depth", "5")[1])
        self.assertEqual((deep["explain"]["queries"]["q3"]["cause"],
                          deep["explain"]["queries"]["q3"]["ranked"]), ("not_ranked", 5))


class OlderPythonTest(unittest.TestCase):
    def test_an_older_python_is_told_which_version_is_needed(self):
        code = compile(SCRIPT.read_text(encoding="utf-8"), str(SCRIPT), "exec")
        saved, err = sys.version_info, io.StringIO()
        sys.version_info = (3, 8, 10)
        try:
            with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as ctx:
                exec(code, {"__name__": "__main__"})
            with self.assertRaisesRegex(ImportError, "needs Python 3.9 or newer, not 3.8"):
                exec(code, {"__name__": "rag_retrieval_eval"})
        finally:
            sys.version_info = saved
        self.assertEqual((ctx.exception.code, err.getvalue()),
                         (2, "rag_retrieval_eval: error: rag_retrieval_eval needs Python 3.9 or "
                             "newer, not 3.8\n"))


class RankingTest(unittest.TestCase):
    def test_depth_cuts_a_list_with_many_labels(self):
        # more than 8: the ranking is hashed, not scanned
        labels = {"d%d" % i: 1 for i in range(9)}
        self.assertEqual(rre.rank_listed(["x", "d1", "d2", "d3"], labels, depth=2), ({"d1": 2}, 2))

    def test_ties_break_by_document_id_descending(self):
        # all tied: trec_eval ranks "d3" > "d20" > "d10" (string order, descending)
        ranks, n, _ = rre.rank_scored(["d10", "d20", "d3"], [1.0, 1.0, 1.0], {"d10": 1, "d3": 1})
        self.assertEqual((ranks, n), ({"d10": 3, "d3": 1}, 3))

    def test_higher_scores_first_whatever_the_input_order(self):
        ranks, _, _ = rre.rank_scored(["a", "b", "c", "d"], [0.5, 3.0, -1.0, 2.0], {"a": 1, "c": 1})
        self.assertEqual(ranks, {"a": 3, "c": 4})

    def test_depth_cuts_the_ranking(self):
        ranks, n, _ = rre.rank_scored(["a", "b", "c"], [3.0, 2.0, 1.0], {"a": 1, "c": 1}, depth=2)
        self.assertEqual((ranks, n), ({"a": 1}, 2))
        self.assertEqual(rre.rank_listed(["a", "b", "c"], {"c": 1, "b": 1}, depth=2), ({"b": 2}, 2))

    def test_many_labels_take_the_same_path_result(self):
        docs = ["d%d" % i for i in range(40)]
        labels = {d: 1 for d in docs[::2]}
        scores = [float(i % 7) for i in range(40)]
        ranks, _, _ = rre.rank_scored(docs, scores, labels)
        by_sort = sorted(zip(scores, docs), reverse=True)
        expected = {d: r for r, (_, d) in enumerate(by_sort, 1) if d in labels}
        self.assertEqual(ranks, expected)
        self.assertEqual(rre.rank_listed(docs, labels)[0], {d: docs.index(d) + 1 for d in labels})


class IncompleteLabelsTest(TempDirTestCase):
    """trec_eval's measures for sampled pools, recall levels and -J, through the CLI."""

    def test_recall_level_names(self):
        self.assertEqual([s.name for s in rre.parse_measures(["iprec@.5,IPrec@0,IPrec@1.0,IPrec@0.50"])],
                         ["IPrec@0.5", "IPrec@0.0", "IPrec@1.0"])
        self.assertEqual(rre.trec_label("IPrec@0.1"), "iprec_at_recall_0.10")
        self.assertEqual([rre.trec_label(n) for n in ("Bpref", "infAP", "SetP", "SetR", "SetF")],
                         ["bpref", "infAP", "set_P", "set_recall", "set_F"])
        self.assertEqual([(s.name, rre.trec_label(s.name)) for s in rre.parse_measures(["IPrec@.25,RprecMult@2"])],
                         [("IPrec@0.25", "iprec_at_recall_0.25"), ("RprecMult@2.0", "Rprec_mult_2.00")])
        with self.assertRaises(rre.EvalError) as ctx:
            rre.parse_measures(["IPrec@1.5,IPrec@x,IPrec,Bpref@10,RprecMult@0"])
        for fragment in ("'IPrec@1.5': the recall level is a number from 0 to 1", "'IPrec@x'", "'IPrec' needs a cutoff",
                         "'Bpref@10' takes no cutoff", "'RprecMult@0': the multiple of R is a number above 0"):
            self.assertIn(fragment, str(ctx.exception))

    def test_judged_only_drops_unlabeled_and_negative_grades_after_depth(self):
        q = self.write("q.txt", "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 -1\n")
        run = self.write("r.txt", "q1 Q0 x 1 9 t\nq1 Q0 d3 2 8 t\nq1 Q0 d2 3 7 "
                                  "t\nq1 Q0 d1 4 6 t\n")
        # depth 3 keeps x, d3, d2; judged-only then keeps d2 alone: nothing relevant, one retrieved
        status, out, _ = cli("--qrels", q, "--run", run, "-m", "NumRet,RR,SetP,Bpref", "--judged-only")
        self.assertEqual((status, json.loads(out)["measures"]), (0, {"NumRet": 2, "RR": 1 / 2, "SetP": 1 / 2,
                                                                     "Bpref": 0.0}))
        status, out, _ = cli("--qrels", q, "--run", run, "-m", "NumRet,RR", "--judged-only", "--depth", "3")
        self.assertEqual(json.loads(out)["measures"], {"NumRet": 1, "RR": 0.0})
        self.assertEqual(rre.score_run({"q1": {"d1": 1, "d3": -1}}, {"q1": ["x", "d3", "d1"]}, "RR",
                                       judged_only=True)["measures"], {"RR": 1.0})


class MeasureTest(unittest.TestCase):
    """Each measure on one hand-built ranking, then at its edge rules.

    The ranking: rank 1 unlabeled, rank 2 grade 2, rank 3 grade 0, rank 4 grade 1,
    rank 5 unlabeled; one more relevant document ("x", grade 3) is not retrieved.
    So R = 3 relevant labels, relevant ranks 2 and 4, judged ranks 2, 3, 4.
    """

    def setUp(self):
        self.q = judged(None, 2, 0, 1, None, labels={"x": 3})

    def test_hand_computed_values(self):
        log2 = math.log2
        expected = {
            "R@2": 1 / 3, "R@4": 2 / 3, "R@100": 2 / 3,
            "P@2": 1 / 2, "P@4": 2 / 4, "P@10": 2 / 10,
            "RR": 1 / 2, "RR@1": 0.0, "RR@2": 1 / 2,
            "Success@1": 0.0, "Success@2": 1.0,
            "AP": (1 / 2 + 2 / 4) / 3, "AP@3": (1 / 2) / 3,
            # DCG 2/log2(3) + 1/log2(5); ideal grades 3, 2, 1 at ranks 1, 2, 3
            "nDCG": (2 / log2(3) + 1 / log2(5)) / (3 + 2 / log2(3) + 1 / 2),
            "nDCG@2": (2 / log2(3)) / (3 + 2 / log2(3)),
            "Rprec": 1 / 3,          # within rank R = 3 only rank 2 is relevant
            "Judged@1": 0.0, "Judged@3": 2 / 3, "Judged@10": 3 / 5,
            "NumRet": 5, "NumRel": 3, "NumRelRet": 2,
            # one document judged non-relevant (rank 3): rank 2 is preferred to it, rank 4 is not
            "Bpref": (1 + (1 - 1 / 1)) / 3,
            # rank 2: 1/2 + 1/2 * 0; rank 4: 1/4 + 3/4 * (1 + 1)/3 * (1 + e)/(1 + 1 + 2e) = 1/2
            "infAP": (1 / 2 + 1 / 2) / 3,
            "SetP": 2 / 5, "SetR": 2 / 3, "SetF": 2 * (2 / 5) * (2 / 3) / (2 / 5 + 2 / 3),
            # P@2 = P@4 = 1/2; recall 1.0 needs 3 relevant documents and only 2 are retrieved
            "IPrec@0.0": 1 / 2, "IPrec@0.5": 1 / 2, "IPrec@1.0": 0.0,
        }
        for name, want in expected.items():
            with self.subTest(name):
                self.assertAlmostEqual(value(name, self.q), want, places=15)

    def test_every_registered_measure_is_covered(self):
        covered = {"R", "P", "RR", "Success", "AP", "nDCG", "Rprec", "Judged",
                   "NumRet", "NumRel", "NumRelRet", "Bpref", "infAP", "SetP", "SetR", "SetF", "IPrec",
                   "EvidenceRecall", "EvidenceSuccess", "EvidenceRR",  # EvidenceTest
                   "Abstain",  # NoAnswerTest
                   "Leak",  # AccessTest
                   # TrecEvalFormTest, AllTrecMeasuresTest
                   "ERR",  # ErrTest
                   "GMAP", "GMBpref"} | set(AllTrecMeasuresTest.expected)
        # AgreementTest: rankings compared, not a Judged record
        covered |= {"Overlap", "Jaccard", "RBO"}
        self.assertEqual(set(rre.MEASURES), covered)

    def test_empty_ranking_scores_zero(self):
        q = judged(labels={"x": 1}, num_ret=0)
        for name in rre.measure_names():
            name = name.replace("@k", "@5").replace("@r", "@0.5").replace("@m", "@0.5")
            if rre.MEASURES[rre.parse_measure(name).base].domain == rre.AGREEMENT:
                continue  # AgreementTest: an empty ranking against the baseline's
            with self.subTest(name):
                self.assertEqual(value(name, q), 1 if name in ("NumRel", "Abstain") else "" if "RelString" in name else 0)

    def test_no_relevant_label_scores_zero_not_a_division_error(self):
        q = judged(0, None, labels={"y": 0})
        for name in ("R@5", "AP", "Rprec", "nDCG", "RR", "P@5"):
            with self.subTest(name):
                self.assertEqual(value(name, q), 0.0)

    def test_relevance_level_changes_relevance_not_gain(self):
        # level 2: only the grade-2 and grade-3 documents are relevant
        q = judged(None, 2, 0, 1, None, labels={"x": 3}, level=2)
        self.assertEqual((q.num_rel, q.rel_ranks), (2, [2]))
        self.assertEqual(value("nDCG", q), value("nDCG", self.q))  # gains keep every grade > 0

    def test_negative_grades_are_judged_but_never_relevant(self):
        q = judged(-1, 1, level=0)
        self.assertEqual((q.rel_ranks, q.judged_ranks, q.num_rel), ([2], [1, 2], 1))

    def test_precision_counts_missing_ranks_as_non_relevant(self):
        self.assertEqual(value("P@10", judged(1)), 0.1)

    def test_judged_divides_by_what_was_retrieved(self):
        self.assertEqual(value("Judged@10", judged(0, 1)), 1.0)

    def test_measure_names(self):
        self.assertEqual([spec[:3] for spec in rre.parse_measures(["r@10,NDCG@10", "rr", "R@10"])],
                         [("R@10", "R", 10), ("nDCG@10", "nDCG", 10), ("RR", "RR", None)])

    def test_a_measure_states_every_fact_or_fails_at_import(self):
        facts = {"ties": rre.BOUNDED, "unjudged": rre.BOUNDED, "losable": False, "evidence": False,
                 "domain": rre.ANSWERABLE}
        # a fact left out, or a value of another kind, is an error before any function is seen
        for fact in facts:
            for record in ({k: v for k, v in facts.items() if k != fact}, dict(facts, **{fact: None})):
                with self.subTest(fact=fact, record=record), self.assertRaisesRegex(TypeError, "^measure Toy: state"):
                    rre.measure("Toy", "none", **record)
        with self.assertRaisesRegex(TypeError, "and nothing else"):
            rre.measure("Toy", "none", colour="blue", **facts)
        self.assertNotIn("Toy", rre.MEASURES)
        bounded = [rre.spellings(m)[0] for m in rre.MEASURES.values() if m.unjudged == rre.BOUNDED]
        # said as the registry says
        self.assertEqual(sorted(bounded), sorted(re.split(", | and ", rre.ONLY_BOUNDED)))

    def test_features_read_a_measures_facts_from_its_record(self):
        @rre.measure("Toy", "none", ties="toy ties", unjudged="toy labels", losable=True, evidence=False,
                     domain=rre.ANSWERABLE)
        def toy(q, k):
            """Toy: 1 if any relevant document is ranked."""
            return float(bool(q.rel_ranks))
        self.addCleanup(rre.MEASURES.pop, "Toy")
        qrels, tied = {"q1": ["d1"]}, {"q1": {"d1": 1.0, "d2": 1.0}}
        result = rre.score_run(qrels, tied, "Toy", ties=True, unjudged_bounds=True)
        self.assertEqual((result["ties"]["not_bounded"], result["unjudged"]["not_bounded"]),
                         ({"Toy": "toy ties"}, {"Toy": "toy labels"}))
        self.assertEqual(rre.compare_runs(qrels, {"q1": ["d1"]}, {"q1": ["d2"]}, "Toy")["comparison"]["Toy"]["lost"],
                         ["q1"])  # losable: a hit before, nothing now


class MeasureParametersTest(TempDirTestCase):
    """rel=L and gains={...}: the same values as the global options give, at random."""

    def random_case(self, rng):
        qrels = {"q%d" % q: {"d%d" % d: rng.choice([-1, 0, 0, 1, 1, 2, 3]) for d in rng.sample(range(20), 8)}
                 for q in range(6)}
        for labels in qrels.values():
            labels["d0"] = 3  # every query has something relevant at every level
        runs = {q: {"d%d" % d: float(rng.randint(0, 4)) for d in rng.sample(range(20), 12)} for q in qrels}
        return qrels, runs

    def test_rel_equals_the_relevance_level_option(self):
        rng = random.Random(4)
        names = ["R", "P", "RR", "Success", "AP", "Rprec", "Bpref", "SetP", "SetR", "SetF", "NumRel", "NumRelRet"]
        for _ in range(10):
            qrels, runs = self.random_case(rng)
            level = rng.choice([0, 1, 2, 3])
            cut = {"R", "P", "Success"}
            own = ["%s(rel=%d)%s" % (n, level, "@5" if n in cut else "") for n in names]
            plain = ["%s%s" % (n, "@5" if n in cut else "") for n in names]
            mixed = rre.score_run(qrels, runs, own + ["nDCG@5"], ties=True)
            alone = rre.score_run(qrels, runs, plain + ["nDCG@5"], relevance_level=level, ties=True)
            for a, b in zip(own, plain):
                self.assertEqual(mixed["measures"][a], alone["measures"][b], a)
                self.assertEqual(mixed["ties"]["measures"][a], alone["ties"]["measures"][b], a)
            self.assertEqual(mixed["no_relevant_at_level"], dict.fromkeys(own, 0))

    def test_identity_gains_equal_plain_ndcg_and_other_gains_differ(self):
        rng = random.Random(5)
        for _ in range(10):
            qrels, runs = self.random_case(rng)
            result = rre.score_run(qrels, runs, "nDCG,nDCG@5,nDCG(gains={1:1,2:2,3:3}),nDCG(gains={2:2})@5,"
                                                "nDCG(gains={0:0,1:1,2:3,3:7})")
            for q, row in result["per_query"].items():
                self.assertAlmostEqual(row["nDCG(gains={1:1,2:2,3:3})"], row["nDCG"], places=12)
                self.assertAlmostEqual(row["nDCG(gains={2:2})@5"], row["nDCG@5"], places=12)
        # exponential gains: 3, 1 retrieved; 7, 3, 1 ideal
        q = judged(None, 2, 0, 1, None, labels={"x": 3})
        log2 = math.log2
        self.assertAlmostEqual(rre.ndcg(q, None, gains={1: 1, 2: 3, 3: 7}),
                               (3 / log2(3) + 1 / log2(5)) / (7 + 3 / log2(3) + 1 / 2), places=15)
        # a negative gain costs in the ranking and is left out of the ideal (trec_eval stops at
        # gain <= 0)
        self.assertAlmostEqual(rre.ndcg(q, None, gains={1: -1, 2: 2}),
                               (2 / log2(3) - 1 / log2(5)) / (3 + 2 / log2(3)), places=15)

    def test_names_are_canonical_and_computed_once(self):
        specs = rre.parse_measures(["p(rel=2)@10,P(rel=2)@10",
                                    "nDCG(gains={ 2:3, 1:1.5 })@5,AP(rel=0)"])
        self.assertEqual([s.name for s in specs], ["P(rel=2)@10", "nDCG(gains={1:1.5,2:3})@5", "AP(rel=0)"])
        status, out, err = cli(FIXTURE, "-m", "R(rel=1)@3,nDCG(gains={1:2}),R(rel=2)@3", "--format", "trec")
        self.assertEqual(status, 0)
        self.assertIn("R(rel=1)@3\tq1\t1.0", out)
        self.assertIn("note: R(rel=2)@3 scored 0 on 3 queries with nothing relevant at its own level", err)

    def test_bad_parameters_are_listed_at_once(self):
        status, out, err = cli(FIXTURE, "-m", "P(rel=x)@10,nDCG(gains={1:}),nDCG(rel=2),RR(gains={1:2}),P(rel=2")
        rejected(self, status, out, err, "'P(rel=x)@10': rel must be an integer", "not closed",
                 "'nDCG(gains={1:})': gains are", "nDCG takes no rel parameter", "RR takes no gains parameter")

    def test_blanks_separate_names_as_commas_do(self):
        want = cli(FIXTURE, "-m", "nDCG(gains={0:0,1:2})@3,AP,R@2", "--format", "csv")
        for given in ("nDCG(gains={0: 0, 1: 2})@3 AP R@2", " nDCG(gains={0:0,1:2})@3 ,\tAP  R@2 "):
            with self.subTest(given):  # ir_measures' form; blanks in braces stay the parameter's
                self.assertEqual(cli(FIXTURE, "-m", given, "--format", "csv"), want)
        given = "nDCG(gains={0:0,1:2})@3,,AP, R@2,"
        self.assertEqual(cli(FIXTURE, "-m", given, "--format", "csv"), want)
        for given in ("", " "):  # no name at all is still refused
            with self.subTest(given):
                rejected(self, *cli(FIXTURE, "-m", given), "unknown measure ''")
        status, out, _ = cli(FIXTURE, "-m", "R@3 runid", "--format", "trec")
        self.assertEqual([line.split("\t")[0] for line in out.splitlines()].count("runid"), 1)


class EvidenceTest(TempDirTestCase):
    def test_the_worked_example_in_every_input_form(self):
        run = {"q1": EVIDENCE_RANKING}
        trec = "".join("q1 Q0 %s %d %d\n" % (d, r, 10 - r) for r, d in enumerate(EVIDENCE_RANKING, 1))
        forms = {
            "fixture, evidence standing in for qrels": [self.write("f.json", {"evidence": EVIDENCE_EXAMPLE,
                                                                              "runs": run})],
            "fixture with qrels": [self.write("fq.json", {"qrels": {"q1": ["d1", "d9"]}, "runs": run,
                                                          "evidence": EVIDENCE_EXAMPLE})],
            "text lines, TREC run": ["--evidence", self.write("e.txt", "# QID SET SLOT DOCID\nq1 "
                                                                       "A a d1\nq1 A a d2\nq1 A b "
                                                                       "d3\nq1 B x d9\n"),
                                     "--run", self.write("run.txt", trec)],
            "JSON with --qrels": ["--evidence", self.write("e.json", EVIDENCE_EXAMPLE), "--qrels",
                                  self.write("q.txt", "q1 0 d1 1\n"), "--run", self.write("r.json", run)],
            "JSON Lines, AutoRAG's field": [self.write("log.jsonl", "".join(json.dumps(r) + "\n" for r in (
                {"qid": "q1", "retrieval_gt": [["d1", "d2"], ["d3"]], "retrieved": EVIDENCE_RANKING},
                {"qid": "q2", "evidence": [["d9"]], "retrieved": ["d9"]})))],
            "JSON Lines for --evidence": ["--evidence", self.write("ev.jsonl", json.dumps(
                {"query_id": "q1", "evidence": EVIDENCE_EXAMPLE["q1"]}) + "\n\n"), "--run", self.write("r2.json", run)],
        }
        for form, args in forms.items():
            with self.subTest(form):
                (status, out, err), reference = both_paths(*args, "-m", EVIDENCE_NAMES)
                self.assertEqual((status, out, err), reference)
                self.assertEqual(status, 0, err)
                expected = dict(EVIDENCE_VALUES)
                # q1 has set A only; q2 finds its one slot first
                if form.startswith("JSON Lines, AutoRAG"):
                    expected = {"EvidenceRecall@3": 0.75, "EvidenceSuccess@3": 0.5, "EvidenceRecall@4": 1.0,
                                "EvidenceSuccess@4": 1.0, "EvidenceRR": (0.25 + 1.0) / 2}
                self.assertEqual(json.loads(out)["measures"], expected)

    def test_one_set_of_single_slots_is_recall(self):
        run = {"q1": ["d3", "x", "d1", "d7"], "q2": ["y", "d5"]}
        evidence = {"q1": ["d1", "d3", "d8"], "q2": ["d5"]}
        result = rre.score_run(None, run, ["EvidenceRecall@%d" % k for k in (1, 2, 3, 4)] + ["R@1", "R@2", "R@3", "R@4"],
                               evidence=evidence)
        for k in (1, 2, 3, 4):
            self.assertEqual(result["measures"]["EvidenceRecall@%d" % k], result["measures"]["R@%d" % k])
        self.assertEqual(result["per_query"]["q1"]["EvidenceRecall@3"], 2 / 3)

    def test_random_rankings_agree_with_plain_loops(self):
        """Nested sets with alternatives, ties, chunks folded, --depth, --judged-only; the
        library, and the command line's TREC reader through both twins."""
        rng = random.Random(16)
        docs = ["d%d" % i for i in range(12)]
        for case in range(8):
            chunked, depth, judged_only = case % 2 == 1, rng.choice((None, 3, 6)), case % 3 == 2
            qrels, evidence, entries, run = {}, {}, {}, {}
            for q in ("q%d" % i for i in range(8)):
                entries[q], evidence[q] = random_evidence(rng, docs, chunked)
                ranked = [d + "#%d" % rng.randint(1, 3) if chunked else d for d in rng.sample(docs, rng.randint(0, 9))]
                run[q] = {d: float(rng.randint(0, 3)) for d in dict.fromkeys(ranked)}  # ties
                qrels[q] = {d: rng.choice((0, 1, -1)) for d in rng.sample(docs, 4)}
            options = dict(chunk_separator="#" if chunked else None, depth=depth, judged_only=judged_only)
            names = ["EvidenceRecall@2", "EvidenceSuccess@3", "EvidenceRR", "EvidenceRR@4", "EvidenceRecall@9"]
            result = rre.score_run(qrels, run, names, evidence=entries, no_relevant="zero", **options)
            trec = self.write("run.txt", "".join("%s Q0 %s 0 %r x\n" % (q, d, s) for q, r in run.items()
                                                 for d, s in r.items()))
            args = ["--qrels", self.write("q.json", qrels), "--evidence", self.write("e.json", entries),
                    "--run", trec, "-m", ",".join(names), "--no-relevant", "zero", "--missing-run", "zero"] + (
                ["--chunk-separator", "#"] * chunked + ["--depth", str(depth)] * bool(depth) + ["--judged-only"] * judged_only)
            fast, reference = both_paths(*args)
            self.assertEqual(fast, reference)
            self.assertEqual(fast[0], 0, fast[2])
            self.assertEqual(json.loads(fast[1])["per_query"], result["per_query"])
            for q, scored in run.items():
                ranking = [d.split("#")[0] for _, d in sorted(((s, d) for d, s in scored.items()), reverse=True)]
                ranking = list(dict.fromkeys(ranking))[:depth]
                if judged_only:
                    ranking = [d for d in ranking if qrels[q].get(d, -1) >= 0]
                sets = [[[d.split("#")[0] for d in slot] for slot in s] for s in evidence[q]]
                recall2, _, _ = evidence_by_loops(sets, ranking, 2)
                _, success3, _ = evidence_by_loops(sets, ranking, 3)
                _, _, rr = evidence_by_loops(sets, ranking)
                _, _, rr4 = evidence_by_loops(sets, ranking, 4)
                recall9, _, _ = evidence_by_loops(sets, ranking, 9)
                with self.subTest(case=case, query=q):
                    self.assertEqual(result["per_query"][q], dict(zip(names, (recall2, success3, rr, rr4, recall9))))

    def test_in_every_mode_and_format(self):
        qrels = {"q%d" % i: ["d%d" % i] for i in range(6)}
        evidence = self.write("e.json", {q: [["d" + q[1:]], ["x" + q[1:], "y" + q[1:]]] for q in qrels})
        base = self.write("base.json", {q: ["d" + q[1:], "x" + q[1:]] for q in qrels})
        cand = self.write("cand.json", {q: ["d" + q[1:]] + ["z"] * 0 + (["y" + q[1:]] if q < "q3" else []) for q in qrels})
        groups = self.write("g.json", {"early": ["q0", "q1", "q2"], "late": ["q3", "q4", "q5"]})
        common = ["--evidence", evidence, "--run", cand, "-m",
                  "EvidenceRecall@2,EvidenceSuccess@2"]
        status, out, err = cli(*common, "--baseline", base, "--groups", groups, "--max-group-drop", "0.4", "--ci")
        self.assertEqual(status, 1, err)
        result = json.loads(out)
        self.assertEqual(result["comparison"]["EvidenceSuccess@2"]["delta"], -0.5)
        self.assertEqual(result["comparison"]["EvidenceRecall@2"]["regressed"], {"q3": -0.5, "q4": -0.5, "q5": -0.5})
        self.assertEqual([(b["group"], b["measure"]) for b in result["breaches"]],
                         [("late", "EvidenceRecall@2"), ("late", "EvidenceSuccess@2")])
        self.assertEqual(result["groups"]["late"]["measures"], {"EvidenceRecall@2": 0.5, "EvidenceSuccess@2": 0.0})
        self.assertEqual(set(result["ci95"]), {"EvidenceRecall@2", "EvidenceSuccess@2"})
        status, out, err = cli(*common, "--run", base, "--baseline", base, "--format", "markdown")
        self.assertEqual(status, 0, err)
        self.assertIn("| EvidenceSuccess@2 |", out)
        for fmt, shown in (("table", "EvidenceRecall@2"), ("csv", "q5,0.5,0.0"), ("trec", "EvidenceSuccess@2\tall\t0.5")):
            with self.subTest(fmt):
                status, out, err = cli(*common, "--format", fmt)
                self.assertEqual(status, 0, err)
                self.assertIn(shown, out)
        plot = self.tmp / "p.svg"
        status, _, err = cli(*common, "--baseline", base, "--plot", plot)
        self.assertEqual(status, 0, err)
        self.assertIn("EvidenceRecall@k", plot.read_text())
        result = rre.score_runs(None, {"b": json.loads(base.read_text()), "c": json.loads(cand.read_text())},
                                "EvidenceSuccess@2", evidence=json.loads(evidence.read_text()))
        self.assertEqual([r["measures"]["EvidenceSuccess@2"] for r in result["runs"].values()], [1.0, 0.5])

    def test_evidence_standing_in_labels_the_ids_relevant_at_grade_1(self):
        result = rre.score_run(None, {"q1": ["d1"]}, "P@1,P(rel=2)@1,NumRel", evidence={"q1": ["d1", "d2"]})
        self.assertEqual(result["measures"], {"P@1": 1.0, "P(rel=2)@1": 0.0, "NumRel": 2})
        fixture = self.write("bom.json", "\ufeff" + json.dumps({"evidence": {"q1": ["d1"]}, "runs": {"q1": ["d1"]}}))
        # a BOM
        self.assertEqual(json.loads(cli(fixture, "-m", "EvidenceRR")[1])["measures"], {"EvidenceRR": 1.0})

    def test_evidence_beside_labels_in_a_qrels_file(self):
        run = self.write("run.json", {"q1": ["a#2", "b#1"]})
        fixture = self.write("f.json", {"qrels": {"q1": ["a"]}, "runs": {}, "evidence": {"q1": [["a"], ["b"]]}})
        records = self.write("r.jsonl", '{"qid": "q1", "relevant": ["a#1"], "evidence": [["a#1"], '
                                        '["b#3"]]}\n\n{"qid": "q2", "relevant": ["c"], '
                                        '"evidence": ["c#1"]}\n')
        for args in (["--qrels", fixture], ["--qrels", records, "--missing-run", "zero"]):
            with self.subTest(args[1].name):
                status, out, err = cli(*args, "--run", run, "--chunk-separator", "#", "-m", "EvidenceSuccess@2,R@1")
                self.assertEqual(status, 0, err)
                self.assertEqual(json.loads(out)["per_query"]["q1"], {"EvidenceSuccess@2": 1.0, "R@1": 1.0})

    def test_ties_do_not_pretend_to_bound_evidence(self):
        status, out, err = cli(self.write("f.json", {"evidence": {"q1": ["d1", "d2"]},
                                                     "runs": {"q1": {"d1": 1.0, "d2": 1.0, "d3": 1.0}}}),
                               "-m", "EvidenceRecall@1,R@1", "--ties")
        ties = json.loads(out)["ties"]
        self.assertEqual(ties["measures"], {"EvidenceRecall@1": {"low": None, "high": None},
                                            "R@1": {"low": 0.0, "high": 0.5}})
        self.assertIn("EvidenceRecall@1", ties["not_bounded"])

    def test_chunks_fold_in_the_evidence_as_in_the_labels(self):
        result = rre.score_run(None, {"q1": ["a#3", "a#1", "b#2"]},
                               "EvidenceRR,EvidenceRecall@1,R@2",
                               evidence={"q1": [["a#1", "a#2"], ["b#1"]]}, chunk_separator="#")
        self.assertEqual(result["per_query"]["q1"], {"EvidenceRR": 0.5, "EvidenceRecall@1": 0.5, "R@2": 1.0})
        self.assertEqual(result["folded"]["total"], 1)

    def test_rejections(self):
        run = self.write("run.json", {"q1": ["d1"]})
        qrels = self.write("qrels.txt", "q1 0 d1 1\n")
        cases = [  # (evidence file content, extra arguments, fragments of the one line)
            ({"q1": []}, [], ["e.json: q1", "query 'q1'", "the evidence is empty"]),
            ({"q1": [[]]}, [], ["the evidence is empty"]),
            ({"q1": [["d1"], []]}, [], ["e.json: q1[1]", "the slot is empty"]),
            ({"q1": [[["d1"]], []]}, [], ["e.json: q1[1]", "the evidence set is empty"]),
            ({"q1": [["d1"], "d2"]}, [], ["e.json: q1[1]", "mixed nesting: expected a slot (a "
                                                           "list) like the first, not str 'd2'"]),
            ({"q1": ["d1", ["d2"]]}, [], ["e.json: q1[1]", "mixed nesting: expected an ID"]),
            ({"q1": [[["d1"]], ["d2"]]}, [], ["q1[1][0]", "not str 'd2'"]),
            ({"q1": [["d1", "d1"]]}, [], ["q1[0][1]", "document 'd1' appears twice (first at ", "q1[0][0])"]),
            ({"q1": [["d1", 7]]}, [], ["q1[0][1]", "document ID must be a string, not int 7"]),
            ({"q1": [[" "]]}, [], ["q1[0][0]", "document ID ' ' is blank"]),
            ({"q1": [[[["d1"]]]]}, [], ["expected evidence as a list of IDs"]),
            ({"q1": {"d1": 1}}, [], ["expected evidence as a list of IDs", "not dict"]),
            ({}, [], ["no evidence: the object holds no query"]),
            ({"q1": ["d1"], "q2": ["d2"]}, ["--qrels", qrels], ["query 'q2'", "evidence sets but no labels"]),
            ({"q9": ["d1"]}, ["--qrels", qrels], ["e.json", "query 'q1'", "labels but no evidence set"]),
            ({"q1": ["#1"]}, ["--chunk-separator", "#"], ["evidence ID '#1' is blank "
                                                          "once cut at '#'"]),
            ("q1 A a d1\nq1 A a d1\n", [], ["e.txt:2", "document 'd1' is listed twice in one slot "
                                                       "(first at line 1)"]),
            ("q1 A d1\n", [], ["e.txt:1", "expected 4 columns (QID SET SLOT DOCID), found 3"]),
            ("# nothing\n", [], ["e.txt", "no evidence: the file has no QID SET "
                                          "SLOT DOCID lines"]),
        ]
        for content, extra, fragments in cases:
            with self.subTest(content=content):
                path = self.write("e.txt" if isinstance(content, str) else "e.json", content)
                rejected(self, *cli("--evidence", path, "--run", run, "-m", "EvidenceRR", *extra), *fragments)
        fixture = self.write("f.json", {"evidence": {"q1": ["d1"]}, "runs": {"q1": ["d1"]}})
        rejected(self, *cli(fixture, "--evidence", self.write("e.json", {"q1": ["d1"]})),
                 'f.json: the fixture has "evidence" and --evidence is given too')
        rejected(self, *cli(self.write("g.json", {"qrels": {"q1": ["d1"]}, "runs": {"q1": ["d1"]}}), "-m", "EvidenceRR@5,R@5"),
                 "EvidenceRR@5 needs evidence sets: --evidence FILE")
        rejected(self, *cli(self.write("h.json", {"runs": {"q1": ["d1"]}})), 'missing "qrels"')
        records = self.write("r.jsonl", '{"qid": "q1", "evidence": ["d1"], "retrieved": '
                                        '["d1"]}\n{"qid": "q2", "retrieved": []}\n')
        rejected(self, *cli(records, "--evidence", self.write("e2.json", {"q1": ["d1"]}), "-m", "EvidenceRR"),
                 "r.jsonl:1: query 'q1': the record has evidence sets and --evidence is given too")
        bad = self.write("b.jsonl", '{"qid": "q1", "evidence": []}\n{"qid": "q2", '
                                    '"evidence": ["d2"]}\n')
        rejected(self, *cli("--evidence", bad, "--run", run),
                 "b.jsonl:1: evidence: query 'q1': the evidence is empty")
        both = self.write("both.jsonl", '{"qid": "q1", "relevant": ["d1"], "evidence": '
                                        '["d1"]}\n{"qid": "q2", "relevant": ["d2"], '
                                        '"evidence": ["d2"]}\n')
        rejected(self, *cli("--qrels", both, "--evidence", self.write("e3.json", {"q1": ["d1"]}), "--run", run),
                 "both.jsonl: the records give evidence and --evidence is given too")
        labels_only = self.write("n.jsonl", '{"qid": "q1", "relevant": ["d1"]}\n{"qid": "q2", '
                                            '"relevant": []}\n')
        rejected(self, *cli("--evidence", labels_only, "--run", run),
                 "n.jsonl: no evidence: no record has evidence or retrieval_gt")
        with self.assertRaisesRegex(rre.EvalError, r"^evidence\.q1\[0\]: query 'q1': the slot is empty$"):
            rre.score_run(None, {"q1": ["d1"]}, "EvidenceRR", evidence={"q1": [[], ["d1"]]})


# --- Token budgets and score floors (CLI_CONTRACT section 17) ---

    def test_evidence_measures_without_a_cutoff(self):
        run = {"q1": ["d4", "d2", "d5", "d3", "d9"], "q2": ["x", "y", "d7"]}
        evidence = {"q1": [[["d1", "d2"], ["d3"]], [["d9"]]], "q2": [["d7"], ["d8"]]}
        names = ["EvidenceRecall", "EvidenceSuccess", "EvidenceRR", "EvidenceRecall@99", "EvidenceSuccess@99"]
        result = rre.score_run(None, run, names, evidence=evidence)
        self.assertEqual(result["per_query"]["q1"], dict(zip(names, (1.0, 1.0, 0.25, 1.0, 1.0))))
        self.assertEqual(result["per_query"]["q2"], dict(zip(names, (0.5, 0.0, 0.0, 0.5, 0.0))))
        fixture = self.write("f.json", {"evidence": evidence, "runs": run})
        fast, reference = both_paths(fixture, "-m", ",".join(names[:3]), "--format", "csv")
        self.assertEqual(fast, reference)
        self.assertEqual(fast[1].splitlines()[1:], ["q1,1.0,1.0,0.25", "q2,0.5,0.0,0.0"], fast[2])


class BudgetAndFloorTest(TempDirTestCase):
    def test_the_worked_example_in_every_input_form(self):
        names = ",".join(BUDGET_VALUES)
        fixture = self.write("f.json", {"qrels": BUDGET_QRELS, "runs": BUDGET_RUN})
        trec = self.write("run.txt", "".join("q1 Q0 d%d %d %d x\n" % (i, i, 10 - i) for i in range(1, 6)))
        forms = {
            "JSON lengths, a fixture": [fixture, "--lengths", self.write("l.json", BUDGET_LENGTHS)],
            "text lengths, a TREC run": ["--qrels", fixture, "--run", trec, "--lengths",
                                         self.write("l.txt", "# ID TOKENS\n" + "".join("%s %d\n" % x for x in
                                                                                     BUDGET_LENGTHS.items()))],
            "a record's tokens": [self.write("log.jsonl", json.dumps(
                {"qid": "q1", "relevant": BUDGET_QRELS["q1"], "retrieved": BUDGET_RUN["q1"],
                 "tokens": [300, 900, 400, 100, 200]}) + "\n\n")],
            "a record's tokens before --lengths": [self.tmp / "log.jsonl", "--lengths",
                                                   self.write("zero.json", {d: 0 for d in BUDGET_LENGTHS})],
        }
        for form, args in forms.items():
            with self.subTest(form):
                fast, reference = both_paths(*args, "-m", names)
                self.assertEqual(fast, reference)
                self.assertEqual(fast[0], 0, fast[2])
                self.assertEqual(json.loads(fast[1])["measures"], BUDGET_VALUES)
        result = rre.score_run(BUDGET_QRELS, BUDGET_RUN, names, lengths=BUDGET_LENGTHS)
        self.assertEqual(result["measures"], BUDGET_VALUES)

    def test_random_rankings_agree_with_plain_loops(self):
        """Floors, budgets with both packings and an overhead, ties, chunks, --depth and
        --judged-only, evidence sets under them; the library, and the TREC reader through
        both twins."""
        rng = random.Random(17)
        for case in range(6):
            chunked, depth, judged_only = case % 2 == 1, rng.choice((None, 2, 5)), case % 3 == 2
            docs = ["d%d" % i for i in range(10)]
            ids = [d + "#%d" % c for d in docs for c in (1, 2)] if chunked else docs
            lengths = {d: rng.randint(0, 400) for d in ids}
            qrels, run, entries, evidence = {}, {}, {}, {}
            for q in ("q%d" % i for i in range(6)):
                entries[q], evidence[q] = random_evidence(rng, docs, chunked)
                qrels[q] = {d: rng.choice((0, 1, 2, -1)) for d in rng.sample(docs, 5)}
                qrels[q][rng.choice(docs)] = 2  # something relevant
                run[q] = {d: float(rng.randint(0, 4)) / 4 for d in rng.sample(ids, rng.randint(1, 10))}
            filters = [dict(thresh=0.5), dict(tokens=900), dict(tokens=700, overhead=40, pack="skip"),
                       dict(thresh=0.25, tokens=600, pack="skip")]
            texts = ["thresh=0.5", "tokens=900", "tokens=700,overhead=40,pack=skip",
                     "thresh=0.25,tokens=600,pack=skip"]
            names = ["%s(%s)@4" % (m, t) for t in texts for m in ("R", "P", "RR", "Success", "AP", "nDCG",
                                                                   "EvidenceRecall")] + ["EvidenceRR(%s)" % t for t in texts]
            options = dict(chunk_separator="#" if chunked else None, depth=depth, judged_only=judged_only)
            result = rre.score_run(qrels, run, names, lengths=lengths, evidence=entries, **options)
            args = ["--qrels", self.write("q.json", qrels), "--lengths", self.write("l.json", lengths), "--run",
                    self.write("run.txt", "".join("%s Q0 %s 0 %r x\n" % (q, d, s) for q, r in run.items()
                                                  for d, s in r.items())), "-m", ",".join(names),
                    "--evidence", self.write("e.json", entries)]
            args += ["--chunk-separator", "#"] * chunked + ["--depth", str(depth)] * bool(depth) + [
                "--judged-only"] * judged_only
            fast, reference = both_paths(*args)
            self.assertEqual(fast, reference)
            self.assertEqual(json.loads(fast[1])["per_query"], result["per_query"])
            labels = {q: dict(rre.fold_labels({q: l}, None)[q]) for q, l in qrels.items()}
            for q in run:
                for f, text in zip(filters, texts):
                    ranking = ranking_by_loops(run[q], labels[q], lengths, separator="#" if chunked else None,
                                               depth=depth, judged_only=judged_only, **f)
                    expected = measures_by_loops(ranking, labels[q], 4, True)
                    sets = [[[d.split("#")[0] for d in slot] for slot in s] for s in evidence[q]]
                    expected["EvidenceRecall"] = evidence_by_loops(sets, ranking, 4)[0]
                    with self.subTest(case=case, query=q, filter=text):
                        self.assertEqual(result["per_query"][q]["EvidenceRR(%s)" % text], evidence_by_loops(sets, ranking)[2])
                        for m, v in expected.items():
                            self.assertAlmostEqual(result["per_query"][q]["%s(%s)@4" % (m, text)], v, delta=1e-12)

    def test_ties_bound_a_floor_as_they_bound_the_run_cut_at_it(self):
        """A floor keeps whole ties, so its bounds are those of the ranking it leaves; a budget's
        are not given.  Ties, chunks, --depth and --judged-only; the TREC reader's two twins."""
        rng, spread = random.Random(23), 0
        bases = ["R(%s)@3", "RR(%s)", "Success(%s)@2", "AP(%s)", "nDCG(%s)@4",
                 "nDCG(gains={0:0,1:3,2:1},%s)@3"]
        for case in range(6):
            chunked, depth, judged_only = case % 2 == 1, rng.choice((None, 3)), case % 3 == 2
            docs = ["d%d" % i for i in range(8)]
            ids = [d + "#%d" % c for d in docs for c in (1, 2)] if chunked else docs
            qrels = {"q%d" % i: {d: rng.choice((0, 1, 2)) for d in rng.sample(docs, 5)} for i in range(5)}
            run = {q: {d: rng.randint(0, 3) / 4 for d in rng.sample(ids, 7)} for q in qrels}
            options = dict(chunk_separator="#" if chunked else None, depth=depth, judged_only=judged_only, ties=True)
            floored = rre.score_run(qrels, run, [b % "thresh=0.5" for b in bases], **options)["ties"]["measures"]
            cut = {q: {d: x for d, x in r.items() if x >= 0.5} for q, r in run.items()}
            plain = rre.score_run(qrels, cut, [b.replace("(%s)", "").replace(",%s", "") for b in bases],
                                  **options)["ties"]["measures"]
            with self.subTest(case=case):
                self.assertEqual(list(floored.values()), list(plain.values()))
            spread += sum(bounds["low"] < bounds["high"] for bounds in floored.values())
        self.assertGreater(spread, 10)  # the orders of ties moved the floored measures
        args = ["--qrels", self.write("q.json", qrels), "--ties", "-m", "R(thresh=0.5)@3,R(tokens=99)@3", "--lengths",
                self.write("l.json", dict.fromkeys(ids, 50)), "--run", self.write("run.txt", "".join(
                    "%s Q0 %s 0 %r x\n" % (q, d, x) for q, r in run.items() for d, x in r.items())),
                "--chunk-separator", "#"] + ["--depth", str(depth)] * bool(depth) + ["--judged-only"] * judged_only
        fast, reference = both_paths(*args)
        self.assertEqual(fast, reference)
        ties = json.loads(fast[1])["ties"]
        self.assertEqual(ties["measures"], {"R(thresh=0.5)@3": floored["R(thresh=0.5)@3"],
                                            "R(tokens=99)@3": {"low": None, "high": None}})
        self.assertEqual(ties["not_bounded"], {"R(tokens=99)@3": "the orders of tied items under "
                                                                 "a token budget are not tried"})

    def test_a_budget_is_a_filter_like_depth(self):
        """The ideal of nDCG and the R of recall keep every label; P divides by what is left."""
        result = rre.score_run({"q1": {"d1": 2, "d2": 1, "d3": 1}}, {"q1": ["d1", "d9", "d2"]},
                               "nDCG(tokens=10),R(tokens=10),P(tokens=10)@10,P@10,EvidenceRecall(tokens=10)@2",
                               lengths={"d1": 5, "d9": 5, "d2": 5}, evidence={"q1": [["d1"], ["d2", "d3"]]})
        ideal = 2 + 1 / math.log2(3) + 1 / 2
        self.assertEqual(result["per_query"]["q1"], {
            "nDCG(tokens=10)": 2 / ideal, "R(tokens=10)": 1 / 3, "P(tokens=10)@10": 0.5, "P@10": 0.2,
            "EvidenceRecall(tokens=10)@2": 0.5})

    def test_repeats_removed_before_the_budget_and_floors_below_zero(self):
        class Count(int):  # an integral type of another library, as numpy's int64
            pass
        result = rre.score_run({"q1": ["b"]}, {"q1": {"a": 3.0, "b": 2.0}},
                               "R(tokens=10),R(thresh=-5)@3,R(thresh=3)",
                               lengths={"a": Count(5), "b": Count(0)}, duplicates="first")
        self.assertEqual(result["per_query"]["q1"], {"R(tokens=10)": 1.0, "R(thresh=-5)@3": 1.0, "R(thresh=3)": 0.0})
        fixture = self.write("f.json", {"qrels": {"q1": ["b"]}, "runs": {"q1": ["a", "a", "b"]}})
        status, out, err = cli(fixture, "-m", "R(tokens=10)", "--lengths", self.write("l.json", {"a": 5, "b": 5}),
                               "--duplicates", "first")
        self.assertEqual((status, json.loads(out)["measures"]), (0, {"R(tokens=10)": 1.0}), err)

    def test_canonical_names_in_every_format(self):
        fixture = self.write("f.json", {"qrels": {"q1": ["d1"], "q2": ["d2"]},
                                        "runs": {"q1": {"d1": 0.9, "d3": 0.2}, "q2": {"d4": 0.8, "d2": 0.7}}})
        base = self.write("base.json", {"q1": {"d1": 0.9}, "q2": {"d2": 0.9}})
        lengths = self.write("l.json", {"d1": 10, "d2": 10, "d3": 10, "d4": 10})
        name = "R(tokens=0010,overhead=0,thresh=.50,pack=prefix)@2"
        status, out, err = cli(fixture, "--lengths", lengths, "-m", name + ",R(tokens=10,thresh=0.5)@2", "--format", "trec")
        self.assertEqual(status, 0, err)
        self.assertEqual(out.splitlines()[-1],
                         "R(thresh=0.5,tokens=10)@2\tall\t0.5")  # computed once
        status, out, err = cli(fixture, "--lengths", lengths, "-m", "P(tokens=10)@2,RR(thresh=0.75)", "--baseline", base,
                               "--max-query-drop", "0.5", "--groups", self.write("g.json", {"one": ["q2"]}),
                               "--format", "markdown", "--plot", self.tmp / "p.svg", "--ci")
        self.assertEqual(status, 1, err)
        self.assertIn("- RR(thresh=0.75) query 'q2': 1.0000 -\\> 0.0000 (drop 1.0000 \\> --max-query-drop 0.5)", out)
        self.assertIn("P(tokens=10)@k", (self.tmp / "p.svg").read_text())
        status, out, err = cli("--qrels", fixture, "--run", fixture, "--run", base,
                               "-m", "Success(thresh=0.75)", "--format", "csv")
        self.assertEqual((status, out.splitlines()), (0, ["query,Success(thresh=0.75) "
                                                          "%s,Success(thresh=0.75) %s"
                                                          % (fixture, base), "q1,1.0,1.0", "q2,0.0,1.0"]), err)
        rejected(self, *cli("--qrels", fixture, "--run", fixture, "--run", base, "--lengths", lengths,
                            "-m", "Success(thresh=0.75)"),
                            "--lengths gives token counts, and no measure has a token budget: add "
                            "tokens=B to a measure")  # a floor weighs no token

    def test_rejections(self):
        fixture = self.write("f.json", {"qrels": {"q1": ["d1"]}, "runs": {"q1": {"d1": 0.5, "d2": 0.1}}})
        listed = self.write("listed.json", {"qrels": {"q1": ["d1"]}, "runs": {"q1": ["d1"]}})
        cases = [  # (arguments, fragments of the one line)
            ([listed, "-m", "R(thresh=0.5)@5"], ["listed.json: runs.q1", "query 'q1'",
                                                 "a score floor (thresh=) needs scores"]),
            ([listed, "-m", "Abstain(thresh=0.5)"], ["needs scores"]),
            ([fixture, "-m", "R(tokens=10)"], ["f.json: runs.q1", "query 'q1'", "no token count for 'd1'", "--lengths FILE"]),
            ([fixture, "-m", "R(tokens=10)", "--lengths", self.write("l1.json", {"d1": 3})], ["no token count for 'd2'"]),
            ([fixture, "--lengths", self.write("l2.json", {"d1": -3}), "-m", "R(tokens=1)"],
             ["l2.json: d1", "token count -3 is not an integer from 0 to 2**63 - 1"]),
            ([fixture, "--lengths", self.write("l2b.json", {"d1": 300, "d2": -3}), "-m", "R(tokens=1)"],
             ["l2b.json: d2", "token count -3 is not"]),  # the least, not the first, is checked
            ([fixture, "-m", "R(tokens=100)", "--lengths", self.write("l3.json", {"d1": 3.0})], ["token count 3.0 is not"]),
            ([fixture, "-m", "R(tokens=100)", "--lengths", self.write("l4.json", {"d1": True})], ["token count True is not"]),
            ([fixture, "-m", "R(tokens=100)", "--lengths", self.write("l5.json", {"d1": 2 ** 63})], ["token count 9223372036854775808 is not"]),
            ([fixture, "-m", "R(tokens=100)", "--lengths", self.write("l6.json", '{"d1": 3, "d1": 4}')], ["key 'd1' appears twice"]),
            ([fixture, "-m", "R(tokens=100)", "--lengths", self.write("l13.json", {"d1": 3, "d2": 2 ** 63})], ["l13.json: d2", "token count 9223"]),
            ([fixture, "-m", "R(tokens=100)", "--lengths", self.write("l14.txt", "d1 99999999999999999999\n")], ["token count '99999999999999999999'"]),
            ([fixture, "-m", "R(tokens=100)", "--lengths", self.write("l7.json", {})], ["no token counts: the object is empty"]),
            ([fixture, "-m", "R(tokens=100)", "--lengths", self.write("l8.txt", "d1 3\nd1 4\n")], ["l8.txt:2", "ID 'd1' has a token count on line 1"]),
            ([fixture, "-m", "R(tokens=100)", "--lengths", self.write("l9.txt", "d1 3.5\n")], ["l9.txt:1", "token count '3.5' is not"]),
            ([fixture, "-m", "R(tokens=100)", "--lengths", self.write("l10.txt", "d1\n")], ["l10.txt:1", "expected 2 columns (ID TOKENS), found 1"]),
            ([fixture, "-m", "R(overhead=5)"], ["'R(overhead=5)': overhead= and pack= go with "
                                                "a token budget"]),
            ([fixture, "-m", "R(tokens=-1)"], ["'R(tokens=-1)': tokens must be an integer from "
                                               "0 to 2**63 - 1"]),
            ([fixture, "-m", "R(tokens=9223372036854775808)"],  # 2**63: the limit passed is named
             ["tokens must be an integer from 0 to 2**63 - 1, not '9223372036854775808'"]),
            ([fixture, "-m", "R(tokens=99999999999999999999)"], ["tokens must be an integer from "
                                                                 "0 to 2**63 - 1"]),
            ([fixture, "-m", "R(thresh=0.2)@1,R(tokens=10)", "--lengths", self.write("l15.json", {"d1": 3})],
             ["query 'q1'", "no token count for 'd2'"]),
            ([fixture, "-m", "R(thresh=inf)"], ["thresh must be a number"]),
            ([fixture, "-m", "R(tokens=1,tokens=2)"], ["tokens is given twice"]),
            ([fixture, "-m", "R(tokens=1,pack=all)"], ["pack is prefix"]),
            ([fixture, "-m", "Rprec(tokens=1)"], ["Rprec takes no tokens parameter"]),
            ([fixture, "-m", "Abstain(tokens=1)"], ["Abstain takes no tokens parameter"]),
            ([fixture, "-m", "R(colour=1)"], ["parameters are rel=L, gains={G:V,...} (nDCG, G, "
                                              "nDCGRel, RnDCG, RBP), thresh=X"]),
            ([fixture, "-m", "nDCG(gains={0:0,1:1e999})"], ["gains are {grade: gain, ...}"]),
            ([self.write("t11.jsonl", '{"qid": "q1", "relevant": ["d1"], "retrieved": ["d1", '
                                      '"d2"], "tokens": [1]}\n{"qid": "q2"}\n'),
              "-m", "R(tokens=5)"], ["t11.jsonl:1: tokens", "expected a list of 2 token counts"]),
            ([self.write("t12.jsonl", '{"qid": "q1", "relevant": ["d1"], "retrieved": ["d1"], '
                                      '"tokens": [-1]}\n{"qid": "q2"}\n'),
              "-m", "R(tokens=5)"], ["t12.jsonl:1: tokens[0]", "token count -1"]),
        ]
        for args, fragments in cases:
            with self.subTest(args=args[1:]):
                rejected(self, *cli(*args), *fragments)
        with self.assertRaisesRegex(rre.EvalError, "^lengths: d1: token count 'x' is not"):
            rre.score_run({"q1": ["d1"]}, {"q1": ["d1"]}, "R(tokens=1)", lengths={"d1": "x"})


# --- Questions with no answer in the corpus (CLI_CONTRACT section 18) ---

    def test_depth_comes_first(self):
        qrels, run = {"q1": ["d4"]}, {"q1": ["d1", "d2", "d3", "d4", "d5"]}
        # within --depth 3 a packer that passes over d3 cannot reach d4 (it once did: 1.0)
        for name, depth, value in (("R(tokens=1500,pack=skip)@5", 3, 0.0), ("R(tokens=1500,pack=skip)@5", 4, 1.0),
                                   ("R(tokens=1500)@5", 4, 0.0)):
            with self.subTest(name=name, depth=depth):
                result = rre.score_run(qrels, run, [name], lengths=BUDGET_LENGTHS, depth=depth)
                self.assertEqual(result["measures"][name], value)
        chunks = {"q1": ["a#1", "a#2", "b#1", "c#1"]}  # --depth counts documents: a and b
        result = rre.score_run({"q1": ["c"]}, chunks, ["R(tokens=99,pack=skip)@3"], depth=2, chunk_separator="#",
                               # c#1 is past the depth: not weighed
                               lengths={"a#1": 1, "a#2": 1, "b#1": 1})
        self.assertEqual(result["measures"], {"R(tokens=99,pack=skip)@3": 0.0})

    def test_only_a_weighed_item_needs_a_count(self):
        qrels, run = {"q1": ["d1", "d3", "d5"]}, {"q1": ["d1", "d2", "d3", "d4", "d5"]}
        sent = {"d1": 300, "d2": 900}  # a log that counts the chunks it sent
        cases = [("R(tokens=1500)@2", sent, 1 / 3),  # two documents seen: d3 is not weighed
                 ("R(tokens=1000)@5", sent, 1 / 3),  # d2 does not fit: the prefix ends there
                 ("R(tokens=1500)@3", sent, "no token count for 'd3'"),
                 # no cutoff: every item may be weighed
                 ("R(tokens=1500)", sent, "no token count for 'd3'"),
                 # a packer passes over d2
                 ("R(tokens=1000,pack=skip)@5", sent, "no token count for 'd3'"),
                 # d2 fills k: d3 is not weighed
                 ("R(tokens=99,pack=skip)@1", {"d1": 300, "d2": 9}, 0.0)]
        for name, lengths, expected in cases:
            with self.subTest(name=name):
                outcome_ = outcome(lambda: rre.score_run(qrels, run, [name], lengths=lengths)["measures"][name])
                if isinstance(expected, float):
                    self.assertEqual(outcome_, ("ok", expected))
                else:
                    self.assertEqual(outcome_[0], "error")
                    self.assertIn(expected, outcome_[1])
                text = self.write("l.txt", "".join("%s %d\n" % pair for pair in lengths.items()))
                trec = self.write("r.txt", "".join("q1 Q0 %s %d %d x\n" % (d, i, 9 - i) for i, d in enumerate(run["q1"])))
                fast, reference = both_paths("--qrels", self.write("q.json", qrels), "--run", trec, "-m", name,
                                             "--lengths", text)
                self.assertEqual(fast, reference)
                self.assertEqual(fast[0], 0 if isinstance(expected, float) else 2, fast[2])
        log = self.write("log.jsonl", json.dumps({"qid": "q1", "relevant": qrels["q1"], "retrieved": run["q1"],
                                                  "tokens": [300, 900, None, None, None]}) + "\n\n")
        fast, reference = both_paths(log, "-m", "R(tokens=1500)@2,R(tokens=1000)@5")
        self.assertEqual(fast, reference)
        self.assertEqual(json.loads(fast[1])["measures"], {"R(tokens=1500)@2": 1 / 3, "R(tokens=1000)@5": 1 / 3}, fast[2])
        rejected(self, *cli(log, "-m", "R(tokens=1500)@3"), "log.jsonl", "no token count for 'd3'")

    def test_a_budget_under_depth_a_foreign_digit_and_an_empty_counts_file(self):
        qrels, run = {"q1": ["x 2"]}, {"q1": ["x 1", "x 2", "y"]}  # JSON IDs may hold a space
        result = rre.score_run(qrels, run, ["R(tokens=9,pack=skip)@3"], depth=1, lengths={"x 1": 1})
        # --depth 1: 'x 2' is not weighed
        self.assertEqual(result["measures"], {"R(tokens=9,pack=skip)@3": 0.0})
        rejected(self, *cli(self.write("f.json", {"qrels": {"q1": ["d1"]}, "runs": {"q1": {"d1": 1.0}}}),
                            "-m", "R(tokens=\u0661\u0662)@1"),
                            "tokens must be an integer from 0 to 2**63 - 1")
        fixture = self.write("g.json", {"qrels": {"q1": ["d1"]}, "runs": {"q1": {"d1": 0.5}}})
        # both twins: the fast one hands the empty file over
        for data in ("", "# only a comment\n"):
            with self.subTest(data=data):
                fast, reference = both_paths(fixture, "-m", "R(tokens=9)@1", "--lengths", self.write("l.txt", data))
                self.assertEqual(fast, reference)
                rejected(self, *fast, "l.txt: no token counts: the file has no ID TOKENS lines")
        # not listed by score, however short
        windows = rre._windows_in_rank_order([b"a", b"b"], [1.0, 2.0], 1)
        self.assertEqual(list(itertools.chain.from_iterable(windows)), [(2.0, "b"), (1.0, "a")])

    def test_the_counts_file_is_read_for_the_weighed_items(self):
        """An ID nobody weighs may be listed twice; every line is still checked; a weighed ID
        listed twice is refused; through both twins of the reader, whatever the chunk."""
        fixture = self.write("f.json", {"qrels": {"q1": ["d1"]}, "runs": {"q1": {"d1": 0.9, "d2": 0.5, "d3": 0.1}}})
        for data, status, fragment in (("d3 1\nd3 2\nd1 4\nd2 5\n", 0, ""),
                                       ("d1 1\nd2 2\nd1 4\n", 2,
                                        "ID 'd1' has a token count on line 1 already"),
                                       ("d1 1\nd9 x\n", 2, "l.txt:2"), ("d1 1\nd9 99999999999999999999\n", 2, "l.txt:2")):
            with self.subTest(data=data):
                fast, reference = both_paths(fixture, "-m", "R(tokens=9)@2", "--lengths", self.write("l.txt", data))
                self.assertEqual(fast, reference)
                self.assertEqual(fast[0], status, fast[2])
                self.assertIn(fragment, fast[2])
        rng = random.Random(29)
        for case in range(40):
            ids = ["d%d" % rng.randint(0, 60) for _ in range(rng.randint(1, 120))]
            lines = ["%s %d\n" % (d, rng.randint(0, 999)) for d in ids]
            if case % 4 == 3:
                lines.insert(rng.randrange(len(lines)), rng.choice(["# c\n", "d7\t3\n", "\n", "d8  3\n", " d9 3\n", "d9 3 \n",
                                                                    "#%s 3\n" % ids[0], "d7\t3 4\n", "d7\x0b3\n"]))
            wanted = set(rng.sample(ids, rng.randint(0, len(ids)))) if case % 5 else None
            path = self.write("w.txt", "".join(lines))
            with self.subTest(case=case):
                with rre.open_input(str(path)) as stream:
                    fast = outcome(lambda: rre.fast_length_lines(stream, "w.txt", wanted))
                with rre.open_input(str(path)) as stream:
                    self.assertEqual(fast, outcome(lambda: rre.reference_length_lines(stream, "w.txt", wanted)))
        for odd in ("#d1 3\n", "d1\t3 4\n", "x\r1 3\n", "d\x001 3\n", "d1 3\rd2 4\r\n", "d1\x0b3\n", "d1 3 \n"):
            path = self.write("o.txt", "d1 3\n" + odd + "d2 4\n")
            with self.subTest(odd=odd):
                for wanted in (None, {"d1", "d2"}):
                    with rre.open_input(str(path)) as stream:
                        fast = outcome(lambda: rre.fast_length_lines(stream, "o.txt", wanted))
                    with rre.open_input(str(path)) as stream:
                        self.assertEqual(fast, outcome(lambda: rre.reference_length_lines(stream, "o.txt", wanted)))
        served = {}
        self.assertEqual(rre._fast_length_lines(b"d1 3\nd2 4\n", 2, served, {b"d2"}, hashlib.sha256()), 1)
        self.assertEqual(served, {"d2": 4})
        self.assertEqual(rre._fast_length_lines(b"d1 3\n", 1, served, {b"d2"}, hashlib.sha256()), 0)
        for chunk in (b" d1 3\n", b"d1 3 \n", b"d1  3\n", b"d1 1234567890123456789\n", b"\nd1 3\n"):
            with self.subTest(chunk=chunk):
                self.assertRaises(rre._Decline, rre._fast_length_lines, chunk, chunk.count(b"\n"), {}, None, hashlib.sha256())


class NoAnswerTest(TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.fixture = self.write("f.json", {"qrels": {"q1": ["d1"], "q2": ["d5"]}, "runs": NO_ANSWER_RUN,
                                             "no_answer": ["q3", "q4"]})

    def input_forms(self):
        """{form: arguments} of the worked example in every input form."""
        # a no-answer query may have non-relevant labels
        qrels = self.write("q.txt", "q1 0 d1 1\nq2 0 d5 1\nq4 0 y9 0\n")
        trec = self.write("run.txt", "".join("%s Q0 %s 0 %r x\n" % (q, d, s) for q, r in NO_ANSWER_RUN.items()
                                             for d, s in r.items()))
        records = [{"qid": q, "relevant": {"q1": ["d1"], "q2": ["d5"]}[q], "retrieved": r} if q < "q3" else
                   {"qid": q, "answerable": False, "retrieved": r} for q, r in NO_ANSWER_RUN.items()]
        log = self.write("log.jsonl", "".join(json.dumps(r) + "\n" for r in records))
        return {"a fixture's no_answer": [self.fixture],
                "--no-answer lines, a TREC run": ["--qrels", qrels, "--run", trec, "--no-answer",
                                                  self.write("na.txt", "# no answer\nq3\n\nq4\n")],
                "--no-answer JSON": ["--qrels", qrels, "--run", trec, "--no-answer", self.write("na.json", ["q3", "q4"])],
                "a fixture as --qrels": ["--qrels", self.fixture, "--run", trec],
                "records answerable false": [log], "records as --qrels and --run": ["--qrels", log, "--run", log]}

    def test_a_budget_needs_no_counts_for_the_questions_without_an_answer(self):
        # none for q3's and q4's IDs
        lengths = self.write("l.json", {"d1": 60, "d2": 60, "d5": 60, "d6": 60})
        names = NO_ANSWER_NAMES + ",R(tokens=100)@5"
        for form, args in self.input_forms().items():
            with self.subTest(form):
                fast, reference = both_paths(*args, "--lengths", lengths, "-m", names)
                self.assertEqual(fast, reference)
                self.assertEqual(fast[0], 0, fast[2])
                result = json.loads(fast[1])
                self.assertEqual(result["measures"], dict(NO_ANSWER_VALUES, **{"R(tokens=100)@5": 1.0}))
                self.assertEqual(result["per_query"]["q3"], {"Abstain(thresh=0.45)": 0.0, "Abstain(thresh=0.5)": 1.0})
                rejected(self, *cli(*args, "--lengths", self.write("l2.json", {"d1": 60, "d5": 60, "d6": 60}),
                                    "-m", names), "query 'q1'", "no token count for 'd2'")

    def test_the_worked_example_in_every_input_form(self):
        for form, args in self.input_forms().items():
            with self.subTest(form):
                fast, reference = both_paths(*args, "-m", NO_ANSWER_NAMES)
                self.assertEqual(fast, reference)
                self.assertEqual(fast[0], 0, fast[2])
                result = json.loads(fast[1])
                self.assertEqual(result["measures"], NO_ANSWER_VALUES)
                self.assertEqual((result["queries"], result["no_answer_queries"]), (2, 2))
                self.assertEqual(result["per_query"]["q3"], {"Abstain(thresh=0.45)": 0.0, "Abstain(thresh=0.5)": 1.0})
                self.assertEqual(list(result["per_query"]["q1"]), ["Success(thresh=0.45)@5", "Success(thresh=0.4)@5"])
        result = rre.score_run({"q1": ["d1"], "q2": ["d5"]}, NO_ANSWER_RUN, NO_ANSWER_NAMES, no_answer=["q3", "q4"])
        self.assertEqual(result["measures"], NO_ANSWER_VALUES)

    def test_a_log_with_questions_without_an_answer_is_a_baseline_on_the_same_labels(self):
        records = [{"qid": q, "relevant": {"q1": ["d1"], "q2": ["d5"]}[q], "retrieved": r} if q < "q3" else
                   {"qid": q, "answerable": False, "retrieved": r} for q, r in NO_ANSWER_RUN.items()]
        log = self.write("log.jsonl", "".join(json.dumps(r) + "\n" for r in records))
        status, out, err = cli(log, "--baseline", log, "-m", NO_ANSWER_NAMES, "--max-query-drop", "0")
        self.assertEqual((status, json.loads(out)["comparison"]["Abstain(thresh=0.5)"]["delta"]), (0, 0.0), err)
        # an answer now: new labels
        records[2] = {"qid": "q3", "relevant": ["d7"], "retrieved": NO_ANSWER_RUN["q3"]}
        relabeled = self.write("relabeled.jsonl", "".join(json.dumps(r) + "\n" for r in records))
        rejected(self, *cli(log, "--baseline", relabeled, "-m", "Abstain"),
                 "relabeled.jsonl: qrels: the baseline's labels differ from the candidate's (%s) "
                 "on 1 query ('q3')" % log)

    def test_left_out_of_every_other_measure(self):
        status, out, err = cli(self.fixture, "-m", "R@5,NumRet,Abstain", "--format", "table", "--per-query")
        self.assertEqual(status, 0, err)
        self.assertEqual(out.splitlines(), [
            "query     R@5  NumRet  Abstain", "all    1.0000       4   0.0000",
            "q1     1.0000       2         ", "q2     1.0000       2         ",
            "q3                      0.0000", "q4                      0.0000",
            "2 queries evaluated, and 2 without an answer"])
        empty = self.write("e.json", {"qrels": {"q1": ["d1"]}, "runs": {"q1": ["d1"], "q3": []}, "no_answer": ["q3", "q4"]})
        result = json.loads(cli(empty, "-m", "Abstain,R@1", "--missing-run", "zero")[1])
        self.assertEqual((result["measures"], result["zeroed"]["missing_run"]), ({"Abstain": 1.0, "R@1": 1.0}, ["q4"]))
        # seed mode reads no "no_answer", as the seed script
        status, out, err = cli(self.fixture, "--k", "3")
        rejected(self, status, out, err, "2 ranked queries have no labels ('q3', 'q4')")

    def test_comparison_gates_groups_and_several_runs(self):
        # the approved retriever abstained
        base = self.write("base.json", dict(NO_ANSWER_RUN, q3={}, q4={}))
        groups = self.write("g.json", {"chat": ["q1", "q3"], "faq": ["q2"]})
        status, out, err = cli(self.fixture, "-m", "Abstain,R@2", "--baseline", base, "--max-query-drop", "0.5",
                               "--groups", groups, "--max-group-drop", "0.5", "--ci")
        self.assertEqual(status, 1, err)
        result = json.loads(out)
        self.assertEqual(result["comparison"]["Abstain"]["regressed"], {"q3": -1.0, "q4": -1.0})
        self.assertEqual(result["comparison"]["R@2"]["regressed"], {})
        self.assertEqual([(b["measure"], b["query"], b.get("group")) for b in result["breaches"]],
                         [("Abstain", "q3", None), ("Abstain", "q4", None), ("Abstain", None, "chat")])
        # no Abstain: no query of its
        self.assertEqual(result["groups"]["faq"]["measures"], {"R@2": 1.0})
        self.assertEqual((result["groups"]["chat"]["queries"], result["groups"]["chat"]["no_answer_queries"]), (1, 1))
        footnote = "queries: those with an answer; a group's questions without one count in Abstain alone"
        self.assertEqual(cli(self.fixture, "-m", "Abstain,R@2", "--groups", groups, "--format", "table")[1]
                         .splitlines()[-1], footnote)
        self.assertNotIn(footnote, cli(self.fixture, "-m", "Abstain,R@2", "--groups", self.write(
            "faq.json", {"faq": ["q2"]}), "--format", "markdown")[1])
        self.assertEqual(set(result["ci95"]), {"Abstain", "R@2"})
        answered = self.write("answered.json", {"qrels": {"q1": ["d1"], "q2": ["d5"]},
                                                "runs": {q: NO_ANSWER_RUN[q] for q in ("q1", "q2")}})
        plain = json.loads(cli(answered, "-m", "R@2,NumRet", "--baseline", answered, "--ci", "--groups",
                               self.write("g2.json", {"faq": ["q2"]}))[1])
        self.assertEqual(set(plain["groups"]["faq"]), {"queries", "small", "members", "measures", "ci95", "comparison"})
        self.assertEqual(set(plain["ci95"]), {"R@2"})  # a sum has no interval
        self.assertNotIn("no_answer_queries", plain)
        status, out, err = cli(self.fixture, "-m", "Abstain,R@2", "--baseline", base, "--format", "csv")
        self.assertEqual(out.splitlines()[3:], ["q3,1.0,0.0,-1.0,,,", "q4,1.0,0.0,-1.0,,,"])
        status, out, err = cli("--qrels", self.fixture, "--run", self.fixture, "--run", base, "-m", "Abstain",
                               "--format", "table")
        self.assertEqual((status, [line.split() for line in out.splitlines()[1:3]]),
                         (0, [[str(self.fixture), "2", "0.0000"], [str(base), "2", "1.0000"]]), err)
        self.assertEqual(out.splitlines()[3:], ["queries: those with an answer; those without "
                                                "one, which only Abstain scores: 2"])
        self.assertEqual(rre._runs_footnotes({"a": {"no_answer_queries": 2}, "b": {"no_answer_queries": 1}}),
                         ["queries: those with an answer; those without one, which only Abstain "
                          "scores: a 2, b 1"])
        runs = rre.score_runs({"q1": ["d1"], "q2": ["d5"]}, {"a": NO_ANSWER_RUN, "b": json.loads(base.read_text())},
                              "Abstain", no_answer=["q3", "q4"])["runs"]
        self.assertEqual([r["measures"]["Abstain"] for r in runs.values()], [0.0, 1.0])

    def test_rejections(self):
        qrels = self.write("q.txt", "q1 0 d1 1\nq3 0 z 1\n")
        run = self.write("r.json", {"q1": ["d1"], "q3": []})
        cases = [  # (arguments, fragments of the one line)
            (["--qrels", qrels, "--run", run, "--no-answer", self.write("na13.txt", "q3\n")],
             ["na13.txt", "query 'q3'",
              "has no answer in the corpus, and 'z' is labeled relevant"]),
            (["--qrels", self.write("q1.txt", "q1 0 d1 1\nq2 0 d2 1\n"), "--run", self.write("r1.json", {"q1": ["d1"]}),
              "--no-answer", self.write("na12.txt", "q3\nq4\n")],
             ["r1.json", "query sets differ: 1 labeled query has no ranking ('q2'); 2 queries "
                         "without an answer have no ranking ('q3', 'q4'); see --missing-run"]),
            ([self.write("f14.json", {"qrels": {"q1": ["d1"]}, "runs": {"q1": ["d1"]}}), "-m", "Abstain"],
             ["Abstain: no query without an answer is left to evaluate: give them with "
              "--no-answer FILE"]),
            ([self.write("f15.json", {"qrels": {"q1": ["d1"]}, "runs": {"q1": ["d1"]}, "no_answer": ["q3"]}),
              "-m", "Abstain", "--missing-run", "skip"], []),
            ([self.write("f16.json", {"qrels": {}, "runs": {"q3": []}, "no_answer": ["q3"]}), "-m", "R@1,Abstain"],
             ["no labels: the object holds no query"]),
            ([self.write("f17.json", {"qrels": {"q1": []}, "runs": {"q1": [], "q3": []}, "no_answer": ["q3"]}), "-m", "R@1,Abstain",
              "--no-relevant", "skip"], ["R@1: no query with an answer is left to evaluate"]),
            (["--qrels", qrels, "--run", run, "--no-answer", self.write("na18.txt", "q3\nq3\n")],
             ["na18.txt:2", "query 'q3' is listed twice (first on line 1)"]),
            (["--qrels", qrels, "--run", run, "--no-answer", self.write("na19.txt", "q3 q4\n")],
             ["na19.txt:1", "expected 1 column (QID), found 2: 'q3 q4'"]),
            (["--qrels", qrels, "--run", run, "--no-answer", self.write("na20.json", {"q3": True})],
             ["na20.json", "expected a list of query IDs, not dict"]),
            (["--qrels", qrels, "--run", run, "--no-answer", self.write("na21.json", ["q3", 3])],
             ["na21.json: [1]", "query ID must be a string, not int 3"]),
            ([self.write("f22.json", {"qrels": {"q1": ["d1"]}, "runs": {"q1": ["d1"]}, "no_answer": ["q3"]}),
              "--no-answer", self.write("na23.json", ["q3"])], ['the fixture has "no_answer" and '
                                                                '--no-answer is given too']),
            (["--qrels", qrels, "--run", run, "--no-answer", self.write("na25.json", ["q3", "q3"])],
             ["na25.json: [1]", "query 'q3' is listed twice (first at [0])"]),
            ([self.write("l26.jsonl", '{"qid": "q3", "answerable": false, "retrieved": []}\n{"qid": "q1", "relevant": ["d1"], '
                                      '"retrieved": ["d1"]}\n'), "--no-answer", self.write("na27.txt", "q3\n")],
             ["l26.jsonl:1", "query 'q3': the record says it has no answer and "
                             "--no-answer is given too"]),
            ([self.write("l24.jsonl", '{"qid": "q3", "answerable": "no", "retrieved": []}\n\n'), "-m", "Abstain"],
             ["l24.jsonl: answerable", "query 'q3'", "expected true or false, not 'no'"]),
        ]
        for args, fragments in cases:
            with self.subTest(args=args[1:]):
                status, out, err = cli(*args)
                if fragments:
                    rejected(self, status, out, err, *fragments)
                else:  # every no-answer query skipped: refused as a mean over nothing
                    rejected(self, status, out, err,
                             "Abstain: no query without an answer is left to evaluate")

    def test_a_question_without_an_answer_is_judged_by_abstain_alone(self):
        """No floor but Abstain's, and no budget, is computed for it: a listed ranking there is
        no error under R(thresh=)."""
        fixture = self.write("f.json", {"qrels": {"q1": ["d1"]}, "runs": {"q1": {"d1": 0.9, "d2": 0.3}, "q3": ["x1"]},
                                        "no_answer": ["q3"]})
        fast, reference = both_paths(fixture, "-m", "R(thresh=0.5)@3,Abstain,R(tokens=1)@1", "--lengths",
                                     self.write("l.txt", "d1 1\n"))
        self.assertEqual(fast, reference)
        self.assertEqual(json.loads(fast[1])["per_query"], {"q1": {"R(thresh=0.5)@3": 1.0, "R(tokens=1)@1": 1.0},
                                                            "q3": {"Abstain": 0.0}}, fast[2])
        rejected(self, *cli(fixture, "-m", "Abstain(thresh=0.5)"), "query 'q3'", "needs scores")


class AllTrecMeasuresTest(TempDirTestCase):
    """The rest of trec_eval's -m all_trec, hand-computed on one ranking: grades 2, unlabeled, 0, 1,
    -1 (pooled, unjudged); x (1) and y (0) labeled, not retrieved. R = 3, the ideal gains 2 1 1."""

    q = judged(2, None, 0, 1, -1, labels={"x": 1, "y": 0})
    ideal_dcg = 2 + 1 / math.log2(3) + 1 / 2
    dcg = 2 + 1 / math.log2(5)
    expected = {
        # P@int(1.5 + .9), P@int(6 + .9)
        "RprecMult": {"RprecMult@0.5": 1 / 2, "RprecMult@2": 2 / 6},
        "Utility": {"Utility": 2 - 3, "Utility(weights={2,-1,-1,1},docs=10)": 4 - 3 - 1 + (10 + 2 - 5 - 3)},
        "IPrecAvg": {"IPrecAvg": (5 * 1 + 4 * 0.5) / 11, "IPrecAvg(levels={0.5,1})": 0.5 / 2},
        "BinG": {"BinG": (1 / math.log2(2) + 1 / math.log2(4)) / 3},  # 0 and 2 not relevant above
        # cost so far (ideal gains, 1 at least) 2 at rank 1, 2 + 1 + 1 + 1 at rank 4; gain so far
        # 2, 3
        "G": {"G": (2 / math.log2(2 + 2 - 2) + 1 / math.log2(2 + 5 - 3)) / 4,
              "G(gains={2:1})": (1 / math.log2(2 + 1 - 1) + 1 / math.log2(2 + 4 - 2)) / 3},
        # at rank 1 nDCG 1, at rank 4 DCG / the ideal's 3, and x (missed) the whole ranking's
        "nDCGRel": {"nDCGRel": (1 + 2 * dcg / ideal_dcg) / 3},
        # the ideal's gain changes after rank 1 and rank 3; the ranking runs 2 past it: the whole
        # ranking's
        "RnDCG": {"RnDCG": (2 / 2 + 2 / ideal_dcg + dcg / ideal_dcg) / 3},
        "RelP": {"RelP@2": 1 / 2, "RelP@5": 2 / 3},
        "SetRelP": {"SetRelP": 2 / 3}, "SetAP": {"SetAP": 4 / 15}, "NumNonRelJudgedRet": {"NumNonRelJudgedRet": 1},
        # gains scaled by the largest grade, 2: 1 at rank 1, 1/2 at rank 4
        "RBP": {"RBP": 0.2 * (1 + 0.5 * 0.8 ** 3), "RBP(p=0.9)": 0.1 * (1 + 0.5 * 0.9 ** 3), "RBP@3": 0.2},
        # ranks 2 and 5 unjudged, then the rest
        "RBPResid": {"RBPResid": 0.8 ** 5 + 0.2 * (0.8 + 0.8 ** 4)},
        "Unjudged": {"Unjudged@2": 1 / 2, "Unjudged@10": 2 / 10},
        "RelString": {"RelString": "2-01.", "RelString@3": "2-0"},
    }

    def test_hand_computed(self):
        for base, values in self.expected.items():
            for name, want in values.items():
                with self.subTest(name):
                    got = value(name, self.q)
                    self.assertEqual(got, want) if isinstance(want, str) else self.assertAlmostEqual(got, want, places=14)

    def test_gains_of_their_own_and_the_edges(self):
        q, b = self.q, list(itertools.accumulate(g / math.log2(i + 2) for i, g in enumerate([2, 1, 1, 1, 1])))
        # grade 0 gains 1: d3 at rank 3 and y join the ideal (2 1 1 1 1); d5 (-1) and d2 gain
        # nothing
        dcg3, dcg4 = 2 + 1 / 2, 2 + 1 / 2 + 1 / math.log2(5)
        self.assertAlmostEqual(value("nDCGRel(gains={0:1})", q), (1 + dcg3 / b[2] + dcg4 / b[3] + 2 * dcg4 / b[4]) / 5,
                               places=14)
        # rank 4 loses, and counts only in the DCG
        self.assertEqual(value("nDCGRel(gains={1:-1})", q), 1.0)
        self.assertAlmostEqual(value("nDCGRel(gains={1:-1})", judged(1, 2)), (-1 + 2 / math.log2(3)) / 2, places=14)
        # (g + 1) / 3
        self.assertAlmostEqual(value("RBP(gains={0:-1})", q), 0.2 * (1 + 2 / 3 * 0.8 ** 3), places=14)
        # in [0, 1]: kept
        self.assertAlmostEqual(value("RBP(gains={1:0.5})", judged(0, 1)), 0.2 * 0.5 * 0.8, places=14)
        self.assertAlmostEqual(value("RBP@4", q), 0.2 * (1 + 0.5 * 0.8 ** 3), places=14)
        self.assertEqual(value("Unjudged@3", q), 1 / 3)  # rank 3 is judged
        self.assertEqual(value("RelString", judged(*[0] * 11 + [9, 10, 12])), "0" * 10)
        self.assertEqual(value("RelString@3", judged(9, 10, 12)), "9>>")
        # nothing relevant at level 2: trec_eval's 0
        self.assertEqual(value("RnDCG", judged(1, 0, level=2)), 0.0)
        nothing = {"Utility": -2.0, "RBPResid": 0.8, "Unjudged": 1 / 5, "RelString": "0-", "NumNonRelJudgedRet": 1}
        # nothing relevant, 2 retrieved (0 and unlabeled): no division by zero
        for name in self.expected:
            spelled = name + {"required": "@5", "multiple": "@1.0"}.get(rre.MEASURES[name].cutoff, "")
            with self.subTest(name):
                self.assertEqual(value(spelled, judged(0, None, labels={"y": 0})), nothing.get(name, 0.0))
        for text, message in [("IPrecAvg(levels={0.5,1.5})",
                               "levels are recall levels from 0 to 1"),
                              ("IPrecAvg(levels=0.5)", "levels are recall levels"),
                              ("Utility(weights={1,2})", "weights are 4 numbers {a,b,c,d}"),
                              ("Utility(weights={1,x,0,0})", "weights are 4 numbers"), ("RBP(p=x)", "p must be a number"),
                              ("RBP(p=1e999)", "p must be a number a float holds (0, or 2.2e-308 "
                                               "to 1.8e308 in size), not '1e999'"),
                              ("RprecMult@9223372036854775808", "the multiple of R is a number above 0")]:
            with self.subTest(text), self.assertRaises(rre.EvalError) as ctx:
                rre.parse_measure(text)
            self.assertIn(message, str(ctx.exception))

    def test_trec_names_and_parameters(self):
        cases = {"rbp": "RBP(p=0.9)", "rbp.p=0.5": "RBP(p=0.5)", "rbp_resid": "RBPResid(p=0.9)",
                 "utility.2,-1,0,0": "Utility(weights={2,-1,0,0})", "11pt_avg..25,.5": "IPrecAvg(levels={0.25,0.5})",
                 "G.1=3,2=9": "G(gains={1:3,2:9})", "ndcg.1=3": "nDCG(gains={1:3})", "relstring": "RelString",
                 "relstring.20": "RelString@20", "Rprec_mult.0.2": "RprecMult@0.2", "unj_5": "Unjudged@5"}
        for text, name in cases.items():
            with self.subTest(text):
                self.assertEqual([s.name for s in rre.trec_specs(text)], [name])
        self.assertEqual([s.name for s in rre.parse_measures(["rbp,RBP,rbp_resid,rbpresid"])],
                         # trec_eval's p, or ours
                         ["RBP(p=0.9)", "RBP", "RBPResid(p=0.9)", "RBPResid"])
        self.assertEqual([s.name for s in rre.parse_measures(["ndcg_cut.10,20,P_5",
                                                              "recall.20,2000,utility.2,-1,0,0"])],
                         ["nDCG@10", "nDCG@20", "P@5", "R@20", "R@2000", "Utility(weights={2,-1,0,0})"])
        with self.assertRaises(rre.EvalError):
            rre.parse_measures(["map,5"])  # a number joins only a name with trec_eval's parameters
        self.assertEqual(rre.trec_specs("utility.1,-1,0,1", 50)[0].name,
                         "Utility(weights={1,-1,0,1},docs=50)")
        self.assertEqual([rre.trec_label(n) for n in ("RBP(p=0.9)", "RBP", "RBPResid(p=0.9)", "Utility")],
                         ["rbp", "RBP", "rbp_resid", "utility"])
        for text, message in [("utility.1,2", "trec_eval's utility takes 4 "
                                              "coefficients, not '1,2'"),
                              ("binG.3", "trec_eval's binG takes no parameters, not '3'"),
                              ("G.x", "trec_eval's G takes gains as 1=3,2=9, not 'x'"),
                              ("G.1=3,x", "trec_eval's G takes gains as 1=3,2=9, not '1=3,x'")]:
            with self.subTest(text), self.assertRaises(rre.EvalError) as ctx:
                rre.trec_specs(text)
            self.assertEqual(str(ctx.exception), message)

    def test_in_trec_eval_form_with_n_and_labels_as_typed(self):
        qrels = self.write("qrels", "q1 0 a 2\nq1 0 c 0\nq1 0 d 1\nq1 0 e -1\nq1 0 "
                                    "x 1\nq1 0 y 0\n")
        run = self.write("run", "q1 Q0 a 1 5 t\nq1 Q0 b 2 4 t\nq1 Q0 c 3 3 t\nq1 Q0 d 4 2 "
                                "t\nq1 Q0 e 5 1 t\n")
        status, out, err = cli("-q", "-N", "10", "-m", "utility.2,-1,-1,1", "-m", "relstring.3", "-mrbp", qrels, run)
        line = "%-22s\t%s\t%s".__mod__
        self.assertEqual((status, err), (0, ""))
        self.assertEqual(out.splitlines(), [line(("relstring_3", "q1", "'2-0'")), line(("utility_2,-1,-1,1", "q1", "4.0000")),
                                            # (1 - 0.9) * 1.3645: just below .13645
                                            line(("rbp", "q1", "0.1364")),
                                            line(("utility_2,-1,-1,1", "all", "4.0000")), line(("rbp", "all", "0.1364"))])
        # others missed: the collection's N + 2 relevant retrieved - 5 retrieved - 3 relevant (a,
        # d, x); N 0 unless -N
        for flags, want in [(["-N", "0"], "-6.0000"), ([], "-6.0000"), (["-N", "20"], "14.0000")]:
            status, out, err = cli(*flags, "-m", "utility.0,0,0,1", qrels, run)
            self.assertEqual((status, out, err), (0, line(("utility_0,0,0,1", "all", want)) + "\n", ""), flags)

    def test_every_mode_and_text_refused_but_in_trec(self):
        fixture = self.write("f.json", json.dumps({"qrels": {"q1": {"a": 2, "d": 1}, "q2": {"b": 1}},
                                                   "runs": {"q1": ["a", "b", "d"], "q2": ["b"]}}))
        base = self.write("b.json", json.dumps({"q1": ["b", "a"], "q2": ["x", "b"]}))
        names = "RprecMult@1.0,Utility,IPrecAvg,BinG,G,nDCGRel,RnDCG,RelP@2,SetRelP,SetAP,RBP,RBPResid,Unjudged@2"
        status, out, err = cli(fixture, "-m", names, "--baseline", base, "--ci")
        result = json.loads(out)
        self.assertEqual((status, sorted(result["comparison"])), (0, sorted(names.split(","))), err)
        self.assertEqual(result["per_query"]["q2"]["RelP@2"], 1.0)
        groups = self.write("g.json", json.dumps({"first": ["q1"], "second": ["q2"]}))
        status, out, err = cli(fixture, "-m", names, "--groups", groups, "--format", "table")
        self.assertEqual(status, 0, err)
        self.assertIn("RnDCG", out)
        result = json.loads(cli(fixture, "-m", names, "--groups", groups)[1])
        self.assertEqual(result["groups"]["second"]["measures"], result["per_query"]["q2"])
        status, out, err = cli("--qrels", fixture, "--run", fixture, "--run", base, "-m", names)
        self.assertEqual((status, [sorted(r["measures"]) for r in json.loads(out)["runs"].values()]),
                         (0, [sorted(names.split(","))] * 2), err)
        status, out, err = cli(fixture, "-m", "RelString,BinG", "--format", "trec")
        self.assertEqual((status, out.splitlines()[:2]), (0, ["relstring\tq1\t'2-1'", "binG\tq1\t%r" % (
            (1 + 1 / math.log2(3)) / 2)]))
        groups = self.write("g.json", json.dumps({"first": ["q1"]}))
        for extra in (["--ties"], ["--unjudged-bounds"], ["--ci"], ["--power"], ["--per-query"], ["--groups", groups]):
            # a text beside the numbers in every mode --format trec takes
            with self.subTest(extra):
                status, out, err = cli(fixture, "-m", "RelString,BinG", "--format", "trec", *extra)
                self.assertEqual((status, out.splitlines()[0]), (0, "relstring\tq1\t'2-1'"), err)
        status, out, err = cli(fixture, "-m", "runid")
        self.assertEqual((status, out), (2, ""))
        self.assertIn("'runid' is no measure of a query: trec_eval's form QRELS RUN and --format trec print it", err)
        run = self.write("run.txt", "q1 Q0 a 1 2 bm25\nq2 Q0 b 1 1 bm25\n")
        status, out, err = cli("--qrels", fixture, "--run", run, "-m", "runid,BinG", "--format", "trec")
        self.assertEqual((status, out.splitlines()[2:4]), (0, ["runid\tall\tbm25", "num_q\tall\t2"]), err)
        status, out, err = cli(fixture, "-m", "RelString")
        self.assertEqual((status, out, err), (2, "", "rag_retrieval_eval: error: RelString is no "
                                                     "number, so it has no mean: --format trec "
                                                     "prints it per query\n"))


def rbo_by_definition(run, base, p=0.9, k=None):
    """Extrapolated RBO written out as Webber, Moffat and Zobel's equation 32, X_d counted by
    set intersection at every depth: the independent implementation the measure is checked against."""
    run, base = list(run)[:k] if k else list(run), list(base)[:k] if k else list(base)
    short, long_ = (run, base) if len(run) <= len(base) else (base, run)
    s, n = len(short), len(long_)
    if not s:
        return 1.0 if not n else 0.0
    x = [None] + [len(set(short[:min(d, s)]) & set(long_[:d])) for d in range(1, n + 1)]
    total = sum(x[d] / d * p ** d for d in range(1, n + 1)) + sum(x[s] * (d - s) / (s * d) * p ** d
                                                                   for d in range(s + 1, n + 1))
    return (1 - p) / p * total + ((x[n] - x[s]) / n + x[s] / s) * p ** n


WORKED = {"q1": (["a", "b", "c", "d"], ["b", "a", "d", "e"]), "q2": (["a", "b", "c"], ["a", "x", "b", "y", "c"])}
WORKED_MEASURES = ["RBO", "RBO@3", "RBO(p=0.5)", "Overlap@3", "Jaccard@3"]
WORKED_VALUES = {"q1": {"RBO": 0.69075, "RBO@3": 0.63, "RBO(p=0.5)": 0.4270833, "Overlap@3": 2 / 3, "Jaccard@3": 0.5},
                 "q2": {"RBO": 0.81622, "RBO@3": 0.685}}


class AgreementTest(TempDirTestCase):
    """Overlap@k, Jaccard@k and RBO: the run's rankings against the baseline's, labels unread."""

    def runs(self, scored=True):
        cand, base = ({q: pair[i] for q, pair in WORKED.items()} for i in (0, 1))
        if scored:  # TREC runs, listed by score
            cand, base = ({q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in run.items()}
                          for run in (cand, base))
            return self.write("cand.txt", trec_run(cand)), self.write("base.txt", trec_run(base))
        return self.write("cand.json", cand), self.write("base.json", base)

    def assertWorked(self, per_query):
        for q, values in WORKED_VALUES.items():
            for name, expected in values.items():
                self.assertAlmostEqual(per_query[q][name], expected, places=6, msg=(q, name))

    def test_the_worked_examples_without_labels_on_the_command_line(self):
        for scored in (True, False):
            cand, base = self.runs(scored)
            for (status, out, err) in both_paths("--run", cand, "--baseline", base, "-m", ",".join(WORKED_MEASURES)):
                self.assertEqual(status, 0, err)
                result = json.loads(out)
                self.assertWorked(result["per_query"])
                self.assertEqual(result["queries"], 2)
                # identical with itself
                self.assertEqual(result["comparison"]["RBO"]["baseline"], 1.0)
                # most changed first
                self.assertEqual(list(result["comparison"]["RBO"]["changed"]), ["q1", "q2"])

    def test_the_worked_examples_in_the_library_either_way_round(self):
        cand, base = ({q: pair[i] for q, pair in WORKED.items()} for i in (0, 1))
        self.assertWorked(rre.compare_runs(None, base, cand, WORKED_MEASURES)["per_query"])
        swapped = rre.compare_runs(None, cand, base, "RBO")["per_query"]
        self.assertAlmostEqual(swapped["q2"]["RBO"], 0.81622, places=6)
        runs = rre.score_runs(None, {"a": cand, "b": base}, "RBO", baseline=base)["runs"]
        self.assertEqual((runs["b"]["measures"]["RBO"], runs["b"]["comparison"]["RBO"]["changed"]), (1.0, {}))

    def test_against_the_definition_on_random_pairs(self):
        rng = random.Random(41)
        for _ in range(1500):
            pool = ["d%d" % i for i in range(rng.randint(1, 14))]
            run, base = (tuple(rng.sample(pool, rng.randint(0, len(pool)))) for _ in range(2))
            p, k = rng.choice([0.1, 0.5, 0.9, 0.98]), rng.choice([None, 1, 2, 5, 10])
            with self.subTest(run=run, base=base, p=p, k=k):
                self.assertAlmostEqual(rre.rank_biased_overlap((run, base), k, p=p),
                                       rbo_by_definition(run, base, p, k), places=12)
                a, b = set(run[:k or 99]), set(base[:k or 99])
                if k:
                    self.assertEqual(rre.overlap((run, base), k), len(a & b) / len(b) if b else float(not a))
                    self.assertEqual(rre.jaccard((run, base), k), len(a & b) / len(a | b) if a | b else 1.0)
        # exactly, not 1 - 1e-16
        self.assertEqual(rre.rank_biased_overlap((("a", "b"), ("a", "b", "c")), None), 1.0)
        self.assertEqual(rre.rank_biased_overlap(((), ("a",)), None), 0.0)

    def test_every_query_both_rank_labeled_or_not(self):
        cand, base = self.runs(False)
        qrels = self.write("qrels.txt", "q1 0 b 1\n")
        status, out, err = cli("--qrels", qrels, "--run", cand, "--baseline", base, "-m", "RBO,R@3", "--ci",
                               "--power")
        self.assertEqual(status, 0, err)
        result = json.loads(out)
        # unlabeled: RBO only
        self.assertEqual(result["per_query"]["q2"], {"RBO": result["per_query"]["q2"]["RBO"]})
        self.assertEqual((result["queries"], result["agreement"], result["skipped"]["unlabeled"]),
                         (2, {"queries": 2, "unscored": 1}, []))
        self.assertEqual(result["power"]["RBO"]["n"], 2)
        self.assertEqual(result["power"]["R@3"]["n"], 1)
        self.assertIn("the agreement measures compared 2 queries, 1 of them without labels", err)
        rejected(self, *cli("--qrels", qrels, "--run", cand, "--baseline", base, "-m", "R@3"),
                 "1 ranked query has no labels ('q2')")  # without agreement measures, as before

    def test_a_query_one_run_lacks_follows_missing_run(self):
        cand, base = self.runs(False)
        short = self.write("short.json", {"q1": WORKED["q1"][0]})
        rejected(self, *cli("--run", short, "--baseline", base, "-m", "RBO"),
                 "short.json", "1 query ranked by only one of the run and the baseline ('q2')", "--missing-run")
        zero = json.loads(cli("--run", short, "--baseline", base, "-m", "RBO", "--missing-run", "zero")[1])
        skip = json.loads(cli("--run", short, "--baseline", base, "-m", "RBO", "--missing-run", "skip")[1])
        self.assertEqual((zero["per_query"]["q2"], zero["zeroed"]["missing_run"]), ({"RBO": 0.0}, ["q2"]))
        self.assertEqual((list(skip["per_query"]), skip["skipped"]["missing_run"]), (["q1"], ["q2"]))

    def test_rankings_after_depth_duplicates_folding_and_in_trec_order(self):
        # tie: b before a
        base = self.write("base.txt", "q1 Q0 b 1 2 r\nq1 Q0 a 2 2 r\nq1 Q0 c 3 1 r\n")
        for run, args, expected in (
                # the same order, as trec_eval ranks
                ("q1 Q0 a 1 2 r\nq1 Q0 b 2 2 r\nq1 Q0 c 3 1 r\n", [], 1.0),
                ("q1 Q0 b#1 1 3 r\nq1 Q0 b#2 2 2.5 r\nq1 Q0 a#1 3 2 r\nq1 Q0 c 4 1 r\n",
                 ["--chunk-separator", "#"], 1.0),
                ("q1 Q0 b 1 3 r\nq1 Q0 x 2 2 r\nq1 Q0 y 3 1 r\n", ["--depth", "1"], 1.0),
                ("q1 Q0 b 1 3 r\nq1 Q0 b 2 2 r\nq1 Q0 a 3 1 r\n", ["--duplicates", "first"], 2 / 3)):
            with self.subTest(args):
                path = self.write("run.txt", run)
                for status, out, err in both_paths("--run", path, "--baseline", base, "-m", "Overlap@3", *args):
                    self.assertEqual(status, 0, err)
                    self.assertEqual(json.loads(out)["per_query"]["q1"]["Overlap@3"], expected)

    def test_groups_clusters_several_runs_and_every_format(self):
        cand, base = self.runs(False)
        # no labels at all: groups name unlabeled queries
        groups = self.write("groups.txt", "q1 A\nq2 B\n")
        args = ["--run", cand, "--baseline", base, "-m", "RBO,Overlap@3"]
        result = json.loads(cli(*args, "--groups", groups, "--clusters", groups, "--ci")[1])
        self.assertAlmostEqual(result["groups"]["A"]["comparison"]["RBO"]["candidate"], 0.69075)
        self.assertEqual((result["clusters"], sorted(result["ci95"])), (2, ["Overlap@3", "RBO"]))
        several = json.loads(cli(*args, "--run", base)[1])["runs"]
        self.assertEqual(several[str(base)]["measures"], {"RBO": 1.0, "Overlap@3": 1.0})
        table = cli(*args, "--format", "table")[1]
        self.assertRegex(table, r"changed most \(agreement with the baseline\):\n  RBO +q1  "
                                r"1.0000 ->  0.6907  -0.3093\n  RBO +q2 ")
        self.assertIn("| RBO | q1 | 1.0000 | 0.6907 | -0.3093 |", cli(*args, "--format", "markdown")[1])
        rows = list(csv.reader(io.StringIO(cli(*args, "--format", "csv")[1])))
        self.assertEqual(rows[0][:3], ["query", "RBO baseline", "RBO candidate"])
        self.assertAlmostEqual(float(rows[1][2]), 0.69075)

    def test_the_pool_lists_the_unlabeled_queries_that_changed_most_first(self):
        qrels, pool = self.write("qrels.txt", "q1 0 zz 1\n"), self.tmp / "pool.jsonl"
        fewer = self.write("fewer.json", {"q1": WORKED["q1"][0], "q2": WORKED["q2"][0], "q3": ["a"]})
        more = self.write("more.json", {"q1": WORKED["q1"][1], "q2": WORKED["q2"][1], "q3": ["a"]})
        status, _, err = cli("--qrels", qrels, "--run", fewer, "--baseline", more, "-m", "RBO,R@3", "--pool", pool)
        self.assertEqual(status, 0, err)
        records = [json.loads(line) for line in pool.read_text().splitlines()]
        # RBO 0.816, then 1.0; then labeled
        self.assertEqual([r["query_id"] for r in records], ["q2", "q3", "q1"])
        # the top 3 of both, by best rank
        self.assertEqual(list(records[0]["relevant"]), ["a", "b", "x", "c"])

    def test_ties_and_unjudged_bounds_say_they_do_not_bound_them(self):
        cand, base = self.runs()
        status, out, err = cli("--run", cand, "--baseline", base, "-m", "RBO", "--ties")
        self.assertEqual(json.loads(out)["ties"]["measures"]["RBO"], {"low": None, "high": None})
        self.assertIn("--ties does not bound RBO: it compares two orders", err)

    def test_rejections(self):
        cand, base = self.runs(False)
        saved = self.write("saved.json", cli("--run", cand, "--baseline", base, "-m", "RBO")[1])
        qrels = self.write("qrels.txt", "q1 0 a 1\nq2 0 a 1\n")
        for args, fragments in (
                (["--qrels", qrels, "--run", cand, "-m", "RBO"], ["RBO compares each ranking with "
                                                                  "the baseline's",
                                                                  "give --baseline"]),
                (["--run", cand, "-m", "RBO"], ["for agreement measures", "--baseline"]),
                (["--run", cand, "--baseline", base, "-m", "RBO(thresh=0.5)"], ["RBO takes no thresh parameter"]),
                (["--run", cand, "--baseline", base, "-m", "Jaccard(tokens=100)@3"], ["takes no tokens parameter"]),
                (["--run", cand, "--baseline", base, "-m", "RBO(p=1)"], ["p is a number above 0 and below 1"]),
                (["--run", cand, "--baseline", base, "-m", "Overlap"], ["needs a cutoff"]),
                (["--run", cand, "--baseline", base, "-m", "RBO,R@3"], ["R@3 reads labels: give --qrels"]),
                (["--run", cand, "--baseline", base, "-m", "RBO", "--replicate", qrels], ["compare without it"]),
                (["--run", cand, "--baseline", saved, "-m", "RBO"], ["saved.json", "holds no rankings"]),
                (["--qrels", qrels, "--run", cand, "--baseline", base, "-m", "RBO", "--format", "trec"],
                 ["--format trec has no place for a comparison"])):
            with self.subTest(args):
                rejected(self, *cli(*args), *fragments)
        with self.assertRaisesRegex(rre.EvalError, "give --baseline"):
            rre.score_run(None, {"q1": ["a"]}, "RBO")

# gdeval's cases (ErrTest), in gdeval.pl's TREC form: numeric query IDs.  Query 1 is graded (a
# negative grade, a grade-4 document at rank 5, an unranked grade-3 one), query 2 ties all three
# documents (score 1.0: gdeval and trec_eval both rank z, y, x), query 3 holds nothing relevant.
ERR_QRELS = "1 0 a 2\n1 0 b 1\n1 0 c 0\n1 0 d 4\n1 0 e -1\n1 0 f 3\n2 0 x 3\n2 0 y 1\n2 0 z 0\n3 0 w 0\n3 0 v -2\n"
ERR_RUN = ("1 Q0 a 1 3.0 r\n1 Q0 e 2 2.5 r\n1 Q0 c 3 2.0 r\n1 Q0 b 4 1.0 r\n1 Q0 d 5 0.5 r\n1 Q0 g 6 0.4 r\n"
           "2 Q0 x 1 1.0 r\n2 Q0 y 2 1.0 r\n2 Q0 z 3 1.0 r\n3 Q0 w 1 2.0 r\n3 Q0 v 2 1.0 r\n")
# ir_measures 0.4.3's gdeval provider (gdeval.pl "version 1.2a", perl 5) on them: ERR@k per query
# (gdeval prints 5 decimals and no row for query 3; ir_measures scores that query 0) and
# ir_measures' mean (calc_aggregate) over the three queries
ERR_PINS = {1: ({"1": 0.18750, "2": 0.0, "3": 0.0}, 0.0625),
            2: ({"1": 0.18750, "2": 0.03125, "3": 0.0}, 0.07291666666666667),
            3: ({"1": 0.18750, "2": 0.16797, "3": 0.0}, 0.11849),
            5: ({"1": 0.34302, "2": 0.16797, "3": 0.0}, 0.17033),
            20: ({"1": 0.34302, "2": 0.16797, "3": 0.0}, 0.17033)}


class ErrTest(TempDirTestCase):
    """ERR@k as gdeval.pl computes it (ir_measures' ERR@k), pinned, by hand and at its edges."""

    def files(self, qrels=ERR_QRELS):
        return ["--qrels", self.write("qrels.txt", qrels), "--run", self.write("run.txt", ERR_RUN),
                "--no-relevant", "zero"]

    def test_gdevals_own_numbers(self):
        names = ",".join("ERR@%d" % k for k in ERR_PINS)
        status, out, err = cli(*self.files(), "-m", names)
        self.assertEqual(status, 0, err)
        result = json.loads(out)
        for k, (per_query, mean) in ERR_PINS.items():
            for q, want in per_query.items():
                self.assertAlmostEqual(result["per_query"][q]["ERR@%d" % k], want, places=5, msg=(k, q))
            # ir_measures averages gdeval's rounded values
            self.assertAlmostEqual(result["measures"]["ERR@%d" % k], mean, places=5, msg=k)

    def test_hand_computed_values(self):
        # R = (2**g - 1) / 16; query 1: a (3/16) at 1, b (1/16) at 4, d (15/16) at 5
        one = 3 / 16 + (13 / 16) * (1 / 16) / 4 + (13 / 16) * (15 / 16) * (15 / 16) / 5
        # query 2 in trec_eval's order of the tie (document ID descending): z, y (1/16), x (7/16)
        two = (1 / 16) / 2 + (15 / 16) * (7 / 16) / 3
        status, out, _ = cli(*self.files(), "-m", "ERR@5,ERR,ERR@2,ERR(max_rel=5)@5", "--format", "csv")
        rows = {row["query"]: row for row in csv.DictReader(io.StringIO(out))}
        self.assertEqual([float(rows[q]["ERR@5"]) for q in "123"], [one, two, 0.0])
        self.assertEqual([float(rows[q]["ERR"]) for q in "123"], [one, two, 0.0])  # no cutoff: all ranks
        self.assertEqual(float(rows["2"]["ERR@2"]), 1 / 32)
        # max_rel=5: R = (2**g - 1) / 32
        five = 3 / 32 + (29 / 32) * (1 / 32) / 4 + (29 / 32) * (31 / 32) * (15 / 32) / 5
        self.assertAlmostEqual(float(rows["1"]["ERR(max_rel=5)@5"]), five, places=15)
        # the library, and JSON labels and rankings, give the same
        qrels = {"2": {"x": 3, "y": 1, "z": 0}}
        result = rre.score_run(qrels, {"2": {"x": 1.0, "y": 1.0, "z": 1.0}}, "ERR@3,ERR(max_rel=4)@3")
        self.assertEqual(result["measures"], {"ERR@3": two})

    def test_json_lines_and_a_gate(self):
        # query 1 of the TREC case as a log record, graded labels and scores: the same value
        record = {"query_id": "1", "relevant": {"a": 2, "b": 1, "c": 0, "d": 4, "e": -1, "f": 3},
                  "retrieved": ["a", "e", "c", "b", "d", "g"]}
        log = self.write("log.jsonl", json.dumps(record) + "\n")
        status, out, err = cli(log, "-m", "ERR@5", "--format", "csv")
        self.assertEqual(out, "query,ERR@5\n1,%r\n" % (3 / 16 + 13 / 256 / 4 + 13 * 225 / 4096 / 5))
        # the grade-4 document moved out of the top 5: ERR@5 drops to 3/16 + 13/256/4
        worse = self.write("worse.jsonl", json.dumps(dict(record, retrieved=["a", "e", "c", "b", "g", "d"])) + "\n")
        status, out, err = cli(worse, "--baseline", log, "-m", "ERR@5", "--max-mean-drop", "0.1",
                               "--format", "table")
        self.assertEqual(status, 1, err)
        self.assertIn("ERR@5", out)

    def test_ties_are_bounded_and_unjudged_documents_are_not(self):
        status, out, err = cli(*self.files(), "-m", "ERR@3", "--ties", "--unjudged-bounds")
        result = json.loads(out)
        # query 2's best order: x (7/16), y (1/16), z
        best = (3 / 16 + 7 / 16 + (9 / 16) * (1 / 16) / 2) / 3
        self.assertEqual(result["ties"]["measures"]["ERR@3"],
                         {"low": result["measures"]["ERR@3"], "high": best})
        self.assertIn("ERR@3", result["unjudged"]["not_bounded"])

    def test_other_formats_and_names(self):
        status, out, _ = cli(*self.files(), "-m", "err@2", "--format", "trec")
        self.assertIn("ERR@2\t2\t0.03125", out)  # gdeval is not trec_eval: no trec_eval name
        status, out, _ = cli(*self.files(), "-m", "ERR(max_rel=4)@2", "--format", "table")
        self.assertIn("ERR@2", out)  # the default is left out of the name
        rejected(self, *cli(self.write("q.txt", ERR_QRELS), self.write("r.txt", ERR_RUN), "-m", "ERR"),
                 "trec_eval has no measure 'ERR'")

    def test_refusals(self):
        for args, fragments in (
                (["-m", "ERR(max_rel=3)@5"], ["qrels.txt: query '1': grade 4 is above ERR(max_rel=3)@5's "
                                               "greatest grade, max_rel=3", "give ERR(max_rel=4)"]),
                (["-m", "ERR(max_rel=x)@5"], ["max_rel must be an integer", "'x'"]),
                (["-m", "ERR(rel=2)@5"], ["ERR takes no rel parameter"]),
                (["-m", "ERR(p=0.5)"], ["ERR takes no p parameter"]),
                (["-m", "ERR@0"], ["cutoff must be a positive integer"]),
                (["-m", "ERR@5"], ["query '2': grade 5 is above ERR@5's greatest grade, max_rel=4"])):
            with self.subTest(args):
                # gdeval refuses labels above its maximum grade
                qrels = ERR_QRELS + ("2 0 u 5\n" if args == ["-m", "ERR@5"] else "")
                rejected(self, *cli(*self.files(qrels), *args), *fragments)
        with self.assertRaisesRegex(rre.EvalError, "^qrels: query '1': grade 5 is above ERR@5's greatest"):
            rre.score_run({"1": {"a": 5}}, {"1": ["a"]}, "ERR@5")
        # the measure refuses them too, where no query is named
        with self.assertRaisesRegex(rre.EvalError, "grade 5, above max_rel=4"):
            rre.expected_reciprocal_rank(rre._example(5), 1)



class NamesTest(TempDirTestCase):
    """Other tools' names in -m (ALIASES), both ways: each name taken gives our measure's values
    exactly, under our name, with a note saying which name became which; each name that means
    another measure in the tool that uses it is refused, saying how it differs."""

    QRELS = {"q1": {"d1": 2, "d2": 1, "d5": 1, "d7": 0}, "q2": {"d3": 1, "d4": 3}}
    # q1: d2 and d1 tied (d2 first, by ID descending); d5 never retrieved; R exceeds a cutoff
    RUN = {"q1": {"d9": 3.0, "d1": 2.0, "d2": 2.0, "d7": 1.0}, "q2": {"d8": 1.0, "d4": 0.5}}
    # (their name, ours), as the tools spell them: every family of ALIASES, cut and uncut
    TAKEN = [("recall@2", "R@2"), ("Recall@10", "R@10"), ("recall_at_3", "R@3"), ("RECALL", "SetR"),
             ("precision@2", "P@2"), ("Precision@5", "P@5"), ("precision_at_3", "P@3"),
             ("precision", "SetP"), ("mrr@1", "RR@1"), ("MRR@10", "RR@10"), ("mrr_at_2", "RR@2"),
             ("MRR", "RR"), ("mrr", "RR"), ("MAP", "AP"), ("MAP@100", "AP@100"),
             ("map_at_3", "AP@3"), ("map@2", "AP@2"), ("MAP(rel=2)@10", "AP(rel=2)@10"),
             ("ndcg_at_3", "nDCG@3"), ("NDCG_at_10", "nDCG@10"), ("hit_rate@1", "Success@1"),
             ("hit_rate_at_2", "Success@2"), ("accuracy@2", "Success@2"), ("Accuracy@1", "Success@1"),
             ("accuracy", "R@1"), ("top_k_accuracy@3", "Success@3"), ("r-precision", "Rprec"),
             ("f1", "SetF"), ("R_cap@3", "RelP@3"), ("r_cap_at_1", "RelP@1"),
             ("cosine_recall@3", "R@3"), ("dot_precision@3", "P@3"), ("cosine_mrr@10", "RR@10"),
             ("cosine_accuracy@2", "Success@2"), ("id_based_context_precision", "SetP"),
             ("id_based_context_recall", "SetR"), ("document_mrr", "RR"), ("document_map", "AP"),
             ("document_ndcg", "nDCG"), ("retrieval_precision", "SetP"),
             ("retrieval_recall", "SetR"), ("retrieval_f1", "SetF")]
    # (their name, what the one line says)
    REFUSED = [("hits@5", ["'hits@5' is ranx's count of the relevant documents", "take P@5",
                           "Success@5 for a hit rate"]),
               ("hits", ["take P@k"]),
               ("ndcg_burges@10", ["ranx's nDCG with gain 2^grade - 1", "nDCG(gains={1:1,2:3,3:7})@10"]),
               ("Hole@10", ["BEIR's share of the top k that no query's labels name",
                            "take Unjudged@10, or --as beir to print BEIR's"]),
               ("cosine_map@100", ["sentence-transformers' AP, which divides by min(k, R): ours "
                                   "divides by R; take AP@100, or --as sentence-transformers"]),
               ("dot_ndcg@10", ["gains 1 for every relevant document", "take nDCG@10"]),
               ("document_recall", ["Haystack's single_hit", "multi_hit (SetR)", "--as haystack"]),
               ("retrieval_mrr", ["averaged over the groups", "take RR, or --as autorag"]),
               ("retrieval_map", ["ours divides by R; take AP, or --as autorag"]),
               ("retrieval_ndcg", ["ideal cut at the ranking's length", "--as autorag"]),
               ("context_precision", ["Ragas' LLM-judged precision", "take AP, or SetP"]),
               ("context_recall", ["Ragas' LLM-judged share", "take SetR"]),
               # a name taken, in a form our measure has not
               ("hit_rate", ["'hit_rate' is our Success: 'Success' needs a cutoff"]),
               ("f1@5", ["'f1@5' is our SetF: 'SetF@5' takes no cutoff"]),
               ("MRR@x", ["'MRR@x' is our RR: 'RR@x': cutoff must be a positive integer"])]

    def test_every_family_is_tested_both_ways(self):
        def family(name):
            return re.split(r"@|_at_|\(", name.lower())[0].replace("dot_", "cosine_")
        self.assertEqual({family(name) for name, _ in self.TAKEN + self.REFUSED}, set(rre.ALIASES))
        readme = (Path(__file__).parent / "README.md").read_text(encoding="utf-8")
        section = readme.split("### Other tools' names\n", 1)[1].split("\n### ", 1)[0]
        self.assertEqual([f for f in rre.ALIASES if "`%s" % f not in section.lower()], [])
        status, out, err = cli(FIXTURE, "-m", "cosine_map@100")
        self.assertIn("\n" + err, section)

    def test_each_name_gives_our_measures_values_under_our_name(self):
        got, want = (rre.score_run(self.QRELS, self.RUN, [pair[i] for pair in self.TAKEN])
                     for i in (0, 1))
        self.assertEqual((got["measures"], got["per_query"]), (want["measures"], want["per_query"]))
        self.assertEqual((got["renamed"], "renamed" in want), (dict(self.TAKEN), False))

    def test_the_tools_own_numbers_under_their_names(self):
        # ranx 0.3.21 on its own example (its names are case-sensitive, ours are not)
        qrels = {"q1": {"d1": 2, "d2": 1}, "q2": {"d3": 1}}
        run = {"q1": {"d1": 0.9, "d4": 0.5, "d2": 0.4}, "q2": {"d5": 0.9, "d3": 0.1}}
        ranx = {"hit_rate@1": 0.5, "hit_rate@2": 1.0, "precision@2": 0.5, "recall@2": 0.75,
                "r-precision": 0.25, "mrr": 0.75, "mrr@1": 0.5, "map": 0.6666666666666666,
                "map@2": 0.5, "ndcg@3": 0.7905820851806465}
        got = rre.score_run(qrels, run, list(ranx))["measures"]
        self.assertEqual([round(v, 12) for v in got.values()], [round(v, 12) for v in ranx.values()])
        # each tool's own numbers (the version named; BEIR and MTEB round to 5 places) on one
        # query: 12 relevant documents, 6 of them among the 10 retrieved, no ties
        qrels = {"q1": ["r%02d" % i for i in range(12)]}
        run = {"q1": ["r00", "n1", "r01", "r02", "n2", "r03", "n3", "r04", "n4", "r05"]}
        ap = 0.3590277777777777
        for tool, places, pins in (
                ("BEIR 2.2.0", 5, {"NDCG@10": 0.63638, "MAP@10": 0.35903, "Recall@10": 0.5,
                                   "P@10": 0.6, "MRR@10": 1.0, "R_cap@3": 0.66667,
                                   "R_cap@10": 0.6, "R_cap@100": 0.5, "Accuracy@1": 1.0}),
                ("MTEB 2.26.24", 5, {"ndcg_at_3": 0.70392, "map_at_5": 0.20139,
                                     "recall_at_3": 0.16667, "precision_at_3": 0.66667,
                                     "mrr_at_10": 1.0, "hit_rate_at_1": 1.0, "accuracy": 0.08333}),
                ("sentence-transformers 6.3.0", 12, {"cosine_precision@3": 0.6666666666666666,
                                                     "cosine_recall@5": 0.25, "cosine_mrr@10": 1.0,
                                                     "cosine_accuracy@10": 1.0}),
                ("LlamaIndex 0.14.25", 12, {"precision": 0.6, "Recall": 0.5, "ap": ap, "mrr": 1.0}),
                ("Ragas 0.4.3", 12, {"id_based_context_precision": 0.6,
                                     "id_based_context_recall": 0.5}),
                ("Haystack 3.4.1", 12, {"document_mrr": 1.0, "document_map": ap,
                                        "document_ndcg": 0.567751976247554}),
                ("AutoRAG 0.3.27", 12, {"retrieval_precision": 0.6, "retrieval_recall": 0.5,
                                        "retrieval_f1": 0.5454545454545454})):
            with self.subTest(tool):
                got = rre.score_run(qrels, run, list(pins))["measures"]
                self.assertEqual([round(v, places) for v in got.values()],
                                 [round(v, places) for v in pins.values()])

    def test_a_name_that_means_another_measure_is_refused_saying_how(self):
        for name, fragments in self.REFUSED:
            with self.subTest(name):
                rejected(self, *cli(FIXTURE, "-m", "R@2," + name), *fragments)
                with self.assertRaisesRegex(rre.EvalError, re.escape(fragments[0])):
                    rre.score_run(self.QRELS, self.RUN, name)
        rejected(self, *cli(FIXTURE, "-m", "R@2", "--min-mean", "hits@5=0.5"), "ranx's count")

    def test_did_you_mean_offers_every_name(self):
        for name, close in (("recal@5", "recall or recall@k"), ("hit_rat@5", "hit_rate@k"),
                            ("precison@5", "precision@k"), ("r-precison", "r-precision"),
                            ("MAPP", "map"), ("Recal@10", "recall@k")):
            with self.subTest(name):
                rejected(self, *cli(FIXTURE, "-m", name), "unknown measure", "did you mean " + close)

    def test_the_note_in_every_format(self):
        note = "rag_retrieval_eval: note: other tools' names, as ours: recall@2 is R@2, MAP is AP\n"
        for fmt in ("json", "table", "markdown", "csv", "trec"):
            with self.subTest(fmt):
                status, out, err = cli(FIXTURE, "-m", "recall@2 MAP", "--format", fmt)
                self.assertEqual((status, err), (0, note))
                if fmt == "json":
                    out = json.loads(out)
                    self.assertEqual(out.pop("renamed"), {"recall@2": "R@2", "MAP": "AP"})
                    out = json.dumps(out, indent=2) + "\n"
                out = out.replace("\n- " + note.partition("note: ")[2], "")
                self.assertEqual(out, cli(FIXTURE, "-m", "R@2,AP", "--format", fmt)[1])

    def test_several_runs_a_baseline_and_groups_from_trec_and_json_lines(self):
        qrels = self.write("qrels.txt", "q1 0 d1 1\nq1 0 d2 2\nq2 0 d3 1\nq3 0 d4 1\n")
        a = self.write("a.txt", trec_run({"q1": {"d2": 2, "d1": 1}, "q2": {"d9": 2, "d3": 1},
                                          "q3": {"d4": 1}}))
        b = self.write("b.jsonl", "".join(json.dumps({"query_id": q, "retrieved": r}) + "\n"
                                          for q, r in (("q1", ["d1", "d7"]), ("q2", ["d3"]),
                                                       ("q3", ["d8", "d4"]))))
        groups = self.write("g.json", {"easy": ["q1", "q2"], "hard": ["q3"]})
        note = "note: other tools' names, as ours: mrr@10 is RR@10, Recall@1 is R@1\n"
        for args in (["--run", a, "--run", b], ["--run", b, "--baseline", a, "--groups", groups],
                     ["--run", a, "--run", b, "--baseline", a, "--format", "csv"]):
            with self.subTest(args):
                theirs = cli("--qrels", qrels, *args, "-m", "mrr@10 Recall@1", "--format", "table")
                ours = cli("--qrels", qrels, *args, "-m", "RR@10,R@1", "--format", "table")
                self.assertEqual(theirs, (ours[0], ours[1], "rag_retrieval_eval: " + note + ours[2]))
        status, _, err = cli(FIXTURE, "-m", "R@2", "--min-mean", "recall@2=0.9")
        self.assertEqual(status, 1)  # a floor's name too
        self.assertIn("note: other tools' names, as ours: recall@2 is R@2\n", err)
        result = rre.compare_runs(self.QRELS, self.RUN, self.RUN, ["MRR@10"], max_mean_drop=0.1)
        self.assertEqual((list(result["comparison"]), result["renamed"]), (["RR@10"], {"MRR@10": "RR@10"}))


# Issue 51's cases (/tmp/w51/cases when they were pinned): labels {qid: {doc: grade}}, a scored run
# {qid: {doc: score}} whose key order is the order the tool was handed (BEIR's custom metrics and
# MTEB before 2.18.19 keep it among tied scores), and for AutoRAG its ground-truth groups, one set
# of slots per query (--evidence).
AS_CASES = {
    # beir#187 verbatim: a perfect run, and query "0" retrieves document "0"
    "A_beir187": ({"0": dict.fromkeys("0123456789", 1)}, {"0": dict.fromkeys("0123456789", 1)}),
    # ten perfect queries, one of them "d10" whose relevant document is "d10"
    "B_identical_id": ({("q%d" % i if i < 10 else "d10"): {"d%d" % i: 1} for i in range(1, 11)},
                       {("q%d" % i if i < 10 else "d10"): {"d%d" % i: 1.0, "dx": 0.5}
                        for i in range(1, 11)}),
    # mteb#5092: a constant scorer; the relevant c00 handed first, ranked 12th by ID descending
    "A_mteb5092": ({q: {"c00": 1} for q in ("q0", "q1", "q2")},
                   {q: {"c%02d" % i: 1.0 for i in range(12)} for q in ("q0", "q1", "q2")}),
    "A_tie_first_rel": ({"q1": {"b": 1}, "q2": {"a": 1}},
                        {"q1": {"b": 0.5, "a": 0.5, "c": 0.5, "d": 0.1},
                         "q2": {"m": 0.9, "a": 0.4, "z": 0.4}}),
    # q3 is labeled, not ranked
    "A_missing_query": ({"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}},
                        {"q1": {"d1": 0.9, "x": 0.1}, "q2": {"x": 0.9, "d2": 0.5}}),
    # q2's one label is grade 0
    "A_no_relevant": ({"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 0}},
                      {"q1": {"d2": 0.9, "d1": 0.5}, "q2": {"d3": 0.9, "d4": 0.1}}),
    # llama_index#17070: q1 retrieves 2 of its 5 relevant documents, both at the top
    "A_ndcg_ideal": ({"q1": {"e%d" % i: 1 for i in range(1, 6)}, "q2": {"e1": 1},
                      "q3": {"e1": 1, "e2": 1}},
                     {"q1": {"e1": 0.9, "e2": 0.8}, "q2": {"x1": 0.9, "e1": 0.8, "x2": 0.7},
                      "q3": {"x1": 0.9, "x2": 0.8, "e2": 0.7, "x3": 0.6}}),
    # Haystack's AP: 1 of 3 relevant found, at rank 2
    "B_ap_denominator": ({"q1": {"d1": 1, "d2": 1, "d3": 1}},
                         {"q1": {"x1": 0.9, "d1": 0.8, "x2": 0.7}}),
    # 12 relevant, 6 of them in a top 10
    "B_more_rel_than_k": ({"q1": {"r%02d" % i: 1 for i in range(12)}},
                          {"q1": dict(zip("r00 n1 r01 r02 n2 r03 n3 r04 n4 r05".split(),
                                          range(10, 0, -1)))}),
    "B_ties_graded": ({"q1": {"d1": 2, "d2": 1, "d3": 0, "d5": 1}, "q2": {"d7": 1},
                       "q3": {"d10": 3, "d11": 1}},
                      {"q1": {"d1": 0.9, "d2": 0.5, "d3": 0.5, "d4": 0.5, "d6": 0.1},
                       "q2": {"d8": 0.8, "d7": 0.8, "d9": 0.3},
                       "q3": {"d12": 0.9, "d11": 0.7, "d10": 0.2}}),
    # q1 is ranked, with nothing in its ranking
    "B_empty_run": ({"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 1}},
                    {"q1": {}, "q2": {"d3": 0.9, "d4": 0.1}}),
    # AutoRAG's groups: q1 is the contract's worked example's set A
    "B_autorag_evidence": ({"q1": {"d1": 1, "d2": 1, "d3": 1}, "q2": {"a": 1, "b": 1, "c": 1},
                           "q3": {"e1": 1, "e2": 1, "e3": 1}},
                           {"q1": {"d4": 0.9, "d2": 0.8, "d5": 0.7, "d3": 0.6, "d9": 0.5},
                            "q2": {"a": 0.9, "x": 0.8, "b": 0.7, "c": 0.6},
                            "q3": {"e2": 0.9, "y": 0.8}},
                           {"q1": [["d1", "d2"], ["d3"]], "q2": [["a", "b"], ["c"]],
                            "q3": [["e1"], ["e2"], ["e3"]]}),
}


# Each tool's own numbers on AS_CASES (/tmp/w51/pins: the tool's code run in a scratch venv, never
# imported here): TOOL@VERSION, case, {TOOL's name: (its mean, its value per query in the order of
# the case's sorted query IDs; None where the tool leaves the query out, or raised)}.  Means are
# exact where the tool rounds them (BEIR's, MTEB's but MRR); values per query to 1e-9.
# - beir: EvaluateRetrieval.evaluate (ignore_identical_ids=True), then evaluate_custom on the same
#   results dict, as BEIR's examples do: the custom metrics see the identical IDs removed too; per
#   query: the pytrec_eval scores evaluate averages, and evaluate_custom on one query's results
#   unrounded; a labeled query without a ranking counts 0 in the custom metrics (len(qrels)).
# - mteb: RetrievalEvaluator.evaluate (ignore_identical_ids=False, the evaluator's default) through
#   make_score_dict; 2.18.18 is the last release before the mteb#5092 fix (2.18.19).
# - sentence-transformers: InformationRetrievalEvaluator.compute_metrics at its default cutoffs
#   (without the "cosine_" prefix); a query with nothing relevant is dropped at construction.
# - llamaindex: each metric's compute() on (expected, retrieved), mean over the queries that did not
#   raise (an empty ranking raises ValueError).
# - ragas: ragas.evaluate; NaN (nothing retrieved, nothing relevant) left out of the mean.
# - haystack: the Document*Evaluator.run scores, labels' grades as the ground truth's scores.
# - autorag: retrieval_* on MetricInput(retrieval_gt=groups), pandas' mean (None skipped); groups
#   are --evidence's slots, else one per relevant document.
AS_PINS = [
    ("beir@2.2.0", "A_beir187", {
        "NDCG@10": (0.93638, [0.936379211801]), "MAP@10": (0.9, [0.9]), "Recall@10": (0.9, [0.9]),
        "P@10": (0.9, [0.9]), "MRR@10": (1.0, [1]), "R_cap@10": (0.9, [0.9]),
        "Hole@10": (0.0, [0]), "Accuracy@10": (1.0, [1])}),
    ("beir@2.2.0", "B_identical_id", {
        "NDCG@10": (0.9, [0, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
        "MAP@10": (0.9, [0, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
        "Recall@10": (0.9, [0, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
        "P@10": (0.09, [0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]),
        "MRR@10": (0.9, [0, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
        "R_cap@10": (0.9, [0, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
        "Hole@10": (0.1, [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]),
        "Accuracy@10": (0.9, [0, 1, 1, 1, 1, 1, 1, 1, 1, 1])}),
    ("beir@2.2.0", "A_tie_first_rel", {
        "NDCG@1": (0.0, [0, 0]), "MAP@1": (0.0, [0, 0]), "Recall@1": (0.0, [0, 0]),
        "P@1": (0.0, [0, 0]), "MRR@1": (0.5, [1, 0]), "R_cap@1": (0.5, [1, 0]),
        "Hole@1": (0.5, [0, 1]), "Accuracy@1": (0.5, [1, 0]),
        "NDCG@10": (0.56546, [0.630929753571, 0.5]), "MAP@10": (0.41667, [0.5, 0.333333333333]),
        "Recall@10": (1.0, [1, 1]), "P@10": (0.1, [0.1, 0.1]), "MRR@10": (0.75, [1, 0.5]),
        "R_cap@10": (1.0, [1, 1]), "Hole@10": (0.2, [0.2, 0.2]), "Accuracy@10": (1.0, [1, 1])}),
    ("beir@2.2.0", "A_missing_query", {
        "NDCG@10": (0.81546, [1, 0.630929753571, None]), "MAP@10": (0.75, [1, 0.5, None]),
        "Recall@10": (1.0, [1, 1, None]), "P@10": (0.1, [0.1, 0.1, None]),
        "MRR@10": (0.5, [1, 0.5, 0]), "R_cap@10": (0.66667, [1, 1, 0]),
        "Hole@10": (0.06667, [0.1, 0.1, 0]), "Accuracy@10": (0.66667, [1, 1, 0])}),
    ("beir@2.2.0", "B_more_rel_than_k", {
        "NDCG@10": (0.63638, [0.636376292931]), "MAP@10": (0.35903, [0.359027777778]),
        "Recall@10": (0.5, [0.5]), "P@10": (0.6, [0.6]), "MRR@10": (1.0, [1]),
        "R_cap@10": (0.6, [0.6]), "Hole@10": (0.4, [0.4]), "Accuracy@10": (1.0, [1])}),
    ("beir@2.2.0", "A_no_relevant", {
        "NDCG@10": (0.31546, [0.630929753571, 0]), "MAP@10": (0.25, [0.5, 0]),
        "Recall@10": (0.5, [1, 0]), "P@10": (0.05, [0.1, 0]), "MRR@10": (0.25, [0.5, 0]),
        "R_cap@10": (None, [1, None]), "Hole@10": (0.05, [0, 0.1]), "Accuracy@10": (0.5, [1, 0])}),
    ("mteb@2.26.24", "A_mteb5092", {
        "ndcg_at_10": (0.0, [0, 0, 0]), "map_at_10": (0.0, [0, 0, 0]),
        "recall_at_10": (0.0, [0, 0, 0]), "precision_at_10": (0.0, [0, 0, 0]),
        "hit_rate_at_10": (0.0, [0, 0, 0]), "mrr_at_10": (0.0, [0, 0, 0])}),
    ("mteb@2.26.24", "A_tie_first_rel", {
        "ndcg_at_1": (0.0, [0, 0]), "map_at_1": (0.0, [0, 0]), "recall_at_1": (0.0, [0, 0]),
        "precision_at_1": (0.0, [0, 0]), "hit_rate_at_1": (0.0, [0, 0]),
        "mrr_at_1": (0.0, [0, 0]), "ndcg_at_10": (0.56546, [0.630929753571, 0.5]),
        "map_at_10": (0.41667, [0.5, 0.333333333333]), "recall_at_10": (1.0, [1, 1]),
        "precision_at_10": (0.1, [0.1, 0.1]), "hit_rate_at_10": (1.0, [1, 1]),
        "mrr_at_10": (0.41666666666666663, [0.5, 0.333333333333])}),
    ("mteb@2.26.24", "B_ties_graded", {
        "ndcg_at_10": (0.66472, [0.776343370624, 0.630929753571, 0.586882671436]),
        "map_at_10": (0.52778, [0.5, 0.5, 0.583333333333]),
        "recall_at_10": (0.88889, [0.666666666667, 1, 1]),
        "precision_at_10": (0.16667, [0.2, 0.1, 0.2]), "hit_rate_at_10": (1.0, [1, 1, 1]),
        "mrr_at_10": (0.6666666666666666, [1, 0.5, 0.5])}),
    ("mteb@2.26.24", "A_missing_query", {
        "ndcg_at_10": (0.81546, [1, 0.630929753571, None]), "map_at_10": (0.75, [1, 0.5, None]),
        "recall_at_10": (1.0, [1, 1, None]), "precision_at_10": (0.1, [0.1, 0.1, None]),
        "hit_rate_at_10": (1.0, [1, 1, None]), "mrr_at_10": (0.75, [1, 0.5, None])}),
    ("mteb@2.26.24", "A_no_relevant", {
        "ndcg_at_10": (0.31546, [0.630929753571, 0]), "map_at_10": (0.25, [0.5, 0]),
        "recall_at_10": (0.5, [1, 0]), "precision_at_10": (0.05, [0.1, 0]),
        "hit_rate_at_10": (0.5, [1, 0]), "mrr_at_10": (0.25, [0.5, 0])}),
    ("mteb@2.18.18", "A_mteb5092", {
        "ndcg_at_10": (0.0, [0, 0, 0]), "map_at_10": (0.0, [0, 0, 0]),
        "recall_at_10": (0.0, [0, 0, 0]), "precision_at_10": (0.0, [0, 0, 0]),
        "hit_rate_at_10": (0.0, [0, 0, 0]), "mrr_at_10": (1.0, [1, 1, 1])}),
    ("mteb@2.18.18", "A_tie_first_rel", {
        "ndcg_at_1": (0.0, [0, 0]), "map_at_1": (0.0, [0, 0]), "recall_at_1": (0.0, [0, 0]),
        "precision_at_1": (0.0, [0, 0]), "hit_rate_at_1": (0.0, [0, 0]),
        "mrr_at_1": (0.5, [1, 0]), "ndcg_at_10": (0.56546, [0.630929753571, 0.5]),
        "map_at_10": (0.41667, [0.5, 0.333333333333]), "recall_at_10": (1.0, [1, 1]),
        "precision_at_10": (0.1, [0.1, 0.1]), "hit_rate_at_10": (1.0, [1, 1]),
        "mrr_at_10": (0.75, [1, 0.5])}),
    ("mteb@2.18.18", "B_ties_graded", {
        "ndcg_at_10": (0.66472, [0.776343370624, 0.630929753571, 0.586882671436]),
        "map_at_10": (0.52778, [0.5, 0.5, 0.583333333333]),
        "recall_at_10": (0.88889, [0.666666666667, 1, 1]),
        "precision_at_10": (0.16667, [0.2, 0.1, 0.2]), "hit_rate_at_10": (1.0, [1, 1, 1]),
        "mrr_at_10": (0.6666666666666666, [1, 0.5, 0.5])}),
    ("mteb@2.18.18", "A_missing_query", {
        "ndcg_at_10": (0.81546, [1, 0.630929753571, None]), "map_at_10": (0.75, [1, 0.5, None]),
        "recall_at_10": (1.0, [1, 1, None]), "precision_at_10": (0.1, [0.1, 0.1, None]),
        "hit_rate_at_10": (1.0, [1, 1, None]), "mrr_at_10": (0.75, [1, 0.5, None])}),
    ("sentence-transformers@6.3.0", "B_more_rel_than_k", {
        "accuracy@1": (1.0, [1]), "accuracy@3": (1.0, [1]), "accuracy@5": (1.0, [1]),
        "accuracy@10": (1.0, [1]), "precision@1": (1.0, [1]),
        "precision@3": (0.6666666666666666, [0.666666666667]), "precision@5": (0.6, [0.6]),
        "precision@10": (0.6, [0.6]), "recall@1": (0.08333333333333333, [0.0833333333333]),
        "recall@3": (0.16666666666666666, [0.166666666667]), "recall@5": (0.25, [0.25]),
        "recall@10": (0.5, [0.5]), "ndcg@10": (0.6363762929310753, [0.636376292931]),
        "mrr@10": (1.0, [1]), "map@100": (0.3590277777777777, [0.359027777778])}),
    ("sentence-transformers@6.3.0", "B_ties_graded", {
        "accuracy@1": (0.6666666666666666, [1, 1, 0]), "accuracy@3": (1.0, [1, 1, 1]),
        "accuracy@5": (1.0, [1, 1, 1]), "accuracy@10": (1.0, [1, 1, 1]),
        "precision@1": (0.6666666666666666, [1, 1, 0]),
        "precision@3": (0.5555555555555555, [0.666666666667, 0.333333333333, 0.666666666667]),
        "precision@5": (0.3333333333333333, [0.4, 0.2, 0.4]),
        "precision@10": (0.16666666666666666, [0.2, 0.1, 0.2]),
        "recall@1": (0.4444444444444444, [0.333333333333, 1, 0]),
        "recall@3": (0.8888888888888888, [0.666666666667, 1, 1]),
        "recall@5": (0.8888888888888888, [0.666666666667, 1, 1]),
        "recall@10": (0.8888888888888888, [0.666666666667, 1, 1]),
        "ndcg@10": (0.8195956802019642, [0.765360636989, 1, 0.693426403617]),
        "mrr@10": (0.8333333333333334, [1, 1, 0.5]),
        "map@100": (0.75, [0.666666666667, 1, 0.583333333333])}),
    ("sentence-transformers@6.3.0", "A_tie_first_rel", {
        "accuracy@1": (0.0, [0, 0]), "accuracy@3": (1.0, [1, 1]), "accuracy@5": (1.0, [1, 1]),
        "accuracy@10": (1.0, [1, 1]), "precision@1": (0.0, [0, 0]),
        "precision@3": (0.3333333333333333, [0.333333333333, 0.333333333333]),
        "precision@5": (0.2, [0.2, 0.2]), "precision@10": (0.1, [0.1, 0.1]),
        "recall@1": (0.0, [0, 0]), "recall@3": (1.0, [1, 1]), "recall@5": (1.0, [1, 1]),
        "recall@10": (1.0, [1, 1]),
        "ndcg@10": (0.6309297535714575, [0.630929753571, 0.630929753571]),
        "mrr@10": (0.5, [0.5, 0.5]), "map@100": (0.5, [0.5, 0.5])}),
    ("sentence-transformers@6.3.0", "A_no_relevant", {
        "accuracy@1": (0.0, [0, None]), "accuracy@3": (1.0, [1, None]),
        "accuracy@5": (1.0, [1, None]), "accuracy@10": (1.0, [1, None]),
        "precision@1": (0.0, [0, None]),
        "precision@3": (0.3333333333333333, [0.333333333333, None]),
        "precision@5": (0.2, [0.2, None]), "precision@10": (0.1, [0.1, None]),
        "recall@1": (0.0, [0, None]), "recall@3": (1.0, [1, None]), "recall@5": (1.0, [1, None]),
        "recall@10": (1.0, [1, None]), "ndcg@10": (0.6309297535714575, [0.630929753571, None]),
        "mrr@10": (0.5, [0.5, None]), "map@100": (0.5, [0.5, None])}),
    ("sentence-transformers@6.3.0", "A_missing_query", {
        "accuracy@1": (0.3333333333333333, [1, 0, 0]),
        "accuracy@3": (0.6666666666666666, [1, 1, 0]),
        "accuracy@5": (0.6666666666666666, [1, 1, 0]),
        "accuracy@10": (0.6666666666666666, [1, 1, 0]),
        "precision@1": (0.3333333333333333, [1, 0, 0]),
        "precision@3": (0.2222222222222222, [0.333333333333, 0.333333333333, 0]),
        "precision@5": (0.13333333333333333, [0.2, 0.2, 0]),
        "precision@10": (0.06666666666666667, [0.1, 0.1, 0]),
        "recall@1": (0.3333333333333333, [1, 0, 0]), "recall@3": (0.6666666666666666, [1, 1, 0]),
        "recall@5": (0.6666666666666666, [1, 1, 0]), "recall@10": (0.6666666666666666, [1, 1, 0]),
        "ndcg@10": (0.5436432511904858, [1, 0.630929753571, 0]), "mrr@10": (0.5, [1, 0.5, 0]),
        "map@100": (0.5, [1, 0.5, 0])}),
    ("llamaindex@0.14.25", "A_ndcg_ideal", {
        "hit_rate": (1.0, [1, 1, 1]), "mrr": (0.611111111111111, [1, 0.5, 0.333333333333]),
        "precision": (0.5277777777777778, [1, 0.333333333333, 0.25]),
        "recall": (0.6333333333333333, [0.4, 1, 0.5]),
        "ap": (0.35555555555555557, [0.4, 0.5, 0.166666666667]),
        "ndcg": (0.4968832733207768, [0.553146470008, 0.630929753571, 0.306573596383])}),
    ("llamaindex@0.14.25", "A_mteb5092", {
        "hit_rate": (1.0, [1, 1, 1]),
        "mrr": (0.08333333333333333, [0.0833333333333, 0.0833333333333, 0.0833333333333]),
        "precision": (0.08333333333333333, [0.0833333333333, 0.0833333333333, 0.0833333333333]),
        "recall": (1.0, [1, 1, 1]),
        "ap": (0.08333333333333333, [0.0833333333333, 0.0833333333333, 0.0833333333333]),
        "ndcg": (0.27023815442731974, [0.270238154427, 0.270238154427, 0.270238154427])}),
    ("llamaindex@0.14.25", "B_identical_id", {
        "hit_rate": (1.0, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
        "mrr": (1.0, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
        "precision": (0.5, [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]),
        "recall": (1.0, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
        "ap": (1.0, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
        "ndcg": (1.0, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1])}),
    ("llamaindex@0.14.25", "B_ties_graded", {
        "hit_rate": (1.0, [1, 1, 1]), "mrr": (0.6666666666666666, [1, 0.5, 0.5]),
        "precision": (0.4666666666666666, [0.4, 0.333333333333, 0.666666666667]),
        "recall": (0.8888888888888888, [0.666666666667, 1, 1]),
        "ap": (0.5277777777777778, [0.5, 0.5, 0.583333333333]),
        "ndcg": (0.6652474099040108, [0.671386072523, 0.630929753571, 0.693426403617])}),
    ("llamaindex@0.14.25", "B_empty_run", {
        "hit_rate": (1.0, [None, 1]), "mrr": (1.0, [None, 1]), "precision": (0.5, [None, 0.5]),
        "recall": (1.0, [None, 1]), "ap": (1.0, [None, 1]), "ndcg": (1.0, [None, 1])}),
    ("llamaindex@0.14.25", "A_missing_query", {
        "hit_rate": (1.0, [1, 1, None]), "mrr": (0.75, [1, 0.5, None]),
        "precision": (0.5, [0.5, 0.5, None]), "recall": (1.0, [1, 1, None]),
        "ap": (0.75, [1, 0.5, None]), "ndcg": (0.8154648767857288, [1, 0.630929753571, None])}),
    ("llamaindex@0.14.25", "A_no_relevant", {
        "hit_rate": (1.0, [1, None]), "mrr": (0.5, [0.5, None]), "precision": (0.5, [0.5, None]),
        "recall": (1.0, [1, None]), "ap": (0.5, [0.5, None]),
        "ndcg": (0.6309297535714575, [0.630929753571, None])}),
    ("llamaindex@0.12.5", "A_ndcg_ideal", {
        "hit_rate": (1.0, [1, 1, 1]), "mrr": (0.611111111111111, [1, 0.5, 0.333333333333]),
        "precision": (0.5277777777777778, [1, 0.333333333333, 0.25]),
        "recall": (0.6333333333333333, [0.4, 1, 0.5]),
        "ap": (0.35555555555555557, [0.4, 0.5, 0.166666666667]),
        "ndcg": (0.6458344499847289, [1, 0.630929753571, 0.306573596383])}),
    ("llamaindex@0.12.5", "A_mteb5092", {
        "hit_rate": (1.0, [1, 1, 1]),
        "mrr": (0.08333333333333333, [0.0833333333333, 0.0833333333333, 0.0833333333333]),
        "precision": (0.08333333333333333, [0.0833333333333, 0.0833333333333, 0.0833333333333]),
        "recall": (1.0, [1, 1, 1]),
        "ap": (0.08333333333333333, [0.0833333333333, 0.0833333333333, 0.0833333333333]),
        "ndcg": (0.27023815442731974, [0.270238154427, 0.270238154427, 0.270238154427])}),
    ("llamaindex@0.12.5", "B_identical_id", {
        "hit_rate": (1.0, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
        "mrr": (1.0, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
        "precision": (0.5, [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]),
        "recall": (1.0, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
        "ap": (1.0, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
        "ndcg": (1.0, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1])}),
    ("llamaindex@0.12.5", "B_ties_graded", {
        "hit_rate": (1.0, [1, 1, 1]), "mrr": (0.6666666666666666, [1, 0.5, 0.5]),
        "precision": (0.4666666666666666, [0.4, 0.333333333333, 0.666666666667]),
        "recall": (0.8888888888888888, [0.666666666667, 1, 1]),
        "ap": (0.5277777777777778, [0.5, 0.5, 0.583333333333]),
        "ndcg": (0.6652474099040108, [0.671386072523, 0.630929753571, 0.693426403617])}),
    ("llamaindex@0.12.5", "B_empty_run", {
        "hit_rate": (1.0, [None, 1]), "mrr": (1.0, [None, 1]), "precision": (0.5, [None, 0.5]),
        "recall": (1.0, [None, 1]), "ap": (1.0, [None, 1]), "ndcg": (1.0, [None, 1])}),
    ("llamaindex@0.12.2", "A_ndcg_ideal", {
        "hit_rate": (1.0, [1, 1, 1]), "mrr": (0.611111111111111, [1, 0.5, 0.333333333333]),
        "precision": (0.5277777777777778, [1, 0.333333333333, 0.25]),
        "recall": (0.6333333333333333, [0.4, 1, 0.5]),
        "ap": (0.35555555555555557, [0.4, 0.5, 0.166666666667]),
        "ndcg": (0.4970906453206387, [1, 0.296081910966, 0.195190024996])}),
    ("llamaindex@0.12.2", "A_mteb5092", {
        "hit_rate": (1.0, [1, 1, 1]),
        "mrr": (0.08333333333333333, [0.0833333333333, 0.0833333333333, 0.0833333333333]),
        "precision": (0.08333333333333333, [0.0833333333333, 0.0833333333333, 0.0833333333333]),
        "recall": (1.0, [1, 1, 1]),
        "ap": (0.08333333333333333, [0.0833333333333, 0.0833333333333, 0.0833333333333]),
        "ndcg": (0.05306340617755808, [0.0530634061776, 0.0530634061776, 0.0530634061776])}),
    ("llamaindex@0.12.2", "B_identical_id", {
        "hit_rate": (1.0, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
        "mrr": (1.0, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
        "precision": (0.5, [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]),
        "recall": (1.0, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
        "ap": (1.0, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
        "ndcg": (0.6131471927654584, [0.613147192765, 0.613147192765, 0.613147192765,
            0.613147192765, 0.613147192765, 0.613147192765, 0.613147192765, 0.613147192765,
            0.613147192765, 0.613147192765])}),
    ("llamaindex@0.12.2", "B_ties_graded", {
        "hit_rate": (1.0, [1, 1, 1]), "mrr": (0.6666666666666666, [1, 0.5, 0.5]),
        "precision": (0.4666666666666666, [0.4, 0.333333333333, 0.666666666667]),
        "recall": (0.8888888888888888, [0.666666666667, 1, 1]),
        "ap": (0.5277777777777778, [0.5, 0.5, 0.583333333333]),
        "ndcg": (0.43734391335314377, [0.485228555116, 0.296081910966, 0.530721273977])}),
    ("llamaindex@0.12.2", "B_empty_run", {
        "hit_rate": (1.0, [None, 1]), "mrr": (1.0, [None, 1]), "precision": (0.5, [None, 0.5]),
        "recall": (1.0, [None, 1]), "ap": (1.0, [None, 1]),
        "ndcg": (0.6131471927654584, [None, 0.613147192765])}),
    ("ragas@0.4.3", "B_ties_graded", {
        "id_based_context_precision": (0.4666666666666666, [0.4, 0.333333333333, 0.666666666667]),
        "id_based_context_recall": (0.8888888888888888, [0.666666666667, 1, 1])}),
    ("ragas@0.4.3", "B_empty_run", {
        "id_based_context_precision": (0.5, [None, 0.5]),
        "id_based_context_recall": (0.5, [0, 1])}),
    ("ragas@0.4.3", "A_no_relevant", {
        "id_based_context_precision": (0.25, [0.5, 0]),
        "id_based_context_recall": (1.0, [1, None])}),
    ("ragas@0.4.3", "A_tie_first_rel", {
        "id_based_context_precision": (0.29166666666666663, [0.25, 0.333333333333]),
        "id_based_context_recall": (1.0, [1, 1])}),
    ("ragas@0.4.3", "A_missing_query", {
        "id_based_context_precision": (0.5, [0.5, 0.5, None]),
        "id_based_context_recall": (0.6666666666666666, [1, 1, 0])}),
    ("haystack@3.4.1", "B_ap_denominator", {
        "document_mrr": (0.5, [0.5]), "document_map": (0.16666666666666666, [0.166666666667]),
        "document_recall_single_hit": (1.0, [1]),
        "document_recall_multi_hit": (0.3333333333333333, [0.333333333333]),
        "document_ndcg": (0.2960819109658652, [0.296081910966])}),
    ("haystack@3.4.1", "B_more_rel_than_k", {
        "document_mrr": (1.0, [1]), "document_map": (0.3590277777777777, [0.359027777778]),
        "document_recall_single_hit": (1.0, [1]), "document_recall_multi_hit": (0.5, [0.5]),
        "document_ndcg": (0.567751976247554, [0.567751976248])}),
    ("haystack@3.4.1", "B_ties_graded", {
        "document_mrr": (0.6666666666666666, [1, 0.5, 0.5]),
        "document_map": (0.5277777777777778, [0.5, 0.5, 0.583333333333]),
        "document_recall_single_hit": (1.0, [1, 1, 1]),
        "document_recall_multi_hit": (0.8888888888888888, [0.666666666667, 1, 1]),
        "document_ndcg": (0.6647185985435936, [0.776343370624, 0.630929753571, 0.586882671436])}),
    ("haystack@3.4.1", "A_missing_query", {
        "document_mrr": (0.5, [1, 0.5, 0]), "document_map": (0.5, [1, 0.5, 0]),
        "document_recall_single_hit": (0.6666666666666666, [1, 1, 0]),
        "document_recall_multi_hit": (0.6666666666666666, [1, 1, 0]),
        "document_ndcg": (0.5436432511904858, [1, 0.630929753571, 0])}),
    ("haystack@3.4.1", "A_no_relevant", {
        "document_mrr": (0.25, [0.5, 0]), "document_map": (0.25, [0.5, 0]),
        "document_recall_single_hit": (0.5, [1, 0]), "document_recall_multi_hit": (0.5, [1, 0]),
        "document_ndcg": (0.31546487678572877, [0.630929753571, 0])}),
    ("haystack@3.1.0", "B_ap_denominator", {
        "document_mrr": (0.5, [0.5]), "document_map": (0.16666666666666666, [0.166666666667]),
        "document_recall_single_hit": (1.0, [1]),
        "document_recall_multi_hit": (0.3333333333333333, [0.333333333333]),
        "document_ndcg": (0.2960819109658652, [0.296081910966])}),
    ("haystack@3.1.0", "B_more_rel_than_k", {
        "document_mrr": (1.0, [1]), "document_map": (0.3590277777777777, [0.359027777778]),
        "document_recall_single_hit": (1.0, [1]), "document_recall_multi_hit": (0.5, [0.5]),
        "document_ndcg": (0.567751976247554, [0.567751976248])}),
    ("haystack@3.1.0", "B_ties_graded", {
        "document_mrr": (0.6666666666666666, [1, 0.5, 0.5]),
        "document_map": (0.5277777777777778, [0.5, 0.5, 0.583333333333]),
        "document_recall_single_hit": (1.0, [1, 1, 1]),
        "document_recall_multi_hit": (0.8888888888888888, [0.666666666667, 1, 1]),
        "document_ndcg": (0.6647185985435936, [0.776343370624, 0.630929753571, 0.586882671436])}),
    ("haystack@3.1.0", "A_missing_query", {
        "document_mrr": (0.5, [1, 0.5, 0]), "document_map": (0.5, [1, 0.5, 0]),
        "document_recall_single_hit": (0.6666666666666666, [1, 1, 0]),
        "document_recall_multi_hit": (0.6666666666666666, [1, 1, 0]),
        "document_ndcg": (0.5436432511904858, [1, 0.630929753571, 0])}),
    ("haystack@3.0.0", "B_ap_denominator", {
        "document_mrr": (0.5, [0.5]), "document_map": (0.5, [0.5]),
        "document_recall_single_hit": (1.0, [1]),
        "document_recall_multi_hit": (0.3333333333333333, [0.333333333333]),
        "document_ndcg": (0.2960819109658652, [0.296081910966])}),
    ("haystack@3.0.0", "B_more_rel_than_k", {
        "document_mrr": (1.0, [1]), "document_map": (0.7180555555555554, [0.718055555556]),
        "document_recall_single_hit": (1.0, [1]), "document_recall_multi_hit": (0.5, [0.5]),
        "document_ndcg": (0.567751976247554, [0.567751976248])}),
    ("haystack@3.0.0", "B_ties_graded", {
        "document_mrr": (0.6666666666666666, [1, 0.5, 0.5]),
        "document_map": (0.611111111111111, [0.75, 0.5, 0.583333333333]),
        "document_recall_single_hit": (1.0, [1, 1, 1]),
        "document_recall_multi_hit": (0.8888888888888888, [0.666666666667, 1, 1]),
        "document_ndcg": (0.6647185985435936, [0.776343370624, 0.630929753571, 0.586882671436])}),
    ("haystack@3.0.0", "A_missing_query", {
        "document_mrr": (0.5, [1, 0.5, 0]), "document_map": (0.5, [1, 0.5, 0]),
        "document_recall_single_hit": (0.6666666666666666, [1, 1, 0]),
        "document_recall_multi_hit": (0.6666666666666666, [1, 1, 0]),
        "document_ndcg": (0.5436432511904858, [1, 0.630929753571, 0])}),
    ("autorag@0.3.27", "B_autorag_evidence", {
        "retrieval_recall": (0.7777777777777778, [1, 1, 0.333333333333]),
        "retrieval_precision": (0.5499999999999999, [0.4, 0.75, 0.5]),
        "retrieval_f1": (0.6095238095238096, [0.571428571429, 0.857142857143, 0.4]),
        "retrieval_mrr": (0.4444444444444444, [0.375, 0.625, 0.333333333333]),
        "retrieval_map": (0.4166666666666667, [0.375, 0.541666666667, 0.333333333333]),
        "retrieval_ndcg": (0.6724539619221845, [0.498189257466, 0.906025435535, 0.613147192765])}),
    ("autorag@0.3.27", "B_ties_graded", {
        "retrieval_recall": (0.8888888888888888, [0.666666666667, 1, 1]),
        "retrieval_precision": (0.4666666666666666, [0.4, 0.333333333333, 0.666666666667]),
        "retrieval_f1": (0.6, [0.5, 0.5, 0.8]),
        "retrieval_mrr": (0.4444444444444445, [0.416666666667, 0.5, 0.416666666667]),
        "retrieval_map": (0.4444444444444445, [0.416666666667, 0.5, 0.416666666667]),
        "retrieval_ndcg": (0.6652474099040108, [0.671386072523, 0.630929753571, 0.693426403617])}),
    ("autorag@0.3.27", "B_more_rel_than_k", {
        "retrieval_recall": (0.5, [0.5]), "retrieval_precision": (0.6, [0.6]),
        "retrieval_f1": (0.5454545454545454, [0.545454545455]),
        "retrieval_mrr": (0.16458333333333333, [0.164583333333]),
        "retrieval_map": (0.16458333333333333, [0.164583333333]),
        "retrieval_ndcg": (0.6363762929310753, [0.636376292931])}),
    ("autorag@0.3.27", "B_empty_run", {
        "retrieval_recall": (1.0, [None, 1]), "retrieval_precision": (0.5, [None, 0.5]),
        "retrieval_f1": (0.6666666666666666, [None, 0.666666666667]),
        "retrieval_mrr": (1.0, [None, 1]), "retrieval_map": (1.0, [None, 1]),
        "retrieval_ndcg": (1.0, [None, 1])}),
    ("autorag@0.3.27", "A_missing_query", {
        "retrieval_recall": (1.0, [1, 1, None]), "retrieval_precision": (0.5, [0.5, 0.5, None]),
        "retrieval_f1": (0.6666666666666666, [0.666666666667, 0.666666666667, None]),
        "retrieval_mrr": (0.75, [1, 0.5, None]), "retrieval_map": (0.75, [1, 0.5, None]),
        "retrieval_ndcg": (0.8154648767857288, [1, 0.630929753571, None])}),
    ("autorag@0.3.27", "A_no_relevant", {
        "retrieval_recall": (1.0, [1, None]), "retrieval_precision": (0.5, [0.5, None]),
        "retrieval_f1": (0.6666666666666666, [0.666666666667, None]),
        "retrieval_mrr": (0.5, [0.5, None]), "retrieval_map": (0.5, [0.5, None]),
        "retrieval_ndcg": (0.6309297535714575, [0.630929753571, None])}),
]


# What a case needs said: each tool's answer to a labeled query without a ranking (A_missing_query)
# and to one with nothing relevant (A_no_relevant) is modelled under --missing-run zero and
# --no-relevant zero (--as refuses skip): BEIR's evaluate() and MTEB leave the unranked query out
# and score the other 0, but BEIR's custom metrics count the unranked query 0 (they divide by
# len(qrels)) and its R_cap raises ZeroDivisionError on R = 0 (no mean; q2 null);
# sentence-transformers scores an unranked query 0 and drops one with nothing relevant;
# LlamaIndex and AutoRAG leave both out (ValueError, None); Haystack scores both 0; Ragas'
# precision is NaN (left out) without a ranking and 0.0 with nothing relevant, its recall 0.0
# and NaN.
AS_OPTIONS = {"A_missing_query": ("--missing-run", "zero"), "A_no_relevant": ("--no-relevant", "zero")}


# Where the tool's numbers part from trec_eval's, for item 3 (see as_block): TOOL, case, name,
# trec_eval's name, its mean (hand-computed), {cause: queries}, the causes of the means' gap
AS_CAUSES = [
    # d0 removed: 9 of 10 relevant within 10; trec_eval finds all 10
    ("beir", "A_beir187", "Recall@10", "recall_10", 1.0, {"identical ID removed": 1}, []),
    ("beir", "A_beir187", "NDCG@10", "ndcg_cut_10", 1.0, {"identical ID removed": 1},
     ["rounding"]),
    # R_cap@1 is relative_P_1: q1's tied b, a, c, handed b first, ranked c first by trec_eval
    ("beir", "A_tie_first_rel", "R_cap@1", "relative_P_1", 0.0, {"tie order": 1}, []),
    # tied b, a, c: trec_eval ranks c, b, a (b at 2); z, a (a at 3): (1/2 + 1/3) / 2
    ("mteb@2.18.18", "A_tie_first_rel", "mrr_at_10", "RR@10", 5 / 12, {"tie order": 2}, []),
    ("mteb", "A_tie_first_rel", "mrr_at_10", "RR@10", 5 / 12, {}, []),
    # 6 hits in the top 10, R = 12: trec_eval divides by 12, sentence-transformers by 10
    ("sentence-transformers", "B_more_rel_than_k", "map@10", "map_cut_10",
     (1 + 2 / 3 + 3 / 4 + 4 / 6 + 5 / 8 + 6 / 10) / 12, {"denominator min(k, R)": 1}, []),
    # q1 ties d2, d3, d4 (d2 first by ID ascending), q2 d7, d8; q1 and q3 have grades 2 and 3
    ("sentence-transformers", "B_ties_graded", "ndcg@10", "ndcg_cut_10", 0.6647185985435936,
     {"tie order": 2, "binary gains": 2}, []),
    # 1 of 3 relevant, at rank 2: AP (1/2) / 3; Haystack 3.0.0 divides by the 1 retrieved
    ("haystack@3.0.0", "B_ap_denominator", "document_map", "map_cut_3", 1 / 6,
     {"denominator: relevant retrieved": 1}, []),
    ("haystack", "B_ap_denominator", "document_map", "map_cut_3", 1 / 6, {}, []),
    # first hits at ranks 2, 1, 1
    ("autorag", "B_autorag_evidence", "retrieval_mrr", "RR@5", (1 / 2 + 1 + 1) / 3,
     {"mean over groups": 3}, []),
    ("llamaindex@0.12.2", "A_ndcg_ideal", "precision", "P_4", (2 / 4 + 1 / 4 + 1 / 4) / 3,
     {"a set instead of a ranking": 2}, []),
    ("llamaindex@0.12.2", "A_ndcg_ideal", "ndcg", "ndcg_cut_4", 0.5247285962290061,
     {"ideal from the retrieved list": 3}, []),
    # q1 ranks nothing: P_2 0 there, left out of Ragas' mean
    ("ragas", "B_empty_run", "id_based_context_precision", "P_2", (0 + 1 / 2) / 2, {},
     ["queries averaged over"]),
]


# Each tool's names without -m: its measures at its default cutoffs
AS_DEFAULTS = {
    # EvaluateRetrieval.evaluate's four; the custom metrics are asked for by name, as in BEIR
    "beir": ["%s@%d" % (n, k) for n in ("NDCG", "MAP", "Recall", "P")
             for k in (1, 3, 5, 10, 100, 1000)],
    "sentence-transformers": ["%s@%d" % (n, k) for n in ("accuracy", "precision", "recall")
                              for k in (1, 3, 5, 10)] + ["mrr@10", "ndcg@10", "map@100"],
    "llamaindex": ["hit_rate", "mrr", "precision", "recall", "ap", "ndcg"],
    "ragas": ["id_based_context_precision", "id_based_context_recall"],
    "haystack": ["document_mrr", "document_map", "document_recall_single_hit",
                 "document_recall_multi_hit", "document_ndcg"],
    "autorag": ["retrieval_recall", "retrieval_precision", "retrieval_f1", "retrieval_mrr",
                "retrieval_map", "retrieval_ndcg"],
    "mteb": ["%s_at_%d" % (n, k) for n in ("ndcg", "map", "recall", "precision", "mrr", "hit_rate")
             for k in (1, 3, 5, 10, 20, 100, 1000)]}


# The tools that take a list of IDs, as its caller ranked it: each case hands them the run in
# trec_eval's order (score descending, ID descending), as the pins did
AS_LISTS = ("llamaindex", "ragas", "haystack", "autorag")


class AsToolTest(TempDirTestCase):
    """--as TOOL[@VERSION]: another tool's numbers under its names, exactly as its pinned release
    computes them, beside trec_eval's with the cause of each difference."""

    def files(self, case, listed=False):
        """A case's inputs as JSON files: labels (or AutoRAG's groups as --evidence) and the run;
        listed: each query's documents in trec_eval's order, the list a tool that takes one was
        handed (it reads the run's own order: see the "given" step)."""
        labels, run, *groups = AS_CASES[case]
        if listed:
            run = {q: dict(sorted(docs.items(), key=lambda item: item[::-1], reverse=True))
                   for q, docs in run.items()}
        given = ["--evidence", self.write("e.json", groups[0])] if groups else \
            ["--qrels", self.write("q.json", labels)]
        return given + ["--run", self.write("r.json", run)]

    def as_tool(self, tool, case, *args):
        listed = tool.partition("@")[0].lower() in AS_LISTS
        status, out, err = cli(*self.files(case, listed), "--as", tool, *args)
        self.assertEqual(status, 0, err)
        return json.loads(out)

    def assert_pinned(self, result, tool, case, pinned):
        """Each pinned mean and value per query, exactly where the tool rounds."""
        labels, run, *_ = AS_CASES[case]
        queries = sorted(set(labels) | set(run))
        for name, (mean, per_query) in pinned.items():
            rounded = tool.startswith("beir") or tool.startswith("mteb") and "mrr" not in name
            # where the tool raised it has no mean; its query is null here
            if mean is None:
                pass
            elif rounded:
                self.assertEqual(result["measures"][name], mean, name)
            else:
                self.assertAlmostEqual(result["measures"][name], mean, delta=1e-9, msg=name)
            got = [result["per_query"].get(q, {}).get(name) for q in queries]
            self.assertEqual([x is None for x in got], [x is None for x in per_query], name)
            for q, want, value in zip(queries, per_query, got):
                if want is not None:
                    self.assertAlmostEqual(value, want, delta=1e-9, msg=(name, q))

    def test_each_tools_own_numbers_on_the_pinned_cases(self):
        for tool, case, pinned in AS_PINS:
            with self.subTest(tool=tool, case=case):
                result = self.as_tool(tool, case, "-m", ",".join(pinned), *AS_OPTIONS.get(case, ()))
                self.assert_pinned(result, tool, case, pinned)

    def test_trec_eval_beside_each_number_and_the_causes(self):
        for tool, case, name, trec, mean, differing, mean_causes in AS_CAUSES:
            with self.subTest(tool=tool, case=case, name=name):
                result = self.as_tool(tool, case, "-m", name)
                block = result["as"]
                self.assertEqual((block["tool"], block["version"]),
                                 (tool.partition("@")[0], tool.partition("@")[2]
                                  or rre.TOOLS[tool.partition("@")[0]].version))
                entry = block["measures"][name]
                self.assertEqual((entry["trec_eval"], entry["queries_differing"],
                                  entry["mean_causes"]), (trec, differing, mean_causes))
                self.assertAlmostEqual(entry["trec_eval_mean"], mean, delta=1e-9)
                # a query that differs names its causes; one that does not is not listed
                causes = [c for q in block["per_query"].values() if name in q
                          for c in q[name]["causes"]]
                self.assertEqual(sorted(causes), sorted(c for c, n in differing.items()
                                                        for _ in range(n)))

    def test_the_query_that_differs_and_the_note(self):
        status, out, err = cli(*self.files("A_tie_first_rel"), "--as", "mteb@2.18.18",
                               "-m", "mrr_at_10,ndcg_at_10")
        self.assertEqual(json.loads(out)["as"]["per_query"], {
            "q1": {"mrr_at_10": {"trec_eval": 0.5, "causes": ["tie order"]}},
            "q2": {"mrr_at_10": {"trec_eval": 1 / 3, "causes": ["tie order"]}}})
        self.assertEqual(err, "rag_retrieval_eval: note: mrr_at_10 is mteb 2.18.18's; trec_eval's "
                              "RR@10 is 0.4167, apart by tie order on 2 queries\n")

    def test_a_list_is_read_in_its_own_order(self):
        # handed b, a, c (tied) and m, a, z: b first, a second; trec_eval ranks b 2nd, a 3rd
        status, out, err = cli(*self.files("A_tie_first_rel"), "--as", "llamaindex", "-m", "mrr")
        result = json.loads(out)
        self.assertEqual((result["measures"], result["per_query"]),
                         ({"mrr": 0.75}, {"q1": {"mrr": 1.0}, "q2": {"mrr": 0.5}}))
        self.assertEqual(result["as"]["measures"]["mrr"]["queries_differing"],
                         {"the list's own order": 2})
        self.assertEqual(err, "rag_retrieval_eval: note: mrr is llamaindex 0.14.25's; trec_eval's "
                              "RR@4 is 0.4167, apart by the list's own order on 2 queries\n")

    def test_each_tools_names_without_m(self):
        for tool, names in AS_DEFAULTS.items():
            with self.subTest(tool):
                self.assertEqual(list(self.as_tool(tool, "B_ties_graded")["measures"]), names)

    def test_a_version_selects_the_definition_in_force_then(self):
        # llamaindex: 0.12.2, the ideal from the list; 0.12.3 to 0.12.5 cut at its length;
        # 0.12.6 on every expected ID.  haystack: AP over the relevant retrieved before
        # 3.1.0 (2.31.0's is 3.0.0's).  mteb: MRR's ties in the run's order before 2.18.19.  A
        # release's number may have fewer parts; the tool's name any case.
        same = [("llamaindex@0.12.2", ["LlamaIndex@0.12.2"]),
                ("llamaindex@0.12.5", ["llamaindex@0.12.3", "llamaindex@0.12.4"]),
                ("llamaindex", ["llamaindex@0.12.6", "llamaindex@0.14.25"]),
                ("haystack@3.0.0", ["haystack@2.31.0", "haystack@3.0"]),
                ("haystack", ["haystack@3.1", "haystack@3.1.0", "haystack@3.4.1"]),
                ("mteb@2.18.18", ["MTEB@2.18.18"]),
                ("mteb", ["mteb@2.18.19", "mteb@2.26.24"])]
        names = {"llamaindex": "ndcg", "haystack": "document_map", "mteb": "mrr_at_10"}
        for chosen, aliases in same:
            name = names[chosen.partition("@")[0]]
            case = {"llamaindex": "A_ndcg_ideal", "haystack": "B_ties_graded"}.get(
                chosen.partition("@")[0], "A_tie_first_rel")
            want = self.as_tool(chosen, case, "-m", name)
            for alias in aliases:
                with self.subTest(alias):
                    got = self.as_tool(alias, case, "-m", name)
                    self.assertEqual((got["measures"], got["per_query"]),
                                     (want["measures"], want["per_query"]))
                    self.assertEqual(got["as"]["version"], alias.partition("@")[2] or
                                     rre.TOOLS[alias.partition("@")[0]].version)

    def test_every_format_shows_the_tools_numbers(self):
        args = self.files("A_beir187") + ["--as", "beir", "-m", "Recall@10,NDCG@10"]
        note = ("rag_retrieval_eval: note: Recall@10 is beir 2.2.0's; trec_eval's recall_10 is "
                "1.0000, apart by identical ID removed on 1 query\n")
        summary = self.tmp / "summary.md"
        shown = {"table": "query  Recall@10  NDCG@10\nall       0.9000   0.9364\n",
                 "markdown": "| Recall@10 | 0.9000 |\n| NDCG@10 | 0.9364 |\n",
                 # the last digit is the Python's: 3.12 sums floats otherwise
                 "csv": "query,Recall@10,NDCG@10\n0,0.9,0.936379211801048"}
        for form, text in shown.items():
            with self.subTest(form):
                status, out, err = cli(*args, "--format", form, "--summary", summary)
                self.assertEqual(status, 0, err)
                self.assertIn(text, out)
                self.assertTrue(err.startswith(note), err)
                self.assertIn("| NDCG@10 | 0.9364 |\n", summary.read_text())
                # the summary says it too, Markdown escaped
                self.assertIn("- Recall@10 is beir 2.2.0's; trec\\_eval's recall\\_10 is 1.0000",
                              summary.read_text())

    def test_mtebs_beir_tasks_remove_the_querys_own_id(self):
        # mteb 2.26.24 with ignore_identical_ids=True, as MSMARCO, ArguAna, Quora... set it
        result = self.as_tool("mteb-ignore-identical-ids", "B_identical_id", "-m",
                              "ndcg_at_10,recall_at_10,mrr_at_10")
        self.assertEqual(result["measures"],
                         {"ndcg_at_10": 0.9, "recall_at_10": 0.9, "mrr_at_10": 0.9})
        self.assertEqual(result["as"]["measures"]["mrr_at_10"]["queries_differing"],
                         {"identical ID removed": 1})

    def test_holes_tie_order_is_its_own_cause(self):
        # q1 hands b (judged) first among tied b, a, c; trec_eval's first is c, unjudged
        result = self.as_tool("beir", "A_tie_first_rel", "-m", "Hole@1")
        self.assertEqual(result["as"]["per_query"],
                         {"q1": {"Hole@1": {"trec_eval": 1.0, "causes": ["tie order"]}}})

    def test_a_saved_result_is_a_baseline_only_for_the_same_tool(self):
        args = self.files("A_tie_first_rel") + ["-m", "P@1"]
        saved = self.write("saved.json", json.loads(cli(*args, "--as", "beir")[1]))
        ours = self.write("ours.json", json.loads(cli(*args)[1]))
        for baseline, given, said in ((saved, [], "saved with --as beir, and no --as is given"),
                                      (saved, ["--as", "beir@2.1.0"],
                                       "saved with --as beir, and --as beir@2.1.0 is given"),
                                      (ours, ["--as", "beir"],
                                       "saved with no --as, and --as beir is given")):
            with self.subTest(given=given, baseline=baseline):
                rejected(self, *cli(*args, "--baseline", baseline, *given), said)
        self.assertEqual(cli(*args, "--baseline", saved, "--as", "beir")[0], 0)

    def test_a_listed_ranking_loses_the_querys_own_id(self):
        # q1 ranks itself first, then its relevant d1: BEIR's d1 is first, trec_eval's second
        result = rre.score_run({"q1": {"d1": 1}}, {"q1": ["q1", "d1"]}, "NDCG@1", as_tool="beir")
        self.assertEqual((result["measures"], result["as"]["per_query"]), (
            {"NDCG@1": 1.0},
            {"q1": {"NDCG@1": {"trec_eval": 0.0, "causes": ["identical ID removed"]}}}))

    def test_a_baseline_and_a_gate_on_a_tools_name(self):
        labels, base, *_ = AS_CASES["A_tie_first_rel"]
        # b, q1's relevant document, falls from the tied top (BEIR keeps it first) to rank 4
        run = copy.deepcopy(base)
        run["q1"]["b"] = 0.05
        status, out, err = cli("--qrels", self.write("q.json", labels), "--run",
                               self.write("r.json", run), "--baseline", self.write("b.json", base),
                               "--as", "beir", "-m", "NDCG@10,MRR@10",
                               "--max-mean-drop", "NDCG@10=0.01")
        self.assertEqual(status, 1, err)
        result = json.loads(out)
        # NDCG@10 q1 1 / log2(3) -> 1 / log2(5), rounded as BEIR rounds; MRR@10 q1 1 -> 1/4
        ndcg = round((1 / math.log2(5) + 0.5) / 2, 5)
        self.assertEqual({m: (c["baseline"], c["candidate"]) for m, c in result["comparison"].items()},
                         {"NDCG@10": (0.56546, ndcg), "MRR@10": (0.75, 0.375)})
        self.assertEqual(result["comparison"]["MRR@10"]["regressed"], {"q1": -0.75})
        self.assertEqual([(b["measure"], b["gate"], b["limit"]) for b in result["breaches"]],
                         [("NDCG@10", "--max-mean-drop", 0.01)])
        self.assertIn("gate failed: NDCG@10 mean: 0.5655 -> %.4f" % ndcg, err)

    def test_several_runs_each_in_the_tools_numbers(self):
        labels, base, *_ = AS_CASES["A_tie_first_rel"]
        run = copy.deepcopy(base)
        run["q1"]["b"] = 0.05
        files = [self.write("base.json", base), self.write("cand.json", run)]
        status, out, err = cli("--qrels", self.write("q.json", labels), "--run", files[0], "--run",
                               files[1], "--as", "beir", "-m", "MRR@10")
        runs = json.loads(out)["runs"]
        self.assertEqual({name: r["measures"] for name, r in runs.items()},
                         {str(files[0]): {"MRR@10": 0.75}, str(files[1]): {"MRR@10": 0.375}})
        # each run's note: trec_eval ranks q1's tied c, b, a and q2's z, a; the second run's b last
        self.assertEqual([line.partition(": note: ")[2] for line in err.splitlines()], [
            "MRR@10 is beir 2.2.0's; trec_eval's RR@10 is 0.4167, apart by tie order on 2 queries",
            "MRR@10 is beir 2.2.0's; trec_eval's RR@10 is 0.2917, apart by tie order on 1 query"])

    def test_the_library_answers_as_the_command_line(self):
        labels, run, *_ = AS_CASES["A_beir187"]
        result = rre.score_run(labels, run, ["Recall@10", "MRR@10"], as_tool="BEIR")
        self.assertEqual(result["measures"], {"Recall@10": 0.9, "MRR@10": 1.0})
        self.assertEqual(result["as"]["measures"]["Recall@10"]["queries_differing"],
                         {"identical ID removed": 1})
        cli_result = self.as_tool("BEIR", "A_beir187", "-m", "Recall@10,MRR@10")
        self.assertEqual(without_inputs(result, whole=True), without_inputs(cli_result, whole=True))
        self.assertEqual(list(rre.score_run(labels, run, as_tool="beir")["measures"]),
                         AS_DEFAULTS["beir"])
        with self.assertRaisesRegex(rre.EvalError, "^'MRR' is no measure of beir: its names are "):
            rre.score_run(labels, run, ["MRR"], as_tool="beir")

    def test_a_trec_run_keeps_its_line_order_and_a_log_its_list(self):
        # BEIR's custom metrics keep tied documents in the order given: a TREC run's line order
        labels, run, *_ = AS_CASES["A_tie_first_rel"]
        qrels = "".join("%s 0 %s %d\n" % (q, d, g) for q, ls in labels.items() for d, g in ls.items())
        status, out, err = cli("--qrels", self.write("q.txt", qrels), "--run",
                               self.write("r.txt", trec_run(run)), "--as", "beir", "-m", "MRR@1,MRR@10")
        self.assertEqual(json.loads(out)["measures"], {"MRR@1": 0.5, "MRR@10": 0.75})
        # a LlamaIndex-style log: expected IDs and the retriever's list, ranked as given
        pinned = next(p for t, c, p in AS_PINS if (t, c) == ("llamaindex@0.12.2", "A_ndcg_ideal"))
        labels, run, *_ = AS_CASES["A_ndcg_ideal"]
        log = self.write("log.jsonl", "".join(json.dumps({
            "query_id": q, "expected_ids": list(labels[q]),
            "retrieved_ids": sorted(run[q], key=run[q].get, reverse=True)}) + "\n" for q in labels))
        status, out, err = cli(log, "--as", "llamaindex@0.12.2", "-m", ",".join(pinned))
        self.assert_pinned(json.loads(out), "llamaindex@0.12.2", "A_ndcg_ideal", pinned)

    def test_what_another_tool_has_no_counterpart_of_is_refused(self):
        files = self.files("A_tie_first_rel")
        for args, fragments in (
                (["--as", "trec"], ["--as takes beir, mteb, mteb-ignore-identical-ids, sentence-transformers, llamaindex, "
                                    "ragas, haystack, autorag", "not 'trec'"]),
                (["--as", "beir@x"], ["not 'beir@x'"]),
                (["--as", "mteb", "-m", "ndcg@10"], ["'ndcg@10' is no measure of mteb: its names "
                                                     "are ndcg_at_k, map_at_k"]),
                (["--as", "llamaindex", "-m", "ndcg@10"], ["'ndcg@10' is no measure of llamaindex"]),
                (["--as", "beir", "-m", "NDCG@x"], ["'NDCG@x' is no measure of beir"]),
                (["--as", "beir", "--k", "5"], ["--as beir scores the IDs ranked as that tool "
                                               "does, and --k has no counterpart there"]),
                (["--as", "beir", "--format", "trec"], ["--format trec has no counterpart"]),
                (["--as", "haystack", "--missing-run", "skip"], ["--missing-run has no counterpart"]),
                (["--as", "beir", "--no-relevant", "skip"], ["--no-relevant has no counterpart"]),
                (["--as", "llamaindex@0.12.1"], ["the definitions of llamaindex 0.12.2 to 0.14.25 "
                                                 "were read, not of 0.12.1"]),
                (["--as", "mteb@1.39.7"], ["the definitions of mteb 2.18.18 to 2.26.24 were read"]),
                (["--as", "ragas", "--relevance-level", "2"], ["--relevance-level has no "
                                                               "counterpart"])):
            with self.subTest(args):
                rejected(self, *cli(*files, *args), *fragments)
        # a labeled query without a ranking, and one with nothing relevant: as without --as,
        # until --missing-run zero and --no-relevant zero say to answer them as the tool does
        rejected(self, *cli(*self.files("A_missing_query"), "--as", "haystack"),
                 "r.json: query sets differ: 1 labeled query has no ranking ('q3')")
        rejected(self, *cli(*self.files("A_no_relevant"), "--as", "beir"),
                 "q.json: 1 query has no relevant label at level 1 ('q2')")


class EdgeTest(TempDirTestCase):
    """Trust at the edges: no traceback, no mean over nothing, no silent pass."""

    def test_a_ranked_query_without_a_relevant_label_is_refused_under_missing_run_skip(self):
        qrels = self.write("q.txt", "q1 0 d1 1\nq2 0 d3 0\nq3 0 d4 1\n")
        run = self.write("r.txt", "q1 Q0 d1 1 3 b\nq2 Q0 d3 1 3 b\nq3 Q0 d4 1 3 b\n")
        rejected(self, *cli("--qrels", qrels, "--run", run, "--missing-run", "skip", "-m", "R@1"),
                 "1 query has no relevant label at level 1 ('q2')")

    def test_rejections(self):
        for name, content, args, fragments in EDGE_REJECTIONS:
            with self.subTest(name):
                path = self.write("f.json", content) if content is not None else None
                argv = [path] if path else []
                status, out, err = cli(*argv, *[path if a == "SELF" else a for a in args])
                rejected(self, status, out, err, *fragments)

    def test_everything_labeled_with_nothing_relevant_scores_zero(self):
        for labels in ([], {}):
            with self.subTest(labels=labels):
                path = self.write("f.json", {"qrels": {"q1": labels}, "runs": {"q1": ["d1"]}})
                status, out, err = cli(path, "-m", "R@3", "--no-relevant", "zero")
                self.assertEqual((status, err), (0, ""))
                result = json.loads(out)
                self.assertEqual((result["measures"], result["zeroed"]["no_relevant"]), ({"R@3": 0.0}, ["q1"]))

    def test_a_skipped_query_is_never_also_zeroed(self):
        path = self.write("f.json", {"qrels": {"q1": ["d1"], "q2": []}, "runs": {"q1": ["d1"]}})
        status, out, _ = cli(path, "-m", "RR", "--missing-run", "zero", "--no-relevant", "skip")
        result = json.loads(out)
        self.assertEqual((status, result["skipped"]["no_relevant"], result["zeroed"]), (
            0, ["q2"], {"missing_run": [], "no_relevant": []}))

    def test_the_baselines_policies_are_reported(self):
        cand = self.write("c.json", {"qrels": {"q1": ["d1"], "q2": ["d2"]}, "runs": {"q1": ["d1"], "q2": ["d2"]}})
        base = self.write("b.json", {"q1": ["d1"], "q9": ["x"]})
        status, out, err = cli(cand, "--baseline", base, "-m", "R@1", "--missing-run", "zero", "--unlabeled", "skip")
        result = json.loads(out)
        self.assertEqual((result["baseline_skipped"]["unlabeled"], result["baseline_zeroed"]["missing_run"]),
                         (["q9"], ["q2"]))
        self.assertIn("note: the baseline has no ranking for 1 query ('q2'): scored as empty", err)
        self.assertIn("note: the baseline skipped 1 query: 1 unlabeled ('q9')", err)

    def test_repeated_k_adds_cutoffs(self):
        status, out, _ = cli(FIXTURE, "--k", "1", "--k", "2")
        self.assertEqual((status, list(json.loads(out)["measures"])), (0, ["R@1", "RR@1", "R@2", "RR@2"]))

    def test_library_numbers(self):
        class Score(float):  # as numpy.float64: a float subclass
            pass
        result = rre.evaluate({"q1": {"d1": True + 1}}, {"q1": {"d2": Score(0.5), "d1": fractions.Fraction(3, 4)}})
        self.assertEqual(result["mrr_at_k"], 1.0)
        for qrels, runs, k in [({"q1": ["d1"]}, {"q1": {"d1": 10 ** 400}}, 3),
                               ({"q1": {"d1": 10 ** 30}}, {"q1": ["d1"]}, 3), (ONE, ONE, 10 ** 30),
                               ({"q1": {"d1": True}}, ONE, 3), (ONE, {"q1": {"d1": True}}, 3)]:
            with self.subTest(k=k), self.assertRaises(rre.EvalError):
                rre.evaluate(qrels, runs, k)

    def test_text_is_read_whatever_its_blanks_and_line_ends(self):
        q = self.write("q.txt", b"q1 0 d1\xc2\xa0 1\r")
        run = self.write("r.txt", b"q1 Q0 d9 1 3 t\rq1 Q0 d8 2 2 t\rq1 Q0 d1\xc2\xa0 3 1 t\r")
        status, out, _ = cli("--qrels", q, "--run", run, "-m", "NumRet,R@3")
        self.assertEqual((status, json.loads(out)["measures"]), (0, {"NumRet": 3, "R@3": 1.0}))
        blank_json = self.write("r.json", b" " * 5000 + b'{"q1": {"d1\xc2\xa0": 1.0}}')
        self.assertEqual(json.loads(cli("--qrels", q, "--run", blank_json, "-m", "R@1")[1])["measures"], {"R@1": 1.0})

    def test_binary_and_unbroken_files_fail_early(self):
        q = self.write("q.txt", b"\x00" * (4 << 20))
        run = self.write("r.txt", b"q1 Q0 d1 1 1.0 t " * ((2 << 20) // 17))
        rejected(self, *cli("--qrels", q, "--run", run), "q.txt:1: control character '\\x00'")
        rejected(self, *cli("--qrels", self.write("q2.txt", "q1 0 d1 1\n"), "--run", run),
                 "r.txt:1: line longer than")

    def test_file_names_stay_on_one_line(self):
        rejected(self, *cli(self.tmp / "no\nsuch.json"), "no\\nsuch.json: cannot read")

    def test_number_limits(self):
        self.assertEqual(rre.parse_cutoff("999999999999999999"), 10 ** 18 - 1)
        self.assertEqual(rre.read_qrels(str(self.write("low.txt", "q1 0 d1 %d\nq1 0 d2 1\n" % -2 ** 63))),
                         {"q1": {"d1": -2 ** 63, "d2": 1}})
        for text, message in (("1000000000000000000",
                               "cutoff must be a positive integer below 10**18, not "),
                              ("abc", "cutoff must be a positive integer, not 'abc'"),
                              ("0", "cutoff must be a positive integer, not '0'")):
            with self.subTest(text), self.assertRaisesRegex(rre.EvalError, "^" + re.escape(message)):
                rre.parse_cutoff(text)
        top = 2 ** 63 - 1
        self.assertEqual(rre.score_run({"q1": {"d1": top}}, {"q1": ["d1"]}, "RR")["measures"], {"RR": 1.0})
        for grade in (2 ** 63, -2 ** 63 - 1):
            with self.subTest(grade=grade), self.assertRaisesRegex(rre.EvalError, "out of range"):
                rre.score_run({"q1": {"d1": grade}}, {"q1": ["d1"]}, "RR")
        path = self.write("q.txt", "q1 0 d1 %d\n" % 2 ** 63)
        self.assertRaisesRegex(rre.EvalError, "q.txt:1", rre.read_qrels, str(path))

    def test_two_runs_have_no_trec_output(self):
        q, a, b = self.write("q.json", ONE), self.write("a.json", ONE), self.write("b.json", ONE)
        rejected(self, *cli("--qrels", q, "--run", a, "--run", b, "--format", "trec"), "--format trec holds one run")
        self.assertEqual(rre.read_run(str(self.write("r.txt", "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1 t\n"))),
                         {"q1": {"d1": 2.5, "d2": 1.0}})

    def test_usage_messages_show_what_cannot_be_printed(self):
        path = self.write("f.json", {"qrels": ONE, "runs": ONE})
        status, out, err = cli(path, "--format", "j\x01")
        self.assertEqual((status, out), (2, ""))
        self.assertTrue(err.startswith("rag_retrieval_eval: error: argument --format: invalid choice: 'j\\x01' ("), err)
        # 0: every judged document
        self.assertEqual(cli(path, "--relevance-level", "0", "-m", "R@1")[0], 0)
        self.assertEqual(cli(path, "--baseline", path, "--permutations", "1", "-m", "R@1")[0], 0)
        status, out, err = cli(path, "b\x01")  # two files: trec_eval's form
        self.assertEqual(err, "rag_retrieval_eval: error: b\\x01: cannot read: No such file "
                              "or directory\n")

    def test_standard_input_is_the_same_file_as_itself_only(self):
        self.assertTrue(rre._same_file("-", "-"))
        dash, saved = self.write("-", ""), os.getcwd()
        os.chdir(self.tmp)
        try:  # a file named '-' is not standard input
            self.assertFalse(rre._same_file(str(dash), "-"))
        finally:
            os.chdir(saved)


class TieBoundsTest(TempDirTestCase):
    MEASURES = ["R@2", "P@3", "RR", "AP", "nDCG@3", "Rprec", "Judged@3", "Bpref", "SetP", "SetF", "IPrec@0.5",
                "nDCG(gains={0:0,1:3,2:1,3:7})@3", "nDCG(gains={1:-1,2:2})", "nDCG(gains={0:2})@2", "AP(rel=2)",
                "GMAP", "GMBpref", "RprecMult@1.0", "Utility", "IPrecAvg", "BinG", "G", "RelP@2", "SetRelP", "SetAP",
                "NumNonRelJudgedRet", "RBP", "RBP@2"]

    def test_bounds_are_the_extremes_over_every_order(self):
        rng = random.Random(7)
        for trial in range(25):
            docs = ["d%d" % i for i in range(rng.randint(2, 5))]
            scores = {d: float(rng.choice([1, 2, 2])) for d in docs}
            labels = {d: rng.choice([-1, 0, 1, 2, 3]) for d in docs if rng.random() < 0.7}
            labels["zz"] = 1
            opts = rng.choice([{}, {"depth": rng.randint(1, len(docs))}, {"judged_only": True}])
            bounds = rre.score_run({"q": labels}, {"q": scores}, self.MEASURES, ties=True, **opts)["ties"]["measures"]
            tied = [list(g) for _, g in itertools.groupby(sorted(docs, key=scores.get, reverse=True), key=scores.get)]
            values = [rre.score_run({"q": labels}, {"q": [d for part in combo for d in part]}, self.MEASURES,
                                    # one query's means: GMAP's floored as its bounds are
                                    **opts)["measures"]
                      for combo in itertools.product(*map(itertools.permutations, tied))]
            for name in self.MEASURES:
                with self.subTest(trial=trial, measure=name):
                    self.assertAlmostEqual(bounds[name]["low"], min(v[name] for v in values), delta=1e-12)
                    self.assertAlmostEqual(bounds[name]["high"], max(v[name] for v in values), delta=1e-12)

    def test_what_no_order_bounds_is_said(self):
        tied = self.write("t.json", {"qrels": {"q1": ["d1"], "q2": ["d3"]},
                                     "runs": {"q1": {"d9": 1.0, "d1": 0.5, "d2": 0.5}, "q2": {"d3": 0.7}}})
        status, out, err = cli(tied, "-m", "infAP,SetP,RR", "--ties", "--depth", "2", "--judged-only",
                               "--format", "table")
        self.assertEqual(status, 0, err)
        self.assertIn("--ties does not bound infAP", err)
        self.assertIn("--ties does not bound SetP", err)
        self.assertNotIn("bound RR", err)
        qrels = rre.read_qrels(str(FIXTURE))
        result = rre.score_run(qrels, {"q1": {"d1": 1.0, "d2": 1.0}, "q2": {}, "q3": {}}, "infAP", ties=True)
        self.assertEqual(result["ties"]["measures"]["infAP"], {"low": None, "high": None})
        # no two items scored alike: one order only, and every measure is bounded by its mean
        evidence = self.write("e.json", {"q1": ["d1", "d2"], "q2": ["d3"], "q3": ["d4"]})
        status, out, err = cli(FIXTURE, "-m", "infAP,SetP,EvidenceRecall@2", "--evidence", evidence, "--ties",
                               "--depth", "2", "--judged-only")
        self.assertEqual((status, err), (0, ""))
        result = json.loads(out)
        self.assertEqual(result["ties"]["measures"], {name: {"low": mean, "high": mean}
                                                      for name, mean in result["measures"].items()})
        result = rre.score_run(qrels, {"q1": {"d1": 1.0, "d2": 0.5}, "q2": {}, "q3": {}}, "R(tokens=9)@2", ties=True,
                               lengths={"d1": 5, "d2": 5})
        self.assertEqual(result["ties"], {"measures": {"R(tokens=9)@2": {"low": 0.5 / 3, "high": 0.5 / 3}},
                                          # a budget is bounded too, when nothing is tied
                                          "queries": []})

    def test_tie_bounds_say_not_bounded_only_when_something_is(self):
        result = rre.score_run({"q1": ["d1"]}, {"q1": {"d1": 1.0, "d2": 1.0}}, "RR", ties=True)
        self.assertEqual(result["ties"], {"measures": {"RR": {"low": 0.5, "high": 1.0}}, "queries": ["q1"]})


class UnjudgedBoundsTest(TempDirTestCase):
    """Section 21: how much the unjudged documents could matter."""

    def test_the_worked_example(self):
        fixture = self.write("f.json", EXPLAIN_EXAMPLE)
        status, out, err = cli(fixture, "-m", "R@3,P@3,nDCG@3", "--unjudged-bounds")
        block = json.loads(out)["unjudged"]
        self.assertEqual(block, {"measures": {"R@3": {"judged": 0.25, "if_relevant": 2 / 3},
                                              "P@3": {"judged": 1 / 6, "if_relevant": 2 / 3}},
                                 "not_bounded": {"nDCG@3": "a relevant label for an unjudged "
                                                           "document can lower it"}})
        self.assertIn("note: if every unjudged document were relevant: R@3 0.2500 -> 0.6667, P@3 0.1667 -> 0.6667", err)
        self.assertEqual(rre.score_run(EXPLAIN_EXAMPLE["qrels"], EXPLAIN_EXAMPLE["runs"], "R@3,P@3,nDCG@3",
                                       unjudged_bounds=True)["unjudged"], block)

    def test_a_comparison_gives_both_sides_and_marks_the_changed_queries(self):
        qrels, run = self.write("q.json", EXPLAIN_EXAMPLE["qrels"]), self.write("r.json", EXPLAIN_EXAMPLE["runs"])
        base = self.write("b.json", {"q1": ["d1", "d2", "d4"], "q2": ["d5"]})
        status, out, err = cli("--qrels", qrels, "--run", run, "--baseline", base, "-m", "R@3", "--unjudged-bounds")
        block = json.loads(out)["unjudged"]
        self.assertEqual((block["baseline"], block["marked"]), ({"R@3": {"judged": 1.0, "if_relevant": 1.0}},
                                                                {"R@3": {"changed": 2, "queries": ["q2", "q1"]}}))
        self.assertIn("unjudged: 2 of 2 regressed or lost queries of R@3 have unjudged documents in the candidate's "
                      "top k ('q2', 'q1'): label them before calling it a regression", err)
        markdown = cli("--qrels", qrels, "--run", run, "--baseline", base, "-m", "R@3", "--unjudged-bounds",
                       "--format", "markdown")[1]
        self.assertIn("unjudged: 2 of 2 regressed or lost queries", markdown)

    def test_every_report_marks_the_changed_queries_with_unjudged_documents(self):
        qrels = self.write("q.json", {"q1": {"a": 1, "b": 1, "x": 0}, "q2": ["c"], "q3": ["e"]})
        base = self.write("b.json", {"q1": ["a", "b"], "q2": ["c"], "q3": ["e"]})
        # q1 regressed, all judged
        run = self.write("r.json", {"q1": ["x", "a"], "q2": ["u", "v"], "q3": ["e"]})
        args = ("--qrels", qrels, "--run", run, "--baseline", base, "-m", "R@2,nDCG@2", "--unjudged-bounds")
        table = cli(*args, "--format", "table")[1]
        self.assertIn("lost (a hit before, nothing relevant now) by R@2: q2; unjudged documents in the candidate's "
                      "top k: q2\n", table)
        rows = [line.split() for line in table.splitlines() if line.startswith("  R@2 ") or line.startswith("  nDCG@2 ")]
        self.assertEqual([(row[1], row[-1]) for row in rows],
                         [("q2", "unjudged"), ("q1", "-0.5000"), ("q2", "-1.0000"), ("q1", "-0.6131")])
        markdown = cli(*args, "--format", "markdown")[1]
        self.assertIn("| measure | query | baseline | candidate | delta | labels |", markdown)
        self.assertIn("| R@2 | q2 | 1.0000 | 0.0000 | -1.0000 | unjudged |", markdown)
        self.assertIn("| R@2 | q1 | 1.0000 | 0.5000 | -0.5000 |  |", markdown)
        self.assertIn("'q2'; unjudged documents in the candidate's top k: 'q2'", markdown)
        csv_rows = list(csv.DictReader(io.StringIO(cli(*args, "--format", "csv")[1])))
        self.assertEqual([row["R@2 unjudged"] for row in csv_rows], ["0", "1", "0"])
        self.assertNotIn("nDCG@2 unjudged", csv_rows[0])  # nDCG is not bounded, and so not marked
        several = list(csv.DictReader(io.StringIO(cli(*args, "--run", base, "--format", "csv")[1])))
        self.assertEqual([(row["R@2 %s unjudged" % run], row["R@2 %s unjudged" % base]) for row in several],
                         [("0", "0"), ("1", "0"), ("0", "0")])
        plain = cli(*args[:-1], "--format", "table")[1]  # without the option, no mark
        self.assertNotIn("unjudged", plain)

    def test_random_rankings_agree_with_labels_filled_in(self):
        """If relevant = the same measure once each unjudged document where it looks is labeled 1."""
        rng = random.Random(21)
        docs = ["d%d" % i for i in range(10)]
        for case in range(10):
            qrels = {q: {d: rng.choice((0, 1, -1)) for d in rng.sample(docs, 3)} for q in ("q%d" % i for i in range(5))}
            run = {q: rng.sample(docs, rng.randint(0, 7)) for q in qrels}
            depth = rng.choice((None, 3))
            names = ["R@2", "P@3", "Success@1", "RR@4", "RR", "SetP", "SetR", "SetF"]
            block = rre.score_run(qrels, run, names, unjudged_bounds=True, no_relevant="zero", depth=depth)["unjudged"]
            for name in names:
                k = int(name.split("@")[1]) if "@" in name else None
                filled = {q: dict(labels, **{d: 1 for d in run[q][:depth][:k] if labels.get(d, -1) < 0})
                          for q, labels in qrels.items()}
                expected = rre.score_run(filled, run, name, no_relevant="zero", depth=depth)["measures"][name]
                with self.subTest(case=case, measure=name):
                    self.assertAlmostEqual(block["measures"][name]["if_relevant"], expected, places=12)


    def test_every_reason_given_for_an_unbounded_measure_is_true(self):
        """'Can lower it': a relevant label for the one unjudged ranked document lowers each such measure."""
        qrels, run = {"q1": {"a": 1, "n": 0}}, {"q1": ["a", "n", "u"]}
        names = ["nDCG", "AP", "Rprec", "Bpref", "infAP", "IPrec@1.0"]
        loose = rre.score_run(qrels, run, names, unjudged_bounds=True)["unjudged"]["not_bounded"]
        self.assertEqual(loose, dict.fromkeys(names, "a relevant label for an unjudged "
                                                     "document can lower it"))
        before = rre.score_run(qrels, run, names)["measures"]
        after = rre.score_run({"q1": dict(qrels["q1"], u=1)}, run, names)["measures"]
        for name in names:
            with self.subTest(measure=name):
                self.assertLess(after[name], before[name])


class StatisticsTest(unittest.TestCase):
    def test_exact_p_matches_full_enumeration(self):
        rng = random.Random(7)
        for n in (1, 2, 5, 9, 12):
            diffs = [rng.choice([-1.0, -0.5, 0.0, 1 / 3, 0.5, 1.0]) for _ in range(n)]
            with self.subTest(diffs=diffs):
                self.assertAlmostEqual(rre.sign_flip_p(diffs), brute_force_p(diffs), places=12)

    def test_zero_differences_do_not_count(self):
        # [0.5, 0, 0, 0.5] behaves as [0.5, 0.5]: 2 of 4 assignments reach |1.0|
        self.assertEqual(rre.sign_flip_p([0.5, 0.0, 0.0, 0.5]), 0.5)

    def test_edges_give_p_one(self):
        for diffs in ([], [0.0] * 5, [0.25], [1.0, -1.0]):
            with self.subTest(diffs=diffs):
                self.assertEqual(rre.sign_flip_p(diffs), 1.0)

    def test_sampled_p_is_repeatable_and_close_to_exact(self):
        rng = random.Random(3)
        diffs = [rng.choice([-0.5, -0.25, 0.25, 0.5, 1.0]) for _ in range(18)]  # > EXACT_LIMIT
        sums = [0.0]
        for d in diffs:  # exact by doubling, 2**18 sums
            sums = [x + d for x in sums] + [x - d for x in sums]
        exact = sum(1 for x in sums if abs(x) >= abs(sum(diffs)) - 1e-9) / len(sums)
        first = rre.sign_flip_p(diffs, 20000, random.Random(5))
        self.assertEqual(first, rre.sign_flip_p(diffs, 20000, random.Random(5)))
        self.assertAlmostEqual(first, exact, delta=0.01)

    def test_holm(self):
        self.assertEqual(rre.holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
        self.assertEqual(rre.holm([0.5, 0.9]), [1.0, 1.0])
        self.assertEqual(rre.holm([]), [])

    def test_bootstrap_interval(self):
        values = [0.0, 1.0] * 20
        low, high = rre.bootstrap_intervals([values], 1)[0]
        self.assertTrue(low < 0.5 < high, (low, high))
        self.assertEqual(rre.bootstrap_intervals([values], 1), [[low, high]])
        self.assertEqual(rre.bootstrap_intervals([[0.2] * 9]), [[0.2, 0.2]])


class StatisticsGoldenTest(unittest.TestCase):
    """Golden p-values and intervals for fixed seeds, Holm below 1, gates at equality."""
    QRELS = {"q%d" % i: ["d%d" % i] for i in range(20)}
    BASE = {"q%d" % i: ["f%d" % j for j in range(i % 4)] + ["d%d" % i] for i in range(20)}
    CAND = {"q%d" % i: ["f%d" % j for j in range(i * 7 % 5)] + ["d%d" % i] for i in range(20)}

    def test_golden_p_values_and_intervals(self):
        qrels, base = self.QRELS, {q: ["x"] + ranking[-1:] for q, ranking in self.BASE.items()}
        cand = {"q%d" % i: ["d%d" % i] if i % 3 else ["x", "y", "d%d" % i] for i in range(20)}
        result = rre.compare_runs(qrels, base, cand, ["RR", "R@1"], seed=7, ci=True)
        rr, r1 = result["comparison"]["RR"], result["comparison"]["R@1"]
        # 13 queries 0 -> 1, enumerated: both all-same signs
        self.assertEqual(r1["p_value"], 2 / 2 ** 13)
        # 20 changed: sampled, (hits + 1) / (draws + 1)
        self.assertEqual(rr["p_value"], 34 / 10001)
        self.assertEqual(rre.compare_runs(qrels, base, cand, "RR", seed=7, permutations=500)["comparison"]["RR"]
                         ["p_value"], 3 / 501)
        self.assertEqual((rr["ci95"], r1["ci95"]), ([0.13333333333333333, 0.4], [0.45, 0.85]))
        for seed, delta_ci, mean_ci in ((0, [-0.23333333333333334, 0.1075], [0.3441666666666666, 0.5891666666666666]),
                                        (7, [-0.25166666666666665, 0.11083333333333334],
                                         [0.3358333333333333, 0.5900000000000001])):
            with self.subTest(seed=seed):
                result = rre.compare_runs(self.QRELS, self.BASE, self.CAND, "RR", seed=seed, ci=True)
                # 12 changed: exact
                self.assertEqual(result["comparison"]["RR"]["p_value"], 0.503021240234375)
                self.assertEqual((result["comparison"]["RR"]["ci95"], result["ci95"]["RR"]), (delta_ci, mean_ci))
                self.assertEqual(rre.score_run(self.QRELS, self.CAND, "RR", seed=seed, ci=True)["ci95"]["RR"], mean_ci)

    def test_one_sampled_draw_counts(self):
        balanced = [1.0, -1.0] * 9  # every draw reaches |sum| = 0: p = (1 + 1) / (1 + 1)
        self.assertEqual(rre.sign_flip_p(balanced, 1, random.Random(0)), 1.0)
        self.assertEqual(rre.sign_flip_p(balanced, rre.FLIP_ROUND + 1, random.Random(0)), 1.0)

    def test_holm_below_one(self):
        self.assertEqual(rre.holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
        self.assertEqual(rre.holm([0.2, 0.5]), [0.4, 0.5])
        self.assertEqual(rre.holm([0.6, 0.6]), [1.0, 1.0])

    def test_gates_pass_at_equality_and_fail_past_it(self):
        qrels, base, cand = {"q1": ["d1"], "q2": ["d2"]}, {"q1": ["d1"], "q2": ["d2"]}, {"q1": ["x", "d1"], "q2": ["d2"]}
        groups = {"g": ["q1"]}
        for gate, drop in (("max_mean_drop", 0.25), ("max_query_drop", 0.5), ("max_group_drop", 0.5)):
            for limit, breached in ((drop, False), (drop - 1e-9, True)):
                with self.subTest(gate=gate, limit=limit):
                    result = rre.compare_runs(qrels, base, cand, "RR", groups=groups, **{gate: limit})
                    self.assertEqual(bool(result["breaches"]), breached)

    def test_an_unchanged_zero_is_not_lost_and_groups_have_intervals_only_with_ci(self):
        qrels, base, cand = {"q1": ["d1"], "q2": ["d2"]}, {"q1": ["d1"], "q2": ["x"]}, {"q1": ["x"], "q2": ["y"]}
        result = rre.compare_runs(qrels, base, cand, "R@1", groups={"g": ["q1", "q2"]})
        self.assertEqual(result["comparison"]["R@1"]["lost"], ["q1"])
        self.assertNotIn("ci95", result["groups"]["g"])
        self.assertNotIn("ci95", result)
        self.assertIn("ci95", rre.compare_runs(qrels, base, cand, "R@1", groups={"g": ["q1"]}, ci=True)["groups"]["g"])


class StatisticsAtScaleTest(unittest.TestCase):
    def test_sampled_p_agrees_with_enumeration_within_sampling_error(self):
        rng = random.Random(11)
        # few distinct: ties
        cases = [[rng.choice([-1.0, -0.5, 0.5, 1.0, 1 / 3]) for _ in range(17)],
                 [rng.random() - 0.4 for _ in range(17)],                            # continuous
                 [0.25] * 9 + [-0.25] * 6 + [0.75, 1.0]]                             # equal blocks
        for diffs in cases:
            with self.subTest(diffs=diffs[:4]):
                sums = [0.0]
                for d in diffs:
                    sums = [x + d for x in sums] + [x - d for x in sums]
                exact = sum(1 for x in sums if abs(x) >= abs(sum(diffs)) - 1e-9) / len(sums)
                sampled = rre.sign_flip_p(diffs, 20000, random.Random(2))
                error = math.sqrt(exact * (1 - exact) / 20000) + 1 / 20001
                self.assertLess(abs(sampled - exact), 4.5 * error, (sampled, exact))

    def test_the_fast_statistics_equal_the_reference(self):
        rng = random.Random(3)
        for trial in range(24):
            n = rng.choice([17, 40, 130, 300])
            diffs = [rng.choice([0.5, -0.5, 1.0, 0.0]) if trial % 3 else rng.random() - 0.5 for _ in range(n)]
            if trial == 5:
                # a run of more than 31 equal blocks, a value that rounds to 0
                diffs = [0.5] * 270 + [-1 / 3] * 9 + [1e-30]
            # 9000: more than one round of draws
            permutations = 9000 if trial < 2 else rng.choice([1, 99, 1000])
            columns = [diffs, [abs(d) for d in diffs]]
            fixed = [rre.fixed_point(column) for column in columns]
            blocks, reach = rre.flip_blocks([d for d in diffs if d])
            draws = [rng.getrandbits(8 * permutations).to_bytes(permutations, "little") for _ in blocks]
            self.assertEqual(rre.fast_flip_hits(blocks, draws, reach), rre.reference_flip_hits(blocks, draws, reach))
            self.assertEqual(rre.fast_bootstrap_sums(fixed, trial, 40), rre.reference_bootstrap_sums(fixed, trial, 40))
        # words drawn ahead, and left over
        for n, resamples in ((130, 1000), (rre.BOOTSTRAP_WORDS + 7, 16)):
            fixed = [rre.fixed_point([rng.random() - 0.5 for _ in range(n)])]
            self.assertEqual(rre.fast_bootstrap_sums(fixed, n, resamples), rre.reference_bootstrap_sums(fixed, n, resamples))

    def test_blocks_of_equal_values_count_every_draw(self):
        rng = random.Random(11)
        blocks = [[5] * 8] * 3 + [[1, 2, 3, 4, 5, 6, 7, 8]]
        draws = [bytes(rng.getrandbits(8) for _ in range(64)) for _ in blocks]
        # every threshold: one draw counted wrong shows at one of them
        for reach in range(0, 160, 2):
            with self.subTest(reach=reach):
                self.assertEqual(rre.fast_flip_hits(blocks, draws, reach), rre.reference_flip_hits(blocks, draws, reach))

    def test_the_bootstrap_draws_as_todays_method_did(self):
        column = [0.0, 0.0, 0.1, 0.25, 0.5, 0.5, 1.0, 1.0, 0.2, 0.7, 0.05, 0.9]
        fixed = rre.fixed_point(column)
        new = [s[0] / fixed[1] / len(column) for s in rre.bootstrap_sums([fixed], 1, 4000)]
        old = old_bootstrap_means(column, random.Random(1), 4000)
        for summary in (statistics_mean, statistics_sd):
            self.assertAlmostEqual(summary(new), summary(old), delta=0.01)
        self.assertAlmostEqual(sorted(new)[100], sorted(old)[100], delta=0.03)   # the 2.5% point
        self.assertAlmostEqual(sorted(new)[3899], sorted(old)[3899], delta=0.03)  # the 97.5% point
        counts = [0] * 5  # each index equally likely, with replacement
        for picks in rre.resample_picks(5, random.Random(2), 2000):
            for i in picks:
                counts[i] += 1
        # chi-square, 4 degrees: p < 0.001
        self.assertLess(sum((c - 2000) ** 2 / 2000 for c in counts), 18.5)


class ComparisonTest(TempDirTestCase):
    """Candidate vs baseline: q1 falls from RR 1 to 1/2, q2 rises from 1/2 to 1, q3 is lost."""

    def compare(self, *args, base=None, cand=None):
        b = self.write("base.json", base or fixture(BASE_RUNS))
        c = self.write("cand.json", cand or fixture(CAND_RUNS))
        return cli(c, "--baseline", b, *args)

    def test_json_report(self):
        status, out, err = self.compare("-m", "R@3,RR")
        self.assertEqual(status, 0, err)
        rr = json.loads(out)["comparison"]["RR"]
        self.assertEqual((rr["baseline"], rr["candidate"]), (2.5 / 3, 1.5 / 3))
        self.assertAlmostEqual(rr["delta"], -1 / 3, places=15)
        self.assertEqual(rr["p_value"], 0.75)  # |sum| of (-0.5, +0.5, -1) is 1 for 6 of 8 signs
        self.assertEqual(rr["improved"], {"q2": 0.5})
        self.assertEqual(list(rr["regressed"].items()), [("q3", -1.0), ("q1", -0.5)])
        self.assertEqual(rr["lost"], ["q3"])
        self.assertEqual(len(rr["ci95"]), 2)
        self.assertLessEqual(rr["ci95"][0], rr["delta"])
        self.assertEqual(json.loads(out)["comparison"]["R@3"]["p_holm"], 1.0)
        # "lost" only where 0 means nothing found
        ap = json.loads(self.compare("-m", "AP,nDCG@3")[1])["comparison"]
        self.assertEqual([name for name, row in ap.items() if "lost" in row], [])

    def test_identical_runs(self):
        status, out, _ = self.compare("-m", "AP,nDCG@3", cand=fixture(BASE_RUNS))
        for row in json.loads(out)["comparison"].values():
            self.assertEqual((row["delta"], row["p_value"], row["improved"], row["regressed"]),
                             (0.0, 1.0, {}, {}))
            self.assertEqual(row["ci95"], [0.0, 0.0])

    def test_gates_exit_1_exactly_when_breached(self):
        cases = [  # (gate args, expected status); RR's mean drops by 1/3, q3 drops by 1
            ([], 0), (["--max-mean-drop", "0.34"], 0), (["--max-mean-drop", "0.33"], 1),
            (["--max-query-drop", "1"], 0), (["--max-query-drop", "0.99"], 1),
            (["--max-mean-drop", "1", "--max-query-drop", "1"], 0)]
        for gates, expected in cases:
            with self.subTest(gates=gates):
                status, out, err = self.compare("-m", "RR", *gates)
                self.assertEqual(status, expected, err)
                self.assertEqual(bool(json.loads(out)["breaches"]), bool(expected))
                self.assertEqual("gate failed" in err, bool(expected))

    def test_seed_zero_is_the_default_and_the_table_shows_each_mean_interval(self):
        status, out, err = self.compare("-m", "RR,NumRet", "--ci", "--seed", "0")
        self.assertEqual((status, out), self.compare("-m", "RR,NumRet", "--ci")[:2], err)
        c = self.write("cand.json", fixture(CAND_RUNS))
        table = cli(c, "-m", "RR,NumRet", "--ci", "--format", "table")[1]
        interval = json.loads(cli(c, "-m", "RR,NumRet", "--ci")[1])["ci95"]
        self.assertEqual(list(interval), ["RR"])  # a count has no mean to bound
        self.assertRegex(table, r"\n95%% CI +\[%.4f, %.4f\] +\n" % tuple(interval["RR"]))

    def test_mean_breach_is_named_as_the_mean(self):
        status, out, err = self.compare("-m", "RR", "--max-mean-drop", "0.1")
        self.assertEqual(json.loads(out)["breaches"][0]["query"], None)
        self.assertIn("gate failed: RR mean: 0.8333 -> 0.5000 (drop 0.3333 > --max-mean-drop 0.1)", err)

    def test_breach_names_measure_query_before_and_after(self):
        status, out, err = self.compare("-m", "RR", "--max-query-drop", "0.6")
        self.assertEqual(json.loads(out)["breaches"], [
            {"measure": "RR", "query": "q3", "baseline": 1.0, "candidate": 0.0, "drop": 1.0,
             "gate": "--max-query-drop", "limit": 0.6}])
        self.assertIn("gate failed: RR query 'q3': 1.0000 -> 0.0000 (drop 1.0000 > "
                      "--max-query-drop 0.6)",
                      err)

    def test_relabelled_baseline_is_refused(self):
        relabelled = fixture(BASE_RUNS, {"q1": {"d1": 1, "d2": 1, "d5": 0}, "q2": ["d3", "d8"], "q3": ["d4"]})
        b, c = self.write("base.json", relabelled), self.write("cand.json", fixture(CAND_RUNS))
        fast, reference = both_paths(c, "--baseline", b)
        self.assertEqual(fast, reference)
        status, out, err = fast
        self.assertEqual((status, out), (2, ""))
        self.assertIn("base.json: qrels: the baseline's labels differ from the candidate's (%s) "
                      "on 1 query ('q2')" % c,
                      err)

    def test_trec_baseline_with_separate_files(self):
        q = self.write("q.txt", "q1 0 d1 1\nq1 0 d2 1\nq2 0 d3 1\n")
        cand = self.write("c.txt", "q1 Q0 d9 1 3 x\nq1 Q0 d2 2 2 x\nq2 Q0 d3 1 1 x\n")
        base = self.write("b.txt", "q1 Q0 d1 1 3 x\nq1 Q0 d2 2 2 x\nq2 Q0 d9 1 1 x\n")
        status, out, _ = cli("--qrels", q, "--run", cand, "--baseline", base, "-m", "Success@1")
        row = json.loads(out)["comparison"]["Success@1"]
        self.assertEqual((row["improved"], row["regressed"], row["lost"]), ({"q2": 1.0}, {"q1": -1.0}, ["q1"]))

    def test_different_query_sets_are_refused(self):
        q = self.write("q.txt", "q1 0 d1 1\nq2 0 d3 1\n")
        cand = self.write("c.txt", "q1 Q0 d1 1 3 x\nq2 Q0 d3 1 1 x\n")
        base = self.write("b.txt", "q1 Q0 d1 1 3 x\n")
        status, out, err = cli("--qrels", q, "--run", cand, "--baseline", base, "--missing-run", "skip")
        self.assertEqual((status, out), (2, ""))
        self.assertIn("evaluated on different queries ('q2')", err)

    def test_table_report(self):
        status, out, err = self.compare("-m", "R@3,RR", "--format", "table", "--max-query-drop", "0.5")
        self.assertEqual(status, 1)
        for fragment in ("measure  baseline  candidate    delta     95% CI of "
                         "delta       p  p (Holm)",
                         "RR         0.8333     0.5000  -0.3333", "gate breaches:",
                         "  RR query 'q3': 1.0000 -> 0.0000 (drop 1.0000 > --max-query-drop 0.5)",
                         "lost (a hit before, nothing relevant now) by R@3: q3",
                         "worst regressed queries:", "  RR   q1  1.0000 ->  0.5000  -0.5000",
                         "per-query deltas of RR:", "  unchanged         0 \n",
                         "  <= -0.5           2 " + "#" * 26,
                         "label coverage (Judged@3): baseline 0.4444, candidate 0.3333"):
            self.assertIn(fragment, out)

    def test_coverage_warning_only_when_the_candidate_is_less_judged(self):
        status, out, err = self.compare("-m", "R@3")
        self.assertIn("warning: the labels judge 33% of the candidate's documents within 3 against 44%", err)
        self.assertEqual(len(json.loads(out)["warnings"]), 1)
        err = self.compare("-m", "R@3", base=fixture(CAND_RUNS), cand=fixture(BASE_RUNS))[2]
        self.assertNotIn("warning", err)

    def test_seed_and_permutations(self):
        # 40 queries, 30 of them change (> EXACT_LIMIT), so p is sampled: (hits + 1) / (500 + 1)
        qrels = {"q%d" % i: ["a"] for i in range(40)}
        base = {"q%d" % i: ["b", "a"] if i % 4 == 0 else ["a"] for i in range(40)}
        cand = {"q%d" % i: ["b", "a"] if i % 2 else ["a"] for i in range(40)}
        args = ("-m", "RR", "--permutations", "500")
        p = [json.loads(self.compare(*args, "--seed", seed, base=fixture(base, qrels),
                                     cand=fixture(cand, qrels))[1])["comparison"]["RR"]["p_value"]
             for seed in ("1", "1", "2")]
        self.assertEqual(p[0], p[1])
        self.assertNotEqual(p[0], p[2])
        # exactly: |sum| >= 5 when at most 10 or at least 20 of the 30 signs are +
        exact = sum(math.comb(30, b) for b in range(31) if abs(2 * b - 30) >= 10) / 2 ** 30
        for value in p:
            self.assertAlmostEqual(value * 501, round(value * 501), places=9)
            self.assertAlmostEqual(value, exact, delta=0.04)  # 4 standard errors of 500 draws

    def test_measure_and_comparison_edges(self):
        half = rre.score_run({"q1": {"d1": 1}, "q2": {"d2": 1, "d3": 1}}, {"q1": ["d1"], "q2": ["x", "d3"]},
                             "nDCG(gains={1:0.5})")
        # an ideal sum below 1
        self.assertEqual(half["per_query"]["q1"], {"nDCG(gains={1:0.5})": 1.0})
        self.assertEqual(rre.score_run({"q1": {"d1": 1}}, {"q1": ["d1"]}, "nDCG(gains={1:0})")["measures"],
                         {"nDCG(gains={1:0})": 0.0})  # no gain to reach: 0, as trec_eval
        result = rre.compare_runs({"q%d" % i: ["d"] for i in range(4)}, {"q%d" % i: ["x", "d"] for i in range(4)},
                                  {"q0": ["d"], "q1": ["x", "d"], "q2": ["x", "y", "d"], "q3": ["d"]}, "RR",
                                  groups={"five": ["q0", "q1", "q2", "q3"]})
        self.assertEqual(result["comparison"]["RR"]["improved"], {"q0": 0.5, "q3": 0.5})
        self.assertEqual(result["comparison"]["RR"]["regressed"], {"q2": 1 / 3 - 1 / 2})
        self.assertTrue(result["groups"]["five"]["small"])
        five = rre.score_run({"q%d" % i: ["d"] for i in range(5)}, {"q%d" % i: ["d"] for i in range(5)}, "RR",
                             groups={"g": ["q%d" % i for i in range(5)]})
        self.assertFalse(five["groups"]["g"]["small"])  # SMALL_GROUP queries are enough
        for limit, accepted in ((0, True), (float("inf"), False), (-0.0, True)):
            with self.subTest(limit=limit):
                call = functools.partial(rre.compare_runs, {"q1": ["d1"]}, {"q1": ["d1"]}, {"q1": ["d1"]}, max_mean_drop=limit)
                if accepted:
                    self.assertEqual(call()["breaches"], [])
                else:
                    self.assertRaisesRegex(rre.EvalError, "max_mean_drop must be a number >= 0", call)


class ReplicateTest(ReplicateFilesTestCase):
    """CLI_CONTRACT section 19: replicates of the baseline, the noise they show, interval gates."""

    def test_the_contracts_worked_example(self):
        specs = rre.parse_measures(["nDCG@10"])
        def result(value):
            per_query = {"a": {"nDCG@10": value}, "b": {"nDCG@10": value}}
            return {"per_query": per_query, "measures": rre.aggregated(per_query, specs)}
        baseline = result(0.62092)
        noise, unstable = rre.replicate_noise(baseline, [result(0.59092)], specs)
        self.assertAlmostEqual(noise["nDCG@10"], 0.03, places=12)
        self.assertEqual(unstable, {"nDCG@10": ["a", "b"]})
        gates = rre.Gates({"max_mean_drop": {"nDCG@10": 0.01}}, noise=noise, unstable=unstable, replicates=1)
        self.assertEqual(rre.compare(baseline, result(0.585), specs, rre.make_plan(rre.Config()), gates=gates)["breaches"], [])
        breach, = rre.compare(baseline, result(0.55), specs, rre.make_plan(rre.Config()), gates=gates)["breaches"]
        self.assertEqual((breach.rule["noise"], breach.rule["replicates"]), (noise["nDCG@10"], 1))
        self.assertEqual(rre.breach_text(breach),
                         "nDCG@10 mean: 0.6209 -> 0.5500 (drop 0.0709 > --max-mean-drop 0.01 + "
                         "noise 0.0300 among the baseline and 1 replicate)")
        self.assertEqual(len(rre.compare(baseline, result(0.585), specs, rre.make_plan(rre.Config()), gates=gates._replace(noise=None))["breaches"]), 1)

    def test_noise_and_unstable_queries_in_json(self):
        status, out, err = self.compare("inside.json", *REPLICATES)
        self.assertEqual(status, 0, err)
        result = json.loads(out)
        self.assertAlmostEqual(result["noise"]["RR"], 1 / 6, places=15)
        self.assertEqual(result["unstable"], {"RR": ["q2", "q5"]})
        self.assertEqual([(r["run"], r["measures"]["RR"]) for r in result["replicates"]],
                         [("rep1.json", 1.0), ("rep2.json", 5 / 6)])
        self.assertEqual(result["replicates"][0]["skipped"], {"missing_run": [], "unlabeled": [], "no_relevant": []})
        self.assertIn("note: noise among the baseline and 2 replicates (largest minus smallest mean): RR 0.1667", err)
        self.assertIn("note: unstable queries (their values differ among the baseline and 2 replicates; "
                      "--max-query-drop leaves them out): RR 2 ('q2', 'q5')", err)
        plain = json.loads(self.compare("inside.json")[1])
        for key in ("noise", "unstable", "replicates"):
            self.assertNotIn(key, plain)
        # replicates change gates, not numbers
        self.assertEqual(plain["comparison"], result["comparison"])

    def test_a_candidate_inside_the_noise_passes_and_one_beyond_it_fails(self):
        cases = [("inside.json", [], 1), ("inside.json", REPLICATES, 0), ("beyond.json", REPLICATES, 1),
                 ("beyond.json", REPLICATES[:2], 1)]  # one replicate: noise 1/12
        for run, extra, expected in cases:
            with self.subTest(run=run, extra=extra):
                status, out, err = self.compare(run, "--max-mean-drop", "0.05", *extra)
                self.assertEqual(status, expected, err)
                self.assertEqual(len(json.loads(out)["breaches"]), expected)
        err = self.compare("beyond.json", "--max-mean-drop", "0.05", *REPLICATES)[2]
        self.assertIn("gate failed: RR mean: 0.9167 -> 0.6944 (drop 0.2222 > --max-mean-drop 0.05 + noise 0.1667 "
                      "among the baseline and 2 replicates)", err)

    def test_the_mean_gate_allows_exactly_its_limit_plus_the_noise(self):
        for limit, expected in ((repr(1 / 18), 0), (repr(1 / 18 - 1e-9), 1)):
            with self.subTest(limit=limit):
                self.assertEqual(self.compare("beyond.json", "--max-mean-drop", limit, *REPLICATES)[0], expected)

    def test_unstable_queries_are_exempt_from_the_per_query_gate(self):
        status, out, err = self.compare("inside.json", "--max-query-drop", "0.5")
        self.assertEqual((status, [b["query"] for b in json.loads(out)["breaches"]]), (1, ["q5"]), err)
        status, out, err = self.compare("inside.json", "--max-query-drop", "0.5", *REPLICATES)
        self.assertEqual((status, json.loads(out)["breaches"]), (0, []), err)
        status, out, err = self.compare("beyond.json", "--max-query-drop", "0.5", *REPLICATES)
        self.assertEqual([(b["query"], b["replicates"]) for b in json.loads(out)["breaches"]], [("q0", 2), ("q1", 2)])
        self.assertIn("gate failed: RR query 'q0': 1.0000 -> 0.3333 (drop 0.6667 > --max-query-drop 0.5; the same "
                      "in the baseline and 2 replicates)", err)

    def test_every_format_shows_the_noise_and_the_unstable_queries(self):
        table = self.compare("inside.json", "--format", "table", *REPLICATES)[1]
        self.assertIn("measure  baseline  candidate    delta     95% CI of delta       p  p "
                      "(Holm)   noise  unstable",
                      table)
        self.assertRegex(table, r"\nRR .* 0\.1667  +2\n")
        self.assertIn("unstable (values differ among the baseline and its replicates) by RR: 'q2', 'q5'", table)
        self.assertRegex(table, r"RR +q5 +1\.0000 -> +0\.2500 +-0\.7500 +unstable\n")
        markdown = self.compare("inside.json", "--format", "markdown", *REPLICATES)[1]
        self.assertIn("| RR | 0.9167 | 0.7917 | -0.1250 | [-0.3750, +0.0000] | 1.0000 | 1.0000 | 0.1667 | 2 |", markdown)
        self.assertIn("- **unstable** by RR (values differ among the baseline and its replicates; not gated per "
                      "query): 'q2', 'q5'", markdown)
        self.assertIn("| RR | q5 | 1.0000 | 0.2500 | -0.7500 | unstable |", markdown)
        self.assertIn("- noise among the baseline and 2 replicates", markdown)
        rows = list(csv.DictReader(io.StringIO(self.compare("inside.json", "--format", "csv", *REPLICATES)[1])))
        self.assertEqual([(r["query"], r["RR unstable"]) for r in rows],
                         [("q0", "0"), ("q1", "0"), ("q2", "1"), ("q3", "0"), ("q4", "0"), ("q5", "1")])
        plain = self.compare("inside.json", "--format", "table")[1]
        self.assertNotIn("unstable", plain)
        self.assertNotIn("gate breaches", plain)
        steady = self.compare("beyond.json", "--format", "table", "-m", "R@3", "--replicate", "rep2.json")[1]
        self.assertIn("unstable (values differ among the baseline and its replicates) by RR: 'q5'", steady)
        # every R@3 is 1, in every run: nothing lost, nothing unstable
        self.assertNotIn("by R@3", steady)
        self.assertNotIn("Worst regressed", self.compare("base.json", "--format", "markdown", *REPLICATES)[1])
        self.assertNotIn("**unstable** by R@3",
                         self.compare("beyond.json", "--format", "markdown", "-m", "R@3", "--replicate", "rep2.json")[1])
        self.assertNotIn("RR unstable", self.compare("inside.json", "--format", "csv")[1])

    def test_long_lists_of_unstable_queries_are_cut_at_twenty(self):
        qrels = {"q%02d" % i: ["d"] for i in range(25)}
        runs = [self.write("%s.json" % name, {q: ["x"] * rank + ["d"] for q in qrels})
                for name, rank in (("b", 0), ("r", 1), ("c", 0))]
        args = ["--qrels", self.write("q25.json", qrels), "--run", runs[2], "--baseline", runs[0], "--replicate", runs[1],
                "-m", "RR"]
        expected = "%s and 5 more" % ", ".join("'q%02d'" % i for i in range(20))
        self.assertIn("by RR: " + expected, cli(*args, "--format", "table")[1])
        self.assertIn("not gated per query): " + expected, cli(*args, "--format", "markdown")[1])

    def test_worst_regressed_queries_come_largest_drop_first_and_one_query_fills_its_histogram(self):
        table = self.compare("inside.json", "--format", "table", "-m", "AP,R@1")[1]
        self.assertRegex(table, r"worst regressed queries:\n  RR +q5 .*-0\.7500\n  AP +q5 "
                                r".*-0\.7500\n  R@1 +q5 .*-1\.0000\n  shown, of the regressed "
                                r"queries: RR all 1, AP all 1, R@1 all 1\n")
        one = self.write("one.json", {"q0": ["d0"]})
        table = cli("--qrels", one, "--run", self.write("miss.json", {"q0": ["x"]}), "--baseline", one, "-m", "RR",
                    "--format", "table")[1]
        self.assertIn("  <= -0.5           1 " + "#" * 40 + "\n", table)

    def test_interval_gate_on_deltas_whose_interval_is_known(self):
        # against all ones: -1/2 each, q2 -3/4
        self.write("all-down.json", rr_run(2, 2, 4, 2, 2, 2))
        self.write("base-ones.json", rr_run(1, 1, 1, 1, 1, 1))
        # deltas -8/9 and 0: the interval reaches 0
        self.write("one-lost.json", rr_run(1, 1, 1, 1, 1, 9))
        def gate(run, base, limit):
            return cli("--qrels", "qrels.json", "--run", run, "--baseline", base, "-m", "RR",
                       "--max-mean-drop", limit, "--gate-on", "interval")
        status, out, err = gate("all-down.json", "base-ones.json", "0.5")
        interval = json.loads(out)["comparison"]["RR"]["ci95"]
        # no resample mean is above -1/2, and 1 in 3 draws no q2 at all
        self.assertEqual(interval[1], -0.5)
        self.assertEqual(status, 0, err)  # -0.5 is not below -0.5: equality passes
        status, out, err = gate("all-down.json", "base-ones.json", repr(0.5 - 1e-9))
        self.assertEqual(status, 1, err)
        breach, = json.loads(out)["breaches"]
        self.assertEqual((breach["gate_on"], breach["ci95"], breach["queries"]), ("interval", interval, 6))
        self.assertIn("(95%% CI of the change [%+.4f, -0.5000] lies below -(--max-mean-drop "
                      "0.499999999); drop 0.5417)"
                      % interval[0], err)
        # mean drop 0.148 > 0.1, but not surely
        status, out, err = gate("one-lost.json", "base-ones.json", "0.1")
        self.assertEqual((status, json.loads(out)["comparison"]["RR"]["ci95"][1]), (0, 0.0), err)
        self.assertEqual(cli("--qrels", "qrels.json", "--run", "one-lost.json", "--baseline", "base-ones.json",
                             "-m", "RR", "--max-mean-drop", "0.1")[0], 1)

    def test_the_interval_of_a_count_is_of_its_sum(self):
        self.write("base-ones.json", rr_run(1, 1, 1, 1, 1, 1))
        # 14 retrieved, 6 after: every query 1 fewer, q2 3
        self.write("more.json", rr_run(2, 2, 4, 2, 2, 2))
        for limit, expected in (("5", 1), ("6", 0)):  # the sum's interval ends at 6 x -1
            with self.subTest(limit=limit):
                status, out, err = cli("--qrels", "qrels.json", "--run", "base-ones.json", "--baseline", "more.json",
                                       "-m", "NumRet", "--max-mean-drop", limit, "--gate-on", "interval")
                self.assertEqual(status, expected, err)
        row = json.loads(out)["comparison"]["NumRet"]
        self.assertEqual((row["delta"], row["ci95"][1]), (-8, -6))  # printed as the gate reads it
        self.assertTrue(row["ci95"][0] <= row["delta"] and all(type(v) is int for v in row["ci95"]), row)
        table = cli("--qrels", "qrels.json", "--run", "base-ones.json", "--baseline", "more.json", "-m", "NumRet",
                    "--format", "table")[1]
        self.assertIn("-8.0000  [%+.4f, -6.0000]" % row["ci95"][0], table)

    def test_an_interval_gate_on_fewer_than_two_queries_fails(self):
        one = self.write("one.json", {"q0": ["d0"]})
        for args in (["-m", "RR"], ["-m", "RR", "--unlabeled", "skip"]):
            status, out, err = cli("--qrels", one, "--run", one, "--baseline", one, *args,
                                   "--max-mean-drop", "0.1", "--gate-on", "interval")
            self.assertEqual(status, 1, err)  # no change at all, and still no pass
        self.assertEqual(json.loads(out)["breaches"][0]["queries"], 1)
        self.assertIn("gate failed: RR mean: 1.0000 -> 1.0000 (--gate-on interval cannot decide on 1 query, and "
                      "fails: --max-mean-drop 0.1)", err)
        out = rre.compare_runs({"q0": ["d0"]}, {"q0": ["d0"]}, {"q0": ["d0"]}, "RR", max_mean_drop=0.1,
                               gate_on="interval")
        self.assertEqual([b["queries"] for b in out["breaches"]], [1])
        self.assertEqual(cli("--qrels", one, "--run", one, "--baseline", one, "-m", "RR", "--max-mean-drop", "0.1")[0], 0)

    def test_groups_are_gated_on_their_own_noise(self):
        self.write("g.json", {"steady": ["q0", "q1"], "shaky": ["q2", "q5"]})
        status, out, err = self.compare("beyond.json", "--groups", "g.json", "--max-group-drop", "0.1", *REPLICATES)
        groups = json.loads(out)["groups"]
        self.assertEqual((groups["steady"]["noise"], groups["shaky"]["noise"]), ({"RR": 0.0}, {"RR": 0.5}))
        one = json.loads(self.compare("beyond.json", "--groups", "g.json", "--replicate", "rep1.json")[1])["groups"]
        # the baseline's 3/4 against the replicate's 1
        self.assertEqual(one["shaky"]["noise"], {"RR": 0.25})
        for fmt, shaky in (("table", "  shaky   2 (few)  0.7500 (+0.0000) noise 0.5000"),
                           ("markdown", "| shaky | 2 (few) | 0.7500 (+0.0000) noise 0.5000 |")):
            report = self.compare("beyond.json", "--groups", "g.json", "--format", fmt, *REPLICATES)[1]
            self.assertIn(shaky, report.splitlines())
            self.assertNotIn(") noise", self.compare("beyond.json", "--groups", "g.json", "--format", fmt)[1])
        self.assertEqual([(b["group"], b["noise"]) for b in json.loads(out)["breaches"]], [("steady", 0.0)])
        self.assertIn("RR group 'steady' mean: 1.0000 -> 0.3333 (drop 0.6667 > --max-group-drop 0.1 + noise 0.0000 "
                      "among the baseline and 2 replicates)", err)
        # the shaky group at the replicates' low end
        self.write("shaky-down.json", rr_run(1, 1, 2, 1, 1, 2))
        self.assertEqual(self.compare("shaky-down.json", "--groups", "g.json", "--max-group-drop", "0.1", *REPLICATES)[0], 0)
        self.assertEqual(self.compare("shaky-down.json", "--groups", "g.json", "--max-group-drop", "0.1")[0], 1)
        status, out, err = self.compare("beyond.json", "--groups", "g.json", "--max-group-drop", "0.1",
                                        "--gate-on", "interval", *REPLICATES)
        self.assertEqual([(b["group"], b["gate_on"], b["queries"]) for b in json.loads(out)["breaches"]],
                         [("steady", "interval", 2)])  # both its queries drop by 2/3
        self.assertIn("RR group 'steady' mean: 1.0000 -> 0.3333 (95% CI of the change [-0.6667, -0.6667] lies below "
                      "-(--max-group-drop 0.1 + noise 0.0000 among the baseline and 2 replicates); drop 0.6667)", err)

    def test_several_runs_share_the_replicates(self):
        status, out, err = cli("--qrels", "qrels.json", "--run", "inside.json", "--run", "beyond.json",
                               "--baseline", "base.json", "-m", "RR", "--max-mean-drop", "0.05", *REPLICATES)
        runs = json.loads(out)["runs"]
        self.assertEqual((status, [len(r["breaches"]) for r in runs.values()]), (1, [0, 1]), err)
        self.assertEqual(runs["inside.json"]["noise"], runs["beyond.json"]["noise"])
        # the baseline's notes once, then each run's
        said = [line.split(" (")[0] for line in err.splitlines()]
        finer = (": warning: --max-mean-drop 0.05 on RR is finer than the set can see: its "
                 "smallest detectable change is ")
        self.assertEqual([line.rpartition(" ")[0] if finer in line else line for line in said],
                         ["rag_retrieval_eval: note: noise among the baseline and 2 replicates",
                          "rag_retrieval_eval: note: unstable queries",
                          "rag_retrieval_eval: inside.json" + finer[:-1],
                          "rag_retrieval_eval: beyond.json" + finer[:-1],
                          "rag_retrieval_eval: beyond.json: gate failed: RR mean: "
                          "0.9167 -> 0.6944"])
        table = cli("--qrels", "qrels.json", "--run", "inside.json", "--run", "beyond.json", "--baseline", "base.json",
                    "-m", "RR", "--format", "table", *REPLICATES)[1].splitlines()
        self.assertEqual([line.split()[-1] for line in table[1:4]], ["0.9167", "0.1667", "2"])
        self.assertTrue(table[2].startswith("noise (2 replicates)") and table[3].startswith("unstable queries"), table)
        rows = list(csv.DictReader(io.StringIO(cli("--qrels", "qrels.json", "--run", "inside.json", "--run",
                                                   "beyond.json", "--baseline", "base.json", "-m", "RR",
                                                   "--format", "csv", *REPLICATES)[1])))
        self.assertEqual([r["RR unstable"] for r in rows], ["0", "0", "1", "0", "0", "1"])
        self.assertEqual([r["RR baseline"] for r in rows], ["1.0", "1.0", "0.5", "1.0", "1.0", "1.0"])
        self.assertEqual(list(rows[0])[:4], ["query", "RR baseline", "RR unstable", "RR inside.json"])

    def test_the_library_takes_replicates_and_the_interval_gate(self):
        runs = {name: run for name, run in REPLICATE_RUNS.items()}
        out = rre.compare_runs(REPLICATE_QRELS, runs["base.json"], runs["inside.json"], "RR", max_mean_drop=0.05,
                               max_query_drop=0.5, replicates=[runs["rep1.json"], runs["rep2.json"]])
        self.assertEqual((out["breaches"], out["unstable"]), ([], {"RR": ["q2", "q5"]}))
        self.assertEqual([r["run"] for r in out["replicates"]], ["replicates[0]", "replicates[1]"])
        cli_out = json.loads(self.compare("inside.json", "--max-mean-drop", "0.05", "--max-query-drop", "0.5",
                                          *REPLICATES)[1])
        self.assertEqual({k: v for k, v in out.items() if k != "replicates"},
                         {k: v for k, v in without_inputs(cli_out).items() if k != "replicates"})
        several = rre.score_runs(REPLICATE_QRELS, {"b": rr_run(2, 2, 4, 2, 2, 2)}, "RR", baseline=runs["base.json"],
                                 replicates=(runs["rep1.json"],), max_mean_drop=0.05, gate_on="interval")
        self.assertEqual(several["runs"]["b"]["breaches"][0]["gate_on"], "interval")
        for options, message in (
                ({"replicates": runs["rep1.json"]}, "replicates must be a list of runs, not {"),
                ({"gate_on": "median"},
                 "gate_on must be one of mean, interval, noninferiority, retrieval, not 'median'"),
                ({"gate_on": "interval"},
                 "--gate-on interval needs --max-mean-drop or --max-group-drop"),
                ({"replicates": [{"q0": ["d0"]}]}, "replicates[0]: query sets differ"),
                ({"replicates": [{"q0": "d0"}]}, "replicates[0]")):
            with self.subTest(options=options), self.assertRaises(rre.EvalError) as caught:
                rre.compare_runs(REPLICATE_QRELS, runs["base.json"], runs["inside.json"], "RR", **options)
            self.assertIn(message, str(caught.exception))
        with self.assertRaisesRegex(rre.EvalError, "--replicate needs --baseline"):
            rre.score_runs(REPLICATE_QRELS, {"a": runs["inside.json"]}, "RR", replicates=[runs["rep1.json"]])

    def test_replicates_follow_the_baselines_policies_and_are_reported_like_it(self):
        self.write("short.json", {q: r for q, r in REPLICATE_RUNS["rep1.json"].items() if q != "q4"})
        status, out, err = self.compare("inside.json", "--replicate", "short.json", "--missing-run", "zero")
        result = json.loads(out)
        self.assertEqual((status, result["replicates"][0]["zeroed"]["missing_run"]), (0, ["q4"]), err)
        self.assertEqual(result["unstable"]["RR"], ["q2", "q4"])  # scored as empty there: 0, not 1
        self.assertIn("note: the replicate short.json has no ranking for 1 query ('q4'): scored as empty", err)
        self.write("extra.json", dict(REPLICATE_RUNS["rep1.json"], q9=["d9"]))
        status, out, err = self.compare("inside.json", "--replicate", "extra.json", "--unlabeled", "skip")
        self.assertEqual(json.loads(out)["replicates"][0]["skipped"]["unlabeled"], ["q9"])
        self.assertIn("note: the replicate extra.json skipped 1 query: 1 unlabeled ('q9')", err)
        self.write("rep.txt", "".join("%s Q0 %s %d %d r\n" % (q, d, i + 1, 10 - i) for q, docs in
                                      REPLICATE_RUNS["rep1.json"].items() for i, d in enumerate(docs)))
        fast, reference = both_paths("--qrels", "qrels.json", "--run", "inside.json", "--baseline", "base.json",
                                     "-m", "RR", "--replicate", "rep.txt", "--replicate", "rep2.json")
        self.assertEqual(fast, reference)
        self.assertEqual(json.loads(fast[1])["unstable"], {"RR": ["q2", "q5"]})

    def test_repeats_removed_from_a_replicate_are_reported_like_the_baselines(self):
        self.write("twice.json", dict(REPLICATE_RUNS["rep1.json"], q3=["d3", "d3"]))
        status, out, err = self.compare("inside.json", "--replicate", "twice.json", "--duplicates", "first")
        result = json.loads(out)
        self.assertEqual((result["replicates"][0]["deduplicated"], result["baseline_deduplicated"]), ({"q3": 1}, {}))
        plain = json.loads(self.compare("inside.json", "--replicate", "rep1.json")[1])
        self.assertNotIn("deduplicated", plain["replicates"][0])
        self.assertNotIn("baseline_deduplicated", plain)

    def test_the_plot_marks_unstable_queries(self):
        args = ["--qrels", "qrels.json", "--run", "inside.json", "--baseline", "base.json", "-m", "RR@10"]
        self.assertEqual(cli(*args, "--plot", "p.svg", *REPLICATES)[0], 0)
        root = parsed_svg(self.tmp / "p.svg")
        ticks = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("fill") == "#888"]
        self.assertEqual(len(ticks), 2)
        self.assertIn("a grey tick marks the 2 unstable among the baseline's replicates", " ".join(root.itertext()))
        cli(*args, "--plot", "plain.svg")
        self.assertNotIn('fill="#888"', (self.tmp / "plain.svg").read_text())


class ReplicateRejectionTest(TempDirTestCase):
    def test_rejections(self):
        os.chdir(self.tmp)
        self.addCleanup(os.chdir, ROOT)
        self.write("qrels.json", REPLICATE_QRELS)
        for name, run in REPLICATE_RUNS.items():
            self.write(name, run)
        self.write("short.json", {q: r for q, r in REPLICATE_RUNS["rep1.json"].items() if q != "q4"})
        self.write("relabeled.json", {"qrels": {"q0": ["d0"]}, "runs": REPLICATE_RUNS["rep1.json"]})
        self.write("bad.json", dict(REPLICATE_RUNS["rep1.json"], q0=[" "]))
        for args, fragments in REPLICATE_REJECTIONS:
            with self.subTest(args=args):
                rejected(self, *cli("--qrels", "qrels.json", "--run", "inside.json", "-m", "RR", *args,
                                    stdin=b"{}"), *fragments)


class PowerAndNoninferiorityTest(ReplicateFilesTestCase):
    """Section 23: --power, and --gate-on noninferiority."""

    def setUp(self):
        super().setUp()
        self.write("all-down.json", rr_run(2, 2, 4, 2, 2, 2))  # RR against base.json's
        # against base.json: -8/9 once, q2 +1/2
        self.write("one-lost.json", rr_run(1, 1, 1, 1, 1, 9))
        self.write("g.json", {"first": ["q0", "q1", "q2"], "last": ["q3", "q4", "q5"], "one": ["q0"]})

    def test_power_by_hand(self):
        base = json.loads(cli("--qrels", "qrels.json", "--run", "base.json", "-m", "RR")[1])["per_query"]
        down = {q: row["RR"] for q, row in json.loads(cli("--qrels", "qrels.json", "--run", "all-down.json",
                                                          "-m", "RR")[1])["per_query"].items()}
        diffs = [down[q] - base[q]["RR"] for q in down]
        mean = sum(diffs) / len(diffs)
        sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1))
        status, out, err = cli("--qrels", "qrels.json", "--run", "all-down.json", "--baseline", "base.json", "-m",
                               "RR", "--power", "--max-mean-drop", "0.05", "--groups", "g.json")
        block = json.loads(out)["power"]["RR"]
        self.assertEqual(block["n"], 6)
        self.assertAlmostEqual(block["sd"], sd, places=12)
        self.assertAlmostEqual(block["mde"], 2.8015852 * sd / math.sqrt(6), places=12)
        self.assertEqual(block["queries_for"], {"0.05": math.ceil((2.8015852 * sd / 0.05) ** 2)})
        self.assertIn("note: power (80%%, two-sided 5%%): RR detects a change of %.4f over 6 queries, sd %.4f "
                      "(--max-mean-drop 0.05 would need %d queries)" % (block["mde"], sd, block["queries_for"]["0.05"]),
                      err)
        self.assertIn("warning: --max-mean-drop 0.05 on RR is finer than the set can see: its "
                      "smallest detectable change is %.4f\n" % block["mde"], err)
        groups = json.loads(out)["groups"]
        self.assertEqual([groups[g]["power"]["RR"]["n"] for g in ("first", "last", "one")], [3, 3, 1])
        self.assertEqual(groups["one"]["power"]["RR"]["mde"], None)  # one query: nothing to say
        self.assertIn("note: power: group one RR: fewer than 2 queries, nothing to say", err)
        alone = json.loads(cli("--qrels", "qrels.json", "--run", "all-down.json", "-m", "RR", "--power")[1])
        values = list(down.values())
        spread = math.sqrt(sum((v - sum(values) / 6) ** 2 for v in values) / 5)
        self.assertEqual(alone["power"]["RR"]["paired"], False)
        # the bound
        self.assertAlmostEqual(alone["power"]["RR"]["sd"], math.sqrt(2) * spread, places=12)

    def test_a_gate_finer_than_the_set_can_see_is_said_without_power(self):
        args = ("--qrels", "qrels.json", "--run", "all-down.json", "--baseline", "base.json",
                "-m", "RR,NumRet")
        mde = json.loads(cli(*args, "--power")[1])["power"]["RR"]["mde"]
        said = ("warning: --max-mean-drop 0.05 on RR is finer than the set can see: its smallest "
                "detectable change is %.4f (--power says more)" % mde)
        status, out, err = cli(*args, "--max-mean-drop", "0.05")
        self.assertEqual(json.loads(out)["warnings"][0], said)
        self.assertEqual((status, err.count("finer than")), (1, 2), err)  # and NumRet's sum
        self.assertIn(said + "\n", err)
        markdown = cli(*args, "--max-mean-drop", "0.05", "--format", "markdown")[1]
        self.assertIn("- " + said, markdown)
        status, out, err = cli(*args, "--max-mean-drop", "0.05", "--power")  # said once: --power
        self.assertEqual((err.count("finer than"), json.loads(out)["warnings"]), (2, []))
        # at or above what it sees: nothing said
        for coarse in ("%.4f" % (mde + 0.0001), repr(mde)):
            status, out, err = cli(*args[:-1], "RR", "--max-mean-drop", coarse)
            self.assertEqual(("finer" in err, json.loads(out)["warnings"]), (False, []))
        several = cli("--qrels", "qrels.json", "--run", "all-down.json", "--run", "base.json",
                      "--baseline", "base.json", "-m", "RR", "--max-mean-drop", "0.05",
                      "--format", "markdown")[1]  # every report: several runs' too
        self.assertIn("- all-down.json: " + said, several)

    def test_power_of_a_zero_limit_and_of_a_count(self):
        """A limit of 0 no number of queries resolves; a count's gate reads its sum: mde = z * s * sqrt(n)."""
        lost = {"q0": ["x"], "q1": ["d1"], "q2": ["x", "d2"], "q3": [], "q4": ["d4"], "q5": ["y"]}
        self.write("lost.json", lost)  # NumRelRet 1 -> 0 on q0, q3, q5
        status, out, err = cli("--qrels", "qrels.json", "--run", "lost.json", "--baseline", "base.json", "-m",
                               "RR,NumRelRet", "--power", "--max-mean-drop", "0", "--groups", "g.json",
                               "--max-group-drop", "0.5")
        self.assertEqual(status, 1, err)  # the gate of 0 fails: RR dropped
        power = json.loads(out)["power"]
        # one query
        self.assertEqual(json.loads(out)["groups"]["one"]["power"]["RR"]["queries_for"], {"0.5": None})
        self.assertEqual(power["RR"]["queries_for"], {"0.0": None})
        self.assertIn("RR detects a change of %.4f over 6 queries, sd %.4f; "
                      "--max-mean-drop 0.0: a change of 0 cannot be resolved by any "
                      "number of queries\n" % (power["RR"]["mde"], power["RR"]["sd"]), err)
        base, down = ({q: row["NumRelRet"] for q, row in json.loads(cli("--qrels", "qrels.json", "--run", name, "-m",
                       "NumRelRet")[1])["per_query"].items()} for name in ("base.json", "lost.json"))
        sd = statistics.stdev([down[q] - base[q] for q in down])
        self.assertAlmostEqual(sd, math.sqrt(0.3), places=12)  # differences -1, 0, 0, -1, 0, -1
        count = power["NumRelRet"]
        self.assertEqual((count["of"], count["queries_for"]), ("sum", {"0.0": None}))
        self.assertAlmostEqual(count["mde"], 2.8015852 * sd * math.sqrt(6), places=12)
        self.assertIn("NumRelRet detects a change of %.4f in its sum over 6 "
                      "queries, sd %.4f; more queries make a sum's change larger, "
                      "not easier to see\n" % (count["mde"], sd), err)
        self.assertIn("group first NumRelRet detects", err)  # per group too, and nothing raised
        self.assertEqual(rre.compare_runs(REPLICATE_QRELS, REPLICATE_RUNS["base.json"], lost,
                                          ["RR", "NumRelRet"], power=True, max_mean_drop=0)["power"], power)

    def test_power_in_every_format_and_mode(self):
        args = ("--qrels", "qrels.json", "--run", "all-down.json", "--baseline", "base.json", "-m", "RR,R@1",
                "--power", "--max-mean-drop", "0.05")
        for fmt in ("table", "csv", "json"):
            self.assertIn("note: power (80%, two-sided 5%): R@1 detects", cli(*args, "--format", fmt)[2])
        self.assertIn("- power (80%, two-sided 5%): R@1 detects", cli(*args, "--format", "markdown")[1])
        several = cli(*args, "--run", "inside.json")
        self.assertEqual(sorted(json.loads(several[1])["runs"]["inside.json"]["power"]), ["R@1", "RR"])
        self.assertIn("inside.json: note: power (80%, two-sided 5%): RR", several[2])
        library = rre.compare_runs(REPLICATE_QRELS, REPLICATE_RUNS["base.json"], rr_run(2, 2, 4, 2, 2, 2),
                                   ["RR", "R@1"], power=True, max_mean_drop=0.05)
        self.assertEqual(library["power"], json.loads(cli(*args)[1])["power"])
        self.assertNotIn("power", json.loads(cli(*args[:-3])[1]))
        # Abstain scores one query: nothing to say of it, and then RR
        unanswered = self.write("n.txt", "q9\n")
        self.write("with-q9.json", dict(rr_run(2, 2, 4, 2, 2, 2), q9=[]))
        err = cli("--qrels", "qrels.json", "--run", "with-q9.json", "--no-answer", unanswered, "-m",
                  "Abstain,RR", "--power")[2]
        self.assertIn("note: power: Abstain: fewer than 2 queries, nothing to say\n", err)
        self.assertIn("note: power (80%, two-sided 5%): RR would detect", err)

    def test_noninferiority_passes_only_what_the_interval_shows(self):
        def gate(run, limit, *more):
            return self.compare(run, "--max-mean-drop", limit, "--gate-on", "noninferiority", *more)
        # no change at all: the interval is a point, at 0
        status, out, err = gate("base.json", "0.01")
        self.assertEqual(status, 0, err)
        status, out, err = gate("all-down.json", "0.45")  # [-0.5, -0.375]: not above -0.45
        low, high = json.loads(out)["comparison"]["RR"]["ci95"]
        self.assertEqual((status, low, high), (1, -0.5, -0.375), err)
        breach, = json.loads(out)["breaches"]
        self.assertEqual((breach["gate_on"], breach["queries"]), ("noninferiority", 6))
        self.assertIn("(95% CI of the change [-0.5000, -0.3750] does not lie above -(--max-mean-drop 0.45): not shown "
                      "to be no worse; drop 0.4583)", err)
        # the interval lies above -0.5: equality passes
        self.assertEqual(gate("all-down.json", "0.5")[0], 0)
        low = json.loads(gate("one-lost.json", "0.2")[1])["comparison"]["RR"]["ci95"][0]
        self.assertLess(low, -0.2)  # a wide interval: not shown to be no worse than -0.2
        self.assertEqual(gate("one-lost.json", "0.2")[0], 1)
        # the mean gate passes it
        self.assertEqual(self.compare("one-lost.json", "--max-mean-drop", "0.2")[0], 0)
        rejected(self, *self.compare("base.json", "--gate-on", "noninferiority"),
                 "--gate-on noninferiority needs --max-mean-drop or --max-group-drop")
        one = self.write("one.json", {"q0": ["d0"]})
        status, out, err = cli("--qrels", one, "--run", one, "--baseline", one, "-m", "RR", "--max-mean-drop", "0.1",
                               "--gate-on", "noninferiority")
        self.assertEqual(status, 1, err)
        self.assertIn("--gate-on noninferiority cannot decide on 1 query, and fails", err)
        grouped = cli("--qrels", "qrels.json", "--run", "base.json", "--baseline", "base.json", "-m", "RR",
                      "--groups", "g.json", "--max-group-drop", "0.1", "--gate-on", "noninferiority")
        # one query: no decision
        self.assertEqual([b["group"] for b in json.loads(grouped[1])["breaches"]], ["one"])


class NothingToGateTest(TempDirTestCase):
    """A gate never passes on nothing, per group as overall; what a group counts is said in
    every format; messages name the real place and the real rule."""

    FIXTURE = {"qrels": {"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 1}},
               "runs": {"q1": {"d9": 0.9, "d2": 0.8, "d1": 0.7}, "q2": {"d3": 0.9, "d8": 0.5},
                        "q3": {"x1": 0.3}, "q4": {"x2": 0.3}},
               "no_answer": ["q3", "q4"], "groups": {"answered": ["q1", "q2"], "none": ["q3", "q4"], "one": ["q1", "q3"]}}

    def test_a_group_no_query_of_which_is_scored_fails_its_gate(self):
        fixture = self.write("f.json", self.FIXTURE)
        for gate_on in ("mean", "interval"):
            with self.subTest(gate_on=gate_on):
                fast, reference = both_paths(fixture, "-m", "R@3", "--baseline", fixture, "--max-group-drop", "0.1",
                                             "--gate-on", gate_on)
                self.assertEqual(fast, reference)
                status, out, err = fast
                breaches = json.loads(out)["breaches"]
                self.assertEqual(status, 1)
                self.assertEqual(breaches[0], {"measure": "R@3", "query": None, "baseline": None, "candidate": None,
                                               "drop": None, "gate": "--max-group-drop", "limit": 0.1, "queries": 0,
                                               "group": "none"})
                self.assertIn("gate failed: R@3 group 'none' mean: no query of the group is scored by it: "
                              "--max-group-drop 0.1 cannot decide on nothing, and fails", err)
                self.assertEqual([b["group"] for b in breaches], ["none"] + ["one"] * (gate_on == "interval"))
        status, out, err = cli(fixture, "-m", "R@3,Abstain", "--baseline", fixture, "--max-group-drop", "0.1")
        # Abstain scores the group
        self.assertEqual((status, json.loads(out)["breaches"]), (0, []), err)
        # no group gate: nothing fails
        status, out, err = cli(fixture, "-m", "R@3", "--baseline", fixture)
        self.assertEqual((status, json.loads(out)["breaches"]), (0, []), err)

    def test_what_a_group_counts(self):
        fixture = self.write("f.json", dict(self.FIXTURE, no_answer=["q3", "q4", "q5", "q6", "q7"],
                                            runs=dict(self.FIXTURE["runs"], q5={}, q6={}, q7={}),
                                            groups={"none": ["q3", "q4", "q5", "q6", "q7"], "all": ["q1", "q3"]}))
        status, out, err = cli(fixture, "-m", "R@3,Abstain")
        groups = json.loads(out)["groups"]
        # Abstain over 5
        self.assertEqual((groups["none"]["small"], groups["all"]["small"]), (False, True), err)
        status, out, err = cli(fixture, "-m", "R@3,Abstain", "--format", "trec")
        self.assertEqual([line for line in out.splitlines() if line.startswith("num_")],
                         ["num_q\tall\t2", "num_no_answer\tall\t5", "num_q\tgroup:none\t0",
                          "num_no_answer\tgroup:none\t5", "num_q\tgroup:all\t1", "num_no_answer\tgroup:all\t1"])
        mixed = self.write("m.json", dict(json.loads(fixture.read_text()), groups={"mixed": ["q1", "q3", "q4", "q5",
                                                                                          "q6", "q7"]}))
        groups = json.loads(cli(mixed, "-m", "R@3,Abstain")[1])["groups"]
        # R@3 over one query, though Abstain is over five
        self.assertTrue(groups["mixed"]["small"])
        status, out, err = cli(fixture, "-m", "R@3", "--format", "table")
        self.assertIn("none   0 (few)", out)  # R@3 scores none of them
        self.assertNotIn("num_no_answer", cli(FIXTURE, "-m", "R@3", "--format", "trec")[1])

    def test_each_count_sits_beside_the_mean_it_counts(self):
        qrels = {"q%d" % i: ["d%d" % i] for i in range(8)}
        runs = dict({q: ["d%d" % i] for i, q in enumerate(qrels)}, n1=[], n2=["y"], n3=[])
        fixture = self.write("g.json", {"qrels": qrels, "runs": runs, "no_answer": ["n1", "n2", "n3"],
                                        "groups": {"many": ["q%d" % i for i in range(5)] + ["n1", "n2"],
                                                   "few": ["q5", "q6", "n3"], "none": ["n1"]}})
        table = cli(fixture, "-m", "R@3,Abstain", "--format", "table")[1]
        rows = [line.split(None, 2) for line in table.splitlines() if line.startswith(("  many", "  few", "  none"))]
        # 5 queries are not few
        self.assertEqual(rows, [["many", "5", "1.0000  0.5000 over 2 (few)"],
                                ["few", "2", "(few)  1.0000  1.0000 over 1 (few)"],
                                # R@3 has nothing in none
                                ["none", "0", "(few)          1.0000 over 1 (few)"]])
        markdown = cli(fixture, "-m", "R@3,Abstain", "--format", "markdown")[1]
        self.assertIn("| many | 5 | 1.0000 | 0.5000 over 2 (few) |", markdown)

    def test_messages_name_the_place_and_the_rule(self):
        fixture = self.write("f.json", {"qrels": {"q1": ["d1"]}, "runs": {"q1": {"d1": 0.9}}})
        log = self.write("log.jsonl", '{"query_id": "q1", "relevant": ["d1"], "retrieved": '
                                      '["d1"], "token_counts": [3]}\n')
        cases = [
            (["--evidence", fixture, "--run", fixture, "-m", "EvidenceRecall@3"],
             ['f.json: a fixture without "evidence": give a file of evidence sets']),
            ([log, "-m", "R(tokens=5)@3"], ["log.jsonl: query 'q1'", "no token counts for the budget: the record has "
                                            "no tokens and --lengths is not given", "'token_counts'",
                                            "--fields tokens=KEY"]),
            ([log, "-m", "EvidenceRecall@3"], ["EvidenceRecall@3 needs evidence sets",
                                               "the first record's keys: 'query_id', 'relevant', "
                                               "'retrieved', 'token_counts'",
                                               "name its field with --fields evidence=KEY"]),
            ([log, "-m", "R@1,Abstain"], ["log.jsonl: Abstain needs questions without an answer, "
                                          "and no record says \"answerable\": false; the first "
                                          "record's keys: 'query_id'",
                                          "--fields answerable=KEY"]),
            ([fixture, "-m", "R@1,Abstain"], ["Abstain: no query without an answer", "--fields answerable=KEY names"]),
            ([fixture, "-m", "EvidenceRR"], ["EvidenceRR needs evidence sets", "--fields evidence=KEY names"])]
        for args, fragments in cases:
            with self.subTest(args=args):
                fast, reference = both_paths(*args)
                self.assertEqual(fast, reference)
                rejected(self, *fast, *fragments)
        # 2**63 - 1: the largest budget
        status, out, err = cli(fixture, "-m", "R(tokens=9223372036854775807)@3",
                               "--lengths", self.write("l.txt", "d1 9223372036854775807\n"))
        self.assertEqual((status, json.loads(out)["measures"]), (0, {"R(tokens=9223372036854775807)@3": 1.0}), err)


class GateRegistryTest(TempDirTestCase):
    """Issue 49, item 1: gates are records of one registry (GATES), breaches records rendered once;
    a drop limit per measure (MEASURE=X,..., or {measure: X}) is read as the floors' are, and
    a plain X still means every measure.  Candidate vs baseline (see ComparisonTest): RR falls
    by 1/3 (q3 by 1, q1 by 0.5), R@3 by 1/3 (q3 by 1)."""

    def runs(self):
        return self.write("cand.json", fixture(CAND_RUNS)), self.write("base.json", fixture(BASE_RUNS))

    def compare(self, *args):
        cand, base = self.runs()
        return cli(cand, "--baseline", base, "-m", "RR,R@3", *args)

    def test_the_registry_is_the_options_tables_gates(self):
        self.assertEqual(sorted(rre.GATES), sorted(o.name for o in rre.OPTIONS if o.kind in ("limit", "floors")))
        for name, gate in rre.GATES.items():
            self.assertEqual(gate.flag, "--" + name.replace("_", "-"))
            self.assertEqual(gate.needs is None, rre.OPTION[name].kind == "floors", name)
        breach = rre.Breach("RR", "q1", 1.0, 0.5, 0.5, rre.GATES["max_query_drop"], 0.1, {"replicates": 2})
        self.assertEqual(rre.jsonable({"breaches": [breach]})["breaches"], [
            {"measure": "RR", "query": "q1", "baseline": 1.0, "candidate": 0.5, "drop": 0.5,
             "gate": "--max-query-drop", "limit": 0.1, "replicates": 2}])

    def test_a_limit_per_measure_gates_only_its_measures(self):
        status, out, err = self.compare("--max-query-drop", "RR=0.6")
        self.assertEqual(status, 1, err)
        self.assertEqual([(b["measure"], b["query"], b["limit"]) for b in json.loads(out)["breaches"]],
                         [("RR", "q3", 0.6)])  # q1 fell by 0.5; R@3's q3 is not gated
        status, out, err = self.compare("--max-query-drop", "0.6")  # plain: every measure
        self.assertEqual([(b["measure"], b["query"]) for b in json.loads(out)["breaches"]],
                         [("RR", "q3"), ("R@3", "q3")])
        status, out, err = self.compare("--max-mean-drop", "RR=0.4, R@3=0.3", "--max-query-drop", "R@3=1")
        self.assertEqual((status, [(b["measure"], b["limit"]) for b in json.loads(out)["breaches"]]),
                         (1, [("R@3", 0.3)]), err)
        self.assertIn("gate failed: R@3 mean: 1.0000 -> 0.6667 (drop 0.3333 > --max-mean-drop 0.3)", err)
        self.assertEqual(self.compare("--max-mean-drop", "RR=0.4,R@3=0.34")[0], 0)

    def test_the_same_limit_for_every_measure_is_the_plain_limit_in_every_format(self):
        for fmt in ("json", "table", "markdown", "csv"):
            with self.subTest(fmt=fmt):
                plain = self.compare("--max-query-drop", "0.6", "--max-mean-drop", "0.3", "--format", fmt)
                each = self.compare("--max-query-drop", "R@3=0.6,RR=0.6", "--max-mean-drop", "RR=0.3,R@3=0.3",
                                    "--format", fmt)
                self.assertEqual(plain, each)
                self.assertEqual(plain[0], 1)
        table = self.compare("--max-query-drop", "RR=0.6", "--format", "table")[1]
        self.assertIn("RR query 'q3': 1.0000 -> 0.0000 (drop 1.0000 > --max-query-drop 0.6)", table)
        self.assertNotIn("R@3 query", table)
        markdown = self.compare("--max-mean-drop", "R@3=0.3", "--format", "markdown")[1]
        self.assertIn("**1 gate breach**", markdown)

    def test_junit_has_a_case_per_measure_with_a_limit(self):
        xml = self.tmp / "j.xml"
        status, out, err = self.compare("--max-query-drop", "RR=0.6", "--max-mean-drop", "R@3=0.5", "--junit", xml)
        self.assertEqual(status, 1, err)
        cases = {c.get("name"): c.find("failure") for c in ElementTree.parse(xml).getroot().iter("testcase")}
        self.assertEqual(list(cases), ["RR every query (--max-query-drop 0.6)",
                                       "R@3 mean (--max-mean-drop 0.5)",
                                       "RR query q3 (--max-query-drop 0.6)"])
        self.assertIsNone(cases["R@3 mean (--max-mean-drop 0.5)"])
        self.assertEqual(cases["RR query q3 (--max-query-drop 0.6)"].get("type"), "--max-query-drop")
        plain = self.tmp / "p.xml"
        self.compare("--max-query-drop", "0.6", "--junit", plain)
        self.compare("--max-query-drop", "RR=0.6,R@3=0.6", "--junit", xml)
        self.assertEqual(xml.read_text(), plain.read_text())

    def test_several_runs_and_groups(self):
        qrels, groups = self.write("q.json", GROUP_QRELS), self.write("g.json", GROUPS)
        base, cand = self.write("b.json", BASE_GROUP_RUN), self.write("c.json", CAND_GROUP_RUN)
        same = self.write("s.json", BASE_GROUP_RUN)
        args = ("--qrels", qrels, "--run", same, "--run", cand, "--baseline", base, "--groups", groups)
        status, out, err = cli(*args, "-m", "RR,R@1", "--max-group-drop", "RR=0.1")
        runs = json.loads(out)["runs"]
        self.assertEqual((status, runs[str(same)]["breaches"]), (1, []), err)
        self.assertEqual([(b["measure"], b["group"], b["limit"]) for b in runs[str(cand)]["breaches"]],
                         [("RR", "multi-hop", 0.1)])  # R@1 falls too, and has no limit
        self.assertEqual(cli(*args, "-m", "RR,R@1", "--max-group-drop", "R@1=0.7")[0], 0)
        for fmt in ("json", "table", "markdown"):
            with self.subTest(fmt=fmt):
                plain = cli(*args, "-m", "RR,R@1", "--max-query-drop", "0.4", "--max-group-drop", "0.1",
                            "--max-mean-drop", "0.05", "--format", fmt)
                each = cli(*args, "-m", "RR,R@1", "--max-query-drop", "R@1=0.4,RR=0.4", "--max-group-drop",
                           "RR=0.1,R@1=0.1", "--max-mean-drop", "RR=0.05,R@1=0.05", "--format", fmt)
                self.assertEqual(plain, each)
                self.assertEqual(plain[0], 1)
        xml, plain_xml = self.tmp / "each.xml", self.tmp / "plain.xml"
        cli(*args, "-m", "RR,R@1", "--max-group-drop", "0.1", "--junit", plain_xml)
        cli(*args, "-m", "RR,R@1", "--max-group-drop", "R@1=0.1,RR=0.1", "--junit", xml)
        self.assertEqual(xml.read_text(), plain_xml.read_text())
        self.assertIn("RR group multi-hop mean (--max-group-drop 0.1)", xml.read_text())

    def test_the_library_takes_a_number_or_a_dict(self):
        qrels = fixture({})["qrels"]
        one = rre.compare_runs(qrels, BASE_RUNS, CAND_RUNS, "RR,R@3", max_query_drop={"RR": 0.6})
        self.assertEqual([(b["measure"], b["query"]) for b in one["breaches"]], [("RR", "q3")])
        plain = rre.compare_runs(qrels, BASE_RUNS, CAND_RUNS, "RR,R@3", max_query_drop=0.6, max_mean_drop=0.3)
        each = rre.compare_runs(qrels, BASE_RUNS, CAND_RUNS, "RR,R@3", max_query_drop={"RR": 0.6, "R@3": 0.6},
                                max_mean_drop={"R@3": fractions.Fraction(3, 10), "RR": 0.3})
        self.assertEqual(plain, each)
        several = rre.score_runs(qrels, {"a": BASE_RUNS, "b": CAND_RUNS}, "RR,R@3", baseline=BASE_RUNS,
                                 max_mean_drop={"R@3": 0.3}, power=True)["runs"]
        self.assertEqual([[b["measure"] for b in r["breaches"]] for r in several.values()], [[], ["R@3"]])
        self.assertEqual([name for name, p in several["b"]["power"].items() if "queries_for" in p], ["R@3"])
        self.assertEqual(json.loads(json.dumps(one)), one)  # breaches are JSON's objects

    def test_refusals(self):
        cand, base = self.runs()
        for args, fragments in (
                (["--max-query-drop", "P@5=0.5"], ["--max-query-drop gives a limit for P@5, which "
                                                   "is not measured"]),
                (["--max-mean-drop", "RR=0.5,RR=0.4"], ["--max-mean-drop gives RR twice: give "
                                                        "each measure one limit"]),
                (["--max-mean-drop", "RR=x"], ["a limit is MEASURE=X, as R@5=0.8, not 'RR=x'"]),
                (["--max-mean-drop", "RR=-0.1"], ["a drop limit must be a number "
                                                  ">= 0, not '-0.1'"]),
                (["--max-mean-drop", "=0.1"], ["a limit is MEASURE=X"]),
                (["--max-group-drop", "RR=0.1"], ["--max-group-drop needs query groups"])):
            with self.subTest(args=args):
                rejected(self, *cli(cand, "--baseline", base, "-m", "RR,R@3", *args), *fragments)
        rejected(self, *cli(cand, "-m", "RR", "--max-query-drop", "RR=0.1"),
                 "--max-query-drop needs --baseline")
        qrels = fixture({})["qrels"]
        for value in ({"RR": -1}, {"RR": "0.1"}, {1: 0.1}, [0.1], "RR=0.1"):
            with self.subTest(value=value), self.assertRaises(rre.EvalError) as raised:
                rre.compare_runs(qrels, BASE_RUNS, CAND_RUNS, "RR", max_query_drop=value)
            self.assertIn("max_query_drop must be", str(raised.exception))
        with self.assertRaisesRegex(rre.EvalError, "gives a limit for P@5, which is not measured"):
            rre.compare_runs(qrels, BASE_RUNS, CAND_RUNS, "RR", max_mean_drop={"P@5": 0.1})


class ClustersTest(TempDirTestCase):
    """Section 23: queries that share a source are one unit of the sign-flip test and the bootstrap."""

    QRELS = {"q1": ["a", "b"], "q2": ["c", "d"], "q3": ["e", "f", "g", "h"], "q4": ["i", "j", "k", "l"]}
    BASE = {"q1": ["a", "b"], "q2": ["c", "d"], "q3": ["e", "f"], "q4": ["i", "j", "k"]}
    # R@5: -0.5, -0.5, +0.25, -0.25
    CAND = {"q1": ["a"], "q2": ["c"], "q3": ["e", "f", "g"], "q4": ["i", "j"]}

    def test_the_worked_example(self):
        qrels, base, cand = (self.write(n, v) for n, v in (("q.json", self.QRELS), ("b.json", self.BASE),
                                                           ("c.json", self.CAND)))
        args = ("--qrels", qrels, "--run", cand, "--baseline", base, "-m", "R@5")
        # 6 of 16
        self.assertEqual(json.loads(cli(*args)[1])["comparison"]["R@5"]["p_value"], 0.375)
        for clusters in (self.write("c.txt", "# query cluster\nq1 A\nq2 A\nq3 B\nq4 B\n"),
                         self.write("c2.json", {"A": ["q1", "q2"], "B": ["q3", "q4"]})):
            status, out, err = cli(*args, "--clusters", clusters)
            result = json.loads(out)
            self.assertEqual((status, result["comparison"]["R@5"]["p_value"], result["clusters"]), (0, 1.0, 2), err)
            # cluster means -0.5 and 0
            self.assertEqual(result["comparison"]["R@5"]["ci95"], [-0.5, 0.0])
            self.assertIn("note: clusters: the sign-flip test and the bootstrap draw 2 clusters of the 4 queries", err)
        library = rre.compare_runs(self.QRELS, self.BASE, self.CAND, "R@5", clusters={"A": ["q1", "q2"],
                                                                                       "B": ["q3", "q4"]})
        self.assertEqual(library["comparison"], result["comparison"])
        self.assertEqual(rre.score_run(self.QRELS, self.CAND, "R@5", ci=True, clusters={"A": ["q1", "q2"]})["ci95"],
                         json.loads(cli("--qrels", qrels, "--run", cand, "-m", "R@5", "--ci", "--clusters",
                                        self.write("a.txt", "q1 A\nq2 A\n"))[1])["ci95"])

    def test_bad_cluster_files(self):
        qrels, run = self.write("q.json", self.QRELS), self.write("c.json", self.CAND)
        for text, message in (("q1 A\nq1 B\n", "c.txt:2: query 'q1': in cluster 'A' and in "
                                               "cluster 'B': a query shares its source with "
                                               "one cluster only"),
                              ("q1 A\nq9 A\n", "c.txt:2: query 'q9': cluster 'A' names a query "
                                               "that has no labels"),
                              ("q1 A\nq1 A\n", "query 'q1' is listed twice in cluster 'A'"),
                              ("# nothing\n", "no clusters: the file has no QID CLUSTER lines"),
                              ("q1\n", "QID CLUSTER")):
            with self.subTest(text=text):
                rejected(self, *cli("--qrels", qrels, "--run", run, "-m", "R@5", "--clusters",
                                    self.write("c.txt", text)), message)
        rejected(self, *cli("--qrels", qrels, "--run", run, "-m", "R@5", "--clusters", self.write("e.json", {"A": []})),
                 "e.json: A: cluster 'A' is empty")
        with self.assertRaisesRegex(rre.EvalError, "cluster 'B' names a query that has no labels"):
            rre.score_run(self.QRELS, self.CAND, "R@5", clusters={"B": ["q7"]})

    def test_random_clusters_agree_with_an_independent_implementation(self):
        rng = random.Random(23)
        for case in range(15):
            n = rng.randint(4, 14)
            qrels = {"q%d" % i: ["d%d" % j for j in range(4)] for i in range(n)}
            base = {q: ["d%d" % j for j in range(rng.randint(0, 4))] for q in qrels}
            cand = {q: ["d%d" % j for j in range(rng.randint(0, 4))] for q in qrels}
            names = ["c%d" % rng.randrange(rng.randint(1, n)) for _ in qrels]
            clusters = {}
            for q, name in zip(qrels, names):
                if rng.random() < 0.8:  # the others are clusters of their own
                    clusters.setdefault(name, []).append(q)
            result = rre.compare_runs(qrels, base, cand, "R@4", clusters=clusters)["comparison"]["R@4"]
            diffs = {q: (len(cand[q]) - len(base[q])) / 4 for q in qrels}
            units = [sum(diffs[q] for q in members) for members in clusters.values()] + [
                diffs[q] for q in qrels if not any(q in m for m in clusters.values())]
            moved = [u for u in units if abs(u) > 1e-12]
            reach = abs(sum(moved))
            flips = [abs(sum(u if (mask >> i) & 1 else -u for i, u in enumerate(moved))) for mask in
                     range(2 ** len(moved))]
            with self.subTest(case=case):
                self.assertEqual(result["p_value"], sum(1 for f in flips if f >= reach - 1e-9) / len(flips))
                sizes = [len(m) for m in clusters.values()] + [1] * (len(units) - len(clusters))
                draws = random.Random(case)
                means = sorted(sum(units[i] for i in picks) / sum(sizes[i] for i in picks) for picks in (
                    [draws.randrange(len(units)) for _ in units] for _ in range(1000)))
                low, high = result["ci95"]
                spread = max(means) - min(means)
                # within the Monte Carlo error
                self.assertLessEqual(abs(low - means[25]), 0.15 * spread + 1e-9)
                self.assertLessEqual(abs(high - means[974]), 0.15 * spread + 1e-9)

    def test_groups_and_several_runs_draw_clusters_too(self):
        qrels, base, cand = (self.write(n, v) for n, v in (("q.json", self.QRELS), ("b.json", self.BASE),
                                                           ("c.json", self.CAND)))
        clusters = self.write("c.txt", "q1 A\nq2 A\nq3 B\nq4 B\n")
        groups = self.write("g.json", {"all": ["q1", "q2", "q3", "q4"]})
        status, out, err = cli("--qrels", qrels, "--run", cand, "--run", base, "--baseline", base, "-m", "R@5",
                               "--groups", groups, "--clusters", clusters)
        runs = json.loads(out)["runs"]
        self.assertEqual(runs[str(cand)]["groups"]["all"]["comparison"]["R@5"]["p_value"], 1.0)
        self.assertEqual([r["clusters"] for r in runs.values()], [2, 2])


class GroupsTest(TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.base = self.write("base.json", BASE_GROUP_RUN)
        self.cand = self.write("cand.json", CAND_GROUP_RUN)
        self.qrels = self.write("qrels.json", GROUP_QRELS)
        self.groups = self.write("groups.json", GROUPS)

    def run_json(self, *args):
        status, out, err = cli("--qrels", self.qrels, "--run", self.cand, *args)
        self.assertIn(status, (0, 1), err)
        return json.loads(out)

    def test_group_means_and_intervals_equal_the_queries_evaluated_alone(self):
        result = self.run_json("--groups", self.groups, "-m", "RR,R@1,nDCG@3", "--ci")
        for name, qids in GROUPS.items():
            alone = [q for q in GROUP_QRELS if q in qids]  # evaluation order: the labels'
            sub = self.write("sub.json", {"qrels": {q: GROUP_QRELS[q] for q in alone},
                                          "runs": {q: CAND_GROUP_RUN[q] for q in alone}})
            expected = json.loads(cli(sub, "-m", "RR,R@1,nDCG@3", "--ci")[1])
            block = result["groups"][name]
            self.assertEqual((block["queries"], block["members"]), (len(qids), alone))
            self.assertEqual((block["measures"], block["ci95"]), (expected["measures"], expected["ci95"]))
        self.assertAlmostEqual(result["groups"]["billing"]["measures"]["RR"], (1 + 1 / 2 + 1 / 3) * 2 / 6, places=15)

    def test_a_file_of_lines_and_a_fixtures_groups_read_as_the_json_file(self):
        lines = self.write("groups.txt", "# query group\n" + "".join(
            "%s %s\n" % (q, name) for name, qids in GROUPS.items() for q in qids))
        by_json = self.run_json("--groups", self.groups, "-m", "RR")
        self.assertEqual(without_inputs(self.run_json("--groups", lines, "-m", "RR")), without_inputs(by_json))
        fixture_with_groups = self.write("f.json", {"qrels": GROUP_QRELS, "runs": CAND_GROUP_RUN, "groups": GROUPS})
        self.assertEqual(json.loads(cli(fixture_with_groups, "-m", "RR")[1])["groups"], by_json["groups"])
        self.assertEqual(without_inputs(self.run_json("--groups", fixture_with_groups, "-m", "RR")),
                         without_inputs(by_json))  # its "groups" only

    def test_seed_mode_ignores_a_fixtures_groups_as_it_ignores_any_other_key(self):
        seed = json.loads(FIXTURE.read_text())
        path = self.write("f.json", dict(seed, groups=5))
        self.assertEqual(cli(path), (0, SEED_STDOUT, ""))
        rejected(self, *cli(path, "-m", "RR"),
                 "f.json: groups: expected an object of group names to query IDs")

    def test_the_group_gate_fails_exactly_when_a_groups_drop_exceeds_the_limit(self):
        # multi-hop's RR mean falls from (1 + 1/2 + 1/3) / 3 to 1/2, a drop of 0.1111; the others
        # keep theirs
        drop = (1 + 1 / 2 + 1 / 3) / 3 - 0.5
        for limit, status in ((0.1112, 0), (0.111, 1)):
            with self.subTest(limit=limit):
                code, out, err = cli("--qrels", self.qrels, "--run", self.cand, "--baseline", self.base,
                                     "--groups", self.groups, "-m", "RR,R@4", "--max-group-drop", limit)
                self.assertEqual(code, status, err)
                breaches = json.loads(out)["breaches"]
                self.assertEqual(breaches, [] if not status else [
                    {"measure": "RR", "query": None, "baseline": (1 + 1 / 2 + 1 / 3) / 3, "candidate": 0.5,
                     "drop": drop, "gate": "--max-group-drop", "limit": limit, "group": "multi-hop"}])
                if status:
                    self.assertIn("gate failed: RR group 'multi-hop' mean: 0.6111 -> 0.5000 (drop 0.1111 > "
                                  "--max-group-drop 0.111)", err)

    def test_group_comparisons_and_holm_over_groups_and_measures(self):
        result = self.run_json("--baseline", self.base, "--groups", self.groups, "-m", "RR,R@1")
        rows = [row for block in result["groups"].values() for row in block["comparison"].values()]
        self.assertEqual(len(rows), 6)
        self.assertEqual([r["p_holm"] for r in rows], rre.holm([r["p_value"] for r in rows]))
        # q6: rank 1 -> 2, q7: 2 -> 2, q8: 3 -> 2
        hop = result["groups"]["multi-hop"]["comparison"]["RR"]
        self.assertEqual((hop["improved"], hop["regressed"], hop["lost"]), ({"q8": 0.5 - 1 / 3}, {"q6": -0.5}, []))
        self.assertEqual(result["groups"]["billing"]["comparison"]["RR"]["delta"], 0.0)

    def test_holm_over_groups_with_p_values_below_one(self):
        qrels, groups = self.write("q6.json", REPLICATE_QRELS), self.write("g6.json", {"all": list(REPLICATE_QRELS),
                                                                                         "one": ["q0"]})
        base, cand = self.write("ones.json", rr_run(1, 1, 1, 1, 1, 1)), self.write("twos.json", rr_run(2, 2, 2, 2, 2, 2))
        status, out, err = cli("--qrels", qrels, "--run", cand, "--baseline", base, "--groups", groups, "-m", "RR,R@1")
        rows = json.loads(out)["groups"]["all"]["comparison"]
        # six drops, one sign
        self.assertEqual([rows[n]["p_value"] for n in ("RR", "R@1")], [2 / 64, 2 / 64])
        # 2 groups x 2 measures
        self.assertEqual([rows[n]["p_holm"] for n in ("RR", "R@1")], [4 * 2 / 64, 4 * 2 / 64])
        status, out, err = cli("--qrels", qrels, "--run", cand, "--groups", groups, "-m", "RR")
        self.assertEqual([sorted(block) for block in json.loads(out)["groups"].values()],
                         [["measures", "members", "queries", "small"]] * 2)  # no ci95 without --ci

    def test_small_groups_are_flagged_and_still_gated(self):
        result = self.run_json("--baseline", self.base, "--groups", self.groups, "-m", "RR", "--max-group-drop", "0")
        self.assertEqual({n: b["small"] for n, b in result["groups"].items()},
                         {"billing": False, "multi-hop": True, "names": True})
        self.assertEqual([b["group"] for b in result["breaches"]], ["multi-hop"])
        _, table, _ = cli("--qrels", self.qrels, "--run", self.cand, "--groups", self.groups, "--format", "table")
        self.assertRegex(table, r"multi-hop\s+3 \(few\)")
        self.assertIn("(few): fewer than 5 queries", table)

    def test_groups_in_every_format(self):
        args = ("--qrels", self.qrels, "--run", self.cand, "--groups", self.groups, "-m", "RR")
        _, table, _ = cli(*args, "--baseline", self.base, "--format", "table")
        self.assertRegex(table, r"multi-hop\s+3 \(few\)\s+0\.5000 \(-0\.1111\)")
        _, markdown, _ = cli(*args, "--format", "markdown")
        self.assertIn("| billing | 6 | 0.6111 |", markdown)
        _, trec, _ = cli(*args, "--format", "trec")
        self.assertIn("num_q\tgroup:multi-hop\t3\nrecip_rank\tgroup:multi-hop\t0.5\n", trec)
        _, text, _ = cli(*args, "--format", "csv")
        rows = list(csv.DictReader(io.StringIO(text)))
        self.assertEqual([r["query"] for r in rows if r["group:names"] == "1"], ["q1", "q9"])
        self.assertEqual(len(rows), 12)

    def test_with_a_baseline_the_group_intervals_are_those_without(self):
        alone = self.run_json("--groups", self.groups, "-m", "RR,AP", "--ci", "--seed", "4")
        compared = self.run_json("--groups", self.groups, "-m", "RR,AP", "--ci", "--seed", "4", "--baseline", self.base)
        self.assertEqual({n: b["ci95"] for n, b in compared["groups"].items()},
                         {n: b["ci95"] for n, b in alone["groups"].items()})
        self.assertEqual(compared["ci95"], alone["ci95"])

    def test_library_groups_answer_as_the_cli(self):
        self.assertEqual(rre.score_run(GROUP_QRELS, CAND_GROUP_RUN, "RR", groups=GROUPS),
                         without_inputs(self.run_json("--groups", self.groups, "-m", "RR")))
        result = rre.compare_runs(GROUP_QRELS, BASE_GROUP_RUN, CAND_GROUP_RUN, "RR", groups=GROUPS, max_group_drop=0.1)
        self.assertEqual([b["group"] for b in result["breaches"]], ["multi-hop"])
        with self.assertRaisesRegex(rre.EvalError, "--max-group-drop needs query groups"):
            rre.compare_runs(GROUP_QRELS, BASE_GROUP_RUN, CAND_GROUP_RUN, "RR", max_group_drop=0.1)
        for options, message in (({"groups": {"g": ["q99"]}},
                                  "groups.g[0]: query 'q99': group 'g' names a query"),
                                 ({"groups": {"g": []}}, "groups.g: group 'g' is empty"),
                                 ({"groups": ["q1"]}, "groups: expected an object")):
            with self.subTest(options=options), self.assertRaisesRegex(rre.EvalError, re.escape(message)):
                rre.score_run(GROUP_QRELS, CAND_GROUP_RUN, "RR", **options)


class GroupRejectionTest(TempDirTestCase):
    def test_rejections(self):
        os.chdir(self.tmp)
        self.addCleanup(os.chdir, ROOT)
        self.write("qrels.json", GROUP_QRELS)
        self.write("run.json", CAND_GROUP_RUN)
        for files, args, fragments in GROUP_REJECTIONS[:-1]:
            with self.subTest(args=args, files=files):
                for name, content in files.items():
                    self.write(name, content)
                rejected(self, *cli("--qrels", "qrels.json", "--run", "run.json", *args), *fragments)
        partial_run = self.write("partial.json", {q: r for q, r in CAND_GROUP_RUN.items() if q not in GROUPS["names"]})
        rejected(self, *cli("--qrels", "qrels.json", "--run", partial_run, "--groups", self.write("g.json", GROUPS),
                            "--missing-run", "skip"),
                            "error: %s: group 'names': none of its 2 queries is left to evaluate"
                 % partial_run)
        both = self.write("f.json", {"qrels": GROUP_QRELS, "runs": CAND_GROUP_RUN, "groups": GROUPS})
        rejected(self, *cli(both, "--groups", "g.json"),
                 'f.json has "groups" and --groups is given too')
        ranked = self.write("ranked.json", dict(CAND_GROUP_RUN, extra=["d1"]))
        groups = self.write("x.json", {"x": ["extra"]})
        rejected(self, *cli("--qrels", "qrels.json", "--run", ranked, "--unlabeled", "skip",
                            "--groups", groups), "'x' names a query that has no labels")


class FloorTest(TempDirTestCase):
    """--min-mean and --min-query: absolute floors, with or without a baseline."""

    def setUp(self):
        super().setUp()
        self.fixture = FIXTURE  # R@3 0.6667 (1, 1, 0), RR@3 0.5

    def test_a_mean_below_its_floor_fails_everywhere_a_breach_is_said(self):
        summary, junit = self.tmp / "summary.md", self.tmp / "junit.xml"
        status, out, err = cli(self.fixture, "--min-mean", "R@3=0.8,RR@3=0.5", "--summary", summary,
                               "--junit", junit)
        self.assertEqual(status, 1, err)
        breaches = json.loads(out)["breaches"]
        self.assertEqual(breaches, [{"measure": "R@3", "query": None, "baseline": None,
                                     "candidate": 2 / 3, "drop": None, "gate": "--min-mean", "limit": 0.8}])
        self.assertIn("gate failed: R@3 mean: 0.6667 (below --min-mean 0.8)", err)
        self.assertIn("- R@3 mean: 0.6667 (below --min-mean 0.8)", summary.read_text())
        self.assertIn("R@3 mean: 0.6667 (below --min-mean 0.8)", cli(self.fixture, "--min-mean", "R@3=0.8",
                                                                      "--format", "table")[1])
        cases = {c.get("name"): c.find("failure") for c in ElementTree.parse(junit).iter("testcase")}
        self.assertEqual(sorted(cases), ["R@3 mean (--min-mean 0.8)", "RR@3 mean (--min-mean 0.5)"])
        self.assertIsNotNone(cases["R@3 mean (--min-mean 0.8)"])
        self.assertIsNone(cases["RR@3 mean (--min-mean 0.5)"])  # 0.5 is not below 0.5
        self.assertEqual(cli(self.fixture, "--min-mean", "R@3=0.6")[0], 0)

    def test_query_floors_repeat_and_list_the_lowest_first(self):
        status, out, err = cli(self.fixture, "--min-query", "RR@3=0.6", "--min-query", "nDCG@3=0.99")
        self.assertEqual(status, 1, err)
        result = json.loads(out)
        self.assertEqual([(b["measure"], b["query"]) for b in result["breaches"]],
                         # nDCG@3: added
                         [("RR@3", "q3"), ("RR@3", "q1"), ("nDCG@3", "q3"), ("nDCG@3", "q1")])
        self.assertEqual(result["floors"], {"min_mean": {}, "min_query": {"RR@3": 0.6, "nDCG@3": 0.99}})

    def test_with_a_baseline_and_several_runs(self):
        base = self.write("base.json", {"q1": ["d1", "d2"], "q2": ["d3"], "q3": ["d4"]})
        run = self.write("run.json", {"q1": ["d9"], "q2": ["d3"], "q3": ["d4"]})
        qrels = self.write("qrels.json", {"q1": ["d1", "d2"], "q2": ["d3"], "q3": ["d4"]})
        status, out, err = cli("--qrels", qrels, "--run", run, "--run", base, "--baseline", base, "-m", "R@3",
                               "--min-mean", "R@3=0.9")
        self.assertEqual(status, 1, err)
        runs = json.loads(out)["runs"]
        self.assertEqual([b["gate"] for b in runs[str(run)]["breaches"]], ["--min-mean"])
        self.assertEqual(runs[str(base)]["breaches"], [])
        result = rre.compare_runs(None, {"q1": ["a", "b"]}, {"q1": ["b", "c"]}, "Overlap@2", min_query={"Overlap@2": 0.6})
        self.assertEqual([(b["query"], b["candidate"]) for b in result["breaches"]], [("q1", 0.5)])

    def test_a_signed_floor_is_its_number(self):
        for given in ("R@3=+1", "R@3=-0.5"):  # 0.6667 is below the one, above the other
            with self.subTest(given):
                status, out, err = cli(self.fixture, "--min-mean", given)
                self.assertEqual((status, json.loads(out)["floors"]["min_mean"]),
                                 (1 if "+" in given else 0, {"R@3": float(given[4:])}), err)

    def test_interval_and_noninferiority_read_the_whole_interval(self):
        # RR 1, 0.5, ...: mean 0.75
        same = {"q%d" % i: ["d"] if i % 2 else ["x", "d"] for i in range(20)}
        qrels = {q: ["d"] for q in same}
        ci = rre.score_run(qrels, same, "RR", ci=True)["ci95"]["RR"]
        self.assertLess(ci[0], 0.75)
        for gate_on, floor, fails in (("interval", ci[1] + 0.01, True), ("interval", 0.75, False),
                                      ("noninferiority", ci[0] - 0.01, False), ("noninferiority", 0.75, True),
                                      ("mean", 0.75, False), ("mean", 0.76, True)):
            with self.subTest(gate_on=gate_on, floor=floor):
                result = rre.score_run(qrels, same, "RR", min_mean={"RR": floor}, gate_on=gate_on)
                self.assertEqual(bool(result["breaches"]), fails)
        one = unrendered(rre.score_run, {"q1": ["d"]}, {"q1": ["d"]}, "RR", min_mean={"RR": 0.5}, gate_on="interval")
        self.assertIn("cannot decide on 1 query", rre.breach_text(one["breaches"][0]))

    def test_power_says_when_the_set_cannot_tell(self):
        status, out, err = cli(self.fixture, "--min-mean", "R@3=0.8", "--power")
        floor = json.loads(out)["power"]["R@3"]["floor"]
        self.assertEqual((floor["limit"], floor["resolved"], floor["half_width"]), (0.8, False, 0.5))
        self.assertIn("warning: this set cannot tell whether R@3 is above --min-mean 0.8", err)
        status, out, err = cli(self.fixture, "--min-mean", "R@3=0.8", "--power", "--gate-on", "interval")
        self.assertEqual(status, 0, err)
        self.assertIn("note: power: this set cannot tell whether R@3 is above --min-mean 0.8", err)

    def test_a_floor_the_set_cannot_place_is_said_without_power(self):
        with_power = cli(self.fixture, "--min-mean", "R@3=0.8,RR=1.5", "--power")[2]
        said = [line for line in with_power.splitlines() if "cannot tell" in line]
        self.assertEqual(len(said), 1, with_power)  # RR's interval lies below 1.5: nothing to say
        for fmt in ("json", "markdown"):
            with self.subTest(fmt):
                status, out, err = cli(self.fixture, "--min-mean", "R@3=0.8,RR=1.5",
                                       "--format", fmt)
                warnings = [line for line in err.splitlines() if "warning" in line]
                # the mean 0.6667 fails the floor: a coin toss
                self.assertEqual((status, warnings), (1, said), err)
                self.assertIn(said[0].partition(": ")[2], out.replace("\\", ""))  # JSON, Markdown
        err = cli(self.fixture, "--min-mean", "R@3=0.8", "--gate-on", "interval")[2]
        self.assertNotIn("cannot tell", err)  # the interval decides: no coin toss
        self.assertIn("(half-width 0.5000 over 3 queries) holds it", said[0])  # [0, 1]
        for floor in ("0", "1"):  # an interval holds its ends: a floor on one is a coin toss too
            with self.subTest(floor=floor):
                for power in ([], ["--power"]):
                    err = cli(self.fixture, "--min-mean", "R@3=" + floor, *power)[2]
                    self.assertIn("cannot tell whether R@3 is above --min-mean %s" % floor, err)
        self.assertNotIn("floors", rre.score_run({"q1": ["d"]}, {"q1": ["d"]}, "RR"))  # none asked
        rejected(self, *cli(self.fixture, "--min-mean", "RelString=0.5", "--format", "trec"),
                 "RelString is no number: it has no floor")

    def test_rejections(self):
        for args, fragments in ((["--min-mean", "R@3"], ["a floor is MEASURE=X", "'R@3'"]),
                                (["--min-mean", "R@3=high"], ["a floor is MEASURE=X"]),
                                (["--min-mean", "R@3=0.5,r@3=0.6"], ["--min-mean gives R@3 twice"]),
                                (["--min-query", "Nope@3=0.5"], ["unknown measure 'Nope@3'"]),
                                (["--junit", "j.xml"], ["--junit reports the gates' checks", "--min-mean"]),
                                (["--gate-on", "interval"], ["or --min-mean"])):
            with self.subTest(args):
                rejected(self, *cli(self.fixture, *args), *fragments)
        with self.assertRaisesRegex(rre.EvalError, "min_mean must be"):
            rre.score_run({"q1": ["d"]}, {"q1": ["d"]}, "RR", min_mean={"RR": "high"})


# Issue 52's pinned label pairs (made in a scratch environment outside the repository; see
# LabelAgreementTest): {case: (reference, candidate)} of /tmp/w52/cases, copied as they were.
LABEL_CASES = {
    "L02_all_one_grade": ({"q1": {"d000": 1, "d002": 1, "d004": 1, "d006": 1},
                           "q2": {"d001": 1, "d003": 1, "d005": 1, "d007": 1}},
                          {"q1": {"d000": 1, "d002": 1, "d004": 1, "d006": 1},
                           "q2": {"d001": 1, "d003": 1, "d005": 1, "d007": 1}}),
    "L03_ref_one_grade": ({"q1": {"d000": 0, "d002": 0, "d004": 0, "d006": 0},
                           "q2": {"d001": 0, "d003": 0, "d005": 0, "d007": 0}},
                          {"q1": {"d000": 0, "d002": 1, "d004": 2, "d006": 0},
                           "q2": {"d001": 0, "d003": 0, "d005": 0, "d007": 3}}),
    "L04_grades_013_no_2": ({"q1": {"d000": 0, "d002": 1, "d004": 3, "d006": 0, "d008": 3, "d010": 0},
                             "q2": {"d001": 0, "d003": 1, "d005": 3, "d007": 1, "d009": 3, "d011": 1}},
                            {"q1": {"d000": 0, "d002": 1, "d004": 3, "d006": 0, "d008": 3, "d010": 3},
                             "q2": {"d001": 1, "d003": 3, "d005": 1, "d007": 0, "d009": 1, "d011": 1}}),
    "L05_cand_never_2": ({"q1": {"d000": 0, "d002": 2, "d004": 3, "d006": 1, "d008": 3, "d010": 1},
                          "q2": {"d001": 1, "d003": 2, "d005": 2, "d007": 0, "d009": 2, "d011": 0}},
                         {"q1": {"d000": 0, "d002": 1, "d004": 3, "d006": 1, "d008": 3, "d010": 0},
                          "q2": {"d001": 1, "d003": 3, "d005": 3, "d007": 0, "d009": 1, "d011": 1}}),
    "L06_one_side_only": ({"q1": {"d000": 0, "d002": 2, "d004": 1, "only_ref_a": 2},
                           "q2": {"d001": 1, "d003": 3, "d005": 2, "only_ref_b": 0},
                           "q9_ref_only_query": {"x1": 1, "x2": 0}},
                          {"q1": {"d000": 0, "d002": 2, "d004": 0, "only_cand_a": 3},
                           "q2": {"d001": 2, "d003": 3, "d005": 2}, "q8_cand_only_query": {"y1": 2}}),
    "L07_negative_grades": ({"q1": {"d000": -1, "d002": 0, "d004": 1, "d006": 2, "d008": -1, "d010": 1},
                             "q2": {"d001": -1, "d003": 0, "d005": 1, "d007": 2, "d009": 0, "d011": 2}},
                            {"q1": {"d000": -1, "d002": 0, "d004": 1, "d006": 2, "d008": 0, "d010": 1},
                             "q2": {"d001": 0, "d003": -1, "d005": 2, "d007": 1, "d009": 0, "d011": 2}}),
    "L08_single_pair_agree": ({"q1": {"d1": 2}}, {"q1": {"d1": 2}}),
    "L09_single_pair_disagree": ({"q1": {"d1": 0}}, {"q1": {"d1": 3}}),
    "L10_llmjudge_lenient": (
        {"q1": {"d000": 3, "d004": 1, "d008": 3, "d012": 1, "d016": 0, "d020": 1, "d024": 0, "d028": 0,
                "d032": 0, "d036": 0},
         "q2": {"d001": 1, "d005": 0, "d009": 1, "d013": 0, "d017": 1, "d021": 0, "d025": 0, "d029": 1,
                "d033": 2, "d037": 2},
         "q3": {"d002": 3, "d006": 0, "d010": 0, "d014": 1, "d018": 2, "d022": 2, "d026": 1, "d030": 1,
                "d034": 0, "d038": 3},
         "q4": {"d003": 0, "d007": 0, "d011": 0, "d015": 0, "d019": 3, "d023": 1, "d027": 1, "d031": 0,
                "d035": 2, "d039": 1}},
        {"q1": {"d000": 3, "d004": 2, "d008": 3, "d012": 1, "d016": 0, "d020": 1, "d024": 0, "d028": 0,
                "d032": 0, "d036": 1},
         "q2": {"d001": 1, "d005": 1, "d009": 1, "d013": 1, "d017": 1, "d021": 0, "d025": 1, "d029": 1,
                "d033": 2, "d037": 3},
         "q3": {"d002": 3, "d006": 1, "d010": 0, "d014": 1, "d018": 2, "d022": 2, "d026": 2, "d030": 1,
                "d034": 0, "d038": 3},
         "q4": {"d003": 1, "d007": 0, "d011": 1, "d015": 1, "d019": 3, "d023": 2, "d027": 1, "d031": 1,
                "d035": 3, "d039": 1}}),
    "L11_binary": ({"q1": {"d000": 0, "d002": 0, "d004": 1, "d006": 1, "d008": 1},
                    "q2": {"d001": 0, "d003": 0, "d005": 1, "d007": 0, "d009": 0}},
                   {"q1": {"d000": 0, "d002": 1, "d004": 1, "d006": 1, "d008": 1},
                    "q2": {"d001": 0, "d003": 0, "d005": 0, "d007": 0, "d009": 1}}),
    "L12_reversed": ({"q1": {"d000": 0, "d002": 2, "d004": 0, "d006": 2, "d008": 3},
                      "q2": {"d001": 1, "d003": 3, "d005": 1, "d007": 3, "d009": 0}},
                     {"q1": {"d000": 3, "d002": 1, "d004": 3, "d006": 1, "d008": 0},
                      "q2": {"d001": 2, "d003": 0, "d005": 2, "d007": 0, "d009": 3}}),
}
# {case: (pairs, exact, leniency, kappa, kappa_linear, kappa_quadratic, {t: binarised kappa}, ordinal
# alpha)}: scikit-learn 1.9.1 cohen_kappa_score(reference, candidate, weights=None, "linear",
# "quadratic"), of (reference >= t, candidate >= t) too; krippendorff 0.9.0 alpha(reliability_data=
# [reference, candidate], level_of_measurement="ordinal"); None where scikit-learn gives nan or
# krippendorff raises ("There has to be more than one value in the domain"); pairs, exact and
# leniency by hand.  scikit-learn's weights go by the grades' places among those seen (L04: its
# linear 0.322581, where weights by grade value give 0.297872).
LABEL_PINS = {
    "L02_all_one_grade": (8, 1.0, 0.0, None, None, None, {}, None),
    "L03_ref_one_grade": (8, 0.625, 0.75, 0.0, 0.0, 0.0, {"1": 0.0, "2": 0.0, "3": 0.0},
                          -0.15110759493670867),
    "L04_grades_013_no_2": (12, 0.5, 1 / 12, 0.25, 0.32258064516129037, 0.4, {"1": 0.4, "3": 0.25},
                            0.4203022875816994),
    "L05_cand_never_2": (12, 0.5, 0.0, 0.3571428571428572, 0.6043956043956045, 0.7988826815642458,
                         {"1": 0.5555555555555556, "2": 0.6666666666666667, "3": 0.5714285714285714},
                         0.8025905118601748),
    "L06_one_side_only": (6, 2 / 3, 0.0, 0.5555555555555556, 0.7142857142857143, 0.8461538461538461,
                          {"1": 0.5714285714285714, "2": 0.6666666666666667, "3": 1.0},
                          0.8695512820512821),
    # t=0 is not pinned (scikit-learn was asked at 1, 2 and 3; at 3 nobody reaches it: nan)
    "L07_negative_grades": (12, 7 / 12, 1 / 12, 0.4444444444444444, 0.6551724137931034,
                            0.8214285714285714, {"1": 1.0, "2": 0.5555555555555556}, 0.8398328690807799),
    "L08_single_pair_agree": (1, 1.0, 0.0, None, None, None, {}, None),
    "L09_single_pair_disagree": (1, 0.0, 3.0, 0.0, 0.0, 0.0, {"3": 0.0}, 0.0),
    "L10_llmjudge_lenient": (40, 0.65, 0.35, 0.5138888888888888, 0.6885428253615128, 0.835680751173709,
                             {"1": 0.5054945054945055, "2": 0.8181818181818181, "3": 0.8048780487804879},
                             0.7694186599442403),
    "L11_binary": (10, 0.7, 0.1, 0.4, 0.4, 0.4, {"1": 0.4}, 0.4242424242424243),
    "L12_reversed": (10, 0.0, 0.0, -0.3513513513513513, -0.6417910447761193, -1.0,
                     {"1": -0.4285714285714286, "2": -1.0, "3": -0.4285714285714286}, -0.9000000000000004),
}
# {case: (the runs' means on the reference labels, on the candidate's, tau-b, tau_AP)}: scipy
# 1.17.1 kendalltau(reference, candidate, variant="b").statistic and pyircor 0.2.0 tauap(x=reference,
# y=candidate) (= the paper's formula by hand); None where scipy gives nan or pyircor raises on ties.
RUN_ORDER_PINS = {
    "R01_same_order": ([0.61, 0.55, 0.5, 0.42, 0.3, 0.21], [0.7, 0.64, 0.52, 0.4, 0.35, 0.1],
                       0.9999999999999999, 1.0000000000000004),
    "R02_swap_top": ([0.61, 0.55, 0.5, 0.42, 0.3, 0.21], [0.54, 0.6, 0.49, 0.41, 0.31, 0.2],
                     0.8666666666666666, 0.6000000000000003),
    "R03_swap_bottom": ([0.61, 0.55, 0.5, 0.42, 0.3, 0.21], [0.62, 0.56, 0.49, 0.43, 0.2, 0.31],
                        0.8666666666666666, 0.9200000000000004),
    "R04_reversed": ([0.5, 0.4, 0.3, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4, 0.5], -0.9999999999999999, -1.0),
    "R05_ties_in_candidate": ([0.61, 0.55, 0.5, 0.42, 0.3, 0.21], [0.6, 0.5, 0.5, 0.41, 0.25, 0.25],
                              0.9309493362512627, None),
    "R06_ties_both": ([0.6, 0.6, 0.5, 0.42, 0.3, 0.21], [0.61, 0.58, 0.45, 0.45, 0.2, 0.3],
                      0.7857142857142858, None),
    "R07_two_runs_swap": ([0.4, 0.35], [0.33, 0.38], -1.0, -1.0),
    "R08_two_runs_agree": ([0.4, 0.35], [0.38, 0.33], 1.0, 1.0),
    "R09_candidate_all_tied": ([0.5, 0.4, 0.3, 0.2], [0.3, 0.3, 0.3, 0.3], None, None),
    "R10_random_8": ([0.3134, 0.6811, 0.2632, 0.5524, 0.2426, 0.3237, 0.6996, 0.3047],
                     [0.2716, 0.6294, 0.1961, 0.5728, 0.2827, 0.4294, 0.7367, 0.3281],
                     0.7857142857142856, 0.8639455782312926),
}


def label_cells(reference, candidate):
    """The confusion matrix {(reference grade, candidate grade): pairs} of two labels."""
    cells = {}
    for qid, docs in reference.items():
        for doc, grade in docs.items():
            if doc in candidate.get(qid, {}):
                pair = grade, candidate[qid][doc]
                cells[pair] = cells.get(pair, 0) + 1
    return cells


class AgreementAsChangeTest(TempDirTestCase):
    """Issue 48: agreement measures are read as agreement (a change, with no test and no Holm
    family), the label-free command takes logs that carry labels, and floors refuse what they
    cannot read."""

    def six(self):
        """Six queries that all lose their one relevant document: R@3's sign-flip p is 2/64."""
        qrels = self.write("qrels.json", {"q%d" % i: ["a"] for i in range(6)})
        base = self.write("base.json", {"q%d" % i: ["a", "b", "c"] for i in range(6)})
        cand = self.write("cand.json", {"q%d" % i: ["b", "c", "d"] for i in range(6)})
        return qrels, cand, base

    def test_no_p_no_holm_family_no_star_and_the_reason_once(self):
        qrels, cand, base = self.six()
        status, out, err = cli("--qrels", qrels, "--run", cand, "--baseline", base, "-m", "RBO,R@3,Overlap@2",
                               "--min-mean", "P@1=0")
        self.assertEqual(status, 0, err)
        comparison = json.loads(out)["comparison"]
        rbo = comparison["RBO"]
        self.assertEqual((rbo["p_value"], rbo["p_holm"], list(rbo["changed"])), (None, None, ["q%d" % i for i in range(6)]))
        self.assertNotIn("regressed", rbo)
        self.assertNotIn("improved", rbo)
        self.assertEqual(comparison["R@3"]["p_value"], 2 / 64)
        self.assertEqual(comparison["R@3"]["p_holm"], 2 / 64)  # a family of one: not 3 x 2/64
        # floor only
        self.assertEqual((comparison["P@1"]["p_value"], comparison["P@1"]["p_holm"]), (2 / 64, None))
        self.assertEqual(err.count("no sign-flip p-value (p_value null)"), 1)
        self.assertIn("note: RBO, Overlap@2: agreement with the baseline", err)
        self.assertIn("note: P@1: asked for by a floor only, in no Holm family", err)

    def test_every_report_says_changed_most_and_stars_no_agreement(self):
        qrels, cand, base = self.six()
        groups = self.write("groups.txt", "".join("q%d G\n" % i for i in range(6)))
        args = ["--qrels", qrels, "--run", cand, "--baseline", base, "-m", "RBO,R@3"]
        table = cli(*args, "--format", "table")[1]
        self.assertRegex(table, r"RBO +1\.0000 +0\.\d{4} +-0\.\d{4} +\[-0\.\d{4}, "
                                r"-0\.\d{4}\] +- +-\n")
        self.assertIn("worst regressed queries:\n  R@3  q0", table)
        self.assertIn("changed most (agreement with the baseline):\n  RBO  q0  1.0000 ->", table)
        self.assertIn("shown, of the changed queries: RBO 5 of 6", table)
        markdown = cli(*args, "--format", "markdown")[1]
        self.assertIn("Changed most (agreement with the baseline):", markdown)
        self.assertIn("| RBO | 1.0000 |", markdown)
        self.assertRegex(markdown, r"\| RBO \| [^\n]* \| - \| - \|")
        only = cli("--run", cand, "--baseline", base, "-m", "RBO", "--format", "table")[1]
        self.assertNotIn("regressed", only)
        grouped = cli(*args, "--groups", groups, "--format", "table")[1]
        self.assertRegex(grouped, r"G +6 +0\.\d{4} \(-0\.\d{4}\) +0\.0000 "
                                  r"\(-1\.0000\)\*")  # R@3 only
        status, out, err = cli("--run", cand, "--run", base, "--baseline", base, "-m", "RBO", "--format", "table")
        self.assertNotIn("*", out.splitlines()[2])
        self.assertEqual(err.count("agreement with the baseline"), 1)  # once for the runs
        status, out, err = cli("--run", cand, "--baseline", base, "-m", "RBO", "--max-query-drop", "0.2")
        self.assertEqual(status, 1, err)
        self.assertEqual([b["query"] for b in json.loads(out)["breaches"]], ["q%d" % i for i in range(6)])

    def test_the_label_free_command_takes_logs_that_carry_labels(self):
        log = '{"query_id": "%s", "retrieved_ids": %s, "expected_ids": ["a"]}\n'
        new = self.write("new.jsonl", log % ("q1", '["a", "c"]') + log % ("q2", '["c"]'))
        old = self.write("old.jsonl", log % ("q1", '["b", "a"]') + log % ("q2", '["c"]'))
        for baseline, expected in ((old, 0.5), (new, 1.0)):
            status, out, err = cli("--run", new, "--baseline", baseline, "-m", "Overlap@2")
            self.assertEqual(status, 0, err)
            self.assertEqual(json.loads(out)["per_query"]["q1"]["Overlap@2"], expected)
        qrels = self.write("qrels.txt", "q1 0 b 1\nq2 0 b 1\n")
        rejected(self, *cli("--qrels", qrels, "--run", new, "--baseline", old, "-m", "Overlap@1,R@1"),
                 # labels given: still checked
                 "the baseline's labels differ from the candidate's")

    def test_floors_read_as_they_are_and_rejections(self):
        qrels, cand, base = self.six()
        status, out, err = cli("--qrels", qrels, "--run", cand, "--min-mean", "NumRet=20", "--min-mean", "GMAP=0.5")
        self.assertEqual(status, 1, err)
        self.assertIn("gate failed: NumRet sum: 18 (below --min-mean 20.0)", err)
        self.assertIn("gate failed: GMAP geometric mean: 0.0000 (below --min-mean 0.5)", err)
        for args, fragments in (
                (["--run", cand, "--baseline", base, "-m", "RBO", "--no-answer", qrels],
                 ["--no-answer acts on labels, and agreement measures read none"]),
                (["--run", cand, "--baseline", base, "-m", "RBO,Overlap@2", "--unlabeled", "skip"],
                 ["--unlabeled acts on labels", "add a label measure"]),
                (["--run", cand, "--baseline", base, "-m", "RBO", "--relevance-level", "2"], ["--relevance-level"]),
                (["--run", cand, "--baseline", base, "-m", "RBO", "--explain"], ["--explain acts on"]),
                (["--run", cand, "--baseline", base, "-m", "RBO", "--empty-labels", "no-answer"],
                 ["--empty-labels acts on labels"]),
                (["--qrels", qrels, "--run", cand, "--min-mean", "R@3=1e400"], ["a floor is MEASURE=X", "1e400"]),
                (["--qrels", qrels, "--run", cand, "--min-query", "R@3=-1e999"], ["a floor is MEASURE=X"]),
                (["--qrels", qrels, "--run", cand, "--min-mean", "NumRet=3", "--gate-on", "interval"],
                 ["--gate-on interval reads the 95% interval of a mean", "NumRet is a sum"]),
                (["--qrels", qrels, "--run", cand, "--min-mean", "GMAP=0.1", "--gate-on", "noninferiority"],
                 ["GMAP is a geometric mean"])):
            with self.subTest(args):
                rejected(self, *cli(*args), *fragments)
        self.assertEqual(cli("--qrels", qrels, "--run", cand, "--baseline", base, "-m", "RBO,R@3", "--unlabeled",
                             "skip")[0], 0)  # a label measure reads them

    def test_groups_clusters_missing_runs_duplicates_and_folds_beside_agreement(self):
        cand = self.write("cand.json", {"q1": ["a", "a#2", "b", "a"], "q2": ["x"], "q4": ["z"]})
        base = self.write("base.json", {"q1": ["b", "a"], "q2": ["x"], "q5": ["z"]})
        args = ["--run", cand, "--baseline", base, "-m", "Overlap@2", "--missing-run", "zero", "--duplicates", "first",
                "--chunk-separator", "#"]
        unknown = self.write("groups.txt", "q1 A\nq9 A\n")  # q9: no labels, and no run ranks it
        for flag in ("--groups", "--clusters"):
            with self.subTest(flag):
                rejected(self, *cli(*args, flag, unknown), "groups.txt:2", "'q9'", "no labels and no ranking")
        with self.assertRaisesRegex(rre.EvalError, "'q9'.*no labels and no ranking"):
            rre.compare_runs(None, {"q1": ["a"]}, {"q1": ["a"]}, "RBO", groups={"A": ["q1", "q9"]})
        known = self.write("known.txt", "q1 A\nq4 A\nq5 B\n")  # ranked by one of them: known
        status, out, err = cli(*args, "--groups", known, "--clusters", known)
        self.assertEqual(status, 0, err)
        result = json.loads(out)
        self.assertEqual((result["zeroed"]["missing_run"], result["baseline_zeroed"]["missing_run"]), (["q5"], ["q4"]))
        self.assertIn("note: the baseline has no ranking for 1 query ('q4'): scored as empty", err)
        self.assertEqual((result["deduplicated"], result["folded"]["per_query"]), ({"q1": 1}, {"q1": 1}))
        self.assertIn("--duplicates first removed 1 repeated document from 1 query ('q1')", err)
        self.assertEqual(result["groups"]["A"]["members"], ["q1", "q4"])

    def test_the_plot_draws_mean_overlap_over_k_in_every_mode(self):
        import xml.etree.ElementTree as ET
        qrels, cand, base = self.six()  # cand b c d, base a b c: Overlap@1 0, @2 1/2, @3 2/3
        # q9: unlabeled
        extra = self.write("extra.json", dict(json.loads(Path(cand).read_text()), q9=["a"]))
        groups = self.write("groups.txt", "q0 G\nq9 G\n")
        plot = self.tmp / "p.svg"
        for args, top in ((["--run", cand, "-m", "Overlap@3"], 3), (["--run", cand, "-m", "RBO"], 10),
                          (["--qrels", qrels, "--run", extra, "--run", cand, "-m", "R@2,Jaccard@4",
                            "--missing-run", "skip"], 4),
                          (["--qrels", qrels, "--run", extra, "-m", "Overlap@3,R@1", "--groups", groups,
                            "--missing-run", "zero"], 3)):
            with self.subTest(args):
                status, _, err = cli(*args, "--baseline", base, "--plot", plot)
                self.assertEqual(status, 0, err)
                root = ET.parse(str(plot)).getroot()
                panel = next(g for g in root.iter("{http://www.w3.org/2000/svg}g")
                             if g.get("aria-label") == "Overlap@k over k")
                lines = [[tuple(map(float, p.split(","))) for p in line.get("points").split()]
                         for line in panel.iter("{http://www.w3.org/2000/svg}polyline")]
                self.assertEqual(len(lines[0]), top)
                one = lines[0][0][1]  # the baseline's, 1 at every k
                means = [round(1 - (y - one) / rre._PANEL, 3) for _, y in lines[1]]
                # q9, which the baseline lacks, scores 0 against nothing
                share = 6 / 7 if "zero" in args else 1
                self.assertEqual(means, [round(m * share, 3) for m in [0.0, 0.5] + [2 / 3] * (top - 2)])
        cli("--run", cand, "-m", "RBO,R@1", "--qrels", qrels, "--baseline", base, "--plot", plot)
        titles = [t.text for t in ET.parse(str(plot)).getroot().iter("{http://www.w3.org/2000/svg}text")
                  if t.text and "per query (" in t.text]  # a change, not worse: only R@1 worsens
        self.assertEqual([t.rpartition("(")[2] for t in titles], ["6 changed, 0 the same)",
                                                                  "6 worse, 0 better, 0 the same)"])

    def test_library_floors_of_any_real_type_are_floats(self):
        run = {"q1": ["d"], "q2": ["x"]}
        result = rre.score_run(run, run, "RR", min_mean={"RR": fractions.Fraction(1, 3)}, min_query={"RR": 1})
        self.assertEqual(result["floors"], {"min_mean": {"RR": 1 / 3}, "min_query": {"RR": 1.0}})
        self.assertEqual(type(result["floors"]["min_query"]["RR"]), float)
        json.dumps(result)
        for floor in (fractions.Fraction(10 ** 400), 10 ** 400, math.inf, True):
            with self.subTest(floor=floor), self.assertRaisesRegex(rre.EvalError, "min_mean must be"):
                rre.score_run(run, run, "RR", min_mean={"RR": floor})
        with self.assertRaisesRegex(rre.EvalError, "min_mean must be"):  # each floor, not one
            rre.score_run(run, run, "RR", min_mean={"RR": 0.5, "R@1": "high"})


class LabelAgreementTest(unittest.TestCase):
    """Issue 52's statistics of two label sources against independent implementations: the pins
    of LABEL_PINS and RUN_ORDER_PINS (scikit-learn 1.9.1, krippendorff 0.9.0, scipy 1.17.1, pyircor
    0.2.0, run outside the repository), and tau_AP by its definition on hand cases."""

    def close(self, mine, pinned, what):
        if pinned is None:
            self.assertIsNone(mine, what)
        else:
            self.assertIsNotNone(mine, what)
            self.assertAlmostEqual(mine, pinned, delta=1e-12, msg=what)

    def test_the_agreement_block_matches_scikit_learn_and_krippendorff(self):
        names = ("pairs", "exact", "leniency", "kappa", "kappa_linear", "kappa_quadratic")
        for case, (reference, candidate) in LABEL_CASES.items():
            block = rre.compare_labels(reference, candidate)["label_agreement"]
            *numbers, at, alpha = LABEL_PINS[case]
            with self.subTest(case):
                self.assertEqual(block["pairs"], numbers[0])
                for name, pinned in zip(names[1:], numbers[1:]):
                    self.close(block[name], pinned, name)
                self.close(block["alpha_ordinal"], alpha, "alpha_ordinal")
                # every grade seen but the lowest, and no other (L07's t=0 is not pinned)
                self.assertEqual(sorted(block["kappa_at"], key=int),
                                 [str(g) for g in block["grades"][1:]])
                for t, pinned in at.items():
                    self.close(block["kappa_at"][t], pinned, "kappa_at " + t)

    def test_the_functions_on_a_confusion_matrix(self):
        for case, (reference, candidate) in LABEL_CASES.items():
            cells = label_cells(reference, candidate)
            _, _, _, *kappas, at, alpha = LABEL_PINS[case]
            with self.subTest(case):
                pairs = [pair for pair, n in cells.items() for _ in range(n)]
                self.close(rre.graded_alike(pairs)["kappa"], kappas[0], "graded_alike")
                # unweighted: weight 1 where the places differ
                self.close(rre.kappa(cells, lambda i, j: i != j), kappas[0], "kappa")
                for name, pinned in zip(("kappa_linear", "kappa_quadratic"), kappas[1:]):
                    self.close(rre.kappa(cells, rre.KAPPAS[name]), pinned, name)
                for t, pinned in at.items():
                    binary = [(a >= int(t), b >= int(t)) for a, b in pairs]
                    self.close(rre.graded_alike(binary)["kappa"], pinned, t)
                self.close(rre.ordinal_alpha(cells), alpha, "alpha")
                # the same cells both ways round: kappa is symmetric (scikit-learn's check)
                swapped = {(b, a): n for (a, b), n in cells.items()}
                self.close(rre.kappa(swapped, rre.KAPPAS["kappa_quadratic"]), kappas[2], "swapped")

    def test_weights_go_by_the_grades_places_not_their_values(self):
        reference, candidate = LABEL_CASES["L04_grades_013_no_2"]
        # grade 3 renamed 2: the same places, the same kappas (values would give 0.297872)
        two = [{q: {d: 2 if g == 3 else g for d, g in docs.items()} for q, docs in labels.items()}
               for labels in (reference, candidate)]
        block = rre.compare_labels(*two)["label_agreement"]
        self.close(block["kappa_linear"], 0.32258064516129037, "linear")
        self.close(block["kappa_quadratic"], 0.4, "quadratic")
        self.assertEqual(block["grades"], [0, 1, 2])

    def test_confusion_per_grade_and_per_query_of_a_candidate_that_never_says_two(self):
        block = rre.compare_labels(*LABEL_CASES["L05_cand_never_2"])["label_agreement"]
        # scikit-learn confusion_matrix(reference, candidate): rows the reference's grades
        matrix = [[2, 1, 0, 0], [1, 2, 0, 0], [0, 2, 0, 2], [0, 0, 0, 2]]
        self.assertEqual(block["confusion"], {str(g): {str(h): matrix[g][h] for h in range(4)}
                                              for g in range(4)})
        # precision_recall_fscore_support(zero_division=nan): precision of 2 undefined, not 0
        self.assertEqual(block["per_grade"], {
            "0": {"precision": 2 / 3, "recall": 2 / 3}, "1": {"precision": 0.4, "recall": 2 / 3},
            "2": {"precision": None, "recall": 0.0}, "3": {"precision": 0.5, "recall": 1.0}})
        per_query = block["per_query"]
        self.assertEqual(sorted(per_query), ["q1", "q2"])
        self.close(per_query["q1"]["kappa"], 0.5384615384615384, "q1")
        self.close(per_query["q2"]["kappa"], 0.22580645161290325, "q2")
        self.close(per_query["q1"]["leniency"], -1 / 3, "q1 leniency")
        self.assertEqual((per_query["q2"]["pairs"], per_query["q2"]["exact"]), (6, 2 / 6))

    def test_pairs_one_source_labels_are_counted_not_dropped(self):
        block = rre.compare_labels(*LABEL_CASES["L06_one_side_only"])["label_agreement"]
        self.assertEqual([block[k] for k in ("pairs", "reference_only", "queries_reference_only",
                                             "candidate_only", "queries_candidate_only")],
                         [6, 4, 1, 2, 1])
        self.assertEqual(list(block["per_query"]), ["q1", "q2"])

    def test_tau_b_and_tau_ap_match_scipy_and_pyircor(self):
        for case, (reference, candidate, b, ap) in RUN_ORDER_PINS.items():
            with self.subTest(case):
                self.close(rre.tau_b(reference, candidate), b, "tau_b")
                self.close(rre.tau_ap(reference, candidate), ap, "tau_ap")
        # tau_AP is not symmetric: the reference's order is the truth (pyircor tauap(x=candidate,
        # y=reference) gives 0.8612244897959189)
        reference, candidate, _, _ = RUN_ORDER_PINS["R10_random_8"]
        self.close(rre.tau_ap(candidate, reference), 0.8612244897959183, "reversed")

    def test_tau_ap_by_its_definition_weighs_a_swap_at_the_top_most(self):
        truth = [4, 3, 2, 1]
        # down the other order: top swap b a c d: 0/1, 2/2, 3/3; bottom swap a b d c: 1, 1, 2/3
        self.close(rre.tau_ap(truth, [3, 4, 2, 1]), 2 * (0 + 1 + 1) / 3 - 1, "top")
        self.close(rre.tau_ap(truth, [4, 3, 1, 2]), 2 * (1 + 1 + 2 / 3) / 3 - 1, "bottom")
        # tau-b sees one discordant pair of six either way: (5 - 1) / 6
        self.assertEqual(rre.tau_b(truth, [3, 4, 2, 1]), rre.tau_b(truth, [4, 3, 1, 2]))
        self.close(rre.tau_b(truth, [3, 4, 2, 1]), 2 / 3, "tau_b")
        # one run, or ties on either side: no tau_AP; every run tied on one side: no tau-b
        for x, y in (([1], [1]), ([2, 2, 1], [3, 2, 1]), ([3, 2, 1], [2, 2, 1])):
            self.assertIsNone(rre.tau_ap(x, y), (x, y))
        self.assertIsNone(rre.tau_b([3, 2, 1], [1, 1, 1]))
        self.assertIsNotNone(rre.tau_b([3, 2, 1], [2, 2, 1]))


class RagRealitiesTest(TempDirTestCase):
    """Chunk folding, ID mismatch hints, tie bounds and bootstrap intervals, through the CLI."""

    def run_cli(self, data, *args):
        status, out, err = cli(self.write("f.json", data), *args)
        return status, (json.loads(out) if out else None), err

    def test_folding_keeps_each_document_at_its_first_rank(self):
        # q1: chunks a#3, b#1, a#1, c#2 -> documents a, b, c; the relevant c is at rank 3, not 4
        data = {"qrels": {"q1": {"c": 1, "a": 0}}, "runs": {"q1": ["a#3", "b#1", "a#1", "c#2"]}}
        status, result, err = self.run_cli(data, "-m", "RR,NumRet", "--chunk-separator", "#")
        self.assertEqual((status, err), (0, ""))
        self.assertEqual(result["per_query"]["q1"], {"RR": 1 / 3, "NumRet": 3})
        self.assertEqual(result["folded"], {"total": 1, "per_query": {"q1": 1}})

    def test_folding_scored_chunks_follows_trec_order(self):
        # scores order b#9 (5), a#2 (4), a#1 (4, "a#1" < "a#2" so later), c (1)
        data = {"qrels": {"q1": {"a": 1, "c": 1}},
                "runs": {"q1": {"a#1": 4.0, "c": 1.0, "b#9": 5.0, "a#2": 4.0}}}
        status, result, _ = self.run_cli(data, "-m", "AP", "--chunk-separator", "#")
        self.assertEqual(result["per_query"]["q1"]["AP"], (1 / 2 + 2 / 3) / 2)  # a at 2, c at 3

    def test_fixture_baseline_with_chunks_is_compared_on_folded_labels(self):
        data = {"qrels": {"q1": {"a#1": 1, "a#2": 1}}, "runs": {"q1": ["b#1", "a#5"]}}
        base = self.write("base.json", dict(data, runs={"q1": ["a#5"]}))
        status, out, err = cli(self.write("cand.json", data), "--baseline", base, "-m", "RR",
                               "--chunk-separator", "#")
        self.assertEqual((status, err), (0, ""), err)
        self.assertEqual(json.loads(out)["comparison"]["RR"]["delta"], -0.5)

    def test_labels_fold_too_and_clashes_are_refused(self):
        agree = {"qrels": {"q1": {"a#1": 1, "a#2": 1}}, "runs": {"q1": ["a#5"]}}
        status, result, _ = self.run_cli(agree, "-m", "NumRel,R@1", "--chunk-separator", "#")
        self.assertEqual(result["per_query"]["q1"], {"NumRel": 1, "R@1": 1.0})
        clash = {"qrels": {"q1": {"a#1": 2, "a#2": 0}}, "runs": {"q1": ["a#5"]}}
        status, result, err = self.run_cli(clash, "--chunk-separator", "#")
        self.assertEqual((status, result), (2, None))
        self.assertIn("query 'q1': labels 'a#1' (grade 2) and 'a#2' (grade 0) are one document 'a'", err)
        self.assertEqual(len(err.splitlines()), 1)

    def test_mismatch_hints(self):
        qrels = {"q%d" % i: {"doc%d" % i: 1} for i in range(12)}
        cases = {
            "chunks": ({q: ["doc%s#%d" % (q[1:], c) for c in range(3)] for q in qrels},
                       "try --chunk-separator '#'"),
            "case": ({q: ["DOC%s" % q[1:]] for q in qrels}, "differ in letter case"),
            "prefix": ({q: ["%s" % q[1:]] for q in qrels}, "labeled IDs start with 'doc'"),
            "nothing alike": ({q: ["zz"] for q in qrels},
                              "no query retrieved any labeled document"),
        }
        for name, (runs, hint) in cases.items():
            with self.subTest(name):
                status, result, err = self.run_cli({"qrels": qrels, "runs": runs}, "-m", "RR")
                self.assertEqual(status, 0)
                self.assertEqual(len(err.splitlines()), 1, err)
                self.assertIn(hint, err)
                self.assertEqual(result["warnings"], [err.strip()[len("rag_retrieval_eval: "):]])

    def test_the_cause_that_matches_most_misses_is_named(self):
        qrels = {"q%d" % i: {"doc%d" % i: 1} for i in range(10)}
        # five hits; misses: three in upper case, two without prefix
        runs = {q: ["doc%s" % q[1:]] for q in qrels}
        runs.update({"q5": ["DOC5"], "q6": ["DOC6"], "q7": ["DOC7"], "q8": ["8"], "q9": ["9"]})
        status, result, err = self.run_cli({"qrels": qrels, "runs": runs}, "-m", "RR")
        self.assertIn("warning: 5 of 10 queries retrieved no labeled document; ranked and labeled IDs differ in "
                      "letter case", err)
        runs.update({"q5": ["5"], "q6": ["6"]})  # two of five: still a cause, below three: none
        self.assertNotIn("letter case", self.run_cli({"qrels": qrels, "runs": runs}, "-m", "RR")[2])
        self.assertIn("start with 'doc'", self.run_cli({"qrels": qrels, "runs": runs}, "-m", "RR")[2])
        # one query in ten, and no cause of 3
        runs.update({"q5": ["doc5"], "q6": ["doc6"], "q7": ["doc7"]})
        self.assertEqual(self.run_cli({"qrels": qrels, "runs": runs}, "-m", "RR")[1]["warnings"], [])

    def test_seed_mode_warns_on_stderr_and_keeps_its_stdout_shape(self):
        data = {"qrels": {"q1": ["d1"], "q2": ["d2"]}, "runs": {"q1": ["d1#0"], "q2": ["d2#4"]}}
        status, out, err = cli(self.write("seed.json", data), "--k", "3")
        self.assertEqual(status, 0)
        self.assertEqual(list(json.loads(out)), ["k", "queries", "mean_recall_at_k", "mrr_at_k", "per_query"])
        self.assertIn("try --chunk-separator '#'", err)

    def test_healthy_run_is_silent(self):
        status, out, err = cli(FIXTURE, "-m", "RR")
        self.assertEqual((status, err), (0, ""))
        self.assertEqual(json.loads(out)["warnings"], [])

    def test_tie_bounds_equal_hand_reordered_runs(self):
        # q1: d1 d2 d3 tied at 1.0 (trec order d3, d2, d1), d4 above; relevant d1 (2), d2 (1)
        qrels = {"q1": {"d1": 2, "d2": 1, "d9": 1}, "q2": {"e1": 1}}
        scored = {"q1": {"d1": 1.0, "d2": 1.0, "d3": 1.0, "d4": 2.0}, "q2": {"e1": 3.0, "e2": 1.0}}
        best = {"q1": ["d4", "d1", "d2", "d3"], "q2": ["e1", "e2"]}
        worst = {"q1": ["d4", "d3", "d2", "d1"], "q2": ["e1", "e2"]}
        measures = "RR,AP,nDCG@3,R@2,P@3,Judged@2"
        _, result, _ = self.run_cli({"qrels": qrels, "runs": scored}, "-m", measures, "--ties")
        _, high, _ = self.run_cli({"qrels": qrels, "runs": best}, "-m", measures)
        _, low, _ = self.run_cli({"qrels": qrels, "runs": worst}, "-m", measures)
        for name, bounds in result["ties"]["measures"].items():
            with self.subTest(name):
                self.assertAlmostEqual(bounds["high"], high["measures"][name], places=15)
                self.assertAlmostEqual(bounds["low"], low["measures"][name], places=15)
                self.assertTrue(bounds["low"] <= result["measures"][name] <= bounds["high"])
        self.assertEqual(result["ties"]["queries"], ["q1"])

    def test_tie_bounds_are_flagged_in_the_table(self):
        data = {"qrels": {"q1": ["a"]}, "runs": {"q1": {"a": 1.0, "b": 1.0}}}
        status, out, _ = cli(self.write("t.json", data), "-m", "RR,NumRet", "--ties", "--format", "table")
        self.assertIn("query             RR*  NumRet\nall            0.5000       2\n", out)
        self.assertIn("ties: highest  1.0000       2\n1 query evaluated\n", out)
        self.assertIn("ties: lowest   0.5000", out)
        self.assertIn("* depends on the order of tied scores in 1 query: 'q1'", out)

    def test_bootstrap_intervals_contain_the_mean_shrink_and_repeat(self):
        def data(copies):
            qrels = {"q%d_%d" % (i, c): ["a"] for c in range(copies) for i in range(4)}
            runs = {"q%d_%d" % (i, c): ["a"] if i % 2 else ["b", "a"] for c in range(copies) for i in range(4)}
            return {"qrels": qrels, "runs": runs}
        widths = []
        for copies in (1, 16):
            _, result, _ = self.run_cli(data(copies), "-m", "RR,NumRet", "--ci", "--seed", "3")
            low, high = result["ci95"]["RR"]
            self.assertTrue(low <= result["measures"]["RR"] <= high)
            self.assertNotIn("NumRet", result["ci95"])  # a sum has no mean to bound
            widths.append(high - low)
            again = self.run_cli(data(copies), "-m", "RR,NumRet", "--ci", "--seed", "3")[1]
            self.assertEqual(again["ci95"], result["ci95"])
        self.assertLess(widths[1], widths[0] / 2)

    def test_the_mismatch_hint_leaves_a_run_missing_fewer_than_one_query_in_ten(self):
        for queries, warned in ((10, True), (11, False)):
            qrels = {"q%d" % i: ["d%d" % i] for i in range(queries)}
            run = dict({"q%d" % i: ["d%d" % i] for i in range(1, queries)}, q0=["d0#%d" % c for c in range(5)])
            with self.subTest(queries=queries):
                self.assertEqual(bool(rre.score_run(qrels, run, "RR")["warnings"]), warned)
        self.assertNotIn("deduplicated", rre.score_run(qrels, run, "RR"))

    def test_judging_details(self):
        ties = rre.score_run({"q1": ["d1"]}, {"q1": {"d1#1": 1.0, "d2#1": 1.0}}, "RR", ties=True, chunk_separator="#")
        self.assertEqual(ties["ties"], {"measures": {"RR": {"low": 0.5, "high": 1.0}}, "queries": ["q1"]})
        # the ideal sum alone would overflow
        with self.assertRaisesRegex(rre.EvalError, "a gain is at most 2"):
            rre.score_run({"q1": {"d1": 1, "d2": 1, "d3": 1}}, {"q1": ["x"]}, "nDCG(gains={1:1e308})")
        lines = list(rre.text_lines(io.BytesIO(b"x" * 65535 + b"\n\xef\xbb\xbfy\n"), "f"))
        # a BOM is dropped at the start of the file only
        self.assertEqual(lines[1], (2, "\ufeffy"))
        self.assertFalse(rre.is_json(io.BytesIO(b" " * 65536 + b"\xef\xbb\xbf{}"), "f"))
        # CRLF across two blocks
        lines = list(rre.text_lines(io.BytesIO(b"x" * 65535 + b"\r\ny\r\n"), "f"))
        self.assertEqual([(n, line[:1]) for n, line in lines], [(1, "x"), (2, "y")])
        q, r = self.write("q.json", {"q1": ["d1"]}), self.write("r.json", {"q2": ["d1"]})
        rejected(self, *cli("--qrels", q, "--run", r, "--missing-run", "skip", "--unlabeled", "skip"),
                 "error: %s: no query left to evaluate" % r)

    def test_labels_and_lines_refused(self):
        with self.assertRaisesRegex(rre.EvalError, "^qrels: query 'q1': label '#1' is blank once cut at '#'"):
            rre.score_run({"q1": ["#1"]}, {"q1": ["d1"]}, chunk_separator="#")
        self.assertEqual(rre.run_labels(["a\n", "a\\n"]), {"a\n": "a\\n", "a\\n": "a\\n (2)"})


class ManifestTest(TempDirTestCase):
    """Section 22: every general result says what it was made on; the seed's shape does not change."""

    def test_the_manifest_of_a_result(self):
        qrels = self.write("q.txt", "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n")
        run = self.write("r.txt", "q1 Q0 d2 1 0.9 r\nq1 Q0 d1 2 0.8 r\nq2 Q0 d4 1 0.5 r\n")
        status, out, err = cli("--qrels", qrels, "--run", run, "-m", "R@5,RR", "--depth", "50", "--seed", "7")
        made = json.loads(out)["manifest"]
        lines = "q1\td1\t1\nq1\td2\t0\nq2\td3\t2\n"  # sorted by code point
        self.assertEqual(made, {
            "tool": "rag_retrieval_eval %s" % rre.__version__,
            "labels": "sha256:" + hashlib.sha256(lines.encode()).hexdigest(), "measures": ["R@5", "RR"],
            "options": {"relevance_level": 1, "depth": 50, "judged_only": False, "missing_run": "error",
                        "unlabeled": "error", "no_relevant": "error", "match": "id", "duplicates": "error",
                        "chunk_separator": None, "seed": 7, "permutations": 10000},
            # the labels judge d2 non-relevant
            "label_coverage": {"Judged@5": 0.5, "Judged@10": 0.5},
            "inputs": {"qrels": [str(qrels)], "run": [str(run)]}})
        library = rre.score_run({"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}, {"q1": ["d2", "d1"], "q2": ["d4"]},
                                ["R@5", "RR"], depth=50, seed=7)["manifest"]
        self.assertEqual(library, dict(made, inputs={}))
        # nothing judged non-relevant
        relevant = rre.score_run({"q1": ["d1"]}, {"q1": ["d1"]}, "R@1")["manifest"]
        self.assertNotIn("label_coverage", relevant)
        self.assertEqual(cli("--version"), (0, "rag_retrieval_eval %s\n" % rre.__version__, ""))
        self.assertNotIn("manifest", cli(FIXTURE, "--k", "3")[1])  # the seed's bytes

    def test_the_other_truth_inputs_are_hashed_as_given(self):
        fixture = self.write("f.json", {"qrels": {"q1": ["d1"]}, "runs": {"q1": ["d1", "x"], "q2": ["y"]},
                                        "evidence": {"q1": [["d1", "d9"]]}})
        # the fast reader hands a leading zero over
        lengths = self.write("l.txt", "d1 3\nx 007\ny 1\n")
        no_answer = self.write("n.txt", "q2\n")
        made = json.loads(cli(fixture, "--lengths", lengths, "--no-answer", no_answer,
                              "-m", "R(tokens=5)@2,EvidenceRecall@2,Abstain")[1])["manifest"]
        digest = lambda text: "sha256:" + hashlib.sha256(text.encode()).hexdigest()
        self.assertEqual((made["evidence"], made["lengths"], made["no_answer"]),
                         (digest("q1\t1\t1\td1\nq1\t1\t1\td9\n"), digest("d1\t3\nx\t7\ny\t1\n"), digest("q2\n")))
        as_json = self.write("l.json", {"d1": 3, "x": 7, "y": 1})
        self.assertEqual(json.loads(cli(fixture, "--lengths", as_json, "--no-answer", no_answer,
                                        "-m", "R(tokens=5)@2,EvidenceRecall@2,Abstain")[1])["manifest"]["lengths"],
                         made["lengths"])


class SavedBaselineTest(TempDirTestCase):
    """Section 22: a saved result of one run stands for that run as --baseline or --replicate:
    the same stdout, stderr and exit status in every format and mode; a result made on other
    labels, options or queries, or without a measure asked for, is refused in one line."""

    def random_files(self, rng, where):
        """Labels, runs and the rest of a random case, written under ``where``; the baseline
        and replicate runs as TREC files named base and rep."""
        qids = ["q%d" % i for i in range(rng.randint(3, 8))]
        docs = ["d%d" % i for i in range(10)]
        grades = {q: {d: rng.choice([0, 1, 1, 2]) for d in rng.sample(docs, rng.randint(1, 4))} for q in qids}
        for labels in grades.values():
            labels[next(iter(labels))] = 2  # a relevant one at every level asked
        run = lambda: {q: {d: rng.randint(1, 9) / 10 for d in rng.sample(docs, rng.randint(0, 6))}
                       for q in qids if rng.random() < 0.9}
        where.mkdir()
        files = {name: where / name for name in ("q.txt", "cand", "cand2", "base", "rep", "g.json", "l.txt")}
        files["q.txt"].write_text("".join("%s 0 %s %d\n" % (q, d, g) for q, l in grades.items() for d, g in l.items()))
        for name in ("cand", "cand2", "base", "rep"):
            files[name].write_text(trec_run(run()) or "q0 Q0 d0 1 0.5 r\n")
        files["g.json"].write_text(json.dumps({"a": qids[:2], "b": qids[2:]}))
        files["l.txt"].write_text("".join("%s %d\n" % (d, rng.randint(1, 15)) for d in docs))
        return files

    def test_a_saved_result_answers_as_its_run_in_every_mode_and_format(self):
        rng = random.Random(32)
        for case in range(9):
            files = self.random_files(rng, self.tmp / ("c%d" % case))
            measures = rng.sample(["R@3", "P@2", "RR", "nDCG@5", "AP", "Success@3", "R(tokens=20)@3"], 3)
            values = ["--missing-run", "zero"] + rng.choice(
                [[], ["--depth", "4"], ["--relevance-level", "2"], ["--judged-only"]])
            truth = ["--qrels", files["q.txt"]] + (["--lengths", files["l.txt"]] if "R(tokens=20)@3" in measures else [])
            saved_dir = self.tmp / ("s%d" % case)
            saved_dir.mkdir()
            # the saved results, under the names of their runs, elsewhere
            for name in ("base", "rep"):
                wider = measures + rng.sample(["Judged@3", "P@5"], rng.randint(0, 1))
                status, out, err = cli(*truth, "--run", files[name], "-m", ",".join(wider), *values)
                self.assertEqual(status, 0, err)
                (saved_dir / name).write_text(out)
            mode = rng.sample([["--ci"], ["--ties"], ["--max-mean-drop", "0.05"], ["--max-query-drop", "0.3"],
                               ["--groups", files["g.json"], "--max-group-drop", "0.1"], ["--run", files["cand2"]]], 2)
            mode.append(rng.choice([[], ["--replicate", "rep"], ["--replicate", "rep", "--max-group-drop", "0.05",
                                                                 "--gate-on", "interval", "--groups", files["g.json"]]]))
            args = truth + ["--run", files["cand"], "--baseline", "base", "-m", ",".join(measures)] + values + sum(
                mode, [])
            for fmt in ["json", rng.choice(["table", "markdown", "csv"])]:
                with self.subTest(case=case, mode=mode, values=values, fmt=fmt):
                    outcomes, home = [], os.getcwd()
                    for where in (files["base"].parent, saved_dir):
                        os.chdir(where)
                        try:
                            outcomes.append(without_inputs(cli(*args, "--format", fmt)))
                        finally:
                            os.chdir(home)
                    self.assertEqual(outcomes[1], outcomes[0])
                    self.assertIn(outcomes[0][0], (0, 1), outcomes[0][2])

    def test_what_differs_is_refused_in_one_line(self):
        qrels = self.write("q.txt", "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\nq3 0 d4 1\n")
        run, base = self.write("r.txt", "q1 Q0 d1 1 0.9 r\nq2 Q0 d9 1 0.5 r\nq3 Q0 d4 1 0.5 r\n"), \
            self.write("b.txt", "q1 Q0 d2 1 0.9 b\nq2 Q0 d3 1 0.5 b\nq3 Q0 d4 1 0.5 b\n")
        saved = json.loads(cli("--qrels", qrels, "--run", base, "-m", "R@2,RR")[1])
        compare = lambda *more, **files: cli("--qrels", files.get("qrels", qrels), "--run", run, "--baseline",
                                             files.get("baseline", self.tmp / "s.json"), "-m", "R@2", *more)
        self.write("s.json", saved)
        self.assertEqual(compare()[0], 0)
        relabeled = self.write("q2.txt", "q1 0 d1 1\nq1 0 d2 1\nq2 0 d3 1\nq3 0 d4 1\n")
        cut = copy.deepcopy(saved)
        del cut["per_query"]["q3"]
        several = {"runs": {"a": saved, "b": saved}}
        for files, more, message in [
                ({"qrels": relabeled}, [],
                 "s.json: the labels changed since the baseline was saved: score its run again"),
                ({}, ["--depth", "5"],
                 "the baseline was saved with no --depth, and --depth 5 is given now"),
                ({}, ["--judged-only"], "with no --judged-only, and --judged-only is given now"),
                ({}, ["-m", "P@2"], "the baseline has no P@2 (it holds R@2, RR): score its run "
                                    "again with them"),
                ({"baseline": self.write("cut.json", cut)}, [],
                 "the baseline was saved on other queries than the labels give ('q3'): it "
                 "was cut or edited"),
                ({"baseline": self.write("several.json", several)}, [],
                 "holds the results of 2 runs: save one run's (--run once)"),
                ({"baseline": self.write("old.json", {k: v for k, v in saved.items() if k != "manifest"})}, [],
                 "has no manifest: it was saved by an older version, or edited"),
                ({"baseline": self.write("bad.json", dict(saved, per_query=dict(saved["per_query"], q2={"R@2": "1"})))},
                 [], "bad.json: per_query.q2.R@2: expected a number, not '1'"),
                ({"baseline": self.write("odd.json", dict(saved, skipped=dict(saved["skipped"], unlabeled="q9")))}, [],
                 "odd.json: skipped: expected {missing_run, unlabeled, no_relevant} of "
                 "query ID lists"),
                ({"baseline": self.write("odd2.json", dict(saved, skipped=["q9"]))}, [], "odd2.json: skipped: expected"),
                ({"baseline": self.write("odd3.json", {k: v for k, v in saved.items() if k != "zeroed"})}, [],
                 "odd3.json: zeroed: expected {missing_run, no_relevant} of query ID "
                 "lists, not None"),
                ({"baseline": self.write("odd4.json", dict(saved, zeroed={"missing_run": [], "no_relevant": [1]}))},
                 [], "odd4.json: zeroed: expected"),
                ({"baseline": self.write("row.json", dict(saved, per_query=dict(saved["per_query"], q2=5)))}, [],
                 "row.json: per_query.q2: expected an object of measures to values, not 5"),
                ({"baseline": self.write("cover.json", dict(saved, manifest={
                    k: v for k, v in saved["manifest"].items() if k != "label_coverage"}))}, [],
                 "cover.json: manifest.label_coverage: holds no Judged@2, which the "
                 "label-coverage warning reads"),
                ({"baseline": self.write("seed.json", json.loads(cli(FIXTURE, "--k", "3")[1]))}, [],
                 "seed.json: is the output of the seed's mode (FIXTURE --k K)"),
                ({}, ["--lengths", self.write("l.txt", "d1 1\nd9 1\nd4 1\n"), "-m", "R(tokens=3)@2"],
                 "the baseline was saved without the token counts, which are given now: score its run again with "
                 "them")]:
            with self.subTest(message=message):
                rejected(self, *compare(*more, **files), message)
        counted = self.write("counted.json", cli("--qrels", qrels, "--run", base, "-m", "R@2,R(tokens=3)@2", "--lengths",
                                                 self.write("l2.txt", "d1 1\nd2 1\nd3 1\nd4 1\n"))[1])
        rejected(self, *compare(baseline=counted),
                 "counted.json: the baseline was saved with the token counts, and none are given "
                 "now: give them, or score its run again")
        first = self.write("first.json", cli("--qrels", qrels, "--run", base, "-m", "R@2", "--duplicates", "first")[1])
        for removed in ({"q1": "1"}, {"q1": True}, None):
            edited = dict(json.loads(first.read_text()), deduplicated=removed)
            rejected(self, *compare("--duplicates", "first", baseline=self.write("d.json", edited)),
                     "d.json: deduplicated: expected {query ID: repeats removed}")
        self.assertEqual(compare("--duplicates", "first", baseline=first)[0], 0)
        rejected(self, *cli("--qrels", qrels, "--run", self.tmp / "s.json", "-m", "R@2"),
                 "a result this tool saved stands for a baseline's run (--baseline or "
                 "--replicate), not for a candidate's")
        rejected(self, *cli("--qrels", self.tmp / "s.json", "--run", run),
                 "a result this tool saved holds no labels or rankings")
        with self.assertRaisesRegex(rre.EvalError, "^baseline: the labels changed since the baseline was saved"):
            rre.compare_runs({"q1": ["d1"], "q2": ["d3"], "q3": ["d4"]}, saved, {"q1": ["d1"], "q2": [], "q3": []},
                             "R@2")
        with self.assertRaisesRegex(rre.EvalError, "^run: a saved result stands for a baseline's run"):
            rre.score_run({"q1": ["d1"]}, saved, "R@2")

    def test_a_result_that_is_not_what_a_run_printed_is_refused(self):
        qrels = self.write("q.txt", "q1 0 d1 1\nq2 0 d3 1\nq3 0 d4 1\n")
        run, base = self.write("r.txt", "q1 Q0 d1 1 0.9 r\nq2 Q0 d9 1 0.5 r\n"), \
            self.write("b.txt", "q1 Q0 d9 1 0.9 b\nq2 Q0 d3 1 0.5 b\nq3 Q0 d4 1 0.5 b\n")
        text = cli("--qrels", qrels, "--run", base, "-m", "R@2,RR", "--missing-run", "zero")[1]
        saved = json.loads(text)
        row = '"q2": {\n      "R@2": 1.0,\n      "RR": 1.0\n    }'
        self.assertIn(row, text)
        for name, edited, message in [
                ("nan", text.replace(row, row.replace('"RR": 1.0', '"RR": NaN')),
                 "nan.json: per_query.q2.RR: expected a finite number, not nan"),
                ("inf", text.replace(row, row.replace('"RR": 1.0', '"RR": Infinity')),
                 "per_query.q2.RR: expected a finite number, not inf"),
                ("big", text.replace(row, row.replace('"RR": 1.0', '"RR": 1e400')), "not inf"),
                ("huge", text.replace(row, row.replace('"RR": 1.0', '"RR": 1' + "0" * 400)),
                 "expected a finite number, not 1000"),
                ("mean", text.replace('"RR": 0.6666666666666666', '"RR": 0.7', 1),
                 "mean.json: measures.RR: 0.7 is not the mean of its per-query values, "
                 "0.6666666666666666: the result was edited"),
                ("count", text.replace('"queries": 3', '"queries": 4', 1),
                 "count.json: queries: 4, and per_query lists 3: the result was edited"),
                ("twice", text.replace(row, row + ",\n" + row.replace("1.0", "0.0")),
                 "twice.json: per_query: key 'q2' appears twice ({'R@2': 1.0, 'RR': 1.0}, then "
                 "{'R@2': 0.0, 'RR': 0.0}): the result was edited"),
                ("deep", text.replace('"relevance_level": 1',
                                      '"relevance_level": 1, "relevance_level": 2'),
                 "deep.json: manifest.options: key 'relevance_level' appears twice (1, then 2)")]:
            path = self.write(name + ".json", edited)
            for where in (["--baseline", path], ["--baseline", base, "--replicate", path]):
                with self.subTest(name=name, where=where[-2]):
                    rejected(self, *cli("--qrels", qrels, "--run", run, *where, "-m", "RR", "--missing-run", "zero"),
                             message)
        # edited, but consistently: a new result, which the digests still bind
        consistent = copy.deepcopy(saved)
        consistent["per_query"]["q2"]["RR"], consistent["measures"]["RR"] = 0.5, 0.5
        status, out, err = cli("--qrels", qrels, "--run", run, "--baseline", self.write("c.json", consistent), "-m",
                               "RR", "--missing-run", "zero")
        self.assertEqual((status, json.loads(out)["comparison"]["RR"]["baseline"]), (0, 0.5), err)
        # within 1e-9
        consistent["per_query"]["q2"]["RR"], consistent["measures"]["RR"] = 0.0, 1 / 3 + 9e-10
        self.assertEqual(cli("--qrels", qrels, "--run", run, "--baseline", self.write("c.json", consistent), "-m",
                             "RR", "--missing-run", "zero")[0], 0)
        consistent["measures"]["RR"] = 1 / 3 + 2e-9
        rejected(self, *cli("--qrels", qrels, "--run", run, "--baseline", self.write("c.json", consistent), "-m",
                            "RR", "--missing-run", "zero"),
                            "c.json: measures.RR: 0.3333333353333333 is not the mean")
        counted = json.loads(cli("--qrels", qrels, "--run", self.write("big.txt", "".join(
            "q%d Q0 d%d 1 1.0 b\n" % (q, d) for q in (1, 2, 3) for d in range(1000))), "-m", "NumRet",
                                 "--missing-run", "zero")[1])
        counted["measures"]["NumRet"] += 1e-7  # a sum of 3000: to 1e-9 of itself
        self.assertEqual(cli("--qrels", qrels, "--run", run, "--baseline", self.write("n.json", counted), "-m",
                             "NumRet", "--missing-run", "zero")[0], 0)
        for value in (math.nan, math.inf):
            broken = copy.deepcopy(saved)
            broken["per_query"]["q1"]["RR"] = value
            with self.assertRaisesRegex(rre.EvalError, "^baseline: per_query.q1.RR: expected a finite number"):
                rre.compare_runs({"q1": ["d1"], "q2": ["d3"], "q3": ["d4"]}, broken, {"q1": ["d1"]}, "RR",
                                 missing_run="zero")

    def test_the_library_takes_a_saved_result_as_the_baseline_and_replicates(self):
        qrels = {"q1": {"d1": 1, "d2": 0}, "q2": ["d3"], "q3": ["d4", "d5"]}
        base, rep = {"q1": ["d2", "d1"], "q2": ["d3"], "q3": ["d5"]}, {"q1": ["d1"], "q2": ["d3"], "q3": []}
        cand = {"q1": ["d1"], "q2": ["d9", "d3"], "q3": ["d4"]}
        options = dict(groups={"g": ["q1", "q2"]}, max_group_drop=0.1, max_query_drop=0.2, ci=True)
        saved = [rre.score_run(qrels, run, ["R@2", "RR", "AP"]) for run in (base, rep)]
        self.assertEqual(rre.compare_runs(qrels, saved[0], cand, ["RR", "R@2"], replicates=[saved[1]], **options),
                         rre.compare_runs(qrels, base, cand, ["RR", "R@2"], replicates=[rep], **options))
        self.assertEqual(rre.score_runs(qrels, {"a": cand, "b": rep}, "RR", baseline=saved[0]),
                         rre.score_runs(qrels, {"a": cand, "b": rep}, "RR", baseline=base))

    def test_what_a_saved_result_cannot_give_is_said(self):
        qrels = self.write("q.txt", "q1 0 d1 1\nq2 0 d3 1\n")
        run, base = self.write("r.txt", "q1 Q0 d9 1 0.9 r\nq2 Q0 d3 1 0.5 r\n"), \
            self.write("b.txt", "q1 Q0 d1 1 0.9 b\nq2 Q0 d3 1 0.5 b\n")
        saved = self.write("s.json", cli("--qrels", qrels, "--run", base, "-m", "R@2")[1])
        status, out, err = cli("--qrels", qrels, "--run", run, "--baseline", saved, "-m", "R@2", "--explain",
                               "--unjudged-bounds", "--pool", self.tmp / "pool.jsonl", "--plot", self.tmp / "p.svg")
        self.assertEqual(status, 0, err)
        for what in ("--explain gives no ranks before the change",
                     "--pool lists no unjudged documents of it",
                     "--plot draws no curves of the baseline", "--unjudged-bounds gives no bounds of the baseline"):
            self.assertIn("note: a saved result holds no rankings: " + what, err)
        result = json.loads(out)
        self.assertNotIn("ranks", result["explain"]["queries"]["q1"])  # not guessed
        self.assertNotIn("baseline", result["unjudged"])
        self.assertEqual([json.loads(line)["query_id"] for line in (self.tmp / "pool.jsonl").read_text().splitlines()],
                         ["q1"])
        rep = self.write("rep.json", cli("--qrels", qrels, "--run", run, "-m", "R@2")[1])
        err = cli("--qrels", qrels, "--run", run, "--baseline", base, "--replicate", rep, "-m", "R@2", "--pool",
                  self.tmp / "pool2.jsonl")[2]
        self.assertIn("note: a saved result holds no rankings: --pool lists no unjudged documents of it", err)
        self.assertNotIn("--explain", err)
        older = json.loads(saved.read_text())
        older["manifest"]["tool"] = "rag_retrieval_eval 0.9.0"
        self.write("older.json", older)
        err = cli("--qrels", qrels, "--run", run, "--baseline", self.tmp / "older.json", "-m", "R@2")[2]
        self.assertIn("note: the baseline was saved by rag_retrieval_eval 0.9.0, and this is "
                      "rag_retrieval_eval "
                      + rre.__version__, err)


class FixtureRejectionTest(TempDirTestCase):
    """Every rejection: exit 2, nothing on stdout, one line on stderr naming the spot."""

    def test_rejections(self):
        for name, content, args, fragments in FIXTURE_REJECTIONS:
            with self.subTest(name):
                if content is None:
                    path = self.tmp / "nope.json"
                elif content == "DIR":
                    path = self.tmp / "adir"
                    path.mkdir(exist_ok=True)
                else:
                    path = self.write("f.json", content)
                status, out, err = cli(path, *args)
                self.assertEqual(status, 2, err)
                self.assertEqual(out, "")
                self.assertNotIn("Traceback", err)
                self.assertEqual(len(err.splitlines()), 1, err)
                self.assertTrue(err.startswith("rag_retrieval_eval: error: "), err)
                for fragment in fragments:
                    self.assertIn(fragment, err)

    def test_file_name_leads_the_message(self):
        path = self.write("labels.json", {"qrels": {"q1": ["d1"]}, "runs": {"q1": [""]}})
        err = cli(path)[2]
        self.assertIn("error: %s: runs.q1[0]: query 'q1'" % path, err)


class FixtureAcceptanceTest(TempDirTestCase):
    """What strictness must not refuse."""

    def test_byte_order_mark_and_crlf(self):
        text = FIXTURE.read_text().replace("\n", "\r\n")
        path = self.write("bom.json", b"\xef\xbb\xbf" + text.encode())
        self.assertEqual(cli(path, "--k", "3")[:2], (0, SEED_STDOUT))

    def test_other_top_level_keys_are_ignored(self):
        data = json.loads(FIXTURE.read_text())
        data["comment"] = {"anything": [1, 2, float("nan")]}
        self.assertEqual(cli(self.write("x.json", data))[1], SEED_STDOUT)

    def test_help_names_inputs_measures_exit_statuses_and_examples(self):
        status, out, _ = cli("--help")
        self.assertEqual(status, 0)
        for fragment in ("qrels", "runs", "R@k", "RR, RR@k", "exit statuses", "examples",
                         "rag_retrieval_eval.py retrieval_fixture.json --k 3"):
            self.assertIn(fragment, out)

    def test_help_groups_every_option_by_purpose_in_the_table_order(self):
        out = cli("--help")[1]
        usage, _, rest = out.partition("\n\n")
        self.assertIn("[-m MEASURE[.PARAMS]]... QRELS RUN   (trec_eval's form)", usage)
        self.assertEqual(usage.count("rag_retrieval_eval.py"), 3)
        headings = [line[:-1] for line in rest.splitlines() if line.endswith(":") and not line.startswith(" ")]
        self.assertEqual(headings[1:6], list(rre.HELP_GROUPS.values()))
        # 18 columns: the doc beside it
        self.assertIn("\n  NumNonRelJudgedRet Retrieved documents judged", out)
        # 22: below
        self.assertIn("\n  RelString, RelString@k\n                     The grades of the top k", out)
        sections = re.split(r"\n(?=\S[^\n]*:\n)", rest)
        for name, heading in rre.HELP_GROUPS.items():
            start = [o.name for o in rre.OPTIONS].index(name)
            following = [i for i, o in enumerate(rre.OPTIONS) if i > start and o.name in rre.HELP_GROUPS]
            members = rre.OPTIONS[start:following[0] if following else None]
            section = next(text for text in sections if text.startswith(heading + ":"))
            for option in members:
                flag = "--" + option.name.replace("_", "-").replace("as-tool", "as")
                self.assertIn("fixture" if option.kind == "positional" else flag,
                              section, (heading, option.name))

    def test_main_returns_status_in_process(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(rre.main([str(self.tmp / "missing.json")]), 2)
        self.assertIn("missing.json: cannot read", err.getvalue())


class TrecInputTest(TempDirTestCase):
    """TREC text in, the same numbers as the fixture's seed values out."""

    def files(self, qrels=QRELS_TXT, run=RUN_TXT):
        return self.write("qrels.txt", qrels), self.write("run.txt", run)

    def general(self, *args, qrels=QRELS_TXT, run=RUN_TXT):
        q, r = self.files(qrels, run)
        status, out, err = cli("--qrels", q, "--run", r, *args)
        self.assertEqual(status, 0, err)
        return json.loads(out)

    def test_trec_files_give_the_seed_values(self):
        result = self.general("--k", "3")
        self.assertEqual(result["measures"], {"R@3": 2 / 3, "RR@3": 0.5})
        self.assertEqual(result["per_query"]["q1"], {"R@3": 1.0, "RR@3": 0.5})
        self.assertEqual(result["queries"], 3)

    def test_general_shape_holds_exactly_the_requested_names(self):
        result = self.general("-m", "R@1,ndcg@2", "-m", "AP", "-m", "R@1")
        self.assertEqual(list(result["measures"]), ["R@1", "nDCG@2", "AP"])
        self.assertEqual(list(result["per_query"]["q2"]), ["R@1", "nDCG@2", "AP"])
        self.assertEqual(result["skipped"], {"missing_run": [], "unlabeled": [], "no_relevant": []})

    def test_comments_blank_lines_crlf_bom_and_gzip(self):
        plain = self.general("-m", "AP,nDCG")
        q, r = self.files()
        variants = {
            "crlf+bom": (b"\xef\xbb\xbf" + QRELS_TXT.replace("\n", "\r\n").encode(),
                         b"\xef\xbb\xbf" + RUN_TXT.replace("\n", "\r\n").encode()),
            "gzip": (gzip.compress(QRELS_TXT.encode()), gzip.compress(RUN_TXT.encode())),
            "no final newline": (QRELS_TXT.encode(), RUN_TXT.rstrip("\n").encode()),
        }
        for name, (qrels, run) in variants.items():
            with self.subTest(name):
                q, r = self.write("q.gz", qrels), self.write("r.gz", run)
                status, out, err = cli("--qrels", q, "--run", r, "-m", "AP,nDCG")
                self.assertEqual((status, err), (0, ""))
                self.assertEqual(without_inputs(json.loads(out)), without_inputs(plain))

    def test_stdin(self):
        q, _ = self.files()
        status, out, _ = cli("--qrels", q, "--run", "-", "-m", "RR", stdin=RUN_TXT.encode())
        self.assertEqual((status, json.loads(out)["measures"]), (0, {"RR": 0.5}))

    def test_json_run_on_stdin(self):
        q, _ = self.files()
        run = json.dumps({"q1": ["d9", "d2", "d1"], "q2": ["d3"], "q3": []}).encode()
        status, out, err = cli("--qrels", q, "--run", "-", "--k", "3", stdin=run)
        self.assertEqual((status, err), (0, ""))
        self.assertEqual(json.loads(out)["measures"], {"R@3": 2 / 3, "RR@3": 0.5})

    def test_json_files_for_qrels_and_run(self):
        q = self.write("q.json", {"q1": {"d1": 1, "d2": 1}, "q2": ["d3"], "q3": ["d4"]})
        r = self.write("r.json", {"q1": ["d9", "d2", "d1"], "q2": {"d3": 2.0, "d8": 1.0}, "q3": []})
        status, out, _ = cli("--qrels", q, "--run", r, "--k", "3")
        self.assertEqual(json.loads(out)["measures"], {"R@3": 2 / 3, "RR@3": 0.5})

    def test_fixture_as_qrels_or_run_file(self):
        status, out, _ = cli("--qrels", FIXTURE, "--run", FIXTURE, "--k", "3")
        self.assertEqual(json.loads(out)["measures"], {"R@3": 2 / 3, "RR@3": 0.5})

    def test_relevance_level(self):
        # level 2: only q2's d3 (grade 2) is relevant; q1 and q3 have nothing relevant
        result = self.general("-m", "R@3", "--relevance-level", "2", "--no-relevant", "zero")
        self.assertEqual(result["per_query"], {"q1": {"R@3": 0.0}, "q2": {"R@3": 1.0}, "q3": {"R@3": 0.0}})
        self.assertEqual(result["zeroed"]["no_relevant"], ["q1", "q3"])

    def test_depth(self):
        # depth 1: q1's top document is d9 (3.5): nothing relevant retrieved
        result = self.general("-m", "R@3,NumRet", "--depth", "1")
        self.assertEqual(result["per_query"]["q1"], {"R@3": 0.0, "NumRet": 1})
        self.assertEqual(result["measures"]["NumRet"], 3)

    def test_missing_run_policies(self):
        qrels = QRELS_TXT + "q4 0 d1 1\n"
        zero = self.general("-m", "R@3", "--missing-run", "zero", qrels=qrels)
        self.assertEqual((zero["queries"], zero["per_query"]["q4"]), (4, {"R@3": 0.0}))
        self.assertEqual(zero["measures"]["R@3"], 2 / 4)
        self.assertEqual(zero["zeroed"]["missing_run"], ["q4"])
        skip = self.general("-m", "R@3", "--missing-run", "skip", qrels=qrels)
        self.assertEqual((skip["queries"], skip["skipped"]["missing_run"]), (3, ["q4"]))

    def test_unlabeled_skip_is_listed_and_counted_on_stderr(self):
        q, r = self.files(run=RUN_TXT + "q9 Q0 d1 1 1.0\n")
        status, out, err = cli("--qrels", q, "--run", r, "-m", "RR", "--unlabeled", "skip")
        self.assertEqual(status, 0)
        self.assertEqual(json.loads(out)["skipped"]["unlabeled"], ["q9"])
        self.assertEqual(err, "rag_retrieval_eval: note: skipped 1 query: 1 unlabeled ('q9')\n")

    def test_no_relevant_policies(self):
        qrels = QRELS_TXT + "q4 0 d1 0\n"
        run = RUN_TXT + "q4 Q0 d1 1 1.0\n"
        zero = self.general("-m", "NumRel,Judged@1", "--no-relevant", "zero", qrels=qrels, run=run)
        self.assertEqual(zero["per_query"]["q4"], {"NumRel": 0, "Judged@1": 1.0})
        skip = self.general("-m", "RR", "--no-relevant", "skip", qrels=qrels, run=run)
        self.assertEqual((skip["queries"], skip["skipped"]["no_relevant"]), (3, ["q4"]))

    def test_which_queries_have_a_relevant_label(self):
        # relevant: grade >= level and never negative; a query with none is refused by default
        for labels, level, has_relevant in [({"d": 1}, 1, True), ({"d": 0}, 1, False), ({"d": 0}, 0, True),
                                            ({"d": -1}, 0, False), ({"d": -1, "e": 2}, 2, True), ({}, 0, False)]:
            with self.subTest(labels=labels, level=level):
                qrels = {"q": labels}
                if has_relevant:
                    self.assertEqual(rre.apply_policies(qrels, {"q": None}, level)[0], ["q"])
                else:
                    with self.assertRaisesRegex(rre.EvalError, "no relevant label at level %d" % level):
                        rre.apply_policies(qrels, {"q": None}, level)

    def test_trec_format(self):
        # Judged@3: q1 ranks d9 (unlabeled), d2, d1: 2/3; q2 1 of 2 retrieved; q3 none
        q, r = self.files()
        status, out, _ = cli("--qrels", q, "--run", r, "-m", "R@3,RR,NumRet,Judged@3", "--format", "trec")
        lines = out.splitlines()
        self.assertEqual(lines[:4], ["recall_3\tq1\t1.0", "recip_rank\tq1\t0.5",
                                     "num_ret\tq1\t3", "Judged@3\tq1\t%r" % (2 / 3)])
        self.assertEqual(lines[-5:], ["num_q\tall\t3", "recall_3\tall\t0.6666666666666666",
                                      "recip_rank\tall\t0.5", "num_ret\tall\t7",
                                      "Judged@3\tall\t%r" % ((2 / 3 + 1 / 2 + 0) / 3)])

    def test_json_output_is_byte_identical_to_json_dumps(self):
        cases = [
            {"queries": 0, "measures": {"R@1": 0.0}, "per_query": {}},
            {"queries": 3, "measures": {"R@1": 0.5, "NumRet": 7},
             "per_query": {'q"1': {"R@1": 1 / 3, "NumRet": 3}, "é\\%s": {"R@1": 0.0, "NumRet": 4},
                           "q3": {"R@1": 1e-17, "NumRet": 0}}, "skipped": {"unlabeled": ["x"]}},
            {"queries": 2, "measures": {"RR": 1.0}, "per_query": {"a": {"RR": 1.0}, "b": {}}},
        ]
        for result in cases:
            with self.subTest(result=result):
                self.assertEqual("".join(rre.format_json(result)), json.dumps(result, indent=2))

    def test_table_format(self):
        q, r = self.files()
        status, out, _ = cli("--qrels", q, "--run", r, "-m", "R@3,RR", "--format", "table", "--per-query")
        self.assertEqual(out, "query     R@3      RR\n"
                              "all    0.6667  0.5000\n"
                              "q1     1.0000  0.5000\n"
                              "q2     1.0000  1.0000\n"
                              "q3     0.0000  0.0000\n"
                              "3 queries evaluated\n")


class TrecRejectionTest(TempDirTestCase):
    def test_rejections(self):
        for name, qrels, run, args, fragments in TREC_REJECTIONS:
            with self.subTest(name):
                q = self.write("qrels.txt", qrels)
                argv = ["--qrels", q]
                if run == "MISSING":
                    argv += ["--run", self.tmp / "nothere.txt"]
                elif run is not None:
                    argv += ["--run", self.write("run.txt", run)]
                argv += [FIXTURE if a == "FIXTURE" else a for a in args]
                status, out, err = cli(*argv)
                self.assertEqual((status, out), (2, ""), err)
                self.assertNotIn("Traceback", err)
                self.assertEqual(len(err.splitlines()), 1, err)
                for fragment in fragments:
                    self.assertIn(fragment, err)


class ReferenceTrecRunTest(TrecRunReaderCases, TempDirTestCase):
    """The streaming reference reader against the whole read (TrecRunReaderCases.reference)."""

    def read(self, data, qrels=None, opts=rre.Reading(), name="run.txt"):
        path = self.write(name, data)
        with rre.open_input(str(path)) as stream:
            return rre.reference_judged_trec_run(stream, name, rre.Truth(qrels or QRELS_FOR_RANDOM), opts)

    def test_a_query_that_cannot_be_judged_waits_for_the_lines_after_it(self):
        data = b"q1 Q0 #1 1 3 t\nq2 Q0 b 1 x t\n"
        with self.assertRaisesRegex(rre.EvalError, "run.txt:2: query 'q2': score 'x'"):
            self.read(data, {"q1": {"a": 1}}, rre.Reading(separator="#"))
        with self.assertRaisesRegex(rre.EvalError, "ranked ID '#1' is blank"):
            self.read(data.replace(b" x ", b" 1 "), {"q1": {"a": 1}}, rre.Reading(separator="#"))


class FastTrecRunTest(TrecRunReaderCases, TempDirTestCase):
    """The fast twin, also at tiny chunk sizes; where it declines, the reference answers."""

    def read(self, data, qrels=None, opts=rre.Reading(), name="run.txt"):
        path, qrels = self.write(name, data), rre.Truth(qrels or QRELS_FOR_RANDOM)
        with rre.open_input(str(path)) as stream:
            try:
                ranked = rre._fast_pass(stream, qrels, opts, random.Random(len(data)).choice([1, 7, 64, 1 << 16]))
            except rre._Decline:
                ranked = None
            if ranked:  # what it serves, the whole fast twin gives too (and does not refuse)
                self.served += 1
                stream.seek(0)
                self.assertEqual(outcome(lambda: rre.fast_judged_trec_run(stream, name, qrels, opts)), ("ok", ranked))
                return ranked
            stream.seek(0)
            return rre.fast_judged_trec_run(stream, name, qrels, opts)

    def setUp(self):
        super().setUp()
        self.served = 0

    def test_fast_path_serves_every_valid_contiguous_run(self):
        rng = random.Random(3)
        for i in range(20):
            self.read(random_trec_run(rng))
            self.assertEqual(self.served, i + 1)
        self.read(b"q1 Q0 d1 1 2\nq1 Q0 d2 2 1\nq2 Q0 d3 1 1\n")  # five columns, no tag
        self.assertEqual(self.served, 21)

    def test_declines_what_the_reference_must_word(self):
        for data in (b"q1 Q0 d1 1 1\nq2 Q0 d1 1 1\nq1 Q0 d2 1 1\n",  # q1 comes back
                     b"q1 Q0 d1 1 1\nq1 Q0 d1 1 1\n", b"q1 Q0 d1 1 1\rq1 Q0 d2 1 1\n", b"# q1 Q0 d1 1 1 t\n",
                     b"q1 Q0 d1 1 1_0\n", b"q1 Q0 d1 1 1\x00\n", b"q1 Q0 d\xff 1 1\n"):
            with self.subTest(data), open(self.write("run.txt", data), "rb") as stream:
                try:
                    self.assertEqual(rre._fast_pass(stream, rre.Truth(QRELS_FOR_RANDOM), rre.Reading(), 7), {})
                except rre._Decline:
                    pass

    def test_gzip_is_read_like_the_plain_file(self):
        plain = "".join("q%d Q0 d%d %d 1 t\n" % (q, d, d) for q in range(6) for d in range(30)).encode()
        self.assertEqual(self.read(gzip.compress(plain)), self.reference(plain))

    def test_segments_equal_groupby(self):
        rng = random.Random(11)
        for _ in range(300):
            sizes = [rng.choice([1, 2, 3, 5, 5, 5, 100]) for _ in range(rng.randint(0, 12))]
            # runs of a size
            qids = [q for size in sizes for q in [b"q%d" % rng.randint(0, 3)] * size]
            expected, start = [], 0
            for q, group in itertools.groupby(qids):
                expected.append((q, start, start + len(list(group))))
                start = expected[-1][2]
            self.assertEqual(rre._segments(qids), expected, qids)

    def test_progress_on_a_terminal(self):
        class Terminal(io.StringIO):
            def isatty(self):
                return True
        path = self.write("run.txt", "".join("q%d Q0 d%d %d 1 t\n" % (q, d, d) for q in range(6) for d in range(30)))
        with contextlib.redirect_stderr(Terminal()) as shown, open(path, "rb") as stream:
            rre.fast_judged_trec_run(stream, "run.txt", rre.Truth(QRELS_FOR_RANDOM), rre.Reading())
        self.assertRegex(shown.getvalue(), r"reading run.txt: \d+ lines, 0 queries scored")
        self.assertTrue(shown.getvalue().endswith("\r\x1b[K"))
        with contextlib.redirect_stderr(Terminal()) as shown:
            rre._progress("r.txt")(None, None)  # nothing shown, nothing to clear
        self.assertEqual(shown.getvalue(), "")
        with contextlib.redirect_stderr(Terminal()) as shown:
            progress = rre._progress("r.txt")
            # at most one line each half second: a terminal is not flooded
            for lines in range(1, 50):
                progress(lines, 0)
        self.assertEqual(shown.getvalue().count("reading r.txt"), 1)

    def test_chunks_end_with_a_last_line_that_has_no_break(self):
        self.assertEqual(list(rre._chunks(io.BytesIO(b"a 1\nb 2\nc 3"), 5)),
                         [(1, b"a 1\n", 1), (2, b"b 2\n", 1), (3, b"c 3\n", 1)])


class ReferenceJsonTest(JsonReaderCases, TempDirTestCase):
    def read(self, text, qrels=None, opts=rre.Reading()):
        theirs, ranked, groups = rre.reference_json_rankings(text, "f.json", rre.Truth(qrels), opts)
        self.assertEqual({}, groups)  # none of these texts has "groups" or "evidence"
        return theirs, ranked


class FastJsonTest(JsonReaderCases, TempDirTestCase):
    """The member walker; the reference where it declines."""

    def read(self, text, qrels=None, opts=rre.Reading()):
        try:
            fast = rre._fast_json_rankings(text, "f.json", rre.Truth(qrels), opts)
        except (rre._Decline, ValueError, RecursionError):
            fast = None
        if fast is not None:  # what it serves, the reference gives too (and does not refuse)
            self.assertEqual(("ok", fast), outcome(lambda: rre.reference_json_rankings(text, "f.json", rre.Truth(qrels), opts)))
            self.served += 1
        return rre.fast_json_rankings(text, "f.json", rre.Truth(qrels), opts)[:2]

    def setUp(self):
        super().setUp()
        self.served = 0

    def test_the_walker_serves_the_usual_layouts(self):
        self.read(json.dumps(json_fixture()["runs"]), rre.qrels_from_json(json_fixture()["qrels"], "f", "qrels"))
        self.assertEqual(self.served, 1)  # a file of rankings alone, its labels read before
        self.served = 0
        self.read(json.dumps(json_fixture()))
        self.read(json.dumps(json_fixture(), indent=2))
        self.read(json.dumps(json_fixture(lambda q: ["d%d]," % d for d in range(q, q + 8)])))
        self.assertEqual(self.served, 3)

    def test_declines_layouts_it_does_not_know(self):
        for text, qrels in [('"a": ["d1"]}', {"a": {}}), ('{"a": ["d1"],}', {"a": {}}),
                            ('[["d1"]]', {"a": {}}), ('{"a": ["d1"], "a": ["d2"]}', {"a": {}}),
                            ('{"qrels": ["d1"], "runs": ["d1"]}', {"a": {}}), ('{}', {"a": {}}),
                            ('{"runs": {"a": ["d1"]}, "qrels": {"a": ["d1"]}}', None), ('{"runs": {}}', {"a": {}}),
                            ('{"a": ["d1"] "b": ["d2"]}', {"a": {}}), ('{"qrels": {"a": ["d1"]}, "runs": {"a": ["d1"]}', None)]:
            with self.subTest(text=text):
                self.assertRaises((rre._Decline, ValueError), rre._fast_json_rankings, text, "f", rre.Truth(qrels), rre.Reading())


class FastPathSwitchTest(TempDirTestCase):
    """FAST_PATHS = False: every output byte, message and status is the same."""

    both = staticmethod(both_paths)

    def test_cli_is_byte_identical_either_way(self):
        rng = random.Random(5)
        qrels = self.write("q.txt", "".join("%s 0 %s %d\n" % (q, d, g) for q, labels in QRELS_FOR_RANDOM.items()
                                             for d, g in labels.items()))
        for i in range(12):
            run = self.write("r.txt", random_damage(rng, random_trec_run(rng)) if i % 2 else random_trec_run(rng))
            fast, reference = self.both("--qrels", qrels, "--run", run, "-m", "AP,nDCG@5,R@3",
                                        "--unlabeled", "skip", "--missing-run", "zero", "--no-relevant", "zero")
            self.assertEqual(fast, reference)
        fixture = self.write("f.json", json_fixture())
        fast, reference = self.both(fixture, "-m", "nDCG@3,RR", "--no-relevant", "zero")
        self.assertEqual((fast[0], fast), (0, reference))
        self.assertEqual(self.both(FIXTURE), ((0, SEED_STDOUT, ""),) * 2)


class TsvAndJsonLinesTest(TempDirTestCase):
    """BEIR TSV qrels and JSON Lines logs (Ragas, LlamaIndex) read as the fixture does."""

    def test_beir_tsv_qrels_equal_trec_qrels(self):
        run = self.write("r.txt", RUN_TXT)
        trec = cli("--qrels", self.write("q.txt", QRELS_TXT), "--run", run, "-m", "AP,nDCG@3,R@2")
        labels = [line.split() for line in QRELS_TXT.splitlines() if line and not line.startswith("#")]
        for header in ("query-id\tcorpus-id\tscore\n", ""):
            with self.subTest(header=bool(header)):
                tsv = self.write("q.tsv", header + "".join("%s\t%s\t%s\n" % (q, d, g) for q, _, d, g in labels))
                self.assertEqual(without_inputs(cli("--qrels", tsv, "--run", run, "-m", "AP,nDCG@3,R@2")),
                                 without_inputs(trec))

    def test_json_lines_logs_give_the_fixtures_values(self):
        names = {"ours": ("query_id", "relevant", "retrieved"),
                 "Ragas": ("query_id", "reference_context_ids", "retrieved_context_ids"),
                 "LlamaIndex": ("qid", "expected_ids", "retrieved_ids"), "short": ("id", "relevant", "retrieved")}
        for tool, (query, labels, ranking) in names.items():
            with self.subTest(tool):
                path = self.write("log.jsonl", json_lines(query, labels, ranking))
                self.assertEqual(cli(path, "--k", "3"), (0, SEED_STDOUT, ""))

    def test_json_lines_as_qrels_and_as_run(self):
        qrels = self.write("q.jsonl", json_lines(ranking=None) + "\n\n")  # blank lines are fine
        run = self.write("r.jsonl", json_lines(labels=None, ranking="retrieved_ids"))
        status, out, _ = cli("--qrels", qrels, "--run", run, "-m", "R@3,RR@3")
        self.assertEqual((status, json.loads(out)["measures"]), (0, {"R@3": 2 / 3, "RR@3": 0.5}))
        self.assertEqual(rre.read_qrels(str(qrels)), {"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 1}, "q3": {"d4": 1}})
        self.assertEqual(rre.read_run(str(run)), {q: r for q, _, r in SEED_RECORDS})
        scored = self.write("s.jsonl", '{"id": "q1", "retrieved": {"d1": 0.5, "d2": 2}}\n{"id": '
                                       '"q2", "retrieved": []}\n')
        self.assertEqual(rre.read_run(str(scored)), {"q1": {"d1": 0.5, "d2": 2.0}, "q2": []})

    def test_json_lines_rejections(self):
        good = json_lines().splitlines()
        cases = [
            ("no query ID", [good[0], '{"relevant": ["d1"], "retrieved": []}'], ["log.jsonl:2", "no query ID"]),
            ("two names for the ranking", [good[0], '{"id": "q2", "retrieved": [], '
                                                    '"retrieved_ids": []}'],
             ["log.jsonl:2", "'retrieved' and 'retrieved_ids' both give the ranking"]),
            ("a query on two records", [good[0], good[0]], ["log.jsonl:2", "query 'q1' has a "
                                                                           "record on line 1"]),
            ("not an object", [good[0], "[1, 2]"], ["log.jsonl:2", "expected an object"]),
            ("truncated last line", good[:2] + [good[2][:30]], ["log.jsonl:3", "invalid JSON"]),
            ("a bad ID", [good[0], '{"id": "q2", "relevant": ["d\\t"], "retrieved": []}'],
             ["log.jsonl:2: relevant[0]", "control character"]),
            ("a bad score", [good[0], '{"id": "q2", "relevant": ["d1"], '
                                      '"retrieved": {"d1": "x"}}'],
             ["log.jsonl:2: retrieved.d1", "score 'x'"]),
            ("labels nowhere", ['{"id": "q1", "retrieved": []}', '{"id": "q2", "retrieved": []}'], ["no labels"]),
        ]
        for name, lines, fragments in cases:
            with self.subTest(name):
                rejected(self, *cli(self.write("log.jsonl", "\n".join(lines) + "\n")), *fragments)

    def test_fields_must_be_an_object_and_labels_must_be_somewhere(self):
        path = self.write("log.jsonl", json_lines(labels=None))
        for fields in (["relevant"], "relevant=x"):
            with self.subTest(fields=fields), self.assertRaisesRegex(rre.EvalError, "fields must be {role: field name}"):
                rre.read_qrels(str(path), fields=fields)
        with self.assertRaisesRegex(rre.EvalError, "no labels: no record has relevant or reference_context_ids or "
                                                   "expected_ids"):
            rre.read_qrels(str(path))


class ReadersOnRealFilesTest(TempDirTestCase):
    def test_an_object_with_a_query_id_but_no_role_is_not_a_record(self):
        rejected(self, *cli("--qrels", self.write("odd.json", {"qid": "q1", "question": "why?"}), "--run",
                            self.write("r.json", {"q1": ["d1"]})),
                 "odd.json: qid: query 'qid': expected an object of document IDs to "
                 "grades, not str 'q1'")

    def test_a_bad_byte_after_a_blank_first_line_names_its_line(self):
        rejected(self, *cli("--qrels", self.write("q.txt", b"\nq1 0 d\xff 1\n"), "--run", self.write("r.json", {"q1": []})),
                 "q.txt:2: not UTF-8: byte 0xff")

    def test_a_bom_a_block_boundary_and_folded_chunks(self):
        records = "".join(json.dumps({"qid": q, "relevant": ["d1#1"], "retrieved": ["d1#1", "d1#2"]}) + "\n"
                          for q in ("q1", "q2"))
        status, out, err = cli(self.write("bom.jsonl", "\ufeff" + records), "-m", "R@1", "--chunk-separator", "#",
                               "--format", "table")
        self.assertEqual(status, 0, err)
        self.assertIn("folded 2 ranked chunks into an earlier chunk of their document, in 2 queries", out)
        lines = "".join("q%05d 0 d 1\n" % i for i in range(rre.BLOCK // 13))  # 13 bytes a line
        # its first byte the last of the first block
        path = self.write("q.txt", lines + "\u00e9q 0 d 1\n")
        self.assertEqual(len(lines.encode()) // rre.BLOCK, 0)
        self.assertEqual(rre.read_qrels(path)["\u00e9q"], {"d": 1})

    """Section 15 of the contract: files as other tools write them."""

    def setUp(self):
        super().setUp()
        os.chdir(self.tmp)
        self.addCleanup(os.chdir, ROOT)

    def test_no_letter_case_hint_for_ids_labeled_for_other_queries(self):
        qrels, runs = digits_run()
        status, out, err = cli(self.write("f.json", {"qrels": qrels, "runs": runs}), "-m", "RR")
        self.assertEqual((status, err), (0, ""))
        self.assertEqual(json.loads(out)["warnings"], [])
        hint = rre.id_mismatch({q: rre.Ranking(rre.judge({}, 2, {}), 0, ("D%d" % i,)) for i, q in enumerate("abcd")},
                               {q: {"d%d" % i: 1} for i, q in enumerate("abcd")})
        self.assertIn("differ in letter case", hint)

    def test_wrapped_halves_of_a_fixture(self):
        self.write("q.json", {"qrels": {"q1": ["d1", "d2"], "q2": ["d3"], "q3": ["d4"]}})
        self.write("r.json", {"runs": {"q1": ["d9", "d2", "d1"], "q2": ["d3", "d8", "d9"], "q3": ["d8", "d9", "d10"]}})
        status, out, err = cli("--qrels", "q.json", "--run", "r.json", "--baseline", "r.json", "-m", "R@3,RR@3")
        self.assertEqual(json.loads(out)["measures"], {"R@3": 2 / 3, "RR@3": 0.5}, err)
        self.assertEqual(rre.read_qrels("q.json")["q1"], {"d1": 1, "d2": 1})
        self.assertEqual(rre.read_run(Path("r.json"))["q3"], ["d8", "d9", "d10"])
        rejected(self, *cli("--qrels", "r.json", "--run", "r.json"), "r.json", 'without "qrels"', 'it has "runs"')
        # read by the reference reader, not as a query named "runs"
        self.write("empty.json", {"runs": {}})
        status, out, err = cli("--qrels", "q.json", "--run", "empty.json", "-m", "RR", "--missing-run", "zero")
        self.assertEqual((status, json.loads(out)["measures"], json.loads(out)["zeroed"]["missing_run"]),
                         (0, {"RR": 0.0}, ["q1", "q2", "q3"]), err)
        rejected(self, *cli("--qrels", "q.json", "--run", "q.json"), 'without "runs"', "a file of rankings")

    def test_arrays_and_single_records(self):
        records = [{"query_id": q, "relevant": rel, "retrieved": ret} for q, rel, ret in SEED_RECORDS]
        self.write("all.json", json.dumps(records, indent=2))
        self.assertEqual(cli("all.json", "--k", "3"), (0, SEED_STDOUT, ""))
        self.write("labels.json", [{"qid": q, "expected_ids": rel} for q, rel, _ in SEED_RECORDS])
        self.write("ranks.json", [{"qid": q, "retrieved_ids": ret} for q, _, ret in SEED_RECORDS])
        status, out, _ = cli("--qrels", "labels.json", "--run", "ranks.json", "--baseline", "all.json", "-m", "R@3")
        self.assertEqual((status, json.loads(out)["measures"]), (0, {"R@3": 2 / 3}))
        self.write("one.jsonl", json.dumps(records[0]) + "\n")
        status, out, _ = cli("one.jsonl", "-m", "R@3,RR@3")
        self.assertEqual(json.loads(out)["per_query"], {"q1": {"R@3": 1.0, "RR@3": 0.5}})
        self.assertEqual(rre.read_run("one.jsonl"), {"q1": ["d9", "d2", "d1"]})
        rejected(self, *cli(self.write("empty.json", "[]"), "-m", "R@3"), "empty.json", "no records")
        rejected(self, *cli(self.write("bad.json", [records[0], {"query_id": "q2", "retrieved": "d1"}]), "-m", "R@3"),
                 "bad.json: [1]: retrieved", "expected an object of document IDs")

    def test_fields_name_a_logs_own_keys(self):
        log = [{"question": "q?", "page": "p%d" % i, "expected_chunk_ids": rel, "retrieved_chunk_ids": ret, "qid": q}
               for i, (q, rel, ret) in enumerate(SEED_RECORDS)]
        self.write("log.jsonl", "\n".join(map(json.dumps, log)) + "\n")
        rejected(self, *cli("log.jsonl", "--k", "3"), "log.jsonl:1", "no labels (", "'expected_chunk_ids'",
                 "--fields relevant=KEY,retrieved=KEY")
        fields = ["--fields", "relevant=expected_chunk_ids", "--fields", "retrieved=retrieved_chunk_ids"]
        self.assertEqual(without_inputs(cli("log.jsonl", "-m", "R@3,RR@3", *fields)),
                         without_inputs(cli(FIXTURE, "-m", "R@3,RR@3")))
        self.assertEqual(without_inputs(cli("--qrels", "log.jsonl", "--run", "log.jsonl", "-m", "RR", *fields)),
                         without_inputs(cli(FIXTURE, "-m", "RR")))
        self.assertEqual(rre.read_qrels("log.jsonl", fields={"relevant": "expected_chunk_ids"})["q2"], {"d3": 1})
        rejected(self, *cli("--qrels", "log.jsonl", "--run", "log.jsonl", "--fields", "relevant=expected_chunk_ids"),
                 "no rankings: no record has retrieved", "the first record's keys", "--fields retrieved=KEY")
        rejected(self, *cli("log.jsonl", "--fields", "retrieved=retrieved_chunk_ids"),
                 "no labels: no record has relevant", "--fields relevant=KEY")
        rejected(self, *cli("log.jsonl", "--fields", "query=page,relevant=x,retrieved=y"), "log.jsonl:1",
                 "query 'p0': the record has no labels (x), ranking (y), evidence sets (evidence "
                 "or retrieval_gt) or answerability (answerable)")
        for bad, fragment in (("colour=x", "unknown role 'colour'"), ("relevant", "ROLE=KEY pairs"),
                              ("relevant=", "ROLE=KEY pairs")):
            with self.subTest(bad):
                rejected(self, *cli("log.jsonl", "--fields", bad), fragment)
        self.assertRaises(rre.EvalError, rre.read_run, "log.jsonl", fields={"colour": "x"})

    def test_the_help_examples_for_beir_and_logs_run_as_printed(self):
        examples = [line.split("rag_retrieval_eval.py ", 1)[1].split() for line in
                    rre.build_parser().format_help().splitlines() if "scifact/" in line or "--fields" in line
                    and line.strip().startswith("python3")]
        self.assertEqual(len(examples), 2, examples)
        os.makedirs("scifact/qrels")
        self.write("scifact/qrels/test.tsv",
                   b"query-id\tcorpus-id\tscore\r\n1\t31715818\t1\r\n3\t14717500\t1\r\n")
        self.write("results.json", {"1": {"31715818": 12.5, "1234": 3.0}, "3": {"99": 4.0}, "5": {"7": 1.0}})
        self.write("log.jsonl", '{"qid": "q1", "expected_chunk_ids": ["c1"], '
                                '"retrieved_chunk_ids": ["c2", "c1"]}\n{"qid": "q2", '
                                '"expected_chunk_ids": ["c3"], "retrieved_chunk_ids": ["c3"]}\n')
        for args in examples:
            with self.subTest(args):
                status, out, err = cli(*args)
                self.assertEqual(status, 0, err)
                self.assertTrue(json.loads(out)["measures"])

    def test_llamaindex_dataset_gives_its_labels(self):
        dataset = {"queries": {"q1": "What is X?", "q2": "Who made Y?"}, "corpus": {"n1": "X is ...", "n2": "Y ..."},
                   "relevant_docs": {"q1": ["n1"], "q2": ["n2"]}, "mode": "text"}
        self.write("train_dataset.json", dataset)
        self.assertEqual(rre.read_qrels("train_dataset.json"), {"q1": {"n1": 1}, "q2": {"n2": 1}})
        self.write("r.json", {"q1": ["n2", "n1"], "q2": ["n2"]})
        status, out, err = cli("--qrels", "train_dataset.json", "--run", "r.json", "-m", "RR")
        self.assertEqual((status, json.loads(out)["measures"]), (0, {"RR": 0.75}), err)

    def test_a_record_with_neither_labels_nor_ranking_names_its_line(self):
        lines = ['{"qid": "q1", "relevant": ["d1"], "retrieved": ["d1"]}',
                 '{"qid": "q2", "question": "?"}']
        rejected(self, *cli(self.write("l.jsonl", "\n".join(lines) + "\n")), "l.jsonl:2: query 'q2'",
                 "the record has no labels", "'qid', 'question'")
        misspelled = '{"qid": "q2", "relevnt": ["d3"], "retreived": ["d3"]}'
        rejected(self, *cli("--qrels", self.write("m.jsonl", lines[0] + "\n" + misspelled + "\n"), "--run",
                            "m.jsonl"), "m.jsonl:2", "'relevnt', 'retreived'")

    def test_duplicates_first_keeps_the_best_place_in_every_input(self):
        qrels = {"q1": ["d1"], "q2": ["d3"]}
        listed = {"q1": ["d9", "d1", "d9", "d1"], "q2": ["d3"]}
        self.write("f.json", {"qrels": qrels, "runs": listed})
        self.write("q.txt", "q1 0 d1 1\nq2 0 d3 1\n")
        self.write("r.txt", "q1 Q0 d9 1 1.0\nq1 Q0 d1 2 0.5\nq1 Q0 d1 3 2.0\nq2 Q0 d3 1 1\n")
        self.write("l.jsonl", '{"id": "q1", "relevant": ["d1"], "retrieved": ["d9", "d1", "d9"]}\n'
                              '{"id": "q2", "relevant": ["d3"], "retrieved": ["d3"]}\n')
        rejected(self, *cli("f.json", "-m", "RR"), "runs.q1[2]", "'d9' appears twice", "--duplicates first")
        rejected(self, *cli("--qrels", "q.txt", "--run", "r.txt"), "r.txt:3", "ranked twice", "--duplicates first")
        status, out, err = cli("f.json", "-m", "RR,NumRet", "--duplicates", "first")
        result = json.loads(out)
        self.assertEqual((result["per_query"]["q1"], result["deduplicated"]), ({"RR": 0.5, "NumRet": 2}, {"q1": 2}))
        self.assertIn("--duplicates first removed 2 repeated documents from 1 query ('q1')", err)
        for status, out, err in both_paths("--qrels", "q.txt", "--run", "r.txt", "--baseline", "f.json", "-m", "RR",
                                           # the TREC run: d1's best line (2.0) ranks it first
                                           "--duplicates", "first"):
            result = json.loads(out)
            self.assertEqual((result["per_query"]["q1"], result["deduplicated"], result["baseline_deduplicated"]),
                             ({"RR": 1.0}, {"q1": 1}, {"q1": 2}))
            self.assertIn("the baseline's 1 query", err)
        status, out, _ = cli("l.jsonl", "-m", "RR", "--duplicates", "first")
        self.assertEqual(json.loads(out)["deduplicated"], {"q1": 1})
        self.assertEqual(rre.score_run(qrels, listed, "RR", duplicates="first")["deduplicated"], {"q1": 2})
        labeled_twice = {"qrels": {"q1": ["d1", "d1"]}, "runs": {"q1": ["d1"]}}
        status, out, err = cli(self.write("g.json", labeled_twice), "--duplicates", "first")
        rejected(self, status, out, err, "qrels.q1[1]", "appears twice")
        self.assertNotIn("--duplicates", err)

    def test_seed_shape_rule(self):
        self.assertEqual(cli(FIXTURE, "--k", "3", "--format", "json"), (0, SEED_STDOUT, ""))
        self.assertEqual(cli(FIXTURE, "--format", "json"), (0, SEED_STDOUT, ""))
        for other in (["--format", "table"], ["-m", "R@3"], ["--k", "3", "5"], ["--depth", "10"]):
            with self.subTest(other):
                self.assertNotEqual(cli(FIXTURE, *other)[1], SEED_STDOUT)
        self.assertIn("no other option than --format json", " ".join(rre.build_parser().format_help().split()))

    def test_beir_tsv_with_its_header_is_split_on_tabs(self):
        self.write("test.tsv", b"query-id\tcorpus-id\tscore\r\nq1\tdoc one\t1\r\nq2\td3\t1\r\n")
        self.write("results.json", {"q1": {"doc one": 3.0, "d2": 1.0}, "q2": {"d9": 2.0, "d3": 1.0}})
        status, out, err = cli("--qrels", "test.tsv", "--run", "results.json", "-m", "RR,nDCG@10,R@100")
        self.assertEqual((status, json.loads(out)["measures"]["RR"]), (0, 0.75), err)
        rejected(self, *cli("--qrels", self.write("e.tsv", "query-id\tcorpus-id\tscore\nq1\t\t1\n"),
                            "--run", "results.json"), "e.tsv:2", "an empty column")

    def test_too_large_gains_are_refused(self):
        path = self.write("f.json", {"qrels": {"q1": {"d1": 1, "d2": 1, "d3": 1}}, "runs": {"q1": ["d1", "d2", "d3"]}})
        for extra in ([], ["--baseline", path]):
            rejected(self, *cli(path, "-m", "nDCG(gains={1:1e308})", *extra),
                     "a gain is at most 2**53 in size")

    def test_library_arguments(self):
        qrels, run = {"q1": ["d1"]}, {"q1": ["d1"]}
        for bad in (None, 5, b"q.txt"):
            with self.subTest(bad):
                self.assertRaises(rre.EvalError, rre.read_qrels, bad)
                self.assertRaises(rre.EvalError, rre.read_run, bad)
        self.assertRaisesRegex(rre.EvalError, "not 5", rre.score_run, qrels, run, 5)
        self.assertRaisesRegex(rre.EvalError, "unknown measure ''", rre.score_run, qrels, run, [])
        self.assertRaisesRegex(rre.EvalError, "duplicates must be one of", rre.score_run, qrels, run, duplicates="last")
        from decimal import Decimal
        self.assertEqual(rre.score_run(qrels, {"q1": {"d1": Decimal("0.3"), "d2": Decimal("0.5")}}, "RR")["measures"],
                         {"RR": 0.5})
        self.assertRaises(rre.EvalError, rre.score_run, qrels, {"q1": {"d1": Decimal("NaN")}}, "RR")

    def test_tied_ranks_agree_with_a_sort(self):
        rng = random.Random(18)
        for _ in range(50):
            docs = ["d%02d" % i for i in rng.sample(range(60), 30)]
            scores = [float(rng.choice([1, 2, 3, 4])) for _ in docs]
            labels = {d: 1 for d in rng.sample(docs, rng.randint(1, 12))}
            order = sorted(zip(scores, docs), reverse=True)
            expected = {d: i for i, (_, d) in enumerate(order, 1) if d in labels}
            self.assertEqual(rre.rank_scored(docs, scores, labels)[0], expected)


# --- Evidence sets (CLI_CONTRACT section 16) ---


class LogsAsWrittenTest(TempDirTestCase):
    """Section 24: paths in --fields, a scores role, --match text and contains, binary files named."""
    FIELDS = ("--fields", "relevant=gold[].fact,retrieved=hits[].text,scores=hits[].score")

    def test_the_worked_example_on_the_command_line_and_in_the_library(self):
        fixture = self.write("f.json", {"qrels": {"q1": FACTS}, "runs": {"q1": CHUNKS}})
        status, out, err = cli(fixture, "--match", "contains", "-m", "R@2,R@3,R@4,RR")
        self.assertEqual((status, json.loads(out)["measures"]), (0, {"R@2": 0.5, "R@3": 0.5, "R@4": 1.0, "RR": 0.5}))
        self.assertIn("note: 1 ranked text contained more than one label, in 1 query ('q1')", err)
        self.assertEqual(rre.score_run({"q1": FACTS}, {"q1": CHUNKS}, "R@2,R@3,R@4,RR", match="contains")["measures"],
                         {"R@2": 0.5, "R@3": 0.5, "R@4": 1.0, "RR": 0.5})
        fifth = rre.score_run({"q1": FACTS}, {"q1": CHUNKS + [FACTS[0]]}, "R@4,NumRet", match="contains")
        self.assertEqual((fifth["measures"], fifth["folded"]), ({"R@4": 1.0, "NumRet": 4}, {"total": 1, "per_query": {"q1": 1}}))
        self.assertEqual(cli(fixture, "--match", "text", "-m", "R@4")[1:], cli(fixture, "-m", "R@4", "--match", "text")[1:])
        # whole texts match no fact: a hint
        status, out, err = cli(fixture, "--match", "text", "-m", "R@4")
        self.assertEqual(json.loads(out)["measures"], {"R@4": 0.0})
        self.assertIn("ranked entries hold labeled texts inside them: try --match contains", err)

    def test_a_log_as_written_paths_scores_and_texts(self):
        log = self.write("log.jsonl", text_log())
        status, out, err = cli(log, *self.FIELDS, "--match", "contains", "-m",
                               "R@2,R@4,RR,Success(thresh=0.75)@4")
        self.assertEqual((status, json.loads(out)["measures"]),
                         (0, {"R@2": 0.5, "R@4": 1.0, "RR": 0.5, "Success(thresh=0.75)@4": 1.0}), err)
        array = self.write("log.json", [json.loads(line) for line in text_log().splitlines()])
        one = self.write("one.json", json.loads(text_log().splitlines()[0]))
        for path in (array, one):  # an array of records, and one record, read alike
            self.assertEqual(without_inputs(cli(path, *self.FIELDS, "--match", "contains", "-m", "R@2,R@4,RR")),
                             without_inputs(cli(log, *self.FIELDS, "--match", "contains", "-m", "R@2,R@4,RR")))
        # the first chunk now ranks last
        reversed_scores = text_log().replace('"score": 1.0', '"score": 0.01')
        status, out, _ = cli(self.write("r.jsonl", reversed_scores), *self.FIELDS, "--match", "contains", "-m", "R@3")
        # ranked by the parallel scores
        self.assertEqual(json.loads(out)["measures"], {"R@3": 1.0})

    def test_every_mode_and_format_reads_texts_as_the_same_ids(self):
        """Texts, claimed, score as the IDs they stand for, in every mode and every format."""
        # each holds one fact at most: a fixed claim
        chunks = CHUNKS[:3] + ["The Seine flows through Paris. Yes."]
        ids = dict(zip(chunks, ("d0", "f0", "d2", "f1")))
        as_ids = lambda run: {q: [ids[c] for c in r] for q, r in run.items()}
        qids = ["q%d" % i for i in range(6)]
        run = {q: chunks[i % 4:] + chunks[:i % 4] for i, q in enumerate(qids)}
        base, other = {q: list(reversed(r)) for q, r in run.items()}, {q: r[1:] for q, r in run.items()}
        (self.tmp / "t").mkdir()
        (self.tmp / "i").mkdir()
        texts = {"qrels": self.write("t/q.json", {q: FACTS for q in qids}), "run": self.write("t/r.json", run),
                 "base": self.write("t/b.json", base), "other": self.write("t/o.json", other)}
        plain = {"qrels": self.write("i/q.json", {q: ["f0", "f1"] for q in qids}),
                 "run": self.write("i/r.json", as_ids(run)), "base": self.write("i/b.json", as_ids(base)),
                 "other": self.write("i/o.json", as_ids(other))}
        groups = self.write("g.json", {"odd": qids[1::2], "even": qids[::2]})
        modes = {"one run": ["--run", "{run}"], "baseline": ["--run", "{run}", "--baseline", "{base}"],
                 "several runs": ["--run", "{run}", "--run", "{other}", "--baseline", "{base}"],
                 "groups": ["--run", "{run}", "--groups", str(groups), "--baseline", "{base}"]}
        for mode, args in modes.items():
            for fmt in ("json", "table", "markdown", "csv", "trec"):
                if fmt == "trec" and mode != "one run":
                    continue
                with self.subTest(mode=mode, format=fmt):
                    line = lambda files, *more: cli("--qrels", files["qrels"], *[a.format(**files) for a in args],
                                                    "-m", "R@2,RR,nDCG@3", "--format", fmt, *more)
                    got, want = line(texts, "--match", "contains"), line(plain)
                    self.assertEqual(got[0], want[0], got[2])
                    # Markdown escapes '_'
                    folders = [f(str(self.tmp / d)) for d in "ti" for f in (str, rre._md)]
                    keep = lambda text: "\n".join(l for l in functools.reduce(lambda t, f: t.replace(f, "X"), folders,
                                                                               text).splitlines() if "removed 0" not in l)
                    if fmt == "json":
                        drop = lambda r: {k: v for k, v in r.items() if k not in ("folded", "several_labels", "manifest")}
                        got_json, want_json = json.loads(got[1]), json.loads(want[1])
                        if "runs" in got_json:
                            got_json = {n: drop(r) for n, r in got_json["runs"].items()}
                            want_json = {n: drop(r) for n, r in want_json["runs"].items()}
                            self.assertEqual(list(got_json.values()), list(want_json.values()))
                        else:
                            self.assertEqual(drop(got_json), drop(want_json))
                    else:
                        self.assertEqual(keep(got[1]), keep(want[1]))

    def test_contains_under_budgets_floors_depth_and_ties(self):
        """A budget weighs every text, claimed or not (the model reads them all); --depth counts the
        documents the texts bring in; which label a tied text claims depends on the order."""
        log = self.write("b.jsonl", "".join(json.dumps(r) + "\n" for r in [
            {"id": "q1", "gold": FACTS, "tokens": [100, 300, 50, 200], "s": [0.9, 0.8, 0.8, 0.5],
             "hits": ["Lyon is large.", "Fact: " + FACTS[0], FACTS[0], FACTS[1] + " Yes."]},
            {"id": "q2", "gold": FACTS[1:], "tokens": [10, 10], "s": [0.3, 0.3],
             "hits": ["The Seine flows through Paris, it does.", FACTS[1]]}]))
        fields = ("--fields", "relevant=gold,retrieved=hits", "--match", "contains", "--format", "csv")
        measures = "R@2,R@4,R(tokens=400)@4,R(tokens=450,pack=skip)@4,NumRet"
        # q1: Lyon, f0, (the bare fact is removed: f0 is claimed), f1; 400 tokens hold Lyon and the
        # first fact
        self.assertEqual(cli(log, *fields, "-m", measures)[1].splitlines()[1:],
                         ["q1,0.5,1.0,0.5,0.5,3", "q2,1.0,1.0,1.0,1.0,2"])
        self.assertEqual(cli(log, *fields, "-m", "R@4,RR", "--depth", "2")[1].splitlines()[1:],
                         ["q1,0.5,0.5", "q2,1.0,0.5"])
        status, out, err = cli(log, "--fields", "relevant=gold,retrieved=hits,scores=s", "--match", "contains", "-m",
                               "RR", "--ties")
        # q1: the tie .8 is ordered by text, descending: the bare fact claims f0 first
        result = json.loads(out)
        self.assertEqual(([row["RR"] for row in result["per_query"].values()], result["ties"]["not_bounded"]),
                         ([0.5, 1.0], {"RR": "under --match contains, the labels ranked texts "
                                             "claim depend on the order of tied texts"}))

    def test_budgets_count_documents_as_the_measures_do(self):
        # the bare fact is removed: f0 is claimed
        run = {"q1": ["Fact: " + FACTS[0], FACTS[0], FACTS[1] + " Yes."]}
        lengths = {text: 10 for text in run["q1"]}
        # --depth 2 counts documents: the removed text brings none, so the second fact is within it
        self.assertEqual(rre.score_run({"q1": FACTS}, run, "R(tokens=1000)@4", match="contains", depth=2,
                                       lengths=lengths)["measures"], {"R(tokens=1000)@4": 1.0})
        # an ID that holds a label's ID is another ID: the budget stops at the reach-th document,
        # d1x
        self.assertEqual(rre.score_run({"q1": ["d1", "d2"]}, {"q1": ["d1", "d1x", "d2"]}, "R(tokens=100)@2",
                                       lengths={"d1": 1, "d1x": 1})["measures"], {"R(tokens=100)@2": 0.5})

    def test_the_two_readings_of_the_claim_rule_agree(self):
        """documents() finds the labels in the joined texts at once; a budget's walk claims item by item."""
        rng = random.Random(24)
        for _ in range(2000):
            labels = dict.fromkeys("".join(rng.choice("abc") for _ in range(rng.randint(1, 2))) for _ in range(3))
            texts = list(dict.fromkeys("".join(rng.choice("abcx ") for _ in range(rng.randint(1, 5)))
                                       for _ in range(rng.randint(0, 6))))
            claimed, walked = set(), []
            for text in texts:
                walked.append(rre._claim(text, labels, claimed))
            with self.subTest(labels=labels, texts=texts):
                self.assertEqual(rre.documents(texts, labels, rre.Reading(match="contains")),
                                 ([doc for doc, _ in walked], sum(held > 1 for _, held in walked)))

    def test_evidence_sets_of_texts(self):
        # one set, a slot per fact; they stand in for labels, or sit beside
        sets = {"q1": [[FACTS[0]], [FACTS[1]]]}
        for fixture in ({"evidence": sets, "runs": {"q1": CHUNKS}}, {"qrels": {"q1": FACTS}, "evidence": sets,
                                                                      "runs": {"q1": CHUNKS}}):
            with self.subTest(qrels="qrels" in fixture):
                out = cli(self.write("e.json", fixture), "--match", "contains", "-m",
                          "EvidenceRecall@2,EvidenceSuccess@4,EvidenceRR")[1]
                self.assertEqual(json.loads(out)["measures"],
                                 {"EvidenceRecall@2": 0.5, "EvidenceSuccess@4": 1.0, "EvidenceRR": 0.25})

    def test_four_frameworks_logs_each_read_with_one_command(self):
        """Small excerpts in the shapes these tools write (our own words, their field names)."""
        # a retrieval node's result
        autorag = self.write("autorag.jsonl", "".join(json.dumps(r) + "\n" for r in [
            {"qid": "1oy5", "query": "why rush first?", "retrieval_gt": [["5b95"]],
             "retrieved_ids": ["5b95", "5b95", "2b08"], "retrieve_scores": [12.7, 12.7, 5.7], "retrieval_recall": 1.0},
            {"qid": "2loj", "query": "gas tiers?", "retrieval_gt": [["b9ad"], ["e2f1"]],
             "retrieved_ids": ["2b08", "b9ad"], "retrieve_scores": [3.1, 24.2], "retrieval_recall": 0.5}]))
        self.assertEqual(rre.read_run(self.write("a1.jsonl", autorag.read_text().splitlines()[1] + "\n")),
                         # the library reads the parallel scores too
                         {"2loj": {"2b08": 3.1, "b9ad": 24.2}})
        self.assertEqual(rre.read_run(self.write("labels.jsonl", '{"qid": "q1", "relevant": ["a"]}\n'
                                                                 '{"qid": "q2", "retrieved": ["b"]}\n')), {"q2": ["b"]})
        out = json.loads(cli(autorag, "--duplicates", "first", "-m", "EvidenceRecall@10,EvidenceRR")[1])
        # AutoRAG's
        self.assertEqual(out["per_query"], {"1oy5": {"EvidenceRecall@10": 1.0, "EvidenceRR": 1.0},
                                            # own recall
                                            "2loj": {"EvidenceRecall@10": 0.5, "EvidenceRR": 0.0}})
        # MultiHop-RAG's retrieval output: texts, no query ID
        multihop = self.write("multihop.json", [
            {"query": "Who is accused?", "question_type": "inference_query", "gold_list": [{"fact": FACTS[0]}],
             "retrieval_list": [{"text": "x\n" + c, "score": 0.9 - i / 10} for i, c in enumerate(CHUNKS)]}])
        fields = "query=query,retrieved=retrieval_list[].text,scores=retrieval_list[].score,relevant=gold_list[].fact"
        self.assertEqual(json.loads(cli(multihop, "--fields", fields, "--match", "contains", "-m", "Success@1,RR@10")[1])[
            "measures"], {"Success@1": 0.0, "RR@10": 0.5})
        ragas = self.write("ragas.jsonl", json.dumps({  # an EvaluationDataset's sample
            "user_input": "What is the capital?", "reference_contexts": [FACTS[0]],
            "retrieved_contexts": ["Lyon is large.", "Paris is the\ncapital of France."], "response": "Paris."}) + "\n")
        self.assertEqual(json.loads(cli(ragas, "--fields", "query=user_input,relevant=reference_contexts,retrieved="
                                    "retrieved_contexts", "--match", "text", "-m", "RR")[1])["measures"], {"RR": 0.5})
        # Document.to_dict() of each retrieved document
        haystack = self.write("haystack.jsonl", json.dumps({
            "query_id": "q1", "relevant": ["doc-2"], "documents": [
                {"id": "doc-1", "content": "...", "score": 0.4, "meta": {"file": "a.md"}},
                {"id": "doc-2", "content": "...", "score": 0.9, "meta": {"file": "b.md"}}]}) + "\n")
        self.assertEqual(json.loads(cli(haystack, "--fields", "retrieved=documents[].id,scores=documents[].score", "-m",
                                        "RR,Success(thresh=0.5)@1")[1])["measures"], {"RR": 1.0, "Success(thresh=0.5)@1": 1.0})

    def test_bad_paths_scores_and_binary_files_are_named(self):
        log = self.write("log.jsonl", text_log(queries=("q1", "q2")))
        cases = {
            ("--fields", "retrieved=hits[].txt", "--match", "text"): "log.jsonl:1: the path "
                                                                     "hits[].txt leads nowhere: "
                                                                     "hits[0] has no key 'txt'",
            ("--fields", "relevant=gold[].fact,retrieved=hits.text", "--match", "text"):
                "the path hits.text leads nowhere: hits is list",
            ("--fields", "retrieved=hits[]..text"): "--fields retrieved: 'hits[]..text' is not a "
                                                    "field or a path",
            ("--fields", "relevant=gold[].fact,retrieved=hits[].text,scores=gold", "--match", "text"):
                "log.jsonl:1: gold: query 'q1': expected a list of 4 scores, one per ranked "
                "ID, not [{'fact'",
            ("--chunk-separator", "#", "--match", "text"): "--chunk-separator cuts IDs, and "
                                                           "--match text compares texts",
            ("--fields", "relevant=gold[].fact,retrieved=hits[].text"):
                "holds a control character ('\\n'): IDs are printable text; texts, not IDs, are "
                "read with --match text",
        }
        for args, message in cases.items():
            with self.subTest(args=args):
                rejected(self, *cli(log, *args), message)
        for name, data, what in (("a.parquet", b"PAR1\x15\x04", "a Parquet file (AutoRAG's, pandas')"), ("a.db", b"SQLite format 3\x00xx",
                                 "an SQLite database"), ("a.zip", b"PK\x03\x04\x14\x00", "a zip archive")):
            with self.subTest(binary=name):
                path = self.write(name, data)
                rejected(self, *cli(path), "%s: %s, not text" % (path, what))
                rejected(self, *cli("--qrels", path, "--run", path), what)
        scored = self.write("s.jsonl", '{"id": "q1", "relevant": ["a"], "retrieved": {"a": 1.0}, '
                                       '"retrieve_scores": [1]}\n')
        rejected(self, *cli(scored), "retrieve_scores: query 'q1': the ranking gives its "
                                     "scores already")
        # a query named PAR1 is text, as its bytes can be
        text = self.write("par1.txt", "PAR1 0 d1 1\n")
        run = self.write("par1.run", "PAR1 Q0 d1 1 1.0 r\n")
        self.assertEqual(json.loads(cli("--qrels", text, "--run", run, "-m", "RR")[1])["measures"], {"RR": 1.0})

    def test_what_a_log_gives_where_ids_are_expected_is_named_with_its_path(self):
        docs = [{"text": "Paris is large.", "score": 0.5}, {"text": "Lyon.", "score": 0.4}]
        records = [{"query_id": "q1", "relevant": ["d1"], "retrieval_list": docs}]
        hint = ("retrieval_list[0]: query 'q1': expected IDs, not objects (keys 'text', 'score'): "
                "read the key that holds each with --fields retrieved=retrieval_list[].text")
        for name, content in (("one.json", records[0]), ("all.json", records),
                              ("log.jsonl", json.dumps(records[0]) + "\n" + json.dumps(dict(records[0], query_id="q2")))):
            path = self.write(name, content)
            with self.subTest(name=name):
                rejected(self, *cli(path, "--fields", "retrieved=retrieval_list"), hint)
                rejected(self, *cli("--qrels", path, "--run", path, "--fields", "retrieved=retrieval_list"), hint)
                with self.assertRaisesRegex(rre.EvalError, re.escape(hint)):
                    rre.read_run(path, fields={"retrieved": "retrieval_list"})
        gold = self.write("gold.jsonl", json.dumps({"query_id": "q1", "gold": [{"fact": "Paris."}], "retrieved": []}))
        rejected(self, *cli(gold, "--fields", "relevant=gold", "--match", "text"),
                 "gold[0]: query 'q1': expected texts, not objects (keys 'fact'): read the key "
                 "that holds each with --fields relevant=gold[].fact")
        listed = self.write("q.jsonl", '{"meta": {"q": ["x"]}, "relevant": ["d1"], "retrieved": ["d1"]}\n' * 2)
        rejected(self, *cli(listed, "--fields", "query=meta.q"),
                 "q.jsonl:1: meta.q: query ID must be a string, not list ['x']")

    def test_messages_that_say_what_a_file_is_and_what_to_do(self):
        empty = self.write("na.jsonl", '{"query_id": "q1", "relevant": ["d1"], "retrieved": '
                                       '["d1"]}\n{"query_id": "q2", "relevant": [], '
                                       '"retrieved": []}\n')
        useful = ("if 'q2' has no answer in the corpus, say so: --empty-labels no-answer, "
                  "\"answerable\": false in a record, or --no-answer FILE")
        # the empty list is the clue, with Abstain or without
        for measures in ("R@3", "R@3,Abstain"):
            with self.subTest(measures=measures):
                rejected(self, *cli(empty, "-m", measures), useful)
                rejected(self, *cli("--qrels", empty, "--run", empty, "-m", measures), useful)
        dataset = self.write("li.json", {"queries": {"q1": "What?"}, "corpus": {"d1": "Text."},
                                         "relevant_docs": {"q1": ["d1"]}, "mode": "text"})
        said = "li.json: a LlamaIndex dataset (queries, relevant_docs) holds labels, not rankings: it is read as --qrels"
        run = self.write("r.json", {"q1": ["d1"]})
        for args in ([dataset], ["--qrels", run, "--run", dataset], ["--qrels", dataset, "--run", run, "--baseline",
                                                                       dataset]):
            with self.subTest(args=args):
                rejected(self, *cli(*args), said)
        self.assertEqual(cli("--qrels", dataset, "--run", run, "-m", "R@1")[0], 0)
        long = "q" + "x" * 80
        err = cli("--qrels", self.write("l.json", {long: ["d1"]}), "--run", self.write("lr.json", {"q2": ["d1"]}))[2]
        self.assertIn("('q%s...')" % ("x" * 54), err)  # a quote closed, 60 characters in all
        self.assertEqual(rre.show("\x01" * 40), "'" + "\\x01" * 13 + "...'")
        self.assertEqual(rre.show("it's" * 20)[-4:], "...\"")  # the quote its own repr opened

    def test_ids_read_as_texts_score_as_ids(self):
        for args in ((FIXTURE, "-m", "R@2,RR,nDCG@3"), ("--qrels", FIXTURE, "--run", FIXTURE, "-m", "AP,P@2")):
            with self.subTest(args=args):
                self.assertEqual(without_inputs(cli(*args, "--match", "text"), whole=True),
                                 without_inputs(cli(*args), whole=True))

    def test_texts_are_normalized_and_checked_as_texts(self):
        fixture = self.write("f.json", {"qrels": {"q1": ["caf\u00e9  au\tlait"]},
                                        "runs": {"q1": ["x", "cafe\u0301 au lait\n"]}})
        self.assertEqual(json.loads(cli(fixture, "--match", "text", "-m", "RR")[1])["measures"], {"RR": 0.5})
        twice = self.write("t.json", {"qrels": {"q1": ["a b"]}, "runs": {"q1": ["a  b", "a\nb"]}})
        rejected(self, *cli(twice, "--match", "text"),
                 "runs.q1[1]: query 'q1': document 'a b' appears twice")
        blank = self.write("b.json", {"qrels": {"q1": ["a b"]}, "runs": {"q1": [" \n "]}})
        rejected(self, *cli(blank, "--match", "text"),
                 "runs.q1[0]: query 'q1': document ID '' is blank")
        odd = self.write("o.json", {"qrels": {"q1": ["a b"]}, "runs": {"q1": "a b"}})
        rejected(self, *cli(odd, "--match", "text"),
                 "expected an object of document IDs to scores, not str 'a b'")
        keys = self.write("k.json", {"qrels": {"q1": {"a b": 1, "a  b": 2}}, "runs": {"q1": ["a b"]}})
        rejected(self, *cli(keys, "--match", "text"),
                 "texts 'a b' and 'a  b' are one text once normalized")
        self.assertEqual(rre.text_name("a b", "text"), "t:%s 'a b'" % hashlib.sha256(b"a b").hexdigest()[:12])

    def test_messages_that_point_to_the_fix(self):
        empty = self.write("e.jsonl", '{"id": "q1", "relevant": [], "retrieved": ["a"]}\n'
                                      '{"id": "q2", "relevant": ["b"], "retrieved": ["b"]}\n')
        rejected(self, *cli(empty), "no relevant label at level 1 ('q1')",
                 "see --no-relevant; or, if 'q1' has no answer in the corpus, say so: "
                 "--empty-labels no-answer, \"answerable\": false in a record, or "
                 "--no-answer FILE")
        qrels, run = self.write("q.json", {"q1": ["a"]}), self.write("r.json", {"q1": ["a"], "q2": ["b"], "q3": ["c"]})
        rejected(self, *cli("--qrels", qrels, "--run", run),
                 "2 ranked queries have no labels ('q2', 'q3')",
                 "(a run of every query, as BEIR writes, is scored on the labeled ones with "
                 "--unlabeled skip)")
        self.assertEqual(cli("--qrels", qrels, "--run", run, "--unlabeled", "skip", "-m", "R@1")[0], 0)
        labeled = self.write("l.json", {"q1": ["a"], "q9": ["b"]})
        err = cli("--qrels", labeled, "--run", run, "--unlabeled", "skip", "-m", "R@1")[2]
        # no BEIR hint
        self.assertIn("1 labeled query has no ranking ('q9'); see --missing-run and --unlabeled\n", err)
        unanswered = self.write("n.txt", "q9\n")
        err = cli("--qrels", qrels, "--run", self.write("r1.json", {"q1": ["a"]}), "--no-answer", unanswered,
                  "-m", "R@1,Abstain")[2]
        self.assertIn("query sets differ: 1 query without an answer has no ranking ('q9'); see", err)
        # a record, by its keys
        one = self.write("one.json", {"query_id": 5, "relevant": ["a"], "retrieved": ["a"]})
        rejected(self, *cli(one), "one.json: query_id: query ID must be a "
                                  "string, not int 5")  # its JSON path
        # the ranked IDs share one character
        theirs = {"q%d" % i: ["%s%d" % (chr(65 + i), i)] for i in range(12)}
        ours = {q: ["x" + d for d in docs] for q, docs in theirs.items()}
        _, _, err = cli("--qrels", self.write("xq.json", theirs), "--run", self.write("xr.json", ours), "-m", "R@2")
        self.assertIn("ranked IDs start with 'x' and labeled IDs do not", err)
        labels = {"q%d" % i: ["<dbpedia:E%d>" % i] for i in range(12)}
        ranked = {"q%d" % i: ["doc:<dbpedia:E%d>" % i, "doc:<dbpedia:X%d>" % i] for i in range(12)}
        _, _, err = cli("--qrels", self.write("pq.json", labels), "--run", self.write("pr.json", ranked), "-m", "R@2")
        self.assertIn("warning: 12 of 12 queries retrieved no labeled document; ranked IDs start with 'doc:' and "
                      "labeled IDs do not", err)


class RoleRulesTest(TempDirTestCase):
    """Section 9 for the roles of sections 15 to 19: an input nothing uses, a role named twice,
    a record with nothing to score, and contradictions between inputs are refused with one
    line naming both places; through both reader twins."""

    def setUp(self):
        super().setUp()
        w = self.write
        self.qrels = w("q.txt", "q1 0 d1 1\nq2 0 d3 1\n")
        self.run = w("r.txt", "q1 Q0 d1 1 0.9 t\nq2 Q0 d3 1 0.8 t\n")
        self.base = w("b.txt", "q1 Q0 d1 1 0.9 t\nq2 Q0 d9 1 0.8 t\n")
        self.lengths = w("l.txt", "d1 3\nd3 4\nd9 1\n")
        self.evidence = w("e.json", {"q1": ["d1"], "q2": ["d3"]})
        self.log = w("log.jsonl", '{"query_id": "q1", "relevant": ["d1"], "retrieved": ["d1"]}\n'
                                  '{"query_id": "q2", "answerable": true}\n')
        self.answered = w("a.jsonl", '{"query_id": "q1", "relevant": ["d1"], "retrieved": '
                                     '["d1"]}\n{"query_id": "q2", "answerable": true, "relevant": '
                                     '{"d3": 0}, "retrieved": []}\n')
        self.no_answer = w("n.txt", "q2\n")
        self.evfix = w("ef.json", {"evidence": {"q1": [["d1"], ["d2"]], "q2": ["d3"]},
                                   "runs": {"q1": ["d2", "d1"], "q2": ["d3"]}})
        self.evbase = w("eb.json", {"evidence": {"q1": [["d1"]], "q2": ["d3"]}, "runs": {"q1": ["d1"], "q2": ["d3"]}})
        self.evlog = w("eb.jsonl", '{"qid": "q1", "evidence": [["d1"]], "retrieved": ["d1"]}\n'
                                   '{"qid": "q2", "evidence": ["d3"], "retrieved": ["d3"]}\n')

    def test_refusals(self):
        q, r = ["--qrels", self.qrels], ["--run", self.run]
        cases = [  # (arguments, fragments of the one line)
            (q + r + ["-m", "R@3", "--lengths", self.lengths],
             ["--lengths gives token counts, and no measure has a token budget", "R(tokens=2000)@10"]),
            (q + r + ["-m", "R(thresh=0.5)@3", "--lengths", self.lengths], ["no measure has a token budget"]),
            (q + r + ["-m", "R@3", "--evidence", self.evidence],
             ["--evidence gives evidence sets, and no measure reads them beside the labels",
              "add EvidenceRecall or EvidenceSuccess or EvidenceRR,",
              "leave the labels out"]),
            ([self.evfix.with_name("f.json"), "-m", "R@3", "--evidence", self.evidence], ["no measure reads them"]),
            ([self.log, "-m", "R@3", "--fields", "relevant=x,relevant=relevant"],
             ["--fields names the role relevant twice (x, then relevant)"]),
            ([self.log, "-m", "R@3", "--fields", "relevant=x", "--fields", "retrieved=y,relevant=relevant"],
             # in two options as in one
             ["--fields names the role relevant twice (x, then relevant)"]),
            (q + r + ["--baseline", self.base, "-m", "R@3", "--fields", "relevant=expected"],
             ["--fields names the fields of JSON records, and every input is text (TREC or TSV): "
              "it would change nothing"]),
            ([self.log, "-m", "R@3", "--fields", "relevant=retrieved"],
             ["--fields: field 'retrieved' would give both the labels and the ranking"]),
            ([self.log, "-m", "R@3", "--fields", "query=relevant"], ["would give both the query "
                                                                     "ID and the labels"]),
            ([self.log, "--qrels", self.qrels, "-m", "R@3"], ["give a FIXTURE or --qrels and "
                                                              "--run, not both"]),
            ([self.log, "-m", "R@3"], ["log.jsonl:2", "query 'q2'",
                                       "says its question has an answer, and gives no labels "
                                       "(relevant or reference_context_ids or expected_ids), "
                                       "ranking (retrieved or retrieved_context_ids or "
                                       "retrieved_ids) or evidence sets (evidence or "
                                       "retrieval_gt): nothing to score"]),
            (["--qrels", self.log, "--run", self.log, "-m", "R@3"], ["log.jsonl:2", "nothing to score"]),
            ([self.answered, "-m", "R@3", "--no-answer", self.no_answer],
             ["a.jsonl:2", "query 'q2'",
              "says its question has an answer, and --no-answer %s lists it" % self.no_answer]),
            (["--qrels", self.answered, "--run", self.answered, "-m", "R@3", "--no-answer", self.no_answer],
             ["a.jsonl:2", "--no-answer %s lists it" % self.no_answer]),
            (q + r + ["-m", "R@3", "--no-answer", self.write("n.json", [])],
             ["n.json: no queries: the list of questions without an answer is empty"]),
            ([self.write("f2.json", {"qrels": {"q1": ["d1"]}, "runs": {"q1": ["d1"]}, "no_answer": []}), "-m", "R@3"],
             ["f2.json: no_answer: no queries"]),
            (q + r + ["--baseline", self.base, "--replicate", self.run, "-m", "R@3"],
             ["--replicate %s is the candidate's own input (--run %s)" % (self.run, self.run)]),
            ([self.evfix, "--baseline", self.base, "--replicate", self.evfix, "-m", "R@3"],
             ["is the candidate's own input (FIXTURE %s)" % self.evfix]),
            ([self.evfix, "--baseline", self.evbase, "-m", "EvidenceRecall@3"],
             ["eb.json: evidence: the baseline's evidence sets differ from the candidate's (%s) "
              "on 1 query ('q1')"
              % self.evfix]),
            ([self.evfix, "--baseline", self.evlog, "-m", "EvidenceRecall@3"],
             ["eb.jsonl: evidence: the baseline's evidence sets differ", "on 1 query ('q1')"]),
            (["--evidence", self.evfix, "--run", self.evfix, "--baseline", self.run, "--replicate", self.evbase,
              "-m", "EvidenceRecall@3"], ["eb.json: evidence: the replicate's "
                                          "evidence sets differ"]),
            (q + r + ["--baseline", self.write("eb2.json", {"evidence": {"q1": [["d1"], ["d2"]], "q2": ["d3"]},
                                                            "runs": {"q1": ["d1"]}}), "-m", "R@3"],
             ["eb2.json: evidence: the baseline's labels (its evidence sets) differ from the "
              "candidate's (%s)"
              % self.qrels]),
            (q + r + ["--baseline", self.base, "--replicate", self.write("rf.json", {"qrels": {"q1": ["d1"]},
                                                                                    "runs": {"q1": ["d1"]}}), "-m", "R@3"],
             ["rf.json: qrels: the replicate's labels differ from the candidate's (%s) on "
              "1 query ('q2')" % self.qrels]),
        ]
        self.write("f.json", {"qrels": {"q1": ["d1"], "q2": ["d3"]}, "runs": {"q1": ["d1"], "q2": ["d3"]}})
        for args, fragments in cases:
            with self.subTest(args=args):
                fast, reference = both_paths(*args)
                self.assertEqual(fast, reference)
                rejected(self, *fast, *fragments)

    def test_what_is_used_is_accepted(self):
        q, r = ["--qrels", self.qrels], ["--run", self.run]
        rejected(self, *cli(*q, "--run", "-", "--fields", "retrieved=x", stdin=self.run.read_bytes()), "every input "
                 "is text")  # through a pipe too; and a JSON input takes it
        self.assertEqual(cli(*q, "--run", self.evidence, "--fields", "retrieved=x", "-m", "R@3")[0], 0)
        # standing in for the labels
        for args in (["--evidence", self.evidence] + r + ["-m", "R@3"],
                     q + r + ["--evidence", self.evidence, "-m", "R@3,EvidenceRR"],
                     q + r + ["--lengths", self.lengths, "-m", "R(tokens=3)@3"],
                     # a fixture of evidence is its own baseline
                     [self.evfix, "-m", "R@3", "--baseline", self.evfix],
                     [self.evfix, "--baseline", self.base, "--replicate", self.base.with_name("b2.txt"), "-m", "R@3"],
                     [self.write("swap.jsonl", '{"qid": "q1", "relevant": ["d1"], "retrieved": '
                                               '["d1", "d2"]}\n{"qid": "q2", "relevant": ["d3"], '
                                               '"retrieved": ["d3"]}\n'),
                      "-m", "R@3", "--fields", "relevant=retrieved,retrieved=relevant"]):
            self.write("b2.txt", self.base.read_text())
            with self.subTest(args=args):
                fast, reference = both_paths(*args)
                self.assertEqual(fast, reference)
                self.assertEqual(fast[0], 0, fast[2])

    def test_a_record_that_says_it_has_an_answer_is_scored(self):
        log = self.write("t.jsonl", '{"query_id": "q1", "relevant": ["d1"], "retrieved": ["d1"], '
                                    '"answerable": true}\n{"query_id": "q2", "answerable": false, '
                                    '"retrieved": []}\n')
        for extra in ([], ["--no-answer", self.write("n3.txt", "q2\n")]):
            with self.subTest(extra=extra):
                status, out, err = cli(log, "-m", "R@1,Abstain", *extra)
                if extra:  # both say q2 has no answer: given twice
                    rejected(self, status, out, err, "give them once")
                    continue
                self.assertEqual((status, json.loads(out)["per_query"]), (0, {"q1": {"R@1": 1.0}, "q2": {"Abstain": 1.0}}),
                                 err)
        status, out, err = cli(self.answered.with_name("a.jsonl"), "-m", "R@3", "--no-answer", self.write("n4.txt", "q9\n"))
        # q9 is no query of the log: it has no labels, q2's answer stands
        self.assertEqual(status, 2)
        self.assertNotIn("which is it", err)

    def test_library(self):
        qrels, run = {"q1": ["d1"], "q2": ["d3"]}, {"q1": ["d1"], "q2": ["d3"]}
        cases = [
            (lambda: rre.score_run(qrels, run, "R@3", lengths={"d1": 3}), "lengths gives token counts"),
            (lambda: rre.score_run(qrels, run, "R@3", evidence={"q1": ["d1"], "q2": ["d3"]}),
             "evidence gives evidence sets, and no measure reads them"),
            (lambda: rre.score_run(qrels, run, "R@3", no_answer=[]), "no_answer: no queries"),
            (lambda: rre.read_qrels(self.log, fields={"relevant": ""}),
             "the field name must be a non-empty string"),
            (lambda: rre.read_qrels(self.log, fields={"relevant": 3}),
             "the field name must be a non-empty string"),
            (lambda: rre.compare_runs(qrels, run, run, "R@3", replicates=[{"q1": ["d1"], "q2": ["d3"]}, run]),
             "replicates[1] is the candidate's own run"),
            (lambda: rre.score_runs(qrels, {"a": run}, "R@3", baseline=run, replicates=[run]),
             "replicates[0] is the candidate's own run")]
        for call, fragment in cases:
            with self.subTest(fragment=fragment):
                with self.assertRaises(rre.EvalError) as caught:
                    call()
                self.assertIn(fragment, str(caught.exception))
        self.assertEqual(rre.score_run(None, run, "R@3", evidence=qrels)["measures"], {"R@3": 1.0})


class InputTwinsTest(TempDirTestCase):
    """Every file an option reads, through a path, standard input, a pipe (read like a named
    pipe or <(...)) and gzip: the fast twins and the reference ones give the same stdout,
    stderr and exit status, and a fast reader that declines hands the same bytes over."""

    TREC = {"qrels": "q1 0 d1 1\nq1 0 d2 1\nq1 0 d5 0\nq2 0 d3 2\nq4 0 d7 1\n",
            "run": "q1 Q0 d9 1 0.9 t\nq1 Q0 d2 2 0.8 t\nq1 Q0 d1 3 0.7 t\nq2 Q0 d3 1 0.9 t\nq2 Q0 "
                   "d8 2 0.5 t\nq3 Q0 x1 1 0.47 t\nq3 Q0 x2 2 0.3 t\nq4 Q0 d7 1 0.2 t\n",
            "baseline": "q1 Q0 d1 1 0.9 t\nq2 Q0 d3 1 0.9 t\nq3 Q0 x1 1 0.2 t\nq4 Q0 d6 1 0.9 t\n",
            "replicate": "q1 Q0 d1 1 0.9 t\nq2 Q0 d8 1 0.9 t\nq3 Q0 x1 1 0.2 t\nq4 "
                         "Q0 d7 1 0.9 t\n",
            "evidence": "q1 A s1 d1\nq1 A s2 d2\nq2 A s1 d3\nq4 A s1 d7\n# comment\n",
            "lengths": "# counts\nd9 10\nd2 10\nd1 10\nd3 5\nd8 5\nx1 3\nx2 3\nd7 4\nd6 4\n",
            "no-answer": "q3\n", "groups": "q1 easy\nq2 easy\nq4 hard\nq3 hard\n"}
    TREC_ARGS = ["--qrels", "{qrels}", "--run", "{run}", "--baseline", "{baseline}", "--replicate", "{replicate}",
                 "--evidence", "{evidence}", "--lengths", "{lengths}", "--no-answer", "{no-answer}",
                 "--groups", "{groups}", "-m",
                 "AP,R(tokens=20)@3,EvidenceRecall@3,Abstain(thresh=0.45)",
                 "--ties", "--format", "table"]  # --ci's twins: StatisticsAtScaleTest
    FIXTURE = {"fixture": json.dumps({"qrels": {"q1": {"d1": 1, "d2": 1}, "q2": ["d3"]},
                                      "runs": {"q1": {"d9": 0.9, "d2": 0.8, "d1": 0.7}, "q2": {"d3": 0.5},
                                               "q3": {"x1": 0.47}}}),
               "no-answer": '["q3"]', "lengths": '{"d9": 10, "d2": 10, "d1": 10, '
                                                 '"d3": 5, "x1": 3}',
               "evidence": '{"q1": [["d1"], ["d2"]], "q2": ["d3"]}', "groups": '{"all": ["q1", "q2", "q3"]}',
               "baseline": '{"q1": ["d1"], "q2": ["d3"], "q3": []}'}
    FIXTURE_ARGS = ["{fixture}", "--no-answer", "{no-answer}", "--lengths", "{lengths}", "--evidence", "{evidence}",
                    "--groups", "{groups}", "--baseline", "{baseline}",
                    "-m", "R@3,R(tokens=15)@3,EvidenceSuccess@3,Abstain"]
    LOG = {"log": "\n".join(json.dumps(r) for r in (
        {"query_id": "q1", "relevant": ["d1"], "evidence": ["d1"], "retrieved": {"d1": 0.9, "d2": 0.4},
         "tokens": [5, 9]},
        {"query_id": "q2", "evidence": [["d3", "d4"]], "retrieved": ["d4", "d3"], "tokens": [2, 2]},
        {"query_id": "q3", "answerable": False, "retrieved": {"x": 0.2}})),
        "run": "q1 Q0 d2 1 0.9 t\nq2 Q0 d3 1 0.5 t\nq3 Q0 x 1 0.1 t\n", "lengths": "d2 3\nd3 3\nx 3\n"}
    LOG_ARGS = ["--qrels", "{log}", "--run", "{run}", "--lengths", "{lengths}", "-m",
                "R(tokens=4)@2,Abstain(thresh=0.15)",
                "--format", "csv"]

    def deliver(self, how, name, data, stdin):
        """The command-line word for a file delivered ``how``; stdin gets its bytes for "-"."""
        data = data.encode("utf-8")
        if how == "gzip":
            return str(self.write(name + ".gz", gzip.compress(data)))
        if how == "-":
            stdin.append(data)
            return "-"
        if how == "pipe":
            read, write = os.pipe()
            os.write(write, data)  # small: the pipe holds it all
            os.close(write)
            self.addCleanup(os.close, read)
            return "/dev/fd/%d" % read
        return str(self.write(name, data))

    def run_both(self, files, args, role, how):
        """(fast, reference) outcomes with the file of ``role`` (None: every file) delivered ``how``."""
        outcomes, reference = [], reference_module()
        for main in (rre.main, reference.main):
            stdin = []
            words = {name: self.deliver(how if role in (None, name) else "path", name, data, stdin)
                     for name, data in files.items()}
            # the readers' twins are the test's; the statistics' have theirs
            # (StatisticsAtScaleTest)
            with unittest.mock.patch.object(rre, "main", main), unittest.mock.patch.object(
                    reference, "bootstrap_sums", reference.fast_bootstrap_sums):
                status, out, err = cli(*[a.format(**words) for a in args], stdin=stdin[0] if stdin else None)
            if how == "pipe":  # a new descriptor each time: named by its role
                for name in sorted(words, key=lambda name: -len(words[name])):
                    out, err = out.replace(words[name], "PIPE " + name), err.replace(words[name], "PIPE " + name)
            outcomes.append((status, out, err))
        return outcomes

    def test_twins_agree_on_every_role_and_transport(self):
        cases = [(self.TREC, self.TREC_ARGS, 0), (self.FIXTURE, self.FIXTURE_ARGS, 0), (self.LOG, self.LOG_ARGS, 0),
                 # an ID twice: refused
                 (dict(self.TREC, lengths="d9 10\nd9 4\n"), self.TREC_ARGS, 2),
                 # a count missing
                 (dict(self.FIXTURE, lengths='{"d9": 10}'), self.FIXTURE_ARGS, 2)]
        # one file at a time on stdin (of a refusal, the refused one); every
        for files, args, status in cases:
            # file at once otherwise
            stdin = [role for role in files if not status or role == "lengths"]
            for role, how in [(role, "-") for role in stdin] + [(None, how) for how in ("path", "pipe", "gzip")]:
                with self.subTest(role=role, how=how, args=args[:2], status=status):
                    fast, reference = self.run_both(files, args, role, how)
                    self.assertEqual(fast, reference)
                    self.assertEqual(fast[0], status, fast[2])
                    self.assertNotIn("Traceback", fast[2])

    def test_a_declining_lengths_reader_hands_over_what_it_read(self):
        stream = io.BytesIO(b"# a comment the fast reader declines\nd1 3\n")
        self.assertEqual(rre.fast_length_lines(stream, "<stdin>"), ({"d1": 3}, rre.lengths_digest({"d1": 3})))
        fixture = self.write("f.json", {"qrels": {"q1": ["d1"]}, "runs": {"q1": {"d1": 1.0}, "q2": {"x": 0.5}}})
        status, out, err = cli(fixture, "-m", "R(tokens=3)@1", "--no-answer", self.write("n.txt", "q2\n"),
                               "--lengths", "-", "--format", "csv", stdin=b"# counts\nd1 3\nx 1\n")
        self.assertEqual((status, out.splitlines()), (0, ["query,R(tokens=3)@1", "q1,1.0", "q2,"]), err)

    def test_the_control_check_finds_what_the_pattern_finds(self):
        # first_control searches the pattern only where the bytes allow a control; the fast
        # TREC reader declines, and text_lines refuses, where the pattern finds one
        pieces = ["d1", "caf\u00e9", "\u2013", "\u00a9", "\x85", "\u0080\u009f", "\u2028", "\u2029",
                  "\u2027", "\x01", "\x7f", "\x1f", "\t"]
        for a, b in itertools.product(pieces, repeat=2):
            text = "q1 Q0 %s%s 1 0.5 t\n" % (a, b)
            found, expected = rre.first_control(text.encode()), rre._CONTROLS.search(text)
            self.assertEqual(found and found.group(), expected and expected.group(), repr(text))
            if expected:
                self.assertRaises(rre._Decline, rre._fast_columns, text.encode(), 1)


class RagTwinsTest(TempDirTestCase):
    """The fast twins of the lengths reader and of the rank order return what the reference
    ones return, on usual files and on every odd one (which they hand over)."""

    def test_lengths_readers_agree(self):
        rng = random.Random(20)
        odd = ["# a comment\n", "\n", "d1 5\n", "dx 12 3\n", "dy -4\n", "dz 1e3\n", "d\u00e9 7\n",
               "dw 99999999999999999999\n", "dv\t8\r\n", "du 0009\n", "dt\x0c3\n", "ds 1_0\n"]
        for case in range(30):
            lines = ["d%d %d\n" % (i, rng.randint(0, 999)) for i in range(rng.randint(1, 300))]
            if case % 2:
                lines.insert(rng.randrange(len(lines)), rng.choice(odd))
            data = "".join(lines).encode("utf-8")
            if case % 5 == 4:
                data = data.replace(b"\n", b"\r\n")
            path = self.write("l.txt", data if case % 7 else data.rstrip(b"\n"))
            with self.subTest(case=case):
                fast = outcome(lambda: lengths_through(rre.fast_length_lines, path))
                self.assertEqual(fast, outcome(lambda: lengths_through(rre.reference_length_lines, path)))
                self.assertEqual(fast[0], "ok" if not case % 2 else fast[0])
        path = str(self.write("l.txt", "d1 3\nd2 0\n"))
        with unittest.mock.patch.object(rre, "reference_length_lines", side_effect=AssertionError("handed over")):
            self.assertEqual(lengths_through(rre.fast_length_lines, path)[0], {"d1": 3, "d2": 0})
        served = {}  # a plain chunk is served, not handed over
        rre._fast_length_lines(b"d1 3\nd2 0\r\n", 2, served, None, hashlib.sha256())
        self.assertEqual(served, {"d1": 3, "d2": 0})
        for chunk in (b"d1 3 4\nd2\n", b"# c\nd1 3\n", b"d1 3\rd2 4\n", b"d1 +3\n", b"d1 1234567890123456789\n",
                      b"d1 3 4\n5\n", b"d1 3\nd2 1234567890123456789\n"):
            with self.subTest(chunk=chunk):
                self.assertRaises(rre._Decline, rre._fast_length_lines, chunk, chunk.count(b"\n"), {}, None, hashlib.sha256())

    def test_rank_orders_agree(self):
        rng = random.Random(21)
        for case in range(400):
            n = rng.randint(0, 80)
            scores = [float(rng.randint(0, 5)) for _ in range(n)]
            if case % 3:
                scores.sort(reverse=True)  # as run files list them: by score, ties in any order
            docids = [rng.choice(["a", "b", "\u00e9", "\u4e2d", "\U0001f600"]) + str(rng.randint(0, 9)) for _ in range(n)]
            with self.subTest(case=case):
                windows = list(rre._windows_in_rank_order([d.encode() for d in docids], scores, rng.choice((1, 2, 16))))
                self.assertEqual(list(itertools.chain.from_iterable(windows)), rre.in_rank_order(docids, scores))
        windows = rre._windows_in_rank_order([b"a", b"c", b"b", b"d", b"e"], [3.0, 2.0, 2.0, 2.0, 1.0], 2)
        # a tie sorted whole
        self.assertEqual(next(windows), [(3.0, "a"), (2.0, "d"), (2.0, "c"), (2.0, "b")])
        self.assertEqual(next(windows), [(1.0, "e")])
        # not listed by score
        windows = rre._windows_in_rank_order([b"a", b"b", b"c"], [1.0, 3.0, 2.0], 1)
        self.assertEqual(list(windows), [[(3.0, "b")], [(2.0, "c"), (1.0, "a")]])


class ExplainTest(TempDirTestCase):
    """Section 20: where each missed relevant document went."""

    def test_ranks_before_and_after_list_five_the_crossings_first(self):
        qrels = {"q1": {"d%d" % i: 1 for i in range(12)}}
        base = {"q1": ["d%d" % i for i in range(12)]}  # d0 .. d11 at 1 .. 12
        cand = {"q1": ["x1", "d5", "d0", "x2"] + ["d%d" % i for i in (11, 10, 9, 8, 7, 6, 4, 3, 2, 1)]}
        args = (self.write("c.json", {"qrels": qrels, "runs": cand}), "--baseline", self.write("b.json", base), "-m",
                "R@3", "--explain")
        # across the cutoff 3, largest move first: d1 2 -> 14, d2 3 -> 13, d5 6 -> 2; then d3 4 ->
        # 12 (8), d11 12 -> 5 (7); d0 1 -> 3 stays within the top 3: a move of 2, among the 7 more
        line = "ranks before -> after: d1 2 -> 14, d2 3 -> 13, d5 6 -> 2, d3 4 -> 12, d11 12 -> 5 and 7 more"
        for fmt in ("table", "markdown"):
            with self.subTest(fmt=fmt):
                self.assertIn(line.replace("->", "-\\>") if fmt == "markdown" else line, cli(*args, "--format", fmt)[1])
        # JSON keeps all
        self.assertEqual(len(json.loads(cli(*args)[1])["explain"]["queries"]["q1"]["ranks"]), 12)

    def test_the_worked_example_on_the_command_line_through_both_readers_and_in_the_library(self):
        trec = "".join("%s Q0 %s %d %d t\n" % (q, d, i, 10 - i) for q, r in EXPLAIN_EXAMPLE["runs"].items()
                       for i, d in enumerate(r))
        for args in ((self.write("f.json", EXPLAIN_EXAMPLE),),
                     ("--qrels", self.write("q.json", EXPLAIN_EXAMPLE["qrels"]), "--run", self.write("r.txt", trec))):
            with self.subTest(args=args):
                fast, reference = both_paths(*args, "-m", "R@3", "--explain")
                self.assertEqual(fast, reference)
                self.assertEqual(json.loads(fast[1])["explain"], EXPLAIN_BLOCK)
        self.assertEqual(rre.score_run(EXPLAIN_EXAMPLE["qrels"], EXPLAIN_EXAMPLE["runs"], "R@3", explain=True)["explain"],
                         EXPLAIN_BLOCK)
        self.assertEqual(rre.score_run(EXPLAIN_EXAMPLE["qrels"], EXPLAIN_EXAMPLE["runs"], "RR")["per_query"],
                         rre.score_run(EXPLAIN_EXAMPLE["qrels"], EXPLAIN_EXAMPLE["runs"], "RR", explain=True)["per_query"])
        self.assertEqual(rre.score_run(EXPLAIN_EXAMPLE["qrels"], EXPLAIN_EXAMPLE["runs"], "RR", explain=True)["explain"]["k"], 10)

    def test_every_format_and_mode(self):
        fixture = self.write("f.json", EXPLAIN_EXAMPLE)
        table = cli(fixture, "-m", "R@3", "--explain", "--format", "table")[1]
        self.assertIn("why it missed, within the top 3: 2 queries missed (0 absent, 1 not in the "
                      "ranking, 1 below), 0 cut; 1 with unjudged documents in the top 3\n"
                      "  q1: below; d2 at 5; unjudged in the top 3: d4\n"
                      "  q2: not in the ranking (2 ranked); d5 not ranked", table)
        self.assertTrue(table.endswith("d5 not ranked\n"), table)  # two queries, no "more"
        wide = self.write("w.json", {"qrels": {"q1": ["a%d" % i for i in range(7)],
                                               "q2": {"a0": 1, "x": 0}},
                                     "runs": {"q1": ["x", "y"], "q2": ["y", "x"]}})
        self.assertIn("  q1: absent; a0 absent, a1 absent, a2 absent, a3 absent, a4 absent and "
                      "2 more\n"
                      "  q2: absent; a0 absent; unjudged in the top 1: y\n",  # a line, not a wall
                      cli(wide, "-m", "R@1", "--explain", "--format", "table")[1])
        many = self.write("m.json", {"qrels": {"q%02d" % i: ["d1"] for i in range(23)},
                                     "runs": {"q%02d" % i: ["d2"] for i in range(23)}})
        markdown = cli(many, "-m", "R@1", "--explain", "--format", "markdown")[1]
        self.assertEqual((markdown.count("\n- q"), markdown.split("<details><summary>")[1][:7]), (20, "18 more"))
        lines = cli(many, "-m", "R@1", "--explain", "--format", "table")[1].splitlines()
        self.assertEqual((lines[-2], lines[-1]), (
            "  q19: not in the ranking (1 ranked); d1 not ranked",
                                                  "  and 3 more (all of them in the JSON output)"))
        markdown = cli(fixture, "-m", "R@3", "--explain", "--format", "markdown")[1]
        self.assertIn("**Why it missed, within the top 3: 2 queries missed", markdown)
        self.assertIn("- q2: not in the ranking (2 ranked); d5 not ranked", markdown)
        self.assertEqual(cli(fixture, "-m", "R@3", "--explain", "--format", "csv")[1],
                         "query,R@3,absent,not_ranked,below,unjudged\n"
                         "q1,0.5,0,0,1,1\nq2,0.0,0,1,0,0\n")
        rejected(self, *cli(fixture, "--explain", "--format", "trec"),
                 "--format trec has no place for --explain")
        qrels, run = self.write("q.json", EXPLAIN_EXAMPLE["qrels"]), self.write("r.json", EXPLAIN_EXAMPLE["runs"])
        base = self.write("b.json", {"q1": ["d1", "d2", "d4"], "q2": ["d5"]})
        groups = self.write("g.json", {"a": ["q1"], "b": ["q2"]})
        out = json.loads(cli("--qrels", qrels, "--run", run, "--baseline", base, "--groups", groups, "-m", "R@3",
                             "--explain")[1])
        # lost or regressed
        self.assertEqual(out["explain"]["queries"]["q1"]["ranks"], {"d1": [1, 2], "d2": [2, 5]})
        self.assertEqual(out["explain"]["queries"]["q2"]["ranks"], {"d5": [1, None]})
        self.assertEqual([b["explain"] for b in out["groups"].values()],
                         [{"missed": 1, "absent": 0, "not_ranked": 0, "below": 1, "cut": 0,
                           "unjudged": 1, "unlabeled": 0},
                          {"missed": 1, "absent": 0, "not_ranked": 1, "below": 0, "cut": 0,
                           "unjudged": 0, "unlabeled": 1}])
        self.assertIn("ranks before -> after: d5 1 -> absent", cli("--qrels", qrels, "--run", run, "--baseline", base,
                                                                  "-m", "R@3", "--explain", "--format", "table")[1])
        several = json.loads(cli("--qrels", qrels, "--run", run, "--run", base, "-m", "R@3", "--explain")[1])["runs"]
        self.assertEqual([r["explain"]["counts"]["missed"] for r in several.values()], [2, 0])
        csv_text = cli("--qrels", qrels, "--run", run, "--run", base, "-m", "R@3", "--explain", "--format", "csv")[1]
        self.assertEqual(csv_text.splitlines()[0].split(",")[3:7],
                         ["%s %s" % (run, kind)
                          for kind in ("absent", "not_ranked", "below", "unjudged")])
        for fmt in ("table", "markdown"):
            self.assertIn("why it missed" if fmt == "table" else "Why it missed",
                          cli("--qrels", qrels, "--run", run, "--run", base, "-m", "R@3", "--explain", "--format",
                              fmt)[1])

    def test_what_a_floor_or_a_budget_cut(self):
        run = {"q1": {"d1": 0.9, "x": 0.8, "d2": 0.7, "y": 0.2}}
        result = rre.score_run({"q1": ["d1", "d2"]}, run, ["R(thresh=0.75)@3", "R(tokens=250)@3",
                                                           "R(tokens=250,pack=skip)@3"], explain=True,
                               lengths={"d1": 100, "x": 200, "d2": 100, "y": 10})
        self.assertEqual(result["explain"]["queries"], {"q1": {
            "cause": "cut", "unlabeled": ["x"],
            "cut": {"R(thresh=0.75)@3": ["d2"], "R(tokens=250)@3": ["d2"]}}})
        # skip packing passes x and takes d2
        self.assertEqual(result["explain"]["counts"], {"missed": 0, "absent": 0, "not_ranked": 0,
                                                       "below": 0, "cut": 1, "unjudged": 0,
                                                       "unlabeled": 1})
        files = ("--qrels", self.write("q.txt", "q1 0 d1 1\nq1 0 d2 1\n"), "--run", self.write("r.txt", "".join(
            "q1 Q0 %s 0 %s t\n" % (d, x) for d, x in run["q1"].items())), "--lengths", self.write("l.txt", "d1 100\n"
                                                                                              "x 200\nd2 100\ny 10\n"))
        for explained in both_paths(*files, "-m", "R(tokens=250)@3,R(tokens=250,pack=skip)@3", "--explain"):
            # the budget weighs once the counts are read
            with self.subTest(counts="read after the run"):
                self.assertEqual(json.loads(explained[1])["explain"]["queries"],
                                 {"q1": {"cause": "cut", "unlabeled": ["x"],
                                         "cut": {"R(tokens=250)@3": ["d2"]}}})

    def test_random_rankings_agree_with_the_contracts_words(self):
        """Ties, chunks folded, --depth, --judged-only, a floor and a budget, against a plain reading
        of section 20 (and of section 17's packing)."""
        rng = random.Random(20)
        docs = ["d%d" % i for i in range(10)]
        for case in range(12):
            chunked, depth, judged_only = case % 2 == 1, rng.choice((None, 2, 5)), case % 3 == 2
            qrels, run, lengths = {}, {}, {}
            for q in ("q%d" % i for i in range(6)):
                qrels[q] = {d: rng.choice((0, 1, 1, -1)) for d in rng.sample(docs, 4)}
                ranked = [d + "#%d" % rng.randint(1, 2) if chunked else d for d in rng.sample(docs, rng.randint(0, 8))]
                run[q] = {d: float(rng.randint(0, 3)) for d in dict.fromkeys(ranked)}
                lengths.update((d, rng.randint(0, 3)) for d in run[q])
            names = ["R@3", "R(thresh=1.5)@3", "P@2", "R(tokens=4)@3"]
            result = rre.score_run(qrels, run, names, explain=True, no_relevant="zero", depth=depth, lengths=lengths,
                                   judged_only=judged_only, chunk_separator="#" if chunked else None)
            for q, scored in run.items():
                ordered = sorted(((s, d) for d, s in scored.items()), reverse=True)
                best = {}
                for s, d in ordered:
                    best.setdefault(d.split("#")[0], s)
                ranking = list(best)[:depth]
                # what the log ranked within --depth, --judged-only's drops too
                logged = len(ranking)
                if judged_only:
                    ranking = [d for d in ranking if qrels[q].get(d, -1) >= 0]
                rank = {d: i for i, d in enumerate(ranking, 1)}
                relevant = [d for d, g in qrels[q].items() if g >= 1]
                missing = {d: rank.get(d) for d in relevant if rank.get(d, 4) > 3}
                floor = [d for d in relevant if rank.get(d, 4) <= 3 and best[d] < 1.5]
                packed, total = set(), 0  # a prefix of the items, in rank order, within --depth
                for _, item in ordered:
                    doc = item.split("#")[0]
                    if depth is not None and len(packed | {doc}) > depth or total + lengths[item] > 4:
                        break
                    packed.add(doc)
                    total += lengths[item]
                budget = [d for d in relevant if rank.get(d, 4) <= 3 and d not in packed]
                cut = {name: docs for name, docs in (("R(thresh=1.5)@3", floor), ("R(tokens=4)@3", budget)) if docs}
                unjudged = [d for d in ranking[:3] if qrels[q].get(d, -1) < 0]
                judges = min(qrels[q].values()) < 1  # else the others are merely unlabeled
                short = logged <= max(3, depth or 0)  # perhaps all a log kept
                absent = "not_ranked" if short else "absent"
                expected = {}
                if missing or cut:
                    expected["cause"] = (absent if None in missing.values() else
                                         "below" if missing else "cut")
                    expected.update(missing=missing, cut=cut,
                                    **{"unjudged" if judges else "unlabeled": unjudged})
                if expected.get("cause") == "not_ranked":
                    expected["ranked"] = logged
                with self.subTest(case=case, query=q):
                    self.assertEqual(result["explain"]["queries"].get(q, {}),
                                     {key: value for key, value in expected.items()
                                      if value or key == "ranked"})

    def test_a_query_without_a_ranking_misses_all_it_should_find(self):
        fixture = self.write("f.json", {"qrels": {"q1": ["d1"], "q2": ["d2"]}, "runs": {"q1": ["d9", "d1"]}})
        status, out, err = cli(fixture, "-m", "R@1", "--explain", "--missing-run", "zero", "--pool",
                               self.tmp / "pool.jsonl")
        self.assertEqual(json.loads(out)["explain"]["queries"]["q2"],
                         {"cause": "not_ranked", "missing": {"d2": None}, "ranked": 0}, err)
        self.assertEqual([json.loads(line)["query_id"] for line in (self.tmp / "pool.jsonl").read_text().splitlines()],
                         ["q1"])  # q2 has nothing unjudged to label

    def test_evidence_standing_in_for_labels(self):
        fixture = self.write("e.json", {"evidence": {"q1": [["d1"], ["d2"]]}, "runs": {"q1": ["d3", "d1"]}})
        self.assertEqual(json.loads(cli(fixture, "-m", "R@1,EvidenceRecall@1", "--explain")[1])["explain"]["queries"],
                         {"q1": {"cause": "absent", "missing": {"d1": 2, "d2": None},
                                 "unlabeled": ["d3"]}})

    def test_texts_are_named(self):
        out = json.loads(cli(self.write("t.json", {"qrels": {"q1": FACTS}, "runs": {"q1": CHUNKS}}), "--match",
                             "contains", "-m", "R@2", "--explain")[1])["explain"]
        name, lyon = (rre.text_name(text, "text").split()[0] for text in (FACTS[1], CHUNKS[0]))
        self.assertEqual((out["queries"]["q1"]["missing"], out["queries"]["q1"]["unlabeled"],
                          out["texts"][name]),
                         ({name: 4}, [lyon], FACTS[1]))


class PoolTest(TempDirTestCase):
    """Section 21: a pool to label, and label files merged."""

    def test_the_loop_score_pool_label_score_again(self):
        """A BEIR-style dataset with incomplete labels: the lost query was a label gap."""
        qrels = self.write("test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t1\nq1\td3\t0\nq2\td5\t1\n")
        run = self.write("run.txt", "".join("%s Q0 %s %d %d t\n" % (q, d, i, 9 - i) for q, r in
                                           EXPLAIN_EXAMPLE["runs"].items() for i, d in enumerate(r)))
        base = self.write("base.json", {"q1": ["d1", "d2", "d4"], "q2": ["d5"]})
        pool = self.tmp / "pool.jsonl"
        status, out, err = cli("--qrels", qrels, "--run", run, "--baseline", base, "-m", "R@3", "--pool", pool)
        self.assertEqual(json.loads(out)["comparison"]["R@3"]["lost"], ["q2"])
        records = [json.loads(line) for line in pool.read_text().splitlines()]
        self.assertEqual(records, [
            {"query_id": "q1", "relevant": {"d4": None}, "ranks": {"d4": {str(run): 1, str(base): 3}}},
            {"query_id": "q2", "relevant": {"d7": None, "d8": None}, "ranks": {"d7": {str(run): 1}, "d8": {str(run): 2}}}])
        rejected(self, *cli("--qrels", qrels, "--qrels", pool, "--run", run, "-m", "R@3"),
                 "pool.jsonl:1: relevant.d4: query 'q1': the grade is still to be given (null)")
        for record in records:  # a labeler fills in the grades: d7 is relevant after all
            record["relevant"] = {d: int(d == "d7") for d in record["relevant"]}
        filled = self.write("filled.jsonl", "".join(json.dumps(r) + "\n" for r in records))
        status, out, err = cli("--qrels", qrels, "--qrels", filled, "--run", run, "--baseline", base, "-m", "R@3")
        self.assertEqual((status, json.loads(out)["comparison"]["R@3"]["lost"]), (0, []), err)
        self.assertEqual(json.loads(out)["per_query"]["q2"], {"R@3": 0.5})

    def test_labels_given_twice_and_pools_onto_inputs_are_refused(self):
        one, two = self.write("a.json", {"q1": ["d1"]}), self.write("b.json", {"q1": {"d2": 1, "d1": 0}})
        run = self.write("r.json", {"q1": ["d2", "d1"]})
        rejected(self, *cli("--qrels", one, "--qrels", two, "--run", run),
                 "b.json: query 'q1': document 'd1' is labeled in %s already: label it once" % one)
        rejected(self, *cli("--qrels", one, "--run", run, "--pool", one),
                 "--pool %s names %s, which is read" % (one, one))
        self.assertEqual(rre.score_run([{"q1": ["d1"]}, {"q1": {"d2": 1}}], {"q1": ["d2", "d1"]}, "R@1")["measures"],
                         {"R@1": 0.5})
        with self.assertRaisesRegex(rre.EvalError, r"qrels\[1\]: query 'q1': document 'd1' is labeled in qrels\[0\]"):
            rre.score_run([{"q1": ["d1"]}, {"q1": {"d1": 1}}], {"q1": ["d1"]})
        status, _, err = cli("--qrels", one, "--run", run, "-m", "R@1", "--pool", self.tmp / "p.jsonl",
                             "--judged-only")
        # -J leaves nothing unjudged
        self.assertEqual((status, (self.tmp / "p.jsonl").read_text()), (0, ""))


# The pipeline of StageTest, worked by hand.  Labels: q1 d1 (1), d2 (2), d3 (1); q2 d4, d5 (1).
# The index holds every ID but d5.  Each stage holds only what the one before it held.
STAGE_LABELS = {"q1": {"d1": 1, "d2": 2, "d3": 1}, "q2": {"d4": 1, "d5": 1}}
STAGE_INDEX = ["d1", "d2", "d3", "d4", "d6", "d7", "d8", "d9"]
STAGE_PIPELINE = {"cand": {"q1": ["d9", "d1", "d2", "d7", "d3"], "q2": ["d4", "d8", "d6"]},
                  "filt": {"q1": ["d9", "d2", "d7", "d3"], "q2": ["d4", "d8"]},
                  "run": {"q1": ["d3", "d9"], "q2": ["d8", "d4"]}}


def trec_lines(rankings, scored=True):
    """A TREC run of {qid: [doc, ...]}, scores falling with rank."""
    return "".join("%s Q0 %s %d %d t\n" % (q, d, i + 1, 100 - i if scored else 1)
                   for q, docs in rankings.items() for i, d in enumerate(docs))


class StageTest(TempDirTestCase):
    """Issue 50: the stages of a pipeline (--stage, --index, --baseline-stage) and the measures
    of a stage (stage=NAME), worked by hand; every mode that takes a measure takes them."""

    # per query, by hand: cand holds all of q1's relevant (3/3) and d4 of q2's two (1/2); filt
    # lost d1 (2/3); cand's top 3 hold d1, d2 (2/3) and d4 (1/2); AP of cand: q1 relevant at
    # 2, 3, 5: (1/2 + 2/3 + 3/5) / 3; q2 at 1 of 2 relevant: 1/2; P@5: 3/5, 1/5; RR of filt
    # at 1: d9 (0), d4 (1); nDCG@3 of cand: q1 (1/log2(3) + 2/2) / (2 + 1/log2(3) + 1/2)
    HAND = {"q1": {"R(stage=cand)": 1.0, "R(stage=filt)": 2 / 3, "R(stage=cand)@3": 2 / 3,
                   "AP(stage=cand)": (1 / 2 + 2 / 3 + 3 / 5) / 3, "P(stage=cand)@5": 0.6,
                   "RR(stage=filt)@1": 0.0,
                   "nDCG(stage=cand)@3": (1 / math.log2(3) + 1) / (2 + 1 / math.log2(3) + 0.5),
                   "R@2": 1 / 3},
            "q2": {"R(stage=cand)": 0.5, "R(stage=filt)": 0.5, "R(stage=cand)@3": 0.5,
                   "AP(stage=cand)": 0.5, "P(stage=cand)@5": 0.2, "RR(stage=filt)@1": 1.0,
                   "nDCG(stage=cand)@3": 1 / (1 + 1 / math.log2(3)), "R@2": 0.5}}

    def files(self, **changed):
        """The pipeline's files (TREC runs): {name: path}, a stage's rankings changed."""
        rankings = dict(STAGE_PIPELINE, **changed)
        paths = {name: self.write(name + ".trec", trec_lines(r)) for name, r in rankings.items()}
        paths["qrels"] = self.write("qrels.json", STAGE_LABELS)
        paths["index"] = self.write("index.txt", "\n".join(STAGE_INDEX) + "\n")
        return paths

    def stages(self, f, *names):
        """--stage NAME=FILE of each name, in order."""
        return [a for name in names or ("cand", "filt") for a in ("--stage", "%s=%s" % (name, f[name]))]

    def test_a_stages_measures_are_the_hand_worked_values(self):
        f = self.files()
        measures = ",".join(self.HAND["q1"])
        status, out, err = cli("--qrels", f["qrels"], "--run", f["run"], *self.stages(f), "--index", f["index"],
                               "-m", measures)
        self.assertEqual((status, err), (0, ""))
        result = json.loads(out)
        for qid, values in self.HAND.items():
            for name, value in values.items():
                self.assertAlmostEqual(result["per_query"][qid][name], value, 12, (qid, name))
        self.assertAlmostEqual(result["measures"]["AP(stage=cand)"], (0.5888888888888889 + 0.5) / 2, 12)
        # the manifest names a stage as the command line does
        self.assertEqual(result["manifest"]["inputs"]["stage"], ["cand=%s" % f["cand"], "filt=%s" % f["filt"]])
        # the library: the same values of the same rankings
        library = rre.score_run(STAGE_LABELS, STAGE_PIPELINE["run"], measures, index=STAGE_INDEX,
                                stages={n: STAGE_PIPELINE[n] for n in ("cand", "filt")})
        self.assertEqual(library["per_query"], result["per_query"])

    def test_every_format_shows_a_stages_measure(self):
        f = self.files()
        args = ["--qrels", f["qrels"], "--run", f["run"], *self.stages(f), "-m", "R@2,R(stage=cand)@3"]
        # the funnel (FunnelTest) follows the measures
        self.assertTrue(cli(*args, "--format", "table")[1].startswith(
            "query     R@2  R(stage=cand)@3\nall    0.4167           0.5833\n2 queries evaluated\n\n"))
        self.assertIn("| R(stage=cand)@3 | 0.5833 |", cli(*args, "--format", "markdown")[1])
        rows = [line.split(",")[:3] for line in cli(*args, "--format", "csv")[1].splitlines()]
        self.assertEqual(rows, [["query", "R@2", "R(stage=cand)@3"], ["q1", "0.3333333333333333", "0.6666666666666666"],
                                ["q2", "0.5", "0.5"]])
        self.assertIn("R(stage=cand)@3\tall\t0.5833333333333333\n", cli(*args, "--format", "trec")[1])
        summary = self.write("summary.md", "")
        self.assertEqual(cli(*args, "--summary", summary)[0], 0)
        self.assertIn("| R(stage=cand)@3 | 0.5833 |", summary.read_text())

    def test_floors_gates_groups_and_intervals_take_a_stages_measure(self):
        f = self.files()
        args = ["--qrels", f["qrels"], "--run", f["run"], *self.stages(f)]
        # R(stage=cand)@5: 1 and 1/2, a mean of 0.75
        self.assertEqual(cli(*args, "--min-mean", "R(stage=cand)@5=0.75")[0], 0)
        status, _, err = cli(*args, "--min-mean", "R(stage=cand)@5=0.8")
        self.assertEqual(status, 1, err)
        self.assertIn("R(stage=cand)@5", err)
        status, out, _ = cli(*args, "-m", "R(stage=filt)", "--ci")
        self.assertEqual(json.loads(out)["ci95"]["R(stage=filt)"], [0.5, 2 / 3])
        # the baseline's pipeline kept all of cand in its filter: the candidate's filter lost d1
        base = ["--baseline", f["run"], "--baseline-stage", "cand=%s" % f["cand"],
                "--baseline-stage", "filt=%s" % f["cand"], "-m", "R(stage=filt)"]
        groups = self.write("groups.json", {"g1": ["q1"], "g2": ["q2"]})
        status, out, err = cli(*args, *base, "--max-mean-drop", "0.1", "--max-query-drop", "0.5",
                               "--groups", groups, "--max-group-drop", "0.2")
        result = json.loads(out)
        self.assertEqual(status, 1, err)
        self.assertEqual(result["comparison"]["R(stage=filt)"]["baseline"], 0.75)
        self.assertEqual(result["comparison"]["R(stage=filt)"]["regressed"], {"q1": 2 / 3 - 1})
        self.assertEqual([(b["gate"], b.get("group")) for b in result["breaches"]],
                         [("--max-mean-drop", None), ("--max-group-drop", "g1")])
        self.assertEqual(result["groups"]["g1"]["measures"], {"R(stage=filt)": 2 / 3})

    def test_several_runs_are_alternative_last_stages_over_the_same_earlier_ones(self):
        f = self.files()
        other = self.write("other.trec", trec_lines({"q1": ["d2"], "q2": ["d4"]}))
        status, out, err = cli("--qrels", f["qrels"], "--run", f["run"], "--run", other, *self.stages(f),
                               "-m", "R@1,R(stage=filt)")
        runs = json.loads(out)["runs"]
        self.assertEqual(status, 0, err)
        self.assertEqual({name: r["measures"] for name, r in runs.items()},
                         {str(f["run"]): {"R@1": (1 / 3 + 0) / 2, "R(stage=filt)": (2 / 3 + 1 / 2) / 2},
                          str(other): {"R@1": (1 / 3 + 1 / 2) / 2, "R(stage=filt)": (2 / 3 + 1 / 2) / 2}})
        library = rre.score_runs(STAGE_LABELS, {"a": STAGE_PIPELINE["run"], "b": {"q1": ["d2"], "q2": ["d4"]}},
                                 "R@1,R(stage=filt)", stages={n: STAGE_PIPELINE[n] for n in ("cand", "filt")})
        self.assertEqual(library["runs"]["b"]["measures"], {"R@1": (1 / 3 + 1 / 2) / 2, "R(stage=filt)": (2 / 3 + 1 / 2) / 2})
        # each run is checked against the last stage: d1 is not in filt
        adding = self.write("adding.trec", trec_lines({"q1": ["d1"], "q2": ["d4"]}))
        rejected(self, *cli("--qrels", f["qrels"], "--run", f["run"], "--run", adding, *self.stages(f)),
                 "adding.trec: query 'q1': the run holds 'd1', which stage filt (%s) does not hold" % f["filt"])

    def test_a_log_holding_every_stage_is_read_once_per_stage(self):
        # LlamaIndex's NodeWithScore as a trace writes it: the retriever's nodes, the reranker's
        # (a SentenceTransformerRerank postprocessor), and the context handed to the model
        node = lambda docs: [{"node": {"id_": d}, "score": 1.0 - i / 10} for i, d in enumerate(docs)]
        log = self.write("trace.jsonl", "".join(json.dumps(
            {"query_id": q, "retrieved": node(STAGE_PIPELINE["cand"][q]), "reranked": node(STAGE_PIPELINE["filt"][q]),
             "context": node(STAGE_PIPELINE["run"][q])}) + "\n" for q in ("q1", "q2")))
        f = self.files()
        measures = ",".join(self.HAND["q1"])
        fields = "retrieved=context[].node.id_,scores=context[].score,cand=retrieved[].node.id_,filt=reranked[].node.id_"
        status, out, err = cli("--qrels", f["qrels"], "--run", log, "--stage", "cand=%s" % log,
                               "--stage", "filt=%s" % log, "--fields", fields, "-m", measures)
        self.assertEqual((status, err), (0, ""))
        trec = cli("--qrels", f["qrels"], "--run", f["run"], *self.stages(f), "-m", measures)[1]
        self.assertEqual(json.loads(out)["per_query"], json.loads(trec)["per_query"])
        # a stage with no field of its own reads the run's: context, here, so its R is the run's
        status, out, _ = cli("--qrels", f["qrels"], "--run", log, "--stage", "cand=%s" % log,
                             "--fields", "retrieved=context[].node.id_", "-m", "R@2,R(stage=cand)")
        self.assertEqual(json.loads(out)["measures"], {"R@2": (1 / 3 + 1 / 2) / 2, "R(stage=cand)": (1 / 3 + 1 / 2) / 2})
        # a stage may name the field the run reads by default: it then ranks what the run does
        flat = self.write("flat.jsonl", "".join(json.dumps({"query_id": q, "retrieved": STAGE_PIPELINE["run"][q],
                                                            "first": STAGE_PIPELINE["cand"][q]}) + "\n"
                                                for q in ("q1", "q2")))
        status, out, err = cli("--qrels", f["qrels"], "--run", flat, "--stage", "cand=%s" % flat, "--stage",
                               "filt=%s" % flat, "--fields", "cand=first,filt=retrieved", "-m",
                               "R@2,R(stage=filt),R(stage=cand)")
        self.assertEqual(json.loads(out)["measures"], {"R@2": (1 / 3 + 1 / 2) / 2, "R(stage=filt)": (1 / 3 + 1 / 2) / 2,
                                                       "R(stage=cand)": (1 + 1 / 2) / 2}, err)
        rejected(self, *cli("--qrels", f["qrels"], "--run", log, "--stage", "cand=%s" % log,
                            "--fields", "retrieved=context[].node.id_,rerank=reranked[].node.id_"),
                 "--fields: unknown role 'rerank'; roles: query, relevant, retrieved, evidence, tokens, scores, "
                 "answerable, cand")
        # JSON, gzip and standard input, each a stage as a run is
        cand_json = self.write("cand.json", STAGE_PIPELINE["cand"])
        zipped = self.write("filt.trec.gz", gzip.compress(f["filt"].read_bytes()))
        status, out, err = cli("--qrels", f["qrels"], "--run", f["run"], "--stage", "cand=%s" % cand_json,
                               "--stage", "filt=-", "-m", measures, stdin=f["filt"].read_bytes())
        self.assertEqual(json.loads(out)["per_query"], json.loads(trec)["per_query"], err)
        status, out, err = cli("--qrels", f["qrels"], "--run", f["run"], "--stage", "cand=%s" % f["cand"],
                               "--stage", "filt=%s" % zipped, "-m", measures)
        self.assertEqual(json.loads(out)["per_query"], json.loads(trec)["per_query"], err)

    def assert_read_as_run(self, stage, run, qrels, *options, measures="R(stage=s)@2,AP(stage=s),RR(stage=s)"):
        """A stage's measures under options equal those measures of the stage given as --run."""
        status, out, err = cli("--qrels", qrels, "--run", run, "--stage", "s=%s" % stage, "-m", measures, *options)
        self.assertEqual(status, 0, err)
        status, plain, err = cli("--qrels", qrels, "--run", stage, "-m", measures.replace("(stage=s)", ""), *options)
        self.assertEqual(status, 0, err)
        per_query = {q: {n.replace("(stage=s)", ""): v for n, v in values.items()}
                     for q, values in json.loads(out)["per_query"].items()}
        self.assertEqual(per_query, json.loads(plain)["per_query"], options)
        return per_query

    def test_a_stage_is_read_as_the_run_is(self):
        f = self.files()
        for options in ([], ["--judged-only"], ["--ties"]):
            with self.subTest(options=options):
                self.assert_read_as_run(f["cand"], f["run"], f["qrels"], *options)
        # --depth cuts the run, not a stage, which is what it kept: AP of the whole stage
        status, out, err = cli("--qrels", f["qrels"], "--run", f["run"], "--stage", "s=%s" % f["cand"], "-m",
                               "AP(stage=s),R@2", "--depth", "1")
        whole = json.loads(cli("--qrels", f["qrels"], "--run", f["cand"], "-m", "AP")[1])["per_query"]
        cut = json.loads(cli("--qrels", f["qrels"], "--run", f["run"], "-m", "R@2", "--depth", "1")[1])["per_query"]
        self.assertEqual(json.loads(out)["per_query"],
                         {q: {"AP(stage=s)": whole[q]["AP"], "R@2": cut[q]["R@2"]} for q in whole})
        # every score tied: ID descending, d9, d7, d3, so RR 1/3
        tied = self.write("tied.trec", trec_lines(STAGE_PIPELINE["cand"], scored=False))
        self.assertEqual(self.assert_read_as_run(tied, f["run"], f["qrels"], "--ties")["q1"]["RR"], 1 / 3)
        # chunks folded to their documents: d1#2 is d1's second chunk
        chunks = self.write("chunks.trec", trec_lines({"q1": ["d9#1", "d1#1", "d1#2", "d3#1"], "q2": ["d4#1"]}))
        run = self.write("crun.trec", trec_lines({"q1": ["d1#2"], "q2": ["d4#1"]}))
        self.assertEqual(self.assert_read_as_run(chunks, run, f["qrels"], "--chunk-separator", "#")["q1"]["R@2"],
                         1 / 3)
        # a repeated ID, kept once
        repeated = self.write("rep.trec", "q1 Q0 d1 1 9 t\nq1 Q0 d1 2 8 t\nq1 Q0 d2 3 7 t\nq2 Q0 d4 1 9 t\n")
        run = self.write("rrun.trec", "q1 Q0 d2 1 9 t\nq2 Q0 d4 1 9 t\n")
        self.assertEqual(self.assert_read_as_run(repeated, run, f["qrels"], "--duplicates", "first")["q1"]["R@2"],
                         2 / 3)
        # texts matched to labeled texts
        labels = self.write("texts.json", {"q1": ["Paris is the capital."], "q2": ["Rome."]})
        texts = self.write("stage_texts.json", {"q1": ["Lyon.", "Paris is the capital."], "q2": ["Rome."]})
        run = self.write("run_texts.json", {"q1": ["Paris is the capital."], "q2": ["Rome."]})
        self.assertEqual(self.assert_read_as_run(texts, run, labels, "--match", "text")["q1"]["RR"], 0.5)

    def test_the_library_refuses_a_stage_name_that_is_no_string(self):
        labels, run = STAGE_LABELS, STAGE_PIPELINE["run"]
        with self.assertRaisesRegex(rre.EvalError, "^stages names stage 1: a name is"):
            rre.score_run(labels, run, "R@2", stages={1: STAGE_PIPELINE["cand"]})
        with self.assertRaisesRegex(rre.EvalError, "^baseline_stages: expected an object"):
            rre.compare_runs(labels, run, run, "R@2", stages={"cand": STAGE_PIPELINE["cand"]},
                             baseline_stages=[STAGE_PIPELINE["cand"]])

    def test_depth_cuts_the_run_and_the_funnel_agrees_with_the_measures(self):
        """--depth cuts the run: the stages are what they kept, so a stage never seems to add what
        the run's cut left (a hostile pass found the funnel's rows at odds with R@K)."""
        f = self.files()
        result = json.loads(cli("--qrels", f["qrels"], "--run", f["run"], *self.stages(f), "-m",
                                "R(stage=cand),R(stage=filt),R@2,SetR", "--depth", "1")[1])
        recalls = {row["stage"]: row["recall"] for row in result["funnel"]["rows"]}
        for row, name in (("cand", "R(stage=cand)"), ("filt", "R(stage=filt)"), ("run", "SetR"), ("top 2", "R@2")):
            self.assertAlmostEqual(recalls[row], result["measures"][name], places=15, msg=row)
        # d3 is q1's run at 1, within --depth 1; d4 of q2 at 2 is cut
        self.assertEqual(result["per_query"]["q2"]["R@2"], 0.0)
        self.assertEqual(result["funnel"]["queries"]["q2"]["d4"]["fate"], "removed")

    def test_ties_and_the_plot_leave_a_stages_measure_alone(self):
        f = self.files(cand={"q1": ["d9", "d1", "d2", "d7", "d3"], "q2": ["d4", "d8", "d6"]})
        tied = self.write("tied.trec", trec_lines(STAGE_PIPELINE["cand"], scored=False))
        status, out, err = cli("--qrels", f["qrels"], "--run", f["run"], "--stage", "c=%s" % tied, "-m",
                               "R(stage=c)@1,R@1", "--ties")
        self.assertEqual(status, 0, err)
        self.assertEqual(json.loads(out)["ties"]["not_bounded"],
                         {"R(stage=c)@1": "the orders of a stage's tied documents are not tried"})
        # a stage's measure is not drawn over k as the run's: the funnel draws the stage
        plot = self.tmp / "p.svg"
        status, _, err = cli("--qrels", f["qrels"], "--run", f["run"], *self.stages(f), "-m", "R(stage=cand)@2",
                             "--plot", plot)
        self.assertEqual(status, 0, err)
        svg = plot.read_text()
        self.assertNotIn("R(stage=cand)@k", svg)
        self.assertIn("cand: 80.0%", svg)

    def test_a_stage_lacking_a_query_follows_missing_run(self):
        f = self.files(filt={"q1": STAGE_PIPELINE["filt"]["q1"]}, run={"q1": ["d3", "d9"]})
        args = ["--qrels", f["qrels"], "--run", f["run"], *self.stages(f), "-m",
                "R(stage=filt),R(stage=cand),NumRet(stage=filt)"]
        rejected(self, *cli(*args), "filt.trec: query sets differ: 1 labeled query has no ranking ('q2')")
        # zero: filt ranks nothing for q2; skip: q2 is left out
        status, out, err = cli(*args, "--missing-run", "zero")
        self.assertEqual(json.loads(out)["per_query"]["q2"],
                         {"R(stage=filt)": 0.0, "R(stage=cand)": 0.5, "NumRet(stage=filt)": 0})
        status, out, err = cli(*args, "--missing-run", "skip")
        self.assertEqual((list(json.loads(out)["per_query"]), json.loads(out)["skipped"]["missing_run"]),
                         (["q1"], ["q2"]))
        # the run ranks q2, which filt lacks: empty (zero), filt cannot have held d8; skip leaves it out
        f = self.files(filt={"q1": STAGE_PIPELINE["filt"]["q1"]})
        args = ["--qrels", f["qrels"], "--run", f["run"], *self.stages(f), "-m", "R(stage=filt)"]
        rejected(self, *cli(*args, "--missing-run", "zero"),
                 "run.trec: query 'q2': the run holds 'd8', which stage filt (%s) does not hold" % f["filt"])
        self.assertEqual(json.loads(cli(*args, "--missing-run", "skip")[1])["measures"], {"R(stage=filt)": 2 / 3})

    def test_a_saved_baseline_stands_for_its_pipeline(self):
        f = self.files()
        # the approved pipeline's filter kept d1: its R(stage=filt) was 3/3 and 1/2
        saved = self.write("approved.json", cli("--qrels", f["qrels"], "--run", f["run"], "--stage",
                                                "cand=%s" % f["cand"], "--stage", "filt=%s" % f["cand"],
                                                "-m", "R(stage=filt)")[1])
        args = ["--qrels", f["qrels"], "--run", f["run"], *self.stages(f), "-m", "R(stage=filt)", "--baseline", saved]
        status, out, err = cli(*args, "--max-mean-drop", "0.1")
        self.assertEqual(status, 1, err)
        self.assertEqual(json.loads(out)["comparison"]["R(stage=filt)"]["baseline"], 0.75)
        rejected(self, *cli(*args, "--baseline-stage", "cand=%s" % f["cand"]),
                 "--baseline is a saved result: its values of the stages' measures stand for its stages; "
                 "leave out --baseline-stage")

    def test_refusals(self):
        f = self.files()
        adding = {"cand": self.write("c2.trec", trec_lines({"q1": ["d9", "d1", "d2", "d3"], "q2": ["d4", "d8"]})),
                  "filt": self.write("f2.trec", trec_lines({"q1": ["d9", "d5", "d3"], "q2": ["d4", "d8"]})),
                  "run": self.write("r2.trec", trec_lines({"q1": ["d1"], "q2": ["d4"]})),
                  "index": self.write("i2.txt", "d1\nd2\nd3\nd4\nd6\nd7\nd8\n"),
                  "fixture": self.write("fx.json", {"qrels": STAGE_LABELS, "runs": {"r": STAGE_PIPELINE["run"]}}),
                  "saved": self.write("saved.json", cli("--qrels", f["qrels"], "--run", f["run"])[1])}
        run = ["--qrels", f["qrels"], "--run", f["run"]]
        base = ["--baseline", f["run"], "--baseline-stage", "cand=%s" % f["cand"]]
        cases = [  # (what, arguments, fragments of the one line)
            ("a middle stage adds an ID", run + ["--stage", "cand=%s" % f["cand"], "--stage", "filt=%s" % adding["filt"]],
             ["f2.trec: query 'q1': stage filt holds 'd5', which stage cand (%s) does not hold" % f["cand"]]),
            ("the run adds an ID", ["--qrels", f["qrels"], "--run", adding["run"], *self.stages(f)],
             ["r2.trec: query 'q1': the run holds 'd1', which stage filt (%s) does not hold" % f["filt"]]),
            ("the first stage holds an ID the index does not", run + self.stages(f) + ["--index", adding["index"]],
             ["cand.trec: query 'q1': stage cand holds 'd9', which the index does not hold"]),
            ("the run holds an ID the index does not", run + ["--index", adding["index"]],
             ["run.trec: query 'q1': the run holds 'd9', which the index does not hold"]),
            ("a stage named twice", run + ["--stage", "cand=%s" % f["cand"], "--stage", "cand=%s" % f["filt"]],
             ["stage 'cand' is given twice: name each stage once"]),
            ("a bad name", run + ["--stage", "c,x=%s" % f["cand"]],
             ["--stage names stage 'c,x': a name is 1 to 64 ASCII letters, digits"]),
            ("no file", run + ["--stage", "cand"], ["--stage: 'cand': give NAME=FILE, as candidates=first_stage.trec"]),
            ("no name", run + ["--stage", "=%s" % f["cand"]], ["--stage names stage ''"]),
            ("an unknown stage", run + ["--stage", "cand=%s" % f["cand"], "-m", "R(stage=nope)@2"],
             ["R(stage=nope)@2 reads stage nope, and --stage names no such stage"]),
            ("no stage named", run + ["--stage", "cand=%s" % f["cand"], "-m", "R(stage=)@2"],
             ["R(stage=)@2 reads stage , and --stage names no such stage"]),
            ("stage= and thresh=", run + self.stages(f) + ["-m", "R(stage=cand,thresh=3)@2"],
             ["stage= reads a stage's ranking as it was kept; a floor or a budget of it is not measured"]),
            ("stage= and tokens=", run + self.stages(f) + ["-m", "R(stage=cand,tokens=3)@2"],
             ["stage= reads a stage's ranking as it was kept"]),
            ("stage= of an agreement measure", run + self.stages(f) + ["-m", "RBO(stage=cand)", "--baseline", f["run"]],
             ["RBO takes no stage parameter"]),
            ("a fixture", [adding["fixture"], "--stage", "cand=%s" % f["cand"]],
             ["--stage and --index go with --qrels and --run, the last stage"]),
            ("a saved stage", run + ["--stage", "cand=%s" % adding["saved"]],
             ["saved.json: a result this tool saved stands for a baseline's run", "not for a stage's"]),
            ("baseline stages named otherwise", run + self.stages(f, "cand") + ["-m", "R(stage=cand)", "--baseline",
                                                                               f["run"], "--baseline-stage",
                                                                               "first=%s" % f["cand"]],
             ["--baseline-stage names first, and --stage cand: give the baseline's stages under the run's names"]),
            ("a saved baseline with its stages", run + self.stages(f, "cand") + ["--baseline", adding["saved"],
                                                                                "--baseline-stage", "cand=%s" % f["cand"]],
             ["--baseline is a saved result", "leave out --baseline-stage"]),
            ("a stage's measure with replicates", run + self.stages(f, "cand") + base + ["-m", "R(stage=cand)",
                                                                                        "--replicate", f["filt"]],
             ["R(stage=cand) reads a stage, and replicates have none: leave out R(stage=cand) or --replicate"]),
            ("a stage's measure with a baseline of no stages", run + self.stages(f, "cand") + ["-m", "R(stage=cand)",
                                                                                              "--baseline", f["run"]],
             ["R(stage=cand) compares a stage with the baseline's: give --baseline-stage of the same names as "
              "--stage"]),
            ("a baseline's stage without a baseline", run + base[2:],
             ["--baseline-stage needs --baseline: it is a stage of the baseline's pipeline"]),
            ("a pipeline without labels", ["--run", f["run"], "--baseline", f["run"], "-m", "RBO"] + self.stages(f),
             ["--stage and --index follow the relevant documents through the pipeline: give the labels"]),
            ("a pipeline beside agreement measures alone", run + self.stages(f) + ["--baseline", f["run"], "-m", "RBO"],
             ["--stage acts on labels, and agreement measures read none"]),
            ("an index beside agreement measures alone", run + ["--index", f["index"], "--baseline", f["run"], "-m",
                                                                "RBO"], ["--index acts on labels"]),
            ("a stage named as a row of the funnel", run + ["--stage", "run=%s" % f["cand"]],
             ["--stage names stage run, a row of the funnel of its own: name it otherwise"]),
            ("the baseline adds an ID", run + ["--baseline", adding["run"], "--baseline-stage", "cand=%s" % f["filt"],
                                               "--stage", "cand=%s" % f["cand"]],
             ["r2.trec: query 'q1': the baseline holds 'd1', which stage cand (%s) does not hold" % f["filt"]]),
        ]
        for what, args, fragments in cases:
            with self.subTest(what):
                rejected(self, *cli(*args), *fragments)

    def test_the_library_names_its_keywords(self):
        stages = {n: STAGE_PIPELINE[n] for n in ("cand", "filt")}
        run = STAGE_PIPELINE["run"]
        result = rre.compare_runs(STAGE_LABELS, run, run, "R(stage=filt)", stages=stages,
                                  baseline_stages={"cand": stages["cand"], "filt": stages["cand"]})
        self.assertEqual(result["comparison"]["R(stage=filt)"]["regressed"], {"q1": 2 / 3 - 1})
        cases = [
            (dict(stages={"cand": stages["cand"], "filt": {"q1": ["d9", "d5", "d3"], "q2": ["d4", "d8"]}}),
             r"^stages.filt: query 'q1': stage filt holds 'd5', which stage cand \(stages.cand\) does not hold"),
            (dict(stages={"a b": stages["cand"]}), r"^stages names stage 'a b'"),
            (dict(index=["d1"]), r"^run: query 'q1': the run holds 'd3', which the index does not hold"),
            (dict(stages=[stages["cand"]]), r"^stages: expected an object of stage names to runs"),
        ]
        for keywords, message in cases:
            with self.subTest(keywords=keywords), self.assertRaisesRegex(rre.EvalError, message):
                rre.score_run(STAGE_LABELS, run, "R@2", **keywords)
        # an index of exactly the IDs ranked holds them all
        self.assertEqual(rre.score_run({"q1": ["d1"]}, {"q1": ["d2", "d1"]}, "R@1", index=["d1", "d2"])["measures"],
                         {"R@1": 0.0})
        with self.assertRaisesRegex(rre.EvalError, "give baseline_stages of the same names as stages"):
            rre.compare_runs(STAGE_LABELS, run, run, "R(stage=cand)", stages=stages)
        with self.assertRaisesRegex(rre.EvalError, "R\\(stage=nope\\) reads stage nope, and stages names no such"):
            rre.score_run(STAGE_LABELS, run, "R(stage=nope)", stages=stages)

    def test_the_readmes_pipeline_prints_what_the_readme_shows(self):
        # README "Where was it lost?": a LlamaIndex trace of three stages, the reranker's top 3 last
        node = lambda ids: [{"node": {"id_": d}, "score": round(0.9 - i * 0.05, 2)} for i, d in enumerate(ids)]
        trace = [("q1", "leave-5 leave-2 hr-1 leave-7 hr-4", "leave-5 leave-2 hr-1 leave-7", "leave-5 hr-1 leave-2"),
                 ("q2", "expense-1 expense-4 travel-2 hr-4", "expense-1 travel-2 hr-4", "expense-1 travel-2 hr-4"),
                 ("q3", "travel-1 travel-2 hr-1", "travel-1 travel-2 hr-1", "travel-1 travel-2 hr-1")]
        self.write("trace.jsonl", "".join(json.dumps({"query_id": q, "retrieved": node(r.split()), "filtered": node(
            f.split()), "context": node(c.split())}) + "\n" for q, r, f, c in trace))
        self.write("qrels.txt", "q1 0 leave-2 1\nq1 0 leave-7 1\nq2 0 expense-4 1\nq2 0 expense-9 1\n"
                                "q3 0 travel-1 1\nq3 0 travel-3 1\n")
        self.write("index.txt", "leave-2\nleave-5\nleave-7\nhr-1\nhr-4\nexpense-1\nexpense-4\ntravel-1\n"
                                "travel-2\ntravel-3\n")
        self.write("lengths.txt", "leave-5 300\nhr-1 400\nleave-2 900\nexpense-1 250\ntravel-2 350\nhr-4 300\n"
                                  "travel-1 200\n")
        readme = (Path(__file__).parent / "README.md").read_text(encoding="utf-8")
        command, shown = re.search(r"```\npython3 rag_retrieval_eval.py ([^`]*?)\n```\n<!-- stages recipe.*?-->\n"
                                   r"```\n(.*?)\n```", readme, re.S).groups()
        words = command.replace("\\\n", "").replace('"', "").split()
        # NAME=FILE names its file as the command line gives it: run where the files are
        here = os.getcwd()
        os.chdir(self.tmp)
        try:
            status, out, err = cli(*words)
        finally:
            os.chdir(here)
        self.assertEqual((status, out.rstrip("\n")), (0, shown))
        # --explain's one note, on stderr
        self.assertEqual(err.count("\n"), 1)
        self.assertIn("note: --explain: unjudged would mean merely unlabeled", err)

    def test_a_stages_measure_equals_that_measure_of_the_stage_as_the_run(self):
        rng = random.Random(50)
        docs = ["d%d" % i for i in range(30)]
        labels, stages = {}, {"first": {}, "second": {}, "run": {}}
        for q in ("q%d" % i for i in range(60)):
            labels[q] = {d: rng.choice((1, 1, 2)) for d in rng.sample(docs, rng.randint(1, 5))}
            first = rng.sample(docs, rng.randint(1, 20))
            second = [d for d in first if rng.random() < 0.6] or first[:1]
            rng.shuffle(second)
            stages["first"][q], stages["second"][q] = first, second
            stages["run"][q] = second[:rng.randint(1, len(second))]
        # (a stage's measure, the run's): R and P of the whole list are R@30 and SetP
        pairs = [(n + "(stage=%s)" + k, n + k) for n in ("AP", "nDCG", "RR", "R", "P") for k in ("", "@5")]
        pairs[-4:] = [("R(stage=%s)", "R@30"), ("R(stage=%s)@5", "R@5"), ("P(stage=%s)", "SetP"),
                      ("P(stage=%s)@5", "P@5")]
        for stage in ("first", "second"):
            asked = [m % stage for m, _ in pairs]
            staged = rre.score_run(labels, stages["run"], asked, stages={n: stages[n] for n in ("first", "second")})
            alone = rre.score_run(labels, stages[stage], [m for _, m in pairs])
            for m, plain in pairs:
                self.assertEqual({q: r[m % stage] for q, r in staged["per_query"].items()},
                                 {q: r[plain] for q, r in alone["per_query"].items()}, m % stage)


class FunnelTest(TempDirTestCase):
    """Issue 50, items 2-3: the fate of every relevant document in a pipeline, and its funnel.

    The worked pipeline: the store holds every document but d6; the first stage fetches 5 of
    q1's (d5 is not among them), a filter drops d4, a reranker drops d3 and pushes d1 from 2nd
    to 3rd, out of the top 2.  q2 keeps both of its relevant documents all the way."""
    QRELS = {"q1": {"d1": 1, "d2": 1, "d3": 1, "d4": 1, "d5": 2, "d6": 1, "d9": 0}, "q2": {"e1": 1, "e2": 1}}
    INDEX = ["d1", "d2", "d3", "d4", "d5", "d7", "d8", "d9", "e1", "e2", "e3"]
    CAND = {"q1": ["d7", "d1", "d2", "d3", "d4"], "q2": ["e1", "e2", "e3"]}
    FILTER = {"q1": ["d7", "d1", "d2", "d3"], "q2": ["e1", "e2"]}
    RERANKED = {"q1": ["d7", "d2", "d1"], "q2": ["e2", "e1"]}
    # (stage, fate, relevant, lost, q1's share there): q2's share is 1 at every row
    ROWS = [("index", "not_indexed", 7, 1, 5 / 6), ("cand", "not_retrieved", 6, 1, 4 / 6),
            ("filter", "removed", 5, 1, 3 / 6), ("run", "removed", 4, 1, 2 / 6), ("top 2", "below_k", 3, 1, 1 / 6)]
    LOST = {"d1": {"stage": "top 2", "fate": "below_k", "rank": 3, "stage_rank": 2},
            "d3": {"stage": "run", "fate": "removed", "rank": None, "stage_rank": 4},
            "d4": {"stage": "filter", "fate": "removed", "rank": None, "stage_rank": None},
            "d5": {"stage": "cand", "fate": "not_retrieved", "rank": None, "stage_rank": None},
            "d6": {"stage": "index", "fate": "not_indexed", "rank": None, "stage_rank": None}}

    def rows(self, rows=ROWS, total=8, other=1.0):
        return [{"stage": s, "fate": f, "relevant": n, "share": n / total, "recall": math.fsum([q1, other]) / 2,
                 "lost": lost} for s, f, n, lost, q1 in rows]

    def files(self, **changed):
        """The worked pipeline's files: TREC labels, the index as lines, JSON rankings."""
        qrels = "".join("%s 0 %s %d\n" % (q, d, g) for q, docs in self.QRELS.items() for d, g in docs.items())
        made = {"qrels": self.write("qrels.txt", qrels), "index": self.write("index.txt", "\n".join(self.INDEX) + "\n")}
        for name, value in dict(dict(cand=self.CAND, filter=self.FILTER, run=self.RERANKED), **changed).items():
            made[name] = self.write(name + ".json", value)
        return made

    def pipeline(self, files, *more):
        status, out, err = cli("--qrels", files["qrels"], "--index", files["index"], "--stage", "cand=%s" % files["cand"],
                               "--stage", "filter=%s" % files["filter"], "--run", files["run"], *more)
        self.assertEqual(status, 0, err)
        return out

    def assertSummed(self, block):
        """The funnel is the fates summed: each row lost the units whose fate names it."""
        fates = [f for lost in block["queries"].values() for f in lost.values()]
        for row in block["rows"]:
            self.assertEqual(row["lost"], sum(f["stage"] == row["stage"] for f in fates), row)
        self.assertEqual(block["rows"][-1]["relevant"], block["relevant"] - len(fates))

    def test_the_worked_pipeline_by_hand(self):
        files = self.files()
        result = json.loads(self.pipeline(files, "-m", "R@2,R(stage=cand),R(stage=filter),SetR",
                                           "--explain"))
        funnel = result["funnel"]
        self.assertEqual(funnel, {"relevant": 8, "rows": self.rows(), "queries": {"q1": self.LOST}})
        self.assertSummed(funnel)
        # each row's recall is the recall of what is there: a stage's, the run's, its top 2
        recalls = {row["stage"]: row["recall"] for row in funnel["rows"]}
        for stage, name in (("cand", "R(stage=cand)"), ("filter", "R(stage=filter)"), ("run", "SetR"), ("top 2", "R@2")):
            self.assertAlmostEqual(recalls[stage], result["measures"][name], places=15, msg=stage)
        self.assertEqual(list(result)[-3:], ["funnel", "explain", "manifest"])
        entry = result["explain"]["queries"]["q1"]
        self.assertEqual((entry["cause"], entry["fates"]), ("absent", self.LOST))
        status, out, err = cli("--qrels", files["qrels"], "--index", files["index"], "--stage", "cand=%s" % files["cand"],
                               "--stage", "filter=%s" % files["filter"], "--run", files["run"], "-m", "R@2", "--explain",
                               "--format", "table")
        self.assertIn("  q1: absent; d1 at 3 (2 before), d3 removed by run, d4 removed by filter, d5 not retrieved by "
                      "cand, d6 not indexed; unjudged in the top 2: d7\n", out)
        self.assertTrue(out.endswith("\n\nrelevant documents (or evidence slots) still there, and lost, along the "
                                     "pipeline:\n  stage    relevant  recall  lost\n  index   7 (87.5%)  0.9167     1\n"
                                     "  cand    6 (75.0%)  0.8333     1\n  filter  5 (62.5%)  0.7500     1\n"
                                     "  run     4 (50.0%)  0.6667     1\n  top 2   3 (37.5%)  0.5833     1\n"), out)
        markdown = self.pipeline(files, "-m", "R@2", "--format", "markdown")
        self.assertIn("**relevant documents (or evidence slots) still there, and lost, along the pipeline**\n\n"
                      "| stage | relevant | recall | lost |\n| --- | ---: | ---: | ---: |\n"
                      "| index | 7 (87.5%) | 0.9167 | 1 |\n", markdown)
        rows = list(csv.DictReader(io.StringIO(self.pipeline(files, "-m", "R@2", "--format", "csv"))))
        self.assertEqual([[r["lost at " + s] for s, *_ in self.ROWS] for r in rows], [["1"] * 5, ["0"] * 5])
        # without a pipeline, nothing new
        plain = json.loads(cli("--qrels", files["qrels"], "--run", files["run"], "-m", "R@2", "--explain")[1])
        self.assertNotIn("funnel", plain)
        self.assertNotIn("fates", plain["explain"]["queries"]["q1"])
        self.assertEqual(plain["explain"]["queries"]["q1"]["missing"], entry["missing"])

    def test_trec_json_lines_and_the_library_give_the_same_funnel(self):
        files = self.files()
        expected = json.loads(self.pipeline(files, "-m", "R@2"))["funnel"]
        files["cand"] = self.write("cand.jsonl", "".join(json.dumps({"qid": q, "retrieved": r}) + "\n"
                                                         for q, r in self.CAND.items()))
        files["run"] = self.write("run.trec", "".join("%s Q0 %s %d %d x\n" % (q, d, i, 9 - i)
                                                      for q, r in self.RERANKED.items() for i, d in enumerate(r, 1)))
        self.assertEqual(json.loads(self.pipeline(files, "-m", "R@2"))["funnel"], expected)
        result = rre.score_run(self.QRELS, self.RERANKED, "R@2", stages={"cand": self.CAND, "filter": self.FILTER},
                               index=self.INDEX)
        self.assertEqual(result["funnel"], expected)
        # the index alone: the run is the first stage, and no stage comes before it
        result = rre.score_run(self.QRELS, self.RERANKED, "R@2", index=self.INDEX)
        self.assertEqual([(r["stage"], r["fate"], r["relevant"]) for r in result["funnel"]["rows"]],
                         [("index", "not_indexed", 7), ("run", "not_retrieved", 4), ("top 2", "below_k", 3)])
        self.assertEqual(result["funnel"]["queries"]["q1"]["d1"], {"stage": "top 2", "fate": "below_k", "rank": 3,
                                                                   "stage_rank": 3})

    def test_chunks_fold_into_documents_and_the_index_too(self):
        # d1 twice in the first stage, as two chunks
        chunked = {"cand": {"q1": ["d7#1", "d1#1", "d1#2", "d2#1", "d3#1", "d4#1"], "q2": ["e1#1", "e2#1", "e3#1"]},
                   "filter": {"q1": ["d7#1", "d1#2", "d2#1", "d3#1"], "q2": ["e1#1", "e2#1"]},
                   "run": {"q1": ["d7#1", "d2#1", "d1#2"], "q2": ["e2#1", "e1#1"]}}
        files = self.files(**chunked)
        self.write("index.txt", "".join("%s#1\n%s#2\n" % (d, d) for d in self.INDEX))
        funnel = json.loads(self.pipeline(files, "-m", "R@2", "--chunk-separator", "#"))["funnel"]
        self.assertEqual(funnel, {"relevant": 8, "rows": self.rows(), "queries": {"q1": self.LOST}})

    def test_an_evidence_slot_goes_as_far_as_its_best_document(self):
        files = self.files()
        evidence = self.write("ev.json", {"q1": [[["d1", "d6"], ["d4"]], [["d5"]]], "q2": [[["e1"], ["e9"]]]})
        status, out, err = cli("--evidence", evidence, "--index", files["index"], "--stage", "cand=%s" % files["cand"],
                               "--stage", "filter=%s" % files["filter"], "--run", files["run"], "-m", "EvidenceRecall@2")
        self.assertEqual(status, 0, err)
        funnel = json.loads(out)["funnel"]
        # q1's slots: d1 or d6, d4, d5; q2's: e1, e9 (not indexed)
        self.assertEqual(funnel["rows"], self.rows([("index", "not_indexed", 4, 1, 1.0), ("cand", "not_retrieved", 3, 1, 2 / 3),
                                                    ("filter", "removed", 2, 1, 1 / 3), ("run", "removed", 2, 0, 1 / 3),
                                                    ("top 2", "below_k", 1, 1, 0.0)], 5, 0.5)[:4] + [
            {"stage": "top 2", "fate": "below_k", "relevant": 1, "share": 0.2, "recall": 0.25, "lost": 1}])
        self.assertEqual(funnel["queries"], {
            "q1": {"d1|d6": self.LOST["d1"], "d4": self.LOST["d4"], "d5": self.LOST["d5"]},
            "q2": {"e9": {"stage": "index", "fate": "not_indexed", "rank": None, "stage_rank": None}}})
        self.assertSummed(funnel)

    def test_a_budget_cuts_what_the_top_k_held(self):
        files = self.files()
        lengths = self.write("lengths.txt", "d7 60\nd2 50\nd1 10\ne2 30\ne1 30\n")
        result = json.loads(self.pipeline(files, "-m", "R@2,R(tokens=100)@2", "--lengths", lengths))
        budget = {"stage": "budget", "fate": "over_budget", "relevant": 2, "share": 0.25, "recall": 0.5, "lost": 1}
        self.assertEqual(result["funnel"]["rows"], self.rows() + [budget])
        self.assertEqual(result["funnel"]["queries"]["q1"]["d2"],
                         {"stage": "budget", "fate": "over_budget", "rank": 2, "stage_rank": 3})
        self.assertEqual(result["funnel"]["rows"][-1]["recall"], result["measures"]["R(tokens=100)@2"])
        self.assertSummed(result["funnel"])

    def test_several_runs_each_their_own_fates(self):
        files = self.files()
        out = self.pipeline(files, "--run", files["filter"], "-m", "R@2")
        runs = json.loads(out)["runs"]
        self.assertEqual(runs[str(files["run"])]["funnel"]["rows"], self.rows())
        # the filter's own ranking as the run: d1 delivered, d2 and d3 below the top 2
        theirs = runs[str(files["filter"])]["funnel"]
        self.assertEqual([(r["stage"], r["relevant"], r["lost"]) for r in theirs["rows"]],
                         [("index", 7, 1), ("cand", 6, 1), ("filter", 5, 1), ("run", 5, 0), ("top 2", 3, 2)])
        self.assertEqual({d: f["stage_rank"] for d, f in theirs["queries"]["q1"].items() if f["fate"] == "below_k"},
                         {"d2": 3, "d3": 4})
        table = self.pipeline(files, "--run", files["filter"], "-m", "R@2", "--format", "table")
        self.assertIn("%s: relevant documents (or evidence slots) still there, and lost, along the pipeline:\n"
                      % files["filter"], table)
        self.assertIn("  filter  5 (62.5%)  0.7500     1\n  run     5 (62.5%)  0.7500     0\n", table)
        markdown = self.pipeline(files, "--run", files["filter"], "-m", "R@2", "--format", "markdown")
        self.assertEqual(markdown.count("| stage | relevant | recall | lost |"), 2)
        rows = list(csv.DictReader(io.StringIO(self.pipeline(files, "--run", files["filter"], "-m", "R@2",
                                                             "--format", "csv"))))
        self.assertEqual((rows[0]["%s lost at top 2" % files["filter"]], rows[0]["%s lost at run" % files["run"]]),
                         ("2", "1"))

    def test_a_baseline_pipeline_beside_in_every_format(self):
        files = self.files()
        summary = self.tmp / "summary.md"
        baseline = ["--baseline", files["run"], "--baseline-stage", "cand=%s" % files["cand"],
                    "--baseline-stage", "filter=%s" % files["cand"], "-m", "R@2"]
        funnel = json.loads(self.pipeline(files, *baseline, "--summary", summary))["funnel"]
        # the baseline filtered nothing: its reranker dropped d3 and d4
        self.assertEqual([(r["stage"], r["relevant"], r["lost"]) for r in funnel["baseline"]["rows"]],
                         [("index", 7, 1), ("cand", 6, 1), ("filter", 6, 0), ("run", 4, 2), ("top 2", 3, 1)])
        self.assertEqual(funnel["baseline"]["queries"]["q1"]["d4"],
                         {"stage": "run", "fate": "removed", "rank": None, "stage_rank": 5})
        self.assertSummed(funnel["baseline"])
        self.assertEqual(funnel["rows"], self.rows())
        lines = self.pipeline(files, *baseline, "--format", "table").splitlines()
        head = lines.index("relevant documents (or evidence slots) still there, and lost, along the pipeline:")
        self.assertEqual([line.split() for line in lines[head + 1:head + 5:3]], [
            ["stage", "baseline", "relevant", "baseline", "recall", "baseline", "lost", "relevant", "recall", "lost"],
            ["filter", "6", "(75.0%)", "0.8333", "0", "5", "(62.5%)", "0.7500", "1"]])
        markdown = self.pipeline(files, *baseline, "--format", "markdown")
        row = "| filter | 6 (75.0%) | 0.8333 | 0 | 5 (62.5%) | 0.7500 | 1 |"
        self.assertIn(row, markdown)
        self.assertIn(row, summary.read_text())
        rows = list(csv.DictReader(io.StringIO(self.pipeline(files, *baseline, "--format", "csv"))))
        self.assertEqual([(r["query"], r["baseline lost at filter"], r["lost at filter"], r["baseline lost at run"])
                          for r in rows], [("q1", "0", "1", "2"), ("q2", "0", "0", "0")])

    def test_an_index_of_chunks_holds_their_documents(self):
        """Under --chunk-separator the index is folded as the labels are: a document is indexed when
        one of its chunks is."""
        files = self.files(cand={"q1": ["d7#1", "d1#2", "d2#1", "d3#1", "d4#1"], "q2": ["e1#1", "e2#1", "e3#1"]},
                           filter={"q1": ["d7#1", "d1#2", "d2#1", "d3#1"], "q2": ["e1#1", "e2#1"]},
                           run={"q1": ["d7#1", "d2#1", "d1#2"], "q2": ["e2#1", "e1#1"]})
        files["index"] = self.write("chunks.txt", "".join("%s#%d\n" % (d, i) for d in self.INDEX for i in (1, 2)))
        funnel = json.loads(self.pipeline(files, "-m", "R@2", "--chunk-separator", "#"))["funnel"]
        self.assertEqual((funnel["rows"], funnel["queries"]), (self.rows(), {"q1": self.LOST}))
        # a separator without an index: the stages alone
        status, out, err = cli("--qrels", files["qrels"], "--stage", "cand=%s" % files["cand"], "--run", files["run"],
                               "-m", "R@2", "--chunk-separator", "#")
        self.assertEqual(status, 0, err)
        self.assertEqual([r["stage"] for r in json.loads(out)["funnel"]["rows"]], ["cand", "run", "top 2"])

    def test_an_unlabeled_evidence_document_is_refused_in_a_pipeline(self):
        """The rankings keep the ranks of labeled documents only: an evidence document without a label
        would be reported lost wherever it was (it was, before the refusal)."""
        files = self.files()
        evidence = self.write("evidence.json", {"q1": [[["d1"], ["d8"]]], "q2": [[["e1"]]]})
        args = ["--qrels", files["qrels"], "--evidence", evidence, "--stage", "cand=%s" % files["cand"],
                "--run", files["run"], "-m", "R@2,EvidenceRecall@2"]
        status, out, err = cli(*args)
        self.assertEqual((status, out), (2, ""))
        self.assertEqual(err, "rag_retrieval_eval: error: %s: query 'q1': evidence document 'd8' has no label, and "
                              "the funnel follows the labeled documents: label it, or let the evidence sets stand in "
                              "for the labels\n" % evidence)
        # labeled, it is followed: d8 is in no stage
        labeled = self.write("more.txt", "q1 0 d8 0\n")
        status, out, err = cli(*args, "--qrels", labeled)
        self.assertEqual(status, 0, err)
        fates = json.loads(out)["funnel"]["queries"]["q1"]
        self.assertEqual({unit: fate["fate"] for unit, fate in fates.items()}, {"d1": "below_k", "d8": "not_retrieved"})

    def test_the_plot_draws_a_bar_per_row(self):
        files = self.files()
        plot = self.tmp / "p.svg"
        self.pipeline(files, "-m", "R@2", "--plot", plot, "--baseline", files["run"], "--baseline-stage",
                      "cand=%s" % files["cand"], "--baseline-stage", "filter=%s" % files["cand"])
        svg = plot.read_text()
        bars = re.findall(r'<rect x="64" y="(\d+)" width="([0-9.]+)" height="20" fill="([^"]+)"/>'
                          r'<text x="([0-9.]+)" y="(\d+)">([^<]*)<', svg)
        width = rre._PLOT_WIDTH
        baseline = [(width * n / 8, rre.PALETTE[0], "%s: %.1f%%" % (s, 100 * n / 8))
                    for s, n in (("index", 7), ("cand", 6), ("filter", 6), ("run", 4), ("top 2", 3))]
        ours = [(width * r["share"], rre.PALETTE[1], "%s: %.1f%%" % (r["stage"], 100 * r["share"]))
                for r in self.rows()]
        # a bar every 24 pixels, its label 4 right of its end and 14 below its top; 50 between panels
        first = int(bars[0][0])
        tops = [first + 24 * i for i in range(5)] + [first + 24 * 5 + 50 + 24 * i for i in range(5)]
        self.assertEqual(bars, [(str(y), "%.1f" % w, colour, "%.1f" % (64 + 4 + w), str(y + 14), label)
                                for y, (w, colour, label) in zip(tops, baseline + ours)])
        # each panel's title 10 above its first bar
        titles = re.findall(r'<text x="64" y="(\d+)" font-weight="bold">(baseline )?[^<]*, relevant documents', svg)
        self.assertEqual(titles, [(str(first - 10), "baseline "), (str(tops[5] - 10), "")])
        import xml.etree.ElementTree as ET
        ET.fromstring(svg)


class AccessTest(TempDirTestCase):
    """--access (README: "Who may read it?"): a query may read a document when they share a
    principal; every document within the reach of the Leak measures that it may not read is a
    leak, named (query, document, rank) in every report, and fails the gate; Leak@k counts them.

    Worked by hand: q1 ranks d1 (team-a), d3 (in no map), d2 (team-b); q2 ranks d5 (team-b), d4
    (public); q3 ranks d6 and d7 (team-a), tied: d7 first (ID descending).  q1 and q3 run as
    team-a, q2 as x and public.  Leaks: q1's d3 at 2 and d2 at 3, q2's d5 at 1; Leak@2 = 1 + 1 +
    0, Leak = 2 + 1 + 0; one ranked document (d3) is in no map."""

    QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d4 1\nq3 0 d6 1\n"
    RUN = ("q1 Q0 d1 1 0.9 t\nq1 Q0 d3 2 0.8 t\nq1 Q0 d2 3 0.7 t\nq2 Q0 d5 1 0.9 t\n"
           "q2 Q0 d4 2 0.8 t\nq3 Q0 d6 1 0.5 t\nq3 Q0 d7 2 0.5 t\n")
    CLEAN = "q1 Q0 d1 1 0.9 t\nq2 Q0 d4 1 0.9 t\nq3 Q0 d6 1 0.5 t\nq3 Q0 d7 2 0.5 t\n"
    ACCESS = {"documents": {"d1": ["team-a", "public"], "d2": ["team-b"], "d4": ["public"],
                            "d5": ["team-b"], "d6": ["team-a"], "d7": ["team-a"]},
              "queries": {"q1": ["team-a"], "q2": ["x", "public"], "q3": ["team-a"]}}
    ACCESS_LINES = ("# who may read what\ndoc d1 team-a public\ndoc d2 team-b\n\ndoc d4 public\n"
                    "doc d5 team-b\ndoc d6 team-a\ndoc d7 team-a\nquery q1 team-a\n"
                    "query q2 x public\nquery q3 team-a\n")
    LEAKS = [{"query": "q1", "document": "d3", "rank": 2},
             {"query": "q1", "document": "d2", "rank": 3},
             {"query": "q2", "document": "d5", "rank": 1}]
    LINE = "leak: query 'q1': document 'd3' at rank 2, which the query may not read (--access)"

    def setUp(self):
        super().setUp()
        self.qrels, self.run = self.write("q.txt", self.QRELS), self.write("r.txt", self.RUN)
        self.access = self.write("access.json", self.ACCESS)
        self.clean = self.write("c.txt", self.CLEAN)

    def leaking(self, measures, *more, run=None, access=None):
        """cli() of the labels, a run (the leaky one) and the access map."""
        return cli("--qrels", self.qrels, "--run", run or self.run, "-m", measures,
                   "--access", access or self.access, *more)

    def test_hand_worked_leaks_from_trec_and_json_lines_in_both_access_forms(self):
        lines = self.write("access.txt", self.ACCESS_LINES)
        status, out, err = self.leaking("Leak@2,Leak,R@2")
        result = json.loads(out)
        self.assertEqual(status, 1, err)
        self.assertEqual(result["measures"], {"Leak@2": 2, "Leak": 3, "R@2": 1.0})
        self.assertEqual([row["Leak@2"] for row in result["per_query"].values()], [1, 1, 0])
        # the reach is the whole ranking, with Leak
        self.assertEqual((result["leaks"], result["unmapped"]), (self.LEAKS, 1))
        self.assertIn("note: --access: 1 ranked document in no map, readable by no one", err)
        self.assertIn("gate failed: " + self.LINE, err)
        self.assertEqual(without_inputs(self.leaking("Leak@2,Leak,R@2", access=lines)),
                         without_inputs((status, out, err)))
        # a log of JSON Lines records, lists in rank order: the same leaks
        log = self.write("log.jsonl", "".join(json.dumps(r) + "\n" for r in (
            {"query_id": "q1", "relevant": ["d1"], "retrieved": ["d1", "d3", "d2"]},
            {"query_id": "q2", "relevant": ["d4"], "retrieved": ["d5", "d4"]},
            {"query_id": "q3", "relevant": ["d6"], "retrieved": ["d7", "d6"]})))
        status, out, err = cli(log, "-m", "Leak@2,Leak", "--access", lines)
        self.assertEqual((status, json.loads(out)["leaks"], json.loads(out)["measures"]),
                         (1, self.LEAKS, {"Leak@2": 2, "Leak": 3}))
        # a line's ID is no principal of its own
        shared = rre.load(str(self.write("a.txt", "doc alice bob\nquery q1 alice\n")), "access")
        self.assertEqual(shared[:2], ({"alice": {"bob"}}, {"q1": {"alice"}}))

    def test_the_gate_reads_as_far_as_the_leak_measures_and_passes_without_a_leak(self):
        for measures, leaks in (("Leak@2", self.LEAKS[0::2]), ("Leak@1", self.LEAKS[2:]),
                                ("Leak@1,Leak@2", self.LEAKS[0::2]), ("R@1", self.LEAKS)):
            with self.subTest(measures=measures):
                status, out, err = self.leaking(measures)
                self.assertEqual((status, json.loads(out)["leaks"]), (1, leaks), err)
        status, out, err = self.leaking("Leak,R@1", "--format", "table", run=self.clean)
        self.assertEqual((status, err), (0, ""))
        self.assertNotIn("leak", out)
        self.assertEqual(json.loads(self.leaking("Leak", run=self.clean)[1])["leaks"], [])
        # --depth 1 cuts the ranking the leaks are read in; --judged-only does not: d3, unlabeled,
        # reaches the user too
        out = self.leaking("Leak", "--depth", "1")[1]
        self.assertEqual(json.loads(out)["leaks"], self.LEAKS[2:])
        out = self.leaking("Leak", "--judged-only")[1]
        self.assertEqual(json.loads(out)["leaks"], self.LEAKS)
        # a stage's Leak@1 reads the stage: the run's leaks still count in its whole ranking
        stage = self.write("stage.txt", self.RUN + "q1 Q0 d9 4 0.1 t\n")
        status, out, err = self.leaking("Leak(stage=s)@1,R@1", "--stage", "s=%s" % stage)
        self.assertEqual((status, json.loads(out)["leaks"]), (1, self.LEAKS), err)

    def test_chunks_are_checked_by_their_document(self):
        chunks = self.write("chunks.txt", "q1 Q0 d1#1 1 0.9 t\nq1 Q0 d3#1 2 0.8 t\n"
                                          "q1 Q0 d1#2 3 0.75 t\nq1 Q0 d2#4 4 0.7 t\n"
                                          "q2 Q0 d4#1 1 0.9 t\nq3 Q0 d6#1 1 0.5 t\n")
        # a chunk's own ID in the map is never looked up: d3's chunks are d3's
        documents = dict(self.ACCESS["documents"], **{"d3#1": ["team-a"]})
        mapped = self.write("a.json", dict(self.ACCESS, documents=documents))
        for access in (self.access, mapped):
            status, out, err = self.leaking("Leak", "--chunk-separator", "#", run=chunks,
                                            access=access)
            self.assertEqual((status, json.loads(out)["leaks"]), (1, self.LEAKS[:2]), err)
            self.assertEqual(json.loads(out)["unmapped"], 1)

    def test_several_runs_a_baseline_and_groups(self):
        status, out, err = self.leaking("Leak", "--run", self.clean)
        runs = json.loads(out)["runs"]
        self.assertEqual((status, runs[str(self.run)]["leaks"], runs[str(self.clean)]["leaks"]),
                         (1, self.LEAKS, []))
        out = self.leaking("Leak", "--run", self.clean, "--format", "table")[1]
        self.assertIn("gate breaches:\n  %s: %s" % (self.run, self.LINE), out)
        # the candidate's leaks gate; the baseline's neither fail it nor are reported
        status, out, err = self.leaking("Leak", "--baseline", self.run, "--max-mean-drop", "5",
                                        run=self.clean)
        self.assertEqual((status, json.loads(out)["leaks"]), (0, []), err)
        status, out, err = self.leaking("R@2", "--baseline", self.clean, "--format", "table")
        self.assertEqual(status, 1)
        self.assertIn("gate breaches:\n  " + self.LINE, out)
        groups = self.write("g.txt", "q1 a\nq2 a\nq3 b\n")
        status, out, err = self.leaking("Leak", "--groups", groups)
        result = json.loads(out)
        self.assertEqual((status, result["leaks"], result["groups"]["a"]["measures"]),
                         (1, self.LEAKS, {"Leak": 3}))

    def test_every_report_names_each_leak(self):
        summary, junit = self.tmp / "summary.md", self.tmp / "junit.xml"
        status, out, err = self.leaking("Leak@2,R@2", "--format", "table")
        self.assertEqual(status, 1)
        self.assertIn("gate breaches:\n  %s\n  leak: query 'q2': document 'd5' at rank 1"
                      % self.LINE, out)
        out = self.leaking("Leak@2,R@2", "--format", "markdown", "--summary", summary,
                           "--junit", junit)[1]
        self.assertIn("**2 gate breaches**\n\n- " + self.LINE, out)
        self.assertIn("- --access: 1 ranked document in no map", out)
        self.assertEqual(summary.read_text().strip(), out.strip())
        xml = junit.read_text()
        failure = '<failure message="%s" type="--access">%s\nleak: query \'q2\'' % (self.LINE,
                                                                                   self.LINE)
        self.assertIn('name="every ranked document readable (--access)">\n      ' + failure, xml)
        self.assertIn('tests="1" failures="1"', xml)
        self.assertEqual(self.leaking("Leak@2,R@2", "--format", "csv")[1],
                         "query,Leak@2,R@2,leaks\nq1,1,1.0,2:d3\nq2,1,1.0,1:d5\nq3,0,1.0,\n")
        several = self.leaking("Leak@2", "--run", self.clean, "--format", "csv")[1].splitlines()
        self.assertEqual(several[0].split(",")[-2:],
                         ["%s leaks" % self.run, "%s leaks" % self.clean])
        self.assertEqual(several[1].split(",")[-2:], ["2:d3", ""])
        markdown = self.leaking("Leak@2", "--run", self.clean, "--format", "markdown")[1]
        self.assertIn("**2 gate breaches**\n\n- ", markdown)
        # Markdown escapes the run's path
        self.assertIn("r.txt: %s\n- " % self.LINE, markdown)
        # JUnit without any other gate: the access case alone, passed by a clean run
        self.leaking("Leak", "--junit", junit, run=self.clean)
        self.assertIn('tests="1" failures="0"', junit.read_text())

    def test_the_library_takes_the_map_as_a_value(self):
        qrels = {"q1": {"d1": 1, "d2": 0}, "q2": ["d4"], "q3": ["d6"]}
        run = {"q1": {"d1": 0.9, "d3": 0.8, "d2": 0.7}, "q2": {"d5": 0.9, "d4": 0.8},
               "q3": {"d6": 0.5, "d7": 0.5}}
        result = rre.score_run(qrels, run, "Leak@2", access=self.ACCESS)
        self.assertEqual((result["measures"], result["leaks"], result["unmapped"]),
                         ({"Leak@2": 2}, self.LEAKS[0::2], 1))
        compared = rre.compare_runs(qrels, run, run, "Leak", access=self.ACCESS)
        self.assertEqual(compared["leaks"], self.LEAKS)
        runs = rre.score_runs(qrels, {"a": run}, "Leak", access=self.ACCESS)["runs"]
        self.assertEqual(runs["a"]["leaks"], self.LEAKS)
        with self.assertRaisesRegex(rre.EvalError, "^access: documents.d1: expected a non-empty list of "
                                                   "principals, not 'team-a'$"):
            rre.score_run(qrels, run, "Leak", access={"documents": {"d1": "team-a"}})
        with self.assertRaisesRegex(rre.EvalError, "^Leak counts the documents a query may not"):
            rre.score_run(qrels, run, "Leak")

    def test_refusals(self):
        unnamed = dict(self.ACCESS, queries={"q1": ["team-a"], "q2": ["public"]})
        cases = [  # (access file, extra options, fragments of the one line)
            ("doc d1\n", [], ["access.txt:1: expected doc ID PRINCIPAL... or query ID "
                              "PRINCIPAL..., found 'doc d1'"]),
            ("user d1 a\n", [], ["access.txt:1: expected doc ID"]),
            ("doc d1 a\n#\ndoc d1 b\n", [], ["access.txt:3: doc 'd1' is given twice"]),
            ('{"documents": {"d1": "a"}}', [],
             ["access.txt: documents.d1: expected a non-empty list of principals, not 'a'"]),
            ('{"documents": {"d1": ["a"]}, "queries": {"q1": []}}', [],
             ["access.txt: queries.q1: expected a non-empty list of principals, not []"]),
            ('{"documents": {"d1": [3]}}', [],
             ["documents.d1[0]: principal must be a string, not int 3"]),
            ('{"queries": {"q1": ["a", " "]}}', [], ["queries.q1[1]: principal ' ' is blank"]),
            ('{"documents": {}, "users": {}}', [], ["access.txt: users: unknown key: the keys"]),
            ('{"documents": {"d1": ["a"], "d1": ["b"]}}', [],
             ["documents: key 'd1' appears twice"]),
            ('["d1"]', [], ["access.txt: expected an object of documents and queries, not list"]),
            ("{}", [], ["access.txt: no documents or queries: nothing says who may read what"]),
            ("# nothing\n", [], ["access.txt: no documents or queries"]),
            (unnamed, [], ["access.txt: query 'q3': the query is judged, and has no principals"]),
            (self.ACCESS, ["--match", "text"],
             ["--access names documents by ID, and --match text ranks texts"]),
            (None, [], ["Leak counts the documents a query may not read: give --access FILE"]),
        ]
        for content, extra, fragments in cases:
            with self.subTest(content=content):
                given = [] if content is None else ["--access", self.write("access.txt", content)]
                rejected(self, *cli("--qrels", self.qrels, "--run", self.run, "-m", "Leak", *given,
                                    *extra), *fragments)
        rejected(self, *cli("--qrels", self.qrels, "--run", self.run, "-m", "R@1,Leak@2"),
                 "Leak counts the documents a query may not read")
        rejected(self, *cli("--run", self.run, "--baseline", self.run, "-m", "RBO", "--access",
                            self.access),
                 "--access acts on labels, and agreement measures read none")

    def test_the_readme_example_prints_what_it_shows(self):
        readme = (Path(__file__).parent / "README.md").read_text(encoding="utf-8")
        section = readme.split("## Who may read it?\n", 1)[1].split("\n## ", 1)[0]
        access_json, lines, shown = re.findall(r"```(?:json)?\n(.*?)\n```", section, re.S)[:3]
        for name, content in (("qrels.txt", self.QRELS), ("run.txt", self.RUN)):
            self.write(name, content)
        self.assertEqual(json.loads(access_json), self.ACCESS)
        self.assertEqual(lines + "\n", self.ACCESS_LINES)
        self.write("access.json", access_json)
        command, *expected = shown.splitlines()
        words = command.split()[3:]
        status, out, err = cli(*[self.tmp / w if (self.tmp / w).exists() else w for w in words])
        said = err.replace(str(self.tmp) + os.sep, "").splitlines()
        self.assertEqual(said + out.splitlines() + ["(exit status %d)" % status], expected)

    def test_the_fast_readers_find_the_leaks_the_reference_finds(self):
        scored = {"q1": {"d1": 0.9, "d3": 0.8, "d2": 0.7}, "q3": {"d6": 0.5, "d7": 0.5}}
        for run in (self.run, self.write("r.json", dict(scored, q2=["d5", "d4"]))):
            with self.subTest(run=run.name):
                fast, reference = both_paths("--qrels", self.qrels, "--run", run, "-m", "Leak,R@1",
                                             "--access", self.access)
                self.assertEqual(fast, reference)
                self.assertEqual(json.loads(fast[1])["leaks"], self.LEAKS)
        # the fast TREC reader's own records carry them (it hands the query to judge_run)
        truth = rre.Truth(rre.read_qrels(self.qrels), access=rre.load(str(self.access), "access"))
        handed = unittest.mock.patch.object(rre, "reference_judged_trec_run",
                                            side_effect=AssertionError("handed over"))
        with open(self.run, "rb") as stream, handed:
            ranked = rre.fast_judged_trec_run(stream, "r.txt", truth, rre.Reading())
        self.assertEqual(ranked["q1"].judged.leaks, ((2, "d3"), (3, "d2")))

# Two label sources of a few queries (LabelsCompareTest): 6 pairs both label, q3's x only the
# reference's, q2's d7 only the candidate's; the candidate one grade up on d2, one down on d4
LABELS_REFERENCE = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d4": 1, "d5": 0, "d6": 3}, "q3": {"x": 1}}
LABELS_CANDIDATE = {"q1": {"d1": 2, "d2": 1, "d3": 1}, "q2": {"d4": 0, "d5": 0, "d6": 3, "d7": 1}}


def runs_of_four(relevant):
    """Labels of the runs A, B, C and D of ORDER_RUNS: {run: how many of its 4 documents are
    relevant}, its first ones."""
    return {"q1": {"%s%d" % (run, i): int(i < n) for run, n in relevant.items() for i in range(4)}}


# Four runs, each of its own 4 documents: P@4 is the share of them relevant.  The reference
# orders them A > B > C > D; one candidate swaps the top two, another the bottom two.
ORDER_RUNS = {run: {"q1": ["%s%d" % (run, i) for i in range(4)]} for run in "ABCD"}
ORDER_REFERENCE = runs_of_four({"A": 4, "B": 3, "C": 2, "D": 1})
ORDER_TOP_SWAP = runs_of_four({"A": 3, "B": 4, "C": 2, "D": 1})
ORDER_BOTTOM_SWAP = runs_of_four({"A": 4, "B": 3, "C": 1, "D": 2})


class LabelsCompareTest(TempDirTestCase):
    """--candidate-qrels: labels under test against --qrels, alone, with runs, with a baseline."""

    def setUp(self):
        super().setUp()
        os.chdir(self.tmp)
        self.addCleanup(os.chdir, ROOT)
        self.write("ref.json", LABELS_REFERENCE)
        self.write("cand.json", LABELS_CANDIDATE)
        for name, labels in (("order.json", ORDER_REFERENCE), ("top.json", ORDER_TOP_SWAP),
                             ("bottom.json", ORDER_BOTTOM_SWAP)):
            self.write(name, labels)
        for run, ranking in ORDER_RUNS.items():
            self.write(run + ".json", ranking)

    def json_of(self, *args):
        status, out, err = cli(*args)
        self.assertEqual((status, err), (0, ""))
        return json.loads(out)

    def csv_is(self, text, lines):
        """CSV text as these lines: the header alike, each number within 1e-15 (kappa's last
        digit depends on the order of its sums)."""
        got = text.splitlines()
        self.assertEqual((len(got), got[0]), (len(lines), lines[0]))
        for row, expected in zip(got[1:], lines[1:]):
            cells, wanted = row.split(","), expected.split(",")
            self.assertEqual((cells[0], len(cells)), (wanted[0], len(wanted)))
            for cell, value in zip(cells[1:], wanted[1:]):
                self.assertAlmostEqual(float(cell), float(value), delta=1e-15, msg=row)

    def test_labels_alone(self):
        out = self.json_of("--qrels", "ref.json", "--candidate-qrels", "cand.json")
        self.assertEqual(list(out), ["label_agreement"])
        block = out["label_agreement"]
        # po 4/6, pe (2*2 + 2*2 + 1 + 1) / 36: (24 - 10) / (36 - 10); weighted, 1 - 6 * 2 / (2 * 21)
        # and 1 - 6 * 2 / (2 * 41); at 1: po 4/6, pe (16 + 4) / 36
        expected = {"reference": "ref.json", "candidate": "cand.json", "pairs": 6, "exact": 4 / 6,
                    "leniency": 0.0, "reference_only": 1, "queries_reference_only": 1,
                    "candidate_only": 1, "queries_candidate_only": 0, "grades": [0, 1, 2, 3],
                    "kappa_at": {"1": 0.25, "2": 1.0, "3": 1.0}}
        self.assertEqual({k: block[k] for k in expected}, expected)
        for name, value in (("kappa", 7 / 13), ("kappa_linear", 5 / 7), ("kappa_quadratic", 35 / 41)):
            self.assertAlmostEqual(block[name], value, delta=1e-15)
        self.assertEqual(block["confusion"]["0"], {"0": 1, "1": 1, "2": 0, "3": 0})
        self.assertEqual(block["per_grade"]["1"], {"precision": 0.5, "recall": 0.5})
        self.assertEqual(block["per_query"], {
            "q1": {"pairs": 3, "exact": 2 / 3, "leniency": 1 / 3, "kappa": 0.5},
            "q2": {"pairs": 3, "exact": 2 / 3, "leniency": -1 / 3, "kappa": 0.5}})

    def test_labels_alone_in_every_format(self):
        args = ("--qrels", "ref.json", "--candidate-qrels", "cand.json")
        status, table, err = cli(*args, "--format", "table")
        self.assertEqual((status, err), (0, ""))
        self.assertRegex(table, r"\n  kappa +0\.5385\n")
        self.assertRegex(table, r"label_agreement kappa_at:\n +1 +2 +3\n +0\.2500 +1\.0000 +1\.0000\n")
        self.assertNotIn("per_query", table)
        self.assertRegex(cli(*args, "--format", "table", "--per-query")[1],
                         r"label_agreement per_query:\n.*\n  q1 +3 +0\.6667 +0\.3333 +0\.5000\n")
        _, markdown, _ = cli(*args, "--format", "markdown")
        self.assertTrue(markdown.startswith("### Labels compared\n"), markdown)
        self.assertIn("| kappa\\_linear | 0.7143 |", markdown)
        self.assertIn("| 1 | 1 | 1 | 0 | 0 |", markdown)  # the confusion matrix's row of grade 1
        _, text, _ = cli(*args, "--format", "csv")
        self.assertEqual(text.splitlines(), [
            "query,labels pairs,labels exact,labels leniency,labels kappa",
            "q1,3,0.6666666666666666,0.3333333333333333,0.5",
            "q2,3,0.6666666666666666,-0.3333333333333333,0.5"])
        self.assertEqual(cli(*args, "--summary", "s.md"), cli(*args))
        self.assertEqual((self.tmp / "s.md").read_text(), markdown + "\n")

    def test_the_pool_lists_the_pairs_graded_apart_largest_gap_first(self):
        self.write("r.json", {"qa": {"a1": 1, "a2": 0}, "qb": {"b1": 0, "b2": 2, "b3": 1, "b4": 3},
                              "qc": {"c1": 3, "c2": 1}, "qd": {"d1": 0, "d2": 2}, "qe": {"e1": 1}})
        self.write("c.json", {"qa": {"a1": 0, "a2": 0}, "qb": {"b1": 1, "b2": 2, "b3": 3, "b4": 0},
                              "qc": {"c1": 1, "c2": 1}, "qd": {"d1": 2, "d2": 2}, "qe": {"e1": 1}})
        status, out, err = cli("--qrels", "r.json", "--candidate-qrels", "c.json", "--pool", "p.jsonl")
        self.assertEqual((status, err), (0, ""))
        self.assertEqual(json.loads(out), self.json_of("--qrels", "r.json", "--candidate-qrels", "c.json"))
        records = [json.loads(line) for line in (self.tmp / "p.jsonl").read_text().splitlines()]
        # qb's largest gap 3 (b4), then qc's and qd's 2 (the reference's order), qa's 1; qe agrees
        self.assertEqual([(r["query_id"], list(r["relevant"])) for r in records],
                         [("qb", ["b4", "b3", "b1"]), ("qc", ["c1"]), ("qd", ["d1"]), ("qa", ["a1"])])
        self.assertEqual(records[0], {"query_id": "qb", "relevant": {"b4": None, "b3": None, "b1": None},
                                      "reference": {"b4": 3, "b3": 1, "b1": 0},
                                      "candidate": {"b4": 0, "b3": 3, "b1": 1}})

    def test_trec_and_json_lines_labels_agree_as_json(self):
        self.write("ref.qrels", "".join("%s 0 %s %d\n" % (q, d, g) for q, docs in LABELS_REFERENCE.items()
                                        for d, g in docs.items()))
        self.write("cand.jsonl", "".join(json.dumps({"query_id": q, "relevant": docs}) + "\n"
                                         for q, docs in LABELS_CANDIDATE.items()))
        by_json = self.json_of("--qrels", "ref.json", "--candidate-qrels", "cand.json")["label_agreement"]
        block = self.json_of("--qrels", "ref.qrels", "--candidate-qrels", "cand.jsonl")["label_agreement"]
        self.assertEqual((block.pop("reference"), block.pop("candidate")), ("ref.qrels", "cand.jsonl"))
        self.assertEqual(block, {k: v for k, v in by_json.items() if k not in ("reference", "candidate")})

    def test_the_chunk_separator_folds_both_label_sets(self):
        self.write("r.json", {"q1": {"a#1": 2, "a#2": 2, "b": 0}})
        self.write("c.json", {"q1": {"a": 1, "b#3": 0}})
        block = self.json_of("--qrels", "r.json", "--candidate-qrels", "c.json",
                             "--chunk-separator", "#")["label_agreement"]
        self.assertEqual((block["pairs"], block["exact"], block["leniency"]), (2, 0.5, -0.5))
        # not folded, they share no pair
        rejected(self, *cli("--qrels", "r.json", "--candidate-qrels", "c.json"),
                 "r.json and c.json label no (query, document) pair alike")
        # the candidate's chunks of one document must agree, as the reference's must
        self.write("c.json", {"q1": {"a#1": 1, "a#2": 2}})
        rejected(self, *cli("--qrels", "r.json", "--candidate-qrels", "c.json", "--chunk-separator", "#"),
                 "c.json", "'a#1' (grade 1) and 'a#2' (grade 2)")

    def test_one_run_scored_on_both(self):
        out = self.json_of("--qrels", "order.json", "--candidate-qrels", "top.json", "--run", "A.json",
                           "-m", "P@4,R@4")
        # the blocks of two label sources come after the manifest, the general result's last
        keys = list(out)
        self.assertEqual(set(keys[keys.index("manifest") + 1:]), {"label_agreement", "candidate_labels"})
        self.assertEqual(out["measures"], {"P@4": 1.0, "R@4": 0.4})
        self.assertEqual({k: out["candidate_labels"][k] for k in ("queries", "measures", "per_query")},
                         {"queries": 1, "measures": {"P@4": 0.75, "R@4": 0.3},
                          "per_query": {"q1": {"P@4": 0.75, "R@4": 0.3}}})
        self.assertEqual(out["label_agreement"]["pairs"], 16)
        self.assertNotIn("changes", out["candidate_labels"])
        _, table, _ = cli("--qrels", "order.json", "--candidate-qrels", "top.json", "--run", "A.json",
                          "-m", "P@4", "--format", "table")
        self.assertRegex(table, r"candidate_labels measures:\n +P@4\n +0\.7500\n")
        _, text, _ = cli("--qrels", "order.json", "--candidate-qrels", "top.json", "--run", "A.json",
                         "-m", "P@4", "--format", "csv")
        self.csv_is(text, ["query,P@4,labels pairs,labels exact,labels leniency,labels kappa,"
                           "candidate labels P@4", "q1,1.0,16,0.875,0.0,0.7333333333333333,0.75"])

    def orderings(self, labels, *more):
        runs = [arg for run in "ABCD" for arg in ("--run", run + ".json")]
        return self.json_of("--qrels", "order.json", "--candidate-qrels", labels, *runs, "-m", "P@4",
                            *more)

    def test_a_swap_at_the_top_weighs_more_than_one_at_the_bottom(self):
        top, bottom = self.orderings("top.json"), self.orderings("bottom.json")
        self.assertEqual(list(top), ["runs", "label_agreement", "label_orderings"])
        self.assertEqual([r["candidate_labels"]["measures"]["P@4"] for r in top["runs"].values()],
                         [0.75, 1.0, 0.5, 0.25])
        # tau-b (6 - 2 * 1) / 6 both; tau_AP 2 (0 + 1 + 1) / 3 - 1 against 2 (1 + 1 + 2/3) / 3 - 1
        for out, ap, swapped in ((top, 1 / 3, [["A.json", "B.json"]]),
                                 (bottom, 7 / 9, [["C.json", "D.json"]])):
            row = out["label_orderings"]["P@4"]
            self.assertAlmostEqual(row["tau_b"], 2 / 3, delta=1e-12)
            self.assertAlmostEqual(row["tau_ap"], ap, delta=1e-12)
            self.assertEqual(row["swapped"], swapped)
        same = self.orderings("order.json")["label_orderings"]["P@4"]
        self.assertEqual((same["tau_b"], same["swapped"]), (1.0, []))
        # every run ties on Judged@4 (all 1): neither statistic is defined
        tied = self.orderings("top.json", "-m", "Judged@4")["label_orderings"]
        self.assertEqual(tied["Judged@4"], {"tau_b": None, "tau_ap": None, "swapped": []})

    def test_several_runs_in_every_format(self):
        runs = [arg for run in "AB" for arg in ("--run", run + ".json")]
        args = ("--qrels", "order.json", "--candidate-qrels", "top.json", *runs, "-m", "P@4")
        _, table, _ = cli(*args, "--format", "table")
        self.assertRegex(table, r"B\.json: candidate_labels measures:\n +P@4\n +1\.0000\n")
        self.assertRegex(table, r"label_orderings:\n +tau_b +tau_ap +swapped\n"
                                r"  P@4 +-1\.0000 +-1\.0000 +A\.json/B\.json\n")
        _, markdown, _ = cli(*args, "--format", "markdown")
        self.assertIn("| P@4 | -1.0000 | -1.0000 | A.json/B.json |", markdown)
        _, text, _ = cli(*args, "--format", "csv")
        self.csv_is(text, [
            "query,P@4 A.json,P@4 B.json,A.json candidate labels P@4,B.json candidate labels P@4,"
            "labels pairs,labels exact,labels leniency,labels kappa",
            "q1,1.0,0.75,0.75,1.0,16,0.875,0.0,0.7333333333333333"])
        self.assertEqual(cli(*args, "--format", "markdown", "--summary", "s.md")[0], 0)
        self.assertEqual((self.tmp / "s.md").read_text(), markdown + "\n")

    def test_a_baselines_sign_and_verdict_flip_under_the_candidate_labels(self):
        # A beats B on the reference's labels (1 against 0.75), loses on the candidate's
        args = ("--qrels", "order.json", "--candidate-qrels", "top.json", "--run", "A.json",
                "--baseline", "B.json", "-m", "P@4,R@1", "--max-mean-drop", "0.1")
        status, out, err = cli(*args)
        # the gates pass on the reference's labels: exit 0, and a warning of the flip
        self.assertEqual((status, err), (0, "rag_retrieval_eval: warning: the gates' verdict flips on "
                                            "the candidate labels: they fail there\n"))
        block = json.loads(out)["candidate_labels"]
        self.assertEqual(block["changes"], {"P@4": {"reference": 0.25, "candidate": -0.25, "flipped": True},
                                            "R@1": {"reference": 0.0, "candidate": 0.0, "flipped": False}})
        self.assertEqual([(b["measure"], b["drop"], b["gate"]) for b in block["breaches"]],
                         [("P@4", 0.25, "--max-mean-drop")])
        self.assertIs(block["verdict_flipped"], True)
        # the other way round the gate fails on the reference (exit 1) and passes on the candidate
        status, out, err = cli("--qrels", "order.json", "--candidate-qrels", "top.json", "--run", "B.json",
                               "--baseline", "A.json", "-m", "P@4", "--max-mean-drop", "0.1")
        block = json.loads(out)["candidate_labels"]
        self.assertEqual((status, block["breaches"], block["verdict_flipped"]), (1, [], True))
        self.assertEqual(err.splitlines(), [
            "rag_retrieval_eval: warning: the gates' verdict flips on the candidate labels: they pass there",
            "rag_retrieval_eval: gate failed: P@4 mean: 1.0000 -> 0.7500 (drop 0.2500 > --max-mean-drop 0.1)"])
        # the same verdict: no flip
        block = self.json_of(*args[:-1], "0.3")["candidate_labels"]
        self.assertEqual((block["breaches"], block["verdict_flipped"]), ([], False))
        _, table, _ = cli(*args, "--format", "table")
        self.assertRegex(table, r"  verdict_flipped +yes\n")
        self.assertRegex(table, r"  P@4 +0\.2500 +-0\.2500 +yes\n")

    def test_groups_on_the_candidate_labels(self):
        self.write("l.json", {"q1": {"a": 1, "b": 0, "c": 1}, "q2": {"x": 1, "y": 0, "z": 1}})
        self.write("c.json", {"q1": {"a": 1, "b": 1, "c": 0}, "q2": {"x": 1, "y": 1, "z": 1}})
        self.write("r.json", {"q1": ["b", "c"], "q2": ["x", "y"]})
        self.write("g.json", {"g1": ["q1"], "g2": ["q1", "q2"]})
        out = self.json_of("--qrels", "l.json", "--candidate-qrels", "c.json", "--run", "r.json",
                           "-m", "P@2", "--groups", "g.json")
        self.assertEqual({g: b["measures"] for g, b in out["groups"].items()},
                         {"g1": {"P@2": 0.5}, "g2": {"P@2": 0.5}})
        self.assertEqual(out["candidate_labels"]["groups"], {"g1": {"P@2": 0.5}, "g2": {"P@2": 0.75}})

    def test_the_relevance_level_reads_both_label_sets(self):
        # b, ranked first, is graded 1 by the reference and 2 by the candidate
        self.write("l.json", {"q1": {"a": 2, "b": 1}})
        self.write("c.json", {"q1": {"a": 1, "b": 2}})
        self.write("r.json", {"q1": ["b", "a"]})
        for level, ours, theirs in (("1", 1.0, 1.0), ("2", 0.0, 1.0)):
            out = self.json_of("--qrels", "l.json", "--candidate-qrels", "c.json", "--run", "r.json",
                               "-m", "P@1", "--relevance-level", level)
            self.assertEqual((out["measures"]["P@1"], out["candidate_labels"]["measures"]["P@1"]),
                             (ours, theirs), level)
            # the agreement is of the grades, whatever the level
            self.assertEqual(out["label_agreement"]["kappa"], -1.0)

    def test_the_library_answers_as_the_command_line(self):
        def named(block):
            return {k: v for k, v in block.items() if k not in ("reference", "candidate")}
        alone = rre.compare_labels(LABELS_REFERENCE, LABELS_CANDIDATE)
        self.assertEqual(list(alone), ["label_agreement"])
        cli_block = self.json_of("--qrels", "ref.json", "--candidate-qrels", "cand.json")["label_agreement"]
        self.assertEqual(named(alone["label_agreement"]), named(cli_block))
        self.assertEqual((alone["label_agreement"]["reference"], alone["label_agreement"]["candidate"]),
                         ("qrels", "candidate_qrels"))
        out = rre.compare_labels(ORDER_REFERENCE, ORDER_BOTTOM_SWAP, runs=ORDER_RUNS, measures="P@4")
        self.assertEqual({n: r["candidate_labels"]["measures"] for n, r in out["runs"].items()},
                         {"A": {"P@4": 1.0}, "B": {"P@4": 0.75}, "C": {"P@4": 0.25}, "D": {"P@4": 0.5}})
        self.assertAlmostEqual(out["label_orderings"]["P@4"]["tau_ap"], 7 / 9, delta=1e-12)
        with self.assertRaisesRegex(rre.EvalError, "^qrels and candidate_qrels label no"):
            rre.compare_labels({"q1": {"a": 1}}, {"q2": {"a": 1}})

    def test_the_library_names_swapped_runs_as_given(self):
        # (they were "runs.C" and "runs.D", with score_runs' internal prefix, before 75d0f69)
        out = rre.compare_labels(ORDER_REFERENCE, ORDER_BOTTOM_SWAP, runs=ORDER_RUNS, measures="P@4")
        self.assertEqual(out["label_orderings"]["P@4"]["swapped"], [["C", "D"]])
        # one run: no order to compare
        one = rre.compare_labels(ORDER_REFERENCE, ORDER_BOTTOM_SWAP, runs={"A": ORDER_RUNS["A"]},
                                 measures="P@4")
        self.assertEqual(list(one), ["runs", "label_agreement"])
        # a gain on both label sets is no flip (P@4: A 1, B 0.75 on both); no groups, no member
        block = rre.compare_labels(ORDER_REFERENCE, ORDER_BOTTOM_SWAP, runs={"A": ORDER_RUNS["A"]},
                                   measures="P@4", baseline=ORDER_RUNS["B"])["runs"]["A"]
        self.assertEqual(block["candidate_labels"]["changes"],
                         {"P@4": {"reference": 0.25, "candidate": 0.25, "flipped": False}})
        self.assertNotIn("groups", block["candidate_labels"])
        # a report's list cell: its first ten items
        self.assertEqual(rre._text(list("abcdefghijkl")), "a, b, c, d, e, f, g, h, i, j and 2 more")


# A baseline approved on older labels (LabelVersionsTest): --qrels regrades q1's b (0 -> 1) and
# c (1 -> 2) and adds zz, which neither run ranks.  P@2: the baseline 1/2 and 1/2 on the older
# labels, 1 and 1/2 on the newer; the run 1/2 and 1 on the older, 1 and 1 on the newer.
VERSION_BASELINE = {"q1": ["a", "b"], "q2": ["x", "y"]}
VERSION_RUN = {"q1": ["b", "c"], "q2": ["x", "z"]}
VERSION_OLDER = {"q1": {"a": 1, "b": 0, "c": 1}, "q2": {"x": 1, "y": 0, "z": 1}}
VERSION_NEWER = {"q1": {"a": 1, "b": 1, "c": 2, "zz": 1}, "q2": {"x": 1, "y": 0, "z": 1}}


def random_versions(rng):
    """(older labels, newer labels, baseline, run) of a few queries, at random: each version
    labels some documents 0 to 2, at least one relevant; each run ranks some of them and others."""
    docs = ["d%d" % i for i in range(8)]
    labels = []
    for _ in range(2):
        version = {}
        for q in ("q1", "q2", "q3", "q4"):
            graded = {d: rng.randint(0, 2) for d in rng.sample(docs, rng.randint(2, 6))}
            graded[rng.choice(list(graded))] = 2
            version[q] = graded
        labels.append(version)
    runs = [{q: rng.sample(docs + ["u1", "u2"], rng.randint(1, 7)) for q in ("q1", "q2", "q3", "q4")}
            for _ in range(2)]
    return (*labels, *runs)


class LabelVersionsTest(TempDirTestCase):
    """--baseline-qrels: a measure's change split into a retrieval part and a labels part."""

    def setUp(self):
        super().setUp()
        os.chdir(self.tmp)
        self.addCleanup(os.chdir, ROOT)
        for name, value in (("base.json", VERSION_BASELINE), ("run.json", VERSION_RUN),
                            ("old.json", VERSION_OLDER), ("new.json", VERSION_NEWER)):
            self.write(name, value)
        self.args = ("--qrels", "new.json", "--run", "run.json", "--baseline", "base.json",
                     "--baseline-qrels", "old.json")

    def json_of(self, *args, status=0):
        code, out, err = cli(*args)
        self.assertEqual(code, status, err)
        return json.loads(out)

    def test_the_split_of_a_small_case_by_hand(self):
        out = self.json_of(*self.args, "-m", "P@2")
        block = out["label_versions"]
        # q1: retrieval ((1/2 - 1/2) + (1 - 1)) / 2 = 0, labels ((1 - 1/2) + (1 - 1/2)) / 2 = 1/2;
        # q2: retrieval ((1 - 1/2) + (1 - 1/2)) / 2 = 1/2, labels 0; the means half of those
        self.assertEqual(block, {
            "qrels": "old.json",
            "labels": {"added": 1, "removed": 0, "regraded": 2, "queries_added": 0, "queries_removed": 0},
            "measures": {"P@2": {"retrieval": 0.25, "labels": 0.25, "change": 0.5}},
            "per_query": {"q1": {"P@2": {"retrieval": 0.0, "labels": 0.5, "change": 0.5}},
                          "q2": {"P@2": {"retrieval": 0.5, "labels": 0.0, "change": 0.5}}},
            # zz is in neither run's top 2: not listed
            "label_changes": {"q1": {"b": {"before": 0, "after": 1}, "c": {"before": 1, "after": 2}}}})
        # the comparison itself stays on --qrels
        self.assertEqual(out["comparison"]["P@2"]["baseline"], 0.75)
        self.assertEqual(list(out)[-2:], ["manifest", "label_versions"])

    def test_a_query_one_version_lacks_is_counted_and_split_in_no_row(self):
        # q3 is new in --qrels: scored on it alone (--missing-run zero ranks it for both runs,
        # the older labels skip it), in no per-query split, counted among the labels' changes
        # (and q4, the same in both and ranked by neither run, moves in no part: in no row)
        self.write("new3.json", dict(VERSION_NEWER, q3={"m": 1}, q4={"m": 1}))
        self.write("old4.json", dict(VERSION_OLDER, q4={"m": 1}))
        out = self.json_of("--qrels", "new3.json", *self.args[2:-1], "old4.json", "-m", "P@2",
                           "--missing-run", "zero", "--unlabeled", "skip")
        block = out["label_versions"]
        self.assertEqual(sorted(out["per_query"]), ["q1", "q2", "q3", "q4"])
        self.assertEqual(block["labels"]["queries_added"], 1)
        self.assertNotIn("q3", block["per_query"])
        self.assertEqual(sorted(block["per_query"]), ["q1", "q2"])

    def test_the_label_changes_listed_are_only_those_in_either_runs_top_k(self):
        # P@1: the tops are a and b; c, ranked second, is left out
        block = self.json_of(*self.args, "-m", "P@1")["label_versions"]
        self.assertEqual(block["label_changes"], {"q1": {"b": {"before": 0, "after": 1}}})

    def test_the_label_changes_listed(self):
        # AP has no cutoff: the top 10, which holds c (and not zz, ranked by none)
        block = self.json_of(*self.args, "-m", "AP")["label_versions"]
        self.assertEqual(list(block["label_changes"]["q1"]), ["b", "c"])
        counts, found = rre.label_changes({"q1": {"a": 1, "b": 0}, "q2": {"x": 1}},
                                          {"q1": {"a": 2, "c": 0}, "q3": {"y": 1}})
        self.assertEqual(counts, {"added": 2, "removed": 2, "regraded": 1, "queries_added": 1,
                                  "queries_removed": 1})
        self.assertEqual(found, {"q1": {"a": {"before": 1, "after": 2}, "b": {"before": 0, "after": None},
                                        "c": {"before": None, "after": 0}},
                                 "q2": {"x": {"before": 1, "after": None}},
                                 "q3": {"y": {"before": None, "after": 1}}})

    def test_the_parts_sum_to_the_change_on_random_runs_and_labels(self):
        rng = random.Random(52)
        measures = "P@3,nDCG@5,AP,RR,R@4"
        for i in range(12):
            older, newer, baseline, run = random_versions(rng)
            block = rre.compare_runs(newer, baseline, run, measures, baseline_qrels=older,
                                     missing_run="skip")["label_versions"]
            # each of the four scored alone: M(run, labels)
            m = {(r, l): rre.score_run(labels, ranked, measures, missing_run="skip")
                 for r, ranked in enumerate((baseline, run)) for l, labels in enumerate((older, newer))}
            with self.subTest(i=i):
                for name, parts in block["measures"].items():
                    a, b, c, d = (m[key]["measures"][name] for key in ((0, 0), (1, 0), (0, 1), (1, 1)))
                    self.assertAlmostEqual(parts["retrieval"], ((b - a) + (d - c)) / 2, delta=1e-12)
                    self.assertAlmostEqual(parts["labels"], ((c - a) + (d - b)) / 2, delta=1e-12)
                    self.assertAlmostEqual(parts["change"], d - a, delta=1e-12)
                    self.assertAlmostEqual(parts["retrieval"] + parts["labels"], parts["change"], delta=1e-12)
                for qid in m[1, 1]["per_query"]:
                    rows = [m[key]["per_query"][qid] for key in ((0, 0), (1, 0), (0, 1), (1, 1))]
                    for name in rows[3]:
                        a, b, c, d = (row[name] for row in rows)
                        split = block["per_query"].get(qid, {}).get(name, {"retrieval": 0, "labels": 0})
                        self.assertAlmostEqual(split["retrieval"] + split["labels"], d - a, delta=1e-12)
                        self.assertAlmostEqual(split["retrieval"], ((b - a) + (d - c)) / 2, delta=1e-12)

    def test_gate_on_retrieval_passes_where_the_labels_moved_the_mean(self):
        # P@1 of q1 falls from 1 to 0 on the newer labels, 0 to 0 on the older: a drop of 1/2 in
        # the mean on --qrels, of (1/2 + 0) / 2 in its retrieval part; the means 1/2 -> 1/2 from
        # the baseline on the older labels to the run on the newer: no change at all
        self.write("new1.json", {"q1": {"a": 1, "b": 0}, "q2": {"x": 1}})
        self.write("old1.json", {"q1": {"a": 0, "b": 0, "c": 1}, "q2": {"x": 1}})
        self.write("b1.json", {"q1": ["a"], "q2": ["x"]})
        self.write("r1.json", {"q1": ["b"], "q2": ["x"]})
        args = ("--qrels", "new1.json", "--run", "r1.json", "--baseline", "b1.json", "-m", "P@1")
        status, out, err = cli(*args, "--baseline-qrels", "old1.json", "--max-mean-drop", "0.3")
        self.assertEqual(status, 1)
        self.assertIn("drop 0.5000 > --max-mean-drop 0.3", err)
        out = self.json_of(*args, "--baseline-qrels", "old1.json", "--max-mean-drop", "0.3",
                           "--gate-on", "retrieval")
        self.assertEqual(out["breaches"], [])
        self.assertEqual(out["label_versions"]["measures"]["P@1"],
                         {"retrieval": -0.25, "labels": 0.25, "change": 0.0})
        # the versions the other way round: no drop on --qrels, and a retrieval part's of 1/4
        args = ("--qrels", "old1.json", "--run", "r1.json", "--baseline", "b1.json", "-m", "P@1",
                "--baseline-qrels", "new1.json", "--max-mean-drop", "0.2")
        self.assertEqual(self.json_of(*args)["breaches"], [])
        status, out, err = cli(*args, "--gate-on", "retrieval")
        self.assertEqual(status, 1, err)
        self.assertEqual(json.loads(out)["breaches"], [
            {"measure": "P@1", "query": None, "baseline": 0.75, "candidate": 0.5, "drop": 0.25,
             "gate": "--max-mean-drop", "limit": 0.2, "part": "retrieval"}])
        self.assertIn("the retrieval part's drop 0.2500 > --max-mean-drop 0.2", err)
        # a query's drop: q1's values averaged over the versions, 1/2 to 0
        for limit, status in (("0.6", 0), ("0.4", 1)):
            code, out, err = cli(*args[:-2], "--max-query-drop", limit, "--gate-on", "retrieval")
            self.assertEqual(code, status, err)
        self.assertEqual([(b["query"], b["drop"]) for b in json.loads(out)["breaches"]], [("q1", 0.5)])

    def test_trec_and_json_lines_versions_read_as_json(self):
        self.write("old.qrels", "".join("%s 0 %s %d\n" % (q, d, g) for q, docs in VERSION_OLDER.items()
                                        for d, g in docs.items()))
        self.write("new.jsonl", "".join(json.dumps({"query_id": q, "relevant": docs}) + "\n"
                                        for q, docs in VERSION_NEWER.items()))
        by_json = self.json_of(*self.args, "-m", "P@2,AP")["label_versions"]
        block = self.json_of("--qrels", "new.jsonl", "--run", "run.json", "--baseline", "base.json",
                             "--baseline-qrels", "old.qrels", "-m", "P@2,AP")["label_versions"]
        self.assertEqual(block.pop("qrels"), "old.qrels")
        self.assertEqual(block, {k: v for k, v in by_json.items() if k != "qrels"})

    def test_groups_split_too(self):
        self.write("g.json", {"g1": ["q1"], "g2": ["q2"]})
        block = self.json_of(*self.args, "-m", "P@2", "--groups", "g.json")["label_versions"]
        self.assertEqual(block["groups"], {"g1": {"P@2": {"retrieval": 0.0, "labels": 0.5, "change": 0.5}},
                                           "g2": {"P@2": {"retrieval": 0.5, "labels": 0.0, "change": 0.5}}})

    def test_every_format(self):
        _, table, _ = cli(*self.args, "-m", "P@2", "--format", "table")
        self.assertRegex(table, r"label_versions measures:\n +retrieval +labels +change\n"
                                r"  P@2 +0\.2500 +0\.2500 +0\.5000\n")
        self.assertNotIn("label_changes", table)
        _, table, _ = cli(*self.args, "-m", "P@2", "--format", "table", "--per-query")
        self.assertRegex(table, r"label_versions label_changes:\n +before +after\n  q1 b +0 +1\n  q1 c +1 +2\n")
        _, markdown, _ = cli(*self.args, "-m", "P@2", "--format", "markdown")
        self.assertIn("| P@2 | 0.2500 | 0.2500 | 0.5000 |", markdown)
        _, text, _ = cli(*self.args, "-m", "P@2", "--format", "csv")
        self.assertEqual(text.splitlines(), [
            "query,P@2 baseline,P@2 candidate,P@2 delta,P@2 retrieval,P@2 labels,P@2 change",
            "q1,1.0,1.0,0.0,0.0,0.5,0.5", "q2,0.5,1.0,0.5,0.5,0.0,0.5"])
        self.assertEqual(cli(*self.args, "-m", "P@2", "--summary", "s.md")[0], 0)
        self.assertEqual((self.tmp / "s.md").read_text(), markdown + "\n")
        # several runs: each its own block
        self.write("run2.json", VERSION_BASELINE)
        out = self.json_of(*self.args, "--run", "run2.json", "-m", "P@2")
        self.assertEqual({n: r["label_versions"]["measures"] for n, r in out["runs"].items()},
                         {"run.json": {"P@2": {"retrieval": 0.25, "labels": 0.25, "change": 0.5}},
                          "run2.json": {"P@2": {"retrieval": 0.0, "labels": 0.25, "change": 0.25}}})
        _, table, _ = cli(*self.args, "--run", "run2.json", "-m", "P@2", "--format", "table")
        self.assertRegex(table, r"run2\.json: label_versions measures:\n.*\n  P@2 +0\.0000 +0\.2500 +0\.2500\n")
        _, text, _ = cli(*self.args, "--run", "run2.json", "-m", "P@2", "--format", "csv")
        self.assertIn("run2.json P@2 retrieval,run2.json P@2 labels", text.splitlines()[0])

    def test_the_library_answers_as_the_command_line(self):
        cli_block = self.json_of(*self.args, "-m", "P@2")["label_versions"]
        block = rre.compare_runs(VERSION_NEWER, VERSION_BASELINE, VERSION_RUN, "P@2",
                                 baseline_qrels=VERSION_OLDER)["label_versions"]
        self.assertEqual(block.pop("qrels"), "baseline_qrels")
        self.assertEqual(block, {k: v for k, v in cli_block.items() if k != "qrels"})
        several = rre.score_runs(VERSION_NEWER, {"r": VERSION_RUN}, "P@2", baseline=VERSION_BASELINE,
                                 baseline_qrels=VERSION_OLDER)
        self.assertEqual(several["runs"]["r"]["label_versions"]["measures"], block["measures"])
        with self.assertRaisesRegex(rre.EvalError, "baseline_qrels.q1.a: .*grade 1.5 is not an integer"):
            rre.compare_runs(VERSION_NEWER, VERSION_BASELINE, VERSION_RUN, "P@2",
                             baseline_qrels={"q1": {"a": 1.5}})


# the files of the README's label sections ("Can the judge's labels be trusted?", "The labels
# changed"), as its examples were made on them: LabelReadmeTest
LABEL_README_FILES = {
    "human.txt": ("q1 0 d1 3\nq1 0 d2 2\nq1 0 d3 0\nq1 0 d4 1\nq1 0 d5 0\nq2 0 d6 2\nq2 0 d7 0\n"
                  "q2 0 d8 1\nq2 0 d9 0\nq3 0 d10 3\nq3 0 d11 1\nq3 0 d12 0\nq3 0 d13 2\n"),
    "judge.txt": ("q1 0 d1 3\nq1 0 d2 3\nq1 0 d3 1\nq1 0 d4 1\nq1 0 d5 0\nq2 0 d6 2\nq2 0 d7 2\n"
                  "q2 0 d8 1\nq2 0 d9 0\nq3 0 d10 2\nq3 0 d11 2\nq3 0 d12 0\nq3 0 d14 1\n"),
    "bm25.txt": ("q1 Q0 d1 1 10 bm25\nq1 Q0 d3 2 9 bm25\nq1 Q0 d2 3 8 bm25\nq2 Q0 d7 1 10 bm25\n"
                 "q2 Q0 d6 2 9 bm25\nq2 Q0 d8 3 8 bm25\nq3 Q0 d10 1 10 bm25\n"
                 "q3 Q0 d12 2 9 bm25\nq3 Q0 d11 3 8 bm25\n"),
    "dense.txt": ("q1 Q0 d2 1 10 dense\nq1 Q0 d3 2 9 dense\nq1 Q0 d5 3 8 dense\n"
                  "q2 Q0 d7 1 10 dense\nq2 Q0 d6 2 9 dense\nq2 Q0 d9 3 8 dense\n"
                  "q3 Q0 d11 1 10 dense\nq3 Q0 d10 2 9 dense\nq3 Q0 d14 3 8 dense\n"),
    "hybrid.txt": ("q1 Q0 d1 1 10 hybrid\nq1 Q0 d2 2 9 hybrid\nq1 Q0 d4 3 8 hybrid\n"
                   "q2 Q0 d6 1 10 hybrid\nq2 Q0 d8 2 9 hybrid\nq2 Q0 d9 3 8 hybrid\n"
                   "q3 Q0 d10 1 10 hybrid\nq3 Q0 d13 2 9 hybrid\nq3 Q0 d11 3 8 hybrid\n"),
    "labels-v1.txt": ("q1 0 d1 1\nq1 0 d2 2\nq1 0 d3 0\nq2 0 d4 2\nq2 0 d5 1\nq3 0 d6 1\nq3 0 d7 0\n"
                      "q3 0 d8 2\nq4 0 d9 1\n"),
    "labels-v2.txt": ("q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 0\nq1 0 d10 2\nq2 0 d4 2\nq2 0 d5 1\nq3 0 d6 1\n"
                      "q3 0 d7 1\nq3 0 d8 2\nq4 0 d9 1\nq4 0 d11 1\n"),
    "candidate.txt": ("q1 Q0 d2 1 10 candidate\nq1 Q0 d1 2 9 candidate\nq1 Q0 d3 3 8 candidate\n"
                      "q2 Q0 d12 1 10 candidate\nq2 Q0 d4 2 9 candidate\nq2 Q0 d5 3 8 candidate\n"
                      "q3 Q0 d8 1 10 candidate\nq3 Q0 d7 2 9 candidate\nq3 Q0 d6 3 8 candidate\n"
                      "q4 Q0 d9 1 10 candidate\nq4 Q0 d11 2 9 candidate\nq4 Q0 d13 3 8 candidate\n"),
    "approved.txt": ("q1 Q0 d2 1 10 approved\nq1 Q0 d1 2 9 approved\nq1 Q0 d3 3 8 approved\n"
                     "q2 Q0 d4 1 10 approved\nq2 Q0 d5 2 9 approved\nq2 Q0 d12 3 8 approved\n"
                     "q3 Q0 d8 1 10 approved\nq3 Q0 d6 2 9 approved\nq3 Q0 d7 3 8 approved\n"
                     "q4 Q0 d9 1 10 approved\nq4 Q0 d13 2 9 approved\nq4 Q0 d14 3 8 approved\n"),
}


# (arguments, fragments of the one line on stderr) refused with --candidate-qrels or
# --baseline-qrels, in LabelRejectionTest's folder (LabelVersionsTest's files, and saved.json,
# the result saved from run.json against base.json, fix.json a fixture, bad.json a grade 1.5)
LABEL_REJECTIONS = [
    (["--candidate-qrels", "old.json", "--run", "run.json"],
     ["--candidate-qrels compares labels with --qrels, the reference: give it"]),
    (["--candidate-qrels", "old.json"],
     ["--candidate-qrels compares labels with --qrels, the reference: give it"]),
    (["fix.json", "--candidate-qrels", "old.json"],
     ["--candidate-qrels compares labels with --qrels, the reference: give it"]),
    (["--qrels", "new.json", "--candidate-qrels", "old.json", "--baseline-qrels", "old.json",
      "--run", "run.json", "--baseline", "base.json"],
     ["--candidate-qrels tests other labels of one version", "give one"]),
    (["--qrels", "new.json", "--baseline-qrels", "old.json", "--run", "run.json"],
     ["--baseline-qrels are the labels the baseline was approved on: give --baseline, its run"]),
    (["--qrels", "new.json", "--baseline-qrels", "old.json", "--run", "run.json", "--baseline",
      "saved.json"], ["saved.json: ", "holds no run", "give its run"]),
    (["--qrels", "new.json", "--candidate-qrels", "old.json", "--run", "run.json", "--baseline",
      "saved.json"], ["saved.json: ", "holds no run, and --candidate-qrels scores the baseline's run"]),
    (["--qrels", "new.json", "--baseline-qrels", "old.json", "--baseline", "base.json"],
     ["give a FIXTURE, or both --qrels"]),
    (["--qrels", "new.json", "--candidate-qrels", "none.json"],
     ["new.json and none.json label no (query, document) pair alike"]),
    (["--qrels", "new.json", "--candidate-qrels", "old.json", "--run", "run.json", "--format", "trec"],
     ["--format trec has no place for what --candidate-qrels says"]),
    (["--qrels", "new.json", "--candidate-qrels", "old.json", "--format", "latex"],
     ["--format latex has no place for what --candidate-qrels says"]),
    (["--qrels", "new.json", "--baseline-qrels", "old.json", "--run", "run.json", "--baseline",
      "base.json", "--format", "latex"], ["--format latex has no place for what --baseline-qrels says"]),
    (["--qrels", "new.json", "--candidate-qrels", "bad.json"], ["bad.json: q1.a: ", "grade 1.5"]),
    (["--qrels", "new.json", "--baseline-qrels", "bad.json", "--run", "run.json", "--baseline",
      "base.json"], ["bad.json: q1.a: ", "grade 1.5"]),
    (["--qrels", "new.json", "--candidate-qrels", "nope.json"], ["nope.json: cannot read"]),
    (["--qrels", "new.json", "--run", "run.json", "--baseline", "base.json", "--gate-on", "retrieval",
      "--max-mean-drop", "0.1"], ["--gate-on retrieval reads the retrieval part", "give --baseline-qrels"]),
    (["--qrels", "new.json", "--run", "run.json", "--baseline", "base.json", "--baseline-qrels",
      "old.json", "--gate-on", "retrieval"], ["give --max-mean-drop or --max-query-drop"]),
    (["--qrels", "new.json", "--run", "run.json", "--baseline", "base.json", "--baseline-qrels",
      "old.json", "--gate-on", "retrieval", "--min-mean", "P@2=0.5"],
     ["give --max-mean-drop or --max-query-drop"]),
    (["--qrels", "new.json", "--run", "run.json", "--baseline", "base.json", "--baseline-qrels",
      "old.json", "--gate-on", "retrieval", "--max-mean-drop", "0.1", "--groups", "g.json",
      "--max-group-drop", "0.1"], ["--max-group-drop reads what it does not split"]),
    (["--qrels", "new.json", "--run", "run.json", "--baseline", "base.json", "--baseline-qrels",
      "old.json", "--gate-on", "retrieval", "--max-mean-drop", "0.1", "--replicate", "base.json"],
     ["--replicate reads what it does not split"]),
] + [(["--qrels", "new.json", "--candidate-qrels", "old.json", *option],
      ["--%s acts on runs, and --candidate-qrels without --run compares the labels alone" % name])
     for name, option in (("measure", ["-m", "P@2"]), ("k", ["--k", "5"]), ("baseline", ["--baseline", "base.json"]),
                          ("groups", ["--groups", "g.json"]), ("relevance-level", ["--relevance-level", "2"]),
                          ("ci", ["--ci"]), ("explain", ["--explain"]), ("junit", ["--junit", "j.xml"]))]


class LabelRejectionTest(TempDirTestCase):
    def test_rejections(self):
        os.chdir(self.tmp)
        self.addCleanup(os.chdir, ROOT)
        for name, value in (("base.json", VERSION_BASELINE), ("run.json", VERSION_RUN),
                            ("old.json", VERSION_OLDER), ("new.json", VERSION_NEWER),
                            ("fix.json", {"qrels": VERSION_NEWER, "runs": VERSION_RUN}),
                            ("none.json", {"q9": {"a": 1}}), ("bad.json", {"q1": {"a": 1.5}}),
                            ("g.json", {"g": ["q1"]})):
            self.write(name, value)
        status, saved, err = cli("--qrels", "new.json", "--run", "run.json", "--baseline", "base.json")
        self.write("saved.json", saved)
        for args, fragments in LABEL_REJECTIONS:
            with self.subTest(args=args):
                rejected(self, *cli(*args), *fragments)
        self.assertEqual(sorted(os.listdir(self.tmp)), sorted(
            ["base.json", "run.json", "old.json", "new.json", "fix.json", "none.json", "bad.json",
             "g.json", "saved.json"]))  # nothing written: no j.xml

    def test_a_process_says_what_main_says(self):
        old, new = self.write("old.json", VERSION_OLDER), self.write("new.json", VERSION_NEWER)
        args = ("--qrels", new, "--candidate-qrels", old, "--format", "table")
        self.assertEqual(cli_process(*args), cli(*args))
        status, out, err = cli_process(*args, "--k", "3")
        rejected(self, status, out, err, "--k acts on runs")

    def test_the_library_refuses_alike(self):
        for call, message in (
                (lambda: rre.compare_labels(VERSION_NEWER, {"q1": {"a": 1.5}}),
                 "candidate_qrels.q1.a: query 'q1': grade 1.5 is not an integer"),
                (lambda: rre.compare_labels(VERSION_NEWER, VERSION_OLDER, measures="P@2"),
                 "--measure acts on runs"),
                (lambda: rre.score_runs(VERSION_NEWER, {"r": VERSION_RUN}, "P@2", baseline_qrels=VERSION_OLDER),
                 "--baseline-qrels are the labels the baseline was approved on"),
                (lambda: rre.compare_runs(VERSION_NEWER, VERSION_BASELINE, VERSION_RUN, "P@2",
                                          gate_on="retrieval", max_mean_drop=0.1),
                 "--gate-on retrieval reads the retrieval part")):
            with self.subTest(message), self.assertRaises(rre.EvalError) as ctx:
                call()
            self.assertIn(message, str(ctx.exception))


class LabelReadmeTest(TempDirTestCase):
    """Each example of the README's label sections prints what the README shows ("..." stands
    for any lines), and --pool writes the file it shows."""

    def test_each_example_prints_what_the_readme_shows(self):
        for name, text in LABEL_README_FILES.items():
            self.write(name, text)
        readme = (Path(__file__).parent / "README.md").read_text(encoding="utf-8")
        parts = [readme[readme.index(head):readme.index(end)] for head, end in (
            ("## Can the judge's labels be trusted?", "## What the model reads"),
            ("### The labels changed", "### How fine a gate can be"))]
        blocks = re.findall(r"```\n\$ python3 rag_retrieval_eval.py (.*?)\n```", "".join(parts),
                            re.S)
        self.assertEqual(len(blocks), 6)
        for block in blocks:
            command, shown = re.match(r"((?:.*\\\n)*.*)\n((?:.*\n?)*)", block).groups()
            shown, _, cat = shown.partition("$ cat adjudicate.jsonl\n")
            words = command.replace("\\\n", " ").split()
            with self.subTest(" ".join(words)):
                home = os.getcwd()
                os.chdir(self.tmp)
                try:
                    status, out, err = cli(*words)
                finally:
                    os.chdir(home)
                real = out.rstrip("\n").splitlines() + err.rstrip("\n").splitlines()
                lines = shown.rstrip("\n").splitlines()
                pattern = "\n".join("(?:.*\n)*?.*" if line == "..." else re.escape(line)
                                    for line in lines)
                self.assertRegex("\n".join(real + ["(exit status %d)" % status]),
                                 "^%s$" % pattern.replace("\n(?:.*\n)*?.*\n", "\n(?:.*\n)*?"))
                if cat:
                    self.assertEqual((self.tmp / "adjudicate.jsonl").read_text(), cat + "\n")


class LibraryApiTest(unittest.TestCase):
    """score_run and compare_runs answer exactly what the CLI prints as JSON."""

    def test_a_per_measure_limit_and_a_floor_say_what_they_take(self):
        same = ({"q1": ["d1"]}, {"q1": ["d1"]}, {"q1": ["d1"]}, "R@5")
        for keywords, message in (
                ({"min_mean": {"R@5": "x"}},
                 "min_mean must be {measure: number}, as {\"R@5\": 0.8}, not {'R@5': 'x'}"),
                ({"max_mean_drop": {"R@5": -1}},
                 "max_mean_drop must be {measure: number >= 0}, as {\"R@5\": 0.8}, not "
                 "{'R@5': -1}")):
            with self.subTest(keywords), self.assertRaises(rre.EvalError) as caught:
                rre.compare_runs(*same, **keywords)
            self.assertEqual(str(caught.exception), message)

    def test_a_file_name_that_is_no_name(self):
        for name, message in ((5, "a file name must be a string or a path, not int 5"),
                              (b"q.txt", "a file name must be text, not b'q.txt'")):
            with self.subTest(name=name), self.assertRaisesRegex(rre.EvalError, "^%s$" % re.escape(message)):
                rre.read_qrels(name)

    def test_the_readers_take_match_and_fields_as_the_scoring_functions_do(self):
        with tempfile.TemporaryDirectory() as folder:
            log = Path(folder, "ragas.jsonl")
            log.write_text(json.dumps({"query_id": "q1", "reference_contexts": ["Paris is  the capital."],
                                       "retrieved_contexts": ["Lyon.", " Paris is the capital.\n"]}) + "\n")
            qrels = rre.read_qrels(log, fields={"relevant": "reference_contexts"}, match="text")
            run = rre.read_run(log, fields={"retrieved": "retrieved_contexts"}, match="text")
            self.assertEqual((qrels, run), ({"q1": {"Paris is the capital.": 1}}, {"q1": ["Lyon.", "Paris is the capital."]}))
            self.assertEqual(rre.score_run(qrels, run, "RR", match="text")["measures"], {"RR": 0.5})
            Path(folder, "q.txt").write_text("q1 0 d1 1\n")
            for call, message in ((lambda: rre.read_run(log, match="words"),
                                   "match must be one of id, text, contains"),
                                  (lambda: rre.read_qrels(Path(folder, "q.txt"), fields={"relevant": "x"}),
                                   "every input is text (TREC or TSV): it would change nothing")):
                with self.subTest(message=message), self.assertRaisesRegex(rre.EvalError, re.escape(message)):
                    call()
        # a dict's keys are the caller's: EvalError, not TypeError
        for lengths in ({1: 3}, {"d1": 3, None: 4}):
            with self.subTest(lengths=lengths), self.assertRaisesRegex(rre.EvalError, "^lengths: ID must be a string"):
                rre.score_run({"q1": ["d1"]}, {"q1": ["d1"]}, "R(tokens=5)", lengths=lengths)

    def test_public_names(self):
        self.assertEqual(sorted(rre.__all__), sorted(["evaluate", "score_run", "compare_runs", "score_runs",
                                                      "compare_labels", "read_qrels", "read_run", "check_ids", "EvalError",
                                                      "__version__"]))

    def test_options_are_keywords_with_their_real_defaults(self):
        import inspect
        # -m is the positional measures
        parser, library_only = rre.build_parser(), {"measure", "k", "fields"}
        for call in (rre.score_run, rre.compare_runs, rre.score_runs):
            options = [p for p in inspect.signature(call).parameters.values() if p.kind == p.KEYWORD_ONLY]
            self.assertGreater(len(options), 10)
            for option in options:
                with self.subTest(call=call.__name__, option=option.name):
                    # one table
                    row = rre.OPTION[{"replicates": "replicate", "stages": "stage",
                                    "baseline_stages": "baseline_stage"}.get(option.name, option.name)]
                    self.assertIn(row.stage, ("plan", "value", "recorded", "input"))
                    expected = None if option.name in ("baseline", "groups") else parser.get_default(option.name)
                    self.assertEqual(option.default, expected)
                    self.assertEqual(option.default, row.default)
        compare = inspect.signature(rre.compare_runs).parameters
        evaluating = ("plan", "value", "recorded")
        # pairwise: score_runs' alone
        self.assertEqual(sorted(o.name for o in rre.OPTIONS if o.stage in evaluating and o.name not in library_only | {"pairwise"}),
                         sorted(name for name in compare if name in rre.OPTION and rre.OPTION[name].stage in evaluating))

    def test_one_config_from_the_command_line_or_the_keywords(self):
        cli, seed_mode = rre.parse_command_line(["--qrels", "q.txt", "--run", "r.txt", "-m", "R@1", "--depth", "5",
                                                 "--ties", "--seed", "3", "--missing-run", "zero"])
        lib = rre.configure({"qrels": ["q.txt"], "measures": "R@1", "depth": 5, "ties": True, "seed": 3,
                             "missing_run": "zero", "replicates": None}, keywords=True)
        self.assertFalse(seed_mode)
        self.assertEqual(lib, cli._replace(run=None))  # a library call's runs are its own argument
        self.assertEqual(rre.make_plan(lib).policies, {"missing_run": "zero", "unlabeled": "error",
                                                       "no_relevant": "error"})
        # by the table
        with self.assertRaisesRegex(rre.EvalError, "^permutations must be an integer >= 1, not 0"):
            rre.configure({"measures": None, "permutations": 0}, keywords=True)

    def test_each_kind_of_option_is_checked_as_the_table_says(self):
        bad = {"count": -1, "cutoff": 0, "limit": float("nan"), "choice": "sometimes", "flag": 1, "text": 5}
        for option in rre.OPTIONS:
            if option.stage not in ("plan", "value", "recorded") or option.kind not in bad:
                continue
            with self.subTest(option=option.name), self.assertRaisesRegex(rre.EvalError, "^(%s|cutoff) must be" % option.name):
                # score_runs takes every option compare_runs takes, and pairwise
                rre.score_runs({"q1": ["d1"]}, {"a": {"q1": ["d1"]}}, baseline={"q1": ["d1"]},
                               **{option.name: bad[option.kind]})

    def test_integral_grades_of_any_type_and_a_query_named_like_a_dataset_key(self):
        class Grade(int):  # numpy's integers are integral without being int
            pass
        self.assertEqual(rre.score_run({"q1": {"d1": Grade(2)}}, {"q1": ["d1"]}, "R@1")["measures"], {"R@1": 1.0})
        # LlamaIndex's dataset holds both of its keys, as objects
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder, "q.json")
            path.write_text(json.dumps({"queries": {"d1": 1}, "q2": ["d2"]}), encoding="utf-8")
            self.assertEqual(rre.read_qrels(path), {"queries": {"d1": 1}, "q2": {"d2": 1}})

    def test_score_run_equals_the_cli(self):
        data = json_fixture(lambda q: {"d%d" % d: float(d % 5) for d in range(q, q + 8)})
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp, "f.json")
            path.write_text(json.dumps(data))
            for args, options in [((), {}), (("-m", "AP,nDCG@3", "--depth", "5"), {"depth": 5}),
                                  (("-m", "R@2", "--ties", "--ci", "--seed", "3"), {"ties": True, "ci": True, "seed": 3}),
                                  (("-m", "RR", "--chunk-separator", "#"), {"chunk_separator": "#"})]:
                with self.subTest(args=args):
                    measures = args[1] if args else None
                    expected = json.loads(cli(path, *args)[1] if args else cli(path, "-m", "R@3,RR@3")[1])
                    self.assertEqual(rre.score_run(data["qrels"], data["runs"], measures, **options),
                                     without_inputs(expected))

    def test_compare_runs_equals_the_cli_and_mutates_nothing(self):
        qrels = fixture({})["qrels"]
        saved = json.dumps([qrels, BASE_RUNS, CAND_RUNS])
        with tempfile.TemporaryDirectory() as tmp:
            base, cand = Path(tmp, "b.json"), Path(tmp, "c.json")
            base.write_text(json.dumps(fixture(BASE_RUNS)))
            cand.write_text(json.dumps(fixture(CAND_RUNS)))
            status, out, _ = cli(cand, "--baseline", base, "-m", "R@2,RR", "--max-query-drop", "0.5")
        result = rre.compare_runs(qrels, BASE_RUNS, CAND_RUNS, ["R@2", "RR"], max_query_drop=0.5)
        self.assertEqual((status, result), (1, without_inputs(json.loads(out))))
        self.assertTrue(result["breaches"])
        self.assertEqual(json.dumps([qrels, BASE_RUNS, CAND_RUNS]), saved)

    def test_bad_options_and_data(self):
        for options in ({"missing_run": "ignore"}, {"depth": 0}, {"ties": 1}, {"max_mean_drop": -0.1},
                        {"relevance_level": -1}, {"chunk_separator": ""}, {"permutations": 0},
                        {"max_query_drop": float("nan")}, {"seed": 1.5}, {"duplicates": "last"}):
            with self.subTest(options=options), self.assertRaises(rre.EvalError):
                rre.compare_runs({"q1": ["d1"]}, {"q1": ["d1"]}, {"q1": ["d1"]}, **options)
        self.assertEqual(rre.compare_runs({"q1": ["d1"]}, {"q1": ["d1"]}, {"q1": ["d2"]}, "RR", permutations=1)
                         # one query changed: enumerated, whatever the draws
                         ["comparison"]["RR"]["p_value"], 1.0)
        for options in ({"judged_too": True}, {"max_mean_drop": 0.1}, {"permutations": 10}):
            # score_run has no gate
            with self.subTest(options=options), self.assertRaises(TypeError):
                rre.score_run({"q1": ["d1"]}, {"q1": ["d1"]}, **options)
        with self.assertRaisesRegex(rre.EvalError, "--max-mean-drop needs --baseline"):
            rre.score_runs({"q1": ["d1"]}, {"a": {"q1": ["d1"]}}, max_mean_drop=0.1)
        with self.assertRaisesRegex(rre.EvalError, "run.q1.d1: query 'q1': score"):
            rre.score_run({"q1": ["d1"]}, {"q1": {"d1": "high"}})

    def test_every_keyword_list_follows_the_options_table(self):
        """Each option but the outputs reaches the library, as a keyword of the calls it concerns
        (deleting power from score_runs once passed every test)."""
        elsewhere = {"fixture", "qrels", "run", "baseline", "measure", "k", "fields", "replicate", "stage",
                     "baseline_stage", "candidate_qrels"}
        comparing = {name for name, gate in rre.GATES.items() if gate.needs} | {"permutations",
                                                                                "baseline_qrels"}
        several = {"pairwise"}
        # the rest: arguments
        wanted = {o.name for o in rre.OPTIONS if o.stage != "output"} - elsewhere
        for function, expected in ((rre.score_run, wanted - comparing - several | {"stages"}),
                                   (rre.compare_runs, wanted - several | {"replicates", "stages", "baseline_stages"}),
                                   (rre.score_runs, wanted | {"replicates", "baseline", "stages",
                                                              "baseline_stages", "candidate_qrels"})):
            keywords = {p.name for p in inspect.signature(function).parameters.values()
                        if p.kind == p.KEYWORD_ONLY}
            self.assertEqual(keywords, expected, function.__name__)

    @unittest.skipUnless(hasattr(os, "mkfifo"), "no named pipes here")
    def test_a_named_pipe_read_by_two_calls_is_read_anew(self):
        with tempfile.TemporaryDirectory() as folder:
            fifo = Path(folder, "run.fifo")
            os.mkfifo(fifo)
            for line in ("q1 Q0 a 1 1 tagA\n", "q1 Q0 b 1 1 tagB\n"):  # one writer a call
                writer = threading.Thread(target=fifo.write_text, args=(line,), daemon=True)
                writer.start()
                self.assertEqual(rre.read_run(fifo), {"q1": {line.split()[2]: 1.0}})
                writer.join(5)
            self.assertEqual(rre.KEPT, {})  # nothing of the pipe outlives its call

    def test_a_value_is_read_by_the_reader_of_its_role_as_a_file_is(self):
        """One loader: load reads a library call's Value with its role's reader, folded as a file
        is, and names it as the call's keyword."""
        opts = rre.Reading(separator="#")
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder, "q.json")
            path.write_text(json.dumps({"q1": {"d1#1": 2, "d1#2": 2, "d2": 0}}))
            for role in ("labels", "evidence", "no_answer", "groups", "clusters"):
                self.assertTrue(callable(rre.READERS[role].value), role)
            self.assertEqual(rre.load(rre.Value("qrels", {"q1": {"d1#1": 2, "d1#2": 2, "d2": 0}}),
                                      "labels", rre.Known(opts=opts)),
                             rre.load(str(path), "labels", rre.Known(opts=opts)))
        merged = rre.load(rre.Value("qrels", [{"q1": ["d1#1"]}, {"q2": ["d1#2"]}]), "labels",
                          rre.Known(opts=opts))
        self.assertEqual(merged, ({"q1": {"d1": 1}, "q2": {"d1": 1}}, {}))
        for value, message in (([{"q1": ["a#1"]}, {"q1": ["a#2"]}],
                                "^qrels\\[1\\]: query 'q1': document 'a' is labeled in "
                                "qrels\\[0\\] already"),
                               ({"q1": ["#1"]}, "^qrels: query 'q1': label '#1' is blank once cut")):
            with self.subTest(value=value), self.assertRaisesRegex(rre.EvalError, message):
                rre.load(rre.Value("qrels", value), "labels", rre.Known(opts=opts))

    def test_a_saved_result_for_a_candidate_is_refused_in_the_words_of_the_call(self):
        saved = rre.score_run({"q1": ["d1"]}, {"q1": ["d1"]}, "R@1")
        for call, message in ((lambda: rre.score_run({"q1": ["d1"]}, saved), "run: a saved result"),
                              (lambda: rre.score_runs({"q1": ["d1"]}, {"a": saved}),
                               "runs.a: a saved result")):
            with self.subTest(message=message), self.assertRaisesRegex(
                    rre.EvalError, "^%s stands for a baseline's run \\(baseline or replicates\\), "
                                   "not for a candidate's: score its run$" % message):
                call()
        self.assertEqual(rre.compare_runs({"q1": ["d1"]}, saved, {"q1": ["d1"]}, "R@1")
                         ["comparison"]["R@1"]["delta"], 0.0)


# --- Query groups, several runs, the plot, statistics at scale ---


class ReportFormatsTest(TempDirTestCase):
    """Markdown for a pull request, CSV for a spreadsheet, --summary for a CI page."""

    def test_the_lost_line_ends_with_the_queries_when_none_is_marked_unjudged(self):
        qrels = self.write("q.txt", "q1 0 d1 1\nq1 0 d2 1\nq2 0 d3 1\nq3 0 d4 1\n")
        base = self.write("b.txt", "q1 Q0 d1 1 3 b\nq1 Q0 d2 2 2 b\nq2 Q0 d3 1 3 b\n"
                                   "q3 Q0 d4 1 3 b\n")
        cand = self.write("c.txt", "q1 Q0 d9 1 3 c\nq1 Q0 d1 2 2 c\nq2 Q0 d3 1 3 c\n"
                                   "q3 Q0 d8 1 3 c\nq3 Q0 d4 2 2 c\n")
        status, out, err = cli("--qrels", qrels, "--run", cand, "--baseline", base, "-m", "R@1",
                               "--format", "table")
        self.assertIn("\nlost (a hit before, nothing relevant now) by R@1: q1, q3\n", out)

    def compare(self, *args, base=BASE_RUNS, cand=CAND_RUNS):
        b = self.write("base.json", fixture(base))
        c = self.write("cand.json", fixture(cand))
        return cli(c, "--baseline", b, "-m", "R@2,RR", *args)

    def test_the_table_lists_what_was_skipped(self):
        skipping = self.write("sk.json", {"qrels": {"q1": ["d1"], "q2": ["d2"]}, "runs": {"q1": ["d1"]}})
        out = cli(skipping, "--missing-run", "skip", "--format", "table")[1]
        self.assertEqual(out.splitlines()[-1], "skipped (missing run): 1: 'q2'")

    def test_the_table_gives_each_mean_its_interval_and_a_sum_none(self):
        status, out, err = cli(FIXTURE, "-m", "R@3,NumRet", "--ci", "--format", "table")
        self.assertEqual(out.splitlines()[2].split(), ["95%", "CI", "[0.0000,", "1.0000]"])
        self.assertIn("--ci draws no interval for NumRet", err)

    def test_markdown_has_per_query_rows_only_when_asked(self):
        plain, rows = (cli(FIXTURE, "-m", "R@3", "--format", "markdown", *more)[1] for more in ((), ("--per-query",)))
        self.assertNotIn("<details>", plain)
        self.assertIn("<details><summary>Per query</summary>", rows)

    def test_markdown_tables_keep_their_shape_with_hostile_ids(self):
        odd = {"q|1*": ["d|1", "d2"], "q_2`": ["d3"], "q3": ["d4"]}
        base = {"q|1*": ["d|1", "d2", "d9"], "q_2`": ["d8", "d3", "d9"], "q3": ["d4", "d9", "d10"]}
        cand = {"q|1*": ["d9", "d2", "d|1"], "q_2`": ["d3", "d8", "d9"], "q3": ["d8", "d9", "d10"]}
        b = self.write("b.json", fixture(base, odd))
        c = self.write("c.json", fixture(cand, odd))
        status, out, _ = cli(c, "--baseline", b, "-m", "R@2,RR", "--max-query-drop", "0.5",
                             "--format", "markdown", "--per-query")
        self.assertEqual(status, 1)
        # breaches first
        self.assertLess(out.index("gate breach"), out.index("| measure | baseline"))
        rows = table_rows(out)
        self.assertGreater(len(rows), 10)
        width = None
        for line in out.splitlines():  # every row of a table has its header's column count
            if line.startswith("|"):
                width = width or len(table_rows(line)[0])
                self.assertEqual(len(table_rows(line)[0]), width, line)
            else:
                width = None
        self.assertIn(r"q&#124;1\*", out)
        self.assertNotIn("q|1*", out)
        for fragment in ("lost", "Worst regressed", "p (Holm)", "unchanged", "Per query"):
            self.assertIn(fragment, out)

    def test_csv_has_a_row_per_query_equal_to_the_json(self):
        path = self.write("f.json", json_fixture())
        status, out, _ = cli(path, "-m", "AP,nDCG@3,NumRet", "--format", "csv")
        result = json.loads(cli(path, "-m", "AP,nDCG@3,NumRet")[1])
        rows = list(csv.DictReader(io.StringIO(out)))
        self.assertEqual((status, [r["query"] for r in rows]), (0, list(result["per_query"])))
        for row in rows:
            self.assertEqual({n: float(row[n]) for n in ("AP", "nDCG@3", "NumRet")}, result["per_query"][row["query"]])
        compared = list(csv.DictReader(io.StringIO(self.compare("--format", "csv")[1])))
        full = json.loads(self.compare()[1])
        self.assertEqual(len(compared), 3)
        for row in compared:
            q = row["query"]
            self.assertEqual((float(row["RR baseline"]), float(row["RR candidate"])),
                             (full["baseline_per_query"][q]["RR"], full["per_query"][q]["RR"]))
            self.assertEqual(float(row["R@2 delta"]), full["comparison"]["R@2"]["improved"].get(q)
                             or full["comparison"]["R@2"]["regressed"].get(q) or 0.0)

    def test_summary_appends_one_report_per_run_whatever_stdout_prints(self):
        summary = self.write("summary.md", "# earlier step\n")
        status, out, _ = self.compare("--max-query-drop", "0.5", "--summary", summary)
        self.assertEqual((status, json.loads(out)["queries"]), (1, 3))  # the gate still decides
        self.compare("--summary", summary, "--format", "table")
        text = summary.read_text()
        self.assertTrue(text.startswith("# earlier step\n"))
        self.assertEqual(text.count("### Retrieval evaluation"), 2)
        self.assertEqual(text.count("gate breach"), 1)

    def test_summary_to_a_bad_place_is_refused_before_any_work(self):
        for target in (self.tmp, self.tmp / "missing" / "s.md"):
            with self.subTest(target=target):
                rejected(self, *self.compare("--summary", target), "--summary", "cannot be written")
        summary = self.write("s.md", "")
        rejected(self, *cli(self.write("bad.json", b"{"), "--summary", summary), "invalid JSON")
        self.assertEqual(summary.read_text(), "")  # nothing appended on an error

    def test_markdown_lists_each_measures_worst_drops_largest_first_and_counts_breaches(self):
        qrels = {"q%02d" % i: ["d"] for i in range(14)}
        base = {q: ["d"] for q in qrels}
        # q13 drops most
        cand = {q: ["x%d" % j for j in range(i + 1)] + ["d"] for i, q in enumerate(qrels)}
        result = unrendered(rre.compare_runs, qrels, base, cand, "RR,R@3", max_mean_drop=0.1, max_query_drop=0.01)
        text = rre.format_markdown(result)
        # two means, 14 and 12 queries: 5 of each shown
        self.assertIn("**28 gate breaches**", text)
        worst = [line.split("|")[1:3] for line in text.splitlines() if re.match(r"\| R\S* \| q", line)]
        self.assertEqual(worst, [[" RR ", " q%02d " % i] for i in range(13, 8, -1)]
                         # each measure has its own
                         + [[" R@3 ", " q%02d " % i] for i in range(2, 14)][:5])
        self.assertIn("shown, of the regressed queries: RR 5 of 14, R@3 5 of 12", text)
        self.assertIn("- RR: 9 more queries dropped by more than --max-query-drop 0.01 (all of them in the JSON "
                      "output)", text)
        self.assertEqual(len(result["breaches"]), 2 + 14 + 12)  # JSON keeps every breach
        status, out, err = cli("--qrels", self.write("q.json", qrels), "--run", self.write("c.json", cand), "--baseline",
                               self.write("b.json", base), "-m", "RR", "--max-query-drop", "0.01", "--format", "csv")
        self.assertEqual((status, len(err.splitlines())), (1, 6), err)  # stderr too: 5 and a count

    def test_report_caps_count_exactly(self):
        qrels = {"q%d" % i: ["d"] for i in range(6)}
        base = {q: ["d"] for q in qrels}
        # five queries drop, by 0.5 (RR) and 1 (R@1)
        cand = dict({q: ["x", "d"] for q in qrels}, q5=["d"])
        groups = {"g%d" % i: ["q%d" % i] for i in range(6)}
        result = unrendered(rre.compare_runs, qrels, base, cand, "RR,R@1,NumRel", max_query_drop=0.1,
                            groups=groups, max_group_drop=0.1)
        table = rre.format_table(result)
        self.assertNotIn("more queries dropped", table)  # five of five: no count line
        # NumRel lost nothing
        self.assertIn("shown, of the regressed queries: RR all 5, R@1 all 5\n", table)
        # every group's
        self.assertEqual(len([line for line in table.splitlines() if "group 'g" in line]), 10)
        single = unrendered(rre.compare_runs, {"q1": ["d"]}, {"q1": ["d"]}, {"q1": ["x", "d"]}, "RR", max_mean_drop=0.1)
        self.assertIn("**1 gate breach**\n", rre.format_markdown(single))

    def test_report_parts_appear_only_when_they_have_something_to_say(self):
        same = rre.compare_runs({"q1": ["d1"]}, {"q1": ["d1"]}, {"q1": ["d1"]}, "RR")
        self.assertNotIn("worst regressed", rre.format_table(same))
        alone = rre.score_run(GROUP_QRELS, CAND_GROUP_RUN, "RR", groups=GROUPS)
        self.assertNotIn("change from the baseline", rre.format_table(alone))
        self.assertIn("change from the baseline", rre.format_table(rre.compare_runs(
            GROUP_QRELS, BASE_GROUP_RUN, CAND_GROUP_RUN, "RR", groups=GROUPS)))
        big = {"all": list(GROUP_QRELS)}
        runs = {"a": CAND_GROUP_RUN, "b": {q: r for q, r in CAND_GROUP_RUN.items() if q in ("q1", "q2")}}
        several = rre.score_runs(GROUP_QRELS, runs, "RR", groups=big, missing_run="skip")["runs"]
        self.assertEqual([r["groups"]["all"]["small"] for r in several.values()], [False, True])
        for fmt in ("table", "markdown"):  # the second run's (few) is explained too
            self.assertIn("(few): fewer than 5 queries", rre.format_runs(several, fmt))

    def test_markdown_lists_notes_and_leaves_breaches_to_their_block(self):
        result = unrendered(rre.compare_runs, {"q1": ["d1"]}, {"q1": ["d1"], "q3": ["z"]},
                            {"q1": ["x"], "q3": ["z"]}, "RR", unlabeled="skip", max_mean_drop=0.1)
        text = rre.format_markdown(result)
        # in the breaches block, not again as a note
        self.assertEqual(text.count("RR mean: 1.0000"), 1)
        notes = [line for line in text.splitlines() if "skipped" in line or "warning" in line]
        self.assertEqual(notes, ["- skipped 1 query: 1 unlabeled ('q3')",
                                 "- the baseline skipped 1 query: 1 unlabeled ('q3')",
                                 "- warning: no query retrieved any labeled document (ranked IDs "
                                 "such as 'x'): do the run and the labels use the same IDs?"])

    def test_long_lists_are_cut_in_reports(self):
        qrels = {"q%02d" % i: ["a"] for i in range(23)}
        tied = rre.score_run(qrels, {q: {"a": 1.0, "b": 1.0} for q in qrels}, "R@1", ties=True)
        self.assertIn("* depends on the order of tied scores in 23 queries: 'q00', 'q01', 'q02', 'q03', 'q04', 'q05', "
                      "'q06', 'q07', 'q08', 'q09' and 13 more", rre.format_table(tied))
        lost = rre.compare_runs(qrels, {q: ["a"] for q in qrels}, {q: ["b"] for q in qrels}, "R@1")
        self.assertIn("'q19' and 3 more", rre.format_markdown(lost))
        self.assertNotIn("'q20'", rre.format_markdown(lost).split("**lost**")[1].split("\n")[0])

    def test_a_write_that_fails_after_a_failed_gate_exits_3(self):
        class Full(io.StringIO):
            def write(self, text):
                raise OSError(28, "No space left on device")
        fixture = self.write("f.json", {"qrels": {"q1": ["d1"]}, "runs": {"q1": ["d2"]}})
        base = self.write("b.json", {"q1": ["d1"]})
        with contextlib.redirect_stdout(Full()), contextlib.redirect_stderr(io.StringIO()) as err:
            status = rre.main([str(fixture), "--baseline", str(base), "-m", "R@1", "--max-mean-drop", "0.1"])
        self.assertEqual(status, 3, err.getvalue())
        self.assertIn("cannot write the output: No space left on device", err.getvalue())

    def test_a_star_only_below_five_percent(self):
        cell = {"candidate": 0.5, "delta": 0.1}
        self.assertEqual([rre._change_cell(dict(cell, p_holm=p)) for p in (0.0499, 0.05)],
                         ["0.5000 (+0.1000)*", "0.5000 (+0.1000)"])

    def test_report_details(self):
        result = rre.score_run({"q1": ["d1"], "q2": ["d2"], "q3": ["d3"]},
                               {"q1": {"d1": 1.0, "x": 1.0}, "q2": ["d2"], "q3": ["x", "y", "d3"]}, "RR", ties=True)
        self.assertIn("| RR | 0.6111 | 0.6111 | 0.7778 |", rre.format_markdown(result))
        dedup = rre.score_run({"q1": ["d1"]}, {"q1": ["d1", "d1"]}, "RR", duplicates="first")
        self.assertIn(rre.Note("note", "--duplicates first removed 1 repeated document from "
                                       "1 query ('q1')"),
                      rre.notes(dedup))
        compared = rre.compare_runs({"q1": ["d1"]}, {"q1": ["d1"]}, {"q1": ["x", "d1"]}, "RR")
        self.assertIn("| --- | --- | ---: | ---: | ---: |", rre.format_markdown(compared).split("Worst regressed")[1])
        path = self.tmp / "summary.md"
        path.write_bytes(b"ab\n")
        self.assertTrue(rre._append(str(path), "text"))
        self.assertEqual(path.read_bytes(), b"ab\ntext\n\n")
        if os.path.exists("/dev/full"):
            with contextlib.redirect_stderr(io.StringIO()) as err:
                self.assertFalse(rre._append("/dev/full", "text"))
            self.assertEqual(err.getvalue(), "rag_retrieval_eval: error: cannot append the "
                                             "summary to /dev/full: No space left on device\n")
        same = rre.compare_runs({"q1": ["d1"], "q2": ["d2"]}, {"q1": ["d1"], "q2": ["d2"]}, {"q1": ["d1"], "q2": ["d2"]},
                                "RR")
        # every query: the full bar
        self.assertIn("  unchanged         2 " + "#" * 40 + "\n", rre.format_table(same))


class ResultRecordsTest(TempDirTestCase):
    """A general result is a record (Result): each member made once, by the stage that knows it,
    in the order the JSON output gives them, and read as fields by the reports."""

    def rich(self, **options):
        replicate = dict(BASE_GROUP_RUN, q0=BASE_GROUP_RUN["q1"])
        return rre.compare_runs(GROUP_QRELS, BASE_GROUP_RUN, CAND_GROUP_RUN, "RR,R@1,NumRet",
                                groups=GROUPS, max_group_drop=0.1, max_mean_drop=0.1,
                                max_query_drop=0.2, replicates=[replicate], **options)

    def assert_in_member_order(self, result):
        members = rre.Result.MEMBERS
        self.assertTrue(set(result) <= set(members), set(result) - set(members))
        self.assertEqual(list(result), sorted(result, key=members.index))

    def test_every_member_is_declared_and_comes_in_the_declared_order(self):
        results = [self.rich(ci=True, power=True, explain=True, unjudged_bounds=True,
                             duplicates="first", ties=True),
                   self.rich(min_mean={"RR": 0.9}, min_query={"R@1": 0.5}),
                   rre.score_run({"q1": ["d1"], "q2": []}, {"q1": ["d1"], "q2": ["x"]},
                                 "RR,Abstain", no_answer=["q2"], clusters={"c": ["q1", "q2"]},
                                 ci=True),
                   rre.score_run(GROUP_QRELS, CAND_GROUP_RUN, "R@1", chunk_separator="#",
                                 ties=True, groups=GROUPS)]
        for result in results:
            with self.subTest(keys=list(result)):
                self.assertIsInstance(result, rre.Result)
                self.assert_in_member_order(result)
        self.assertTrue({"comparison", "groups", "power", "explain", "unjudged", "noise", "ties",
                         "ci95", "floors", "deduplicated", "clusters", "folded",
                         "no_answer_queries"} <= set().union(*results))
        status, out, err = cli("--qrels", self.write("q.json", GROUP_QRELS), "--run",
                               self.write("r.json", CAND_GROUP_RUN), "--baseline",
                               self.write("b.json", BASE_GROUP_RUN), "-m", "RR", "--ci")
        self.assertEqual(status, 0, err)
        self.assertEqual(list(json.loads(out)), [k for k in results[0] if k in json.loads(out)])

    def test_a_member_not_asked_for_reads_as_empty_and_an_unknown_field_is_refused(self):
        result = rre.score_run({"q1": ["d1"]}, {"q1": ["x", "d1"]}, "RR")
        self.assertEqual((result.queries, result.measures, result.ties, result.comparison),
                         (1, {"RR": 0.5}, {}, {}))
        self.assertNotIn("ties", result)  # reading a field adds no member
        with self.assertRaises(AttributeError):
            result.mesures
        import pickle
        copied = pickle.loads(pickle.dumps(result))
        self.assertEqual((type(copied), copied), (rre.Result, result))
        self.assertEqual("".join(rre.format_json(result)), json.dumps(dict(result), indent=2))

    def test_a_stage_returns_its_result_and_leaves_the_one_it_was_given(self):
        qrels, base = {"q1": {"d1": 1}}, {"q1": ["d1", "d2"], "q9": ["d5"]}
        before = rre.score_run(qrels, base, "RR", unlabeled="skip")
        kept = json.dumps(before)
        after = rre.compare_runs(qrels, base, {"q1": ["d2", "d1"], "q9": ["d5"]}, "RR,Overlap@2",
                                 unlabeled="skip", missing_run="skip")
        self.assertEqual(json.dumps(before), kept)
        self.assertEqual(after["agreement"], {"queries": 2, "unscored": 1})
        self.assertEqual(list(after["per_query"]), ["q1", "q9"])  # the unlabeled after the others

    def test_the_manifest_names_the_files_where_it_is_made(self):
        qrels, run = self.write("q.json", {"q1": ["d1"]}), self.write("r.json", {"q1": ["d1"]})
        made = json.loads(cli("--qrels", qrels, "--run", run, "-m", "RR")[1])["manifest"]
        self.assertEqual(made["inputs"], {"qrels": [str(qrels)], "run": [str(run)]})
        self.assertEqual(list(made)[-1], "inputs")
        other = self.write("s.json", {"q1": ["d2"]})
        several = json.loads(cli("--qrels", qrels, "--run", run, "--run", other, "-m", "RR")[1])
        self.assertEqual([r["manifest"]["inputs"]["run"] for r in several["runs"].values()],
                         [[str(run)], [str(other)]])
        self.assertEqual(rre.score_run({"q1": ["d1"]}, {"q1": ["d1"]}, "RR")["manifest"]["inputs"],
                         {})

    def test_the_reports_read_plain_fields_of_a_result(self):
        result = unrendered(self.rich, explain=True)
        table, markdown = rre.format_table(result), rre.format_markdown(result)
        self.assertIn("groups:", table)
        self.assertIn("why it missed, within the top 1:", table)
        self.assertIn("Groups:", markdown)
        self.assertIn("noise among the baseline and 1 replicate", "\n".join(
            note.text for note in rre.notes(result)))


class SeveralRunsTest(TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.qrels = self.write("qrels.json", GROUP_QRELS)
        self.base = self.write("base.json", BASE_GROUP_RUN)
        self.paths = [self.write(name, run) for name, run in three_runs().items()]
        self.args = ["--qrels", self.qrels] + [a for p in self.paths for a in ("--run", p)]

    def test_two_runs_are_one_family_too(self):
        runs = json.loads(cli("--qrels", self.qrels, "--run", self.paths[0], "--run", self.paths[1], "--baseline",
                              self.base, "-m", "RR,R@1")[1])["runs"]
        rows = [r["comparison"][name] for r in runs.values() for name in ("RR", "R@1")]
        self.assertEqual([r["p_holm"] for r in rows], rre.holm([r["p_value"] for r in rows]))
        pvalues = [r["p_value"] for r in rows]  # a family of two runs is not two families of one
        self.assertNotEqual(rre.holm(pvalues), rre.holm(pvalues[:2]) + rre.holm(pvalues[2:]))

    def test_three_runs_give_the_numbers_of_three_calls_with_holm_over_runs_and_measures(self):
        status, out, err = cli(*self.args, "--baseline", self.base, "-m", "RR,R@1", "--ci", "--ties")
        self.assertEqual(status, 0, err)
        self.assertEqual(out, json.dumps(json.loads(out), indent=2) + "\n")
        runs = json.loads(out)["runs"]
        self.assertEqual(list(runs), [str(p) for p in self.paths])
        rows = []
        for path in self.paths:
            alone = json.loads(cli("--qrels", self.qrels, "--run", path, "--baseline", self.base,
                                   "-m", "RR,R@1", "--ci", "--ties")[1])
            together = runs[str(path)]
            for name in ("RR", "R@1"):
                rows.append(dict(together["comparison"][name]))
                self.assertEqual(dict(together["comparison"][name], p_holm=None), dict(alone["comparison"][name], p_holm=None))
                together["comparison"][name]["p_holm"] = alone["comparison"][name]["p_holm"]
            self.assertEqual(together, alone)
        self.assertEqual([r["p_holm"] for r in rows], rre.holm([r["p_value"] for r in rows]))

    def test_the_library_call_for_several_runs_answers_as_the_cli(self):
        options = ("-m", "RR,R@1", "--groups", self.write("g.json", GROUPS), "--max-group-drop", "0.1")
        status, out, _ = cli(*self.args, "--baseline", self.base, *options)
        runs = {str(p): run for p, run in zip(self.paths, three_runs().values())}
        result = rre.score_runs(GROUP_QRELS, runs, ["RR", "R@1"], baseline=BASE_GROUP_RUN, groups=GROUPS,
                                max_group_drop=0.1)
        self.assertEqual((status, result), (1, without_inputs(json.loads(out))))
        self.assertEqual(rre.score_runs(GROUP_QRELS, runs, "RR"), without_inputs(json.loads(cli(*self.args, "-m", "RR")[1])))
        for bad, message in (([], "runs: expected an object"), ({}, "runs: no run to score"),
                             ({"a": {"q1": 5}}, "runs.a.q1: query 'q1'"), ({5: {}}, "runs: run name must be a string"),
                             ({"": {}}, "runs: run name '' is blank")):
            with self.subTest(bad=bad), self.assertRaisesRegex(rre.EvalError, re.escape(message)):
                rre.score_runs(GROUP_QRELS, bad, "RR")

    def test_a_gate_failing_for_any_run_exits_1_and_names_the_run(self):
        status, out, err = cli(*self.args, "--baseline", self.base, "-m", "RR", "--max-query-drop", "0.9")
        self.assertEqual(status, 1)
        # q0, q3: 1 -> 0
        self.assertEqual([len(r["breaches"]) for r in json.loads(out)["runs"].values()], [0, 0, 2])
        self.assertEqual(err.count("%s: gate failed: RR query" % self.paths[2]), 2, err)
        self.assertEqual(cli(*self.args[:-2], "--baseline", self.base, "-m", "RR", "--max-query-drop", "0.9")[0], 0)

    def test_reports_put_a_row_per_run(self):
        _, table, _ = cli(*self.args, "--baseline", self.base, "-m", "RR,R@1", "--format", "table")
        lines = table.splitlines()
        self.assertEqual(lines[0].split(), ["run", "queries", "RR", "R@1"])
        self.assertEqual(lines[1].split(), ["baseline", "12", "0.6111", "0.3333"])
        self.assertEqual(lines[2].split(), [str(self.paths[0]), "12", "1.0000", "(+0.3889)*", "1.0000", "(+0.6667)*"])
        self.assertEqual(lines[5:], ["(+/-x): change from the baseline; *: p < 0.05 after Holm's correction over runs "
                                     # every query has an answer: no line on those without
                                     "x measures"])
        # b: (11/6 * 3 + 3/2) / 12; c: 8 * 1/2 / 12
        _, markdown, _ = cli(*self.args, "-m", "RR", "--format", "markdown")
        self.assertEqual([[cell.strip() for cell in row] for row in table_rows(markdown)[2:]],
                         [[rre._md(p), "12", mean] for p, mean in zip(map(str, self.paths), ("1.0000", "0.5833", "0.3333"))])
        _, text, _ = cli(*self.args, "--baseline", self.base, "-m", "RR", "--format", "csv")
        header = next(csv.reader(io.StringIO(text)))
        self.assertEqual(header, ["query", "RR baseline"] + [c for p in self.paths for c in ("RR %s" % p, "RR %s delta" % p)])

    def test_the_same_file_twice_and_trec_output_are_refused(self):
        rejected(self, *cli(*self.args, "--run", self.tmp / "." / "a.json"), "name the same file")
        rejected(self, *cli(*self.args, "--format", "trec"), "--format trec holds one run")
        rejected(self, *cli(*self.args, "--format", "table", "--per-query"), "--per-query holds one run")

    def test_both_paths_agree_errors_included_the_first_in_the_order_given(self):
        bad = self.write("bad.json", {"q1": ["d1", "d1"]})
        for args in (self.args + ["--baseline", self.base], self.args + ["--baseline", bad],
                     ["--qrels", self.qrels, "--run", bad, "--run", self.paths[0], "--baseline", bad]):
            with self.subTest(args=args):
                fast, reference = both_paths(*args, "-m", "RR", "--missing-run", "zero", "--unlabeled", "skip")
                self.assertEqual(fast, reference)
        self.assertIn("bad.json: q1[1]", both_paths(*self.args[:2], "--run", self.paths[0], "--run", bad)[0][2])

    def test_reports_of_several_runs_with_groups_and_a_baseline(self):
        qrels, base = self.write("qrels.json", GROUP_QRELS), self.write("base.json", BASE_GROUP_RUN)
        runs = [self.write(name, run) for name, run in three_runs().items()]
        args = ["--qrels", qrels, *[a for p in runs for a in ("--run", p)], "--baseline", base, "-m", "RR",
                "--groups", self.write("g.json", GROUPS)]
        _, table, _ = cli(*args, "--format", "table")
        self.assertEqual(table.count("groups of "), 3)
        self.assertIn("(few): fewer than 5 queries", table)
        _, text, _ = cli(*args, "--format", "csv")
        rows = list(csv.DictReader(io.StringIO(text)))
        c = "RR %s" % runs[2]
        self.assertEqual([(row["query"], row[c], row[c + " delta"]) for row in rows[:5]],
                         [("q0", "0.0", "-1.0"), ("q1", "0.0", "-0.5"), ("q2", "0.0", "-0.3333333333333333"),
                          ("q3", "0.0", "-1.0"), ("q4", "0.5", "0.0")])


    def test_the_notes_on_the_baseline_come_once_and_each_runs_own_under_its_name(self):
        qrels = self.write("three.json", {"q1": ["d1"], "q2": ["d2"], "q3": ["d3"]})
        # a repeat, q3 missing
        base = self.write("base3.json", {"q1": ["d1", "d1", "x"], "q2": ["x", "d2"]})
        a = self.write("a.json", {"q1": ["d1"], "q2": ["d2"], "q3": ["x", "d3"]})
        b = self.write("b.json", {"q1": ["x", "d1"], "q2": ["d2"], "q3": ["d3", "d3"]})
        args = ["--qrels", qrels, "--baseline", base, "--missing-run", "zero", "--duplicates", "first", "-m", "RR"]
        on_base = ["note: the baseline has no ranking for 1 query ('q3'): scored as empty",
                   "note: --duplicates first removed 1 repeated document from the baseline's "
                   "1 query ('q1')"]
        own = "note: --duplicates first removed 1 repeated document from 1 query ('q3')"
        err = cli("--run", a, "--run", b, *args)[2].splitlines()
        self.assertEqual(err, ["rag_retrieval_eval: " + line for line in on_base] +
                         ["rag_retrieval_eval: %s: %s" % (b, own)])
        err = cli("--run", b, *args)[2].splitlines()  # one run: the baseline's notes, then its own
        self.assertEqual(err, ["rag_retrieval_eval: " + line for line in on_base + [own]])


class PapersTest(TempDirTestCase):
    """--format latex and --pairwise (issue 51, item 4): three runs of eight queries, one relevant
    document each, computed by hand: low ranks it 2nd everywhere, top 1st, mid 1st only in q1.
    RR: low 0.5, top 1.0, mid (1 + 7 x 0.5) / 8 = 0.5625; nDCG (binary gains) at 2: 1/log2(3) =
    0.6309 at rank 2, mid (1 + 7 x 0.6309) / 8 = 0.6771; R@2 is 1.0 for all.  Every changed
    query changes the same way, so the exact sign-flip p is 2 / 2**n: top vs low 2/256
    (n 8), mid vs low 1.0 (one change: both signs reach it), mid vs top 2/128 (n 7); Holm over
    the three pairs: 3 x 0.0078125 = 0.0234375, max(that, 2 x 0.015625) = 0.03125, 1.0."""
    MEASURES = "RR,nDCG(gains={0:0,1:1})@2,R@2"
    HOLM = {"RR": [0.0234375, 1.0, 0.03125], "R@2": [1.0, 1.0, 1.0]}

    def setUp(self):
        super().setUp()
        runs = {"low_1.json": lambda i: ["x", "d%d" % i], "top&2.json": lambda i: ["d%d" % i, "x"],
                "mid{3}.json": lambda i: ["d%d" % i, "x"] if i == 1 else ["x", "d%d" % i]}
        self.runs = {name: {"q%d" % i: ranking(i) for i in range(1, 9)} for name, ranking in runs.items()}
        self.qrels = {"q%d" % i: ["d%d" % i] for i in range(1, 9)}
        self.paths = [self.write(name, run) for name, run in self.runs.items()]
        self.args = ["--qrels", self.write("qrels.json", self.qrels), "-m", self.MEASURES]
        self.args += [a for p in self.paths for a in ("--run", p)]

    def test_latex_marks_the_best_in_bold_and_the_runs_each_is_significantly_higher_than(self):
        status, out, err = cli(*self.args, "--format", "latex")
        self.assertEqual((status, err), (0, ""))
        self.assertEqual(out.replace(str(self.tmp).replace("_", r"\_"), "TMP"), r"""% in the preamble: \usepackage{booktabs}
\begin{table}[ht]
\centering
\caption{Each measure over 8 queries, the highest in bold. A superscript names the runs a
value is significantly higher than: a paired two-sided randomization (sign-flip) test, exact up
to 16 changed queries, else of 10000 draws (seed 0), with Holm's correction over the 3 pairs of runs
of each measure, $p < 0.05$.}
\label{tab:results}
\begin{tabular}{clccc}
\toprule
\# & Run & RR & nDCG(gains=\{0:0,1:1\})@2 & R@2 \\
\midrule
a & TMP/low\_1.json & 0.5000\hphantom{$^{bc}$} & 0.6309\hphantom{$^{bc}$} & \textbf{1.0000}\hphantom{$^{bc}$} \\
b & TMP/top\&2.json & \textbf{1.0000}$^{ac}$ & \textbf{1.0000}$^{ac}$ & \textbf{1.0000}\hphantom{$^{ac}$} \\
c & TMP/mid\{3\}.json & 0.5625\hphantom{$^{ab}$} & 0.6771\hphantom{$^{ab}$} & \textbf{1.0000}\hphantom{$^{ab}$} \\
\bottomrule
\end{tabular}
\end{table}
""")
        # the seed and the draws it names are the options'
        self.assertIn("else of 99 draws (seed 7), with Holm's correction over the 1 pair of runs",
                      cli(*self.args[:8], "--format", "latex", "--permutations", "99", "--seed", "7")[1])
        # a measure only a floor asked for joins no Holm family: R@1 is 1 against 0 in every
        # query of top and low, and marks nothing
        out = cli(*self.args, "--format", "latex", "--min-mean", "R@1=0")[1]
        self.assertIn(r"\textbf{1.0000}$^{ac}$ & \textbf{1.0000}\hphantom{$^{ac}$} & \textbf{1.0000}\hphantom{$^{ac}$} \\", out)
        # one run: nothing compared, nothing marked
        status, out, _ = cli(*self.args[:6], "--format", "latex")
        self.assertIn(r"\caption{Each measure over 8 queries, the highest in bold.}" + "\n", out)
        self.assertIn(r"low\_1.json & \textbf{0.5000} & \textbf{0.6309} & \textbf{1.0000} \\" + "\n", out)

    def test_a_p_of_0_05_is_not_below_0_05(self):
        # 17 queries all higher: drawn, and no draw of 19 reaches all 17 signs: p = 1 / 20
        qrels = self.write("q17.json", {"q%d" % i: ["d%d" % i] for i in range(17)})
        low, top = [self.write(name, {"q%d" % i: ranking(i) for i in range(17)}) for name, ranking in
                    (("l.json", lambda i: ["x", "d%d" % i]), ("t.json", lambda i: ["d%d" % i]))]
        args = ["--qrels", qrels, "--run", low, "--run", top, "-m", "RR", "--permutations", "19"]
        pair = json.loads(cli(*args, "--pairwise")[1])["pairs"][0]["comparison"]["RR"]
        self.assertEqual((pair["p_value"], pair["p_holm"]), (0.05, 0.05))
        self.assertIn(r"b & %s & \textbf{1.0000}\hphantom{$^{a}$} \\" % str(top).replace("_", r"\_"),
                      cli(*args, "--format", "latex")[1])

    def test_pairs_in_json_each_run_against_each_before_it_with_holm_over_the_pairs(self):
        status, out, err = cli(*self.args, "--pairwise")
        self.assertEqual((status, err), (0, ""))
        self.assertEqual(out, json.dumps(json.loads(out), indent=2) + "\n")
        result = json.loads(out)
        self.assertEqual(list(result), ["runs", "pairs"])
        names = [str(p) for p in self.paths]
        self.assertEqual([(p["baseline"], p["candidate"]) for p in result["pairs"]],
                         [(names[0], names[1]), (names[0], names[2]), (names[1], names[2])])
        rr = [p["comparison"]["RR"] for p in result["pairs"]]
        self.assertEqual([(c["delta"], c["p_value"]) for c in rr], [(0.5, 2 / 256), (0.0625, 1.0), (-0.4375, 2 / 128)])
        self.assertEqual(rr[2]["regressed"], {"q%d" % i: -0.5 for i in range(2, 9)})
        for name, holm in self.HOLM.items():
            self.assertEqual([p["comparison"][name]["p_holm"] for p in result["pairs"]], holm)
        # each pair's row is the comparison --baseline makes of the two, but for Holm's family
        alone = json.loads(cli(*self.args[:4], "--run", self.paths[2], "--baseline", self.paths[1])[1])
        self.assertEqual(dict(alone["comparison"]["RR"], p_holm=0.03125), rr[2])
        # without --pairwise, what several runs always printed
        plain = json.loads(cli(*self.args)[1])
        self.assertEqual(plain, {"runs": result["runs"]})

    def test_every_format_shows_the_pairs(self):
        label = lambda i: str(self.paths[i])
        table = cli(*self.args, "--pairwise", "--format", "table")[1]
        self.assertIn("\npairs:\n", table)
        # one header, then a row per pair and measure
        self.assertEqual(len(table.split("\npairs:\n")[1].splitlines()), 1 + 3 * 3 + 1)
        self.assertRegex(table, r"\n  %s vs %s +RR +1\.0000 +0\.5625 +-0\.4375 +\[-0\.5000, -0\.3125\] +0\.0156 +0\.0312\n"
                         % (re.escape(label(2)), re.escape(label(1))))
        self.assertIn("Holm's correction over the pairs, per measure", table)
        summary = self.tmp / "summary.md"
        markdown = cli(*self.args, "--pairwise", "--format", "markdown", "--summary", summary)[1]
        self.assertEqual(summary.read_text(encoding="utf-8"), markdown + "\n")
        self.assertIn("| %s vs %s | RR | 0.5000 | 1.0000 | +0.5000 | [+0.5000, +0.5000] | 0.0078 | 0.0234 |"
                      % (rre._md(label(1)), rre._md(label(0))), markdown)
        rows = list(csv.DictReader(io.StringIO(cli(*self.args, "--pairwise", "--format", "csv")[1])))
        self.assertEqual([row["RR %s - %s" % (label(2), label(1))] for row in rows], ["0.0"] + ["-0.5"] * 7)
        self.assertEqual(rows[0]["R@2 %s - %s" % (label(1), label(0))], "0.0")
        # not asked for: no pairs
        self.assertNotIn("pairs", cli(*self.args, "--format", "table")[1])

    def test_the_library_gives_the_pairs_as_the_cli(self):
        result = rre.score_runs(self.qrels, self.runs, self.MEASURES, pairwise=True)
        cli_pairs = json.loads(cli(*self.args, "--pairwise")[1])["pairs"]
        names = dict(zip(map(str, self.paths), self.runs))
        self.assertEqual(result["pairs"], [dict(p, baseline=names[p["baseline"]], candidate=names[p["candidate"]])
                                           for p in cli_pairs])
        self.assertNotIn("pairs", rre.score_runs(self.qrels, self.runs, self.MEASURES))
        # a pair is compared on the same queries
        lacking = dict(self.runs, **{"mid{3}.json": {q: r for q, r in self.runs["mid{3}.json"].items() if q != "q1"}})
        with self.assertRaisesRegex(rre.EvalError, r"^runs\.mid\{3\}\.json: the runs were evaluated on different "
                                                   r"queries \('q1'\); compare on fixed queries"):
            rre.score_runs(self.qrels, lacking, "RR", pairwise=True, missing_run="skip")

    def test_refusals(self):
        one = ["--qrels", self.args[1], "--run", self.paths[0]]
        lacking = self.write("lacking.json", {"q%d" % i: ["d%d" % i] for i in range(2, 9)})
        for args, fragment in [
                (["--baseline", self.paths[0], "--format", "latex"], "--format latex has no place for --baseline: use json"),
                (["--ci", "--format", "latex"], "--format latex has no place for --ci"),
                (["--ties", "--format", "latex"], "--format latex has no place for --ties"),
                (["--explain", "--format", "latex"], "--format latex has no place for --explain"),
                (["--unjudged-bounds", "--format", "latex"], "--format latex has no place for --unjudged-bounds"),
                (["--power", "--format", "latex"], "--format latex has no place for --power"),
                (["--per-query", "--format", "latex"], "--format latex has no place for --per-query"),
                (["--groups", self.write("g.json", {"g": ["q1"]}), "--format", "latex"], "no place for --groups"),
                (["--index", self.write("index.json", ["d1"]), "--format", "latex"], "no place for --index"),
                (["--stage", "first=%s" % self.paths[0], "--format", "latex"], "no place for --stage"),
                ([a for i in range(27) for a in ("--run", self.tmp / ("r%d.json" % i))] + ["--format", "latex"],
                 "--format latex letters the runs a to z: give at most 26"),
                (["--pairwise"], "--pairwise compares each --run with each other one: give two or more"),
                (["--run", self.paths[1], "--pairwise", "--format", "latex"],
                 "--format latex tests every pair of runs already: leave out --pairwise"),
                (["--run", lacking, "--missing-run", "skip", "--pairwise"],
                 "%s: the runs were evaluated on different queries ('q1')" % lacking)]:
            with self.subTest(args=args):
                rejected(self, *cli(*one, *args), fragment)
        rejected(self, *cli(FIXTURE, "--pairwise"), "--pairwise compares each --run with each other one")
        self.assertEqual(cli(*one, "--run", self.paths[1], "--pairwise")[0], 0)


class PlotTest(TempDirTestCase):
    def test_the_svg_parses_and_names_every_measure_and_run(self):
        import xml.etree.ElementTree as ET
        qrels, base = self.write("qrels.json", GROUP_QRELS), self.write("base.json", BASE_GROUP_RUN)
        runs = [self.write(name, run) for name, run in three_runs().items()]
        plot = self.tmp / "p.svg"
        status, _, err = cli("--qrels", qrels, *[a for p in runs for a in ("--run", p)], "--baseline", base,
                             "-m", "R@3,nDCG@2,AP,P(rel=1)@2", "--plot", plot)
        self.assertEqual(status, 0, err)
        root = ET.parse(str(plot)).getroot()
        ns = "{http://www.w3.org/2000/svg}"
        text = " ".join(root.itertext())
        for name in ["R@k", "nDCG@k", "P(rel=1)@k", "baseline"] + [str(p) for p in runs]:
            self.assertIn(name, text)
        for name in ("R@3", "nDCG@2", "AP", "P(rel=1)@2"):  # a strip per run and measure
            self.assertEqual(text.count("change of %s per query" % name), 3, name)
        # 3 curves, baseline and 3 runs
        self.assertEqual(len(root.findall(".//%spolyline" % ns)), 3 * 4)
        self.assertEqual((root.get("role"), root.find(ns + "title").text[:9]), ("img", "Retrieval"))
        self.assertTrue(root.find(ns + "desc").text.startswith(
            "Mean of R@k, nDCG@k, P(rel=1)@k over the cutoff k for each run; then each query's"))

    def test_curves_hold_the_mean_at_each_cutoff(self):
        labels = rre.qrels_from_json(GROUP_QRELS, None, "qrels")
        ranked = rre.judge_run(rre.rankings_from_json(CAND_GROUP_RUN, None, "runs"), rre.Truth(labels), rre.Reading(), None)
        judged = rre.judge_queries(labels, ranked)[0]
        curves = rre.curves(judged, rre.parse_measures(["R@4,nDCG@2,RR"]))
        self.assertEqual(list(curves), ["R@k", "nDCG@k"])
        for k, mean in curves["R@k"]:
            self.assertEqual(mean, rre.score_run(GROUP_QRELS, CAND_GROUP_RUN, "R@%d" % k)["measures"]["R@%d" % k])
        self.assertEqual([k for k, _ in curves["nDCG@k"]], [1, 2, 3, 4])
        cut = rre.plot_cutoffs(rre.parse_measures(["R@100,P@37"]))
        self.assertEqual((cut[:20], cut[-1], 37 in cut, len(cut) <= 42), (list(range(1, 21)), 100, True, True))

    def test_bad_plots_are_refused_before_any_work_and_nothing_is_written(self):
        fixture_path = self.write("f.json", {"qrels": GROUP_QRELS, "runs": CAND_GROUP_RUN})
        rejected(self, *cli(fixture_path, "-m", "AP,RR", "--plot", self.tmp / "p.svg"),
                 "--plot draws measures over k, and AP, RR have no cutoff")
        rejected(self, *cli(fixture_path, "-m", "R@2", "--plot", self.tmp / "no" / "p.svg"), "does not exist")
        rejected(self, *cli(fixture_path, "-m", "R@2", "--plot", self.tmp), "it names a directory")
        rejected(self, *cli(self.write("bad.json", "{"), "-m", "R@2", "--plot", self.tmp / "p.svg"), "invalid JSON")
        self.assertEqual(sorted(p.name for p in self.tmp.iterdir()), ["bad.json", "f.json"])

    def test_legends_keep_the_end_of_long_labels(self):
        long_a, long_b, short = "A" * 5 + "x" * 25, "B" * 5 + "x" * 25, "c" * 19
        self.assertEqual(rre._LEGEND, 22)  # 7 px a character fit right of a panel: 24 were clipped
        self.assertEqual(rre._legend({1: long_a, 2: short}), {1: "\u2026" + long_a[-21:], 2: short})
        self.assertEqual(rre._legend({1: "y" * 22}), {1: "y" * 22})  # the limit itself fits
        self.assertEqual(rre._legend({1: long_a, 2: long_b, 3: short}),
                         {1: "1: \u2026" + long_a[-18:], 2: "2: \u2026" + long_b[-18:], 3: "3: " + short})
        # the baseline still says so
        self.assertEqual(rre._legend({None: "baseline runs/" + long_a, 1: short}),
                         {None: "baseline \u2026" + long_a[-12:], 1: short})
        self.assertEqual(rre._legend({None: "baseline", 1: "baseline"}), {None: "1: baseline", 1: "2: baseline"})
        self.assertEqual(rre._legend({1: "/home/me/beir/msmarco/run.bm25s.trec", 2: "runs/x/" + "y" * 20}),
                         # from a separator, when one fits
                         {1: "\u2026/run.bm25s.trec", 2: "\u2026/" + "y" * 20})
        # "\u2026/" and 21: 23
        self.assertEqual(rre._legend({1: "runs/" + "y" * 21}), {1: "\u2026" + "y" * 21})

    def test_long_names_round_ticks_and_a_strip_where_nothing_moved(self):
        import xml.etree.ElementTree as ET
        qrels = {"q%d" % i: ["d%d" % i] for i in range(6)}
        run = {q: {"d%d" % j: 1.0 / (j + 1) for j in range(60)} for q in qrels}
        long = self.write("a-retriever-with-a-configuration-name-far-too-long-for-one-title-line.json", run)
        plot, ns = self.tmp / "p.svg", "{http://www.w3.org/2000/svg}"
        status, _, err = cli("--qrels", self.write("q.json", qrels), "--run", long, "--baseline",
                             self.write("approved.json", run), "-m", "R@50", "--plot", plot)
        self.assertEqual(status, 0, err)
        root = parsed_svg(plot)
        texts = [t.text for t in root.iter(ns + "text")]
        lines = [t.text for t in root.iter(ns + "tspan")]  # the title's lines fit the picture...
        self.assertTrue(all(len(line) <= 72 for line in lines), lines)
        self.assertEqual(lines[0], "Retrieval evaluation of baseline "
                                   "\u2026/%s/approved.json," % self.tmp.name)
        # ...and it is whole in the picture's <title>
        self.assertIn(str(long), root.find(ns + "title").text)
        names = ["runs/msmarco/run.bm25s.trec", "runs/msmarco/run.dense.trec"]
        wrapped = rre.format_svg(dict.fromkeys(names, {}), dict.fromkeys(names, {"R@k": [(1, 0.5), (2, 0.7)]}),
                                 {n: n for n in names})
        # at a separator
        title = [(t.text, t.get("dy")) for t in ET.fromstring(wrapped).iter(ns + "tspan")]
        self.assertEqual(title, [("Retrieval evaluation of runs/msmarco/run.bm25s.trec, runs/msmarco/", "0"),
                                 ("run.dense.trec", "20")])
        names = ["experiments/2026-11/%s/run.%s.trec" % (name, name) for name in ("bm25", "dense", "hybrid-rrf")]
        wrapped = rre.format_svg(dict.fromkeys(names, {}), dict.fromkeys(names, {"R@k": [(1, 0.5), (2, 0.7)]}),
                                 {n: n for n in names})
        # three lines: names still whole
        title = [t.text for t in ET.fromstring(wrapped).iter(ns + "tspan")]
        self.assertEqual(len(title), 3)
        self.assertEqual("".join(title).count("experiments/2026-11/"), 3, title)
        short = rre.format_svg({"a": {}}, {"a": {"R@k": [(1, 0.5)]}}, {"a": "a"})
        # one line: no tspan
        self.assertIn('font-weight="bold">Retrieval evaluation of a</text>', short)
        # the legend names the baseline's file, in its room
        self.assertIn("baseline \u2026pproved.json", texts)
        # a log axis
        self.assertEqual([t for t in texts if t and t.isdigit()], ["1", "2", "5", "10", "20", "50", "0"])
        self.assertNotIn("+0.00", texts)  # a strip where nothing moved has no scale
        ticks = {t.text: float(t.get("x")) for t in root.iter(ns + "text") if t.text in ("1", "10", "50")}
        self.assertAlmostEqual((ticks["10"] - ticks["1"]) / (ticks["50"] - ticks["1"]), math.log(10) / math.log(50), 3)

    def compared_plot(self, measure):
        """The parsed SVG of the group fixture against its baseline, with one measure."""
        fixture_path = self.write("f.json", {"qrels": GROUP_QRELS, "runs": CAND_GROUP_RUN})
        plot = self.tmp / "p.svg"
        self.assertEqual(cli(fixture_path, "-m", measure, "--baseline", self.write("b.json", BASE_GROUP_RUN),
                             "--plot", plot)[0], 0)
        return parsed_svg(plot), "{http://www.w3.org/2000/svg}"

    def test_the_plot_keeps_curves_in_their_area_and_legends_beside_it(self):
        root, ns = self.compared_plot("R@4")
        right = rre._SVG_WIDTH - rre._RIGHT
        for line in root.iter(ns + "polyline"):
            xs = [float(point.split(",")[0]) for point in line.get("points").split()]
            self.assertEqual((xs[0], xs[-1]), (rre._LEFT, right))
        legend = [e for e in root.iter() if e.get("stroke-width") == "3"]
        self.assertEqual(len(legend), 2)
        for mark in legend:
            self.assertEqual((float(mark.get("x1")), float(mark.get("x2"))), (right + 12, right + 30))
            self.assertEqual(mark.get("y1"), mark.get("y2"))
        self.assertEqual([float(m.get("y1")) for m in legend][1] - float(legend[0].get("y1")), 18)
        self.assertEqual([m.get("stroke") for m in legend], list(rre.PALETTE[:2]))  # one each
        self.assertGreater(float(legend[0].get("y1")), plot_top(root))
        for element in root.iter():
            for name in ("x", "x1", "x2", "width"):
                if element.get(name) not in (None, "100%"):
                    self.assertLessEqual(float(element.get(name)), rre._SVG_WIDTH, (element.tag, element.attrib))

    def test_the_plot_of_one_cutoff_and_its_change_strip(self):
        import xml.etree.ElementTree as ET
        root, ns = self.compared_plot("R@1")
        width = rre._SVG_WIDTH - rre._LEFT - rre._RIGHT
        (curve,) = [line for line in root.iter(ns + "polyline") if "baseline" not in ET.tostring(line).decode()][:1]
        x, y = map(float, curve.get("points").split(",")[:2])
        self.assertEqual(x, rre._LEFT + width / 2)  # one cutoff: one point, in the middle
        # R@1 = 3/12 (q0, q3, q9), 0..1 axis
        self.assertEqual(y, plot_top(root) + rre._PANEL - rre._PANEL * 3 / 12)
        # the picture's own first
        titles = [e for e in root.iter(ns + "text") if e.get("font-weight") == "bold"][1:]
        self.assertEqual((float(titles[0].get("y")), titles[0].text), (plot_top(root) - 10, "R@k, mean over queries"))
        # base RR ranks 1,2,3,1,...; candidate the same but q6..q8 at 2: R@1 q6 1 -> 0, q7 and q8
        # unchanged
        self.assertIn("change of R@1 per query (1 worse, 0 better, 11 the same)", titles[1].text)
        plot = self.tmp / "q.svg"  # the other way round: one better
        status, _, err = cli("--qrels", self.write("q.json", GROUP_QRELS), "--run", self.tmp / "b.json", "--baseline",
                             self.write("c.json", CAND_GROUP_RUN), "-m", "R@1", "--plot", plot)
        self.assertEqual(status, 0, err)
        self.assertIn("(0 worse, 1 better, 11 the same)", plot.read_text())
        (gain,) = [e for e in parsed_svg(plot).iter(ns + "rect") if e.get("fill") == "#2ca02c"]
        self.assertEqual(float(gain.get("y")) + float(gain.get("height")), float(
            # above the middle
            [e for e in root.iter(ns + "line") if e.get("stroke") == "#999"][0].get("y1")))
        # the strip's axis: +1.00 at its top, -1.00 at its foot
        top = float(titles[1].get("y")) + 10
        labels = {e.text: float(e.get("y")) for e in root.iter(ns + "text") if e.get("text-anchor") == "end"}
        self.assertEqual((labels["+1.00"], labels["-1.00"]), (top + 4, top + rre._STRIP + 4))
        middle = float([e for e in root.iter(ns + "line") if e.get("stroke") == "#999"][0].get("y1"))
        (bar,) = [e for e in root.iter(ns + "rect") if e.get("fill") in ("#d62728", "#2ca02c")]
        self.assertEqual((float(bar.get("y")), float(bar.get("height"))), (middle, rre._STRIP / 2))

    def test_two_cutoffs_span_the_curve_area(self):
        root, ns = self.compared_plot("R@2")
        grid = [e for e in root.iter(ns + "line") if e.get("stroke") == "#ddd"]
        self.assertEqual([float(e.get("y1")) for e in grid], [plot_top(root) + rre._PANEL * (4 - i) / 4 for i in range(5)])
        width = rre._SVG_WIDTH - rre._LEFT - rre._RIGHT
        for line in root.iter(ns + "polyline"):
            self.assertEqual([float(p.split(",")[0]) for p in line.get("points").split()],
                             [rre._LEFT, rre._LEFT + width])

    def test_a_strip_of_many_queries_shows_the_mean_of_neighbours(self):
        import xml.etree.ElementTree as ET
        # 1000 queries in 600 bars of 1 or 2
        per_query = {"q%04d" % i: {"R@1": 0.0} for i in range(1000)}
        result = {"per_query": per_query, "baseline_per_query": {q: {"R@1": float(q < "q0500")} for q in per_query}}
        svg = ET.fromstring("<svg xmlns='http://www.w3.org/2000/svg'>%s</svg>" % rre._strip("x", "x", "R@1", result, 100))
        heights = [float(e.get("height")) for e in svg.iter("{http://www.w3.org/2000/svg}rect")]
        # 500 drops of 1 in 300 bars
        self.assertEqual((len(heights), set(heights)), (300, {rre._STRIP / 2}))

    def test_the_strip_draws_each_change_to_scale_and_ticks_the_unstable(self):
        import xml.etree.ElementTree as ET
        deltas = {"a": -0.5, "b": -0.25, "c": 0.0, "d": 0.0, "e": 0.125, "f": 0.0}
        result = {"per_query": {q: {"RR": d} for q, d in deltas.items()},
                  "baseline_per_query": {q: {"RR": 0.0} for q in deltas}, "unstable": {"RR": ["a", "d"]}}
        svg = ET.fromstring("<svg xmlns='http://www.w3.org/2000/svg'>%s</svg>" % rre._strip("x", "x", "RR", result, 100))
        rects = [(e.get("fill"), *(float(e.get(n)) for n in ("x", "y", "width", "height")))
                 for e in svg.iter("{http://www.w3.org/2000/svg}rect")]
        x = [round(64 + (rre._SVG_WIDTH - rre._LEFT - rre._RIGHT) * i / 6, 2) for i in range(7)]
        # six bars; the axis at 165, 65 to the largest
        slot = round((rre._SVG_WIDTH - rre._LEFT - rre._RIGHT) / 6, 2)
        self.assertEqual(rects, [("#d62728", x[0], 165.0, slot, 65.0), ("#888", x[0], 232.0, slot, 4.0),
                                 ("#d62728", x[1], 165.0, slot, 32.5),
                                 ("#888", x[4], 232.0, slot, 4.0),  # d: the last of the zeros
                                 ("#2ca02c", x[5], 148.75, slot, 16.25)])
        axis, = [e for e in svg.iter("{http://www.w3.org/2000/svg}line") if e.get("stroke") == "#999"]
        self.assertEqual([axis.get(n) for n in ("x1", "x2", "y1", "y2")], ["64", str(rre._SVG_WIDTH - rre._RIGHT),
                                                                           "165.0", "165.0"])
        many = {"q%04d" % i: {"R@1": 0.0} for i in range(1000)}  # q0000 shares a bar with q0499
        result = {"per_query": many, "baseline_per_query": {q: {"R@1": float(q < "q0500")} for q in many},
                  "unstable": {"R@1": ["q0000"]}}
        svg = ET.fromstring("<svg xmlns='http://www.w3.org/2000/svg'>%s</svg>" % rre._strip("x", "x", "R@1", result, 100))
        self.assertEqual(len([e for e in svg.iter("{http://www.w3.org/2000/svg}rect") if e.get("fill") == "#888"]), 1)

    def test_a_negative_mean_widens_the_axis(self):
        data = {"qrels": {"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 2}}, "runs": {"q1": ["d1", "x"], "q2": ["x", "d3"]}}
        plot, name = self.tmp / "p.svg", "nDCG(gains={1:-1,2:1})@%d"
        self.assertEqual(cli(self.write("f.json", data), "-m", name % 2, "--plot", plot)[0], 0)
        means = [rre.score_run(data["qrels"], data["runs"], name % k)["measures"][name % k] for k in (1, 2)]
        self.assertLess(means[0], means[1])
        self.assertLess(means[1], 0)  # the axis runs from means[0] to 1
        points = next(parsed_svg(plot).iter("{http://www.w3.org/2000/svg}polyline")).get("points").split()
        expected = [plot_top(parsed_svg(plot)) + rre._PANEL - rre._PANEL * (v - means[0]) / (1 - means[0]) for v in means]
        self.assertEqual([float(p.split(",")[1]) for p in points], [round(y, 1) for y in expected])

    def test_the_plot_stacks_panels_and_strips_at_fixed_steps(self):
        qrels, base = self.write("qrels.json", GROUP_QRELS), self.write("base.json", BASE_GROUP_RUN)
        runs = [self.write(name, run) for name, run in list(three_runs().items())[:2]]
        plot = self.tmp / "p.svg"
        self.assertEqual(cli("--qrels", qrels, *[a for p in runs for a in ("--run", p)], "--baseline", base,
                             "-m", "R@2,P@3", "--plot", plot)[0], 0)
        root, ns = parsed_svg(plot), "{http://www.w3.org/2000/svg}"
        titles = [float(e.get("y")) for e in root.iter(ns + "text") if e.get("font-weight") == "bold"][1:]
        steps = [b - a for a, b in zip(titles, titles[1:])]
        # 2 panels, then 2 x 2 strips
        self.assertEqual(steps, [rre._PANEL + 70] * 2 + [rre._STRIP + 60] * 3)
        captions = [float(e.get("y")) for e in root.iter(ns + "text") if e.text == "queries, sorted by change"]
        self.assertEqual(captions, [y + 10 + rre._STRIP + 18 for y in titles[2:]])
        right = rre._SVG_WIDTH - rre._RIGHT
        legend = [e for e in root.iter(ns + "text") if e.get("x") == str(right + 36)]
        self.assertEqual(len(legend), 2 * 3)  # baseline and two runs, in each panel
        marks = [e for e in root.iter(ns + "line") if e.get("stroke-width") == "3"]
        self.assertEqual([float(e.get("y")) for e in legend], [float(m.get("y1")) + 4 for m in marks])
        axis = [e for e in root.iter(ns + "text") if e.get("text-anchor") == "end"]
        # the values beside the y axes
        self.assertEqual({e.get("x") for e in axis}, {str(rre._LEFT - 6)})
        self.assertEqual([e.text for e in axis[:5]], ["0.00", "0.25", "0.50", "0.75", "1.00"])
        bars = [float(e.get("x")) for e in root.iter(ns + "rect") if e.get("fill") in ("#d62728", "#2ca02c")]
        self.assertGreater(len(set(bars)), 2)
        self.assertTrue(all(rre._LEFT <= x < right for x in bars), bars)

    def test_a_plot_draws_a_budget_up_to_its_top_k(self):
        """The curve of R(tokens=B)@k reaches the plot's largest k, past the budget's own cutoff."""
        qrels = {"q1": ["d%d" % i for i in range(0, 12, 2)]}
        run = {"q1": ["d%d" % i for i in range(12)]}
        fixture = self.write("f.json", {"qrels": qrels, "runs": run})
        lengths = self.write("l.txt", "".join("d%d 10\n" % i for i in range(12)))
        plot = self.tmp / "p.svg"
        status, out, err = cli(fixture, "-m", "R(tokens=100)@2,nDCG@8", "--lengths", lengths, "--plot", plot)
        self.assertEqual(status, 0, err)
        alone = rre.score_run(qrels, run, ["R(tokens=100)@8"], lengths={"d%d" % i: 10 for i in range(12)})
        # ten items fit: d0 d2 d4 d6 within 8
        self.assertEqual(alone["measures"]["R(tokens=100)@8"], 4 / 6)
        svg = plot.read_text()
        points = re.search(r'points="([^"]+)"><title>[^<]*</title></polyline>', svg).group(1).split()
        ys = [float(p.split(",")[1]) for p in points]
        self.assertEqual(len(ys), 8)
        # still rising past k = 2: R@8 within the budget is 4/6, not R@2's 1/6
        self.assertLess(ys[7], ys[1])

    def test_k_ticks(self):
        for top, ticks in ((1, [1]), (3, [1, 3]), (7, [1, 5, 7]), (20, [1, 5, 10, 15, 20]), (21, [1, 2, 5, 10, 21]),
                           (25, [1, 2, 5, 10, 25]), (128, [1, 2, 5, 10, 20, 50, 128]),
                           (200, [1, 2, 5, 10, 20, 50, 100, 200]), (300, [1, 2, 5, 10, 20, 50, 100, 200, 300])):
            self.assertEqual(rre._k_ticks(top), ticks)


class SideOutputsTest(TempDirTestCase):
    """--plot and --summary in every mode: one run from a fixture, one --run, a baseline,
    several runs, each with and without groups; names escaped in every format."""

    def setUp(self):
        super().setUp()
        os.chdir(self.tmp)
        self.addCleanup(os.chdir, ROOT)
        self.write("qrels.json", GROUP_QRELS)
        self.write("fixture.json", {"qrels": GROUP_QRELS, "runs": CAND_GROUP_RUN})
        self.write("cand.json", CAND_GROUP_RUN)
        self.write("base.json", BASE_GROUP_RUN)
        self.write("groups.json", GROUPS)
        for name, run in three_runs().items():
            self.write(name, run)

    MODES = {"fixture": ["fixture.json"], "one run": ["--qrels", "qrels.json", "--run", "cand.json"],
             "baseline": ["--qrels", "qrels.json", "--run", "cand.json", "--baseline", "base.json"],
             "several": ["--qrels", "qrels.json", "--run", "a.json", "--run", "b.json"],
             "several, baseline": ["--qrels", "qrels.json", "--run", "a.json", "--run", "b.json",
                                   "--baseline", "base.json"]}

    def test_every_mode_with_and_without_groups(self):
        for (mode, args), groups in itertools.product(self.MODES.items(), ([], ["--groups", "groups.json"])):
            with self.subTest(mode=mode, groups=bool(groups)):
                for old in ("p.svg", "s.md"):
                    if os.path.exists(old):
                        os.remove(old)
                status, out, err = cli(*args, *groups, "-m", "R@3,RR@2", "--plot", "p.svg", "--summary", "s.md")
                self.assertEqual(status, 0, err)
                self.assertNotIn("Traceback", err)
                root = parsed_svg("p.svg")
                legend = " ".join(root.itertext())
                for measure in ("R@k", "RR@k"):
                    self.assertIn(measure, legend)
                self.assertEqual("baseline" in legend, "--baseline" in args)
                summary = Path("s.md").read_text(encoding="utf-8")
                self.assertTrue(summary.startswith("### Retrieval evaluation"), summary)
                self.assertEqual("Groups" in summary, bool(groups), summary)
                self.assertTrue(summary.endswith("\n\n"))

    def test_run_labels_are_unique_and_whole_somewhere(self):
        os.makedirs("x")
        self.write("x/a.json", group_run(lambda i: 2))
        self.write("baseline", BASE_GROUP_RUN)
        status, out, err = cli("--qrels", "qrels.json", "--run", "a.json", "--run", "x/a.json", "--run", "baseline",
                               "--baseline", "base.json", "-m", "RR@2", "--format", "table", "--plot", "p.svg")
        self.assertEqual(status, 0, err)
        rows = [line.split()[:2] for line in out.splitlines()[1:5]]  # not two rows "baseline"
        self.assertEqual(rows, [["baseline", "base.json"], ["a.json", "12"], ["x/a.json", "12"], ["baseline", "12"]])
        self.assertEqual(rre.run_labels(["a", "baseline"], "b.json"), {None: "baseline b.json", "a": "a", "baseline": "baseline"})
        legend = rre._legend({1: "long/path/one/" + "x" * 30 + "/run.json", 2: "long/path/two/" + "x" * 30 + "/run.json"})
        self.assertEqual(len(set(legend.values())), 2, legend)
        self.assertTrue(all(len(v) <= 26 for v in legend.values()), legend)
        title = parsed_svg("p.svg").find("{http://www.w3.org/2000/svg}title").text
        for name in ("base.json", "a.json", "x/a.json"):
            self.assertIn(name, title)

    def test_names_with_line_breaks_and_bytes_that_are_not_utf8_are_escaped(self):
        odd = ["line\nbreak.json", "tab\there.json", os.fsdecode(b"bad\xffname.json"), "star*|pipe.json"]
        for name in odd:
            Path(name).write_text(json.dumps(CAND_GROUP_RUN), encoding="utf-8")
        args = ["--qrels", "qrels.json"] + [a for name in odd for a in ("--run", name)] + ["-m", "RR@2"]
        status, out, err = cli(*args, "--baseline", "base.json", "--plot", "p.svg", "--summary", "s.md",
                               "--format", "markdown")
        self.assertEqual(status, 0, err)
        parsed_svg("p.svg")  # valid XML
        summary = Path("s.md").read_text(encoding="utf-8")
        self.assertIn(rre._md("line\\nbreak.json"), summary)
        self.assertIn(rre._md("bad\\udcffname.json"), summary)
        self.assertNotIn("line\nbreak", summary + out)
        self.assertIn("star\\*&#124;pipe.json", summary)
        rows = table_rows(out)
        self.assertEqual({len(row) for row in rows}, {len(rows[0])})
        status, text, _ = cli(*args, "--format", "csv")
        self.assertEqual(len(next(csv.reader(io.StringIO(text)))), 1 + len(odd))

    def test_several_runs_keep_intervals_and_group_columns(self):
        args = ["--qrels", "qrels.json", "--run", "a.json", "--run", "b.json", "-m", "RR@2", "--ci"]
        alone = json.loads(cli("--qrels", "qrels.json", "--run", "b.json", "-m", "RR@2", "--ci")[1])
        interval = "[%.4f, %.4f]" % tuple(alone["ci95"]["RR@2"])
        for fmt in ("table", "markdown"):
            with self.subTest(fmt):
                self.assertIn(interval, cli(*args, "--format", fmt)[1])
        _, table, _ = cli(*args, "--baseline", "base.json", "--format", "table")
        versus = json.loads(cli("--qrels", "qrels.json", "--run", "b.json", "-m", "RR@2", "--ci",
                                "--baseline", "base.json")[1])["comparison"]["RR@2"]["ci95"]
        self.assertIn("[%.4f, %.4f]" % tuple(versus), table)
        _, text, _ = cli(*args, "--groups", "groups.json", "--format", "csv")
        rows = list(csv.reader(io.StringIO(text)))
        self.assertEqual(rows[0][-len(GROUPS):], ["group:" + g for g in GROUPS])
        by_query = {row[0]: row for row in rows[1:]}
        self.assertEqual(by_query["q6"][rows[0].index("group:multi-hop")], "1")
        self.assertEqual(by_query["q0"][rows[0].index("group:multi-hop")], "0")

    def test_output_paths_are_refused_before_any_work(self):
        cases = [(["--summary", ""], "--summary '' is empty", "GITHUB_STEP_SUMMARY"),
                 (["--plot", ""], "--plot '' is empty", "give a file name"),
                 (["--summary", "-"], "--summary -: standard output", "give --summary a file"),
                 (["--plot", "missing/"], "--plot missing/ cannot be written", "names a directory"),
                 (["--plot", "nowhere/p.svg"], "does not exist", ""),
                 (["--summary", "r.md", "--plot", "r.md"], "--plot r.md names r.md", "a file of its own"),
                 (["--summary", "cand.json"], "--summary cand.json names cand.json", ""),
                 (["--plot", "./qrels.json"], "--plot ./qrels.json names qrels.json", "")]
        for extra, *fragments in cases:
            with self.subTest(extra):
                before = sorted(os.listdir("."))
                rejected(self, *cli("--qrels", "qrels.json", "--run", "cand.json", "-m", "R@3", *extra), *fragments)
                # a refused run creates no summary
                self.assertEqual(sorted(os.listdir(".")), before)
        rejected(self, *cli("--qrels", "qrels.json", "--run", "missing.json", "--summary", "new.md"), "cannot read")
        self.assertFalse(os.path.exists("new.md"))

    def test_summary_starts_on_a_line_of_its_own(self):
        Path("s.md").write_bytes(b"earlier text without a newline")
        self.assertEqual(cli("fixture.json", "-m", "RR", "--summary", "s.md")[0], 0)
        text = Path("s.md").read_text(encoding="utf-8")
        self.assertTrue(text.startswith("earlier text without a newline\n### Retrieval evaluation"), text[:80])
        self.assertEqual(cli("fixture.json", "-m", "RR", "--summary", "s.md")[0], 0)
        self.assertEqual(Path("s.md").read_text(encoding="utf-8").count("\n\n### Retrieval"), 1)

    def test_a_summary_that_cannot_be_appended_exits_3_alone_too(self):
        for gate, plot in ((), ()), (("--baseline", "base.json", "--max-query-drop", "0"), ("--plot", "p.svg")):
            with self.subTest(gate=gate), unittest.mock.patch.object(rre, "_append", return_value=False) as append:
                status, out, err = cli("fixture.json", "-m", "RR@3", "--summary", "s.md", *gate, *plot)
                self.assertEqual((status, append.call_count), (3, 1), err)
                self.assertTrue(out.startswith("{"))  # the output itself was printed
        with unittest.mock.patch.object(rre, "_append", return_value=False) as append:
            self.assertEqual(cli("fixture.json", "-m", "RR")[0], 0)
        self.assertEqual(append.call_count, 0)  # no --summary: no report is made

    @unittest.skipUnless(hasattr(os, "fork") and sys.platform != "win32", "needs resource limits")
    def test_a_write_that_fails_half_way_leaves_the_files_as_they_were(self):
        import resource
        Path("s.md").write_text("# earlier\n", encoding="utf-8")
        Path("p.svg").write_text("<svg/>\n", encoding="utf-8")
        limit = lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))  # noqa: E731
        status, out, err = cli_process("--qrels", "qrels.json", "--run", "cand.json", "--baseline", "base.json",
                                       "-m", "R@3,RR@2,AP,nDCG@3", "--per-query", "--format", "markdown",
                                       "--summary", "s.md", "--plot", "p.svg", cwd=str(self.tmp), preexec_fn=limit)
        self.assertEqual(status, 3, err)
        self.assertEqual(Path("s.md").read_text(encoding="utf-8"), "# earlier\n")
        self.assertEqual(Path("p.svg").read_text(encoding="utf-8"), "<svg/>\n")
        self.assertEqual(sorted(p for p in os.listdir(".") if p.endswith(".tmp")), [])
        self.assertEqual(len(err.splitlines()), 2, err)
        status, out, err = cli_process("--qrels", "qrels.json", "--run", "cand.json", "-m", "R@3", "--plot", "p.svg",
                                       cwd=str(self.tmp), preexec_fn=limit)
        # the plot alone: 3 too
        self.assertEqual((status, err.count("cannot write the plot")), (3, 1), err)
        # stdout whole
        self.assertEqual(out, cli("--qrels", "qrels.json", "--run", "cand.json", "-m", "R@3")[1])


class JunitTest(TempDirTestCase):
    """Section 22: --junit writes a testsuite per run, a testcase per measure and gate (per group,
    per breached query besides), a failure holding each breach's line; only with a gate."""

    def test_the_report_as_ci_servers_read_it(self):
        qrels = self.write("q.txt", "q1 0 d1 1\nq2 0 d3 1\nq3 0 d4 1\n")
        base = self.write("b.txt", "q1 Q0 d1 1 0.9 b\nq2 Q0 d3 1 0.5 b\nq3 Q0 d4 1 0.5 b\n")
        good, bad = self.write("good.txt", "q1 Q0 d1 1 0.9 g\nq2 Q0 d3 1 0.5 g\nq3 Q0 d4 1 0.5 g\n"), \
            self.write("bad.txt", "q1 Q0 d9 1 0.9 x\nq2 Q0 d3 1 0.5 x\nq3 Q0 d4 1 0.5 x\n")
        groups = self.write("g.json", {"one": ["q1"], "rest": ["q2", "q3"]})
        xml = self.tmp / "junit.xml"
        status, out, err = cli("--qrels", qrels, "--run", good, "--run", bad, "--baseline", base, "-m", "R@1,RR",
                               "--max-mean-drop", "0.1", "--max-query-drop", "0.5", "--groups", groups,
                               "--max-group-drop", "0.2", "--junit", xml, "--format", "table")
        self.assertEqual(status, 1, err)
        root = ElementTree.parse(xml).getroot()
        self.assertEqual((root.tag, root.get("tests"), root.get("failures")), ("testsuites", "18", "8"))
        suites = root.findall("testsuite")
        self.assertEqual([(s.get("name"), s.get("tests"), s.get("failures")) for s in suites],
                         [(str(good), "8", "0"), (str(bad), "10", "8")])
        cases = {c.get("name"): c.find("failure") for c in suites[1].findall("testcase")}
        self.assertEqual(sorted(cases), sorted([
            "R@1 mean (--max-mean-drop 0.1)", "RR mean (--max-mean-drop 0.1)",
            "R@1 every query (--max-query-drop 0.5)", "RR every query (--max-query-drop 0.5)",
            "R@1 query q1 (--max-query-drop 0.5)", "RR query q1 (--max-query-drop 0.5)",
            "R@1 group one mean (--max-group-drop 0.2)",
            "RR group one mean (--max-group-drop 0.2)",
            "R@1 group rest mean (--max-group-drop 0.2)",
            "RR group rest mean (--max-group-drop 0.2)"]))
        self.assertIsNone(cases["R@1 group rest mean (--max-group-drop 0.2)"])
        failure = cases["R@1 query q1 (--max-query-drop 0.5)"]
        self.assertEqual((failure.get("type"), failure.get("message")), (
            "--max-query-drop", "R@1 query 'q1': 1.0000 -> 0.0000 (drop 1.0000 > "
                                "--max-query-drop 0.5)"))
        self.assertIn("R@1 query 'q1': 1.0000 -> 0.0000", cli("--qrels", qrels, "--run", bad, "--baseline", base,
                                                               "-m", "R@1", "--max-query-drop", "0.5")[2])
        self.assertTrue(all(c.get("classname") == s.get("name") for s in suites for c in s.findall("testcase")))

    def test_a_test_case_for_each_gate_given(self):
        qrels, run = self.write("q.txt", "q1 0 d1 1\nq2 0 d2 1\n"), self.write("r.txt", "q1 Q0 d1 1 0.9 r\n")
        xml = self.tmp / "j.xml"
        base = self.write("b.txt", "q1 Q0 d1 1 1 b\nq2 Q0 d2 1 1 b\n")
        status, out, err = cli("--qrels", qrels, "--run", run, "--baseline", base, "-m", "R@1,RR",
                               "--missing-run", "zero", "--max-mean-drop", "0.9", "--junit", xml)
        self.assertEqual(status, 0, err)
        cases = ElementTree.parse(xml).getroot().findall("testsuite/testcase")
        self.assertEqual([c.get("name") for c in cases], ["R@1 mean (--max-mean-drop 0.9)", "RR mean (--max-mean-drop 0.9)"])
        self.assertEqual([c.find("failure") for c in cases], [None, None])

    def test_only_with_a_gate_and_never_onto_an_input(self):
        qrels, run = self.write("q.txt", "q1 0 d1 1\n"), self.write("r.txt", "q1 Q0 d1 1 0.9 r\n")
        rejected(self, *cli("--qrels", qrels, "--run", run, "--baseline", run, "-m", "R@1", "--junit",
                            self.tmp / "j.xml"),
                            "--junit reports the gates' checks: give --max-mean-drop")
        rejected(self, *cli("--qrels", qrels, "--run", run, "--baseline", self.write("b.txt", "q1 Q0 d1 1 1 b\n"),
                            "-m", "R@1", "--max-mean-drop", "0", "--junit", qrels), "--junit", "which is read")
        self.assertFalse((self.tmp / "j.xml").exists())


class ProcessTest(TempDirTestCase):
    """What only a real process shows: closed and full streams, a reader that leaves early."""

    def test_output_failures_exit_3(self):
        for name, redirect in (("full disk", "> /dev/full"), ("closed stdout", ">&-")):
            with self.subTest(name):
                proc = subprocess.run("%s -S %s %s %s" % (sys.executable, runnable_script(), FIXTURE, redirect), shell=True,
                                      capture_output=True)
                err = proc.stderr.decode()
                self.assertEqual((proc.returncode, len(err.splitlines())), (3, 1), err)
                self.assertIn("cannot write the output", err)

    def test_a_bug_of_ours_exits_70_never_as_a_failed_gate(self):
        """A crash is EX_SOFTWARE with its traceback and a request for a report: CI must not read it as exit 1."""
        with unittest.mock.patch.object(rre, "evaluate_runs", side_effect=ZeroDivisionError("a bug")):
            status, out, err = cli(FIXTURE, "-m", "R@3", "--baseline", FIXTURE, "--max-mean-drop", "0")
        self.assertEqual((status, out), (70, ""))
        self.assertIn("Traceback (most recent call last):", err)
        self.assertIn("ZeroDivisionError: a bug", err)
        self.assertTrue(err.endswith("rag_retrieval_eval: internal error: this is a bug of "
                                     "rag_retrieval_eval %s, not a problem with your input: "
                                     "please report it with the traceback above and the "
                                     "command line\n" % rre.__version__), err)
        script = "import sys, rag_retrieval_eval as r; r.evaluate_runs = None; sys.argv[1:] = [%r]; r._run_script()"
        proc = subprocess.run([sys.executable, "-S", "-c", script % str(FIXTURE)], capture_output=True, cwd=ROOT)
        # the process too, whatever os._exit does
        self.assertEqual(proc.returncode, 70, proc.stderr)
        self.assertIn(b"TypeError", proc.stderr)

    def test_a_reader_leaving_early_keeps_the_gate_status(self):
        base = self.write("b.json", {"qrels": ONE, "runs": ONE})
        cand = self.write("c.json", {"qrels": ONE, "runs": {"q1": ["d2"] * 0 + ["d%d" % i for i in range(2, 3000)]}})
        proc = subprocess.run(["bash", "-c", '"$0" -S "$1" "$2" --baseline "$3" -m R@1 '
                                             '--max-query-drop 0.1 --format table --per-query | '
                                             'head -c 1 > /dev/null; exit ${PIPESTATUS[0]}',
                               sys.executable, runnable_script(), str(cand), str(base)], capture_output=True)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertNotIn(b"Traceback", proc.stderr)

    def test_closed_stdin_and_closed_stderr(self):
        q = self.write("q.txt", "q1 0 d1 1\n")
        proc = subprocess.run("%s -S %s --qrels %s --run - <&-" % (sys.executable, runnable_script(), q), shell=True,
                              capture_output=True)
        self.assertEqual((proc.returncode, proc.stdout), (2, b""))
        self.assertIn(b"cannot read standard input", proc.stderr)
        proc = subprocess.run("%s -S %s nope.json 2>&-" % (sys.executable, runnable_script()), shell=True, capture_output=True)
        self.assertEqual((proc.returncode, proc.stdout), (2, b""))

    @unittest.skipUnless(hasattr(os, "openpty"), "needs a pseudo-terminal")
    def test_progress_only_on_a_terminal(self):
        q = self.write("q.txt", "q1 0 d1 1\n")
        r = self.write("r.txt", "q1 Q0 d1 1 1.0 t\n")
        main, child = os.openpty()
        proc = subprocess.run([sys.executable, "-S", runnable_script(), "--qrels", str(q), "--run", str(r), "-m", "RR"],
                              stdout=subprocess.PIPE, stderr=child)
        os.close(child)
        shown = b""
        # until the terminal reports the end: a busy machine delivers the last bytes late
        while True:
            try:
                data = os.read(main, 4096)
            except OSError:  # EIO: every byte read, the other side closed
                break
            if not data:
                break
            shown += data
        shown = shown.decode()
        os.close(main)
        self.assertEqual(proc.returncode, 0)
        self.assertIn("reading %s: 1 lines, 0 queries scored" % r, shown)
        self.assertTrue(shown.endswith("\r\x1b[K"), repr(shown))  # the line is cleared again
        self.assertEqual(cli("--qrels", q, "--run", r, "-m", "RR")[2], "")  # a pipe sees nothing

    def test_named_pipes_read_like_stdin(self):
        q, run = self.write("q.txt", "q1 0 d1 1\n"), self.write("r.txt", RUN_TXT)
        proc = subprocess.run(["bash", "-c", '"$0" -S "$1" --qrels "$2" --run <(cat "$3") -m R@3 --unlabeled skip', sys.executable,
                               runnable_script(), str(q), str(run)], capture_output=True)
        self.assertEqual((proc.returncode, json.loads(proc.stdout)["measures"]), (0, {"R@3": 1.0}), proc.stderr)


class OutputFilesTest(TempDirTestCase):
    """Side outputs (--summary, --pool, --plot, --junit): a regular file is replaced whole, through
    a symlink; a device or a FIFO is written in place, as a shell's > writes it; no output lands
    on an input, whatever its role or its name."""

    OUTPUTS = {"summary": [], "pool": [], "plot": [], "junit": ["--max-mean-drop", "0.5"]}

    def run_with(self, option, path):
        fixture = self.write("f.json", {"qrels": {"q1": ["d1"], "q2": ["d2"]}, "runs": {"q1": ["d1", "x"], "q2": []}})
        return cli(fixture, "-m", "R@2", "--baseline", fixture, "--" + option, path, *self.OUTPUTS[option])

    def test_every_output_option_is_covered(self):
        self.assertEqual(set(self.OUTPUTS), {o.name for o in rre.OPTIONS if o.stage == "output" and o.kind == "file"})

    def test_a_fifo_receives_the_bytes_and_stays_a_fifo(self):
        import threading
        for option in self.OUTPUTS:
            fifo, got = self.tmp / (option + ".fifo"), []
            os.mkfifo(fifo)
            reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
            reader.start()
            status, _, err = self.run_with(option, fifo)
            reader.join(5)
            with self.subTest(option=option):
                self.assertEqual(status, 0, err)
                self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))
                self.assertTrue(got and got[0].strip(), got)

    def test_a_device_is_written_in_place_and_a_full_one_is_exit_3(self):
        # /dev/null's and /dev/full's numbers, in our own folder: never the machine's own /dev
        try:
            os.mknod(self.tmp / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            os.mknod(self.tmp / "full", 0o666 | stat.S_IFCHR, os.makedev(1, 7))
        except (OSError, AttributeError):
            self.skipTest("no device node can be made here (not root)")
        for option in self.OUTPUTS:
            with self.subTest(option=option):
                status, out, err = self.run_with(option, self.tmp / "null")
                self.assertEqual((status, err), (0, ""))
                self.assertTrue(stat.S_ISCHR(os.stat(self.tmp / "null").st_mode))
                status, out, err = self.run_with(option, self.tmp / "full")
                self.assertEqual(status, 3)
                self.assertIn("No space left on device", err)
                self.assertTrue(stat.S_ISCHR(os.stat(self.tmp / "full").st_mode))
        # no temporary left
        self.assertEqual(sorted(p.name for p in self.tmp.iterdir()), ["f.json", "full", "null"])

    def test_a_symlink_keeps_naming_the_file_it_names(self):
        (self.tmp / "real.svg").write_text("old")
        os.symlink("real.svg", self.tmp / "link.svg")
        self.assertEqual(self.run_with("plot", self.tmp / "link.svg")[0], 0)
        self.assertTrue((self.tmp / "link.svg").is_symlink())
        self.assertTrue((self.tmp / "real.svg").read_text().startswith("<svg"))

    def test_no_output_lands_on_an_input_of_any_role_under_any_name(self):
        """The inputs are those of the options table: a role added later is guarded too."""
        files = {name: self.write(name, "x") for name in ("f", "q", "r", "b", "other")}
        usage = {"fixture": ["{}"], "qrels": ["--qrels", "{}", "--run", files["r"]], "run": ["--qrels", files["q"],
                 "--run", "{}"], "baseline": [files["f"], "--baseline", "{}"],
                 "replicate": [files["f"], "--baseline", files["b"], "--replicate", "{}"],
                 "stage": ["--qrels", files["q"], "--run", files["r"], "--stage", "s={}"],
                 "index": ["--qrels", files["q"], "--run", files["r"], "--index", "{}"],
                 "baseline_stage": [files["f"], "--baseline", files["b"], "--baseline-stage", "s={}"],
                 "candidate_qrels": ["--qrels", files["q"], "--run", files["r"], "--candidate-qrels", "{}"],
                 "baseline_qrels": ["--qrels", files["q"], "--run", files["r"], "--baseline", files["b"],
                                    "--baseline-qrels", "{}"]}
        for role in [o.name for o in rre.OPTIONS if o.stage == "input"]:
            args = usage.get(role, [files["f"], "--" + role.replace("_", "-"), "{}"])
            target = self.write(role + ".in", "x")
            os.link(target, self.tmp / (role + ".hard"))
            os.symlink(target.name, self.tmp / (role + ".soft"))
            for option, name in itertools.product(self.OUTPUTS, ("hard", "soft", "./")):
                other = "./" + target.name if name == "./" else self.tmp / (role + "." + name)
                command = [a.replace("{}", str(target)) if isinstance(a, str) else a for a in args]
                command += ["-m", "R@2", "--" + option, other]
                command += self.OUTPUTS[option] + ["--baseline", files["b"]] * (
                    option == "junit" and "--baseline" not in command)
                with self.subTest(role=role, option=option, name=name):
                    home = os.getcwd()
                    os.chdir(self.tmp)
                    try:
                        rejected(self, *cli(*command), "which is read or written already")
                    finally:
                        os.chdir(home)
                    self.assertEqual(target.read_text(), "x")


class InterruptTest(TempDirTestCase):
    @unittest.skipUnless(hasattr(os, "mkfifo"), "needs named pipes")
    def test_ctrl_c_and_sigterm_say_one_line(self):
        import signal
        run = self.write("r.txt", RUN_TXT)
        for sig, status, word in ((signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")):
            with self.subTest(word):
                fifo = self.tmp / word
                os.mkfifo(str(fifo))
                proc = subprocess.Popen([sys.executable, "-S", runnable_script(), "--qrels", str(fifo), "--run", str(run)],
                                        # a background job ignores
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        # Ctrl-C
                                        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
                deadline = time.monotonic() + 20
                while True:  # the writer's end opens once the tool is reading the pipe
                    try:
                        writer = os.open(str(fifo), os.O_WRONLY | os.O_NONBLOCK)
                        break
                    except OSError:
                        self.assertLess(time.monotonic(), deadline,
                                        "the tool never opened the pipe")
                        time.sleep(0.01)
                # else the signal can come before the read
                wait_until_blocked_reading(proc, deadline)
                proc.send_signal(sig)
                try:
                    out, err = proc.communicate(timeout=20)
                finally:
                    os.close(writer)
                    proc.kill()
                    proc.wait()
                self.assertEqual((proc.returncode, out, err), (status, b"", b"rag_retrieval_eval: %s\n" % word.encode()))


class TrecEvalFormTest(TempDirTestCase):
    """trec_eval's own command line, QRELS RUN with its flags, and its names in ours.

    q1 ranks x (unlabeled), a (grade 1), c (grade 2): AP (1/2 + 2/3) / 2; q2 ranks z, missing d:
    AP 0; q3 is labeled (nothing relevant) without a ranking; q9 is ranked without labels.
    """

    def setUp(self):
        super().setUp()
        self.qrels = self.write("qrels", "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 d 1\nq3 0 e 0\n")
        self.run = self.write("run", "q1 Q0 x 1 3.0 tagA\nq1 Q0 a 2 2.0 tagA\nq1 Q0 c 3 1.0 tagA\n"
                                     "q2 Q0 z 1 1.0 tagA\nq9 Q0 a 1 1.0 tagB\n# a comment\n")

    SKIPPED = ("rag_retrieval_eval: note: 1 query labeled, not ranked ('q3'): the means are over "
               "the 2 ranked, as in trec_eval 9 (10 stops; -c scores them 0)\n")

    def trec(self, *flags):
        status, out, err = cli(*flags, self.qrels, self.run)
        self.assertEqual((status, err), (0, "" if "-c" in flags else self.SKIPPED), err)
        return out

    def test_layout_per_query_then_all(self):
        ap = (1 / 2 + 2 / 3) / 2
        line = "%-22s\t%s\t%s".__mod__
        self.assertEqual(self.trec("-q", "-m", "P.2,1", "-mmap", "-m", "num_ret", "-m", "gm_map", "-m", "runid"),
                         "\n".join([line(("num_ret", "q1", "3")), line(("map", "q1", "%6.4f" % ap)),
                                    line(("P_1", "q1", "0.0000")), line(("P_2", "q1", "0.5000")),
                                    line(("num_ret", "q2", "1")), line(("map", "q2", "0.0000")),
                                    line(("P_1", "q2", "0.0000")), line(("P_2", "q2", "0.0000")),
                                    # the last line's tag, as trec_eval keeps it
                                    line(("runid", "all", "tagB")),
                                    line(("num_ret", "all", "4")), line(("map", "all", "%6.4f" % (ap / 2))),
                                    line(("gm_map", "all", "%6.4f" % math.sqrt(ap * 0.00001))),
                                    line(("P_1", "all", "0.0000")), line(("P_2", "all", "0.2500"))]) + "\n")

    def test_runid_of_a_run_read_through_gzip_or_from_standard_input(self):
        packed = self.write("run.gz", gzip.compress(self.run.read_bytes()))
        want = "%-22s\tall\ttagB\n" % "runid"
        self.assertEqual(self.trec("-m", "runid").replace(str(self.run), ""), want)
        self.assertEqual(cli("-m", "runid", self.qrels, packed)[:2], (0, want))
        self.assertEqual(cli("-m", "runid", self.qrels, "-", stdin=self.run.read_bytes())[:2], (0, want))
        self.assertEqual(cli("-m", "runid", self.qrels, "-", stdin=b"q1 Q0 a 1 1 tagC\n")[:2],
                         (0, want.replace("tagB", "tagC")))  # another standard input, read anew

    @unittest.skipUnless(hasattr(os, "mkfifo"), "no named pipes here")
    def test_runid_of_a_named_pipe_read_once(self):
        fifo = self.tmp / "run.fifo"
        os.mkfifo(fifo)
        writer = threading.Thread(target=fifo.write_bytes, args=(self.run.read_bytes(),), daemon=True)
        # a second open of the pipe would wait for a writer forever: the timeout fails it
        writer.start()
        status, out, err = cli_process("-m", "runid", self.qrels, fifo, timeout=30)
        writer.join(5)
        self.assertEqual((status, out, err), (0, "%-22s\tall\ttagB\n" % "runid", self.SKIPPED))

    def test_json_files_in_trec_eval_form_have_no_tag(self):
        qrels = self.write("q.json", json.dumps({"q1": {"a": 1, "c": 2}, "q2": {"d": 1}}))
        run = self.write("r.json", json.dumps({"q1": ["x", "a", "c"], "q2": ["z"]}, indent=1))
        self.assertEqual(cli("-m", "runid", "-m", "map", qrels, run)[:2],
                         (0, "%-22s\tall\t\n%-22s\tall\t%6.4f\n" % ("runid", "map", (1 / 2 + 2 / 3) / 2 / 2)))
        self.assertEqual(cli("-m", "runid", qrels, FIXTURE)[:2], (0, "%-22s\tall\t\n" % "runid"))
        for given in (["--run", FIXTURE, "--qrels"], []):  # the fixture's last line has six fields
            with self.subTest(given):
                out = cli(*given, FIXTURE, "-m", "R@3 runid", "--format", "trec")[1]
                self.assertIn("runid\tall\t\n", out)

    def test_flags_attached_or_apart(self):
        ap = (1 / 2 + 2 / 3) / 2
        cases = {("-m", "map"): ap / 2,  # q1, q2: q3 has no ranking, q9 no labels
                 ("-c", "-m", "map"): ap / 3,  # q3 scores 0
                 ("-l2", "-m", "map"): (1 / 3) / 2,  # only c is relevant; q2's d is not: 0
                 ("-l", "2", "-m", "map"): (1 / 3) / 2,
                 ("-M1", "-mmap"): 0.0,  # q1's first document is x
                 ("-J", "-N", "100", "-m", "map"): 1.0 / 2}  # x dropped: a, c at ranks 1 and 2
        for flags, want in cases.items():
            with self.subTest(flags):
                self.assertEqual(self.trec(*flags), "%-22s\tall\t%6.4f\n" % ("map", want))

    def test_nicknames_and_the_official_order(self):
        official = [line.split("\t")[0].strip() for line in self.trec().splitlines()]
        self.assertEqual(official[:7], ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map"])
        self.assertEqual(official[-9:], ["P_%d" % k for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)])
        everything = [line.split("\t")[0].strip() for line in self.trec("-m", "all_trec").splitlines()]
        self.assertEqual(everything[:len(official)], official)
        self.assertEqual(everything[-11:], ["set_P", "set_relative_P", "set_recall", "set_map", "set_F",
                                            "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj_5", "unj_10", "unj_20"])
        self.assertEqual(self.trec("-m", "num_q", "-m", "num_q"), "%-22s\tall\t2\n" % "num_q")

    def test_rejections(self):
        for flags, message in [
                (["-m", "mapp"], "-m: trec_eval has no measure 'mapp' (did you mean "
                                 "map or gm_map?)"),
                (["-m", "P.x"], "trec_eval's P takes numbers after its dot, as in "
                                "P.5,10, not 'x'"),
                (["-m", "map.5"], "trec_eval's map takes no parameters, not '5'"),
                (["-l", "x"], "-l must be an integer >= 0, not 'x'"),
                (["-M", "0"], "-M must be a positive integer, not '0'"),
                (["-N", "x"], "-N must be an integer >= 0, not 'x'"),
                (["--baseline", "b"], "unrecognized arguments: RUN: trec_eval's form is QRELS RUN "
                                      "with its flags only; ours takes --qrels, --run")]:
            with self.subTest(flags):
                status, out, err = cli(*flags, self.qrels, self.run)
                self.assertEqual((status, out), (2, ""))
                self.assertIn(message.replace("RUN", str(self.run), 1), err)

    def test_trec_names_in_our_grammar(self):
        ours = cli("--qrels", self.qrels, "--run", self.run, "-m", "AP,nDCG@10,P@5", "--unlabeled", "skip",
                   "--no-relevant", "zero")
        theirs = cli("--qrels", self.qrels, "--run", self.run, "-m", "map,ndcg_cut_10", "-m", "P_5",
                     "--unlabeled", "skip", "--no-relevant", "zero")
        self.assertEqual(without_inputs(theirs), without_inputs(ours))
        self.assertIn('"nDCG@10"', cli("--qrels", self.qrels, "--run", self.run, "-m", "ndcg_cut.10",
                                       "--unlabeled", "skip", "--missing-run", "zero", "--no-relevant", "zero")[1])
        status, out, err = cli("--qrels", self.qrels, "--run", self.run, "-m", "recip_rnk")
        self.assertEqual((status, out), (2, ""))
        self.assertIn("unknown measure 'recip_rnk' (did you mean recip_rank?)", err)

    def test_geometric_means(self):
        """GMAP and GMBpref: a query's value is AP's or Bpref's; the mean is geometric, 0 floored at 1e-5."""
        result = rre.score_run({"q1": ["a"], "q2": ["b"]}, {"q1": ["a"], "q2": ["x"]}, "GMAP,GMBpref,AP")
        self.assertEqual(result["per_query"]["q1"], {"GMAP": 1.0, "GMBpref": 1.0, "AP": 1.0})
        self.assertAlmostEqual(result["measures"]["GMAP"], math.sqrt(0.00001), places=15)
        self.assertAlmostEqual(result["measures"]["GMBpref"], math.sqrt(0.00001), places=15)
        self.assertEqual(rre.format_trec(result).splitlines()[-3:-1],
                         ["gm_map\tall\t%r" % result["measures"]["GMAP"], "gm_bpref\tall\t%r" % result["measures"]["GMBpref"]])


class TrecEvalEdgesTest(TempDirTestCase):
    """trec_eval's form at its edges (issue 48), each checked against trec_eval 10 built from its
    source.  q1 ranks a (grade 1), c (0), b (2); q2 ranks z (unlabeled), misses a (1); q3 is
    labeled (e, 1) without a ranking.  P@5: q1 2/5, q2 0."""

    SKIPPED = "note: 1 query labeled, not ranked ('q3'): the means are over the 2 ranked"

    def setUp(self):
        super().setUp()
        self.qrels = self.write("qrels", "q1 0 a 1\nq1 0 b 2\nq1 0 c 0\nq2 0 a 1\nq3 0 e 1\n")
        self.run = self.write("run", "q1 Q0 a 1 3.0 tagA\nq1 Q0 c 2 2.0 tagA\nq1 Q0 b 3 1.0 tagA\n"
                                     "q2 Q0 z 1 1.0 tagA\n")
        self.ours = ["--qrels", self.qrels, "--run", self.run, "--missing-run", "skip"]

    def line(self, name, value, qid="all"):
        return "%-22s\t%s\t%s\n" % (name, qid, value)

    def test_a_run_without_tags_has_an_empty_runid(self):
        untagged = self.write("untagged", "q1 Q0 a 1 3.0\n")  # five fields: the tag is optional
        self.assertEqual(cli("-m", "runid", self.qrels, untagged)[:2], (0, self.line("runid", "")))

    def test_a_labeled_query_without_ranking_is_counted_on_stderr(self):
        status, out, err = cli("-m", "P.5", self.qrels, self.run)
        self.assertEqual((status, out), (0, self.line("P_5", "0.2000")))  # (0.4 + 0) / 2
        self.assertEqual(err, "rag_retrieval_eval: %s, as in trec_eval 9 (10 stops; -c scores "
                              "them 0)\n" % self.SKIPPED)
        self.assertEqual(cli("-c", "-m", "P.5", self.qrels, self.run),
                         (0, self.line("P_5", "0.1333"), ""))

    def test_the_first_parameters_win_and_the_others_are_named(self):
        status, out, err = cli("-c", "-m", "P.5", "-m", "P.10", "-m", "P", self.qrels, self.run)
        self.assertEqual((status, out), (0, self.line("P_5", "0.1333")))
        self.assertEqual(err, "rag_retrieval_eval: note: -m P.10 is ignored: trec_eval keeps a "
                              "measure's first parameters, P.5\n")  # P alone takes nothing away
        self.assertEqual(cli("-c", "-m", "P", "-m", "P.10", self.qrels, self.run),
                         (0, self.line("P_10", "0.0667"), ""))
        self.assertEqual(cli("-c", "-m", "P.5", "-m", "P.5", self.qrels, self.run)[2], "")

    def test_extreme_values_are_refused_in_one_line_in_every_form(self):
        trec = [("P.nan", "trec_eval's P takes numbers after its dot, as in P.5,10, not 'nan'"),
                ("recall.-inf", "not '-inf'"), ("ndcg_cut.1e400", "not '1e400'"),
                ("rbp.p=1e200", "'RBP(p=1e200)': p is a number from 0 to 1"),
                ("rbp.p=2", "p is a number from 0 to 1"),
                ("rbp.p=1e-310", "p must be a number a float holds (0, or 2.2e-308 to 1.8e308"),
                ("ndcg.1=1e18", "a gain is at most 2**53 in size"),
                ("G.1=1e17", "'G(gains={1:1e17})': a gain is at most 2**53"),
                ("utility.1e308,1e308,0,0", "weights are 4 numbers {a,b,c,d}, each at most 2**53")]
        ours = [("RBP(p=1e-310)", "p must be a number a float holds"),
                ("RBO(p=1e-310)", "p must be"), ("RBP(p=1e200)", "p is a number from 0 to 1"),
                ("RBPResid(p=-0.5)", "from 0 to 1"),
                ("nDCG(gains={0:0,1:1e18})", "a gain is at most 2**53"),
                ("Utility(weights={1e308,1e308,0,0})", "each at most 2**53")]
        for measure, message in trec:
            with self.subTest(form="trec_eval's", measure=measure):
                rejected(self, *cli("-m", measure, self.qrels, self.run), message)
        for measure, message in trec + ours:
            with self.subTest(form="ours", measure=measure):
                rejected(self, *cli(*self.ours, "--baseline", self.run, "-m", measure), message)
            with self.subTest(form="the library", measure=measure):
                with self.assertRaises(rre.EvalError) as ctx:
                    rre.score_run({"q1": {"a": 1}}, {"q1": ["a"]}, measure)
                self.assertIn(message, str(ctx.exception))

    def test_the_limits_themselves_are_taken(self):
        for measure, taken in [("RBP(p=0)", True), ("RBP(p=1)", True), ("RBO(p=0)", False),
                               ("RBO(p=1)", False), ("RBP(p=2.2250738585072014e-308)", True),
                               ("nDCG(gains={1:9007199254740992})", True),
                               ("nDCG(gains={1:-9007199254740994})", False),
                               ("Utility(weights={9007199254740992,0,0,-9007199254740992})", True),
                               ("Utility(weights={9007199254740994,0,0,0})", False)]:
            with self.subTest(measure):
                status, out, err = cli(*self.ours, "--baseline", self.run, "-m", measure)
                self.assertEqual(status, 0 if taken else 2, err)
        rejected(self, *cli("-m", "P.5,nan", self.qrels, self.run), "not '5,nan'")
        for gains, taken in [(2 ** 53 - 4, True), (2 ** 53 - 3, False)]:
            with self.subTest(gains=gains):  # G: gains and the 3 ranked add up to 2**53 - 1, 2**53
                qrels = self.write("g", "q1 0 a %d\nq1 0 b 1\n" % (gains - 1))
                status, out, err = cli("-m", "G", qrels, self.run)
                self.assertEqual(status, 0 if taken else 2, err)
                self.assertIn("" if taken else "as G(gains={%d:1})" % (gains - 1), err)
        all_listed = rre.score_run({"q1": {"a": 1, "b": 2, "c": 0}}, {"q1": ["a", "c", "b"]},
                                   "RBP(p=0.8,gains={0:0.5,1:1,2:0.5})")["measures"]
        self.assertAlmostEqual(list(all_listed.values())[0], 0.2 * (1 + 0.8 * 0.5 + 0.64 * 0.5),
                               delta=1e-12)  # within [0, 1]: not scaled

    def test_grades_near_1e17(self):
        big = self.write("big", "q1 0 a 100000000000000000\nq1 0 b 99999999999999999\n")
        for argv in (["-m", "G", big, self.run],
                     ["--qrels", big, "--run", self.run, "-m", "G", "--unlabeled", "skip"]):
            with self.subTest(argv[0]):  # trec_eval: "Can't calculate measure 'G'", status 4
                rejected(self, *cli(*argv), "G: the gains of a query add up past 2**53")
        status, out, _ = cli("--qrels", big, "--run", self.run, "--unlabeled", "skip", "-m",
                             "G(gains={100000000000000000:2,99999999999999999:1}),RBP",
                             "--format", "json")
        self.assertEqual(status, 0)  # RBP's scale found without walking 1e17 grades
        measures = json.loads(out)["measures"]  # a (gain 2) at 1, b (1) at 3
        self.assertAlmostEqual(measures["G(gains={99999999999999999:1,100000000000000000:2})"],
                               (2 / math.log2(2) + 1 / math.log2(3)) / 3, delta=1e-12)
        rbp = 0.2 * (1.0 + 0.64 * (1e17 - 1) / 1e17)  # grades scaled by the largest
        self.assertAlmostEqual(measures["RBP"], rbp, delta=1e-12)

    def test_rbp_scales_gains_by_their_range_and_zero_as_trec_eval(self):
        labels, ranking = {"q1": {"a": 1, "b": 2, "c": 0}}, {"q1": ["a", "c", "b"]}
        for gains, want in [("{0:5}", 0.2 * (1 / 5 + 0.8 * 5 / 5 + 0.64 * 2 / 5)),
                            ("{0:2,1:3,2:4}", 0.2 * (3 / 4 + 0.8 * 2 / 4 + 0.64 * 4 / 4)),
                            ("{0:-1,1:-2,2:-3}", 0.2 * (1 / 3 + 0.8 * 2 / 3 + 0.64 * 0 / 3)),
                            ("{1:0.5,2:0.7}", 0.2 * (0.5 + 0.64 * 0.7)),
                            ("{2:9}", 0.2 * (1 / 9 + 0.64))]:  # {0:5}: over 0..5, not 1..5
            with self.subTest(gains):  # trec_eval 10: rbp.p=0.8,0=5 ... 0.2512, 0.3580, 0.1733
                measure = "RBP(p=0.8,gains=%s)" % gains
                measures = rre.score_run(labels, ranking, measure)["measures"]
                self.assertAlmostEqual(list(measures.values())[0], want, delta=1e-12)

    def test_tiny_values_keep_a_finite_interval(self):
        late = self.write("late", "q1 Q0 c 1 2.0 t\nq1 Q0 a 2 1.0 t\nq2 Q0 a 1 1.0 t\n")
        status, out, err = cli("--qrels", self.qrels, "--run", late, "--missing-run", "skip",
                               "-m", "RBP(p=1e-300)", "--ci", "--format", "json")
        low, high = json.loads(out)["ci95"]["RBP(p=1e-300)"]  # q1: a at rank 2, 1e-300; q2: 1 - p
        self.assertEqual(status, 0, err)
        self.assertAlmostEqual(low, 1e-300 / 2, delta=1e-9)
        self.assertLessEqual(high, 1.0)

    def test_trec_eval_takes_these_and_so_do_we(self):
        ndcg = (1 + 1e-5) / (2 + 1e-5 / math.log2(3))  # q1: a 1e-5, b 2; the ideal 2, 1e-5
        for measure, name, value in [("rbp_resid.p=0.5", "rbp_resid_p=0.5", "0.5000"),
                                     ("ndcg.1=0.00001", "ndcg_1=0.00001", "%6.4f" % (ndcg / 2))]:
            with self.subTest(measure):  # rbp_resid: q1 all judged (0), q2 none (1)
                self.assertEqual(cli("-m", measure, self.qrels, self.run)[:2],
                                 (0, self.line(name, value)))
        both = "ndcg.1=0.00001,rbp_resid.p=0.5"
        status, out, _ = cli(*self.ours, "-m", both, "--format", "json")
        self.assertEqual(status, 0)
        self.assertEqual(json.loads(out)["measures"],
                         {"nDCG(gains={1:1e-05})": ndcg / 2, "RBPResid(p=0.5)": 0.5})
        rejected(self, *cli("-m", "P.5", "-", "-", stdin=b"q1 0 a 1\n"),
                 "standard input can be read once: '-' and '-' given for two inputs")

    def test_did_you_mean_offers_what_the_form_in_use_takes(self):
        trec, ours = [self.qrels, self.run], self.ours + ["-m"]
        for argv, said, unsaid in [
                (["-m", "ndcg_ct"] + trec, "(did you mean ndcg_cut or ndcg or ndcg_rel?)", "@k"),
                (["-m", "offical"] + trec, "(did you mean official?)", "@k"),
                (ours + ["num_rel_rett"], "unknown measure 'num_rel_rett' (did you mean "
                                          "num_rel_ret", "parameter"),
                (ours + ["Rprec_mul"], "unknown measure 'Rprec_mul' (did you mean Rprec_mult or "
                                       "Rprec or RprecMult@m?)", "takes no parameters"),
                (ours + ["num_qq"], "'num_qq' (did you mean num_ret or num_rel?)", "num_q ")]:
            with self.subTest(argv[1] if argv[0] == "-m" else argv[-1]):
                status, out, err = cli(*argv)
                rejected(self, status, out, err, said)
                self.assertNotIn(unsaid, err)
        form = "trec_eval's form is QRELS RUN with its flags only; ours takes --qrels, --run, "
        # -q is ours too (--per-query: QuickFormTest)
        for flags, said in [(["-c", "-M10"], form + "--missing-run zero for -c, --depth for -M10")]:
            with self.subTest(flags):
                rejected(self, *cli(*flags, "--qrels", self.qrels, "--run", self.run),
                         "unrecognized arguments: %s: %s" % (" ".join(flags), said))
        rejected(self, *cli("-q", "-c", self.qrels, self.run, "--format", "json"),
                 "unrecognized arguments: -c %s: %s--missing-run zero for -c" % (self.run, form))
        rejected(self, *cli("--kk", "--format", "json", self.qrels, self.run),  # a file beside
                 "unrecognized arguments: --kk %s: %s" % (self.run, form[:-2]))  # an unknown flag
        rejected(self, *cli("-m", "P@5", self.qrels, self.run), "trec_eval has no measure 'P@5'")

    def test_runid_and_relstring(self):
        want = self.line("runid", "tagA")
        commented = self.write("commented", self.run.read_text() + "  #x y z w v trailing\n\n")
        self.assertEqual(cli("-c", "-m", "runid", self.qrels, commented), (0, want, ""))
        unended = self.write("unended.gz", gzip.compress(b"q1 Q0 a 1 1 tagA\nq1 Q0 b 2 0 tagZ"))
        self.assertEqual(cli("-c", "-m", "runid", self.qrels, unended)[1],
                         self.line("runid", "tagZ"))  # the last line, though it has no newline
        long_id = "T" * 70000  # longer than the 64 KiB read back from the end
        for name in ("long", "long.gz"):
            text = self.run.read_text() + "q2 Q0 y 2 0.5 %s\n# done\n" % long_id
            path = self.write(name, gzip.compress(text.encode()) if name.endswith(".gz") else text)
            with self.subTest(name):
                self.assertEqual(cli("-c", "-m", "runid", self.qrels, path),
                                 (0, self.line("runid", long_id), ""))
        self.assertEqual(cli("-c", "-m", "relstring", self.qrels, self.run),  # not an empty line
                         (0, "", "rag_retrieval_eval: note: relstring is a query's line, and no "
                                 "mean: give -q to print it\n"))
        self.assertEqual(cli("-c", "-m", "all_trec", self.qrels, self.run)[2], "")  # unsaid there

    def test_what_the_trec_format_leaves_out_is_said(self):
        trec = self.ours + ["--format", "trec"]
        rejected(self, *cli(*trec, "-m", "runid"),
                 "-m runid adds the run's tag to --format trec's measures")
        status, out, err = cli(*trec, "-m", "runid,P@5", "--ci", "--ties")
        self.assertEqual((status, out), (0, "P_5\tq1\t0.4\nP_5\tq2\t0.0\nrunid\tall\ttagA\n"
                                            "num_q\tall\t2\nP_5\tall\t0.2\n"))
        self.assertIn("note: --format trec has no place for --ci or --ties: use json", err)
        status, out, err = cli(*self.ours, "-m", "GMAP,P@5,GMBpref,NumRet", "--ci")
        self.assertEqual(set(json.loads(out)["ci95"]), {"P@5"})
        self.assertIn("note: --ci draws no interval for GMAP, GMBpref, NumRet: its bootstrap is "
                      "of arithmetic means", err)
        status, out, err = cli(*trec, "-m", "RelString@5,P@5", "--plot", self.tmp / "p.svg")
        self.assertEqual(status, 0, err)  # RelString has no mean to draw: the plot holds P@k only
        svg = (self.tmp / "p.svg").read_text()
        self.assertIn("P@k", svg)
        self.assertNotIn("RelString", svg)

class QuickFormTest(TempDirTestCase):
    """Our form's -q (--per-query), and trec_eval's nicknames (official, set, all_trec) in our
    -m: the measures trec_eval's form prints, but the lines that measure no query."""

    def setUp(self):
        super().setUp()
        # q1 ranks a (1), c (0), b (2) and a tie; q2 misses its relevant a behind z, y
        self.qrels = self.write("qrels", "q1 0 a 1\nq1 0 b 2\nq1 0 c 0\nq2 0 a 1\nq2 0 y 0\n")
        self.run = self.write("run", "q1 Q0 a 1 3.0 tagA\nq1 Q0 c 2 2.0 tagA\nq1 Q0 b 3 2.0 tagA\n"
                                     "q2 Q0 z 1 1.0 tagA\nq2 Q0 y 2 0.5 tagA\n")
        self.ours = ["--qrels", self.qrels, "--run", self.run]

    def test_q_gives_a_row_per_query_in_table_markdown_and_csv(self):
        for fmt in ("table", "markdown", "csv", "json"):
            with self.subTest(fmt):
                short = cli(*self.ours, "-m", "P@2,RR", "-q", "--format", fmt)
                self.assertEqual(short, cli(*self.ours, "-m", "P@2,RR", "--per-query", "--format", fmt))
                self.assertEqual(short[0], 0, short[2])
        table = cli(*self.ours, "-m", "P@2,RR", "-q", "--format", "table")[1].splitlines()
        self.assertEqual([line.split() for line in table[:4]],
                         [["query", "P@2", "RR"], ["all", "0.2500", "0.5000"], ["q1", "0.5000", "1.0000"],
                          ["q2", "0.0000", "0.0000"]])
        markdown = cli(*self.ours, "-m", "P@2,RR", "-q", "--format", "markdown")[1]
        self.assertIn("| q1 | 0.5000 | 1.0000 |\n| q2 | 0.0000 | 0.0000 |", markdown)
        self.assertNotIn("| q1 |", cli(*self.ours, "-m", "P@2,RR", "--format", "markdown")[1])
        status, out, _ = cli(*self.ours, "-m", "P@2,RR", "-q", "--format", "csv")
        self.assertEqual(out, "query,P@2,RR\nq1,0.5,1.0\nq2,0.0,0.0\n")  # csv: a row per query always
        # several runs: csv has a row per query of each; the reports' table of runs has no place
        other = self.write("other", "q1 Q0 b 1 1.0 tagB\nq2 Q0 a 1 1.0 tagB\n")
        status, out, _ = cli(*self.ours, "--run", other, "-m", "RR", "-q", "--format", "csv")
        self.assertEqual(out.splitlines()[1:], ["q1,1.0,1.0", "q2,0.0,1.0"])
        for fmt in ("table", "markdown"):
            with self.subTest(fmt):
                rejected(self, *cli(*self.ours, "--run", other, "-m", "RR", "-q", "--format", fmt),
                         "--per-query holds one run")
        # trec_eval's form keeps its own -q
        self.assertIn("P_5                   \tq1\t0.4000\n",
                      cli("-q", "-m", "P.5", self.qrels, self.run)[1])

    def test_nicknames_are_the_measures_trec_evals_form_prints(self):
        for nickname in ("official", "set", "all_trec"):
            with self.subTest(nickname):
                trec = cli("-q", "-m", nickname, self.qrels, self.run)[1].splitlines()
                want = [line.split("\t") for line in trec if line.split()[0] not in rre.NOT_OF_A_QUERY]
                status, out, err = cli(*self.ours, "-m", nickname.upper(), "--format", "trec")
                self.assertEqual(status, 0, err)
                got = [line.split("\t") for line in out.splitlines() if line.split()[0] != "num_q"]
                # trec_eval prints a geometric mean in the summary only
                got = [row for row in got if row[1] == "all" or not row[0].startswith("gm_")]
                self.assertEqual(sorted((n, q) for n, q, _ in got), sorted((n.strip(), q) for n, q, _ in want))
                values = {(n.strip(), q): float(v) for n, q, v in want}
                for n, q, v in got:
                    self.assertAlmostEqual(float(v), values[n, q], places=4, msg=(n, q))
        # not the run's tag, the number of queries, nor relstring's text
        self.assertEqual(rre.NOT_OF_A_QUERY, ("runid", "num_q", "relstring"))

    def test_nicknames_combine_and_collapse(self):
        names = [s.name for s in rre.parse_measures(["official,R@5", "map,AP,set"])]
        official = [s.name for s in rre.nickname_specs("official")]
        self.assertEqual(names[:len(official) + 1], official + ["R@5"])
        self.assertEqual(len(names), len(set(names)))  # map is AP, already in official
        self.assertEqual(names[len(official) + 1:], ["Utility", "SetP", "SetRelP", "SetR", "SetAP", "SetF"])
        result = rre.score_run({"q1": {"a": 1}}, {"q1": ["a"]}, "set")
        self.assertEqual(list(result["measures"]), [s.name for s in rre.nickname_specs("set")])
        self.assertEqual(result["measures"]["SetF"], 1.0)
        rejected(self, *cli(*self.ours, "-m", "official.5"), "unknown measure 'official.5'")



# Each test class under the module section its feature lives in; the classes follow the
# sections' order (StructureTest keeps it so): "(whole)" first, for the tool as a user meets it,
# "(file)" last, for the file itself.
TEST_SECTIONS = {
    "ReadmeRecipesTest": "(whole)", "SeedFixtureTest": "(whole)", "LibraryTest": "(whole)",
    "FirstHourTest": "(whole)", "OlderPythonTest": "(whole)",
    "RankingTest": "Judged rankings",
    "MeasureTest": "Measures", "MeasureParametersTest": "Measures",
    "IncompleteLabelsTest": "Measures", "AllTrecMeasuresTest": "Measures",
    "EvidenceTest": "Measures", "BudgetAndFloorTest": "Measures", "NoAnswerTest": "Measures",
    "AgreementTest": "Measures", "ErrTest": "Measures", "NamesTest": "Measures",
    "AsToolTest": "Dialects",
    "EdgeTest": "Evaluation", "TieBoundsTest": "Evaluation", "UnjudgedBoundsTest": "Evaluation",
    "StatisticsTest": "Statistics", "StatisticsGoldenTest": "Statistics",
    "StatisticsAtScaleTest": "Statistics", "ComparisonTest": "Statistics",
    "ReplicateTest": "Statistics", "ReplicateRejectionTest": "Statistics",
    "PowerAndNoninferiorityTest": "Statistics", "NothingToGateTest": "Statistics",
    "GateRegistryTest": "Statistics", "FloorTest": "Statistics", "ClustersTest": "Statistics",
    "GroupsTest": "Statistics", "GroupRejectionTest": "Statistics",
    "AgreementAsChangeTest": "Statistics", "LabelAgreementTest": "Statistics",
    "RagRealitiesTest": "Diagnostics",
    "ManifestTest": "Manifest", "SavedBaselineTest": "Manifest",
    "FixtureRejectionTest": "Readers", "FixtureAcceptanceTest": "Readers",
    "TrecInputTest": "Readers", "TrecRejectionTest": "Readers", "ReferenceTrecRunTest": "Readers",
    "FastTrecRunTest": "Readers", "ReferenceJsonTest": "Readers", "FastJsonTest": "Readers",
    "FastPathSwitchTest": "Readers", "TsvAndJsonLinesTest": "Readers",
    "ReadersOnRealFilesTest": "Readers", "LogsAsWrittenTest": "Readers",
    "RoleRulesTest": "Readers", "InputTwinsTest": "Readers", "RagTwinsTest": "Readers",
    "ExplainTest": "Pipeline", "PoolTest": "Pipeline", "StageTest": "Pipeline",
    "FunnelTest": "Pipeline", "AccessTest": "Pipeline", "LabelsCompareTest": "Pipeline",
    "LabelVersionsTest": "Pipeline", "LabelRejectionTest": "Pipeline", "LabelReadmeTest": "Pipeline",
    "LibraryApiTest": "Library",
    "ReportFormatsTest": "Output", "ResultRecordsTest": "Output", "SeveralRunsTest": "Output",
    "PapersTest": "Output", "PlotTest": "Output", "SideOutputsTest": "Output",
    "JunitTest": "Output",
    "ProcessTest": "Command line", "OutputFilesTest": "Command line",
    "InterruptTest": "Command line", "TrecEvalFormTest": "Command line",
    "TrecEvalEdgesTest": "Command line", "QuickFormTest": "Command line",
    "StructureTest": "(file)",
}


class StructureTest(unittest.TestCase):
    """The shape a newcomer relies on: sections in pipeline order, each decision in one place."""

    @classmethod
    def setUpClass(cls):
        import ast
        cls.source = SCRIPT.read_text(encoding="utf-8")
        cls.tree = ast.parse(cls.source)
        cls.nodes = list(ast.walk(cls.tree))  # walked once: each walk of 7,000 lines takes 0.3 s
        cls.lines = lines = cls.source.split("\n")
        cls.sections = [i + 1 for i, line in enumerate(lines) if line.startswith("# === ")]
        cls.names = {}
        for node in cls.tree.body:
            for name in ([node.name] if hasattr(node, "name") else
                         [n.id for t in getattr(node, "targets", ()) for n in ast.walk(t) if type(n).__name__ == "Name"]):
                cls.names.setdefault(name, (cls.section(node.lineno), node))

    @classmethod
    def section(cls, line):
        return sum(1 for start in cls.sections if start <= line)

    def test_test_classes_follow_the_module_sections(self):
        sections = ["(whole)"] + re.findall(r"^# === (.*) ===$", self.source, re.M) + ["(file)"]
        here = sys.modules[__name__]
        tests = [name for name, value in vars(here).items() if isinstance(value, type)
                 and issubclass(value, unittest.TestCase)
                 and unittest.defaultTestLoader.getTestCaseNames(value)]
        self.assertEqual(sorted(tests), sorted(TEST_SECTIONS))
        order = [sections.index(TEST_SECTIONS[name]) for name in tests]
        self.assertEqual(order, sorted(order), [TEST_SECTIONS[name] for name in tests])

    def test_no_code_calls_up_into_a_later_section(self):
        import ast
        upward = [(name, used) for name, (section, node) in self.names.items()
                  for used in {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                  if used in self.names and self.names[used][0] > section]
        self.assertEqual(upward, [])
        self.assertIn("Map: the sections in pipeline order", rre.__doc__)
        # the map names every section
        for title in re.findall(r"^# === (.*) ===$", self.source, re.M):
            self.assertRegex(rre.__doc__, r"\n  %s " % re.escape(title))

    def test_help_starts_with_the_one_line_summary(self):
        self.assertEqual(rre.build_parser().format_help().split("\n\n")[1],
                         "Score saved retrieval rankings against relevance labels, exactly as trec_eval does; "
                         "with no\nlabels yet, say how much a run agrees with a baseline's rankings "
                         "(-m RBO,Overlap@10 --baseline).")  # the label-free use is named at once
        lines = rre.measure_help().splitlines()
        # every description in one column, whatever the spellings' length
        for spec in rre.MEASURES.values():
            self.assertEqual([line.find(spec.doc) for line in lines if spec.doc in line], [21], spec.name)

    def test_one_sniff_five_twins_short_functions(self):
        import ast
        calls = [n for n in self.nodes if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "sniff"]
        # a stream's, in load, and a JSON value's, in json_value
        self.assertLessEqual(len(calls), 2)
        twins = re.findall(r"^(\w+) = fast_(\w+) if FAST_PATHS else reference_(\w+)$", self.source, re.M)
        self.assertEqual(sorted(t[0] for t in twins if t[0] == t[1] == t[2]),
                         ["bootstrap_sums", "flip_hits", "json_rankings", "judged_trec_run", "length_lines"])
        # chosen where the fast twin is defined: after it, before any other definition
        for name, *_ in twins:
            after = [node for node in self.tree.body if node.lineno > self.names["fast_" + name][1].lineno
                     and hasattr(node, "name") and not node.name.startswith("_")]
            self.assertGreater(after[0].lineno, self.names[name][1].lineno, name)
        long = [(n.name, n.end_lineno - n.lineno + 1) for n in self.nodes
                if isinstance(n, ast.FunctionDef) and n.end_lineno - n.lineno + 1 > 40]
        self.assertEqual(long, [])

    def test_six_parameters_at_most_but_the_library_forwarders_of_one_line(self):
        import ast
        wide = [n.name for n in self.nodes if isinstance(n, ast.FunctionDef) and len(
            n.args.args + n.args.kwonlyargs) + bool(n.args.vararg) + bool(n.args.kwarg) > 6]
        self.assertEqual(sorted(wide), ["compare_runs", "score_run", "score_runs"])
        for name in wide:  # the docstring, then one statement that hands its keywords on
            body = self.names[name][1].body
            self.assertEqual((len(body), type(body[1]).__name__), (2, "Return"), name)
            self.assertIn("_library_call(locals()", self.lines[body[1].lineno - 1], name)

    def test_readers_one_signature_no_lambda(self):
        import inspect
        self.assertNotIn("lambda", inspect.getsource(rre.Role) + repr(rre.READERS))
        for role, reader in rre.READERS.items():
            self.assertTrue(issubclass(reader, rre.Role), role)
            for kind in ("lines", "records", "json"):
                func = getattr(reader, kind)
                if func is not None:
                    self.assertEqual(list(inspect.signature(func).parameters)[1:], ["source", "known"], (role, kind))
        # a FIXTURE is JSON: its text is read, and refused, as JSON
        self.assertIsNone(rre.READERS["fixture"].lines)

    def test_every_option_list_comes_from_the_table(self):
        self.assertEqual(rre.Config._fields, tuple(o.name for o in rre.OPTIONS))
        self.assertEqual(rre.Config()._asdict(), {o.name: o.default for o in rre.OPTIONS})
        self.assertEqual(sorted(rre.GATES), sorted(o.name for o in rre.OPTIONS if o.kind in ("limit", "floors")))
        self.assertEqual(list(rre.recorded_options(rre.Config())), [
            "relevance_level", "depth", "judged_only", "missing_run", "unlabeled", "no_relevant", "match", "duplicates",
            # the manifest's order: value options, then the seeds
            "chunk_separator", "seed", "permutations"])
        for word in ("max_mean_drop", "max_query_drop", "max_group_drop", '"seed", "permutations"'):
            self.assertNotIn("(%s," % word, self.source)  # no hand-written list of these options


if __name__ == "__main__":
    unittest.main()
