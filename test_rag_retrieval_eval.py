"""Tests for rag_retrieval_eval: python3 -m unittest -v

Golden values are computed by hand in the comments beside them; the CLI is
exercised through a real subprocess (exit status, stdout, stderr).
"""
import contextlib
import doctest
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

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


def cli(*args, stdin=None, cwd=None):
    """Run the real script; return (status, stdout, stderr)."""
    proc = subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], input=stdin,
                          capture_output=True, cwd=cwd)
    return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")


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
        status, out, err = cli(FIXTURE, "--k", "3")
        self.assertEqual((status, out, err), (0, SEED_STDOUT, ""))

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
                         "runs.q1[1]: query 'q1': document 'd1' appears twice (first at runs.q1[0])")

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


# (name, file bytes or None for no file, extra CLI args, fragments the one-line message must hold)
FIXTURE_REJECTIONS = [
    ("missing file", None, [], ["nope.json", "cannot read", "No such file"]),
    ("directory", "DIR", [], ["cannot read", "directory"]),
    ("empty file", b"", [], ["f.json", "file is empty"]),
    ("blank file", b"  \n", [], ["file is empty"]),
    ("not UTF-8", b'{"qrels": {"q1": ["d\xff"]}}', [], ["f.json:1", "not UTF-8", "0xff"]),
    ("invalid JSON", b'{"qrels": {"q1": ["d1"],\n "runs": }', [], ["f.json:2:10", "invalid JSON"]),
    ("deep nesting", b"[" * 100000 + b"]" * 100000, [], ["nested too deeply"]),
    ("top level list", b"[1, 2]", [], ['"qrels" and "runs"', "list"]),
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
    ("document key twice in scored run", b'{"qrels": {"q1": ["d1"]}, "runs": {"q1": {"d1": 1, "d1": 2}}}',
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
]


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

    def test_main_returns_status_in_process(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(rre.main([str(self.tmp / "missing.json")]), 2)
        self.assertIn("missing.json: cannot read", err.getvalue())


if __name__ == "__main__":
    unittest.main()
