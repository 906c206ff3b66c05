#!/usr/bin/env python3
"""Score saved retrieval rankings against relevance labels, exactly as trec_eval does; with no
labels yet, say how much a run agrees with a baseline's rankings (-m RBO,Overlap@10 --baseline).

Usage (python3 rag_retrieval_eval.py --help says more):
  python3 rag_retrieval_eval.py FIXTURE [--k K]        seed mode: recall@K and MRR@K
  python3 rag_retrieval_eval.py --qrels QRELS --run RUN [--run RUN2] [-m R@10,nDCG@10]
  ... --baseline APPROVED (a run, or its saved result) [--replicate RUN] [--max-mean-drop X]
      [--max-query-drop X] [--junit FILE.xml]
  ... --groups GROUPS [--max-group-drop X] [--format table] [--plot FILE.svg]
  ... --candidate-qrels JUDGE_QRELS [--run RUN ...] [--pool DISAGREEMENTS.jsonl]
  ... --baseline APPROVED --baseline-qrels OLDER_QRELS [--gate-on retrieval]
  python3 rag_retrieval_eval.py [-q] [-c] [-l N] [-M N] [-J] [-m all_trec] QRELS RUN
      trec_eval's form
Library (keyword-only options, the long options' names; bad data raises EvalError):
  evaluate(qrels, runs, k=3), score_run(qrels, run, ["R@5"]), compare_runs(qrels, approved,
  candidate, "R@5", max_query_drop=0.5), score_runs(qrels, {"a": run}), compare_labels(qrels,
  judge_qrels, runs={"a": run}), read_qrels(path), read_run(path)
Exit statuses: 0 evaluated; 1 a gate failed; 2 bad input or usage; 3 the output could not be
  written; 70 a bug of ours (the traceback, and a line asking for a report).

Map: the sections in pipeline order, each calling only into those above it.

  Section          Main names
  ---------------  ---------------------------------------------------------------------
  (constants)      OPTIONS (every option once) and Config (their values: the one options argument)
  Errors           EvalError, fail, given_twice, nothing_in, skipped_text: each fact worded once
  Validation       check_id(s), check_grade, check_score, check_cutoff, parse_fields
  Judged rankings  Judged, Ranking, Truth, Reading; judge_ranking, rank_scored, judge_run,
                   filtered_judged, within_budget: what every measure needs of a query;
                   Pipeline and held_ids (a stage holds only what the one before held),
                   Access and with_leaks (the documents a query may not read)
  Measures         MEASURES (@measure: each measure and its facts), Spec, Filter, parse_measure(s);
                   TREC_ORDER, trec_specs: trec_eval's names and parameters;
                   ALIASES, other_tools_spec: other tools' names for ours
  Dialects         TOOLS (--as: each tool's measures, rows of STEPS on ours), tool_specs,
                   tool_views (a ranking as another tool reads it), tool_value, as_block
  Evaluation       apply_policies, judge_queries, score_queries, run_evaluation, tie_bounds;
                   Result (a general result: its members once, in their JSON order, read as fields)
  Statistics       sign_flip_p, bootstrap_intervals, holm, compare, GATES (each gate once: its
                   option, needs and check), Breach (a gate's breach, a record), group_results,
                   check_floors, power and blind_warnings (how fine a gate can be);
                   two label sources: kappa, graded_alike, ordinal_alpha, tau_b, tau_ap
  Diagnostics      id_mismatch, coverage, check_same_labels
  Manifest         manifest, truth_digests (what a result was made on), Saved, check_saved
  Readers          open_input, text_lines, sniff (what a file or JSON value is), the
                   reader of each role (a Role: its files' readers, and value() for a library
                   call's Value; Index and AccessMap among them), READERS and load(path or
                   Value, role, Known): the one loader
  Pipeline         configure (a Config), Plan, make_plan, Inputs, load_inputs, load_truth,
                   evaluate_runs, runs_output (several runs, and their pairs), Approved,
                   Evaluated, saved_evaluation (a saved baseline);
                   a pipeline's Stages: load_stages (read last to first), staged (the Judged
                   record a stage=NAME measure reads);
                   evaluate_loaded's stages, each returning its blocks: described, explained;
                   the features a result gains: agreement_rows and agreement_curve (agreement
                   measures), explanations (--explain), funnel (the fates of relevant documents
                   along a pipeline: --stage, --index), unjudged_block (--unjudged-bounds),
                   pool_records (--pool), plotted_curves (--plot);
                   other labels: other_labels scores the runs on them too, label_agreement
                   and disagreements (--candidate-qrels), under_candidate and orderings (what
                   they do to the verdict), versions (--baseline-qrels: each change split, the
                   retrieval part gated: retrieval_breaches)
  Library          evaluate, score_run, compare_runs, score_runs, compare_labels, read_qrels,
                   read_run
  Output           format_json, format_trec, format_table, format_markdown, format_csv,
                   format_runs, notes; what two label sources say: label_tables, format_labels;
                   a paper's table: format_latex; the plot: format_svg
  Command line     build_parser (from OPTIONS, in HELP_GROUPS), check_usage, main, compute;
                   trec_eval_form, trec_eval_main, format_trec_eval: trec_eval's command line

Five speed twins, each chosen where it is defined (x = fast_x if FAST_PATHS else
reference_x), return what their reference returns: judged_trec_run, json_rankings,
length_lines, flip_hits, bootstrap_sums.  Standard library only; Python 3.9 or newer.
"""
__all__ = ["evaluate", "score_run", "compare_runs", "score_runs", "compare_labels", "read_qrels",
           "read_run", "check_ids", "EvalError", "__version__"]
__version__ = "1.0.0"

import sys

if sys.version_info < (3, 9):  # before anything an older Python cannot run
    _OLD = "rag_retrieval_eval needs Python 3.9 or newer, not %d.%d" % sys.version_info[:2]
    if __name__ != "__main__":
        raise ImportError(_OLD)
    sys.stderr.write("rag_retrieval_eval: error: %s\n" % _OLD)
    sys.exit(2)

# Modules that few commands use (csv, difflib, gzip, random, statistics, traceback) are
# imported inside the functions that use them: a command pays only for what it uses.
import argparse
import contextlib
import gc
import getopt
import hashlib
import io
import json
import math
import numbers
import os
import re
import signal
import time
import unicodedata
import zlib
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter, namedtuple
from decimal import Decimal
from functools import lru_cache, partial
from itertools import (accumulate, chain, combinations, compress, groupby, islice, repeat,
                       takewhile, tee)
from json.decoder import scanstring
from operator import eq, ge, getitem, gt, itemgetter, lt, truediv
from string import ascii_lowercase
from types import MappingProxyType

PROG = "rag_retrieval_eval"
# Five speed twins: each fast twin returns exactly what its reference returns, and is
# chosen where it is defined (x = fast_x if FAST_PATHS else reference_x).  A fast
# reader that cannot vouch for an input (a line it does not know, an error, an odd
# layout) declines, and the reference decides and words any message.
# False: every twin is the reference; no output changes
FAST_PATHS = True
DEFAULT_K = 3
# grades and cutoffs are 64-bit integers, as in trec_eval
INT_LIMIT = 2 ** 63
# the default of a mapping argument: empty, and no call can change it
NOTHING = MappingProxyType({})

# Statistics and diagnostics
# up to this many nonzero differences the sign-flip test enumerates all
EXACT_LIMIT = 16
# trec_eval's floor of a value whose log a geometric mean takes
MIN_GEO_MEAN = 0.00001
# resamples for every bootstrap interval
BOOTSTRAP = 1000
# a value in a bootstrap sum is rounded to 2**-62 of the largest |value|
BOOTSTRAP_BITS = 62
# resamples are drawn in rounds, each seeded on its own
BOOTSTRAP_ROUNDS = 8
# random words the fast bootstrap draws at once (one resample's, when more)
BOOTSTRAP_WORDS = 4096
# sign-flip draws made at once: memory stays flat whatever --permutations is
FLIP_ROUND = 8192
# a share of judged documents this much smaller earns a warning
COVERAGE_GAP = 0.1
# curves over k: every k up to this; past it, about as many again, spread evenly
PLOT_POINTS = 20
# a group mean over fewer queries is flagged in reports: noise, not signal
SMALL_GROUP = 5
# per-query breaches a report shows of each measure (JSON lists all)
BREACHES_SHOWN = 5
# unjudged=BOUNDED: --help and reasons say it so
ONLY_BOUNDED = "P@k, R@k, Success@k, RR, SetP, SetR and SetF"
# a stage's name, as --stage NAME=FILE and stage=NAME give it: no comma, parenthesis or '='
STAGE_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
STAGE_RULE = "a name is 1 to 64 ASCII letters, digits, '_', '-' or '.'"
# the funnel's rows besides the stages' (see funnel_rows): no stage is named as one
FUNNEL_ROWS = ("index", "run", "top", "budget")
# chunk suffixes the mismatch hint tries
SEPARATORS = ("#", "::", ":", "/", "|", "_", "-", ".")
# bins of per-query changes in the reports
HISTOGRAM = [("<= -0.5", lambda d: d <= -0.5), ("-0.5 .. -0.1", lambda d: -0.5 < d <= -0.1),
             ("-0.1 .. 0", lambda d: -0.1 < d < 0), ("unchanged", lambda d: d == 0),
             ("0 .. +0.1", lambda d: 0 < d < 0.1), ("+0.1 .. +0.5", lambda d: 0.1 <= d < 0.5),
             (">= +0.5", lambda d: d >= 0.5)]

# Inputs
# a fixture is {"qrels": {...}, "runs": {...}}, in this order
FIXTURE_KEYS = ("qrels", "runs")
QRELS_WIDTHS = {4: "4 columns (QID ITER DOCID GRADE)", 3: "3 columns (QID DOCID GRADE)"}
# BEIR's and MTEB's qrels/test.tsv
TSV_HEADER = ["query-id", "corpus-id", "score"]
# JSON Lines: one query a record, under the field names of the tools that write them
# (ours, Ragas', LlamaIndex's); other fields (the question, the answer) are ignored.
# --fields ROLE=KEY names them when a log uses others.
JSONL_FIELDS = {"query": ("query_id", "qid", "id"),
                "relevant": ("relevant", "reference_context_ids", "expected_ids"),
                "retrieved": ("retrieved", "retrieved_context_ids", "retrieved_ids"),
                # retrieval_gt: AutoRAG's AND-of-OR lists
                "evidence": ("evidence", "retrieval_gt"),
                # a list parallel to the ranking's IDs
                "tokens": ("tokens",),
                # parallel to the IDs
                "scores": ("retrieve_scores", "retrieved_scores", "scores"),
                # false: the corpus holds no answer
                "answerable": ("answerable",)}
# EmbeddingQAFinetuneDataset's JSON: labels under relevant_docs
LLAMAINDEX_DATASET = ("queries", "relevant_docs")
# what each role gives
ROLES = {"query": "query ID", "relevant": "labels", "retrieved": "ranking",
         "evidence": "evidence sets", "tokens": "token counts", "scores": "scores",
         "answerable": "answerability"}
# a --fields path: keys joined by '.', '[]' for each
_PATH = re.compile(r"[^.\[\]]+(\[\])?(\.[^.\[\]]+(\[\])?)*")
# what separates TREC columns: C's isspace(), as in trec_eval
ASCII_SPACE = " \t\n\r\x0b\x0c"
# a TREC text line this long is a missing line break, not data
MAX_LINE = 1 << 20
# bytes per read: a block's tokens stay in the CPU cache (1 MB: ~1.6x slower)
BLOCK = 64 << 10
# read once, however named
STDIN_NAMES = ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")
# files RAG tools write that are not text: their first bytes, and how to get JSON Lines
BINARY_FORMATS = (
    (b"PAR1", "a Parquet file (AutoRAG's, pandas')",
     "export JSON Lines from it first, as with pandas: "
     "pandas.read_parquet(%r).to_json(\"out.jsonl\", orient=\"records\", lines=True)"),
    (b"SQLite format 3\0", "an SQLite database", "export a table as JSON first: sqlite3 -json %r "
     "'select * from TABLE' > out.json"),
    (b"PK\x03\x04", "a zip archive",
     "unzip %r first, and give the JSON or JSON Lines file it holds"))
# what a refused repeat suggests
DUPLICATES_HINT = ": --duplicates first keeps its best-ranked place"

# Query policies: the choices for each case, the first the default, and the case
POLICIES = {"missing_run": (("error", "zero", "skip"),
                            "a labeled query with no ranking (zero: trec_eval -c)"),
            "unlabeled": (("error", "skip"), "a ranked query with no labels"),
            "no_relevant": (("error", "zero", "skip"),
                            "a labeled query none of whose labels is relevant")}
DEFAULT_POLICIES = {name: "error" for name in POLICIES}

# Every option, once: its name (the long option's, with underscores: the library's keyword
# too), default, kind (how the command line parses it and a library call is checked: see
# _argument and _checked_library_options), its stage (input: a file of a role; plan: how the
# evaluation is made; value: as plan, and as it changes per-query values a saved baseline must
# have been made with the same; recorded: as plan, and recorded in a result's manifest, as the
# value options are, but not checked; output), its help, its values (choices, or the lowest
# number; None: neither), its metavar (None: its kind's in METAVARS) and its short flag (None:
# none).  argparse, Config, the manifest's options, the saved baseline's checks, the output
# guard and the library's checks are built from it.
Option = namedtuple("Option", "name default kind stage help values metavar short",
                    defaults=(None, None, None))
# Another tool (--as; see Dialects): the version whose code was run to pin its numbers (the
# tests' AsToolTest) and the oldest whose definitions were read (--as TOOL@VERSION takes those
# between), its rows ('|' between them), the names it prints by default (@k at each of cutoffs),
# and the rows its older versions had: ((first version without it, row), ...), newest first.
Tool = namedtuple("Tool", "version oldest rows defaults cutoffs before", defaults=((), ()))
TOOLS = {
    "beir": Tool("2.2.0", "1.0.1", "NDCG@k nDCG drop ranonly r5 | MAP@k AP drop ranonly r5 | "
                 "Recall@k R drop ranonly r5 | P@k P drop ranonly r5 | "
                 "MRR@k RR drop stable r5 | R_cap@k RelP drop stable norel r5 | "
                 "Accuracy@k Success drop stable r5 | Hole@k Unjudged drop stable hole r5",
                 "NDCG@k MAP@k Recall@k P@k", (1, 3, 5, 10, 100, 1000)),
    "mteb": Tool("2.26.24", "2.18.18", "ndcg_at_k nDCG ranonly r5 | map_at_k AP ranonly r5 | "
                 "recall_at_k R ranonly r5 | precision_at_k P ranonly r5 | mrr_at_k RR ranonly | "
                 "hit_rate_at_k Success ranonly r5",
                 "ndcg_at_k map_at_k recall_at_k precision_at_k mrr_at_k hit_rate_at_k",
                 (1, 3, 5, 10, 20, 100, 1000), (("2.18.19", "mrr_at_k RR stable ranonly"),)),
    # the BEIR-derived tasks (MSMARCO, ArguAna, Quora, FiQA2018...) set ignore_identical_ids
    "mteb-ignore-identical-ids": Tool(
        "2.26.24", "2.18.18", "ndcg_at_k nDCG drop ranonly r5 | map_at_k AP drop ranonly r5 | "
        "recall_at_k R drop ranonly r5 | precision_at_k P drop ranonly r5 | "
        "mrr_at_k RR drop ranonly | hit_rate_at_k Success drop ranonly r5",
        "ndcg_at_k map_at_k recall_at_k precision_at_k mrr_at_k hit_rate_at_k",
        (1, 3, 5, 10, 20, 100, 1000), (("2.18.19", "mrr_at_k RR drop stable ranonly"),)),
    "sentence-transformers": Tool(
        "6.3.0", "6.3.0", "accuracy@k Success asc norel | precision@k P asc norel | "
        "recall@k R asc norel | mrr@k RR asc norel | ndcg@k nDCG asc binary norel | "
        "map@k AP asc cap norel", "accuracy@k precision@k recall@k mrr@10 ndcg@10 map@100",
        (1, 3, 5, 10)),
    "llamaindex": Tool("0.14.25", "0.12.2", "hit_rate Success given noret norel | "
                       "mrr RR given noret norel | precision P set noret norel | "
                       "recall R noret norel | ap AP given noret norel | "
                       "ndcg nDCG given binary uncut noret norel",
                       "hit_rate mrr precision recall ap ndcg",
                       before=(("0.12.6", "ndcg nDCG given binary listcut noret norel"),
                               ("0.12.3", "ndcg nDCG given binary listideal noret norel"))),
    "ragas": Tool("0.4.3", "0.4.3", "id_based_context_precision P set noret | "
                  "id_based_context_recall R norel",
                  "id_based_context_precision id_based_context_recall"),
    "haystack": Tool("3.4.1", "2.31.0", "document_mrr RR given | document_map AP given | "
                     "document_recall_single_hit Success | document_recall_multi_hit R | "
                     "document_ndcg nDCG given uncut", "document_mrr document_map "
                     "document_recall_single_hit document_recall_multi_hit document_ndcg",
                     before=(("3.1.0", "document_map AP given found"),)),
    "autorag": Tool("0.3.27", "0.3.27", "retrieval_recall R groups noret norel | "
                    "retrieval_precision P set noret norel | "
                    "retrieval_f1 SetF groups noret norel | "
                    "retrieval_mrr RR given groups noret norel | "
                    "retrieval_map AP given groups noret norel | "
                    "retrieval_ndcg nDCG given binary listcut noret norel",
                    "retrieval_recall retrieval_precision retrieval_f1 retrieval_mrr "
                    "retrieval_map retrieval_ndcg")}
# the metavar of each kind of option that has one, unless its row gives its own
METAVARS = {"file": "FILE", "files": "FILE", "stages": "NAME=FILE", "names": "NAMES",
            "cutoffs": "K", "cutoff": "N", "count": "N", "limit": "X", "text": "SEP",
            "floors": "MEASURE=X,...", "fields": "ROLE=KEY,..."}
OPTIONS = (
    Option("fixture", None, "positional", "input",
           "JSON fixture with qrels and runs, or JSON Lines records with both"),
    Option("qrels", None, "files", "input",
           "labels (TREC, BEIR TSV, JSON, JSON Lines) instead of a fixture; repeat to "
           "merge label files"),
    Option("run", None, "files", "input",
           "the rankings to score (TREC, JSON or JSON Lines), with --qrels; repeat to "
           "compare several"),
    Option("stage", None, "stages", "input",
           "what an earlier stage of the pipeline kept for each query (a run file): repeat in "
           "pipeline order, earliest first; the --run is the last stage, and each stage holds "
           "only what the one before it held: the fate of each relevant document, a funnel, "
           "and measures of a stage: R(stage=NAME)@100"),
    Option("index", None, "file", "input",
           "the IDs the store holds, before every stage (one a line, or a JSON list)"),
    Option("evidence", None, "file", "input",
           "evidence sets of multi-hop questions (JSON, JSON Lines, or lines QID SET SLOT DOCID); "
           "they stand in for --qrels when it is not given"),
    Option("lengths", None, "file", "input",
           "token counts of the ranked IDs, JSON {\"d1\": 300} or lines ID TOKENS, for budgets: "
           "R(tokens=2000)"),
    Option("no_answer", None, "file", "input",
           "the queries whose right retrieval is nothing (IDs one a line, or a JSON list): scored "
           "by Abstain only"),
    Option("access", None, "file", "input",
           "who may read each document and whom each query runs as (JSON {\"documents\": "
           "{ID: [PRINCIPAL, ...]}, \"queries\": {...}}, or lines doc ID PRINCIPAL... and query "
           "ID PRINCIPAL...): a ranked document its query may not read fails the gate (Leak@k)"),
    Option("candidate_qrels", None, "files", "input",
           "labels under test (such as an LLM judge's) against --qrels, the reference: pairs "
           "both label, confusion matrix, Cohen's kappa (weighted too, and at each grade), "
           "Krippendorff's alpha, leniency, per grade and per query; with --run, each measure "
           "under both, the orders of runs they give, and flips of a --baseline's verdict; "
           "--pool writes the pairs they grade apart (repeatable, as --qrels)"),
    Option("measure", None, "names", "plan",
           "measures to compute, separated by commas or blanks (see below)", short="-m"),
    Option("as_tool", None, "text", "value",
           "print TOOL's numbers, under its names, as its pinned version computes them (%s), "
           "or as VERSION did, with trec_eval's beside them and why they differ; -m then "
           "takes TOOL's names" % ", ".join("%s %s" % (t, TOOLS[t].version) for t in TOOLS),
           None, "TOOL[@VERSION]"),
    Option("k", None, "cutoffs", "plan",
           "cutoff(s) for R@k and RR@k (default %d when no -m is given); repeatable" % DEFAULT_K),
    Option("relevance_level", 1, "count", "value",
           "a grade >= L counts as relevant (default 1; trec_eval -l)", 0, "L"),
    Option("depth", None, "cutoff", "value",
           "only the first N ranked documents of each query count (trec_eval -M; a --stage is "
           "read whole)"),
    Option("judged_only", False, "flag", "value",
           "drop documents without a label >= 0 from each ranking, after --depth (trec_eval -J)"),
    *(Option(name, choices[0], "choice", "value",
             "%s: %s (default first)" % (case, ", ".join(choices)), choices)
      for name, (choices, case) in POLICIES.items()),
    # plan, not value: the manifest's no_answer digest records what it changes
    Option("empty_labels", "error", "choice", "plan",
           "a query whose labels are an empty list (LlamaIndex's expected_ids: []): error, or "
           "no-answer (its question has no answer in the corpus, as --no-answer FILE would say) "
           "(default error)",
           ("error", "no-answer")),
    Option("baseline", None, "file", "input",
           "an approved run (TREC or JSON) or fixture to compare against, on the same labels, or "
           "the result saved from one (its JSON output), which stands for it"),
    Option("baseline_qrels", None, "files", "input",
           "the labels the baseline was approved on, when --qrels is a newer version: each "
           "measure's change split into a retrieval part and a labels part, in the mean and per "
           "query, with the label changes in either run's top k (repeatable, as --qrels)"),
    Option("baseline_stage", None, "stages", "input",
           "an earlier stage of the baseline's pipeline, as --stage gives the run's, of the "
           "same names: a measure of a stage compares the two"),
    Option("seed", 0, "count", "recorded",
           "seed of the sampled test and the bootstrap (default 0)", 0),
    Option("permutations", 10000, "count", "recorded",
           "sign-flip draws when more than %d queries changed (default 10000)" % EXACT_LIMIT,
           1),
    Option("pairwise", False, "flag", "plan",
           "with several --run, also compare each run with each one given before it: the "
           "sign-flip p, Holm's correction over the pairs per measure, the change's interval"),
    Option("max_mean_drop", None, "limit", "plan",
           "with --baseline: exit 1 when a measure's mean drops by more than X (or per measure: "
           "MEASURE=X,...)"),
    Option("max_query_drop", None, "limit", "plan",
           "with --baseline: exit 1 when any query's value of a measure drops by more than X (or "
           "per measure: MEASURE=X,...)"),
    Option("min_mean", None, "floors", "plan",
           "exit 1 when a measure's mean is below X, with or without --baseline (repeatable; with "
           "--gate-on, when its 95%% interval lies below X, or does not lie at or above it)"),
    Option("min_query", None, "floors", "plan",
           "exit 1 when a query's value of a measure is below X (repeatable)"),
    Option("replicate", None, "files", "input",
           "another run of the baseline's configuration (repeatable): the mean gates allow the "
           "noise among them, and the per-query gate leaves out the queries whose values differ"),
    Option("gate_on", "mean", "choice", "plan",
           "what a mean gate reads: the drop of the mean; the whole 95%% interval of the change, "
           "which fails the gate when it lies below minus the limit; or noninferiority: it passes "
           "only when the interval lies above minus the limit, the candidate shown to be no "
           "worse; or, with --baseline-qrels, the drop's retrieval part (default mean)",
           ("mean", "interval", "noninferiority", "retrieval")),
    Option("power", False, "flag", "plan",
           "also per measure the smallest change of the mean this query set detects (80%% power, "
           "two-sided 5%%), and the queries each mean gate's limit would need"),
    Option("groups", None, "file", "input",
           "query groups, JSON {\"group\": [\"q1\", ...]} or lines QID GROUP: a mean per group"),
    Option("clusters", None, "file", "input",
           "queries that share a source (questions generated from one chunk, paraphrases), JSON "
           "{\"cluster\": [\"q1\", ...]} or lines QID CLUSTER: the sign-flip test and the "
           "bootstrap draw clusters, not queries"),
    Option("max_group_drop", None, "limit", "plan",
           "with --baseline and groups: exit 1 when a group's mean of a measure drops "
           "by more than X (or per measure: MEASURE=X,...)"),
    Option("fields", None, "fields", "plan",
           "JSON Lines field names of a log, roles %s (and a --stage's NAME: its ranking's); a "
           "KEY may be a path: keys joined by '.', "
           "'[]' after a key for each element of its list (such as "
           "retrieved=documents[].id,relevant=expected_chunk_ids)" % ", ".join(ROLES)),
    Option("match", "id", "choice", "value",
           "labels and ranked entries are IDs, or texts (compared once normalized: NFC, one space "
           "for each run of whitespace), or texts where a ranked text counts as the first label "
           "it contains that no earlier text claimed (MultiHop-RAG's rule) (default id)",
           ("id", "text", "contains")),
    Option("explain", False, "flag", "plan",
           "say where each missed relevant document went: below the largest cutoff K (its "
           "rank), absent, or not in a ranking no longer than K or --depth (perhaps all a log "
           "kept), with the unjudged documents in the top K (where the labels judge some "
           "non-relevant) and what a floor or a budget cut; with --baseline, the ranks before "
           "and after of each changed query's relevant documents"),
    Option("unjudged_bounds", False, "flag", "plan",
           "also the mean of " + ONLY_BOUNDED + " as it would be if every unjudged document where "
                                                "the measure looks were relevant: the most the "
                                                "missing labels could add"),
    Option("duplicates", "error", "choice", "value",
           "a document ranked twice in one query: error, or first (keep its best-ranked place; "
           "reported) (default error)",
           ("error", "first")),
    Option("chunk_separator", None, "text", "value",
           "score documents, not chunks: cut ranked IDs and labels at the first SEP"),
    Option("ties", False, "flag", "plan",
           "also the lowest and highest mean over all orders of tied scores"),
    Option("ci", False, "flag", "plan",
           "also a 95%% bootstrap confidence interval for every mean (seeded by --seed)"),
    Option("format", "json", "choice", "output",
           "output format (default json; latex: a paper's table, runs by measures, the best in "
           "bold, each value marked with the letters of the runs it is significantly higher than)",
           ("json", "table", "trec", "markdown", "csv", "latex")),
    Option("per_query", False, "flag", "output",
           "with --format table or markdown, add a row per query (csv has one always)",
           short="-q"),
    Option("summary", None, "file", "output",
           "also append the Markdown report to FILE (such as \"$GITHUB_STEP_SUMMARY\")"),
    Option("pool", None, "file", "output",
           "also write, as JSON Lines, the unjudged documents in the top K of every run given, "
           "per query: a labeling to-do list that, its grades filled in, is a labels file for "
           "another --qrels"),
    Option("plot", None, "file", "output",
           "also draw the cutoff measures over k (and, with --baseline, each query's "
           "change) as SVG",
           None, "FILE.svg"),
    Option("junit", None, "file", "output",
           "also write the gates' checks as JUnit XML, as CI servers show test reports: a test "
           "case per measure and gate, failed by each breach",
           None, "FILE.xml"),
    Option("version", None, "version", "output",
           "print the tool's name and version, and exit"))
OPTION = {option.name: option for option in OPTIONS}
# --help's groups of OPTIONS, each from the option that opens it to the next group's.
HELP_GROUPS = {"fixture": "inputs", "measure":
               "measures, and which queries and documents they read",
               "baseline": "comparison and gates", "fields": "RAG logs and diagnostics",
               "format": "output"}
# Every option's value, a field per OPTIONS row under its name, the table's default unless
# given: the one options argument, made by configure from the parsed command line or from a
# library call's keywords.  An input's field holds what names the input: its file names on the
# command line, the JSON-shaped value itself in a library call.
Config = namedtuple("Config", [option.name for option in OPTIONS],
                    defaults=[option.default for option in OPTIONS])


# === Errors ===

class EvalError(ValueError):
    """Bad input or usage: one line naming the place, the query and the value.

    Raised by every reader and validator; only ``main`` turns it into a message on stderr and exit
    status 2.  Anything else is our own bug and keeps its traceback.
    """


def show(value, limit=60):
    """A value as it goes into a one-line message: repr'd (escapes included) and cut short."""
    try:
        text = repr(value)
    # an integer past Python's digit limit
    except ValueError:
        text = "an integer of over 4300 digits"
    if len(text) <= limit or not isinstance(value, str):
        return text if len(text) <= limit else text[:limit - 3] + "..."
    cut = limit
    # a text is cut inside its quotes, which stay closed
    while len(repr(value[:cut])) > limit - 3:
        cut -= 1
    text = repr(value[:cut])
    return text[:-1] + "..." + text[-1]


def text_name(doc, match="id"):
    """A ranked entry as a report names it: an ID as show() gives it; under --match text or
    contains, t: and the first 12 hex digits of the sha256 of the normalized text, beside its
    first 40 characters (README: "Logs as frameworks write them").

    >>> text_name("Paris is the capital of France.", "text")
    "t:557be7eca214 'Paris is the capital of France.'"
    >>> # 40 characters are shown whole
    >>> text_name("x" * 40, "text").endswith("x'"), text_name("x" * 41, "text").endswith("x'")
    (True, False)
    """
    if match == "id":
        return show(doc)
    return "%s %s" % (text_id(doc), show(doc if len(doc) <= 40 else doc[:39] + "\u2026"))


def text_id(doc):
    """t: and the first 12 hex digits of the sha256 of a (normalized) text: its name in reports."""
    return "t:" + hashlib.sha256(doc.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def place(path):
    """A file name as it goes into a message: escaped when it holds a line break or the like."""
    return path if path.isprintable() else repr(path)[1:-1]


def loc(source, path):
    """'file: path', or whichever of the two is known."""
    return "%s: %s" % (source, path) if source and path else (source or path or "")


def _join(root, key):
    return "%s.%s" % (root, key) if root else key


def fail(where, problem, query=None):
    """Raise EvalError for ``where`` (file, line or JSON path)."""
    parts = [p for p in (where, None if query is None else "query %s" % show(query), problem) if p]
    raise EvalError(": ".join(parts))


def given_twice(where, what, flag, them="them", query=None):
    """Refuse a fact given in two places, as in 'the record has evidence sets and --evidence
    is given too: give them once'."""
    fail(where, "%s and %s is given too: give %s once" % (what, flag, them), query)


def nothing_in(where, what, why):
    """Refuse an input that gives nothing to read, as in 'no groups: the file has no QID GROUP
    lines'."""
    fail(where, "no %s: %s" % (what, why))


def n_queries(n):
    """'1 query', '2 queries'."""
    return "%d quer%s" % (n, "y" if n == 1 else "ies")


def first_few(ids, limit=3):
    """'a', 'b', 'c' and 4 more: enough IDs to find the problem, never a wall."""
    ids = list(ids)
    text = ", ".join(show(i) for i in ids[:limit])
    return text if len(ids) <= limit else "%s and %d more" % (text, len(ids) - limit)


def skipped_text(skipped, whose=""):
    """'skipped 3 queries: 2 missing run (...); 1 no relevant (...)', or None."""
    parts = ["%d %s (%s)" % (len(q), reason.replace("_", " "), first_few(q))
             for reason, q in skipped.items() if q]
    if not parts:
        return None
    return "%sskipped %s: %s" % (
        whose, n_queries(sum(len(q) for q in skipped.values())), "; ".join(parts))


def no_record_has(source, what, role, fields, keys):
    """Refuse records of which none has a role's field, naming the first record's keys."""
    nothing_in(source, what, "no record has %s%s" % (" or ".join((fields or JSONL_FIELDS)[role]),
                                                    fields_hint(keys, role, "the first record's")))


def fields_hint(keys, role=None, whose="the record's"):
    """What to do when records hold no field for a role: their keys, and --fields."""
    field, example = "the fields", "relevant=KEY,retrieved=KEY"
    if role:
        field, example = "its field", "%s=KEY" % role
    return "; %s keys: %s; name %s with --fields %s" % (
        whose, first_few(list(keys), 8) or "none", field, example)


def _role_hint(keys, role):
    """Where a log's records may hold a role under another name: their keys, and --fields."""
    return (" (--fields %s=KEY names a log's own field)" % role if keys is None else
            fields_hint(keys, role, "the first record's"))


# === Validation ===

# An ID is printed in reports, one per line or per cell: it must hold no control
# character, line separator or lone surrogate (JSON's "\ud800" escapes one in).
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_ASCII_CONTROLS = bytes(range(32)) + b"\x7f"


def _printable(text):
    """Whether text holds no control character, line separator or lone surrogate.

    >>> _printable("d 1"), _printable("d\\x001"), _printable("d\\u2028")
    (True, False, False)
    """
    # the common case, in C: five times faster than the pattern
    if text.isascii():
        data = text.encode("ascii")
        return len(data.translate(None, _ASCII_CONTROLS)) == len(data)
    return not _UNPRINTABLE.search(text)


def check_id(value, where, query=None, what="document ID"):
    """Return ``value`` if it is a non-blank string that can be printed, else raise EvalError."""
    if not isinstance(value, str):
        fail(where, "%s must be a string, not %s %s" % (what, type(value).__name__, show(value)),
             query)
    if not value.strip():
        fail(where, "%s %s is blank" % (what, show(value)), query)
    bad = None if _printable(value) else _UNPRINTABLE.search(value)
    if bad:
        kind = "a lone surrogate" if "\ud800" <= bad.group() <= "\udfff" else "a control character"
        texts = ""
        if bad.group().isspace():
            texts = "; texts, not IDs, are read with --match text or --match contains"
        fail(where, "%s %s holds %s (%s): IDs are printable text%s"
             % (what, show(value), kind, show(bad.group()), texts), query)
    return value


def check_ids(ids, where="ids", query=None, duplicates=None):
    """Validate a ranked list of document IDs and return it.

    IDs must be non-blank, printable strings and none may appear twice; an empty list is a valid
    (empty) ranking.  duplicates: None refuses a repeat; "error" refuses it too, naming
    --duplicates first; "first" lets it through (the ranking then keeps each document's first
    place).

    >>> check_ids(["d1", "d2"])
    ['d1', 'd2']
    >>> check_ids(["d1", "d1"], "runs.q1")
    Traceback (most recent call last):
    ...
    rag_retrieval_eval.EvalError: runs.q1[1]: document 'd1' appears twice (first at runs.q1[0])
    """
    if not isinstance(ids, list):
        fail(where, "expected a list of document IDs, not %s %s" % (type(ids).__name__, show(ids)),
             query)
    # join() refuses non-strings, the set finds repeats
    try:
        unique = set(ids)
        if (duplicates == "first" or len(unique) == len(ids)) and _plain_ids(ids, unique):
            return ids
    except TypeError:
        pass
    seen = {}
    for i, doc in enumerate(ids):
        check_id(doc, "%s[%d]" % (where, i), query)
        if doc in seen and duplicates != "first":
            fail("%s[%d]" % (where, i), "document %s appears twice (first at %s[%d])%s"
                 % (show(doc), where, seen[doc], DUPLICATES_HINT if duplicates else ""), query)
        seen.setdefault(doc, i)
    return ids


def _plain_ids(ids, unique):
    """Whether strings are all valid IDs (none blank, all printable), checked at once in C;
    a TypeError when one is not a string.  unique: a set (or dict) of them, which finds ""
    at once, where a list is scanned."""
    # split() finds any whitespace at all
    joined = "".join(ids)
    return ("" not in unique and (joined.split() == [joined] or not any(map(str.isspace, ids)))
            and _printable(joined))


def normalized(text):
    """A text as --match text and contains compare it: Unicode NFC, each run of whitespace one
    space, none at either end.

    >>> normalized(" Paris  is\\n the capital ")
    'Paris is the capital'
    """
    return " ".join((text if text.isascii() else unicodedata.normalize("NFC", text)).split())


def _integral(value):
    """An integer of any integral type (numpy's too) but bool, in 64 bits; else None."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = int(value)
        if -INT_LIMIT <= value < INT_LIMIT:
            return value
    return None


def check_grade(value, where, query=None):
    """An integer grade; bools, floats (even 1.0) and integers past 64 bits are refused."""
    if type(value) is int and -INT_LIMIT <= value < INT_LIMIT:
        return value
    # a --pool record not yet filled in
    if value is None:
        fail(where, "the grade is still to be given (null): fill it in, or leave the document out",
             query)
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        fail(where, "grade %s is not an integer" % show(value), query)
    grade = _integral(value)
    if grade is None:
        fail(where, "grade %s is out of range (a 64-bit integer)" % show(value), query)
    return grade


def check_score(value, where, query=None):
    """A finite score of any real number type (numpy's, Decimal too) but bool, as a float."""
    if (type(value) is not float and isinstance(value, (numbers.Real, Decimal))
            and not isinstance(value, bool)):
        try:
            value = float(value)
        except (OverflowError, ValueError):
            pass
    if type(value) is not float or not math.isfinite(value):
        fail(where, "score %s is not a finite number" % show(value), query)
    return value


def check_cutoff(value):
    """Return a cutoff if it is a positive integer (bools and '10' are refused).

    >>> check_cutoff(10)
    10
    >>> check_cutoff(0)
    Traceback (most recent call last):
    ...
    rag_retrieval_eval.EvalError: cutoff must be a positive integer, not 0
    """
    cutoff = _integral(value)
    if cutoff is None or cutoff < 1:
        raise EvalError("cutoff must be a positive integer, not %s" % show(value))
    return cutoff


def parse_cutoff(text, minimum=1, what="cutoff"):
    """An integer written on the command line: ASCII digits only ('1.5', '1e3', '+3' are
    refused)."""
    digits = text.strip()
    number = int(digits) if digits.isascii() and digits.isdigit() and len(digits) <= 18 else None
    if number is not None and number >= minimum:
        return number
    rule = "a positive integer" if minimum == 1 else "an integer >= %d" % minimum
    if number is None and digits.isascii() and digits.isdigit():
        rule += " below 10**18"
    raise EvalError("%s must be %s, not %s" % (what, rule, show(text)))


_DECIMAL = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def signed_decimal(text):
    """A plain decimal number, signed or not, as a float ('1e400' is inf); None for any other
    text ('nan', '1_0', ' 1')."""
    digits = text[1:] if text[:1] in "+-" else text
    if not _DECIMAL.fullmatch(digits):
        return None
    return float(text)


def parse_limit(text):
    """A gate's limit: a plain decimal number >= 0 ('1_0', 'nan', 'inf' are refused)."""
    limit = float(text) if _DECIMAL.fullmatch(text.strip()) else math.inf
    if not math.isfinite(limit):
        raise EvalError("a drop limit must be a number >= 0, not %s" % show(text))
    return limit


def parse_stage(text):
    """(name, file) of --stage NAME=FILE."""
    name, equals, path = text.partition("=")
    if not equals or not path:
        raise EvalError("%s: give NAME=FILE, as candidates=first_stage.trec" % show(text))
    return name, path


def parse_fields(text):
    """{role: key} of --fields ROLE=KEY,... (the JSON Lines field names of a log).

    >>> parse_fields("relevant=expected_chunk_ids, retrieved=retrieved_chunk_ids")
    {'relevant': 'expected_chunk_ids', 'retrieved': 'retrieved_chunk_ids'}
    """
    pairs = []
    for item in text.split(","):
        role, equals, key = item.strip().partition("=")
        if not equals or not key.strip():
            raise EvalError("--fields takes ROLE=KEY pairs, "
                            "comma-separated, not %s" % show(item.strip()))
        pairs.append((role.strip(), key.strip()))
    return merged_fields(pairs)


def merged_fields(pairs):
    """{role: key} of (role, key) pairs, of one --fields option or of several: a role named twice
    is refused, wherever the second is."""
    named = {}
    for role, key in pairs:
        if role in named:
            raise EvalError("--fields names the role %s twice (%s, then %s): name each role once"
                            % (role, named[role], key))
        named[role] = key
    return named


def fields_table(named, stages=None):
    """The field names of each role, JSONL_FIELDS with those named {role: key} replaced; or
    None when none is named.  An unknown role is refused; the name of a stage (of stages: the
    (name, file) of each --stage) is a role too, whose field a stage_reading reads."""
    if not named:
        return None
    if not isinstance(named, dict):
        raise EvalError("fields must be {role: field name}, not %s" % show(named))
    table, names = dict(JSONL_FIELDS), [name for name, _ in stages or ()]
    for role, key in named.items():
        if role not in ROLES and role not in names:
            raise EvalError("--fields: unknown role %s; roles: %s"
                            % (show(role), ", ".join(list(ROLES) + names)))
        if not isinstance(key, str) or not key:
            raise EvalError("--fields %s: the field name must be a non-empty "
                            "string, not %s" % (role, show(key)))
        if not _PATH.fullmatch(key):
            raise EvalError("--fields %s: %s is not a field or a path (keys joined by '.', '[]' "
                            "after a key for each element of its list, as in "
                            "retrieval_list[].text)" % (role, show(key)))
        if role in ROLES:
            table[role] = (key,)
    shared = {"relevant", "evidence"} if named.get("evidence") in table["relevant"] else ()
    # a key names one role: relevant=retrieved would rank the labels
    for role in table:
        for other in table:
            both = set(table[role]) & set(table[other])
            if role != other and both and {role, other} != shared:
                raise EvalError("--fields: field %s would give both the %s and the %s: a field "
                                "gives one role; name the other role's field too"
                                % (show(next(iter(both))), ROLES[role], ROLES[other]))
    return table


# === Judged rankings ===

# What every measure needs of one query, and nothing more: the ranks (1-based,
# after --depth) of the retrieved documents that carry a label.  Unlabeled
# documents only push labeled ones down, so they are counted, never kept.
Judged = namedtuple("Judged",
                    "rel_ranks gains judged_ranks num_ret num_rel ideal bounds unjudged_ranks "
                    "num_nonrel evidence filtered ranked tied leaks views",
                    defaults=(None, (), 0, None, None, 0, False, (), None))
Judged.__doc__ = """One query's judged ranking.

rel_ranks     sorted ranks of retrieved documents with grade >= the relevance level
gains         (rank, grade) of retrieved documents with grade > 0, by rank
judged_ranks  sorted ranks of retrieved documents that carry any label
num_ret       documents retrieved (after --depth)
num_rel       labeled documents with grade >= the relevance level (R)
ideal         grades > 0 of all labeled documents, largest first
bounds        with --ties: (best, worst) Judged over the orders of tied documents by grade, then a
              pair for each table of Reading.gain_orders (ordered by gain)
unjudged_ranks  sorted ranks of retrieved documents with a negative grade (pooled, unjudged)
num_nonrel    labeled documents judged non-relevant: 0 <= grade < the relevance level
evidence      with evidence sets: per set, the rank of each slot's first document (math.inf when
              none is ranked); None when the query has none, or nothing was ranked
filtered      {Filter: the Judged record of the ranking the filter leaves} for the measures
              with thresh= or tokens=; None when nothing was ranked
ranked        documents ranked, before --depth and --judged-only: 0 for an empty ranking
tied          with --ties: whether any two items have the same score (labeled or not)
leaks         with --access: ((rank, document), ...) of the documents within --depth (after
              folding and --duplicates, before --judged-only) the query may not read
views         with --as: {word: the Judged record of the ranking as the tool reads it} where it
              differs (see tool_views), else None
"""

# What a reader keeps of one query's ranking: its Judged record, and what the diagnostics need
# besides (chunks folded away, ranked IDs when none matched, repeats removed under --duplicates
# first). pending: (its Query, {Filter: the items its budget may weigh}) while the token counts are
# still to be read (Truth.lengths is LATER), else None. several: under --match contains, the ranked
# texts that held more than one label; seen: under --explain, ({labeled document: rank}, the top K
# documents joined (see _top), {Filter: the documents it kept}); top: with agreement measures
# (Reading.agree), the first documents joined (see _top), before --judged-only, which reads labels;
# ids: in a pipeline, the IDs ranked {ID: None} in rank order, kept for the stage before it to
# hold (see Pipeline), else None.
Ranking = namedtuple("Ranking", "judged folded sample deduplicated pending several seen top ids",
                     defaults=(0, None, 0, None, None, None))
# Truth.lengths of a --lengths file: see weigh_later
LATER = "token counts read once every ranking is"

# What is true of the queries, whoever ranks them: labels {qid: {doc: grade}} (a query
# without an answer has some, perhaps none); evidence {qid: evidence sets} (folded) or None;
# lengths {ranked ID: token count}, None, or LATER: a file read once every ranking is (see
# weigh_later), whose counts_digest (see lengths_digest) is set once it is read;
# no_answer {qid: where it is said to have no answer, or None}; index: {ID: None} of what the
# store holds (--index), or None; access: an Access (--access), or None.
Truth = namedtuple("Truth", "labels evidence lengths no_answer counts_digest index access",
                   defaults=(None, None, NOTHING, None, None, None))
# Who may read what (--access; README: "Who may read it?"): {document: frozenset of principals},
# {qid: frozenset of the principals it runs as}, and the file's place, for messages.
Access = namedtuple("Access", "documents queries source")

# How rankings are read: what make_plan derives of the Config for the readers.  fields: the JSON
# Lines field names of each role (None: JSONL_FIELDS); duplicates: "error" or "first"; gain_orders:
# with ties, the nDCG gain tables whose best order of tied documents is by gain; filters: {Filter:
# the largest cutoff of the measures it serves, None for the whole ranking}; abstain: the Filters
# of the measures of unanswerable questions, the only ones a query without an answer is judged
# under; seed_mode: read as the seed script read, which read no other key of a fixture (a fixture's
# "no_answer" and a record's "answerable" are left alone); match: "id", or "text" and "contains",
# where labels and ranked entries are texts (README: "Logs as frameworks write them"), read as
# normalized() texts; top_k: with --explain, --pool or a pipeline, the K whose top documents each
# Ranking keeps in seen, the largest cutoff asked for (else None; see seen_reach); agree: with
# agreement measures, how many documents of every query's ranking (labeled or not) Ranking.top
# keeps, else None; pipeline: a Pipeline when the ranking is a stage of one (or its last, a run),
# else None; listed: whether seen keeps the top K's documents (--explain, --pool, but not
# --judged-only, which leaves no unlabeled one) or, as a pipeline's fates need, only the labeled
# documents' ranks (joining a stage's top 1,000 would cost more than reading it); views: with
# --as, what tool_views judges besides: (the query's own ID removed, the orders of tied documents,
# the ground-truth groups), else None.
Reading = namedtuple("Reading", "level depth separator ties judged_only fields duplicates "
                                "gain_orders filters abstain seed_mode match top_k agree pipeline "
                                "listed views",
                     defaults=(1, None, None, False, False, None, "error", (), NOTHING,
                               frozenset(), False, "id", None, None, None, True, None))

# How a stage of a pipeline is read (README: "Where was it lost?"): a stage holds only IDs the
# stage before it held for the query.  The stages are read from the last (the run) to the
# first, so that only the IDs of the smaller, later rankings are kept: keep, whether to keep this
# ranking's (Ranking.ids); later, (what to call it, its place, {qid: IDs}) of each ranking that
# comes right after this one (several runs are alternative last stages), each of whose IDs this
# ranking must hold; index, {ID: None} of what the store holds when this is the first stage,
# else None; name, how a message calls this ranking ("stage candidates"); place, its file's.
Pipeline = namedtuple("Pipeline", "keep later index name place")


def least_relevant(level):
    """The lowest relevant grade: the relevance level, and never a negative grade."""
    return max(level, 0)


def judge(ranks, num_ret, labels, level=1, evidence=None, ranked=0):
    """Build a Judged record from {doc: rank} of the labeled retrieved documents (evidence:
    the slot ranks of the query's evidence sets, or None; ranked: documents ranked); its
    bounds are None (judge_ranking sets them under --ties).

    >>> judge({"d2": 2, "d1": 3}, 3, {"d1": 1, "d2": 1}).rel_ranks
    [2, 3]
    """
    least = least_relevant(level)
    judged = sorted([(rank, labels[doc]) for doc, rank in ranks.items()])
    grades = labels.values()
    # positional, in field order: a keyword-built record costs twice as much, once per query
    return Judged([r for r, g in judged if g >= least], [(r, g) for r, g in judged if g > 0],
                  [r for r, _ in judged], num_ret, len([g for g in grades if g >= least]),
                  sorted([g for g in grades if g > 0], reverse=True), None,
                  [r for r, g in judged if g < 0], len([g for g in grades if 0 <= g < least]),
                  evidence, None, ranked)


def _graded_ranks(q):
    """Sorted ranks of retrieved documents with a grade >= 0: judged, relevant or not."""
    return sorted(set(q.judged_ranks).difference(q.unjudged_ranks))


def at_level(q, level):
    """The same query's Judged record at another relevance level (a measure's rel=).

    >>> at_level(judge({"a": 1, "b": 2}, 2, {"a": 1, "b": 2, "c": 0}), 2)[:5:4]
    ([2], 1)
    """
    # labels graded >= 0
    least, graded = least_relevant(level), q.num_rel + q.num_nonrel
    if least:
        rel_ranks = [r for r, g in q.gains if g >= least]
        num_rel = len([g for g in q.ideal if g >= least])
    else:
        rel_ranks, num_rel = _graded_ranks(q), graded
    bounds = q.bounds and tuple(at_level(b, level) for b in q.bounds)
    return q._replace(rel_ranks=rel_ranks, num_rel=num_rel, num_nonrel=graded - num_rel,
                      bounds=bounds)


def judge_ranking(docids, scores, labels, opts, docset=None, sets=None):
    """The Ranking record of one ranking: IDs in list order, or with their scores; sets: the
    query's evidence sets (folded), or None."""
    folded, bounds, removed, several = 0, None, 0, 0
    tied = opts.ties and scores is not None and len(set(scores)) < len(scores)
    if opts.duplicates == "first" and len(docids) > len(docset if docset is not None
                                                        else set(docids)):
        docids, scores, removed = best_occurrences(docids, scores)
    if opts.separator or opts.match == "contains":
        docids, first_score, folded, several = first_items(docids, scores, labels, opts)
        if first_score is not None and opts.ties:
            bounds = rank_scored(docids, [first_score[d] for d in docids], labels, opts.depth,
                                 None, (None,) + opts.gain_orders)[2]
        scores = None
    if scores is None:
        ranks, num_ret = rank_listed(docids, labels, opts.depth)
    else:
        ranks, num_ret, bounds = rank_scored(docids, scores, labels, opts.depth, docset,
                                             opts.ties and (None,) + opts.gain_orders)
    top = opts.agree and _top(docids, scores, min(opts.agree, num_ret))
    # trec_eval -J, after -M: only labeled documents graded >= 0 count
    if opts.judged_only:
        ranks, *bounds = [_judged_only(found, labels) for found in (ranks,) + (bounds or ())]
        num_ret, bounds = len(ranks), tuple(bounds) or None
    if bounds:
        bounds = _judged_bounds(bounds, num_ret, labels, opts)
    evidence = sets and evidence_ranks(sets, ranks, (docids, scores), labels, opts)
    # IDs to diagnose a ranking that matches no label; max() does not depend on line order
    sample = ()
    if not ranks and docids:
        sample = tuple(docids[:3]) if scores is None else (max(docids),)
    judged = judge(ranks, num_ret, labels, opts.level, evidence, len(docids))
    # tied with one order only, else: what no order bounds (not_bounded) is still exact
    if bounds or tied:
        judged = judged._replace(bounds=bounds, tied=tied)
    seen = opts.top_k
    if seen:
        shown = _top(docids, scores, min(seen, num_ret)) if opts.listed else ""
        seen = (ranks, shown, None)
    return Ranking(judged, folded, sample, removed, None, several, seen, top)


def _judged_bounds(bounds, num_ret, labels, opts):
    """The Judged record of each order's ranks: under --judged-only an order keeps as many
    documents as it has judged within --depth."""
    return tuple(judge(b, len(b) if opts.judged_only else num_ret, labels, opts.level)
                 for b in bounds)


def first_items(docids, scores, labels, opts):
    """A ranking of items cut (--chunk-separator) or matched (--match contains) to documents, a
    document at the rank, and with the score, of its first item: its document IDs, their scores
    {doc: score} (None for a list), how many items folded into an earlier one's document, and
    how many ranked texts held more than one label."""
    first_score = None
    if scores is not None:
        ordered = in_rank_order(docids, scores)
        docids, scores = [d for _, d in ordered], [x for x, _ in ordered]
    targets, several = documents(docids, labels, opts)
    if scores is not None:
        first_score = dict(reversed([(d, x) for d, x in zip(targets, scores) if d is not None]))
    docids = list(dict.fromkeys(d for d in targets if d is not None))
    return docids, first_score, len(targets) - len(docids), several


def _top(docids, scores, k):
    """The first k documents of a ranking, in rank order (score descending, then ID descending),
    joined by line breaks, which no ID or normalized text holds: one string per query, not k.

    >>> _top(["a", "b", "c"], [2.0, 2.0, 1.0], 2), _top(["a", "b", "c"], [3.0, 2.0, 2.0], 2)
    ('b\\na', 'a\\nc')
    >>> _top(["a", "b", "c"], [1.0, 3.0, 2.0], 2), _top(["a", "b"], None, 1), _top([], [], 10)
    ('b\\nc', 'a', '')
    """
    top = docids[:k]
    if scores is not None:
        # the first window holds k items at least
        items = islice(chain.from_iterable(ranked_windows(docids, scores, max(k, 1))), k)
        top = [doc for _, doc in items]
    return (b"\n" if top and isinstance(top[0], bytes) else "\n").join(top)


def evidence_labels(sets):
    """The labels evidence sets stand for: every ID of every set, grade 1."""
    return dict.fromkeys((d for s in sets for slot in s for d in slot), 1)


def evidence_ranks(sets, ranks, ranking, labels, opts):
    """Per evidence set, the rank of each slot's first ranked document (math.inf: none), in
    the ranking the other measures see: ``ranks`` of the labeled documents serve when every
    evidence ID is labeled, or under --judged-only (which removes the unlabeled ones); ranking:
    (docids, scores or None).

    >>> evidence_ranks(((("d1", "d2"), ("d3",)), (("d9",),)), {}, (["d4", "d2", "d5", "d3"], None),
    ...                {}, Reading())
    ((2, 4), (inf,))
    """
    wanted, (docids, scores) = evidence_labels(sets), ranking
    # in trec_eval's order
    if not (opts.judged_only or wanted.keys() <= labels.keys()):
        ranks = rank_listed(in_order(docids, scores), wanted, opts.depth)[0]
    return tuple(tuple(min([ranks.get(d, math.inf) for d in slot]) for slot in s) for s in sets)


def tool_views(qid, docids, scores, truth, opts):
    """{word: Judged} of a ranking as another tool reads it (--as; see STEPS), where that differs
    from ours: "drop", its query's own ID removed (BEIR's ignore_identical_ids); "stable" and
    "asc", tied documents in the order given or by ID ascending, "given", every document in
    the order given (each after the tool's removal);
    "groups", the ranks of the documents of each evidence set's slots (AutoRAG's ground truth);
    "hole", as "stable" with the documents any query's labels grade as its labels (BEIR's Hole).
    None when none differs."""
    drop, orders, groups, hole = opts.views
    labels, sets = truth.labels.get(qid) or {}, evidence_of(truth, qid)
    words = ["drop"] if drop and qid in docids else []
    if words:
        kept = [i for i, doc in enumerate(docids) if doc != qid]
        docids, scores = [docids[i] for i in kept], scores and [scores[i] for i in kept]
    if scores is not None and not all(map(gt, scores, islice(scores, 1, None))):
        words += orders
    views = {w: judge(*rank_listed(in_order(docids, scores, w), labels, opts.depth), labels,
                      opts.level) for w in words}
    if hole:
        anywhere = judged_anywhere(truth.labels)
        views["hole"] = judge(*rank_listed(in_order(docids, scores, "stable"), anywhere,
                                           opts.depth), anywhere)
    if groups and sets and len(sets) > 1:
        fail("evidence", "AutoRAG's ground truth is one set of groups, and the query has %d "
                         "alternative evidence sets" % len(sets), qid)
    if groups and sets:
        ranks = rank_listed(in_order(docids, scores), evidence_labels(sets), opts.depth)[0]
        views["groups"] = [tuple(sorted(ranks[d] for d in slot if d in ranks))
                           for s in sets for slot in s]
    return views or None


def read_as_text(qid, docset, scores, truth, opts):
    """Whether the fast reader hands a ranking (docset: its IDs, bytes) to judge_run, which reads
    IDs as text: where they are cut, texts claim labels, --access reads them, or tool_views may
    find a view that differs from ours (the query's ID is ranked, tied documents are, or the tool
    reads groups)."""
    if opts.separator or opts.match == "contains" or truth.access:
        return True
    if not opts.views:
        return False
    drop, orders, groups, hole = opts.views
    reordered = bool(orders) and not all(map(gt, scores, islice(scores, 1, None)))
    return drop and qid in docset or reordered or groups or hole


# (labels, {document: 1} of every document they grade), of the labels read last
_ANYWHERE = [None, None]


def judged_anywhere(labels):
    """{document: 1} of every document any query's labels grade, of any grade (BEIR's annotated
    corpus)."""
    if _ANYWHERE[0] is not labels:
        _ANYWHERE[:] = labels, dict.fromkeys((d for graded in labels.values() for d in graded), 1)
    return _ANYWHERE[1]


def in_order(docids, scores, order="drop"):
    """A ranking's IDs in trec_eval's order, or with its tied documents in the order given
    ("stable") or by ID ascending ("asc"), or as given ("given").

    >>> in_order(list("bac"), [1, 2, 2]), in_order(list("bac"), [1, 2, 2], "asc")
    (['c', 'a', 'b'], ['a', 'c', 'b'])
    """
    if scores is None:
        return docids
    if order == "stable":
        return [docids[i] for i in sorted(range(len(docids)), key=scores.__getitem__,
                                          reverse=True)]
    if order == "asc":
        return [d for _, d in sorted(zip([-x for x in scores], docids))]
    if order == "given":
        return docids
    return [d for _, d in in_rank_order(docids, scores)]


def best_occurrences(docids, scores):
    """(docids, scores, how many were removed): a document ranked twice keeps its best
    rank, its first place in a list or its highest score (--duplicates first).

    >>> best_occurrences(["a", "b", "a"], None)
    (['a', 'b'], None, 1)
    >>> best_occurrences(["a", "b", "a"], [1.0, 2.0, 3.0])
    (['a', 'b'], [3.0, 2.0], 1)
    """
    if scores is None:
        kept = list(dict.fromkeys(docids))
        return kept, None, len(docids) - len(kept)
    best = {}
    for doc, score in zip(docids, scores):
        if doc not in best or score > best[doc]:
            best[doc] = score
    return list(best), list(best.values()), len(docids) - len(best)


def _judged_only(ranks, labels):
    """{doc: rank} once the unjudged documents (no label, or a negative grade) are removed.

    >>> _judged_only({"d1": 2, "d5": 4, "x": 3}, {"d1": 1, "d5": 0, "x": -1})
    {'d1': 1, 'd5': 2}
    """
    kept = sorted((rank, doc) for doc, rank in ranks.items() if labels[doc] >= 0)
    return {doc: i for i, (_, doc) in enumerate(kept, 1)}


def _num_ret(n, depth):
    """How many of n ranked documents count within a depth, or a cutoff (None: all)."""
    return n if depth is None or depth >= n else depth


def rank_listed(docids, labels, depth=None):
    """{doc: rank} of the labeled documents of a ranking in list order, and num_ret.

    >>> rank_listed(["d9", "d2", "d1"], {"d1": 1, "d2": 1}, depth=2)
    ({'d2': 2}, 2)
    """
    num_ret = _num_ret(len(docids), depth)
    if len(labels) > 8:
        return {d: i for i, d in enumerate(docids[:num_ret], 1) if d in labels}, num_ret
    ranks = {}
    # a few labels: a C scan each beats hashing the ranking
    for doc in labels:
        try:
            ranks[doc] = docids.index(doc, 0, num_ret) + 1
        except ValueError:
            pass
    return ranks, num_ret


def rank_scored(docids, scores, labels, depth=None, docset=None, orders=()):
    """{doc: rank} of the labeled documents of a scored ranking, and num_ret.

    trec_eval's order: score descending, then ID descending.  A labeled document's rank is 1 +
    the documents scored higher + the tied ones with a greater ID; only the scores are sorted,
    reversed (a run lists them descending, ties too: one ascending run).  For each of ``orders``
    (None: by grade, or a gains table), the best and worst ranks over ties, None if none is tied.

    >>> rank_scored(["d1", "d2", "d3"], [1.0, 2.0, 2.0], {"d2": 1, "d1": 0})
    ({'d2': 2, 'd1': 3}, 3, None)
    >>> rank_scored(["d1", "d2", "d3"], [1.0, 2.0, 2.0], {"d2": 1, "d1": 0}, orders=(None,))[2]
    ({'d2': 1, 'd1': 3}, {'d2': 2, 'd1': 3})
    """
    n = len(docids)
    num_ret = _num_ret(n, depth)
    docset = set(docids) if docset is None else docset
    present = [d for d in labels if d in docset]
    if not present:
        return {}, num_ret, None
    ordered = sorted(reversed(scores))
    index = dict(zip(docids, range(n))) if len(present) > 8 else None
    ranks, groups, tied_at = {}, {}, {}
    for doc in present:
        s = scores[index[doc] if index else docids.index(doc)]
        low, high = bisect_left(ordered, s), bisect_right(ordered, s)
        ranks[doc] = n - high + 1
        if high - low > 1:
            tied_at.setdefault(s, []).append(doc)
            groups.setdefault((n - high + 1, high - low), []).append(doc)
    # the greater IDs of a tie come first
    for s, ids in _tied_ids(docids, scores, tied_at).items():
        for doc in tied_at[s]:
            ranks[doc] += len(ids) - bisect_right(ids, doc)
    bounds = None
    if orders and groups:
        bounds = tuple(chain.from_iterable(_best_and_worst_ranks(ranks, groups, labels, order)
                                           for order in orders))
    if num_ret < n:
        ranks, bounds = _within_depth(num_ret, ranks, bounds)
    return ranks, num_ret, bounds


def _within_depth(num_ret, ranks, bounds):
    """The ranks, and each order's bounds, of the documents ranked within the first num_ret
    (--depth)."""
    ranks, *bounds = [{d: r for d, r in found.items() if r <= num_ret}
                      for found in (ranks,) + (bounds or ())]
    return ranks, tuple(bounds) or None


def _tied_ids(docids, scores, wanted):
    """{score: the sorted IDs of every document with that score} for the wanted scores, in
    one pass over the ranking (one per labeled document would be quadratic in a large tie)."""
    if len(wanted) <= 1:
        return {s: sorted(compress(docids, map(s.__eq__, scores))) for s in wanted}
    found = {s: [] for s in wanted}
    for doc, s in zip(docids, scores):
        if s in found:
            found[s].append(doc)
    return {s: sorted(ids) for s, ids in found.items()}


def documents(ids, labels, opts):
    """(the document each ranked ID brings in, in rank order; how many ranked texts held more
    than one label): under --chunk-separator its chunk's document; under --match contains the
    label it claims (see _claim), or None; else the ID itself.

    >>> documents(["a#2", "b#1", "a#1"], {}, Reading(separator="#"))
    (['a', 'b', 'a'], 0)
    >>> documents(["x A y", "B and A", "A", "C"], {"A": 1, "B": 0}, Reading(match="contains"))
    (['A', 'B', None, 'C'], 1)
    >>> documents(["x", "A", "A more"], {"A": 1}, Reading(match="contains"))
    (['x', 'A', None], 0)
    """
    if opts.separator:
        return [d.split(opts.separator, 1)[0] for d in ids], 0
    if opts.match != "contains":
        return list(ids), 0
    joined, starts, holders = "\0".join(ids), list(accumulate(len(t) + 1 for t in ids)), {}
    # where each label lies, found in C (no text holds a NUL): linear in the texts' length
    for label in labels:
        at = joined.find(label)
        while at != -1:
            i = bisect_right(starts, at)
            holders.setdefault(i, []).append(label)
            at = joined.find(label, starts[i]) if i + 1 < len(ids) else -1
    out, claimed = list(ids), set()
    # in rank order, as _claim takes them
    for i in sorted(holders):
        out[i] = next((label for label in holders[i] if label not in claimed), None)
        claimed.add(out[i])
    return out, sum(len(inside) > 1 for inside in holders.values())


def _claim(text, labels, claimed):
    """(the label a ranked text claims, how many labels it contains), --match contains' rule
    (README: "Logs as frameworks write them"): the first label, in the labels' order, that it
    contains and no earlier text has claimed (now claimed); the text itself when it contains no
    label (unjudged); None when all it contains are claimed (it is removed, as a folded chunk
    is)."""
    inside = [label for label in labels if label in text]
    free = next((label for label in inside if label not in claimed), None)
    claimed.add(free)
    if free is None and not inside:
        return text, 0
    return free, len(inside)


def check_cut(ids, separator, where, what, query):
    """Refuse an ID (what: whose, for the message) that is blank once cut at the separator.

    >>> check_cut(["a#1", "#2"], "#", "run", "ranked ID", "q")
    Traceback (most recent call last):
    ...
    rag_retrieval_eval.EvalError: run: query 'q': ranked ID '#2' is blank once cut at '#'
    """
    blank = next((d for d in ids if not d.split(separator, 1)[0].strip()), None)
    if blank is not None:
        fail(where, "%s %s is blank once cut at %s" % (what, show(blank), show(separator)), query)


def _best_and_worst_ranks(ranks, groups, labels, gains=None):
    """Best and worst ranks of labeled documents over the orders of their tie groups.

    By grade (gains None): labeled first, highest grade first; the worst order
    the reverse, unlabeled documents first.  By a gains table, for nDCG: the
    highest gain first, and a labeled document whose gain is below an
    unlabeled one's (0) after the unlabeled ones; the worst order the reverse.

    >>> _best_and_worst_ranks({"a": 1, "b": 2}, {(1, 3): ["a", "b"]}, {"a": 1, "b": 2},
    ...                       ((2, -1.0),))
    ({'a': 1, 'b': 3}, {'a': 3, 'b': 1})
    """
    value = labels.__getitem__ if gains is None else partial(_gain, dict(gains), labels)
    unlabeled = -math.inf if gains is None else 0.0
    best, worst = dict(ranks), dict(ranks)
    for (first, size), docs in groups.items():
        docs = sorted(docs, key=value, reverse=True)
        # after the unlabeled documents
        below = {d for d in docs if value(d) < unlabeled}
        for i, doc in enumerate(docs):
            best[doc] = first + i + (size - len(docs) if doc in below else 0)
            worst[doc] = first + size - 1 - best[doc] + first
    return best, worst


def _gain(gains, labels, doc):
    """A labeled document's nDCG gain under a gains table (as nDCG reads it)."""
    grade = labels[doc]
    if grade < 0:
        return 0.0
    return gains.get(grade, float(grade))


def judge_run(rankings, truth, opts, source, root=None):
    """{qid: Ranking, or None for a query without labels} of {qid: (docids, scores or None)}."""
    ranked = {}
    for qid, (docids, scores) in rankings.items():
        where = source if root is None else loc(source, _join(root, qid))
        if opts.separator:
            check_cut(docids, opts.separator, where, "ranked ID", qid)
        labels = truth.labels.get(qid)
        ids = opts.pipeline and held_ids(qid, docids, None, opts.pipeline)
        if labels is None and not opts.agree:
            ranked[qid] = None
            continue
        ranking = judge_ranking(docids, scores, labels or {}, opts, None,
                                evidence_of(truth, qid))._replace(ids=ids)
        if opts.views:
            views = tool_views(qid, docids, scores, truth, opts)
            ranking = ranking._replace(judged=ranking.judged._replace(views=views))
        if truth.access:
            ranking = with_leaks(ranking, docids, scores, opts, truth.access, qid)
        if opts.filters and docids and labels is not None:
            if opts.duplicates == "first":
                docids, scores, _ = best_occurrences(docids, scores)
            query = Query(qid, where, labels, evidence_of(truth, qid), scores is None)
            ranking = with_filters(ranking, in_rank_order(docids, scores), truth, opts, query)
        ranked[qid] = ranking
    return ranked


def held_ids(qid, docids, docset, pipeline):
    """A stage's IDs of a query ({ID: None} in rank order) when the stage before it is to check
    them (pipeline.keep), else None; refused when the stage lacks an ID a later one holds for
    the query, or holds one the index does not.  docids: str, or bytes (docset: their set)."""
    encoded = bool(docids) and isinstance(docids[0], bytes)
    if docset is None:
        docset = set(docids)
    for what, where, later in pipeline.later:
        for doc in later.get(qid, ()):
            if (doc.encode() if encoded else doc) not in docset:
                fail(where, "%s holds %s, which %s (%s) does not hold: a stage holds only what "
                            "the stage before it held"
                     % (what, show(doc), pipeline.name, pipeline.place), qid)
    if pipeline.index is None and not pipeline.keep:
        return None
    texts = list(map(bytes.decode, docids)) if encoded else docids
    # a set's test runs in C: an index of millions of IDs is read once per ranked ID
    if pipeline.index is not None and not pipeline.index.keys() >= set(texts):
        outside = next(doc for doc in texts if doc not in pipeline.index)
        fail(pipeline.place, "%s holds %s, which the index does not hold"
             % (pipeline.name, show(outside)), qid)
    return dict.fromkeys(texts) if pipeline.keep else None


def with_leaks(ranking, docids, scores, opts, access, qid):
    """The Ranking whose Judged record holds its leaks (--access): ((rank, document), ...) of the
    documents the query may not read, read as judge_ranking reads the ranking: repeats removed
    (--duplicates first: the best place), chunks folded to their documents, within --depth,
    before --judged-only (an unlabeled document reaches the user too).  A query may read a
    document when they share a principal; a document the map does not name, no one may.  A
    judged query the map does not name is refused: with no principals it could read nothing.

    >>> access = Access({"a": {"x"}, "c": {"x", "y"}}, {"q": {"x"}}, "access.txt")
    >>> ids, scores = ["a#1", "b#1", "c#1", "b#2"], [4.0, 3.0, 3.0, 9.0]
    >>> with_leaks(Ranking(judge({}, 3, {}), 0, ()), ids, scores, Reading(depth=2, separator="#"),
    ...            access, "q").judged.leaks
    ((1, 'b'),)
    """
    if qid not in access.queries:
        fail(access.source, "the query is judged, and has no principals here: a query with none "
                            "may read nothing; say whom it runs as", qid)
    # in rank order, each document once
    ids = first_items(docids, scores, {}, opts)[0]
    leaks = [(r, d) for r, d in enumerate(ids[:opts.depth], 1)
             if access.queries[qid].isdisjoint(access.documents.get(d, ()))]
    return ranking._replace(judged=ranking.judged._replace(leaks=tuple(leaks)))


def evidence_of(truth, qid):
    """A query's evidence sets, or None."""
    return truth.evidence and truth.evidence.get(qid)


# One query's ranking as its filters see it: its ID and where it is (for messages), its
# labels, its evidence sets (or None), and whether it is a list (no scores).
Query = namedtuple("Query", "qid where labels sets listed")


def with_filters(ranking, items, truth, opts, query):
    """The Ranking with the Judged record of each filter's ranking (see filtered_judged), and
    the items that wait for the token counts."""
    filtered, waiting, documents_kept = filtered_judged(ranking.judged, items, truth, opts, query)
    return with_kept(ranking, documents_kept)._replace(
        judged=ranking.judged._replace(filtered=filtered),
        pending=(query, waiting) if waiting else None)


def with_kept(ranking, kept):
    """The Ranking whose seen (for --explain) adds {Filter: the documents it kept}."""
    if not kept:
        return ranking
    return ranking._replace(seen=ranking.seen[:2] + ({**(ranking.seen[2] or {}), **kept},))


def filtered_judged(plain, items, truth, opts, query):
    """({Filter: Judged}, {Filter: items}, under --explain {Filter: documents kept}) of one
    ranking's items (score, ID) in rank order (repeats removed under --duplicates first) under each
    of opts.filters: a floor keeps the items scored at or above it (--depth, applied when judged,
    keeps the same), a budget weighs the items within --depth (and the floor) as ranked, chunks
    before folding, and each filter's ranking is judged as any ranking is (folding, --judged-only).
    A budget whose counts are read later (truth.lengths is LATER) gives the items it may weigh
    instead. plain: the Judged record of the whole ranking."""
    # what scores it
    filters = [f for f in opts.filters if query.qid not in truth.no_answer or f in opts.abstain]
    out, waiting, labels, documents_kept = {}, {}, query.labels, {}
    for ranking_filter, kept in zip(filters, tee(items, len(filters))):
        if ranking_filter.thresh is not None:
            if query.listed:
                fail(query.where,
                     "a score floor (thresh=) needs scores, and the ranking is a list", query.qid)
            kept = takewhile(partial(_scored_at_least, ranking_filter.thresh), kept)
        if ranking_filter.tokens is not None:
            kept, reach = within_depth(kept, opts, labels), opts.filters[ranking_filter]
        if ranking_filter.tokens is None:
            kept = list(kept)
            # ties whole
            out[ranking_filter] = judge_items(kept, opts, query, opts.ties)
        elif truth.lengths is not LATER:
            kept = within_budget(kept, ranking_filter, truth.lengths or {}, opts, query)
            out[ranking_filter] = budget_judged(plain, kept, ranking_filter, opts, query)
        else:
            # a prefix stops at the reach
            if ranking_filter.pack != "skip" and reach is not None:
                kept = _through_reach(kept, reach, labels, opts)
            waiting[ranking_filter] = list(kept)
        if opts.top_k and ranking_filter in out:
            documents_kept[ranking_filter] = _documents_in(kept, labels, opts)
    return out, waiting, documents_kept


def _documents_in(items, labels, opts):
    """The documents the items bring in (see documents)."""
    return set(map(_counter(labels, opts, judged=False), items)) - {None}


def _scored_at_least(floor, item):
    return item[0] >= floor


def budget_judged(plain, kept, budget, opts, query):
    """The Judged record of the items a budget keeps: packing a prefix, the whole ranking's cut
    after the documents they bring in (judged again, it would be the same record); else judged."""
    if budget.pack != "prefix":
        return judge_items(kept, opts, query)
    counted = _counter(query.labels, opts)
    cut = len({counted(item) for item in kept} - {None})
    return plain._replace(
        rel_ranks=[r for r in plain.rel_ranks if r <= cut],
        gains=[(r, g) for r, g in plain.gains if r <= cut],
        judged_ranks=[r for r in plain.judged_ranks if r <= cut], num_ret=cut, bounds=None,
        unjudged_ranks=[r for r in plain.unjudged_ranks if r <= cut], filtered=None,
        ranked=len(kept), evidence=plain.evidence
        and tuple(tuple(r if r <= cut else math.inf for r in s) for s in plain.evidence))


def judge_items(items, opts, query, ties=False):
    """The Judged record of a filtered ranking's items (score, ID) in rank order."""
    plain = opts._replace(filters=NOTHING, ties=ties, top_k=None)
    return judge_ranking([d for _, d in items], None if query.listed else [x for x, _ in items],
                         query.labels, plain, None, query.sets).judged


def within_depth(items, opts, labels=None):
    """The items within --depth: up to, not including, the one that brings in the (N+1)-th
    document (folded, or claimed: --depth counts documents).

    >>> [d for _, d in within_depth([(None, "a#1"), (None, "a#2"), (None, "b#1"), (None, "c#1")],
    ...                             Reading(depth=2, separator="#"))]
    ['a#1', 'a#2', 'b#1']
    """
    if opts.depth is None:
        return items
    if not opts.separator and opts.match != "contains":
        return islice(items, opts.depth)
    seen, document = {None}, _counter(labels, opts, judged=False)
    return takewhile(lambda item: seen.add(document(item)) or len(seen) <= opts.depth + 1, items)


def _through_reach(items, reach, labels, opts):
    """The items up to the one that brings in the reach-th document the measures count."""
    brought, counted = {None}, _counter(labels, opts)
    for item in items:
        if len(brought) > reach:
            return
        brought.add(counted(item))
        yield item


def _counter(labels, opts, judged=True):
    """A function of each item (score, ID), taken in rank order, to the document it brings in
    as the measures count them (see documents; with judged, under --judged-only, None for an
    unjudged one)."""
    claimed = set()

    def document(item):
        if opts.separator:
            doc = item[1].split(opts.separator, 1)[0]
        elif opts.match == "contains":
            doc = _claim(item[1], labels, claimed)[0]
        else:
            doc = item[1]
        if doc is None or not (judged and opts.judged_only) or labels.get(doc, -1) >= 0:
            return doc
        return None
    return document


def in_rank_order(docids, scores):
    """[(score, ID), ...] in trec_eval's order, score descending and then ID descending;
    [(None, ID), ...] in list order for a listed ranking.

    >>> in_rank_order(["a", "b", "c"], [1.0, 2.0, 2.0])
    [(2.0, 'c'), (2.0, 'b'), (1.0, 'a')]
    """
    if scores is None:
        return list(zip(repeat(None), docids))
    return sorted(zip(scores, docids), reverse=True)


def ranked_windows(docids, scores, size=16):
    """Lists of a scored ranking's items (score, ID), in trec_eval's order (see in_rank_order), a
    window at a time, each twice the last, the first of size items or more: what reads the top of
    a long ranking sorts little more.  A run file lists a query's documents by score already, but
    for the order of tied ones; when it does not, the items scored at least as high as the
    size-th best come first."""
    n = len(scores)
    if not all(map(ge, scores, islice(scores, 1, None))):
        floor = sorted(scores)[-min(size, n)]
        for keep in (floor.__le__, floor.__gt__):
            yield sorted(compress(zip(scores, docids), map(keep, scores)), reverse=True)
        return
    start = 0
    while start < n:
        stop = min(n, start + size)
        # a tie is sorted whole
        while stop < n and scores[stop] == scores[stop - 1]:
            stop += 1
        yield sorted(zip(scores[start:stop], docids[start:stop]), reverse=True)
        start, size = stop, size * 2


def within_budget(items, budget, lengths, opts=Reading(), query=None):
    """The items (score, ID), in rank order, that a token budget keeps: the longest prefix
    whose counts (each plus the overhead) sum to at most budget.tokens, or with pack "skip"
    every item that still fits.  The budget weighs the items in turn, until one does not
    fit (packing a prefix) or until it keeps the document its measures look at last (the
    budget's reach in opts.filters): an item it weighs needs a count, and no other does.  The
    README's example ("Token budgets"):

    >>> items = [(None, "d%d" % i) for i in range(1, 6)]
    >>> lengths = {"d1": 300, "d2": 900, "d3": 400, "d4": 100, "d5": 200}
    >>> [d for _, d in within_budget(items, Filter(tokens=1500), lengths)]
    ['d1', 'd2']
    >>> [d for _, d in within_budget(items, Filter(tokens=1500, pack="skip"), lengths)]
    ['d1', 'd2', 'd4', 'd5']
    """
    kept, total, brought, counted = [], 0, {None}, _counter(query.labels if query else {}, opts)
    reach = opts.filters.get(budget)
    for item in items:
        if reach is not None and len(brought) > reach:
            break
        count = lengths.get(item[1])
        if count is None:
            fail(query.where, "no token count for %s: a token budget weighs it (--lengths FILE, "
                              "or a record's tokens)" % show(item[1]), query.qid)
        if total + count + budget.overhead <= budget.tokens:
            kept.append(item)
            total += count + budget.overhead
            # what the measures will see
            brought.add(counted(item))
        elif budget.pack == "prefix":
            break
    return kept


# === Measures ===

# One registry: --help, the unknown-measure message, the trec output names and the tests all read
# it, so adding a measure is one decorated function. A measure's record: how it is written and
# scored, and its facts, which every feature reads from here (no list of measure names elsewhere).
# ties: BOUNDED (--ties' orders by grade give its lowest and highest value), ORDER_FREE (no order
# of tied documents changes it), RETRIEVED_COUNTED (bounded, but it counts the documents retrieved,
# which under --judged-only with --depth depends on the order), or why it is not bounded; unjudged:
# BOUNDED (a relevant label can only raise it: --unjudged-bounds), or why not; losable: 0 means
# "nothing relevant found", so a query can be lost; evidence: it reads evidence sets; domain: the
# questions it scores (ANSWERABLE, or UNANSWERABLE: those without an answer, which score nothing
# else, or AGREEMENT: every query both the run and the baseline rank); filtered: the function under
# a floor or a budget (None: func).
Measure = namedtuple("Measure", "name func cutoff aggregate trec doc params ties unjudged losable "
                                "evidence domain filtered")
MEASURES = {}
BOUNDED, ORDER_FREE, RETRIEVED_COUNTED = "bounded", "order-free", "retrieved counted"
ANSWERABLE, UNANSWERABLE, AGREEMENT = "answerable", "unanswerable", "agreement"
CAN_LOWER = "a relevant label for an unjudged document can lower it"
# a measure's, or a parameter's, reason
NOT_PLAIN = "bounded are %s, without parameters" % ONLY_BOUNDED
NOT_A_NUMBER = "it is no number"
NOT_EVIDENCE_ORDERS = "the orders by grade are not the best and worst orders of evidence"

# A filter of the ranking, before folding and --depth (README: "Token budgets", "Score floors"): a
# score floor (items scoring at least thresh) and a token budget (items, each costing its count
# plus overhead, while the total stays within tokens: a prefix, or every item that still fits with
# pack "skip").  None: no floor, or no budget.  A measure of an earlier stage of the pipeline
# (README: "Where was it lost?") reads that stage's ranking, a Filter of its name alone (stage).
Filter = namedtuple("Filter", "thresh tokens overhead pack stage",
                    defaults=(None, None, 0, "prefix", None))
FILTER_PARAMS = ("thresh", "tokens", "overhead", "pack")
_REL_AND_FILTERS = ("rel",) + FILTER_PARAMS
# the facts of most measures: they score the labels of the questions that have an answer, read no
# evidence sets, and a 0 does not say that nothing relevant was found
_ON_LABELS = dict(losable=False, evidence=False, domain=ANSWERABLE)
# the facts of a measure that --unjudged-bounds does not bound (NOT_PLAIN), bounded over ties
_PLAIN = dict(ties=BOUNDED, unjudged=NOT_PLAIN, **_ON_LABELS)
# the facts of a count (NumRet...), summed over the queries
_COUNT = dict(_PLAIN, aggregate="sum")
# the facts of most of trec_eval's measures: the orders by grade bound them, and a relevant label
# for an unjudged document can lower them
_TREC = dict(ties=BOUNDED, unjudged=CAN_LOWER, **_ON_LABELS)
# the facts of a measure bounded both ways: over ties, and with --unjudged-bounds
_BOUNDED = dict(ties=BOUNDED, unjudged=BOUNDED, **_ON_LABELS)
# the facts of the measures of what was found at all: bounded both ways, and 0 when nothing was
_FOUND = dict(_BOUNDED, losable=True)
# the facts of trec_eval's measures of what was found, which are 0 when nothing relevant was
_TREC_FOUND = dict(_TREC, losable=True)
# the facts of a measure of the whole set retrieved: it counts the documents retrieved, which
# under --judged-only with --depth depend on the order of tied ones
_SET = dict(ties=RETRIEVED_COUNTED, **_ON_LABELS)
# the facts of trec_eval's nDCG averaged over ranks (nDCGRel, RnDCG)
_TREC_AVERAGED = dict(_TREC, ties="the orders by grade are not shown to be its best and worst")


def measure(name, cutoff, uncut="", cut="", **record):
    """Register a measure, each of its facts stated (ties, unjudged, losable, evidence and
    domain: see Measure), or an error at import; record: the facts, and aggregate ("mean", or
    "sum" for counts), params and filtered where they are not the defaults.

    cutoff: 'required' (R@10), 'optional' (RR or RR@10), 'none' (Rprec) or 'level' (IPrec@0.5: a
    recall level in tenths). uncut, cut: trec_eval's names (uncut, and cut with {k}), used by
    --format trec ("": none), its Measure's trec.
    params: the parameters it takes, in ir_measures' syntax: rel (its own relevance level,
    P(rel=2)@10), gains (nDCG(gains={0:0,1:1,2:3})) and FILTER_PARAMS; with a filter, a required
    cutoff may be left out (the whole filtered ranking).
    """
    facts = dict({"aggregate": "mean", "params": ("rel",), "filtered": None}, **record)
    if set(facts) != set(Measure._fields) - {"name", "func", "cutoff", "trec", "doc"} or not (
            all(isinstance(facts[f], str) and facts[f] for f in ("ties", "unjudged")) and
            {type(facts["losable"]), type(facts["evidence"])} == {bool} and
            facts["domain"] in (ANSWERABLE, UNANSWERABLE, AGREEMENT)):
        raise TypeError("measure %s: state ties and unjudged (BOUNDED or a reason), losable and "
                        "evidence (True or False) and domain (ANSWERABLE, UNANSWERABLE or "
                        "AGREEMENT), and nothing else" % name)

    def register(func):
        # the help's line: the summary, which may be wrapped
        MEASURES[name] = Measure(name=name, func=func, cutoff=cutoff, trec=(uncut, cut), **facts,
                                 doc=" ".join(func.__doc__.strip().split("\n\n")[0].split()))
        return func
    return register


def _found(q, k):
    """How many relevant documents are ranked within k (all when k is None)."""
    return len(q.rel_ranks) if k is None else bisect_right(q.rel_ranks, k)


def _mean(values):
    """The mean of values, 0.0 of none."""
    return sum(values) / len(values) if values else 0.0


def _cut(k):
    """A cutoff to compare ranks with: k, or past every rank (math.inf is not) when there is
    none."""
    return sys.maxsize if k is None else k


def _example(*ranked_grades, labels=None, num_ret=None):
    """A Judged record for doctests: grades in rank order, 0 or None = unjudged."""
    grades = {"d%d" % r: g for r, g in enumerate(ranked_grades, 1) if g is not None}
    ranks = {d: int(d[1:]) for d in grades}
    grades.update(labels or {})
    return judge(ranks, len(ranked_grades) if num_ret is None else num_ret, grades, 1, None,
                 len(ranked_grades))


@measure("R", "required", cut="recall_{k}", params=_REL_AND_FILTERS, **_FOUND)
def recall(q, k):
    """Recall: relevant documents within k / all relevant documents (R); 0 if R is 0.

    >>> recall(_example(None, 1, 1, labels={"x": 1}), 2)   # 1 of 3 relevant within 2
    0.3333333333333333
    """
    return _found(q, k) / q.num_rel if q.num_rel else 0.0


def context_precision(q, k):
    """P with a floor or a budget: relevant documents within k / the documents left within k,
    0 when none is left: the share of the context that is relevant.

    >>> one = _example(1, None, num_ret=2)
    >>> context_precision(one, 10), precision(one, 10)
    (0.5, 0.1)
    """
    left = _num_ret(q.num_ret, k)
    return _found(q, k) / left if left else 0.0


@measure("P", "required", cut="P_{k}", params=_REL_AND_FILTERS, **_BOUNDED,
         filtered=context_precision)
def precision(q, k):
    """Precision: relevant documents within k / k (missing ranks count as non-relevant).

    >>> precision(_example(1, None), 10)
    0.1
    """
    return _found(q, k) / k


@measure("RR", "optional", "recip_rank", params=_REL_AND_FILTERS, **_FOUND)
def reciprocal_rank(q, k):
    """Reciprocal rank: 1 / rank of the first relevant document (within k), else 0.

    >>> reciprocal_rank(_example(0, None, 1), None), reciprocal_rank(_example(0, None, 1), 2)
    (0.3333333333333333, 0.0)
    """
    if q.rel_ranks and (k is None or q.rel_ranks[0] <= k):
        return 1.0 / q.rel_ranks[0]
    return 0.0


@measure("Success", "required", cut="success_{k}", params=_REL_AND_FILTERS, **_FOUND)
def success(q, k):
    """Success: 1 if any relevant document is within k, else 0.

    >>> success(_example(None, 1), 1), success(_example(None, 1), 2)
    (0.0, 1.0)
    """
    return 1.0 if q.rel_ranks and q.rel_ranks[0] <= _cut(k) else 0.0


@measure("AP", "optional", "map", "map_cut_{k}", params=_REL_AND_FILTERS, **_TREC)
def average_precision(q, k):
    """Average precision: sum of P@i at each relevant rank i (within k) / R.

    Relevant documents never retrieved add 0, so they lower AP through R.

    >>> average_precision(_example(1, None, 1, labels={"x": 1}), None)   # (1/1 + 2/3) / 3
    0.5555555555555555
    """
    if not q.num_rel:
        return 0.0
    return sum((i + 1) / r for i, r in enumerate(q.rel_ranks) if k is None or r <= k) / q.num_rel


@measure("nDCG", "optional", "ndcg", "ndcg_cut_{k}", params=("gains",) + FILTER_PARAMS,
         **_TREC)
def ndcg(q, k, *, gains=None):
    """nDCG: DCG / ideal DCG; gain = grade > 0, discount log2(rank + 1).

    The gain is the grade whatever the relevance level; the ideal ranking
    holds every labeled grade > 0, best first, cut at k like the run (trec_eval).
    gains={G:V,...}: a gain per grade, as trec_eval's ndcg with gain parameters
    (-m ndcg.1=1,2=3); a grade not listed keeps its own value as gain (see _trec_gains),
    and the ideal orders every label by its gain.

    >>> round(ndcg(_example(None, 2, 1), None), 6)   # (2/log2(3) + 1/2) / (2 + 1/log2(3))
    0.669672
    >>> # (3/log2(3) + .5/2) / (3 + .5/log2(3))
    >>> round(ndcg(_example(None, 2, 0), None, gains={0: 0.5, 2: 3.0}), 6)
    0.646301
    """
    ranked, ideal = q.gains, q.ideal
    if gains is not None:
        ranked, ideal = _trec_gains(q, gains)
    ideal = ideal if k is None else ideal[:k]
    # g / log2(i + 2); gains <= 2**53
    best = sum(map(truediv, ideal, map(math.log2, range(2, len(ideal) + 2))))
    if best <= 0:
        return 0.0
    return sum(g / math.log2(r + 1) for r, g in ranked if k is None or r <= k) / best


def _zero_ranks(q):
    """Ranks of retrieved documents graded 0, which a gains table may give a gain."""
    return set(q.judged_ranks).difference([r for r, _ in q.gains], q.unjudged_ranks)


@measure("Rprec", "none", "Rprec", **_TREC)
def r_precision(q, k):
    """R-precision: relevant documents within rank R / R; 0 if R is 0.

    >>> # R = 3: ranks 1 and 3 are within 3
    >>> r_precision(_example(1, None, 1, labels={"x": 1}), None)
    0.6666666666666666
    """
    return relative_precision(q, q.num_rel)


@measure("Judged", "required", params=(), **_PLAIN)
def judged_share(q, k):
    """Judged: documents within k that carry any label / min(k, retrieved); 0 if none.

    >>> judged_share(_example(0, None, 1, None), 3)
    0.6666666666666666
    """
    return bisect_right(q.judged_ranks, k) / min(k, q.num_ret) if q.num_ret else 0.0


@measure("NumRet", "none", "num_ret", params=(), **_COUNT)
def retrieved_count(q, k):
    """Retrieved documents (after --depth); summed over queries."""
    return q.num_ret


@measure("NumRel", "none", "num_rel", **_COUNT)
def relevant_count(q, k):
    """Relevant labeled documents (R); summed over queries."""
    return q.num_rel


@measure("NumRelRet", "none", "num_rel_ret", **_COUNT)
def relevant_retrieved_count(q, k):
    """Relevant documents retrieved; summed over queries."""
    return len(q.rel_ranks)


# trec_eval's measures for incomplete labels: a negative grade means "pooled but
# unjudged", and a document without a label was never in the pool (form_res_rels.c).

def _unjudged_within(q, k):
    """How many unjudged documents (no label, or a negative grade) a query's top k holds (its whole
    ranking when k is None)."""
    n = _num_ret(q.num_ret, k)
    return n - bisect_right(_graded_ranks(q), n)


def _judged_nonrel_ranks(q):
    """Sorted ranks of retrieved documents judged non-relevant (0 <= grade < level)."""
    return sorted(set(q.judged_ranks).difference(q.rel_ranks, q.unjudged_ranks))


@measure("Bpref", "none", "bpref", **_TREC)
def bpref(q, k):
    """Bpref: per relevant retrieved document, 1 - (judged non-relevant above it) / min(R, N); / R.

    N: documents judged non-relevant; what is above counts at most R; unjudged
    and unlabeled documents are skipped (trec_eval's m_bpref.c).

    >>> bpref(_example(0, 1, None, 1, labels={"x": 1, "y": 0}), None)   # (1 - 1/2 + 1 - 1/2) / 3
    0.3333333333333333
    """
    if not q.num_rel:
        return 0.0
    nonrel, total = _judged_nonrel_ranks(q), 0.0
    for rank in q.rel_ranks:
        above = bisect_left(nonrel, rank)
        total += 1.0 - min(above, q.num_rel) / min(q.num_nonrel, q.num_rel) if above else 1.0
    return total / q.num_rel


@measure("GMAP", "none", "gm_map", aggregate="geometric", **_TREC)
def gm_average_precision(q, k):
    """Geometric mean AP: AP per query, exp(mean(log(max(AP, 0.00001)))) over them
    (trec_eval's gm_map).

    A query's value is its AP; a mean rewards consistency, as one near 0 pulls it down.

    >>> q = _example(1, None, 1, labels={"x": 1})
    >>> gm_average_precision(q, None) == average_precision(q, None)
    True
    """
    return average_precision(q, None)


@measure("GMBpref", "none", "gm_bpref", aggregate="geometric", **_TREC)
def gm_bpref(q, k):
    """Geometric mean Bpref: Bpref per query, averaged as GMAP (trec_eval's gm_bpref)."""
    return bpref(q, None)


# trec_eval's smoothing: infAP is not AP even with complete labels
INFAP_EPSILON = 0.00001


@measure("infAP", "none", "infAP", params=(),
         ties="a document moved above a relevant one can raise it", unjudged=CAN_LOWER,
         **_ON_LABELS)
def inferred_ap(q, k):
    """infAP: inferred average precision over a sampled pool
    (Yilmaz and Aslam; trec_eval's m_infap.c).

    >>> # (1 + 1/4 + 3/4 * 3/3 * (1 + e) / (2 + 2e)) / 2
    >>> round(inferred_ap(_example(1, 0, -1, 1), None), 6)
    0.8125
    """
    if not q.num_rel:
        return 0.0
    nonrel, total = _judged_nonrel_ranks(q), 0.0
    # found: relevant documents above this one
    for found, rank in enumerate(q.rel_ranks):
        if rank == 1:
            total += 1.0
            continue
        j, below = float(rank - 1), bisect_left(nonrel, rank)
        total += 1.0 / (j + 1.0) + (j / (j + 1.0)) * (
            (found + below + bisect_left(q.unjudged_ranks, rank)) / j) * (
            (found + INFAP_EPSILON) / (found + below + 2 * INFAP_EPSILON))
    return total / q.num_rel


@measure("SetP", "none", "set_P", unjudged=BOUNDED, **_SET)
def set_precision(q, k):
    """Set precision: relevant retrieved / retrieved; 0 if nothing was retrieved.

    >>> set_precision(_example(1, None, 0, 1), None)
    0.5
    """
    return context_precision(q, None)


@measure("SetR", "none", "set_recall", **_BOUNDED)
def set_recall(q, k):
    """Set recall: relevant retrieved / R; 0 if R is 0."""
    return recall(q, None)


@measure("SetF", "none", "set_F", unjudged=BOUNDED, **_SET)
def set_f(q, k):
    """Set F (beta 1): 2 * SetP * SetR / (SetP + SetR); 0 if nothing relevant was retrieved.

    >>> set_f(_example(1, None, 0, 1, labels={"x": 1}), None)   # P 1/2, R 2/3
    0.5714285714285715
    """
    if not q.rel_ranks:
        return 0.0
    p, r = set_precision(q, k), set_recall(q, k)
    return (1.0 + 1.0) * p * r / (1.0 * p + r)


@measure("IPrec", "level", cut="iprec_at_recall_{k:.2f}", params=(), **_TREC)
def interpolated_precision(q, level):
    """Interpolated precision at recall r = 0.0, 0.1, ... 1.0: the best P@i once r * R are found.

    The best P@i from the rank where round(r * R) relevant documents are found
    on (trec_eval 10's lround).

    >>> interpolated_precision(_example(None, 1, 1, None, 1), 0.5)   # R 3: 2 found at rank 3
    0.6666666666666666
    """
    cut = math.floor(level * q.num_rel + 0.5)
    if cut > len(q.rel_ranks) or not q.rel_ranks:
        return 0.0
    return max(found / rank
               for found, rank in enumerate(q.rel_ranks[max(cut, 1) - 1:], max(cut, 1)))


# trec_eval 10's other measures of -m all_trec (its m_*.c), each as it defines it: its quirks
# are kept, for its numbers are what a TREC user compares with.

@measure("RprecMult", "multiple", cut="Rprec_mult_{k:.2f}", params=(), **_TREC)
def r_precision_multiple(q, multiple):
    """Precision at a multiple m of R: P@int(m * R + 0.9); 0 if R is 0 (trec_eval's Rprec_mult).

    >>> r_precision_multiple(_example(1, None, 1, labels={"x": 1}), 0.5)   # R 3: P@2
    0.5
    """
    cut = int(multiple * q.num_rel + 0.9)
    return precision(q, cut) if cut else 0.0


@measure("Utility", "none", "utility", params=(), ties=RETRIEVED_COUNTED,
         unjudged="a relevant label moves a document to another coefficient", **_ON_LABELS)
def utility(q, k, *, weights=(1.0, -1.0, 0.0, 0.0), docs=0):
    """Utility: a * relevant retrieved + b * others retrieved + c * relevant missed
    + d * others missed.

    weights={a,b,c,d} (1, -1, 0, 0); others missed are of a collection of docs documents
    (trec_eval's utility, whose -N is docs).

    >>> utility(_example(1, None, 0, labels={"x": 1}), None)   # 1 - 2
    -1.0
    """
    (a, b, c, d), found = weights, len(q.rel_ranks)
    return (a * found + b * (q.num_ret - found) + c * (q.num_rel - found)
            + d * (docs + found - q.num_ret - q.num_rel))


@measure("IPrecAvg", "none", "11pt_avg", params=(), **_TREC)
def interpolated_precision_mean(q, k, *, levels=tuple(r / 10 for r in range(11))):
    """Interpolated precision averaged over the recall levels 0.0, 0.1, ... 1.0,
    or levels={...} (11pt_avg).

    >>> interpolated_precision_mean(_example(1, None), None, levels=(0.5, 1.0))
    1.0
    """
    return sum(interpolated_precision(q, level) for level in levels) / len(levels)


@measure("BinG", "none", "binG", **_TREC_FOUND)
def binary_g(q, k):
    """Binary G: per relevant retrieved document,
    1 / log2(2 + documents not relevant above it); / R.

    >>> binary_g(_example(0, 1, labels={"x": 1}), None)   # (1 / log2(3)) / 2
    0.31546487678572877
    """
    if not q.rel_ranks:
        return 0.0
    return sum(1.0 / math.log2(2 + rank - found)
               for found, rank in enumerate(q.rel_ranks, 1)) / q.num_rel


def _trec_gains(q, gains):
    """trec_eval's gains of one query (gain_init.c): ([(rank, gain)] of the retrieved documents
    whose gain is not 0, the ideal ranking's positive gains, best first); a grade's gain is the
    grade unless gains says otherwise; unjudged documents gain 0."""
    table = gains or {}
    ranked = [(r, table.get(g, float(g))) for r, g in q.gains]
    if table.get(0):
        ranked = sorted(ranked + [(r, table[0]) for r in _zero_ranks(q)])
    labeled = q.ideal + [0] * (q.num_rel + q.num_nonrel - len(q.ideal))
    ideal = sorted((g for g in (table.get(grade, float(grade)) for grade in labeled) if g > 0),
                   reverse=True)
    return [(r, g) for r, g in ranked if g != 0], ideal


def _ideal_dcg(ideal):
    """[0, DCG of the ideal's top 1, top 2, ...]."""
    return list(accumulate((g / math.log2(i + 2) for i, g in enumerate(ideal)), initial=0.0))


@measure("G", "none", "G", params=("gains",), **_TREC_FOUND)
def normalized_gain(q, k, *, gains=None):
    """G: per retrieved document,
    gain / log2(2 + the ideal's gain so far - its own so far); / ideal gain.

    The ideal's gain counts 1 at least a rank (trec_eval's G; gains= as nDCG's).

    >>> round(normalized_gain(_example(0, 1), None), 6)   # 1 / log2(2 + 2 - 1)
    0.63093
    """
    ranked, ideal = _trec_gains(q, gains)
    # its sums would lose their units (trec_eval: "Can't")
    if sum(ideal) + q.num_ret >= 2 ** 53:
        raise EvalError("G: the gains of a query add up past 2**53, where floats lose their "
                        "units: give smaller ones, as G(gains={%d:1})" % max(q.ideal))
    cost = list(accumulate((max(g, 1.0) for g in ideal), initial=0.0))
    total, got = 0.0, 0.0
    for rank, gain in ranked:
        got += gain
        # the ideal's cost so far; past its end, 1 a rank
        so_far = cost[rank] if rank < len(cost) else cost[-1] + rank - len(ideal)
        total += gain / math.log2(2 + so_far - got)
    return total / sum(ideal) if ideal else 0.0


@measure("nDCGRel", "none", "ndcg_rel", params=("gains",), **_TREC_AVERAGED)
def ndcg_at_relevant(q, k, *, gains=None):
    """nDCG averaged over the relevant documents: nDCG at each one retrieved, the whole
    ranking's if missed.

    (trec_eval's ndcg_rel; gains= as nDCG's.)

    >>> # (1/log2(3)) / (1 + 1/log2(3)) twice
    >>> round(ndcg_at_relevant(_example(0, 1, labels={"x": 1}), None), 6)
    0.386853
    """
    ranked, ideal = _trec_gains(q, gains)
    best, dcg, total, found = _ideal_dcg(ideal), 0.0, 0.0, 0
    for rank, gain in ranked:
        dcg += gain / math.log2(rank + 1)
        if gain > 0:
            total, found = total + dcg / best[min(rank, len(ideal))], found + 1
    total += (len(ideal) - found) * dcg / best[-1] if ideal else 0.0
    return total / len(ideal) if total > 0 else 0.0


@measure("RnDCG", "none", "Rndcg", params=("gains",), **_TREC_AVERAGED)
def ndcg_at_r_levels(q, k, *, gains=None):
    """nDCG averaged at the ranks where the ideal ranking's gain changes (trec_eval's Rndcg).

    The whole ranking's nDCG counts too when it runs 2 or more ranks past the ideal, as
    trec_eval's does.

    >>> # ideal 2 1: (0 / 2 + (2/log2(3)) / (2 + 1/log2(3))) / 2
    >>> round(ndcg_at_r_levels(_example(0, 2, 1), None), 6)
    0.239812
    """
    if not q.num_rel:
        return 0.0
    ranked, ideal = _trec_gains(q, gains)
    best, at = _ideal_dcg(ideal), [t for t in range(1, len(ideal) + 1)
                                   if (ideal + [0.0])[t] != ideal[t - 1]]
    dcg = list(accumulate(gain / math.log2(rank + 1) for rank, gain in ranked))
    values = []
    for t in at:
        # the gains ranked at t or above
        within = bisect_right(ranked, (t, math.inf))
        values.append((dcg[within - 1] if within else 0.0) / best[t])
    if ideal and q.num_ret > len(ideal) + 1:
        values.append((dcg[-1] if dcg else 0.0) / best[-1])
    return _mean(values)


@measure("RelP", "required", cut="relative_P_{k}", **_TREC_FOUND)
def relative_precision(q, k):
    """Relative precision: relevant documents within k / min(k, R), the most there can be;
    0 if R is 0.

    >>> relative_precision(_example(1, None, 1), 10)
    1.0
    """
    return _found(q, k) / min(k, q.num_rel) if q.num_rel else 0.0


@measure("SetRelP", "none", "set_relative_P", unjudged=CAN_LOWER, **_SET)
def set_relative_precision(q, k):
    """Set relative precision: relevant retrieved / min(retrieved, R); 0 if either is 0."""
    return len(q.rel_ranks) / min(q.num_ret, q.num_rel) if q.num_ret and q.num_rel else 0.0


@measure("SetAP", "none", "set_map", unjudged=CAN_LOWER, **_SET)
def set_average_precision(q, k):
    """Set AP: SetP * SetR, relevant retrieved squared / (retrieved * R); 0 if either is 0.

    >>> set_average_precision(_example(1, None, 0, 1, labels={"x": 1}), None)   # 2 * 2 / (4 * 3)
    0.3333333333333333
    """
    return len(q.rel_ranks) ** 2 / (q.num_ret * q.num_rel) if q.num_ret and q.num_rel else 0.0


@measure("NumNonRelJudgedRet", "none", "num_nonrel_judged_ret", **_COUNT)
def nonrelevant_retrieved_count(q, k):
    """Retrieved documents judged not relevant (0 <= grade < the level); summed over queries."""
    return len(_judged_nonrel_ranks(q))


@measure("RBP", "optional", "rbp", params=("gains",), **_TREC)
def rank_biased_precision(q, k, *, p=0.8, gains=None):
    """RBP: (1 - p) * the sum of gain * p**(rank - 1); p=0.8 as ir_measures;
    trec_eval's rbp is RBP(p=0.9).

    Gains are grades (gains= as nDCG's), scaled into [0, 1] when one is outside: by their range
    and 0's, as trec_eval's (its least and greatest gain start at 0).

    >>> round(rank_biased_precision(_example(0, 1, 2), None), 6)   # 0.2 * (0.8 / 2 + 0.64)
    0.208
    """
    (ranked, _), given = _trec_gains(q, gains), gains or {}
    # the largest grade given no gain of its own
    unlisted = next((g for g in range(max(q.ideal + [0]), -1, -1) if g not in given), 0)
    # trec_eval's least and greatest gain start at 0 (m_rbp.c)
    table = [0.0, float(unlisted)] + list(given.values())
    low, high = min(table), max(table)
    scale = (lambda g: (g - low) / (high - low)) if low < 0 or high > 1 else (lambda g: g)
    return (1.0 - p) * sum(scale(g) * p ** (r - 1) for r, g in ranked if r <= _cut(k))


@measure("RBPResid", "none", "rbp_resid", params=(),
         ties="it reads where unjudged documents are, which the orders by grade do not bound",
         unjudged="it is what unjudged documents leave open", **_ON_LABELS)
def rbp_residual(q, k, *, p=0.8):
    """RBP's residual: what RBP could still gain from unjudged documents and ranks past the
    ranking.

    Unjudged: no label, or a negative grade; 0 when none is (trec_eval's rbp_resid:
    RBPResid(p=0.9)).

    >>> round(rbp_residual(_example(1, None), None), 6)   # 1 - 0.2 * 1
    0.8
    """
    judged = _graded_ranks(q)
    if len(judged) == q.num_ret:
        return 0.0
    # p**n + (1 - p) * sum over the rest, added up
    return 1.0 - (1.0 - p) * sum(p ** (r - 1) for r in judged)


# max_rel: gdeval's maximum grade, which it refuses labels above (ir_measures' ERR@k runs
# gdeval.pl)
@measure("ERR", "optional", params=(), ties=BOUNDED,
         unjudged="the grade a label would give an unjudged document is open", **_ON_LABELS)
def expected_reciprocal_rank(q, k, *, max_rel=4):
    """ERR: gdeval's expected reciprocal rank (ir_measures' ERR@k): sum of R(i) / i * prod of
    1 - R above i.

    R = (2**grade - 1) / 2**max_rel, gdeval's max_rel being 4; a grade below 1 gives 0, and one
    above max_rel is refused, as gdeval refuses the labels.

    >>> expected_reciprocal_rank(_example(2, 0, 1), None)   # 3/16 + 13/16 * 1/16 / 3
    0.20442708333333334
    """
    if q.ideal and q.ideal[0] > max_rel:
        raise EvalError("ERR: a query's labels hold grade %d, above max_rel=%d, the greatest "
                        "grade ERR takes (gdeval refuses them): give ERR(max_rel=%d)"
                        % (q.ideal[0], max_rel, q.ideal[0]))
    score, stay = 0.0, 1.0
    for rank, grade in q.gains:
        if rank > _cut(k):
            break
        # (2**grade - 1) / 2**max_rel without an integer the size of 2**grade
        stop = 2.0 ** (grade - max_rel) - 2.0 ** -max_rel
        score += stay * stop / rank
        stay *= 1.0 - stop
    return score


@measure("Unjudged", "required", cut="unj_{k}", params=(),
         ties="it reads where unjudged documents are, which the orders by grade do not bound",
         unjudged=NOT_PLAIN, **_ON_LABELS)
def unjudged_share(q, k):
    """Unjudged: documents within k with no label or a negative grade / k (trec_eval's unj).

    >>> unjudged_share(_example(1, None, -1), 5)
    0.4
    """
    return _unjudged_within(q, k) / k


@measure("RelString", "optional", "relstring", "relstring_{k}", aggregate="text", params=(),
         ties=NOT_A_NUMBER, unjudged=NOT_A_NUMBER, **_ON_LABELS)
def relevance_string(q, k):
    """The grades of the top k (10) as text, in --format trec only (trec_eval's relstring).

    A digit (> above 9), - for no label, . for a negative grade: a query's, never a mean.

    >>> relevance_string(_example(2, None, 0, -1, 12), None)
    '2-0.>'
    """
    marks = ["-"] * min(10 if k is None else k, q.num_ret)
    for rank, mark in chain(((r, "0") for r in q.judged_ranks),
                            ((r, ">" if g > 9 else str(g)) for r, g in q.gains),
                            ((r, ".") for r in q.unjudged_ranks)):
        if rank <= len(marks):
            marks[rank - 1] = mark
    return "".join(marks)


# Evidence sets (multi-hop questions): a query is answered by any one of its sets, and a set only
# once each of its slots holds one of the slot's documents.  q.evidence holds, per set, the rank of
# each slot's first document; the README's example ("Evidence sets"): sets {{d1, d2}, {d3}} and
# {{d9}}, ranking d4 d2 d5 d3 d9.
# the facts of an evidence measure
_EVIDENCE = dict(params=FILTER_PARAMS, ties=NOT_EVIDENCE_ORDERS, unjudged=NOT_PLAIN, evidence=True,
                 domain=ANSWERABLE)


@measure("EvidenceRecall", "optional", losable=True, **_EVIDENCE)
def evidence_recall(q, k):
    """Evidence recall: the largest share, over the evidence sets,
    of a set's slots filled within k.

    >>> q = Judged([], [], [], 5, 0, [], evidence=((2, 4), (5,)))  # the README's example
    >>> evidence_recall(q, 3), evidence_recall(q, 4)
    (0.5, 1.0)
    """
    if not q.evidence:
        return 0.0
    cut = _cut(k)
    return max(len([r for r in ranks if r <= cut]) / len(ranks) for ranks in q.evidence)


@measure("EvidenceSuccess", "optional", losable=False, **_EVIDENCE)
def evidence_success(q, k):
    """Evidence success: 1 if every slot of some evidence set is filled within k, else 0.

    >>> q = Judged([], [], [], 5, 0, [], evidence=((2, 4), (5,)))  # the README's example
    >>> evidence_success(q, 3), evidence_success(q, 4)
    (0.0, 1.0)
    """
    return 1.0 if q.evidence and min(map(max, q.evidence)) <= _cut(k) else 0.0


@measure("EvidenceRR", "optional", losable=False, **_EVIDENCE)
def evidence_rr(q, k):
    """Evidence reciprocal rank: 1 / the first rank r by which some evidence set is complete
    (within k), else 0.

    >>> q = Judged([], [], [], 5, 0, [], evidence=((2, 4), (5,)))  # the README's example
    >>> evidence_rr(q, None), evidence_rr(q, 3)
    (0.25, 0.0)
    """
    complete = min(map(max, q.evidence)) if q.evidence else math.inf
    return 1.0 / complete if complete <= _cut(k) else 0.0


# Questions with no answer in the corpus (README: "Score floors and questions with no answer"): the
# right retrieval is nothing.  Abstain scores only those queries, and they are left out of every
# other measure.

@measure("Abstain", "none", params=("thresh",),
         ties=ORDER_FREE, unjudged=NOT_PLAIN, losable=False, evidence=False, domain="unanswerable")
def abstain(q, k):
    """Abstain (no-answer queries only): 1 if nothing is ranked (with thresh=X: nothing scores X
    or more), else 0.

    --depth and --judged-only do not change it: what was retrieved reaches the model.

    >>> abstain(_example(num_ret=0), None), abstain(_example(None), None)
    (1.0, 0.0)
    """
    return 0.0 if q.ranked else 1.0


# Documents a user may not read (README: "Who may read it?"), with --access: Judged.leaks.
NO_ACCESS = "it reads who may read each document, not the labels"


@measure("Leak", "optional", params=(), aggregate="sum", ties=NO_ACCESS,
         unjudged=NO_ACCESS, **_ON_LABELS)
def leak(q, k):
    """Leak: documents within k (the whole ranking) the query may not read (--access); summed
    over queries.

    A count, summed as NumRet is, not a share of the ranking as trackers report it: a leak is
    never a matter of averages, and one in a thousand queries stays 1, not 0.001.

    >>> leak(_example(1, None, None)._replace(leaks=((2, "d2"), (3, "d3"))), 2)
    1
    """
    return sum(r <= _cut(k) for r, _ in q.leaks)


# Agreement (README: "When there are no labels"): how much the run's ranking agrees with the
# baseline's, labels unread, on every query both rank.  pair: (the run's, the baseline's) document
# IDs in rank order (after --depth, --duplicates and folding), as far as the largest cutoff reads.
NO_LABELS = "it reads no labels: it compares the ranking with the baseline's"
AGREE_TIES = "it compares two orders, and no order of tied documents by grade bounds it"
STAGE_TIES = "the orders of a stage's tied documents are not tried"
_AGREEMENT = dict(params=(), ties=AGREE_TIES, unjudged=NO_LABELS, losable=False, evidence=False,
                  domain=AGREEMENT)


@measure("Overlap", "required", **_AGREEMENT)
def overlap(pair, k):
    """Overlap: |A_k & B_k| / min(k, |B_k|), the run's top k (A) and the baseline's (B): against
    an exact run, ANN recall.

    >>> abcd, bade = tuple("abcd"), tuple("bade")
    >>> overlap((abcd, bade), 3), overlap(((), ()), 5), overlap((tuple("a"), ()), 5)
    (0.6666666666666666, 1.0, 0.0)
    """
    run, base = (set(ranking[:k]) for ranking in pair)
    return len(run & base) / len(base) if base else float(not run)


@measure("Jaccard", "required", **_AGREEMENT)
def jaccard(pair, k):
    """Jaccard: |A_k & B_k| / |A_k | B_k| of the run's top k and the baseline's;
    1 when both are empty.

    >>> jaccard((tuple("abcd"), tuple("bade")), 3), jaccard(((), ()), 5)
    (0.5, 1.0)
    """
    run, base = (set(ranking[:k]) for ranking in pair)
    return len(run & base) / len(run | base) if run or base else 1.0


@measure("RBO", "optional", **_AGREEMENT)
def rank_biased_overlap(pair, k, *, p=0.9):
    """RBO: extrapolated rank-biased overlap of the two rankings (their top k), Webber et al.
    2010, eq. 32.

    1 when the shorter is the longer's beginning (identical: both empty too), 0 when one only is
    empty.  Ranks past rbo_depth(p) are not read: together they move the value by less than
    1e-18.

    >>> [round(rank_biased_overlap((tuple(a), tuple(b)), k), 5)
    ...  for a, b, k in (("abcd", "bade", None), ("abcd", "bade", 3), ("abc", "axbyc", None),
    ...                  ("axbyc", "abc", None), ("abc", "axbyc", 3))]
    [0.69075, 0.63, 0.81622, 0.81622, 0.685]
    """
    cut = rbo_depth(p) if k is None else min(k, rbo_depth(p))
    short, long = sorted((ranking[:cut] for ranking in pair), key=len)
    s, n = len(short), len(long)
    if long[:s] == short:
        return float(bool(s) or not n)
    # X_d counts the documents of both whose depth, max(rank in short, rank in long), is d or less;
    # such a document adds tail[depth] to the first sum, and tail falls with depth: the smaller of
    # its two tails
    tail, at = _rbo_tails(p, n), dict(zip(long, range(1, n + 1)))
    # its rank in long, or 0 (tail[0] is 0)
    found = list(map(at.get, short, repeat(0)))
    mine, theirs = tail[1:s + 1], list(map(tail.__getitem__, found))
    # found higher in long: its depth is its rank in short
    deeper = list(map(lt, mine, theirs))
    x_l = s - found.count(0)
    x_s = x_l - sum(map(s.__lt__, found))
    extra = x_s / s * sum((d - s) / d * p ** d for d in range(s + 1, n + 1))
    first = sum(compress(mine, deeper)) + sum(theirs) - sum(compress(theirs, deeper))
    return (1 - p) / p * (first + extra) + ((x_l - x_s) / n + x_s / s) * p ** n


def rbo_depth(p):
    """The depth past which RBO(p) reads no rank: what deeper ranks add or extrapolate, at most
    p**depth / (1 - p) (the weights of those depths, each times an overlap of at most 1), is
    below 1e-18.

    >>> rbo_depth(0.9), rbo_depth(0.5)
    (416, 61)
    """
    return math.ceil(math.log(1e-18 * (1 - p)) / math.log(p))


def agreement_reach(spec):
    """How deep an agreement measure reads each ranking: its cutoff, and RBO no deeper than
    rbo_depth."""
    p = dict(spec.measure.func.__kwdefaults__ or {}, **dict(spec.args)).get("p")
    return min(depth for depth in (spec.k, p and rbo_depth(p)) if depth)


@lru_cache(maxsize=64)
def _rbo_tails(p, n):
    """[0] + [the sum of p**d / d for d from i to n, for i in 1..n]: what a document at depth i
    adds to RBO's sum."""
    return [0.0] + list(accumulate(p ** d / d for d in range(n, 0, -1)))[::-1]


# A requested measure: its canonical name ('P(rel=2)@10'), the registry name, the cutoff (or recall
# level) or None, its own relevance level or None, its gains or None, and the Filter of the ranking
# it sees (thresh=, tokens=) or None. args: the measure's own parameters, ((key, value), ...) in
# its order (Utility(a=2), RBP(p=0.9)), or ().  Its measure: the registry's record of its base.
class Spec(namedtuple("Spec", "name base k rel gains filter args",
                      defaults=(None, None, None, ()))):
    __slots__ = ()

    @property
    def measure(self):
        """The Measure of its base: its facts, as MEASURES registers them."""
        return MEASURES[self.base]


def stage_of(spec):
    """The name of the earlier stage a measure reads (stage=NAME), or None: it reads the run."""
    return spec.filter and spec.filter.stage

# Name(params)@cutoff
_NAME = re.compile(r"([A-Za-z]+)(?:\((.*)\))?(?:(@)(.*))?", re.S)


def parse_measure(text):
    """The Spec of a name such as 'R@10' or 'P(rel=2)@10'; case-insensitive, output canonical.

    >>> parse_measure("ndcg@05")
    Spec(name='nDCG@5', base='nDCG', k=5, rel=None, gains=None, filter=None, args=())
    >>> parse_measure("p(rel=2)@10").name
    'P(rel=2)@10'
    """
    match = _NAME.fullmatch(text.strip())
    registered = match and MEASURES.get({n.lower(): n
                                         for n in MEASURES}.get(match.group(1).lower()))
    if not registered:
        if "(" in text and ")" not in text:
            raise EvalError("%s: its parameter list is not closed" % show(text))
        raise EvalError("unknown measure %s" % show(text))
    _, params, at, cut = match.groups()
    rel, gains, ranking, args = None, None, None, ()
    if params is not None:
        rel, gains, ranking, args = _parse_params(params, registered, text)
    label = registered.name + _params_text(rel, gains, ranking, args)
    fractional = registered.cutoff in ("level", "multiple")
    if not at:
        # a floor's or a stage's whole ranking has a value only where a floor has one
        whole = ranking is not None and "thresh" in registered.params
        if fractional or registered.cutoff == "required" and not whole:
            raise EvalError("%s needs a cutoff, as in %s@%s"
                            % (show(text), registered.name, "0.5" if fractional else "10"))
        return Spec(label, registered.name, None, rel, gains, ranking, args)
    if registered.cutoff == "none":
        raise EvalError("%s takes no cutoff" % show(text))
    if fractional:
        return _fractional_spec(text, registered, label, cut)
    try:
        # 'R@ 5' is refused like 'R @5'
        k = parse_cutoff(cut if cut == cut.strip() else "")
    except EvalError:
        raise EvalError("%s: cutoff must be a positive integer" % show(text)) from None
    return Spec("%s@%d" % (label, k), registered.name, k, rel, gains, ranking, args)


def _fractional_spec(text, registered, label, cut):
    """The Spec of a recall level (IPrec@0.25: from 0 to 1) or a multiple of R (RprecMult@0.2:
    above 0); a whole number prints with one decimal, as IPrec@1.0 always has."""
    value = float(cut) if _DECIMAL.fullmatch(cut) else -1.0
    if registered.cutoff == "level":
        valid, rule = 0 <= value <= 1, "the recall level is a number from 0 to 1, as 0.5"
    else:
        valid, rule = 0 < value < INT_LIMIT, "the multiple of R is a number above 0, as 0.2"
    if not valid:
        raise EvalError("%s: %s" % (show(text), rule))
    shown = "%.1f" % value if value == int(value) else repr(value)
    return Spec("%s@%s" % (label, shown), registered.name, value)


# 1e-05, as printed
_GAINS = re.compile(r"\{\s*((?:[0-9]+\s*:\s*[-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?"
                    r"\s*(?:,\s*|(?=\})))*)\}")
_PARAMS_RULE = ("parameters are rel=L, gains={G:V,...} (nDCG, G, nDCGRel, RnDCG, RBP), thresh=X, "
                "tokens=B, overhead=N, pack=skip, p=X (RBP, RBPResid, RBO), weights={a,b,c,d} and "
                "docs=N (Utility), levels={X,...} (IPrecAvg), stage=NAME (a --stage), "
                "max_rel=N (ERR)")


def _parse_params(text, registered, name):
    """(rel, gains, Filter or None, args) of a measure's comma-separated parameters: 'rel=2',
    'gains={0:0,1:1,2:3}', 'thresh=0.45', 'tokens=2000', 'overhead=50', 'pack=skip', and the
    measure's own (its function's keywords: 'p=0.9', 'a=2', 'levels={0.25,0.5}')."""
    values, own = {}, {k: v for k, v in (registered.func.__kwdefaults__ or {}).items()
                       if k != "gains"}
    for item in split_names(text):
        key, equals, value = item.partition("=")
        key = key.strip()
        if not equals or key not in _PARAM_VALUES:
            raise EvalError("%s: %s" % (show(name), _PARAMS_RULE))
        # every measure that reads labels reads them in any stage's ranking
        of_stage = key == "stage" and registered.domain != AGREEMENT
        if key not in registered.params + tuple(own) and not of_stage:
            raise EvalError("%s: %s takes no %s parameter" % (show(name), registered.name, key))
        if key in values:
            raise EvalError("%s: %s is given twice" % (show(name), key))
        values[key] = _PARAM_VALUES[key](value.strip(), name, key)
    if "tokens" not in values and ("overhead" in values or "pack" in values):
        raise EvalError("%s: overhead= and pack= go with a token budget, tokens=B" % show(name))
    ranking = None
    if "thresh" in values or "tokens" in values:
        ranking = Filter(**{key: values[key] for key in FILTER_PARAMS if key in values})
    if "stage" in values and ranking is not None:
        raise EvalError("%s: stage= reads a stage's ranking as it was kept; a floor or a budget "
                        "of it is not measured" % show(name))
    if "stage" in values:
        ranking = Filter(stage=values["stage"])
    # RBP's p past 1 overflows
    p, agree = values.get("p", 0.5), registered.domain == AGREEMENT
    if not (0 < p < 1 if agree else 0 <= p <= 1):
        raise EvalError("%s: p is a number %s, as 0.9"
                        % (show(name), "above 0 and below 1" if agree else "from 0 to 1"))
    return values.get("rel"), values.get("gains"), ranking, tuple(
        (key, values[key]) for key in own if key in values and values[key] != own[key])


# Each parameter's reader: (its text, the measure's name, the parameter's key) -> its value

def _count_param(value, name, key):
    digits = value.isdigit() and value.isascii() and len(value) <= 19
    if not digits or int(value) >= INT_LIMIT:
        raise EvalError("%s: %s must be an integer from 0 to 2**63 - 1, not %s"
                        % (show(name), key, show(value)))
    return int(value)


def _gains_param(value, name, key):
    match = _GAINS.fullmatch(value)
    pairs = None
    if match:
        pairs = [pair.split(":") for pair in match.group(1).split(",") if pair.strip()]
    try:
        gains = {int(g): float(v) for g, v in pairs}
    except (TypeError, ValueError):
        gains = None
    if not gains or not all(map(math.isfinite, gains.values())) or len(gains) < len(pairs):
        raise EvalError("%s: gains are {grade: gain, ...}, as in {0:0,1:1,2:3}" % show(name))
    # past it a float loses its units: sums go wrong
    if max(map(abs, gains.values())) > 2 ** 53:
        raise EvalError("%s: a gain is at most 2**53 in size" % show(name))
    return tuple(sorted(gains.items()))


def _thresh_param(value, name, key):
    number = signed_decimal(value)
    if number is None or not math.isfinite(number):
        raise EvalError("%s: thresh must be a number, such as 0.45" % show(name))
    return number


def _pack_param(value, name, key):
    if value not in ("prefix", "skip"):
        raise EvalError("%s: pack is prefix (the default: the longest prefix within the budget) "
                        "or skip (every item that still fits)" % show(name))
    return value


def _braced(value):
    """The items of '{a,b,...}', or [''] when value is not braced."""
    return value[1:-1].split(",") if value[:1] + value[-1:] == "{}" else [""]


def _levels_param(value, name, key):
    levels = _braced(value)
    if not all(_DECIMAL.fullmatch(v.strip()) and float(v) <= 1 for v in levels):
        raise EvalError("%s: levels are recall levels from 0 to 1, as in "
                        "{0.25,0.5,0.75}" % show(name))
    return tuple(sorted(float(v) for v in levels))


def _weights_param(value, name, key):
    try:
        numbers = tuple(_number_param(v.strip(), name, key) for v in _braced(value))
    except EvalError:
        numbers = ()
    # a query's sum of them stays finite
    if len(numbers) != 4 or max(map(abs, numbers)) > 2 ** 53:
        raise EvalError("%s: weights are 4 numbers {a,b,c,d}, each at most 2**53 in size: "
                        "relevant retrieved, others retrieved, relevant missed, others missed, "
                        "as in {1,-1,0,0}" % show(name))
    return numbers


def _number_param(value, name, key):
    number = signed_decimal(value)
    # not 1e-310, not 1e400
    held = number is not None and (number == 0 or sys.float_info.min <= abs(number) < math.inf)
    if not held:
        raise EvalError("%s: %s must be a number a float holds (0, or 2.2e-308 to 1.8e308 in "
                        "size), not %s" % (show(name), key, show(value)))
    return number


def _stage_param(value, name, key):
    """A stage's name: one --stage names (see check_stage_names)."""
    return value


_PARAM_VALUES = {"rel": _count_param, "gains": _gains_param, "thresh": _thresh_param,
                 "tokens": _count_param, "overhead": _count_param, "pack": _pack_param,
                 "p": _number_param, "weights": _weights_param, "docs": _count_param,
                 "levels": _levels_param, "stage": _stage_param, "max_rel": _count_param}


def _number_text(value):
    """A parameter's number as it is printed: 3, not 3.0; 0.45 as typed; a tuple of them as
    {1,2}."""
    if isinstance(value, tuple):
        return "{%s}" % ",".join(map(_number_text, value))
    return str(int(value)) if value == int(value) and abs(value) < 1e16 else repr(value)


def _params_text(rel, gains, ranking=None, args=()):
    """'(rel=2)', '(gains={0:0,1:1,2:3})', '(thresh=0.45,tokens=2000,overhead=50,pack=skip)',
    '(p=0.9)' or '': how a measure's parameters are printed, in this order; defaults are left
    out."""
    params = []
    if rel is not None:
        params.append("rel=%d" % rel)
    params += ["%s=%s" % (key, _number_text(value)) for key, value in args]
    if gains is not None:
        params.append("gains={%s}" % ",".join("%d:%s" % (g, _number_text(v)) for g, v in gains))
    # a filter's parameters but its defaults
    for key, value, default in zip(FILTER_PARAMS, ranking or Filter(), Filter()):
        if value != default:
            params.append("%s=%s" % (key, value if key == "pack" else _number_text(value)))
    if ranking is not None and ranking.stage is not None:
        params.append("stage=" + ranking.stage)
    return "(%s)" % ",".join(params) if params else ""


def split_names(text, separators=","):
    """Comma-separated measure names, the commas inside parentheses left alone. -m's names are
    also separated by blanks (ir_measures' 'nDCG@10 AP'); what blanks leave empty is dropped.

    >>> split_names("AP,nDCG(gains={0:0,1:1})@10"), split_names("nDCG@10  AP,R@5", NAME_BREAKS)
    (['AP', 'nDCG(gains={0:0,1:1})@10'], ['nDCG@10', 'AP', 'R@5'])
    """
    names, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"(": 1, "{": 1, ")": -1, "}": -1}.get(char, 0)
        if char in separators and depth == 0:
            names.append(text[start:i])
            start = i + 1
    # no name at all is still an unknown one
    return [name for name in names + [text[start:]] if name or separators == ","] or [""]


# what separates -m's names
NAME_BREAKS = ", \t\n"


def parse_floors(text, what="a floor"):
    """[(measure, X), ...] of a floor's 'MEASURE=X,...' ('RBO(p=0.5)=0.8': the last '=' gives
    X); what: what it is, as a refusal names it."""
    floors = []
    for item in split_names(text):
        name, equals, value = item.rpartition("=")
        number = signed_decimal(value.strip())
        # 1e400: no floor
        if not (equals and name.strip() and number is not None and math.isfinite(number)):
            raise EvalError("%s is MEASURE=X, as R@5=0.8, not %s" % (what, show(item)))
        floors.append((name.strip(), number))
    return floors


def parse_limits(text):
    """A gate's limit (see parse_limit), or one per measure: [(measure, X), ...] of
    'MEASURE=X,...', as a floor's (see parse_floors)."""
    if "=" not in text:
        return parse_limit(text)
    return [(name, parse_limit(repr(limit))) for name, limit in parse_floors(text, "a limit")]


def parse_measures(texts, renamed=None):
    """Specs for comma-separated measure lists; every bad name is reported at once, but for
    another tool's name that means another measure there (see other_tools_spec, which records
    each other tool's name taken in renamed)."""
    specs, bad = {}, []
    for text in _trec_joined(t for group in texts for t in split_names(group)):
        name = text.strip()
        # trec_eval's rbp is RBP(p=0.9), whatever the case-blind RBP says
        try:
            if name in TREC_ARGS:
                found = trec_specs(name)
            elif name.lower() in TREC_NICKNAMES:
                found = nickname_specs(name.lower())
            else:
                found = [parse_measure(text)]
        except EvalError as exc:
            found = trec_specs(name) or other_tools_spec(name, renamed)
            # runid, num_q: lines of trec_eval's layout
            if found is None and name in TREC_ORDER:
                bad.append("%s is no measure of a query: trec_eval's form QRELS RUN and "
                           "--format trec print it"
                           % show(name))
            elif found is None:
                close = suggestions(name, measure_names() + list(TREC_NAMES), alias_names())
                bad.append(str(exc) + (close if str(exc).startswith("unknown") else ""))
        for spec in found or ():
            specs.setdefault(spec.name, spec)
    if bad:
        raise EvalError("%s; known measures: %s" % ("; ".join(bad), ", ".join(measure_names())))
    return list(specs.values())


# trec_eval's measures in the order it prints them, each with the parameters it takes by default
# (None: it takes none); its nicknames; its names, each our measure (and whether it is cut at k).
TREC_CUTS = "5,10,15,20,30,100,200,500,1000"
TREC_ORDER = {**dict.fromkeys((
    "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P "
    "relstring recall infAP gm_bpref Rprec_mult utility 11pt_avg binG G ndcg ndcg_rel Rndcg "
    "ndcg_cut map_cut relative_P success set_P set_relative_P set_recall set_map set_F "
    "num_nonrel_judged_ret rbp rbp_resid unj").split()),
    # those that take parameters
    "iprec_at_recall": ",".join("%.2f" % (r / 10) for r in range(11)), "P": TREC_CUTS,
    "recall": TREC_CUTS, "Rprec_mult": "0.2,0.4,0.6,0.8,1,1.2,1.4,1.6,1.8,2",
    "ndcg_cut": TREC_CUTS, "map_cut": TREC_CUTS, "relative_P": TREC_CUTS, "success": "1,5,10",
    "unj": "5,10,20"}
TREC_NICKNAMES = {"official": list(TREC_ORDER)[:12], "all_trec": list(TREC_ORDER),
                  "set": ("runid num_q num_ret num_rel num_rel_ret utility set_P set_recall "
                          "set_relative_P set_map set_F").split()}
# where trec_eval's default is not ours
TREC_ARGS = {"rbp": "p=0.9", "rbp_resid": "p=0.9"}
TREC_NAMES = {**{m.trec[0]: (m.name, False) for m in MEASURES.values() if m.trec[0]},
              **{m.trec[1].partition("_{")[0]: (m.name, True) for m in MEASURES.values()
                 if m.trec[1]}}


def trec_specs(text, docs=0):
    """The Specs of a trec_eval measure: a name it takes (map, P.5,10: its parameters after a
    dot, sorted as it sorts them) or one it prints (P_5, ndcg_cut_10); None for neither.

    >>> [s.name for s in trec_specs("P.10,5")], [s.name for s in trec_specs("ndcg_cut_10")]
    (['P@5', 'P@10'], ['nDCG@10'])
    """
    name, dot, params = text.partition(".")
    if name not in TREC_NAMES and not dot and "_" in text:
        name, dot, params = text.rpartition("_")
        # P_5; num_rel_rett is no num_rel
        name = name if TREC_NAMES.get(name, (0, 0))[1] else None
    if name not in TREC_NAMES:
        return None
    base, cut = TREC_NAMES[name]
    # relstring: relstring.20 is cut, relstring not
    if not cut or not params and TREC_ORDER[name] is None:
        return [parse_measure(base + _trec_params(name, base, params, docs))]
    try:
        values = sorted({float(v) for v in (params or TREC_ORDER[name]).split(",")})
        # P.nan, recall.-inf, ndcg_cut.1e400
        if not all(map(math.isfinite, values)):
            raise ValueError(params)
    except ValueError:
        raise EvalError("trec_eval's %s takes numbers after its dot, as in %s.5,10, not %s"
                        % (name, name, show(params))) from None
    fractional = MEASURES[base].cutoff in ("level", "multiple")
    return [parse_measure("%s@%s" % (base, v if fractional else int(v))) for v in values]


# the lines of trec_eval's layout that measure no query: the run's tag, the number of queries,
# and relstring, a query's text with no mean
NOT_OF_A_QUERY = ("runid", "num_q", "relstring")


def nickname_specs(name):
    """The Specs of a trec_eval nickname in our -m (official, set, all_trec): its measures, in
    trec_eval's order, but the lines that measure no query (NOT_OF_A_QUERY).

    >>> [s.name for s in nickname_specs("set")]
    ['NumRet', 'NumRel', 'NumRelRet', 'Utility', 'SetP', 'SetRelP', 'SetR', 'SetAP', 'SetF']
    """
    return [spec for trec in TREC_ORDER if trec in TREC_NICKNAMES[name]
            and trec not in NOT_OF_A_QUERY for spec in trec_specs(trec)]


def _trec_params(name, base, params, docs):
    """Our parameters, '(p=0.9)' or '', of a trec_eval measure's after its dot (docs: its -N)."""
    own = MEASURES[base].func.__kwdefaults__ or {}
    items = params.split(",") if params else []
    ours = [TREC_ARGS[name]] if name in TREC_ARGS else []
    if "weights" in own and len(items) == 4:
        ours = ["weights={%s}" % params] + (["docs=%d" % docs] if docs else [])
    elif "levels" in own and items:
        ours = ["levels={%s}" % params]
    # ndcg.1=3,2=9; rbp_resid.p=0.5
    elif own.keys() & {"gains", "p"} and all("=" in item for item in items):
        pairs = dict(item.partition("=")[::2] for item in items)
        gains = ",".join("%s:%s" % pair for pair in pairs.items() if pair[0] != "p")
        if "p" in pairs:
            ours = ["p=" + pairs["p"]]
        if gains:
            ours.append("gains={%s}" % gains)
    elif items:
        takes = "no parameters"
        if "weights" in own:
            takes = "4 coefficients"
        elif "gains" in own:
            takes = "gains as 1=3,2=9"
        raise EvalError("trec_eval's %s takes %s, not %s" % (name, takes, show(params)))
    return "(%s)" % ",".join(ours) if ours else ""


_TREC_PARAM = re.compile(r"\s*(?:[-+.0-9eE]+|[0-9]+=[-+.0-9eE]+|p=[-+.0-9eE]+)\s*")


def _trec_joined(names):
    """Names with trec_eval's parameters put back together: P.5,10 was split at its comma.

    >>> list(_trec_joined(["P.5", "10", "ndcg.1=3", "2=9", "R@5", "10"]))
    ['P.5,10', 'ndcg.1=3,2=9', 'R@5', '10']
    """
    joined = []
    for name in names:
        head, dot, _ = joined[-1].strip().partition(".") if joined else ("", "", "")
        if dot and head in TREC_ORDER and _TREC_PARAM.fullmatch(name):
            joined[-1] += "," + name
        else:
            joined.append(name)
    return joined


# Other tools' names for our measures (README: "Other tools' names"), lower-cased, a cutoff
# written after them as @k or as MTEB's _at_k: our measure where the tool's definition for one
# query is ours (cut and uncut, where the uncut name means another of ours: ranx's precision), else
# why we refuse it: what the name means in the tool that uses it, and the two ways on, ours and
# --as.  ir_measures' names (MAP, MRR, Precision, Recall) are among them; trec_eval's come first
# (recall is its recall_5 ... recall_1000); sentence-transformers' dot_ is read as its cosine_.
ALIASES = {family: ours if isinstance(ours, tuple) else (ours, ours) for family, ours in {
    "recall": ("R", "SetR"), "precision": ("P", "SetP"), "mrr": "RR", "map": "AP",
    "ndcg": "nDCG",
    "hit_rate": "Success", "accuracy": ("Success", "R@1"), "top_k_accuracy": "Success",
    "r-precision": "Rprec", "f1": "SetF", "r_cap": "RelP",
    "cosine_recall": "R", "cosine_precision": "P", "cosine_mrr": "RR",
    "cosine_accuracy": "Success",
    "id_based_context_precision": "SetP", "id_based_context_recall": "SetR",
    "document_mrr": "RR", "document_map": "AP", "document_ndcg": "nDCG",
    "retrieval_precision": "SetP", "retrieval_recall": "SetR", "retrieval_f1": "SetF",
    "hits": "%(name)s is ranx's count of the relevant documents within k, not a share: take "
            "P%(k)s (that count / k), or Success%(k)s for a hit rate",
    "ndcg_burges": "%(name)s is ranx's nDCG with gain 2^grade - 1: ours gains the grade; take "
                   "nDCG(gains={1:1,2:3,3:7})%(k)s, a gain for each of your grades",
    "hole": "%(name)s is BEIR's share of the top k that no query's labels name: ours counts what "
            "this query's labels leave out; take Unjudged%(k)s, or --as beir to print BEIR's",
    "cosine_map": "%(name)s is sentence-transformers' AP, which divides by min(k, R): ours "
                  "divides by R; take AP%(k)s, or --as sentence-transformers to print its own",
    "cosine_ndcg": "%(name)s is sentence-transformers' nDCG, which gains 1 for every relevant "
                   "document: ours gains the grade (the same on 0/1 labels); take nDCG%(k)s, or "
                   "--as sentence-transformers to print its own",
    "document_recall": "%(name)s is Haystack's single_hit (Success over the whole ranking) or "
                       "multi_hit (SetR): take Success@k, k the ranking's length, or SetR, or "
                       "--as haystack to print Haystack's",
    "retrieval_mrr": "%(name)s is AutoRAG's 1 / rank for each ground-truth group, averaged over "
                     "the groups: ours is 1 / the first relevant rank; take RR, or --as autorag "
                     "to print AutoRAG's",
    "retrieval_map": "%(name)s is AutoRAG's average precision for each ground-truth group over "
                     "its documents found, averaged over the groups: ours divides by R; take AP, "
                     "or --as autorag to print AutoRAG's",
    "retrieval_ndcg": "%(name)s is AutoRAG's nDCG, gain 1 for every relevant document and the "
                      "ideal cut at the ranking's length: ours gains the grade, its ideal of "
                      "every relevant document; take nDCG@k, k the ranking's length (the same "
                      "on 0/1 labels), or --as autorag to print AutoRAG's",
    "context_precision": "%(name)s is Ragas' LLM-judged precision averaged over the relevant "
                         "retrieved, not the labels': take AP, or SetP for its "
                         "id_based_context_precision",
    "context_recall": "%(name)s is Ragas' LLM-judged share of the reference's claims, not of the "
                      "labels: take SetR for its id_based_context_recall"}.items()}
# a name of another tool: its name, parameters and cutoff
_ALIAS = re.compile(r"([a-z][a-z0-9_-]*?)(\(.*\))?(?:(@|_at_)(.*))?", re.S | re.I)


def other_tools_spec(text, renamed=None):
    """[the Spec] of another tool's name (stripped) for our measure (ALIASES), recorded in
    renamed {their name: ours}; None for none; an error for a name that means another
    definition there.

    >>> [other_tools_spec(name)[0].name for name in ("MAP@100", "hit_rate_at_5", "accuracy")]
    ['AP@100', 'Success@5', 'R@1']
    """
    match = _ALIAS.fullmatch(text)
    if not match:
        return None
    family, params, at, cut = match.groups()
    family = re.sub("^dot_", "cosine_", family.lower())
    # a name of ours (nDCG(gains={1:})) is ours, but in MTEB's form (ndcg_at_10)
    ours = family in map(str.lower, MEASURES)
    if family not in ALIASES or ours and (at or "").lower() != "_at_":
        return None
    cut_to, uncut_to = ALIASES[family]
    target = cut_to if at else uncut_to
    if " " in target:
        raise EvalError(target % {"name": show(text), "k": "@" + (cut or "k")})
    head, at, tail = (target + "@" + cut if at else target).partition("@")
    try:
        spec = parse_measure(head + (params or "") + at + tail)
    except EvalError as exc:
        raise EvalError("%s is our %s: %s" % (show(text), head, exc)) from None
    if renamed is not None:
        renamed[text] = spec.name
    return [spec]


def alias_names():
    """The other tools' names a 'did you mean' offers: name@k for a measure cut at k, name for
    one uncut."""
    names = []
    for family, (cut, uncut) in ALIASES.items():
        if cut in MEASURES and MEASURES[cut].cutoff != "none":
            names.append(family + "@k")
        if " " not in uncut and ("@" in uncut or MEASURES[uncut].cutoff != "required"):
            names.append(family)
    return names


def suggestions(text, names, folded=()):
    """The closest of the names the form in use takes to an unknown one, as 'did you mean'; the
    folded names (other tools' names, lower-cased) are matched case-blind, and must be closer."""
    import difflib
    scored = [(difflib.SequenceMatcher(None, text, name).ratio(), name) for name in names]
    scored += [(difflib.SequenceMatcher(None, text.lower(), name).ratio() - 0.1, name)
               for name in folded]
    # a name both ways at its better score
    close = list(dict.fromkeys(name for score, name in sorted(scored, reverse=True)
                               if score >= 0.6))[:3]
    return " (did you mean %s?)" % " or ".join(close) if close else ""


def seed_specs(k):
    """The seed's measures at cutoff k: R@k and RR@k."""
    return [Spec("R@%d" % k, "R", k), Spec("RR@%d" % k, "RR", k)]


def spellings(spec):
    """How a measure is written: ['R@k'], ['RR', 'RR@k'], ['Rprec'], ['IPrec@r'] or
    ['RprecMult@m']."""
    shapes = {"required": ["%s@k"], "optional": ["%s", "%s@k"], "none": ["%s"],
              "level": ["%s@r"], "multiple": ["%s@m"]}[spec.cutoff]
    return [shape % spec.name for shape in shapes]


def measure_names():
    return [name for spec in MEASURES.values() for name in spellings(spec)]


def trec_label(name):
    """trec_eval's name for a canonical measure name, or the name itself."""
    spec = parse_measure(name)
    uncut, pattern = spec.measure.trec
    trec_args = ()
    if uncut in TREC_ARGS:
        trec_args = parse_measure("%s(%s)" % (spec.base, TREC_ARGS[uncut])).args
    # RBP is rbp only with trec_eval's p
    if _params_text(spec.rel, spec.gains, spec.filter) or spec.args != trec_args:
        return name
    label = uncut if spec.k is None else pattern.format(k=spec.k)
    return label or name


# === Dialects ===

# Other tools' numbers (--as TOOL[@VERSION]; README: "Coming from another tool").  A tool's
# measure is one of ours changed by its steps, each a cause of its numbers differing from
# trec_eval's: its value for a query is our measure's after every step, in order, and a step that
# changes the value is named as a cause.  A row: the tool's name ('NDCG@k', k its cutoff; no @k:
# the whole ranking), our measure, and its words: STEPS, "r5" (its mean is rounded to 5 places),
# and the queries it leaves out, where the tool raises, says NaN or scores none: "noret", one with
# nothing ranked; "norel", one with nothing relevant (--no-relevant zero); "ranonly", one the run
# lacks (--missing-run zero).
AsRow = namedtuple("AsRow", "name base words")


def _group_ranks(q):
    """The ranks of each ground-truth group's documents (AutoRAG's): the evidence sets' slots
    (Judged.views "groups"), else each relevant document a group of its own."""
    if q.views and "groups" in q.views:
        return q.views["groups"]
    return [(r,) for r in q.rel_ranks] + [()] * (q.num_rel - len(q.rel_ranks))


def over_groups(func, q, k):
    """AutoRAG's mean over ground-truth groups of a measure of each group alone: a group is
    found by any of its documents, and its AP divides by those of its documents retrieved.

    >>> over_groups(reciprocal_rank, _example(1, None, None, 1, labels={"x": 1}), None)
    0.4166666666666667
    """
    groups = _group_ranks(q)
    return sum(func(q._replace(rel_ranks=list(g), num_rel=len(g)), k) for g in groups) / len(
        groups)


def group_f1(q, k):
    """AutoRAG's F1 of a query: its precision (documents of any group / documents ranked) and
    its recall (groups found / groups)."""
    groups = _group_ranks(q)
    p = len(set(chain.from_iterable(groups))) / q.num_ret if q.num_ret else 0.0
    r = sum(map(bool, groups)) / len(groups)
    return 2 * p * r / (p + r) if p + r else 0.0


# The cause each step of a row names (see tool_steps)
STEPS = {"drop": "identical ID removed", "stable": "tie order", "asc": "tie order",
         "given": "the list's own order",
         "cap": "denominator min(k, R)", "found": "denominator: relevant retrieved",
         "binary": "binary gains", "set": "a set instead of a ranking",
         "uncut": "ideal not cut at k", "listcut": "ideal cut at the ranking's length",
         "listideal": "ideal from the retrieved list", "groups": "mean over groups",
         "hole": "judged by any query's labels"}
# the steps that read the ranking as the tool does (see tool_views)
VIEWS = {"drop", "stable", "asc", "given", "hole"}
# our measure of one group, by the measure a row of AutoRAG's changes
GROUP_MEASURES = {"recall": success, "reciprocal_rank": reciprocal_rank,
                  "average_precision": average_precision}


def tool_steps(row, q, k):
    """[(cause, value after the step), ...] of a row's steps (see STEPS) on a query's Judged
    record, from our measure's value at cutoff k (first, cause None)."""
    func, plain = MEASURES[row.base].func, q
    values = [(None, func(q, k))]
    for word in (w for w in row.words if w in STEPS):
        func, q, k = _step(word, func, q, k, plain)
        values.append((STEPS[word], func(q, k)))
    return values


def _step(word, func, q, k, plain):
    """(our measure's function, the Judged record, the cutoff) after a step (see STEPS); plain:
    the query's Judged record as read, with its views."""
    if word in VIEWS:
        views = plain.views or NOTHING
        return func, views.get(word) or views.get("drop") or plain, k
    if word in ("cap", "found"):
        return func, q._replace(num_rel=min(k, q.num_rel) if word == "cap" else _found(q, k)), k
    if word == "binary":
        return func, q._replace(gains=[(r, 1) for r in q.rel_ranks], ideal=[1] * q.num_rel), k
    if word == "listideal":
        return func, q._replace(ideal=[1] * q.num_ret), None
    if word == "groups" and func is set_f:
        return group_f1, q, k
    if word == "groups":
        return partial(over_groups, GROUP_MEASURES[func.__name__]), q, k
    if word == "set":
        return context_precision, q, k
    return func, q, {"uncut": None, "listcut": q.num_ret}[word]


def tool_value(row, q, k):
    """A tool's value of one query (None where it leaves the query out: see AsRow)."""
    if "noret" in row.words and not q.num_ret or "norel" in row.words and not q.num_rel:
        return None
    # the whole ranking: its own length
    k = max(q.num_ret, 1) if k is None else k
    if not q.views and views_only(row):
        return MEASURES[row.base].func(q, k)
    return tool_steps(row, q, k)[-1][1]


@lru_cache(maxsize=None)
def views_only(row):
    """Whether a row's steps only read the ranking otherwise (see tool_views): where it reads it
    as we do, its value is our measure's."""
    return VIEWS.issuperset(w for w in row.words if w in STEPS)


def tool_rows(tool, version):
    """{lowercased name: AsRow} of a tool at a version (its own when None): the rows in force
    then."""
    rows = TOOLS[tool].rows.split(" | ")
    rows += [row for first, row in TOOLS[tool].before
             if version and _release(version) < _release(first)]
    # an older version's row, later, replaces the newer
    return {r.split()[0].lower(): AsRow(*r.split()[:2], tuple(r.split()[2:])) for r in rows}


def _release(version):
    """A version's numbers to compare, 3.1 as 3.1.0."""
    return (tuple(map(int, version.split("."))) + (0, 0))[:3]


def parse_tool(text):
    """(tool, version) of --as TOOL[@VERSION]: the version None when not given."""
    tool, at, version = text.strip().lower().partition("@")
    if tool not in TOOLS or at and not re.fullmatch(r"[0-9]+(\.[0-9]+)*", version):
        raise EvalError("--as takes %s, each with @VERSION if you like (as llamaindex@0.12.2), "
                        "not %s" % (", ".join(TOOLS), show(text)))
    known = TOOLS[tool]
    if at and not _release(known.oldest) <= _release(version) <= _release(known.version):
        raise EvalError("--as %s: the definitions of %s %s to %s were read, not of %s" % (
            text, tool, known.oldest, known.version, version))
    return tool, version or None


# a tool's cutoff ends its name: NDCG@10, ndcg_at_10
_TOOL_CUT = re.compile(r"(.*(?:@|_at_))([0-9]+)", re.I)


def tool_specs(tool, version, names):
    """The Specs of a tool's measures: names (its own, any case, NAME@K for a cutoff's), or its
    defaults.  A Spec holds its row in args ("as") and our measure as its base."""
    rows, info = tool_rows(tool, version), TOOLS[tool]
    names = names or [n[:-1] + str(k) if n.endswith("k") else n for n in info.defaults.split()
                      for k in (info.cutoffs if n.endswith("k") else (0,))]
    specs = []
    for text in names:
        # sentence-transformers' names begin with the score function's
        name = re.sub(r"^(cosine|dot)_", "", text.strip())
        cut = _TOOL_CUT.fullmatch(name)
        row = rows.get((cut[1] + "k" if cut else name).lower())
        # NDCG@k is the name of all the cutoffs, not one
        if row is None or not cut and row.name.endswith("k"):
            raise EvalError("%s is no measure of %s: its names are %s (k: a cutoff, as 10)" % (
                show(text), tool, ", ".join(r.name for r in rows.values())))
        k = cut and parse_cutoff(cut[2])
        specs.append(Spec(row.name[:-1] + str(k) if k else row.name, row.base, k or None,
                          args=(("as", row),)))
    return list(dict.fromkeys(specs))


def tool_row(spec):
    """The tool's row a Spec measures, or None for ours."""
    return spec.args and spec.args[0][0] == "as" and spec.args[0][1]


def tool_words(spec):
    """The words of a tool's row a Spec measures (see AsRow), () for ours."""
    return spec.args[0][1].words if tool_row(spec) else ()


def tool_reading(specs):
    """Reading.views of the measures: what tool_views judges for the tools' rows, or None."""
    words = {w for s in specs for w in tool_words(s)}
    if not words:
        return None
    return ("drop" in words, tuple(sorted(words & {"stable", "asc", "given"})), "groups" in words,
            "hole" in words)


def as_block(plan, judged, result, no_answer):
    """{"as": the tool and version (--as), and per measure trec_eval's counterpart at the same
    cutoff (the whole ranking's: --depth, or the longest ranking), its mean, how many queries
    each cause sets apart and what sets the means apart; per query, where the values differ,
    trec_eval's value and the causes} (see STEPS), or {}."""
    if plan.config.as_tool is None:
        return {}
    tool, version = parse_tool(plan.config.as_tool)
    answered = {q: j for q, j in judged.items() if q not in no_answer}
    longest = plan.opts.depth or max([j.num_ret for j in answered.values()] + [1])
    measures, per_query = {}, {}
    for spec in plan.specs:
        measures[spec.name] = _as_measure(spec, spec.k or longest, answered, result, per_query)
    return {"as": {"tool": tool, "version": version or TOOLS[tool].version,
                   "measures": measures, "per_query": per_query}}


def _as_measure(spec, k, answered, result, per_query):
    """One measure's entry of as_block, its queries' added to per_query."""
    row, counts, ours = tool_row(spec), {}, []
    for qid, q in answered.items():
        theirs = result.per_query[qid].get(spec.name)
        # left out, trec_eval's alone; read as we read it, with our measure: the same
        if theirs is None or not q.views and views_only(row):
            ours.append(MEASURES[row.base].func(q, k) if theirs is None else theirs)
            continue
        steps = tool_steps(row, q, k)
        ours.append(steps[0][1])
        if theirs == steps[0][1]:
            continue
        named = [c for (c, v), (_, before) in zip(steps[1:], steps) if v != before]
        per_query.setdefault(qid, {})[spec.name] = {"trec_eval": steps[0][1], "causes": named}
        for cause in named:
            counts[cause] = counts.get(cause, 0) + 1
    values = [v[spec.name] for v in result.per_query.values() if spec.name in v]
    left_out = len(answered) - len(values)
    mean_causes = ["queries averaged over"] * bool(left_out)
    if _mean(values) != result.measures[spec.name]:
        mean_causes.append("rounding")
    name = row.base if MEASURES[row.base].cutoff == "none" else "%s@%d" % (row.base, k)
    return {"trec_eval": trec_label(name), "trec_eval_mean": sum(ours) / len(ours),
            "queries_differing": counts, "mean_causes": mean_causes, "queries_left_out": left_out}


# === Evaluation ===

def say_no_answer(empty):
    """How to say that the queries with no label at all (often questions without an answer) have
    none: each named, when they are few."""
    few = "%s %s" % (first_few(empty, 5), "has" if len(empty) == 1 else "have")
    return ("if %s no answer in the corpus, say so: --empty-labels no-answer, "
            "\"answerable\": false in a record, or --no-answer FILE"
            % (few if len(empty) <= 5 else "the %d with no label at all have" % len(empty)))


def apply_policies(qrels, ranked, level, policies=None, places=("", ""), no_answer=NOTHING):
    """Decide which queries are evaluated; return (qids, skipped, zeroed).

    policies maps each POLICIES key to a choice (default "error"); places is (qrels location, run
    location) for messages.  qids follow the qrels' order; skipped and zeroed map a reason to the
    query IDs it affected, so that nothing leaves an average silently.  A skipped query is never
    also listed as zeroed.  A query with no answer (no_answer) has no relevant label by definition:
    --no-relevant does not apply to it.
    """
    policies = dict(DEFAULT_POLICIES, **(policies or {}))
    missing, extra = differing_queries(qrels, ranked, policies, places[1], no_answer)
    least = least_relevant(level)
    no_rel = [q for q in qrels if max(qrels[q].values(), default=-1) < least and q not in no_answer
              and (q in ranked or policies["missing_run"] != "skip")]
    if no_rel and policies["no_relevant"] == "error":
        # an empty list of labels: often a question without an answer
        empty = [q for q in no_rel if not qrels[q]]
        fail(places[0], "%s no relevant label at level %d (%s): incomplete labels, not a zero; "
                        "see --no-relevant%s"
             % (_count(no_rel, ""), level, first_few(no_rel),
                "; or, " + say_no_answer(empty) if empty else ""))
    skipped = {"missing_run": missing if policies["missing_run"] == "skip" else [],
               "unlabeled": extra,
               "no_relevant": no_rel if policies["no_relevant"] == "skip" else []}
    dropped = set(skipped["missing_run"]) | set(skipped["no_relevant"])
    zeroed = {"missing_run": [q for q in missing if q not in dropped]
                             if policies["missing_run"] == "zero" else [],
              "no_relevant": no_rel if policies["no_relevant"] == "zero" else []}
    return [q for q in qrels if q not in dropped], skipped, zeroed


def differing_queries(qrels, ranked, policies, where, no_answer):
    """(The labeled queries without a ranking, the ranked queries without labels), each refused
    as the policies say."""
    missing = [q for q in qrels if q not in ranked]
    extra = [q for q in ranked if q not in qrels]
    bad, hint = [], ""
    if missing and policies["missing_run"] == "error":
        labeled, unanswered = [q for q in missing if q not in no_answer], [q for q in missing
                                                                           if q in no_answer]
        if labeled:
            bad.append("%s no ranking (%s)" % (_count(labeled, "labeled"), first_few(labeled)))
        # its right ranking may be empty, but it must be there
        if unanswered:
            bad.append("%s without an answer %s no ranking (%s)" % (
                n_queries(len(unanswered)), "has" if len(unanswered) == 1 else "have",
                first_few(unanswered)))
    if extra and policies["unlabeled"] == "error":
        bad.append("%s no labels (%s)" % (_count(extra, "ranked"), first_few(extra)))
        hint = (" (a run of every query, as BEIR writes, is scored on the labeled ones with "
                "--unlabeled skip)")
    if bad:
        fail(where, "query sets differ: %s; see --missing-run and --unlabeled%s"
             % ("; ".join(bad), hint))
    return missing, extra


def _count(ids, adjective):
    """'1 labeled query has', '2 labeled queries have'."""
    number, noun = n_queries(len(ids)).split()
    return " ".join(w for w in (number, adjective, noun, "has" if len(ids) == 1 else "have") if w)


def _scorer(spec):
    """function(q, k) of a spec: its measure, at the measure's own level or with its gains,
    on the ranking its filter leaves (q.filtered; an empty ranking has nothing to filter)."""
    if tool_row(spec):
        return partial(tool_value, tool_row(spec))
    measure = spec.measure
    # a stage's ranking is measured as a run's is, not as what a floor or a budget left; whole,
    # as the share of it that is relevant
    plain = spec.filter is None or spec.filter.stage is not None and spec.k is not None
    func = measure.func if plain else measure.filtered or measure.func
    keywords = dict(spec.args, **({} if spec.gains is None else {"gains": dict(spec.gains)}))
    if keywords:
        func = partial(_with_args, func, keywords)
    if spec.rel is not None:
        func = partial(_at_level, func, spec.rel)
    if spec.filter is not None:
        func = partial(_filtered, func, spec.filter)
    return func


def _with_args(func, keywords, q, k):
    return func(q, k, **keywords)


def _at_level(func, level, q, k):
    return func(at_level(q, level), k)


def _filtered(func, ranking_filter, q, k):
    # an empty ranking has nothing to filter; a stage's ranking is there (see staged)
    return func((q.filtered or NOTHING).get(ranking_filter, q), k)


def score_queries(judged, specs, no_answer=NOTHING):
    """{qid: {measure name: value}} for parsed measure specs: a query without an answer
    (no_answer) has Abstain measures only, the others every other measure."""
    funcs = [(spec.name, _scorer(spec), spec.k) for spec in specs if answers(spec)]
    abstain = [(spec.name, _scorer(spec), spec.k) for spec in specs if not answers(spec)]
    rows = {qid: {name: func(j, k) for name, func, k in (abstain if qid in no_answer else funcs)}
            for qid, j in judged.items()}
    # a query another tool leaves out (--as) has no value
    if any(map(tool_row, specs)):
        rows = {qid: {n: v for n, v in row.items() if v is not None} for qid, row in rows.items()}
    return rows


def answers(spec):
    """Whether a spec scores the questions that have an answer (see Measure's domain)."""
    return spec.measure.domain == ANSWERABLE


def agrees(spec):
    """Whether a spec is an agreement measure, which compares the ranking with the baseline's."""
    return spec.measure.domain == AGREEMENT


def domains(specs):
    """The specs in groups scored on the same queries: the answerable ones', the others', the
    agreement ones'."""
    return [mine for mine in ([s for s in specs if s.measure.domain == d] for d in (
        ANSWERABLE, UNANSWERABLE, AGREEMENT)) if mine]


def aggregated(per_query, specs):
    """Means (sums for counts, geometric means for GMAP) over the evaluated queries each measure
    scores, in their order."""
    out = {}
    for spec in specs:
        how = spec.measure.aggregate
        values = [row[spec.name] for row in per_query.values() if spec.name in row]
        if how == "sum":
            out[spec.name] = sum(values)
        # trec_eval's floor: one 0 would make any mean 0
        elif how == "geometric":
            logs = [math.log(max(v, MIN_GEO_MEAN)) for v in values]
            out[spec.name] = math.exp(_mean(logs)) if logs else 0.0
        # a query's text (RelString) has no mean
        elif how == "mean":
            out[spec.name] = _mean(values)
        # BEIR and MTEB round their means
        if "r5" in tool_words(spec):
            out[spec.name] = round(out[spec.name], 5)
    return out


def judge_queries(qrels, ranked, level=1, policies=None, places=("", ""), no_answer=NOTHING):
    """{qid: Judged} of the queries the policies keep, and (skipped, zeroed).

    ranked is {qid: Ranking, or None for a query without labels}; a query with no ranking is judged
    as an empty one.  Refused when no query is left: a mean over nothing would pass any gate.
    """
    qids, skipped, zeroed = apply_policies(qrels, ranked, level, policies, places, no_answer)
    if not qids:
        fail(places[1], "no query left to evaluate (%s)" % (skipped_text(skipped) or "no labels"))
    judged = {q: ranked[q].judged if q in ranked else judge({}, 0, qrels[q], level) for q in qids}
    return judged, skipped, zeroed


class Result(dict):
    """A general result: its members in the order its JSON gives them (MEMBERS), each made once
    by the stage that knows it (see evaluate_loaded), and read as fields by the reports
    (result.measures); a member an option did not ask for reads as {}.  A dict, so that JSON
    renders it as it is and a library call returns what it always did."""
    __slots__ = ()
    MEMBERS = ("queries no_answer_queries measures per_query skipped zeroed no_relevant_at_level "
               "agreement comparison breaches baseline_skipped baseline_zeroed baseline_per_query "
               "replicates noise unstable baseline_deduplicated coverage baseline_notes groups "
               "renamed power clusters warnings folded several_labels deduplicated ties ci95 "
               "floors leaks unmapped as unjudged funnel explain manifest candidate_labels "
               "label_versions label_agreement").split()

    def __getattr__(self, name):
        if name not in Result.MEMBERS:
            raise AttributeError(name)
        return self.get(name, {})


def run_evaluation(judged, specs, skipped, zeroed, no_answer=NOTHING):
    """The general result of judged queries: means, per-query values, what was left out (see
    scored_result), and how many each measure with a level of its own scored 0 for want of a
    relevant label at that level."""
    result = scored_result(score_queries(judged, specs, no_answer), specs, skipped, zeroed,
                           no_answer)
    own_levels = [s for s in specs if s.rel is not None]
    if not own_levels:
        return result
    answered = [j for q, j in judged.items() if q not in no_answer]
    return Result(result, no_relevant_at_level={
        s.name: sum(not at_level(j, s.rel).num_rel for j in answered) for s in own_levels})


def scored_result(per_query, specs, skipped, zeroed, no_answer):
    """The general result of per-query values: "queries" counts those with an answer,
    "no_answer_queries" the others, when some are; the means, the values, what was left out."""
    # BEIR's and MTEB's pytrec_eval leave out a query the run lacks (--as; see AsRow)
    for spec in (s for s in specs if "ranonly" in tool_words(s)):
        for qid in zeroed.get("missing_run", ()):
            per_query[qid].pop(spec.name, None)
    unanswered = len(per_query.keys() & no_answer)
    result = Result(queries=len(per_query) - unanswered)
    if no_answer:
        result["no_answer_queries"] = unanswered
    return Result(result, measures=aggregated(per_query, specs), per_query=per_query,
                  skipped=skipped, zeroed=zeroed)


def check_greatest_grade(judged, specs, where):
    """Refuse labels graded above ERR's greatest grade (max_rel), naming the query, as gdeval
    refuses them."""
    for spec in (s for s in specs if s.base == "ERR"):
        most = dict(MEASURES["ERR"].func.__kwdefaults__, **dict(spec.args))["max_rel"]
        over = next((q for q, j in judged.items() if j.ideal and j.ideal[0] > most), None)
        if over is not None:
            fail(where, "grade %d is above %s's greatest grade, max_rel=%d, as gdeval refuses "
                        "it: give ERR(max_rel=%d)" % (judged[over].ideal[0], spec.name, most,
                                                      judged[over].ideal[0]), over)


def check_domains(judged, specs, no_answer, where):
    """Refuse a measure that no evaluated query is scored on: Abstain without a question that has
    no answer, any other measure without one that has."""
    unanswered = judged.keys() & no_answer
    for abstaining, count in ((True, len(unanswered)), (False, len(judged) - len(unanswered))):
        names = [s.name for s in specs if answers(s) != abstaining]
        if names and not count:
            hint = ""
            if abstaining and not no_answer:
                hint = (": give them with --no-answer FILE, a fixture's \"no_answer\" or records "
                        "with \"answerable\": false%s" % _role_hint(None, "answerable"))
            fail(where, "%s: no query %s is left to evaluate%s" % (", ".join(names), (
                "without an answer" if abstaining else "with an answer"), hint))


def tie_bounds(judged, specs, per_query, opts=Reading(), no_answer=NOTHING):
    """Lowest and highest mean of each measure over the orders of tied documents; a query without
    ties that matter keeps its values in per_query, and so does Abstain, which no order changes.  A
    measure that no order bounds for sure (not_bounded) gets None for both, and a reason."""
    tied = {q: floors_in_order(j) for q, j in judged.items() if j.bounds}
    # rankings without labels are tied too; a stage's, whatever the run's
    loose = dict(not_bounded(specs, opts) if any(j.tied for j in judged.values()) else {},
                 **{s.name: AGREE_TIES for s in specs if agrees(s)},
                 **{s.name: STAGE_TIES for s in specs if stage_of(s)})
    best, worst = ({q: dict(row) for q, row in per_query.items()} for _ in range(2))
    for i, order in enumerate((None,) + opts.gain_orders):
        mine = [s for s in specs if (s.gains if s.gains in opts.gain_orders else None) == order
                and s.name not in loose and s.measure.ties != ORDER_FREE]
        for side, values in enumerate((best, worst)):
            for q, row in score_queries({q: b[2 * i + side] for q, b in tied.items()}, mine,
                                        no_answer).items():
                values[q].update(row)
    means = aggregated(best, specs), aggregated(worst, specs)
    bounds = {}
    for s in specs:
        if s.name in loose:
            bounds[s.name] = {"low": None, "high": None}
        # RelString has no mean
        elif s.name in means[0]:
            pair = means[0][s.name], means[1][s.name]
            bounds[s.name] = {"low": min(pair), "high": max(pair)}
    out = {"measures": bounds, "queries": [q for q in judged if best[q] != worst[q]]}
    if loose:
        out["not_bounded"] = loose
    return out


def if_relevant(q, base, k):
    """A query's value of a measure that a relevant label can only raise (P@k, R@k, Success@k,
    RR(@k), SetP, SetR, SetF) if every unjudged document where it looks (no label, or a negative
    grade; within k, the whole ranking without k) were relevant: the most the missing labels add.

    >>> # R 2: d2 relevant, d3 judged non-relevant
    >>> j = _example(None, 1, 0, None, labels={"x": 1})
    >>> [if_relevant(j, b, k) for b, k in (("R", 3), ("P", 3), ("RR", None), ("SetP", None))]
    [0.6666666666666666, 0.6666666666666666, 1.0, 0.75]
    """
    n, labeled = _num_ret(q.num_ret, k), set(_graded_ranks(q))
    added = [r for r in range(1, n + 1) if r not in labeled]
    return MEASURES[base].func(q._replace(rel_ranks=sorted(q.rel_ranks + added),
                                          num_rel=q.num_rel + len(added)), k)


def unjudged_bounds(judged, specs, means):
    """{"measures": {name: {"judged": mean, "if_relevant": mean}}, "not_bounded": {name: why}}
    (README: "Did it really miss?"); means: {name: the judged mean}."""
    out, loose = {}, {}
    for spec in specs:
        fact = spec.measure.unjudged
        plain = not _params_text(spec.rel, spec.gains, spec.filter)
        if plain and fact == BOUNDED:
            values = [if_relevant(j, spec.base, spec.k) for j in judged.values()]
            out[spec.name] = {"judged": means[spec.name], "if_relevant": _mean(values)}
        else:
            loose[spec.name] = NOT_PLAIN if fact == BOUNDED else fact
    return dict({"measures": out}, **({"not_bounded": loose} if loose else {}))


def floors_in_order(j):
    """j's bounds (see Judged), each with the rankings its floors leave in the same order of
    tied documents: a floor cuts the ranking below a score, so it keeps a tie whole, and its
    ranking has ties only where j has (a budget's rankings are not bounded)."""
    if not j.filtered:
        return j.bounds
    return tuple(b._replace(filtered={f: fj.bounds[i] if fj.bounds else fj
                                      for f, fj in j.filtered.items()})
                 for i, b in enumerate(j.bounds))


def not_bounded(specs, opts):
    """{name: why} of the measures whose lowest or highest value over the orders of tied
    documents is not reached by the orders --ties tries: those whose record says why (see
    Measure's ties); a measure under a token budget, which a long document moved up can cut
    short; and, under --judged-only with --depth, those that count the documents retrieved."""
    loose = {}
    for s in specs:
        fact = s.measure.ties
        if fact not in (BOUNDED, ORDER_FREE, RETRIEVED_COUNTED):
            loose[s.name] = fact
        elif s.filter is not None and s.filter.tokens is not None:
            loose[s.name] = "the orders of tied items under a token budget are not tried"
        elif opts.match == "contains" and fact != ORDER_FREE:
            loose[s.name] = ("under --match contains, the labels ranked texts claim depend on "
                             "the order of tied texts")
        elif fact == RETRIEVED_COUNTED and opts.judged_only and opts.depth is not None:
            loose[s.name] = ("under --judged-only with --depth, how many documents count depends "
                             "on the order")
    return loose


def curve_specs(specs):
    """{'R@k': Spec of R without its cutoff, ...}: one curve per measure cut at some k."""
    cut = [s for s in specs if s.measure.cutoff in ("required", "optional")
           and s.k is not None
           # RelString@k has no mean; a stage's is drawn as the funnel's bar
           and not agrees(s) and s.measure.aggregate != "text"
           and stage_of(s) is None]
    # another tool's by its name (--as)
    return {tool_row(s).name if tool_row(s) else "%s%s@k" % (
        s.base, _params_text(s.rel, s.gains, s.filter)): s for s in cut}


def plot_cutoffs(specs, top=None):
    """The k at which curves are drawn: 1 .. top, by default the largest requested cutoff of a
    curve (sampled past PLOT_POINTS), the requested cutoffs always among them."""
    top = top or max(s.k for s in curve_specs(specs).values())
    ks = set(range(1, min(top, PLOT_POINTS) + 1)) | {s.k for s in specs
                                                     if s.k in range(1, top + 1)}
    ks |= {round(PLOT_POINTS + i * (top - PLOT_POINTS) / PLOT_POINTS)
           for i in range(PLOT_POINTS + 1)
           if top > PLOT_POINTS}
    return sorted(ks)


def curves(judged, specs):
    """{'R@k': [(k, mean), ...]} of judged queries (those with an answer), at
    plot_cutoffs(specs)."""
    families = curve_specs(specs)
    ks = plot_cutoffs(specs) if families else ()
    out = {label: [] for label in families}
    for k in ks:
        at_k = [s._replace(name=label, k=k) for label, s in families.items()]
        for label, mean in aggregated(score_queries(judged, at_k), at_k).items():
            out[label].append((k, mean))
    return out


# === Statistics ===

def sign_flip_p(diffs, permutations=10000, rng=None):
    """Paired two-sided randomization (sign-flip) test of the mean difference.

    The share of sign assignments whose |sum| is at least the observed |sum|, the observed one
    included.  Zero differences cannot change the statistic, so only the nonzero ones are flipped:
    exactly, all 2**n assignments, up to EXACT_LIMIT of them; above that ``permutations`` seeded
    draws (see flip_blocks), and p = (hits + 1) / (draws + 1).  Draws are made FLIP_ROUND at a
    time: rng.getrandbits(8 * draws) of each block in turn, a byte a draw.

    >>> sign_flip_p([0.5, 0.5])            # ++ and -- of 4 reach |1.0|
    0.5
    >>> sign_flip_p([0.0, 0.0]), sign_flip_p([])
    (1.0, 1.0)
    >>> sign_flip_p([1.0] * 20, 999) == 1 / 1000   # only the observed reaches 20
    True
    """
    moved = [d for d in diffs if d]
    if len(moved) <= EXACT_LIMIT:
        # float sums in another order may differ in the last bits
        reach = abs(sum(moved)) - 1e-9
        sums = flip_table(moved)
        return sum(abs(x) >= reach for x in sums) / len(sums)
    import random
    rng = rng or random.Random(0)
    blocks, reach = flip_blocks(moved)
    hits = 0
    for start in range(0, permutations, FLIP_ROUND):
        draws = min(FLIP_ROUND, permutations - start)
        hits += flip_hits(blocks,
                          [rng.getrandbits(8 * draws).to_bytes(draws, "little") for _ in blocks],
                          reach)
    return (hits + 1) / (permutations + 1)


def reference_flip_hits(blocks, columns, reach):
    """How many draws reach the observed |sum|: columns hold one random byte a draw for
    each block, whose bits flip the block's values (see flip_blocks)."""
    tables = [flip_table(block) for block in blocks]
    return sum(abs(sum(map(getitem, tables, flips))) >= reach for flips in zip(*columns))


# Statistics in bulk: the same draws, the same integer sums, many at once.

def fast_flip_hits(blocks, columns, reach):
    """= reference_flip_hits(blocks, columns, reach).

    A draw's sum is the sum of one table entry a block.  bytes.translate looks up a byte of every
    draw's entry at once (one translation table a byte of the entries, made non-negative), and
    placing those bytes 8 apart makes one integer of 64-bit fields, a draw a field: adding the
    blocks' integers adds every draw's sum at once, exactly (the fields hold sums below 2**57).  A
    block of 8 equal values v (R, RR and P change by few distinct amounts) needs no table: its sum
    is v * (8 - 2 * flipped bits), and a translation to bit counts adds up to 31 such blocks in one
    byte a draw.
    """
    draws = len(columns[0])
    fields, offset, i = 0, 0, 0
    spread, counts = bytearray(8 * draws), bytearray(8 * draws)  # their unwritten bytes stay 0
    while i < len(blocks):
        if blocks[i][0] == blocks[i][-1]:  # sorted: all 8 are equal
            i, sums, low = _equal_blocks(blocks, columns, i, counts)
        else:
            sums, low = _table_block(flip_table(blocks[i]), columns[i], spread)
            i += 1
        fields += sums
        offset += low
    sums = _little_endian(array("Q", fields.to_bytes(8 * draws, "little")))
    return sum(1 for total in sums if abs(total + offset) >= reach)


_UNFLIPPED = bytes(8 - bin(byte).count("1") for byte in range(256))


def _equal_blocks(blocks, columns, i, counts):
    """(next block, the fields, their offset) of up to 31 blocks of 8 values equal to v:
    each draw's sum is v * (8 * blocks - 2 * flipped) = 2 * v * unflipped - 8 * v * blocks."""
    value, count, start = blocks[i][0], 0, i
    while i < len(blocks) and i - start < 31 and blocks[i][0] == blocks[i][-1] == value:
        # <= 8 a byte: no carry
        count += int.from_bytes(columns[i].translate(_UNFLIPPED), "little")
        i += 1
    counts[0::8] = count.to_bytes(len(columns[0]), "little")
    return i, 2 * value * int.from_bytes(counts, "little"), -8 * value * (i - start)


def _table_block(table, column, spread):
    """(the fields, their offset) of one block: its entries, less the lowest, 7 bytes each."""
    low = min(table)
    entries = _little_endian(array("Q", map((-low).__add__, table))).tobytes()
    for byte in range(7):  # entries are below 2**56: the eighth byte stays 0
        spread[byte::8] = column.translate(entries[byte::8])
    return int.from_bytes(spread, "little"), low


flip_hits = fast_flip_hits if FAST_PATHS else reference_flip_hits


def flip_blocks(moved):
    """(blocks, reach): the sampled sign-flip test in exact integer arithmetic.

    Each |difference| becomes an integer, |d| * 2**s rounded, s as large as a sum in 56 bits allows
    (1e-15 or finer for a mean over 10,000 queries); flipping the signs of |d| has the distribution
    of flipping those of d.  Sorted, they go in blocks of 8 (the last one padded with 0).  A draw
    takes one random byte a block, whose bit i flips the block's value i; its statistic is the
    |sum|, a hit when it reaches the observed |sum of d| within 1e-9.  Integer sums are exact, so
    equal statistics are equal whatever the order of addition.

    >>> blocks, reach = flip_blocks([0.5, -0.25])        # in units of 2**52: 2 and -1
    >>> [[v / 2 ** 52 for v in block] for block in blocks]
    [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0]]
    >>> reach == 2 ** 52 - math.ceil(1e-9 * 2 ** 54)
    True
    """
    exponent = math.frexp(math.fsum(map(abs, moved)))[1]  # the sum of |d| is below 2**exponent
    scale = 2.0 ** (54 - exponent)
    values = [round(d * scale) for d in moved]
    sizes = sorted(map(abs, values))
    sizes = [0] * (-len(sizes) % 8) + sizes
    blocks = [sizes[i:i + 8] for i in range(0, len(sizes), 8)]
    return blocks, abs(sum(values)) - math.ceil(1e-9 * scale)


def flip_table(block):
    """The 256 signed sums of a block's 8 values: bit i of the index flips value i.

    >>> flip_table([1, 2, 0, 0, 0, 0, 0, 0])[:4]         # ++, -+, +-, --
    [3, 1, -1, -3]
    """
    sums = [0]
    for v in block:
        sums = [x + v for x in sums] + [x - v for x in sums]
    return sums


def cluster_rows(qids, cluster_of):
    """[[row index, ...], ...] of queries in rows (qids, in order) by cluster, in order of their
    first query, each query not in one a cluster of its own; None without clusters.

    >>> cluster_rows(["q1", "q2", "q3"], {"q1": "A", "q3": "A"}), cluster_rows(["q1"], None)
    ([[0, 2], [1]], None)
    """
    if cluster_of is None:
        return None
    rows = {}
    for i, q in enumerate(qids):
        rows.setdefault(cluster_of.get(q, ("", q)), []).append(i)
    return list(rows.values())


def bootstrap_intervals(columns, seed=0, clusters=None):
    """A 95% percentile bootstrap interval of the mean of each column.

    Columns are per-query values in the same query order; each resample draws queries with
    replacement once for all columns, so paired values stay paired (see resample_picks).  Sums are
    exact, over the values as integers (see fixed_point).

    >>> bootstrap_intervals([[0.5, 0.5, 0.5]])
    [[0.5, 0.5]]
    """
    return paired_statistics([], 0, seed, columns, clusters)[1]


def paired_statistics(diffs, permutations, seed, means=(), clusters=None):
    """([sign-flip p of each column of diffs], [bootstrap interval of each column of diffs, then of
    each column of means]); each test draws from random.Random(seed).  clusters: [[row index, ...],
    ...] of every row, or None: queries that share a source are one unit (README: "Questions that
    share a source"): a cluster's summed difference is flipped, and clusters are resampled, a
    resample's mean its queries' total over their count."""
    import random
    columns = list(diffs) + list(means)
    n = len(columns[0]) if columns else 0
    fixed = [fixed_point(column) for column in columns] if n else []
    # sums of the exact integers; the sizes in a last column
    if clusters is not None and n:
        fixed = [([sum(ints[i] for i in c) for c in clusters], scale) for ints, scale in fixed] + [
            ([len(c) for c in clusters], 1.0)]
        diffs = [[math.fsum(column[i] for i in c) for c in clusters] for column in diffs]
    pvalues = [sign_flip_p(column, permutations, random.Random(seed)) for column in diffs]
    sums = bootstrap_sums(fixed, seed, BOOTSTRAP) if fixed else []
    if not sums:
        return pvalues, [[0.0, 0.0] for _ in columns]
    counts = [row[-1] for row in sums] if clusters is not None else repeat(n)
    low, high = int(0.025 * BOOTSTRAP), math.ceil(0.975 * BOOTSTRAP) - 1
    means = [sorted(total / scale / count for total, count in zip(column, counts))
             for (_, scale), column in zip(fixed[:len(columns)], zip(*sums))]
    return pvalues, [[m[low], m[high]] for m in means]


def reference_bootstrap_sums(fixed, seed, resamples):
    """[the sum of each column's picked ints] of each resample (see resample_picks), for
    fixed-point columns (see fixed_point), drawn in bootstrap_rounds."""
    return [[sum(map(ints.__getitem__, picks)) for ints, _ in fixed]
            for rng, count in bootstrap_rounds(seed, resamples)
            for picks in resample_picks(len(fixed[0][0]), rng, count)]


def fast_bootstrap_sums(fixed, seed, resamples):
    """= reference_bootstrap_sums(fixed, seed, resamples).

    Every column's int of a query goes in one integer, a field a column (made non-negative, wide
    enough for a sum of n), and one more field counts rejected words; a table maps each possible
    word to its query's integer, so that one sum() of looked-up integers sums all columns at once,
    and says how many words to draw again.  Narrow fields matter: the integers of 50,000 queries
    must stay in the CPU's caches.  A round's words are drawn a few thousand at a time and taken in
    order: 32 random bits a word, the same words as one draw each.
    """
    table, field, lows, n = _packed_columns(fixed)
    bits, top, lookup = index_bits(n), field * len(lows), table.__getitem__
    mask, totals, ahead = (1 << field) - 1, [], n * max(1, BOOTSTRAP_WORDS // n)
    for rng, count in bootstrap_rounds(seed, resamples):
        stream, at = random_words(rng, ahead, bits), 0
        for _ in range(count):
            total, need = 0, n
            while need:
                if len(stream) - at < need:
                    stream, at = stream[at:] + random_words(rng, max(need, ahead), bits), 0
                found = sum(map(lookup, stream[at:at + need]))  # looked up and summed in C
                at, need = at + need, found >> top  # the words rejected are drawn again
                total += found - (need << top)
            totals.append(total)
    columns = [[((total >> (field * c)) & mask) + n * low for total in totals]
               for c, low in enumerate(lows)]
    return list(map(list, zip(*columns)))  # a resample keeps n words: n lows are added back


def _packed_columns(fixed):
    """(table, field, lows, n) for fast_bootstrap_sums: see there."""
    n, columns = len(fixed[0][0]), len(fixed)
    lows = [min(ints) for ints, _ in fixed]
    widest = max((max(ints) - low).bit_length() for (ints, _), low in zip(fixed, lows))
    field = widest + n.bit_length()
    packed = [sum((v - low) << (field * c) for c, (v, low) in enumerate(zip(row, lows)))
              for row in zip(*(ints for ints, _ in fixed))]
    shared = {}  # queries with equal values share one integer: fewer bytes for the caches to hold
    packed = [shared.setdefault(v, v) for v in packed]
    # 2**bits entries: whole copies of the n queries, then words that are drawn again
    copies, rejected = divmod(1 << index_bits(n), n)
    table = packed * copies + [1 << (field * columns)] * rejected
    return table, field, lows, n


bootstrap_sums = fast_bootstrap_sums if FAST_PATHS else reference_bootstrap_sums


def bootstrap_rounds(seed, resamples):
    """(generator, resamples) of each of BOOTSTRAP_ROUNDS rounds, round r seeded "seed/r"."""
    import random
    return [(random.Random("%d/%d" % (seed, r)),
             resamples * (r + 1) // BOOTSTRAP_ROUNDS - resamples * r // BOOTSTRAP_ROUNDS)
            for r in range(BOOTSTRAP_ROUNDS)]


def fixed_point(column):
    """(ints, scale): the values as integers, value * scale rounded, scale the power of 2
    that puts the largest |value| in BOOTSTRAP_BITS bits: more than a double's 53, so
    that the largest values (a constant column's) come back as themselves, and none
    moves by more than 2**-63 of the largest.

    >>> ints, scale = fixed_point([0.5, -0.25, 0.0])
    >>> [v / 2 ** 60 for v in ints], scale == 2 ** 62, fixed_point([4.0])[1] == 2 ** 59
    ([2.0, -1.0, 0.0], True, True)
    """
    exponent = BOOTSTRAP_BITS - math.frexp(max(map(abs, column)) or 1.0)[1]
    scale = 2.0 ** min(exponent, 1000)  # 2.0 ** 1024 overflows: values below 2**-938 keep 2**-1000
    return [round(v * scale) for v in column], scale


def resample_picks(n, rng, resamples):
    """Each resample's n query indices, drawn uniformly with replacement.

    A draw is a random word of index_bits(n) bits (from 32-bit words): u below
    the largest multiple of n picks u % n; a word past it is rejected, and a
    resample's rejected words are drawn again, as many words as were rejected.
    """
    bits = index_bits(n)
    limit = (1 << bits) // n * n
    for _ in range(resamples):
        picks = []
        while len(picks) < n:
            picks += [u % n for u in random_words(rng, n - len(picks), bits) if u < limit]
        yield picks


def index_bits(n):
    """Bits of a bootstrap draw: enough that at most a quarter of the words are rejected."""
    return n.bit_length() + 2


def random_words(rng, count, bits):
    """count random words of ``bits`` bits (at most 32): one getrandbits call, 32 bits a word."""
    mask = int.from_bytes(((1 << bits) - 1).to_bytes(4, "little") * count, "little")
    data = (rng.getrandbits(32 * count) & mask).to_bytes(4 * count, "little")
    return _little_endian(array("I", data))


def _little_endian(words):
    """An array swapped between the machine's byte order and little-endian, whose bytes the
    fast statistics read and write (the array itself, on a little-endian machine)."""
    if sys.byteorder == "big":
        words.byteswap()
    return words


def holm(pvalues):
    """Holm-adjusted p-values, in the given order.

    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    adjusted, running, m = list(pvalues), 0.0, len(pvalues)
    for rank, i in enumerate(sorted(range(m), key=pvalues.__getitem__)):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


# --- Two label sources: how far they agree, and the orders of runs they give (--candidate-qrels)

def kappa(cells, weight):
    """Cohen's kappa of a confusion matrix {(reference grade, candidate grade): pairs}; weight(i,
    j) of the grades' places among those seen (as scikit-learn's cohen_kappa_score weighs: linear
    |i - j|, quadratic (i - j) ** 2, where its /(G-1) cancels out; unweighted: see
    graded_alike).  None where it is undefined: every pair of one grade on both sides
    (scikit-learn's nan).

    >>> kappa({(0, 0): 2, (1, 1): 1, (1, 0): 1}, lambda i, j: i != j)
    0.5
    """
    rows, cols = margins(cells)
    # the grades either side gives
    at = {g: i for i, g in enumerate(sorted(rows | cols))}
    observed = sum(rows.values()) * sum(n * weight(at[a], at[b]) for (a, b), n in cells.items())
    expected = sum(rows[a] * cols[b] * weight(at[a], at[b]) for a in rows for b in cols)
    return 1 - observed / expected if expected else None


def margins(cells):
    """(The reference's grades, the candidate's), each Counter({grade: pairs}), of a confusion
    matrix {(reference grade, candidate grade): pairs}."""
    rows, cols = Counter(), Counter()
    for (a, b), n in cells.items():
        rows[a] += n
        cols[b] += n
    return rows, cols


KAPPAS = {"kappa_linear": lambda i, j: abs(i - j),
          "kappa_quadratic": lambda i, j: (i - j) ** 2}


def ordinal_alpha(cells):
    """Krippendorff's alpha at the ordinal level of two coders who both grade each unit (a pair
    both sources label), as the krippendorff package computes it: the distance of two grades
    is the count of grades given between them, the ends halved, squared.  None where only one
    grade is given (the package raises).

    >>> ordinal_alpha({(0, 0): 2, (1, 1): 1, (1, 0): 1})
    0.5333333333333333
    """
    counts = sum(margins(cells), Counter())
    grades = sorted(counts)
    # a grade's middle: the count of grades given below it, and half of its own
    middle = {g: below + counts[g] / 2
              for g, below in zip(grades, accumulate([0] + [counts[g] for g in grades]))}

    def distance(a, b):
        return (middle[a] - middle[b]) ** 2
    observed = 2 * sum(n * distance(a, b) for (a, b), n in cells.items())
    expected = sum(counts[a] * counts[b] * distance(a, b) for a in grades for b in grades)
    return 1 - (sum(counts.values()) - 1) * observed / expected if expected else None


def tau_b(x, y):
    """Kendall's tau-b of two orders of the same runs (their values, higher first), as
    scipy.stats.kendalltau computes it; None where either ties them all.

    >>> tau_b([3, 2, 1], [3, 1, 2])
    0.3333333333333333
    """
    signs = [((a > b) - (a < b), (c > d) - (c < d))
             for (a, c), (b, d) in combinations(zip(x, y), 2)]
    # pairs not tied in x, times those not tied in y
    scale = sum(s != 0 for s, _ in signs) * sum(t != 0 for _, t in signs)
    return sum(s * t for s, t in signs) / math.sqrt(scale) if scale else None


def tau_ap(truth, other):
    """Yilmaz, Aslam and Robertson's AP correlation (2008) of the order ``other`` gives the runs
    with the order ``truth`` gives: down other's order, the share of the runs above each that
    truth puts above it too, so that a swap at the top weighs most.  None for fewer than two
    runs, or ties, which the definition has no rule for.

    >>> tau_ap([3, 2, 1], [2, 3, 1]), tau_ap([3, 2, 1], [3, 1, 2])
    (0.0, 0.5)
    """
    n = len(truth)
    if n < 2 or len(set(truth)) < n or len(set(other)) < n:
        return None
    order = sorted(range(n), key=lambda i: -other[i])
    shares = (sum(truth[j] > truth[i] for j in order[:at]) / at
              for at, i in enumerate(order[1:], 1))
    return 2 * sum(shares) / (n - 1) - 1


def mean_intervals(per_query, specs, plan):
    """A 95% bootstrap interval for every mean, over the queries it scores, seeded by the plan's
    --seed (resampling its clusters of them, when given)."""
    out = {}
    for mine in domains(specs):
        means = [s.name for s in mine if s.measure.aggregate == "mean"]
        qids = [q for q, row in per_query.items() if mine[0].name in row]
        out.update(zip(means, bootstrap_intervals([[per_query[q][name] for q in qids]
                                                   for name in means],
                                                  plan.config.seed,
                                                  clusters=cluster_rows(qids, plan.clusters))))
    return {s.name: out[s.name] for s in specs if s.name in out}


# The gates of one comparison: their limits {gate: {measure: limit}} (--max-mean-drop's and
# --max-query-drop's, or --max-group-drop's for a group's means; of a result, its floors'),
# what a mean gate reads
# ("mean", "interval" or "noninferiority") and what the baseline's replicates say: noise
# {measure: the largest minus the smallest mean} (None without replicates), unstable
# {measure: [qid, ...]} (exempt from the per-query gate), and how many replicates there are.
# --gate-on retrieval reads each mean as mean does: a drop gate's, of the drop's retrieval part
READ_MEAN = ("mean", "retrieval")
Gates = namedtuple("Gates", "limits gate_on noise unstable replicates",
                   defaults=(NOTHING, "mean", None, None, 0))

# A gate's breach: the measure, the query (None for a mean), the baseline's value and the
# candidate's (the baseline's None for a floor), how far it dropped (None for a floor), the
# Gate, its limit, and what else it compared {key: value} (noise, replicates, interval; the
# group, last, of a group's mean).  jsonable gives it as JSON holds it.
Breach = namedtuple("Breach", "measure query baseline candidate drop gate limit rule",
                    defaults=(NOTHING,))


def compare(baseline, candidate, specs, plan, where="", gates=Gates()):
    """The comparison block and gate breaches of two results on the same labels.

    Per measure: means, delta, sign-flip p (and Holm's across measures), a bootstrap interval of
    the mean delta, the queries that improved and regressed (largest change first) and, for
    R/RR/Success, the queries "lost": a hit before, nothing relevant found now.  Also "ci95": with
    ci, the candidate's mean_intervals from the same resamples (else empty).
    """
    same_queries(baseline, candidate, where, "the runs")
    paired, means_ci = paired_by_domain(baseline, candidate, specs, plan)
    comparison = {s.name: _comparison_row(baseline, candidate, s, paired[s.name],
                                          s.name in plan.alone) for s in specs}
    seen, breaches = (baseline, candidate, comparison, gates), []
    # measure by measure, each gate's check (see GATES) in the order of the limits
    for spec in specs:
        for name, limits in gates.limits.items():
            if spec.name in limits:
                breaches += GATES[name].check(GATES[name], spec.name, limits[spec.name], seen)
    holm_over(comparison.values())
    return {"comparison": comparison, "breaches": breaches, "ci95": means_ci}


def same_queries(baseline, other, where, what):
    """Refuse two results evaluated on different queries: a mean over other queries is no
    comparison."""
    ours, theirs = other["per_query"], baseline["per_query"]
    odd = [q for q in dict.fromkeys([*ours, *theirs]) if (q in ours) != (q in theirs)]
    if odd:
        fail(where, "%s were evaluated on different queries (%s); compare on fixed "
             "queries, for example with --missing-run zero" % (what, first_few(odd)))


def fell(row):
    """{qid: change} of the queries whose value fell in a comparison row (that changed, for an
    agreement measure)."""
    return row.get("regressed", row.get("changed"))


def mean_breaches(gate, name, limit, seen):
    """The breach of a mean gate, in a list (or none); seen: (the baseline's result, None for a
    floor; the candidate's; the comparison rows {measure: row}, a floor's holding "ci95", the
    interval of the mean; Gates).

    A drop gate allows the mean's change down to -(limit + the measure's noise), a floor the mean
    down to its limit.  Read as "mean" (or with no interval: a sum, a geometric mean) it fails
    below that; as "interval", when the whole 95% interval lies below; as "noninferiority",
    unless the whole interval lies at or above (the candidate shown no worse).  Both fail on
    fewer than 2 queries: an interval of one query says nothing, and a gate never passes on too
    little.
    """
    baseline, candidate, rows, gates = seen
    after, interval = candidate["measures"][name], rows[name]["ci95"]
    before = drop = None
    value, least, rule = after, limit, {}
    # replicates: a drop gate's only
    if gates.noise is not None:
        rule = {"noise": gates.noise[name], "replicates": gates.replicates}
    if baseline is not None:
        before = baseline["measures"][name]
        drop = before - after
        value, least = -drop, -(limit + rule.get("noise", 0.0))
    queries = sum(name in row for row in candidate["per_query"].values())
    if gates.gate_on in READ_MEAN or interval is None:
        failed = value < least - 1e-12
    else:
        failed = queries < 2 or interval[1 if gates.gate_on == "interval" else 0] < least - 1e-12
        rule.update(gate_on=gates.gate_on, ci95=list(interval), queries=queries)
    return [Breach(name, None, before, after, drop, gate, limit, rule)] if failed else []


def query_breaches(gate, name, limit, seen):
    """Each query whose value of a measure (with a baseline: its change) is below what the gate
    allows (-limit; a floor: the limit), lowest first, but the unstable ones (see Gates)."""
    baseline, candidate, _, gates = seen
    exempt = set(gates.unstable[name]) if gates.unstable else ()
    least = limit if baseline is None else -limit
    rule = {} if gates.noise is None else {"replicates": gates.replicates}
    found = []
    for i, (q, row) in enumerate(candidate["per_query"].items()):
        if name not in row or q in exempt:
            continue
        before = drop = None
        value = row[name]
        if baseline is not None:
            before = baseline["per_query"][q][name]
            drop = before - value
            value = -drop
        if value < least - 1e-12:
            found.append((value, i, Breach(name, q, before, row[name], drop, gate, limit, rule)))
    return [breach for _, _, breach in sorted(found)]


# Every gate, once: its option's name, what it needs besides its limit ("baseline";
# "groups", and a baseline; None: a floor), what it reads ("mean": a mean, a group's for
# "groups"; "query": each query's value), its check(gate, measure, limit, seen), which
# returns its breaches (see mean_breaches), and its flag.  Its OPTIONS row reads its limit:
# one, or one per measure (see gate_limits).  The floors first: they add their measures.
Gate = namedtuple("Gate", "name needs scope check flag")
GATES = {row[0]: Gate(*row, "--" + row[0].replace("_", "-")) for row in (
    ("min_mean", None, "mean", mean_breaches),
    ("min_query", None, "query", query_breaches),
    ("max_mean_drop", "baseline", "mean", mean_breaches),
    ("max_query_drop", "baseline", "query", query_breaches),
    ("max_group_drop", "groups", "mean", mean_breaches))}


def jsonable(result):
    """A result as JSON holds it: each breach an object of its fields, the gate as its flag, and
    what else it compared."""
    if "breaches" not in result:
        return result
    return Result(result, breaches=[dict(zip(Breach._fields[:-1], b), gate=b.gate.flag, **b.rule)
                                  for b in result["breaches"]])


def check_floors(plan, result):
    """The blocks a result's floors (--min-mean, --min-query) change, when it has some: the floors,
    the breaches with theirs added (each mean below its floor, read as --gate-on says (see
    mean_breaches: "interval" fails when the whole 95% interval lies below it, "noninferiority"
    unless the whole interval lies at or above it), then each query below one, lowest first),
    and --power's entries or the warnings: with --power, a mean floor's entry says whether the
    interval holds the floor; without it, a warning names each floor that it holds while the
    mean decides: a coin toss."""
    config, out = plan.config, []
    floors = gates_of(plan, None)
    if not any(floors.values()):
        return {}
    # only a mean floor reads an interval: a --min-query alone draws no bootstrap
    intervals = result.get("ci95") or floors["min_mean"] and mean_intervals(
        result["per_query"], plan.specs, plan)
    blocks = _floor_notes(config, result, floors["min_mean"], intervals)
    seen = (None, result, {s.name: {"ci95": intervals.get(s.name)} for s in plan.specs},
            Gates(floors, config.gate_on))
    for name, limits in floors.items():
        for measure, floor in limits.items():
            out += GATES[name].check(GATES[name], measure, floor, seen)
    return dict(blocks, floors=floors, breaches=result.get("breaches", []) + out)


def leak_block(truth, judged, specs):
    """With --access (else {}), the gate no average hides: "leaks", each document a judged query
    may not read ({"query", "document", "rank"}) as far as the Leak measures read (the largest
    Leak@k; the whole ranking, within --depth, with Leak or without a Leak measure), and
    "unmapped", how many ranked documents the map does not name (readable by no one, each a
    leak), in the whole ranking."""
    if truth.access is None:
        return {}
    # a stage's Leak measure reads the stage, not how far the run's leaks count
    run_leaks = [s for s in specs if s.base == "Leak" and s.filter is None]
    reach = max([_cut(s.k) for s in run_leaks], default=_cut(None))
    leaks = [{"query": q, "document": d, "rank": r}
             for q, j in judged.items() for r, d in j.leaks if r <= reach]
    unmapped = sum(d not in truth.access.documents for j in judged.values() for _, d in j.leaks)
    return {"leaks": leaks, "unmapped": unmapped}


def _floor_notes(config, result, floors, intervals):
    """{"power": ...} with each mean floor's entry, or {"warnings": ...} with a warning for each
    floor its interval holds (see check_floors)."""
    power = {name: dict(entry) for name, entry in result.get("power", {}).items()}
    warnings = list(result.get("warnings", []))
    for name, floor in floors.items():
        ci = intervals.get(name)
        if not ci:
            continue
        if config.power:
            power[name]["floor"] = {
                "limit": floor, "ci95": list(ci), "half_width": (ci[1] - ci[0]) / 2,
                "resolved": not ci[0] <= floor <= ci[1], "gate_on": config.gate_on}
        # a coin toss: said
        elif config.gate_on in READ_MEAN and ci[0] <= floor <= ci[1]:
            queries = sum(name in row for row in result["per_query"].values())
            warnings.append(undecided_text("warning: ", name, floor, interval_text(*ci, queries)))
    return {"power": power} if config.power else {"warnings": warnings}


def interval_text(low, high, queries):
    return "95%% interval [%.4f, %.4f] (half-width %.4f over %d queries)" % (
        low, high, (high - low) / 2, queries)


def undecided_text(prefix, name, limit, interval):
    """A mean floor inside the mean's interval: which side the mean falls is a coin toss."""
    return "%sthis set cannot tell whether %s is above --min-mean %s: its %s holds it" % (
        prefix, name, limit, interval)


# z(0.975) + z(0.80): a two-sided test at 5% with 80% power
Z_POWER = 2.8015852


def power(per_query, specs, base=None, limits=NOTHING):
    """{measure: {"n", "sd", "mde", "queries_for": {limit: n}}} (README: "How fine a gate can be"):
    from the n paired differences with a baseline's values (base), of sample standard deviation sd,
    the smallest change of the mean the set detects, mde = Z_POWER * sd / sqrt(n), and the queries
    a gate's limit X (limits: {measure: X}) would need, ceil((Z_POWER * sd / X) ** 2).  Without a
    baseline, sd is sqrt(2) times that of the run's own values ("paired": false): the paired
    spread when a second run spreads alike and the two are not negatively correlated.  None where
    fewer than 2 queries.  A count (NumRet...) is gated by the change of its sum ("of": "sum"):
    mde = Z_POWER * sd * sqrt(n), and no number of queries is given, as more queries make that
    change larger, not easier to see; nor for a limit of 0, which no number of queries resolves.

    >>> before = {"q1": {"R@1": 0.5}, "q2": {"R@1": 0.5}}
    >>> after = {"q1": {"R@1": 1.0}, "q2": {"R@1": 0.5}}
    >>> power(after, [Spec("R@1", "R", 1)], before, {"R@1": 0.1})  # doctest: +NORMALIZE_WHITESPACE
    {'R@1': {'paired': True, 'n': 2, 'sd': 0.3535533905932738, 'mde': 0.7003963,
             'queries_for': {'0.1': 99}}}
    """
    import statistics
    out = {}
    # RelString has no spread
    for spec in (s for s in specs if s.measure.aggregate != "text"):
        name = spec.name
        values = [row[name] - (base[q][name] if base is not None else 0.0)
                  for q, row in per_query.items() if name in row]
        summed = spec.measure.aggregate == "sum"
        sd = mde = None
        if len(values) > 1:
            sd = statistics.stdev(values) * (1.0 if base is not None else math.sqrt(2))
            root = math.sqrt(len(values))
            mde = Z_POWER * sd * root if summed else Z_POWER * sd / root
        out[name] = {"paired": base is not None, "n": len(values), "sd": sd, "mde": mde}
        if summed:
            out[name]["of"] = "sum"
        if name in limits:
            limit, needed = limits[name], None
            # no number resolves a sum's change, or a limit of 0
            if sd is not None and not summed and limit:
                needed = math.ceil((Z_POWER * sd / limit) ** 2)
            out[name]["queries_for"] = {str(limit): needed}
    return out


def blind_warnings(result, specs, plan):
    """The warnings --power gives of a --max-mean-drop finer than the smallest change the set
    detects (see power), given without it: a gate that cannot see passes what it cannot see.

    >>> after = {"q1": {"R@1": 1.0}, "q2": {"R@1": 0.5}}
    >>> before = {"q1": {"R@1": 0.5}, "q2": {"R@1": 0.5}}
    >>> block = {"per_query": after, "baseline_per_query": before}
    >>> plan = make_plan(Config(measure=["R@1"], max_mean_drop=0.1))
    >>> blind_warnings(block, plan.specs, plan)[0][-36:]
    'change is 0.7004 (--power says more)'
    """
    limits, base = plan.gates["max_mean_drop"], result.get("baseline_per_query")
    if plan.config.power or not limits or base is None:
        return []
    return [finer_text("--max-mean-drop", limits[name], name, p["mde"]) + " (--power says more)"
            for name, p in power(result["per_query"], specs, base, limits).items()
            if p["mde"] is not None and name in limits and limits[name] < p["mde"]]


def finer_text(flag, limit, name, mde):
    """A gate's limit finer than the set can see (see power)."""
    return ("warning: %s %s on %s is finer than the set can see: its smallest detectable change "
            "is %.4f" % (flag, limit, name, mde))


def replicate_noise(baseline, replicates, specs):
    """({measure: noise}, {measure: [unstable qid, ...]}) of a baseline's result and its
    replicates' results: the noise is the largest minus the smallest of their means; a
    query is unstable for a measure when its values of it are not all equal.

    >>> one = {"measures": {"R@1": 0.5}, "per_query": {"q1": {"R@1": 1.0}, "q2": {"R@1": 0.0}}}
    >>> two = {"measures": {"R@1": 0.0}, "per_query": {"q1": {"R@1": 0.0}, "q2": {"R@1": 0.0}}}
    >>> replicate_noise(one, [two, one], parse_measures(["R@1"]))
    ({'R@1': 0.5}, {'R@1': ['q1']})
    """
    noise = {}
    for s in specs:
        means = [r["measures"][s.name] for r in [baseline, *replicates]]
        noise[s.name] = max(means) - min(means)
    unstable = {s.name: [q for q, row in baseline["per_query"].items() if s.name in row and any(
                    r["per_query"][q][s.name] != row[s.name] for r in replicates)] for s in specs}
    return noise, unstable


def paired_by_domain(baseline, candidate, specs, plan):
    """({measure: (its queries, the changes on them, sign-flip p, interval of the mean change)},
    with ci {measure: interval of the candidate's mean}): the measures scored on the same
    queries (see domains) drawn together, so that paired values stay paired (domains on the same
    queries at once: one bootstrap).  Agreement measures, 1 by construction, are not tested."""
    cand, base, config = candidate["per_query"], baseline["per_query"], plan.config
    paired, means_ci, drawn = {}, {}, {}
    # the agreement measures last
    for mine in domains(specs):
        drawn.setdefault(tuple(q for q in cand if mine[0].name in cand[q]), []).extend(mine)
    for qids, mine in drawn.items():
        diffs = [[cand[q][s.name] - base[q][s.name] for q in qids] for s in mine]
        means = [s.name for s in mine if config.ci and s.measure.aggregate == "mean"]
        tested = sum(not agrees(s) for s in mine)
        pvalues, intervals = paired_statistics(
            diffs[:tested], config.permutations, config.seed, diffs[tested:] + [
                [cand[q][n] for q in qids] for n in means],
            clusters=cluster_rows(qids, plan.clusters))
        pvalues += [None] * (len(mine) - tested)
        paired.update((s.name, (qids, d, p, interval))
                      for s, d, p, interval in zip(mine, diffs, pvalues, intervals))
        means_ci.update(zip(means, intervals[len(mine):]))
    return paired, {s.name: means_ci[s.name] for s in specs if s.name in means_ci}


def _comparison_row(baseline, candidate, spec, paired, alone=False):
    """One measure's comparison: means, delta, p, interval, the queries that moved (largest
    change first, equal ones in query order) and, for R/RR/Success, those lost.  A count's
    delta is a change of sums, and so is its interval: the mean's times the queries (whole
    numbers, as the counts are).  An agreement measure's (p None) queries "changed", and
    neither it nor a measure only a floor asked for (alone) joins a Holm family: p_holm None."""
    qids, diffs, p, interval = paired
    name, measure = spec.name, spec.measure
    before, after = baseline["measures"][name], candidate["measures"][name]
    if measure.aggregate == "sum":
        interval = [round(v * len(qids)) for v in interval]
    moved = list(zip(diffs, qids))
    row = {"baseline": before, "candidate": after, "delta": after - before, "p_value": p,
           "ci95": interval,
           "improved": {q: d for d, q in sorted(moved, key=lambda x: -x[0]) if d > 0},
           "regressed": {q: d for d, q in sorted(moved, key=lambda x: x[0]) if d < 0}}
    if p is None:
        # none improved on 1
        row["changed"] = dict(row.pop("improved"), **row.pop("regressed"))
    if p is None or alone:
        row["p_holm"] = None
    if measure.losable:
        row["lost"] = [q for q in qids if baseline["per_query"][q][name] > 0
                       and candidate["per_query"][q][name] == 0]
    return row


def holm_over(rows):
    """Set each comparison row's "p_holm": Holm's correction over these rows, one family (but
    those that join none: p_holm None)."""
    rows = [r for r in rows if r.get("p_holm", 0) is not None]
    for row, p in zip(rows, holm([r["p_value"] for r in rows])):
        row["p_holm"] = p


def group_results(groups, result, plan, where, no_answer, replicates):
    """(The "groups" block of a result, the breaches of --max-group-drop): each group's means
    over the evaluated queries it holds (of the measures that score one of them), its
    intervals under --ci and, with a baseline, its comparison, with Holm's correction over
    groups x measures, and with replicates ([their per_query]) the noise of the group's means."""
    blocks, breaches = {}, []
    base, per_query = result.get("baseline_per_query"), result["per_query"]
    # rows in evaluation order: the sums of the queries alone
    order = {q: i for i, q in enumerate(per_query)}
    for name, qids in groups.items():
        rows = {q: per_query[q] for q in sorted(order.keys() & qids, key=order.__getitem__)}
        if not rows:
            fail(where, "group %s: none of its %s is left to evaluate (%s): see --missing-run and "
                 "--no-relevant" % (show(name), n_queries(len(qids)), first_few(qids)))
        specs = [s for s in plan.specs if any(s.name in row for row in rows.values())]
        answered = len(rows) - len(rows.keys() & no_answer)
        fewest = min((sum(s.name in row for row in rows.values()) for s in specs), default=0)
        # some mean is over so few
        block = blocks[name] = {"queries": answered, "small": fewest < SMALL_GROUP}
        if no_answer:
            block["no_answer_queries"] = len(rows) - answered
        block.update(members=list(rows), measures=aggregated(rows, specs))
        if plan.config.ci and base is None:
            block["ci95"] = mean_intervals(rows, specs, plan)
        if plan.config.power:
            block["power"] = power(rows, specs, base, plan.gates["max_group_drop"])
        if base is not None:
            mine = _group_comparison(block, rows, specs, [base, *replicates], plan, where)
            breaches += [b._replace(rule=dict(b.rule, group=name))
                         for b in mine + _nothing_to_gate(specs, plan)]
    if base is not None:
        holm_over(row for block in blocks.values() for row in block["comparison"].values())
    return blocks, breaches


def _group_comparison(block, rows, specs, approved, plan, where):
    """Add a group's comparison (its intervals under --ci, and with replicates its noise) to its
    block; return the breaches of its gate.  approved: the baseline's per_query, then each
    replicate's."""
    mine = ({q: pq[q] for q in rows} for pq in approved)
    theirs = [{"per_query": pq, "measures": aggregated(pq, specs)} for pq in mine]
    noise = replicate_noise(theirs[0], theirs[1:], specs)[0] if len(theirs) > 1 else None
    gates = Gates(gates_of(plan, "groups"), plan.config.gate_on, noise, None, len(theirs) - 1)
    out = compare(theirs[0], {"per_query": rows, "measures": block["measures"]}, specs, plan,
                  where, gates)
    # the same intervals as mean_intervals, from the comparison's resamples
    if plan.config.ci:
        block["ci95"] = out["ci95"]
    block["comparison"] = out["comparison"]
    if len(theirs) > 1:
        block["noise"] = noise
    return out["breaches"]


def _nothing_to_gate(specs, plan):
    """A group gate's breaches when none of the group's queries is scored by any measure (all
    are without an answer, and Abstain is not asked for): a gate never passes on nothing."""
    if specs:
        return []
    return [Breach(name, None, None, None, None, GATES[gate], limit, {"queries": 0})
            for gate, limits in gates_of(plan, "groups").items()
            for name, limit in limits.items()]


def gates_of(plan, needs):
    """The limits {gate: {measure: limit}} of the plan's gates that need this ("baseline": a
    comparison's; "groups": a group comparison's)."""
    return {name: plan.gates[name] for name, gate in GATES.items() if gate.needs == needs}


# === Diagnostics ===

def coverage(baseline, candidate, specs):
    """Judged@k of both runs' judged records (the baseline's: or its mean, a saved result's), k
    the largest cutoff asked for (else 10).

    Only telling when the labels judge non-relevant documents too: then a candidate that returns
    unlabeled documents is measured against labels that were never made for it.
    """
    name = coverage_measure(specs)
    before, after = [judged if isinstance(judged, float) else mean_judged(judged, name)
                     for judged in (baseline, candidate)]
    return {"measure": name, "baseline": before, "candidate": after}


def coverage_cutoff(specs):
    """The k of the Judged@k that the label-coverage warning reads: the largest cutoff asked for,
    else 10."""
    return max([s.k for s in specs if type(s.k) is int] or [10])


def coverage_measure(specs):
    return "Judged@%d" % coverage_cutoff(specs)


def mean_judged(judged, name):
    """The mean of a Judged@k measure over judged records (= aggregated(score_queries(...)),
    without a value per query held)."""
    spec = parse_measure(name)
    score = _scorer(spec)
    return _mean([score(j, spec.k) for j in judged.values()])


def deduplicated(ranked, judged):
    """{qid: repeats removed} of the evaluated queries whose ranking had some (--duplicates
    first)."""
    return {q: ranked[q].deduplicated for q in judged if ranked.get(q) is not None
            and ranked[q].deduplicated}


def coverage_warning(cover, specs):
    """A warning when the candidate's top k is markedly less judged than the baseline's."""
    if cover and cover["baseline"] - cover["candidate"] > COVERAGE_GAP:
        return ("warning: the labels judge %.0f%% of the candidate's documents within %s against "
                "%.0f%% of the baseline's: its scores are measured against labels that do not "
                "cover it"
                % (100 * cover["candidate"], coverage_cutoff(specs), 100 * cover["baseline"]))
    return None


def check_same_labels(theirs, ours, where, whose="the baseline's", what="labels", ours_at=None):
    """Refuse a baseline (or replicate) whose labels, or evidence sets, differ: a label fix
    must not pass as a retrieval change.  A query without labels in one is the same as one
    absent from it: a question without an answer has none, and a log's record for it gives none."""
    differ = [q for q in dict.fromkeys([*ours, *theirs])
              if (ours.get(q) or {}) != (theirs.get(q) or {})]
    if differ:
        fail(where, "%s %s differ from the candidate's%s on %s (%s): compare runs only "
                    "on fixed labels"
             % (whose, what, " (%s)" % ours_at if ours_at else "", n_queries(len(differ)),
                first_few(differ)))


def id_mismatch(ranked, qrels, match="id"):
    """One line on ranked IDs that (nearly) never match a label, with the likely cause; or None.

    Silent on a healthy run: it speaks when no query retrieves a labeled document, or when a simple
    change of the ranked IDs (a chunk suffix cut, a prefix, the case) would match many more of them
    than match now.  A ranked ID counts for a cause only when the change matches a label of its own
    query: a document labeled for another query proves nothing.
    """
    judged = {q: r for q, r in ranked.items() if r is not None and q in qrels and r.judged.num_ret}
    missed = [q for q, r in judged.items() if not r.judged.judged_ranks]
    # only misses carry a sample
    sample = [(q, d) for q in missed for d in judged[q].sample][:1000]
    # a healthy run misses a few queries; with every query labeled with nothing, nothing matches
    if not sample or 10 * len(missed) < len(judged) or not any(qrels.values()):
        return None
    best, cause = max(_mismatch_causes(sample, qrels, missed, match))
    everywhere = len(missed) == len(judged)
    if best and (everywhere or best >= max(3, len(sample) // 10)):
        return "warning: %d of %s retrieved no labeled document; %s" % (
            len(missed), n_queries(len(judged)), cause)
    if everywhere:
        return ("warning: no query retrieved any labeled document (ranked IDs such as %s): do the "
                "run and the labels use the same IDs?"
                % ", ".join(text_name(d, match) for _, d in sample[:2]))
    return None


def _mismatch_causes(sample, qrels, missed, match):
    """(how many sampled (query, ranked ID) pairs a change would match, the change) of each change
    tried."""
    labels = {d for docs in qrels.values() for d in docs}
    # that of every label
    prefix = os.path.commonprefix(list(labels))
    lower = {q: {d.lower() for d in qrels[q]} for q in missed}
    guesses = [(sum(d.split(sep, 1)[0] in qrels[q] for q, d in sample),
                "ranked IDs look like chunks of labeled documents: try "
                "--chunk-separator %s" % show(sep))
               for sep in SEPARATORS if match == "id" and any(sep in d for _, d in sample)]
    guesses.append((sum(d not in qrels[q] and d.lower() in lower[q] for q, d in sample),
                    "ranked and labeled IDs differ in letter case"))
    # texts
    guesses.append((sum(" " in d and any(label in d for label in qrels[q]) for q, d in sample),
                    "ranked entries hold labeled texts inside them: try --match contains"))
    if prefix:
        guesses.append((sum(prefix + d in qrels[q] for q, d in sample),
                        "labeled IDs start with %s and ranked IDs do not" % show(prefix)))
    # that of the ranked IDs
    theirs = os.path.commonprefix([d for _, d in sample])
    return guesses + [(sum(d[cut:] in qrels[q] for q, d in sample),
                       "ranked IDs start with %s and labeled IDs "
                       "do not" % show(theirs[:cut])) for cut in range(1, len(theirs) + 1)]


# === Manifest ===

# What a general result says of how it was made (README: "Keep the approved result"): the tool,
# digests of the truth it was judged by, the measures, the options that change a per-query value
# (and the seed and permutations, recorded, not checked) and the input files.  A result saved with
# it stands for the baseline run it was made from, as long as the truth, those options and the
# queries are the same and it holds every measure asked for.

# a saved result where a baseline's run would be
Saved = namedtuple("Saved", "result source")


def sorted_digest(lines):
    """'sha256:' and the hex digest of text lines sorted by code point, in UTF-8."""
    digest, lines = hashlib.sha256(), sorted(lines)
    # not one string of them all: the labels of msmarco-dev are 1 MB
    for start in range(0, len(lines), 4096):
        digest.update("".join(lines[start:start + 4096]).encode("utf-8"))
    return "sha256:" + digest.hexdigest()


def lengths_digest(lengths):
    """The digest of token counts {ID: count} as a manifest gives it (README: "Keep the approved
    result"): sha256 of the lines ID<TAB>TOKENS, in the order given; not sorted, as the contract's
    other digests are: a sort of the millions of IDs a counts file holds would cost seconds, and
    the fast reader hashes the lines as it reads them."""
    lines = "".join(map("%s\t%d\n".__mod__, lengths.items()))
    return "sha256:" + hashlib.sha256(lines.encode("utf-8")).hexdigest()


def truth_digests(truth):
    """{input: digest} of the truth as evaluated: the labels (lines QID<TAB>DOCID<TAB>GRADE), and
    when given the evidence sets (QID<TAB>SET<TAB>SLOT<TAB>DOCID, sets and slots counted from 1),
    the token counts (see lengths_digest) and the questions without an answer (QID)."""
    digests = {"labels": sorted_digest("%s\t%s\t%d\n" % (q, d, g)
                                       for q, grades in truth.labels.items()
                                       for d, g in grades.items())}
    if truth.evidence is not None:
        digests["evidence"] = sorted_digest("%s\t%d\t%d\t%s\n" % (q, i, j, d)
                                            for q, sets in truth.evidence.items()
                                            for i, one in enumerate(sets, 1)
                                            for j, slot in enumerate(one, 1)
                                            for d in slot)
    # the counts file's digest, taken as it was read (see weigh_later)
    if truth.counts_digest is not None:
        digests["lengths"] = truth.counts_digest
    if truth.no_answer:
        digests["no_answer"] = sorted_digest("%s\n" % q for q in truth.no_answer)
    return digests


def recorded_options(config):
    """The options a result's manifest records: those that change a per-query value (stage
    "value"), then the statistics' seeds (stage "recorded"); --as only when given, as before it
    was."""
    options = {o.name: getattr(config, o.name) for stage in ("value", "recorded") for o in OPTIONS
               if o.stage == stage}
    if config.as_tool is None:
        del options["as_tool"]
    return options


def judges_nonrelevant(labels, level):
    """Whether the labels judge some document non-relevant (a grade below the level): only then
    is label coverage, which a comparison reads, worth a warning."""
    return any(g < level for grades in labels.values() for g in grades.values())


def manifest(plan, digests, labels, judged, run=None):
    """The manifest of a general result (judged: its answered queries' records).  When the labels
    judge documents non-relevant, it holds the label coverage a comparison reads of a baseline,
    at every cutoff it may ask; "inputs" names the files as given, by role, of the runs the one
    scored (run: its file), and stays {} for a library call, which reads no file."""
    made = {"tool": "%s %s" % (PROG, __version__), **digests,
            "measures": [s.name for s in plan.specs], "options": recorded_options(plan.config)}
    if judges_nonrelevant(labels, plan.opts.level):
        cutoffs = sorted({coverage_cutoff([s]) for s in plan.specs} | {10})
        made["label_coverage"] = {n: mean_judged(judged, n)
                                  for n in map("Judged@%d".__mod__, cutoffs)}
    given = {o.name: getattr(plan.config, o.name) for o in OPTIONS if o.stage == "input"}
    # a stage as the command line names it
    for name in ("stage", "baseline_stage"):
        given[name] = given[name] and ["=".join(pair) for pair in given[name]]
    made["inputs"] = {n: [run] if n == "run" else value
                      for n, value in given.items() if run and value is not None}
    return made


_WHAT = {"labels": "the labels", "evidence": "the evidence sets", "lengths": "the token counts",
         "no_answer": "the questions without an answer"}


def check_saved(saved, plan, truth, whose):
    """Refuse a saved result (its manifest checked for shape) made on other truth, other options
    that change a per-query value, or without a measure asked for (README: "Keep the approved
    result")."""
    theirs, ours, where = saved.result["manifest"], truth_digests(truth), saved.source
    for key, what in _WHAT.items():
        if theirs.get(key) == ours.get(key):
            continue
        if key in theirs and key in ours:
            fail(where, "%s changed since %s was saved: score its run again" % (what, whose))
        if key in theirs:
            fail(where, "%s was saved with %s, and none are given now: give them, or score its "
                        "run again" % (whose, what))
        fail(where, "%s was saved without %s, which are given now: score its run again with "
                    "them" % (whose, what))
    for name, value in plan.config._asdict().items():
        before = theirs["options"].get(name, OPTION[name].default)
        if OPTION[name].stage == "value" and before != value:
            fail(where, "%s was saved with %s, and %s is given now: give the same, or score its "
                        "run again" % (whose, option_text(name, before), option_text(name, value)))
    missing = [s.name for s in plan.specs if s.name not in theirs["measures"]]
    if missing:
        fail(where, "%s has no %s (it holds %s): score its run again with them" % (
            whose, ", ".join(missing), ", ".join(map(str, theirs["measures"])) or "none"))


def check_manifest(made, where):
    """Refuse a saved result's manifest that is not one this tool writes: one line on the first
    member out of shape."""
    if not isinstance(made, dict):
        fail(where, "has no manifest: it was saved by an older version, or edited; "
                    "score its run again")
    for key, kind, what in (("tool", str, "a string"), ("labels", str, "a digest"),
                            ("measures", list, "a list"), ("options", dict, "an object"),
                            *((key, str, "a digest") for key in _WHAT if key in made),
                            ("label_coverage", dict, "an object")):
        if (key in made or key != "label_coverage") and not isinstance(made.get(key), kind):
            fail(loc(where, "manifest." + key),
                 "expected %s, not %s" % (what, show(made.get(key))))
    for name in made.get("label_coverage", {}):
        _saved_number(made, ("label_coverage", name), where)


def _saved_number(obj, path, where, root=()):
    """The number at a path of keys in a saved result (a value it gives: an int or a float; never
    NaN, an infinity or past a float's range, which no result of this tool holds)."""
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    number = not isinstance(obj, bool) and isinstance(obj, (int, float))
    # NaN compares false too
    if not number or not abs(obj) <= sys.float_info.max:
        fail("%s: %s" % (where, ".".join(root + path)), "expected a %snumber, not %s" % (
            "finite " if number else "", show(obj)))
    return obj


def check_self_consistent(obj, result, where):
    """Refuse a saved result whose means are not those of its own per-query values (to 1e-9), or
    whose query count is not the queries it lists: edited, not printed.  A file edited
    consistently is a new result, still bound to its labels by the manifest's digests."""
    for key in ("queries", "no_answer_queries"):
        if obj.get(key) != result.get(key):
            fail(loc(where, key), "%s, and per_query lists %s: the result was edited; "
                                  "score its run again"
                 % (show(obj.get(key)), result.get(key)))
    for name, mean in result["measures"].items():
        saved = _saved_number(obj, ("measures", name), where)
        if abs(saved - mean) > 1e-9 * max(1.0, abs(mean)):
            fail(loc(where, "measures." + name),
                 "%s is not the %s of its per-query values, %s: the result was "
                 "edited; score its run again"
                 % (show(saved), "sum" if type(mean) is int else "mean", show(mean)))


def _saved_row(row, specs, where, qid):
    """A saved result's values of one query, of the measures asked for that score it."""
    if not isinstance(row, dict):
        fail("%s: per_query.%s" % (where, qid),
             "expected an object of measures to values, not %s" % show(row))
    return {s.name: _saved_number(row, (s.name,), where, ("per_query", qid)) for s in specs}


def _saved_lists(obj, key, names, where):
    """A saved result's "skipped" or "zeroed": {policy: [qid, ...]}."""
    lists = obj.get(key)
    if not isinstance(lists, dict) or set(lists) != set(names) or not all(
            isinstance(qids, list) and all(isinstance(q, str) for q in qids)
            for qids in lists.values()):
        fail(loc(where, key),
             "expected {%s} of query ID lists, not %s" % (", ".join(names), show(lists)))
    return lists


def long_flag(name):
    """An option's long flag: '--depth'; as is Python's, so the keyword as_tool is --as."""
    return "--" + name.replace("_", "-").replace("as-tool", "as")


def option_text(name, value):
    """An option as the command line gives it: '--depth 10', '--judged-only', 'no --depth'."""
    flag = long_flag(name)
    if value is True:
        return flag
    if value in (None, False):
        return "no " + flag
    return "%s %s" % (flag, value)


# === Readers ===

# One reader for each input, written to be read rather than to be fast: it is the definition of
# what the tool accepts, and every error message comes from it.  Where a fast twin follows one, it
# answers only with exactly what the reference returns.

class _Decline(Exception):
    """A fast reader cannot vouch for this input: the reference reader takes it."""


@contextlib.contextmanager
def reading(source):
    """Turn a broken file (or gzip stream) into EvalError: the one place that words it."""
    try:
        yield
    except (OSError, EOFError, zlib.error) as exc:
        fail(source, "cannot read: %s" % (getattr(exc, "strerror", None) or exc))


KEPT = {}  # {path: (stdin or None, bytes)} of standard input and pipes, kept for one_reading


@contextlib.contextmanager
def one_reading():
    """Standard input and named pipes are read once in a reading (one command, one library call:
    _runid reads the run again) and anew in the next, which a second writer may have filled."""
    KEPT.clear()
    yield
    KEPT.clear()  # nor is a large standard input held once the reading is over (an error's
    # next reading clears it first)


def open_input(path):
    """A seekable binary stream of a file's bytes.

    '-' is standard input; it and named pipes (a shell's <(zcat run.gz)) are
    read into memory first.  Gzip is unpacked, whatever the file's name.
    """
    source = place(path)
    with reading(source):
        if path == "-" and sys.stdin is None:
            fail(source, "cannot read standard input: it is closed")
        # kept with its stream: another standard input is read anew
        if path == "-" and KEPT.get(path, (None,))[0] is not sys.stdin:
            KEPT[path] = sys.stdin, sys.stdin.buffer.read()
        raw = io.BytesIO(KEPT[path][1]) if path in KEPT else open(path, "rb")
        if not raw.seekable():
            with raw:
                KEPT[path] = None, raw.read()
            raw = io.BytesIO(KEPT[path][1])
        magic = raw.read(2)
        raw.seek(0)
    if magic != b"\x1f\x8b":
        return raw
    import gzip
    if isinstance(raw, io.BytesIO):
        return gzip.GzipFile(fileobj=raw, mode="rb")
    raw.close()  # a GzipFile closes only a file it opened itself
    return gzip.open(path, "rb")


def read_bytes(stream, source, size=-1):
    """stream.read(size), a broken file (or gzip stream) turned into EvalError."""
    with reading(source):
        return stream.read(size)


_BOM = b"\xef\xbb\xbf"


def text_blocks(stream, source):
    """A stream's blocks of BLOCK bytes, the first without its BOM, then b"" for ever at its
    end: what reads text reads, a block at a time (is_json, text_lines)."""
    first = True
    while True:
        block = read_bytes(stream, source, BLOCK)
        if first and block.startswith(_BOM):
            block = block[3:]
        first = False
        yield block


def is_json(stream, source):
    """Whether the first character that is not blank (nor a BOM) is '{' or '['; rewinds the
    stream."""
    for block in text_blocks(stream, source):
        rest = block.lstrip(b" \t\n\r")
        if rest or not block:
            stream.seek(0)
            return rest[:1] in (b"{", b"[")


# C0 controls but the ASCII spaces, and DEL, as bytes; then C1 controls and line separators
_CONTROL_BYTES = bytes(range(0, 9)) + bytes(range(14, 32)) + b"\x7f"
_CONTROL_BYTE = re.compile(b"[\x00-\x08\x0e-\x1f\x7f]")
_CONTROLS = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\u2028\u2029]")
# One memchr() a control byte, 28 in all, is faster than one translation of the bytes.
# The pattern's search costs about 60 instructions a character, so it is made only where
# a control may be: a control byte, or in UTF-8 a C1 control's lead byte, U+2028, U+2029.
_NON_ASCII_CONTROLS = (b"\xc2", b"\xe2\x80\xa8", b"\xe2\x80\xa9")


def first_control(data):
    """The first control character or line separator of UTF-8 data, as a match, or None."""
    clean = not any(byte in data for byte in _CONTROL_BYTES)
    if clean and (data.isascii() or not any(lead in data for lead in _NON_ASCII_CONTROLS)):
        return None
    return _CONTROLS.search(data.decode("utf-8"))


def text_lines(stream, source):
    """(line number, line) of a text file, one block at a time.

    UTF-8, with or without a BOM; LF, CRLF and a lone CR each end a line. Refused, naming the line:
    bytes that are not UTF-8, control characters (a binary file fails in its first block) and lines
    over MAX_LINE bytes. Time is linear in the size, whatever the lengths of the lines.
    """
    number, rest = 1, b""
    for block in text_blocks(stream, source):
        data, tail = rest + block, b""
        if block and data.endswith(b"\r"):  # perhaps half of a CRLF: wait for the next block
            data, tail = data[:-1], b"\r"
        if b"\r" in data:
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if not block and data and not data.endswith(b"\n"):
            data += b"\n"
        cut = data.rfind(b"\n") + 1
        whole, rest = data[:cut], data[cut:] + tail
        if len(whole) > MAX_LINE or len(rest) > MAX_LINE:
            _refuse_long_lines(whole, rest, number, source)
        for line in _decode_lines(whole, rest, number, source).split("\n")[:-1]:
            yield number, line
            number += 1
        if not block:
            return


def _refuse_long_lines(whole, rest, number, source):
    """Fail at the first line over MAX_LINE bytes, among whole lines and an unfinished one."""
    for i, line in enumerate(whole.split(b"\n")[:-1] + [rest]):
        if len(line) > MAX_LINE:
            fail("%s:%d" % (source, number + i),
                 "line longer than %d bytes: not TREC text (a missing line break?)" % MAX_LINE)


def _decode_lines(whole, rest, number, source):
    """The text of the whole lines from line ``number`` on: UTF-8 without control characters.

    The unfinished ``rest`` is checked for control bytes as well, so that a
    binary file fails in its first block.
    """
    try:
        text = whole.decode("utf-8")
    except UnicodeDecodeError as exc:
        fail("%s:%d" % (source, number + whole.count(b"\n", 0, exc.start)),
             "not UTF-8: byte 0x%02x" % whole[exc.start])
    bad = first_control(whole)
    if bad is not None:
        fail("%s:%d" % (source, number + text.count("\n", 0, bad.start())),
             "control character %s: not text" % show(bad.group()))
    if len(rest.translate(None, _CONTROL_BYTES)) < len(rest):
        fail("%s:%d" % (source, number + text.count("\n")), "control character %s: not text"
             % show(_CONTROL_BYTE.search(rest).group().decode()))
    return text


_TOKEN = re.compile("[^%s]+" % ASCII_SPACE)


def split_columns(line):
    """A TREC line's columns, split on ASCII whitespace only, as trec_eval: a no-break
    space belongs to the ID it is in.  (str.split() would also split at U+00A0; on an
    ASCII line it splits only where trec_eval does, control characters being refused.)"""
    return line.split() if line.isascii() else _TOKEN.findall(line)


def column_lines(stream, source, layout):
    """(line number, place, columns) of each line of whitespace-separated columns, as many as
    ``layout`` names ('QID GROUP'), or more when it ends in an optional one ('[TAG]'), of a text
    file (see text_lines); blank and '#' lines are skipped.

    >>> list(column_lines(io.BytesIO(b"# QID GROUP\\nq1 easy\\n"), "g.txt", "QID GROUP"))
    [(2, 'g.txt:2', ['q1', 'easy'])]
    """
    more = layout.endswith("]")
    width = len(layout.split()) - more
    for number, line in text_lines(stream, source):
        cols = split_columns(line)
        if not cols or cols[0].startswith("#"):
            continue
        where = "%s:%d" % (source, number)
        if len(cols) != width and not (more and len(cols) > width):
            # "expected 5 or more columns (QID Q0 DOCID RANK SCORE [TAG])"
            least = "%d or more" % width if more else "%d" % width
            fail(where, "expected %s column%s (%s), found %d: %s" % (
                least, "s" if width > 1 else "", layout, len(cols), show(line.strip(ASCII_SPACE))))
        yield number, where, cols


_INTEGER = re.compile(r"[+-]?[0-9]+")


def parse_grade(text, where, query):
    """A TREC grade: a 64-bit integer written in ASCII digits."""
    if not _INTEGER.fullmatch(text):
        fail(where, "grade %s is not an integer" % show(text), query)
    if len(text) > 20 or not -INT_LIMIT <= int(text) < INT_LIMIT:
        fail(where, "grade %s is out of range (a 64-bit integer)" % show(text), query)
    return int(text)


def parse_score(text, where, query):
    """A TREC score: a finite decimal number ('nan', 'inf', '1_0' are refused)."""
    try:
        value = float(text) if text.isascii() and "_" not in text else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        fail(where, "score %s is not a finite number" % show(text), query)
    return value


def read_trec_qrels(stream, source):
    """{qid: {doc: grade}} of text qrels, one label a line: TREC's QID ITER DOCID GRADE, or
    BEIR's QID DOCID GRADE (with or without its header line), one width throughout.  After
    BEIR's header, written with tabs, lines are split on tabs only: an ID may hold a space."""
    qrels, first_line, width, tabs = {}, {}, None, False
    for number, line in text_lines(stream, source):
        cols = ([c.strip(" ") for c in line.split("\t")] if tabs and line.strip()
                else split_columns(line))
        if not cols or cols[0].startswith("#"):
            continue
        if width is None and not tabs and cols == TSV_HEADER:
            tabs = "\t" in line
            continue
        where = "%s:%d" % (source, number)
        if width is None and len(cols) in QRELS_WIDTHS:
            width, width_line = len(cols), number
        if len(cols) != width:
            expected = ("tab-separated " * tabs + QRELS_WIDTHS[width]
                        + " as on line %d" % width_line
                        if width else " or ".join(QRELS_WIDTHS.values()))
            fail(where, "expected %s, found %d: %s"
                 % (expected, len(cols), show(line.strip(ASCII_SPACE))))
        if tabs and "" in cols:
            fail(where, "an empty column in a tab-separated line: %s"
                 % show(line.strip(ASCII_SPACE)))
        # TREC's ITER is not read
        qid, doc, grade = cols[:1] + cols[-2:]
        labels = qrels.setdefault(qid, {})
        if doc in labels:
            fail(where, "document %s is labeled twice (first at line %d)"
                 % (show(doc), first_line[qid, doc]), qid)
        labels[doc] = parse_grade(grade, where, qid)
        first_line[qid, doc] = number
    if not qrels:
        nothing_in(source, "labels", "the file has no QID ITER DOCID GRADE (or QID "
                                     "DOCID GRADE) lines")
    return qrels


def trec_run_lines(stream, source):
    """(line number, qid, docid, score) of each line of a TREC run: QID Q0 DOCID RANK SCORE [TAG].

    The RANK column is ignored, as trec_eval ignores it (ranks come from the
    scores), and so is anything after the tag.  Every error names its line.
    """
    for number, where, cols in column_lines(stream, source, "QID Q0 DOCID RANK SCORE [TAG]"):
        qid, _, doc, _, score = cols[:5]
        yield number, qid, doc, parse_score(score, where, qid)


def add_run_lines(lines, ranking, line_of, source, duplicates):
    """Add lines of one query (see trec_run_lines) to its ranking (docids, scores); a document
    ranked twice names both of its lines (line_of: {doc: its first line}), unless duplicates is
    "first"."""
    docids, scores = ranking
    for number, qid, doc, value in lines:
        first = line_of.setdefault(doc, number)
        if first != number and duplicates != "first":
            fail("%s:%d" % (source, number), "document %s is ranked twice (first at line %d)%s"
                 % (show(doc), first, DUPLICATES_HINT if duplicates else ""), qid)
        docids.append(doc)
        scores.append(value)
    return ranking


def read_trec_run(stream, source, duplicates="error"):
    """{qid: (docids, scores)} of a TREC run, every line kept; a document ranked twice names
    both of its lines (unless duplicates is "first")."""
    rankings, first_line = {}, {}
    # a query's lines may come back later
    for qid, lines in groupby(trec_run_lines(stream, source), itemgetter(1)):
        add_run_lines(lines, rankings.setdefault(qid, ([], [])), first_line.setdefault(qid, {}),
                      source, duplicates)
    if not rankings:
        nothing_in(source, "rankings", "the file has no QID Q0 DOCID RANK SCORE lines")
    return rankings


def read_json_text(stream, source):
    """The whole text of a JSON file, decoded as UTF-8 (a BOM is dropped)."""
    data = read_bytes(stream, source)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        fail("%s:%d" % (source, data.count(b"\n", 0, exc.start) + 1),
             "not UTF-8: byte 0x%02x at offset %d" % (data[exc.start], exc.start))


class _DuplicateKeys(dict):
    """A JSON object that had a key twice; validators report it with its path."""
    duplicate = None


def _object_pairs(pairs):
    obj = dict(pairs)
    if len(obj) < len(pairs):
        seen = set()
        obj = _DuplicateKeys(obj)
        obj.duplicate = next(k for k, _ in pairs if k in seen or seen.add(k))
        obj.copies = [v for k, v in pairs if k == obj.duplicate][:2]
    return obj


def no_repeated_key(value, where, path=""):
    """Refuse a saved result with a key twice in any object, naming both copies: the last would
    silently win."""
    if isinstance(value, _DuplicateKeys):
        fail(loc(where, path), "key %s appears twice (%s, then %s): the result was edited; "
                               "score its run again"
             % (show(value.duplicate), show(value.copies[0]), show(value.copies[1])))
    items = ()
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    for key, item in items:
        at = _join(path, key) if isinstance(key, str) else "%s[%d]" % (path, key)
        no_repeated_key(item, where, at)


def parse_json(text, source):
    """Parse JSON text; errors name the line and column."""
    if not text.strip():
        fail(source, "file is empty")
    try:
        return json.loads(text, object_pairs_hook=_object_pairs)
    except json.JSONDecodeError as exc:
        fail("%s:%d:%d" % (source, exc.lineno, exc.colno), "invalid JSON: %s" % exc.msg)
    except RecursionError:
        fail(source, "invalid JSON: nested too deeply")
    except ValueError:  # Python 3.11+ refuses integers of over 4300 digits
        fail(source, "invalid JSON: a number has too many digits")


def typed(value):
    """'list [1, 2]': a value's type, then the value as show() gives it."""
    return "%s %s" % (type(value).__name__, show(value))


def check_object(obj, where, what, query=None, empty=None):
    """A JSON object without repeated keys; with empty, (what it holds, why) the words of a
    refusal of an empty one."""
    if not isinstance(obj, dict):
        fail(where, "expected an object of %s, not %s" % (what, typed(obj)), query)
    if isinstance(obj, _DuplicateKeys):
        fail(where, "key %s appears twice" % show(obj.duplicate), query)
    if empty and not obj:
        nothing_in(where, *empty)
    return obj


def normalized_texts(value, where, qid):
    """A JSON list of texts, or object keyed by texts, normalized (anything else is left to the
    checks that follow); two keys that are one text once normalized are refused."""
    if isinstance(value, list):
        try:  # IDs read as texts: ASCII without whitespace is normalized already
            joined = "".join(value)
            if joined.isascii() and joined.split() == [joined]:
                return value
        except TypeError:
            pass
        return [normalized(text) if isinstance(text, str) else text for text in value]
    if not isinstance(value, dict) or isinstance(value, _DuplicateKeys):
        return value
    texts = {}
    for key in value:
        text = normalized(key) if isinstance(key, str) else key
        if text in texts:
            fail(where, "texts %s and %s are one text once normalized"
                 % (show(texts[text]), show(key)), qid)
        texts[text] = key
    return {text: value[key] for text, key in texts.items()}


# How a query's JSON IDs and values are read: check, the check of each value; what values are
# ("grades", "scores"); duplicates, as for check_ids (None for labels, --duplicates for
# rankings); and --match.
Values = namedtuple("Values", "check what duplicates match")


def json_query(qid, value, source, root, values):
    """(IDs, values or None) of one query's JSON: a list of IDs, or an object of ID -> value."""
    check_id(qid, loc(source, root), what="query ID")
    return json_ids(value, loc(source, _join(root, qid)), qid, values)


def json_ids(value, where, qid, values):
    """(IDs, values or None) of a list of IDs, or of an object of ID -> value, at ``where``,
    read as Values say."""
    if values.match != "id":  # texts are compared, and checked, once normalized
        value = normalized_texts(value, where, qid)
    if isinstance(value, list):
        return check_ids(value, where, qid, values.duplicates), None
    check_object(value, where, "document IDs to %s" % values.what, qid)
    check = values.check
    pairs = [(check_id(doc, where, qid), check(v, "%s.%s" % (where, doc), qid))
             for doc, v in value.items()]
    return [doc for doc, _ in pairs], [v for _, v in pairs]


def record_ids(found, role, where, qid, values):
    """json_ids of a record's labels or ranking (found: its roles); a list of objects (a log's
    documents) is refused naming their keys and the --fields path that would read one."""
    name, value = found[role]
    if isinstance(value, list) and value and isinstance(value[0], dict):
        keys = list(value[0])
        key = next((k for k, v in value[0].items() if isinstance(v, str)),
                   keys[0] if keys else "KEY")
        fail(loc(where, "%s[0]" % name), "expected %s, not objects (keys %s): read the key that "
             "holds each with --fields %s=%s.%s"
             % ("texts" if values.match != "id" else "IDs", ", ".join(map(show, keys)) or "none",
                role,
                                    name if name.endswith("[]") else name + "[]", key), qid)
    return json_ids(value, loc(where, name), qid, values)


def qrels_from_json(obj, source, root, match="id"):
    """{qid: {doc: grade}} from {"q": ["d", ...]} (grade 1) or {"q": {"d": grade}}."""
    check_object(obj, loc(source, root), "query IDs to labels", None,
                 ("labels", "the object holds no query"))
    values = Values(check_grade, "grades", None, match)
    return {qid: _labels(*json_query(qid, value, source, root, values))
            for qid, value in obj.items()}


def _labels(docs, grades):
    """{doc: grade} of listed IDs (grade 1) or of IDs with their grades."""
    return dict.fromkeys(docs, 1) if grades is None else dict(zip(docs, grades))


def rankings_from_json(obj, source, root, duplicates="error", match="id"):
    """{qid: (docids, scores or None)} from {"q": ["d", ...]} (list order) or
    {"q": {"d": score}}."""
    check_object(obj, loc(source, root), "query IDs to rankings")
    values = Values(check_score, "scores", duplicates, match)
    return {qid: json_query(qid, value, source, root, values) for qid, value in obj.items()}


def split_fixture(obj, source, evidence_given):
    """(its "qrels" or None, its "runs", {"groups": ..., "evidence": ...} as far as it has
    them) of a fixture object; evidence sets (its own, or given: evidence_given) stand in
    for missing "qrels"."""
    if not isinstance(obj, dict):
        fail(source, 'expected a JSON object with "qrels" and "runs", not %s' % type(obj).__name__)
    check_object(obj, source, '"qrels" and "runs"')
    if "evidence" in obj and evidence_given:
        given_twice(source, 'the fixture has "evidence"', "--evidence", "the evidence sets")
    missing = [key for key in FIXTURE_KEYS if key not in obj and not (
        key == "qrels" and ("evidence" in obj or evidence_given))]
    if missing:
        fail(source, "missing %s: a fixture is {\"qrels\": {...}, \"runs\": {...}}"
             % " and ".join('"%s"' % m for m in missing))
    return obj.get("qrels"), obj["runs"], {key: obj[key]
                                           for key in ("groups", "evidence", "no_answer")
                                           if key in obj}


def fixture_part(obj, key, source):
    """(the "qrels" or "runs" member of a fixture or part of one, its JSON path)."""
    if key not in obj:
        fail(source, 'a fixture\'s part without "%s" (it has %s): give %s' % (
            key, ", ".join('"%s"' % k for k in FIXTURE_KEYS if k in obj),
            "the labels" if key == "qrels" else "a file of rankings"))
    return obj[key], key


def _read_lines(stream, source):
    """The lines of a binary stream, as bytes; a broken file (or gzip stream) is an EvalError."""
    with reading(source):
        yield from iter(stream.readline, b"")


def is_json_lines(stream, source):
    """Whether text that starts with '{' is JSON Lines: its first line holds one whole
    object, and more text follows on later lines.  Rewinds the stream."""
    lines = _read_lines(stream, source)
    first = next(lines, b"")
    following = next((line for line in lines if line.strip()), b"")
    stream.seek(0)
    if not following:
        return False
    try:
        return isinstance(json.loads(first.decode("utf-8-sig")), dict)
    except ValueError:  # not UTF-8, or not one whole JSON value
        return False


def json_line_objects(lines, source):
    """(place, value, where a repeat says it was first) of each non-blank line of JSON Lines."""
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        where = "%s:%d" % (source, number)
        try:
            value = json.loads(raw.decode("utf-8-sig" if number == 1 else "utf-8"),
                               object_pairs_hook=_object_pairs)
        except UnicodeDecodeError as exc:
            fail(where, "not UTF-8: byte 0x%02x" % raw[exc.start])
        except json.JSONDecodeError as exc:
            fail(where, "invalid JSON at column %d: %s" % (exc.colno, exc.msg))
        except (ValueError, RecursionError):
            fail(where, "invalid JSON: a number has too many digits, or nesting is too deep")
        yield where, value, "on line %d" % number


# What a file is: the one place that decides it (load reads by what it says).

def sniff(value, source, fields=None):
    """What a file or a parsed JSON value is.

    A stream (rewound): "text" (TREC, BEIR TSV, lines of columns), "json lines" (its first line one
    whole object, more text after it) or "json" (its first character that is not blank '{' or '[').
    A JSON value: "records" (an array, or one object that holds a query ID and labels, a ranking or
    evidence sets: a JSON Lines file of one record), "fixture" (an object whose "qrels" or "runs"
    holds an object: a fixture or part of one; a query so named would hold a list or grades),
    "llamaindex" (EmbeddingQAFinetuneDataset's), "result" (this tool's JSON output: an object
    holding "per_query" and "manifest" or "measures" objects, or several runs of them) or "object"
    (any other value).
    """
    if isinstance(value, io.IOBase):
        start = read_bytes(value, source, 16)
        value.seek(0)
        # named only when the bytes cannot be text (a query 'PAR1')
        for magic, what, export in BINARY_FORMATS:
            if start.startswith(magic) and any(b < 32 and chr(b) not in ASCII_SPACE
                                               for b in start):
                fail(source, "%s, not text: %s" % (what, export % source))
        if not is_json(value, source):
            return "text"
        return "json lines" if is_json_lines(value, source) else "json"
    if is_saved(value):
        return "result"
    fields = fields or JSONL_FIELDS
    # a path's first key
    has = lambda *roles: any(_first_key(key) in value for role in roles for key in fields[role])
    if isinstance(value, list):
        return "records"
    if not isinstance(value, dict):
        return "object"
    if has("query") and has("relevant", "retrieved", "evidence"):
        return "records"
    if any(isinstance(value.get(key), dict) for key in FIXTURE_KEYS):
        return "fixture"
    if all(isinstance(value.get(k), dict) for k in LLAMAINDEX_DATASET):
        return "llamaindex"
    return "object"


def is_saved(value):
    """Is a JSON value this tool's output: a result (an object holding "per_query" and a "manifest"
    or "measures" object, or the seed's "mrr_at_k"), or several runs' {"runs": {name: result}}?"""
    one = lambda v: isinstance(v, dict) and isinstance(v.get("per_query"), dict) and (
        isinstance(v.get("manifest"), dict) or isinstance(v.get("measures"), dict)
        or "mrr_at_k" in v)
    runs = isinstance(value, dict) and value.get("runs")
    return one(value) or isinstance(runs, dict) and bool(runs) and all(map(one, runs.values()))


def json_value(text, source, fields=None, results=False):
    """(what it is, the value) of a JSON text (see sniff); a saved result is refused unless
    ``results`` (a baseline's or a replicate's reader) takes it."""
    obj = parse_json(text, source)
    kind = sniff(obj, source, fields)
    if kind == "result" and not results:
        fail(source, "a result this tool saved holds no labels or rankings: it serves as "
                     "--baseline or --replicate, in place of the run it was made from")
    return kind, obj


def records_in(obj, source):
    """[(place, record, where a repeat says it was first), ...] of JSON that sniff calls
    records."""
    if isinstance(obj, dict):
        return [(source, obj, "")]
    if not obj:
        fail(source, "no records: the array is empty")
    return [(loc(source, "[%d]" % i), record, "at [%d]" % i) for i, record in enumerate(obj)]


def json_records(objects, fields, first_keys=None):
    """(place, qid, {role: (field name, value)} of the roles it has) of each record, as read.

    A record that is not an object, has no query ID, names a role twice, has
    neither labels, a ranking nor evidence sets, or repeats another record's
    query ID is refused.  objects: (place, value, where) of each record; first_keys, a list,
    gets the first record's keys.
    """
    fields, line_of = fields or JSONL_FIELDS, {}
    for where, record, mark in objects:
        check_object(record, where, "fields (a record is {\"query_id\": ..., \"relevant\": ..., "
                     "\"retrieved\": ...})")
        if first_keys is not None and not first_keys:
            first_keys.extend(record)
        qid = _field(record, "query", where, fields)
        if qid is None:
            fail(where, "no query ID: a record names it %s%s" % (" or ".join(fields["query"]),
                                                               fields_hint(record, "query")))
        qid = check_id(qid[1], loc(where, qid[0]), what="query ID")
        if qid in line_of:
            fail(where, "query %s has a record %s already" % (show(qid), line_of[qid]))
        line_of[qid] = mark
        found = {role: _field(record, role, where, fields) for role in fields if role != "query"}
        found = {role: field for role, field in found.items() if field is not None}
        needed = found.keys() & {"relevant", "retrieved", "evidence", "answerable"}
        if not needed:
            fail(where, "the record has no %s%s" % (roles_said(fields, "answerable"),
                                                  fields_hint(record)), qid)
        if needed == {"answerable"} and found["answerable"][1] is True:
            fail(where, "the record says its question has an answer, and gives no %s: nothing "
                        "to score" % roles_said(fields), qid)
        yield where, qid, found


def roles_said(fields, *more):
    """'labels (relevant or ...), a ranking (...) or evidence sets (...)': what a record may give,
    and more roles, each with its field names."""
    kinds = ["%s (%s)" % (ROLES[role], " or ".join(fields[role]))
             for role in ("relevant", "retrieved", "evidence") + more]
    return "%s or %s" % (", ".join(kinds[:-1]), kinds[-1])


def _field(record, role, where, fields):
    """(name, value) of the record's field for a role (a key, or a path whose first key it has:
    see follow), or None; two names for one role are refused."""
    names = [name for name in fields[role] if name in record or _first_key(name) in record]
    if len(names) > 1:
        fail(where, "fields %s both give the %s: keep one"
             % (" and ".join(map(show, names)), ROLES[role]))
    if not names:
        return None
    return names[0], record[names[0]] if names[0] in record else follow(record, names[0], where)


def _first_key(path):
    return path.split(".", 1)[0].split("[", 1)[0]


def follow(value, path, where):
    """What a --fields path leads to in a record: keys joined by '.', and '[]' after a key for
    each element of its list.  A step that finds no object with the key, or no list, is refused.

    >>> follow({"docs": [{"meta": {"id": "d1"}}, {"meta": {"id": "d2"}}]}, "docs[].meta.id",
    ...        "log:1")
    ['d1', 'd2']
    """
    steps = [(step.rstrip("[]"), step.endswith("[]")) for step in path.split(".")]
    return _follow(value, steps, path, where, "the record")


def _follow(value, steps, path, where, at):
    for i, (key, each) in enumerate(steps):
        if not isinstance(value, dict) or key not in value:
            what = "is %s, not an object" % typed(value)
            if isinstance(value, dict):
                what = "has no key %s" % show(key)
            fail(where, "the path %s leads nowhere: %s %s" % (path, at, what))
        value, at = value[key], key if at == "the record" else "%s.%s" % (at, key)
        if each and not isinstance(value, list):
            fail(where, "the path %s leads nowhere: %s is %s, not a list"
                 % (path, at, typed(value)))
        rest = steps[i + 1:]
        if each and rest:
            return [_follow(v, rest, path, where, "%s[%d]" % (at, j)) for j, v in enumerate(value)]
    return value


def _record_truth(found, where, qid, opts, given, read):
    """Read a record's labels (or its evidence sets, standing in) into read's labels, and its
    evidence sets and whether its question has no answer into its extras["evidence"] and
    ["no_answer"] (read: (labels, extras), filled in); given: the Truth given apart (evidence
    sets, questions without an answer)."""
    labels, extras = read
    if found.get("evidence") == found.get("relevant", ()) and not found["evidence"][1]:  # no sets
        found = {role: field for role, field in found.items() if role != "evidence"}
    if "evidence" in found:
        if given.evidence is not None:
            given_twice(where, "the record has evidence sets", "--evidence", query=qid)
        name, value = found["evidence"]
        extras.setdefault("evidence", {}).update(
            fold_evidence({qid: evidence_entry(value, loc(where, name), qid, opts.match)},
                          opts.separator, where))
    if "relevant" in found:
        labels.update(fold_labels({qid: _labels(*record_ids(found, "relevant", where, qid, Values(
            check_grade, "grades", None, opts.match)))}, opts.separator, where))
    elif "evidence" in found:
        labels[qid] = evidence_labels(extras["evidence"][qid])
    unanswerable = qid in given.no_answer
    if "answerable" in found and not opts.seed_mode:
        name, value = found["answerable"]
        if not isinstance(value, bool):
            fail(loc(where, name), "expected true or false, not %s" % show(value), qid)
        if value and unanswerable:
            fail(where, "the record says its question has an answer, and %s lists it among those "
                        "without one: which is it?" % (given.no_answer[qid] or "--no-answer"), qid)
        if not value:
            if given.no_answer:
                given_twice(where, "the record says it has no answer", "--no-answer", query=qid)
            extras.setdefault("no_answer", []).append(qid)
            unanswerable = True
    if unanswerable:
        labels.setdefault(qid, {})
    return unanswerable


def records_rankings(records, source, truth, opts, rankings=True):
    """(the records' own labels or None, {qid: Ranking or None}, {"evidence": their evidence
    sets, "no_answer": their queries without an answer} as far as they have them) of records
    (place, record, where) read as a fixture (truth.labels None: judged by each record's own
    labels, or its evidence sets standing in) or a run (whose labels are read, to be compared);
    rankings False: as labels, their rankings left unread.  Each record is judged as it is
    read, so that memory follows queries."""
    theirs, ranked, keys, extras, fields = {}, {}, [], {}, opts.fields or JSONL_FIELDS
    for where, qid, found in json_records(records, opts.fields, keys):
        unanswerable = False
        if truth.labels is None:
            unanswerable = _record_truth(found, where, qid, opts, truth, (theirs, extras))
        elif found.keys() & {"relevant", "evidence"}:  # to be compared with the candidate's
            _record_truth({r: found[r] for r in ("relevant", "evidence") if r in found}, where,
                          qid, opts, truth._replace(evidence=None),
                          (theirs if "relevant" in found else {}, extras))
        if "retrieved" in found and rankings:
            docids, scores = record_ranking(found, where, qid, opts.duplicates, opts.match)
            own = truth._replace(labels=theirs if truth.labels is None else truth.labels,
                                 evidence=extras.get("evidence") or truth.evidence)
            if unanswerable:  # known from the record itself: no budget scores its ranking
                own = own._replace(no_answer={qid: None})
            if "tokens" in found:
                own = own._replace(lengths=record_lengths(found["tokens"], docids, where, qid))
            elif own.lengths is None and docids and not unanswerable and any(
                    f.tokens is not None for f in opts.filters):
                fail(where, "no token counts for the budget: the record has no %s and --lengths "
                            "is not given%s"
                     % (" or ".join(fields["tokens"]),
                        fields_hint(keys, "tokens", "the first record's")), qid)
            ranked.update(judge_run({qid: (docids, scores)}, own, opts,
                                    loc(where, found["retrieved"][0])))
    if truth.labels is None and not theirs:
        no_record_has(source, "labels", "relevant", fields, keys)
    if rankings and not ranked and keys:
        no_record_has(source, "rankings", "retrieved", fields, keys)
    extras["keys"] = keys  # for a message on a role no record has
    return theirs or None, ranked, extras


def record_ranking(found, where, qid, duplicates, match):
    """(IDs, scores or None) of a record's ranking (found: its roles), its scores list read when
    it has one."""
    docids, scores = record_ids(found, "retrieved", where, qid,
                                Values(check_score, "scores", duplicates, match))
    if "scores" in found:
        scores = record_scores(found["scores"], docids, scores, where, qid)
    return docids, scores


def fold_labels(qrels, separator, source=""):
    """Labels as every reader returns them: with a separator, labels of chunks become
    labels of their documents (two labels of one document must agree).

    >>> fold_labels({"q": {"a#1": 2, "a#2": 2, "b": 0}}, "#")
    {'q': {'a': 2, 'b': 0}}
    """
    if not separator:
        return qrels
    folded = {}
    for qid, labels in qrels.items():
        # the rule ranked IDs follow too
        check_cut(labels, separator, source, "label", qid)
        docs, first = {}, {}
        for label, grade in labels.items():
            doc = label.split(separator, 1)[0]
            if doc in docs and docs[doc] != grade:
                fail(source, "labels %s (grade %d) and %s (grade %d) are one document %s once "
                     "cut at %s, with different grades"
                     % (show(first[doc]), docs[doc], show(label), grade, show(doc),
                        show(separator)), qid)
            docs[doc] = grade
            first.setdefault(doc, label)
        folded[qid] = docs
    return folded


def folded_json_labels(qrels, source, opts):
    """The folded labels (see fold_labels) of a JSON qrels object."""
    return fold_labels(qrels_from_json(qrels, source, "qrels", opts.match), opts.separator, source)


def folded_json_evidence(evidence, source, opts):
    """The folded evidence sets (see fold_evidence) of a JSON evidence object."""
    return fold_evidence(evidence_from_json(evidence, source, "evidence", opts.match),
                         opts.separator, source)


def reference_json_rankings(text, source, truth, opts):
    """(the file's own labels or None, {qid: Ranking or None}, {"groups": its groups unread,
    "evidence": its evidence sets}, each only when it has them) of a JSON run, fixture (or part
    of one) or array of records.  truth.labels None: the text must be a fixture or records,
    judged by its own (folded) labels, or its evidence sets (or truth's) standing in for them."""
    kind, obj = json_value(text, source, opts.fields, truth.labels is not None)
    theirs, root, extras = None, "", {}
    if kind == "result":  # a saved result stands for a baseline's run: see saved_evaluation
        return None, Saved(obj, source), {}
    if kind == "llamaindex":
        fail(source, "a LlamaIndex dataset (queries, relevant_docs) holds labels, not rankings: "
                     "it is read as --qrels, beside --run with the rankings")
    if kind == "records":
        return records_rankings(records_in(obj, source), source, truth, opts)
    if truth.labels is None:
        labels, obj, extras = split_fixture(obj, source, truth.evidence is not None)
        if "evidence" in extras:
            extras["evidence"] = folded_json_evidence(extras["evidence"], source, opts)
            truth = truth._replace(evidence=extras["evidence"])
        root = "runs"
        # the evidence sets stand in for its labels (the fast twin takes no such fixture)
        if labels is None:
            theirs = evidence_labels_of(truth.evidence)
            extras["stand_in"] = True
        else:
            theirs = folded_json_labels(labels, source, opts)
        if "no_answer" in extras and not opts.seed_mode:
            if truth.no_answer:
                given_twice(source, 'the fixture has "no_answer"', "--no-answer")
            extras["no_answer"] = ids_from_json(extras["no_answer"], source, "no_answer", "query")
            truth = truth._replace(no_answer=dict.fromkeys(extras["no_answer"]))
        truth = truth._replace(labels=with_no_answer(theirs, truth.no_answer))
    elif kind == "fixture":
        if "qrels" in obj:  # a baseline's labels, which must be the candidate's
            theirs = folded_json_labels(obj["qrels"], source, opts)
        if "evidence" in obj:  # and its evidence sets
            extras["evidence"] = folded_json_evidence(obj["evidence"], source, opts)
        obj, root = fixture_part(obj, "runs", source)
    return theirs, judge_run(rankings_from_json(obj, source, root, opts.duplicates, opts.match),
                             truth, opts, source, root), extras


# json.loads would build every ranking before the first is judged: memory ten
# times the file's.  Instead the rankings object is parsed one query at a time
# by json's own scanner, and each query is validated, judged and dropped.
_SPACE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace, and no other


_COLON = re.compile(r"[ \t\n\r]*:[ \t\n\r]*")


_NEXT = re.compile(r"[ \t\n\r]*([,}])[ \t\n\r]*")


_QRELS_FIRST = re.compile(r'[ \t\n\r]*\{[ \t\n\r]*"%s"[ \t\n\r]*:[ \t\n\r]*' % FIXTURE_KEYS[0])


_RUNS_NEXT = re.compile(r'[ \t\n\r]*,[ \t\n\r]*"%s"[ \t\n\r]*:[ \t\n\r]*(?=\{)' % FIXTURE_KEYS[1])


# a repeated key fails a check, and declines
_DECODER = json.JSONDecoder(object_pairs_hook=_object_pairs)


def fast_json_rankings(text, source, truth, opts):
    """= reference_json_rankings(text, source, truth, opts).

    Takes the usual {"qrels": ..., "runs": {...}} or {qid: ranking}; any other layout and any
    error, JSON's or ours, go to the reference, which finds it again and words it.
    """
    try:
        return _fast_json_rankings(text, source, truth, opts)
    except (_Decline, ValueError, RecursionError):  # ValueError: JSON's errors and EvalError
        return reference_json_rankings(text, source, truth, opts)


def _fast_json_rankings(text, source, truth, opts):
    theirs, head, start = None, _QRELS_FIRST.match(text), _SPACE.match(text).end()
    if head:
        labels, i = _DECODER.raw_decode(text, head.end())
        theirs = folded_json_labels(labels, source, opts)
        if truth.labels is None:
            truth = truth._replace(labels=with_no_answer(theirs, truth.no_answer))
        runs, root = _RUNS_NEXT.match(text, i), "runs"
        if runs is None:
            raise _Decline
        i = runs.end()
    elif truth.labels is None or not text.startswith("{", start):
        raise _Decline
    else:
        i, root = start, ""

    values = Values(check_score, "scores", opts.duplicates, opts.match)

    def judged(qid, value):
        ranking = json_query(qid, value, source, root, values)
        return judge_run({qid: ranking}, truth, opts, source, root)[qid]
    ranked, end = _members(text, i, judged)
    if root:  # the fixture's closing brace, not another member
        close = _NEXT.match(text, end)
        if close is None or close.group(1) != "}":
            raise _Decline
        end = close.end()
    other_layout = not root and not ranked.keys().isdisjoint(FIXTURE_KEYS)
    # no ranking; trailing text; or a fixture (or part of one) in another layout
    if not ranked or text[end:].strip(" \t\n\r") or other_layout:
        raise _Decline
    return theirs, ranked, {}  # a fixture with groups (or any other member) was declined


def _members(text, i, read):
    """({key: read(key, value)}, offset past it) of the JSON object at offset i, parsed a member
    at a time."""
    out = {}
    i = _SPACE.match(text, i + 1).end() if text.startswith("{", i) else i
    if text.startswith("}", i):
        return out, i + 1
    while True:
        if not text.startswith('"', i):
            raise _Decline
        key, i = scanstring(text, i + 1)
        colon = _COLON.match(text, i)
        if colon is None or key in out:
            raise _Decline
        value, i = _DECODER.raw_decode(text, colon.end())
        out[key] = read(key, value)
        after = _NEXT.match(text, i)
        if after is None:
            raise _Decline
        if after.group(1) == "}":
            return out, after.start(1) + 1
        i = after.end()


json_rankings = fast_json_rankings if FAST_PATHS else reference_json_rankings


def with_empty_labels(truth, labels, policy):
    """The Truth, whose queries without an answer under --empty-labels no-answer include those
    whose labels are an empty list, as "answerable": false would say of each."""
    if policy != "no-answer":
        return truth
    empty = dict.fromkeys((q for q, grades in labels.items() if not grades), "--empty-labels")
    return truth._replace(no_answer={**empty, **truth.no_answer})


def with_no_answer(labels, no_answer):
    """A copy of the labels that holds each query without an answer (labeled with nothing,
    unless it has labels), so that its ranking is read: what a fixture read with --no-answer
    gives (the labels themselves when there is none)."""
    return {**labels, **{q: labels.get(q, {}) for q in no_answer}} if no_answer else labels


def reference_judged_trec_run(stream, source, truth, opts):
    """{qid: Ranking or None} of a TREC run's stream: each query judged when its lines end,
    so that memory holds one query's lines.  Messages come as if every line were read
    first: the first bad line, else the first query that cannot be judged.  A run whose
    queries are not contiguous is read again, whole (read_trec_run)."""
    ranked, judging_error = {}, None
    for qid, lines in groupby(trec_run_lines(stream, source), itemgetter(1)):
        if qid in ranked:  # the query comes back
            stream.seek(0)
            rankings = read_trec_run(stream, source, opts.duplicates)
            return judge_run(rankings, truth, opts, source)
        ranking = add_run_lines(lines, ([], []), {}, source, opts.duplicates)
        try:
            ranked.update(judge_run({qid: ranking}, truth, opts, source))
        except EvalError as exc:
            judging_error, ranked[qid] = judging_error or exc, None
    if not ranked:
        nothing_in(source, "rankings", "the file has no QID Q0 DOCID RANK SCORE lines")
    if judging_error:
        raise judging_error
    return ranked


def fast_judged_trec_run(stream, source, truth, opts):
    """= reference_judged_trec_run(stream, source, truth, opts).

    A run is read in chunks of whole lines, and a query is judged as soon as its last line is read,
    so memory holds one query's lines at a time (a query whose lines come back later is declined).
    """
    progress = _progress(source)
    try:
        ranked = _fast_pass(stream, truth, opts, BLOCK, progress, source)
    except _Decline:
        ranked = None
    finally:
        progress(None, None)
    if not ranked:  # declined, or no ranking at all: the reference words the refusal
        stream.seek(0)
        return reference_judged_trec_run(stream, source, truth, opts)
    return ranked


def _fast_pass(stream, truth, opts, chunk, progress=None, source=""):
    """{qid: Ranking or None} of a TREC run's lines, read ``chunk`` bytes at a time."""
    ranked, current, docs, values = {}, None, [], []
    for lines_read, piece, lines in _chunks(stream, chunk):
        if progress:
            progress(lines_read, len(ranked))
        qids, docids, scores = _fast_columns(piece, lines)
        for q, first, stop in _segments(qids):
            if q != current:
                if current is not None:
                    qid = current.decode()
                    ranked[qid] = _fast_judge(current, docs, values, truth, opts, source)
                if q.decode() in ranked:  # the query came back: only the reference keeps all
                    raise _Decline
                current, docs, values = q, [], []
            docs.append(docids[first:stop])
            values.append(scores[first:stop])
    if current is not None:
        ranked[current.decode()] = _fast_judge(current, docs, values, truth, opts, source)
    return ranked


def _fast_judge(q, docs, values, truth, opts, source):
    """The Ranking record (or None) of one query's pieces of IDs (bytes) and scores."""
    docids, scores = (part[0] if len(part) == 1 else list(chain.from_iterable(part))
                      for part in (docs, values))
    docset, qid = set(docids), q.decode()
    if len(docset) < len(docids) and opts.duplicates != "first":  # the reference names both lines
        raise _Decline
    labels = truth.labels.get(qid)
    try:  # an error goes to the reference, which words it in its place among the run's errors
        if read_as_text(q, docset, scores, truth, opts):
            decoded = list(map(bytes.decode, docids))
            return judge_run({qid: (decoded, scores)}, truth, opts, source)[qid]
        ids = opts.pipeline and held_ids(qid, docids, docset, opts.pipeline)
        if labels is None and not opts.agree:
            return None
        sets = evidence_of(truth, qid)
        grades = {d.encode(): g for d, g in (labels or {}).items()}
        encoded = sets and tuple(tuple(tuple(d.encode() for d in slot) for slot in s)
                                 for s in sets)
        ranking = judge_ranking(docids, scores, grades, opts, docset, encoded)._replace(ids=ids)
        if ranking.sample:
            ranking = ranking._replace(sample=tuple(d.decode() for d in ranking.sample))
        if ranking.seen:
            ranks, top, _ = ranking.seen
            decoded = {d.decode(): r for d, r in ranks.items()}
            # --judged-only keeps no top documents: "", a str
            ranking = ranking._replace(seen=(decoded, top and top.decode(), None))
        if ranking.top:
            ranking = ranking._replace(top=ranking.top.decode())
        # the items a filter reaches are decoded as it reaches them
        if opts.filters and docids and labels is not None:
            if opts.duplicates == "first":
                docids, scores, _ = best_occurrences(docids, scores)
            items = chain.from_iterable(_windows_in_rank_order(docids, scores))
            query = Query(qid, source, labels, sets, False)
            ranking = with_filters(ranking, items, truth, opts, query)
        return ranking
    except EvalError:
        raise _Decline from None


def _chunks(stream, chunk):
    """Yield (lines so far, bytes of whole lines, their number) of a stream; a line
    over MAX_LINE, or a stream that cannot be read, declines."""
    rest, count = b"", 0
    try:
        if stream.read(3) != _BOM:
            stream.seek(0)
        while True:
            block = stream.read(chunk)
            if not block:
                break
            block = rest + block
            cut = block.rfind(b"\n") + 1
            piece, rest = block[:cut], block[cut:]
            long_line = len(piece) > MAX_LINE and max(map(len, piece.split(b"\n"))) > MAX_LINE
            if len(rest) > MAX_LINE or long_line:
                raise _Decline
            if piece:
                # what replace() takes out is found by memchr(): 4 times faster than count()
                lines = len(piece) - len(piece.replace(b"\n", b""))
                count += lines
                yield count, piece, lines
    except (OSError, EOFError, zlib.error):
        raise _Decline from None
    if rest:
        yield count + 1, rest + b"\n", 1


# Every line break becomes a marker token, so that one split() of a chunk both
# tokenizes it and proves that every line has the same number of columns.
_MARK = b"\x00"


def _fast_columns(piece, lines):
    """(qids, docids, scores) of a chunk of ``lines`` whole lines; IDs stay bytes."""
    if b"\r" in piece and piece.count(b"\r") != piece.count(b"\r\n"):
        raise _Decline  # a lone CR ending a line
    if not piece.isascii():
        try:
            piece.decode("utf-8")
        except UnicodeDecodeError:
            raise _Decline from None
    if first_control(piece):
        raise _Decline  # a control character (NUL too)
    tokens = piece.replace(b"\n", b" \x00 ").split()
    width = len(tokens) // lines
    if width >= 6 and len(tokens) == width * lines and (
            tokens[width - 1::width].count(_MARK) == lines):
        raw = tokens[4::width]
        try:
            scores = list(map(float, raw))
        except ValueError:
            scores = None
        qids = tokens[0::width]
        # float() takes '1_0' and 'nan', trec_eval does not; a comment line of the same
        # width looks like data but for its '#': such chunks go line by line
        if scores is not None and math.isfinite(sum(scores)) and (
                b"_" not in piece or b"_" not in b"".join(raw)) and (
                b"#" not in piece or b"\n#" not in b"\n" + b"\n".join(qids)):
            return qids, tokens[2::width], scores
    return _fast_lines(piece)


def _fast_lines(piece):
    """The same columns, line by line: for chunks with comments, blank lines or mixed widths."""
    qids, docids, scores = [], [], []
    for raw in piece.split(b"\n")[:-1]:
        cols = raw.split()
        if not cols or cols[0].startswith(b"#"):
            continue
        if len(cols) < 5 or b"_" in cols[4]:
            raise _Decline
        try:
            value = float(cols[4])
        except ValueError:
            raise _Decline from None
        if not math.isfinite(value):
            raise _Decline
        qids.append(cols[0])
        docids.append(cols[2])
        scores.append(value)
    return qids, docids, scores


def _segments(qids):
    """(qid, start, stop) of each run of equal IDs in a chunk's qid column.

    A query's lines are nearly always contiguous, and usually as many as the last query's, so
    each run's end is first guessed from the last run, else found by galloping and bisecting, then
    proven in C by one count; a chunk where that proof fails is split by groupby, element by
    element.
    """
    out, n, start, size = [], len(qids), 0, 1
    while start < n:
        q, high = qids[start], start + size
        if not (high <= n and qids[high - 1] == q and (high == n or qids[high] != q)):
            low, high, step = start, start + 1, 1
            while high < n and qids[high] == q:
                low, step = high, step * 2
                high = min(n, high + step)
            while high - low > 1:
                mid = (low + high) // 2
                low, high = (mid, high) if qids[mid] == q else (low, mid)
        if qids[start:high].count(q) != high - start:
            out, start = [], 0
            for q, group in groupby(qids):
                stop = start + len(list(group))
                out.append((q, start, stop))
                start = stop
            return out
        out.append((q, start, high))
        start, size = high, high - start
    return out


def _progress(source):
    """A callback that shows reading progress on a terminal's stderr (never in a pipe)."""
    if sys.stderr is None or not sys.stderr.isatty():
        return lambda *counts: None
    state = {"last": 0.0, "shown": False}

    def shown(lines, queries):
        now = time.monotonic()
        if lines is None:
            if state["shown"]:
                sys.stderr.write("\r\033[K")
        elif now - state["last"] > 0.5:
            state["last"], state["shown"] = now, True
            sys.stderr.write("\r%s: reading %s: %s lines, %s queries scored" % (
                PROG, source, format(lines, ","), format(queries, ",")))
        sys.stderr.flush()
    return shown


def _windows_in_rank_order(docids, scores, size=16):
    """Lists of a ranking's items (score, ID decoded), in trec_eval's order (= in_rank_order of
    the decoded IDs: UTF-8 keeps the order of code points), a window at a time (see
    ranked_windows): a budget that weighs ten items of a thousand sorts and decodes little
    more."""
    for window in ranked_windows(docids, scores, size):
        yield [(x, d.decode()) for x, d in window]


judged_trec_run = fast_judged_trec_run if FAST_PATHS else reference_judged_trec_run


def groups_from_lines(stream, source, what="group"):
    """{group: {qid: where}} of a text file's lines QID GROUP; '#' lines are comments.  what:
    "group", or "cluster" (--clusters, read alike)."""
    groups = {}
    for _, where, (qid, name) in column_lines(stream, source, "QID " + what.upper()):
        _add_member(groups.setdefault(name, {}), qid, name, where, what)
    if not groups:
        nothing_in(source, what + "s", "the file has no QID %s lines" % what.upper())
    return groups


def groups_from_json(obj, source, root, what="group"):
    """{group: {qid: where}} of a JSON object {"group": ["q1", ...], ...} (what: see
    groups_from_lines)."""
    check_object(obj, loc(source, root), "%s names to query IDs" % what, None,
                 (what + "s", "the object holds no " + what))
    groups = {}
    for name, qids in obj.items():
        check_id(name, loc(source, root), what=what + " name")
        where = loc(source, _join(root, name))
        if not isinstance(qids, list):
            fail(where, "expected a list of query IDs, not %s" % typed(qids))
        if not qids:
            fail(where, "%s %s is empty" % (what, show(name)))
        members = groups[name] = {}
        for i, qid in enumerate(qids):
            at = "%s[%d]" % (where, i)
            _add_member(members, check_id(qid, at, what="query ID"), name, at, what)
    return groups


def _add_member(members, qid, name, where, what):
    if qid in members:
        fail(where, "query %s is listed twice in %s %s (first at %s)"
             % (show(qid), what, show(name), members[qid]))
    members[qid] = where


def check_clusters(clusters, qrels):
    """{qid: cluster} of read clusters (README: "Questions that share a source"): each query
    labeled, and in one cluster only."""
    cluster_of = {}
    for name, members in check_groups(clusters, qrels, what="cluster").items():
        for qid, where in zip(members, clusters[name].values()):
            if qid in cluster_of:
                fail(where, "in cluster %s and in cluster %s: a query shares its source with "
                            "one cluster only"
                     % (show(cluster_of[qid]), show(name)), qid)
            cluster_of[qid] = name
    return cluster_of


def check_groups(groups, qrels, max_group_drop=None, what="group"):
    """{group: [qid, ...]} of read groups (or clusters: what) whose queries are all labeled;
    None when there are none, which a group gate (max_group_drop) cannot do without."""
    if groups is None:
        if max_group_drop is not None:
            raise EvalError('--max-group-drop needs query groups: --groups FILE, or a '
                            'fixture\'s "groups"')
        return None
    for name, members in groups.items():
        for qid, where in members.items():
            if qid not in qrels:  # labeled or, beside agreement measures, ranked: known_queries
                fail(where, "%s %s names a query that has no labels%s" % (
                    what, show(name), "" if isinstance(qrels, dict) else " and no ranking"), qid)
    return {name: list(members) for name, members in groups.items()}


# --- Token counts: what each ranked item costs in the context (README: "Token budgets") ---

def check_count(value, where, query=None):
    """A token count: an integer from 0 to 2**63 - 1 (bools and floats are refused)."""
    if type(value) is int and 0 <= value < INT_LIMIT:
        return value
    count = _integral(value)
    if count is None or count < 0:
        fail(where, "token count %s is not an integer from 0 to 2**63 - 1" % show(value), query)
    return count


def reference_length_lines(stream, source, wanted=None):
    """({ranked ID: token count}, the digest of every count) of a stream of lines ID TOKENS, of
    the wanted IDs (None: all); '#' lines are comments.  Every line is checked; a wanted ID
    given twice is refused.  The digest: see lengths_digest."""
    lengths, lines, digest = {}, 0, hashlib.sha256()
    for number, doc, count in _length_lines(stream, source):
        lines += 1
        digest.update(("%s\t%d\n" % (doc, count)).encode("utf-8"))
        if wanted is not None and doc not in wanted:
            continue
        if doc in lengths:  # the first line is looked for again: no line number is kept per ID
            stream.seek(0)
            first = next(n for n, d, _ in _length_lines(stream, source) if d == doc)
            fail("%s:%d" % (source, number),
                 "ID %s has a token count on line %d already" % (show(doc), first))
        lengths[doc] = count
    if not lines:
        nothing_in(source, "token counts", "the file has no ID TOKENS lines")
    return lengths, "sha256:" + digest.hexdigest()


def _length_lines(stream, source):
    """(line number, ID, token count) of each line ID TOKENS; '#' lines are comments."""
    for number, where, cols in column_lines(stream, source, "ID TOKENS"):
        digits = cols[1].isascii() and cols[1].isdigit() and len(cols[1]) < 20
        yield number, cols[0], check_count(int(cols[1]) if digits else cols[1], where)


def fast_length_lines(stream, source, wanted=None):
    """= reference_length_lines(stream, source, wanted).

    Lines ID TOKENS are read a chunk at a time, each chunk checked at once and split
    once, and only the wanted IDs are kept (decoded, and their counts made integers):
    a file counts every ID of a run, and a budget weighs a few of them.  Comments,
    blank lines, tabs, a wanted ID given twice (fewer IDs than lines kept) and anything
    odd go to the reference, which reads the same stream from its start.
    """
    try:
        lengths, lines, kept, digest = {}, 0, 0, hashlib.sha256()
        encoded = None if wanted is None else {doc.encode("utf-8") for doc in wanted}
        for lines, piece, count in _chunks(stream, LENGTHS_BLOCK):
            kept += _fast_length_lines(piece, count, lengths, encoded, digest)
        if lines and len(lengths) == kept:
            return lengths, "sha256:" + digest.hexdigest()
    except _Decline:
        pass
    stream.seek(0)
    return reference_length_lines(stream, source, wanted)


# a lengths file is two short tokens a line: smaller chunks keep them in the cache
LENGTHS_BLOCK = 16 << 10


# the reference splits at these: it reads such lines
_ODD_LENGTH_BYTES = _CONTROL_BYTES + b"\t\x0b\x0c"


_DIGITS_AS_ZERO, _NINETEEN_DIGITS = bytes.maketrans(b"123456789", b"000000000"), b"0" * 19
_LEADING_ZERO = re.compile(rb" 0[0-9]")  # a count such as 007: IDs hold no space


def _fast_length_lines(piece, lines, lengths, wanted, digest):
    """Add a chunk's lines ID TOKENS of the wanted IDs (bytes; None: all) to lengths, and all of
    them to the digest; return how many it added, or decline.  Each line is proven to hold an ID,
    one space and a count without leading zeros: the lines hashed as they stand are
    lengths_digest's."""
    if b"\r" in piece:
        if piece.count(b"\r") != piece.count(b"\r\n"):
            raise _Decline
        piece = piece.replace(b"\r\n", b"\n")
    odd = len(piece.translate(None, _ODD_LENGTH_BYTES)) < len(piece)
    # a control character, a tab or the like, a comment, a space that ends a line
    if not piece.isascii() or odd or piece.startswith(b"#") or b"\n#" in piece or b" \n" in piece:
        raise _Decline
    # ID, count, line break: three tokens a line
    tokens = piece.replace(b"\n", b" \n ").split(b" ")
    ids, counts = tokens[0:-1:3], tokens[1::3]
    shaped = len(tokens) == 3 * lines + 1 and tokens[2::3].count(b"\n") == lines
    # a count of 19 digits or more (an ID of as many digits is read by the reference), or
    # with a leading zero, which the digest drops
    if not shaped or not b"".join(counts).isdigit() or b"" in ids or (
            _NINETEEN_DIGITS in piece.translate(_DIGITS_AS_ZERO) or _LEADING_ZERO.search(piece)):
        raise _Decline
    digest.update(piece.replace(b" ", b"\t"))
    if wanted is not None:
        keep = list(map(wanted.__contains__, ids))
        if True not in keep:
            return 0
        ids, counts = list(compress(ids, keep)), compress(counts, keep)
    lengths.update(zip(map(bytes.decode, ids), map(int, counts)))
    return len(ids)


length_lines = fast_length_lines if FAST_PATHS else reference_length_lines


def lengths_from_json(obj, source):
    """{ranked ID: token count} of a JSON object {"d1": 300, ...}."""
    check_object(obj, source, "ranked IDs to token counts", None,
                 ("token counts", "the object is empty"))
    values = set(map(type, obj.values()))
    # a key that is no string (a library's dict): check_id words it
    with contextlib.suppress(TypeError):
        if (values == {int} and 0 <= min(obj.values()) and max(obj.values()) < INT_LIMIT
                and _plain_ids(list(obj), obj)):
            # every count an int in range, every ID printable: checked at once, in C
            return dict(obj)
    return {check_id(doc, source, what="ID"): check_count(count, loc(source, doc))
            for doc, count in obj.items()}


def record_scores(field, docids, scores, where, qid):
    """The scores of a record's scores list, parallel to its ranking's IDs (AutoRAG's
    retrieve_scores)."""
    name, values = field
    where = loc(where, name)
    if scores is not None:
        fail(where, "the ranking gives its scores already (an object of IDs to scores): leave out "
             "one of the two", qid)
    if not isinstance(values, list) or len(values) != len(docids):
        fail(where, "expected a list of %d scores, one per ranked ID, not %s"
             % (len(docids), show(values)), qid)
    return [check_score(value, "%s[%d]" % (where, i), qid) for i, value in enumerate(values)]


def record_lengths(field, docids, where, qid):
    """{ranked ID: token count} of a record's tokens list, parallel to its ranking's IDs; null for
    an item not counted (a log that counts only the chunks it sent: a budget must not weigh it)."""
    name, counts = field
    where = loc(where, name)
    if not isinstance(counts, list) or len(counts) != len(docids):
        fail(where, "expected a list of %d token counts (or nulls), one per ranked ID, not %s"
             % (len(docids), show(counts)), qid)
    lengths = {}
    for i, (doc, count) in enumerate(zip(docids, counts)):
        if count is not None:
            lengths.setdefault(doc, check_count(count, "%s[%d]" % (where, i), qid))
    return lengths


# --- Evidence sets: what a multi-hop question needs, all of it (README: "Evidence sets") ---

def evidence_entry(entry, where, qid, match="id"):
    """One query's evidence as sets of slots of IDs, from any of the three nestings: a list
    of IDs (one set, each ID a slot of its own), a list of slots (one set; a slot is filled
    by any of its IDs) or a list of sets of slots (alternatives; any one complete set serves).

    >>> evidence_entry(["d1", "d3"], "e", "q")
    ((('d1',), ('d3',)),)
    >>> evidence_entry([[["d1", "d2"], ["d3"]], [["d9"]]], "e", "q")
    ((('d1', 'd2'), ('d3',)), (('d9',),))
    """
    nesting = _nesting(entry)
    if not isinstance(entry, list) or nesting > 3:
        fail(where, "expected evidence as a list of IDs, of slots (lists of IDs) or of sets "
                    "(lists of slots), not %s" % typed(entry), qid)
    if not nesting:
        fail(where, "the evidence is empty: give at least one set of at least one ID", qid)
    sets = [(where, entry)] if nesting < 3 else _evidence_lists(entry, where, qid, "evidence set")
    if nesting == 1:
        nested = next((i for i, doc in enumerate(entry) if isinstance(doc, list)), None)
        if nested is not None:
            fail("%s[%d]" % (where, nested),
                 "mixed nesting: expected an ID like the first, not list %s"
                 % show(entry[nested]), qid)
        return (tuple((doc,) for doc in _checked(entry, where, qid, match)),)
    return tuple(tuple(tuple(_checked(slot, at, qid, match))
                       for at, slot in _evidence_lists(members, place_, qid, "slot"))
                 for place_, members in sets)


def _checked(ids, where, qid, match):
    """check_ids of evidence IDs, or of texts once normalized."""
    return check_ids(ids if match == "id" else normalized_texts(ids, where, qid), where, qid)


def _nesting(value):
    """How deep the first ID lies in nested lists (1: a list of IDs); 0 when there is none."""
    if not isinstance(value, list):
        return 0
    for item in value:
        if not isinstance(item, list):
            return 1
        inner = _nesting(item)
        if inner:
            return inner + 1
    return 0


def _evidence_lists(value, where, qid, what):
    """[(place, member)] of a list of lists (sets, or slots), none of them empty."""
    for i, member in enumerate(value):
        if not isinstance(member, list):
            fail("%s[%d]" % (where, i),
                 "mixed nesting: expected %s (a list) like the first, not %s"
                 % ("a slot" if what == "slot" else "an evidence set", typed(member)), qid)
        if not member:
            fail("%s[%d]" % (where, i), "the %s is empty" % what, qid)
    return [("%s[%d]" % (where, i), member) for i, member in enumerate(value)]


def evidence_from_json(obj, source, root, match):
    """{qid: evidence sets} of a JSON object {qid: evidence, ...} (see evidence_entry)."""
    check_object(obj, loc(source, root), "query IDs to evidence sets", None,
                 ("evidence", "the object holds no query"))
    return {check_id(qid, loc(source, root), what="query ID"):
            evidence_entry(entry, loc(source, _join(root, qid)), qid, match)
            for qid, entry in obj.items()}


def evidence_lines(stream, source, known):
    """{qid: evidence sets} of a text file's lines QID SET SLOT DOCID, sets and slots in the
    order they first appear; '#' lines are comments."""
    named = {}
    for number, where, (qid, set_name, slot_name, doc) in column_lines(stream, source,
                                                                       "QID SET SLOT DOCID"):
        slot = named.setdefault(qid, {}).setdefault(set_name, {}).setdefault(slot_name, {})
        if doc in slot:
            fail(where, "document %s is listed twice in one slot (first at line %d)"
                 % (show(doc), slot[doc]), qid)
        slot[doc] = number
    if not named:
        nothing_in(source, "evidence", "the file has no QID SET SLOT DOCID lines")
    return {qid: tuple(tuple(tuple(slot) for slot in slots.values()) for slots in sets.values())
            for qid, sets in named.items()}


def fold_evidence(evidence, separator, source=""):
    """Evidence sets with each ID cut at the separator, as labels are (see fold_labels).

    >>> fold_evidence({"q": ((("a#1", "a#2"), ("b#1",)),)}, "#")
    {'q': ((('a',), ('b',)),)}
    """
    if not separator:
        return evidence
    folded = {}
    for qid, sets in evidence.items():
        check_cut(evidence_labels(sets), separator, source, "evidence ID", qid)
        folded[qid] = tuple(tuple(tuple(dict.fromkeys(d.split(separator, 1)[0] for d in slot))
                                  for slot in s)
                            for s in sets)
    return folded


def evidence_labels_of(evidence):
    return {qid: evidence_labels(sets) for qid, sets in evidence.items()}


def check_evidence_wanted(specs, evidence, qrels, where, keys):
    """Refuse evidence measures without evidence sets (keys: the first record's, when the labels
    came from records), and evidence sets that do not name exactly the labeled queries."""
    wanted = [s.name for s in specs if s.measure.evidence]
    if wanted and evidence is None:
        raise EvalError("%s need%s evidence sets: --evidence FILE, a fixture's \"evidence\" or a "
                        "JSON Lines record's evidence field%s"
                        % (", ".join(wanted), "s" if len(wanted) == 1 else "",
                           _role_hint(keys, "evidence")))
    if evidence is None:
        return
    odd = next((q for q in chain(qrels, evidence) if bool(qrels.get(q)) != (q in evidence)), None)
    if odd is not None:  # an empty list of labels labels nothing
        fail(where, "the query has %s: the evidence sets name exactly the labeled queries"
             % ("labels but no evidence set" if qrels.get(odd) else "evidence sets but no labels"),
             odd)


def check_inputs_used(specs, lengths, evidence, labels_given, flag):
    """Refuse token counts that no budget weighs, and evidence sets that no measure reads when
    labels are given besides (without them, evidence sets stand in for the labels): an input
    read and then used by nothing is a mistake (flag: "--" names options, "" keywords)."""
    if lengths is not None and not any(s.filter and s.filter.tokens is not None for s in specs):
        raise EvalError("%slengths gives token counts, and no measure has a token budget: add "
                        "tokens=B to a measure, as in R(tokens=2000)@10" % flag)
    # AutoRAG's measures read the sets as their ground-truth groups
    read = [s for s in specs if s.measure.evidence or "groups" in tool_words(s)]
    if evidence is not None and labels_given and not read:
        raise EvalError("%sevidence gives evidence sets, and no measure reads them beside "
                        "the labels: add %s, or leave the labels out to let the evidence "
                        "stand in for them"
                        % (flag, " or ".join(m.name for m in MEASURES.values() if m.evidence)))


# --- Questions with no answer in the corpus (README: "Score floors and questions with no answer")
# ---

# The lists of IDs a file may hold: of each, what an ID is, what the list holds, and what an
# empty JSON list and a file of no ID lines are.
ID_LISTS = {"query": ("query ID", "queries", "the list of questions without an answer is empty",
                      "the file has no query IDs"),
            "document": ("document ID", "documents", "the index is empty",
                         "the file has no document IDs")}


def ids_from_json(value, source, root, what):
    """[ID, ...] of a JSON list of IDs (what: of ID_LISTS), none twice."""
    where, (name, many, empty, _) = loc(source, root), ID_LISTS[what]
    if not isinstance(value, list):
        fail(where, "expected a list of %ss, not %s" % (name, typed(value)))
    if not value:
        nothing_in(where, many, empty)
    first = {}
    for i, qid in enumerate(value):
        at = loc(source, "%s[%d]" % (root, i))
        check_id(qid, at, what=name)
        if first.setdefault(qid, i) != i:
            fail(at, "%s %s is listed twice (first at [%d])" % (what, show(qid), first[qid]))
    return list(value)


def check_no_answer(no_answer, qrels, level, where):
    """Refuse a query without an answer that holds a relevant label."""
    least = least_relevant(level)
    for qid in no_answer:
        relevant = next((d for d, g in qrels.get(qid, {}).items() if g >= least), None)
        if relevant is not None:
            fail(where, "the query has no answer in the corpus, and %s is labeled "
                        "relevant: which is it?"
                 % show(relevant), qid)


def id_lines(stream, source, what):
    """[ID, ...] of a text file's lines, an ID (what: of ID_LISTS) a line, none twice; '#' lines
    are comments."""
    qids, (_, many, _, empty) = {}, ID_LISTS[what]
    for number, where, (qid,) in column_lines(stream, source,
                                              "QID" if what == "query" else "DOCID"):
        if qids.setdefault(qid, number) != number:
            fail(where, "%s %s is listed twice (first on line %d)" % (what, show(qid), qids[qid]))
    if not qids:
        nothing_in(source, many, empty)
    return list(qids)


# --- Who may read what (--access; README: "Who may read it?") ---

ACCESS_KEYS = {"doc": "documents", "query": "queries"}


def access_lines(stream, source, known):
    """The Access of lines doc ID PRINCIPAL... and query ID PRINCIPAL...; '#' lines are
    comments."""
    found = {}
    for number, line in text_lines(stream, source):
        kind, *rest = split_columns(line) or "#"
        if kind.startswith("#"):
            continue
        where = "%s:%d" % (source, number)
        if len(rest) < 2 or kind not in ACCESS_KEYS:
            fail(where, "expected doc ID PRINCIPAL... or query ID PRINCIPAL..., found %s"
                 % show(line.strip(ASCII_SPACE)))
        members = found.setdefault(ACCESS_KEYS[kind], {})
        if rest[0] in members:
            fail(where, "%s %s is given twice" % (kind, show(rest[0])))
        members[rest[0]] = rest[1:]
    return access_from_json(found, source)


def access_from_json(obj, source, known=None):
    """The Access of a JSON object {"documents": {ID: [principal, ...]}, "queries": {...}}."""
    check_object(obj, source, "documents and queries", None,
                 ("documents or queries", "nothing says who may read what"))
    found = {"documents": {}, "queries": {}}
    for key, members in obj.items():
        where = loc(source, key)
        if key not in found:
            fail(where, 'unknown key: the keys are "documents" and "queries"')
        for name, principals in check_object(members, where, "IDs to principals").items():
            at = loc(source, _join(key, name))
            check_id(name, at, what="ID")
            if not isinstance(principals, list) or not principals:
                fail(at, "expected a non-empty list of principals, not %s" % show(principals))
            found[key][name] = frozenset(check_id(p, "%s[%d]" % (at, i), what="principal")
                                         for i, p in enumerate(principals))
    return Access(**found, source=source)


# How each role's file is read, by what it is: its lines (None: read as JSON, which refuses them),
# its JSON Lines or JSON records (None: read as JSON, which refuses them), and its JSON text. What
# a reader is given beside its file: the Truth known so far, the Reading, and for a lengths file
# the IDs whose counts are wanted.
Known = namedtuple("Known", "truth opts wanted", defaults=(Truth(None), Reading(), None))


class Value(str):
    """A library call's JSON-shaped input where the command line has a file name: the name its
    messages give it ("qrels", "runs.a"), which is the string itself, and the value (obj)."""
    def __new__(cls, name, obj):
        value = super().__new__(cls, name)
        value.obj = obj
        return value


def load(path, role, known=Known(), kinds=None):
    """What a file, or a library call's Value, gives for a role: what its reader in READERS
    reads of it (see read_input), cut at the chunk separator (see Role.fold)."""
    reader = READERS[role]
    return reader.fold(read_input(path, reader, known, kinds), known.opts.separator, place(path))


def read_input(path, reader, known, kinds):
    """What a reader (a Role) reads of a file, by the kind of file sniff finds, or of a library
    call's Value; kinds, a list, gets the file's kind."""
    source = place(path)
    if isinstance(path, Value):
        return reader.value(path.obj, source, known)
    with open_input(path) as stream:
        kind = sniff(stream, source)
        if kinds is not None:
            kinds.append(kind)
        if kind == "text" and reader.lines:
            return reader.lines(stream, source, known)
        if kind == "json lines" and reader.records:
            return reader.records(json_line_objects(_read_lines(stream, source), source), source,
                                  known)
        text = read_json_text(stream, source)
    # a role without a JSON reader of its own reads its JSON value as a library call's
    if reader.json is None:
        return reader.value(parse_json(text, source), source, known)
    return reader.json(text, source, known)


def check_fields_read(fields, kinds):
    """Refuse --fields (a table, or None) when every file read (kinds: what each is) is text,
    where it would change nothing."""
    if fields is not None and set(kinds) == {"text"}:
        raise EvalError("--fields names the fields of JSON records, and every input is text (TREC "
                        "or TSV): it would change nothing; leave it out")


class Role:
    """The reader of a role's inputs: a function for each kind of file sniff tells apart, each
    of one signature (a text stream, JSON Lines records or JSON text; the file's place; Known),
    None where that kind is read as JSON, which says what is wrong with it; and value, which
    reads a library call's JSON-shaped value (the value; the name its messages give it; Known)
    into what the file's reader returns; fold cuts the IDs of what was read at the chunk separator
    (what was read, the separator, the input's place), as labels are (see fold_labels).  A role
    whose json is None reads its JSON text's value as value does."""
    lines = records = json = None

    def fold(read, separator, source):
        return read


def merged_labels(files):
    """The labels of several files [(place, {qid: {doc: grade}})], merged; a (query, document)
    labeled in two of them is refused, naming both."""
    if len(files) == 1:
        return files[0][1]
    merged, first = {}, {}
    for where, labels in files:
        for qid, grades in labels.items():
            for doc, grade in grades.items():
                if doc in merged.setdefault(qid, {}):
                    fail(where, "document %s is labeled in %s already: label it once"
                         % (show(doc), first[qid, doc]), qid)
                merged[qid][doc], first[qid, doc] = grade, where
    return merged


class Labels(Role):
    """({qid: {doc: grade}}, {"evidence": ..., "no_answer": ..., "keys": ...} as far as records
    or a fixture give them)."""
    def lines(stream, source, known):
        return read_trec_qrels(stream, source), {}

    def records(records, source, known):
        """Of the records (place, record, where) that hold labels, evidence sets (which stand in
        for missing labels) or say that their question has no answer."""
        # folded by load, file-wide
        qrels, _, extras = records_rankings(records, source,
                                            Truth(None, no_answer=known.truth.no_answer),
                                            known.opts._replace(separator=None), rankings=False)
        return qrels, extras

    def json(text, source, known):
        """Records, a fixture (or part of one), LlamaIndex's dataset or labels {qid: labels}."""
        opts = known.opts
        (kind, obj), extras = json_value(text, source, opts.fields), {}
        if kind == "records":
            return Labels.records(records_in(obj, source), source, known)
        if kind == "fixture":
            labels, root = fixture_part(obj, "qrels", source)
            if "evidence" in obj:
                extras["evidence"] = evidence_from_json(obj["evidence"], source, "evidence",
                                                        opts.match)
            if "no_answer" in obj:
                extras["no_answer"] = ids_from_json(obj["no_answer"], source, "no_answer",
                                                    "query")
        elif kind == "llamaindex":
            # the questions' texts are not needed
            labels, root = obj["relevant_docs"], "relevant_docs"
        else:
            labels, root = obj, ""
        return qrels_from_json(labels, source, root, opts.match), extras

    def value(obj, name, known):
        """Labels {qid: labels}, or a list of them, each folded, then merged."""
        if not isinstance(obj, list):
            return qrels_from_json(obj, None, name, known.opts.match), {}
        parts = [Value("%s[%d]" % (name, i), one) for i, one in enumerate(obj)]
        return merged_labels([(part, load(part, "labels", known)[0]) for part in parts]), {}

    def fold(read, separator, source):
        labels, extras = read
        if "evidence" in extras:
            extras["evidence"] = fold_evidence(extras["evidence"], separator, source)
        return fold_labels(labels, separator, source), extras


class Run(Role):
    """(Its own labels or None, {qid: Ranking or None}, extras) of a run, or of a FIXTURE
    (Fixture)."""
    def lines(stream, source, known):
        return None, judged_trec_run(stream, source, known.truth, known.opts), {}

    def records(records, source, known):
        return records_rankings(records, source, known.truth, known.opts)

    def json(text, source, known):
        return json_rankings(text, source, known.truth, known.opts)

    def value(obj, name, known):
        """{qid: [doc, ...]} or {qid: {doc: score}}; a saved result stands for a baseline's run."""
        if is_saved(obj):
            return None, Saved(obj, name), {}
        return None, judge_run(rankings_from_json(obj, None, name, known.opts.duplicates,
                                                  known.opts.match), known.truth, known.opts,
                               None, name), {}


class Fixture(Run):
    lines = None


class RunForms(Role):
    """read_run's rankings in the JSON forms: {qid: {doc: score}} or {qid: [doc, ...]}."""
    def lines(stream, source, known):
        return _json_forms(read_trec_run(stream, source))

    def records(records, source, known):
        return _json_forms({qid: record_ranking(found, where, qid, None, known.opts.match)
                            for where, qid, found in json_records(list(records), known.opts.fields)
                            if "retrieved" in found})

    def json(text, source, known):
        kind, obj = json_value(text, source, known.opts.fields)
        if kind == "records":
            return RunForms.records(records_in(obj, source), source, known)
        obj, root = fixture_part(obj, "runs", source) if kind == "fixture" else (obj, "")
        return _json_forms(rankings_from_json(obj, source, root, None, known.opts.match))


def _json_forms(rankings):
    return {qid: docids if scores is None else dict(zip(docids, scores))
            for qid, (docids, scores) in rankings.items()}


class Evidence(Role):
    """{qid: evidence sets}, folded as labels are."""
    lines = evidence_lines

    def records(records, source, known):
        opts = known.opts
        evidence = {qid: evidence_entry(found["evidence"][1], loc(where, found["evidence"][0]),
                                        qid, opts.match)
                    for where, qid, found in json_records(records, opts.fields)
                    if "evidence" in found}
        if not evidence:
            nothing_in(source, "evidence",
                       "no record has " + " or ".join((opts.fields or JSONL_FIELDS)["evidence"]))
        return evidence

    def json(text, source, known):
        kind, obj = json_value(text, source, known.opts.fields)
        if kind == "records":
            return Evidence.records(records_in(obj, source), source, known)
        if kind == "fixture" and "evidence" not in obj:
            fail(source, 'a fixture without "evidence": give a file of evidence sets')
        # a fixture's
        inside = isinstance(obj, dict) and isinstance(obj.get("evidence"), dict)
        return evidence_from_json(obj["evidence"] if inside else obj, source,
                                  "evidence" if inside else "", known.opts.match)

    def value(obj, name, known):
        return evidence_from_json(obj, None, name, known.opts.match)

    fold = fold_evidence


class Lengths(Role):
    """({ranked ID: token count} of the IDs wanted, or of all in JSON, the digest of every
    count)."""
    def lines(stream, source, known):
        return length_lines(stream, source, known.wanted)

    def value(obj, name, known):
        lengths = lengths_from_json(obj, name)
        return lengths, lengths_digest(lengths)


class NoAnswer(Role):
    """[qid, ...] of the questions without an answer."""
    def lines(stream, source, known):
        return id_lines(stream, source, "query")

    def json(text, source, known):
        obj = parse_json(text, source)
        inside = isinstance(obj, dict) and "no_answer" in obj
        return ids_from_json(obj["no_answer"] if inside else obj, source,
                             "no_answer" if inside else "", "query")

    def value(obj, name, known):
        return ids_from_json(obj, None, name, "query")


class Index(Role):
    """{ID: None} of the IDs the store holds (in a dict: a set's order would differ from run to
    run)."""
    def lines(stream, source, known):
        return dict.fromkeys(id_lines(stream, source, "document"))

    def value(obj, name, known):
        return dict.fromkeys(ids_from_json(obj, name, "", "document"))


class Groups(Role):
    """{group: [qid, ...]}."""
    def lines(stream, source, known):
        return groups_from_lines(stream, source)

    def json(text, source, known):
        kind, obj = json_value(text, source)
        if kind == "fixture":
            if "groups" not in obj:
                fail(source, 'a fixture without "groups": give a file of groups')
            return groups_from_json(obj["groups"], source, "groups")
        return groups_from_json(obj, source, "")

    def value(obj, name, known):
        return groups_from_json(obj, None, name)


class Clusters(Role):
    """{cluster: [qid, ...]}."""
    def lines(stream, source, known):
        return groups_from_lines(stream, source, "cluster")

    def json(text, source, known):
        return groups_from_json(json_value(text, source)[1], source, "", "cluster")

    def value(obj, name, known):
        return groups_from_json(obj, None, name, "cluster")


class AccessMap(Role):
    """An Access.  It names documents: under --chunk-separator each chunk is checked by its
    document, and a chunk's own ID in the map is never looked up."""
    lines, value = access_lines, access_from_json


READERS = {"labels": Labels, "fixture": Fixture, "run": Run, "run forms": RunForms,
           "evidence": Evidence, "lengths": Lengths, "no_answer": NoAnswer, "groups": Groups,
           "clusters": Clusters, "access": AccessMap, "index": Index}


def load_run(path, truth, opts=Reading(), approved=None, kinds=None):
    """{qid: Ranking or None} from a TREC run, a JSON run, a fixture's runs (or part of a
    fixture), JSON Lines or an array of records.

    approved: ("the baseline's" or "the replicate's", {"labels": place, "evidence": place}
    of the candidate's): a fixture's or a log's own labels, and evidence sets, must equal
    those the candidate is judged by (``truth``).
    """
    source = place(path)
    theirs, ranked, extras = load(path, "run", Known(truth, opts), kinds)
    whose, ours = approved or (None, {})
    # we have no labels (agreement only): none to equal
    if not ours.get("labels"):
        return ranked
    if "evidence" in extras and truth.evidence is not None:
        check_same_labels(extras["evidence"], truth.evidence, "%s: evidence" % source, whose,
                          "evidence sets", ours["evidence"])
    if theirs is not None:
        check_same_labels(theirs, truth.labels, "%s: qrels" % source, whose,
                          ours_at=ours["labels"])
    elif "evidence" in extras:  # standing in for its labels
        check_same_labels(evidence_labels_of(extras["evidence"]), truth.labels,
                          "%s: evidence" % source, whose, "labels (its evidence sets)",
                          ours["labels"])
    return ranked


# === Pipeline ===

# What one evaluation asks for: its Config, and what make_plan derives of it: the measures'
# specs, how rankings are read (Reading), the query policies, whether curves are drawn (for
# --plot), the clusters {qid: cluster} once their file is read (else None), and the gates'
# limits {gate: {measure: X}}, of every gate in GATES (see gate_limits); renamed: {another
# tool's name in -m: our measure's} (see other_tools_spec).
Plan = namedtuple("Plan", "config specs opts policies curves clusters gates alone renamed",
                  defaults=(None, NOTHING, (), NOTHING))


def weigh_later(maps, opts, path):
    """Weigh the items that wait in the rankings ({qid: Ranking or None}, each filled in place)
    with the counts of the lengths file: it is read once every ranking is, and keeps the
    counts of those items only (a dictionary of every count would cost more than the run).
    Return the digest of every count in the file (see lengths_digest)."""
    waiting = [(ranked, qid) for ranked in maps for qid, r in ranked.items()
               if r is not None and r.pending]
    wanted = {item[1] for ranked, qid in waiting
              for items in ranked[qid].pending[1].values() for item in items}
    lengths, digest = load(path, "lengths", Known(wanted=wanted))
    for ranked, qid in waiting:
        (query, pending), judged = ranked[qid].pending, ranked[qid].judged
        filtered = dict(judged.filtered)
        for ranking_filter, items in pending.items():
            kept = within_budget(items, ranking_filter, lengths, opts, query)
            mine = query._replace(listed=bool(items) and items[0][0] is None)  # as its items say
            filtered[ranking_filter] = budget_judged(judged, kept, ranking_filter, opts, mine)
            if opts.top_k:
                documents = _documents_in(kept, query.labels, opts)
                ranked[qid] = with_kept(ranked[qid], {ranking_filter: documents})
        ranked[qid] = ranked[qid]._replace(judged=judged._replace(filtered=filtered), pending=None)
    return digest


def _measure_names(measures):
    """A library call's measures as a list of names, or None."""
    names = [measures] if isinstance(measures, str) else measures
    if not (names is None or isinstance(names, (list, tuple))) or any(
            not isinstance(m, str) for m in names or ()):
        raise EvalError("measures must be names such as 'R@10', or a list "
                        "of them, not %s" % show(measures))
    if measures is not None and not measures:  # as -m '' is
        raise EvalError("unknown measure ''; give names such as 'R@10', or None for R@3 and RR@3")
    return names and list(names)


def _checked_library_options(options):
    """The options of a library call, refused when the command line's parser could not have
    produced them (see OPTIONS), and converted as it converts them."""
    checked = dict(options)
    for name, value in options.items():
        option = OPTION[name]
        kind = option.kind
        if kind == "count":
            checked[name] = number = _integral(value)
            ok = number is not None and number >= option.values
            rule = "an integer >= %d" % option.values
        elif kind == "cutoff":
            ok, checked[name] = True, value if value is None else check_cutoff(value)
        elif kind == "limit" and not isinstance(value, dict):
            checked[name] = number = value if value is None else _real(value)
            ok, rule = value is None or number is not None and number >= 0, "a number >= 0"
        elif kind == "choice":
            ok, rule = value in option.values, "one of " + ", ".join(option.values)
        elif kind == "flag":
            ok, rule = isinstance(value, bool), "True or False"
        # each a float (JSON has no numpy number, no Fraction); a drop limit's >= 0
        elif kind in ("floors", "limit"):
            floats = {n: _real(x) for n, x in value.items()} if isinstance(value, dict) else {}
            least = 0 if kind == "limit" else -math.inf
            checked[name] = value and floats
            ok = value is None or isinstance(value, dict) and all(
                isinstance(n, str) and x is not None and x >= least for n, x in floats.items())
            rule = "{measure: number%s}, as {\"R@5\": 0.8}" % (" >= 0" if least == 0 else "")
        else:  # text
            ok, rule = value is None or isinstance(value, str), "a string"
        if not ok:
            raise EvalError("%s must be %s, not %s" % (name, rule, show(value)))
    return checked


def _real(value):
    """A real number (but bool) as a float, or None when it is none, or not finite."""
    try:
        real = isinstance(value, numbers.Real) and not isinstance(value, bool)
        number = float(value) if real else math.nan
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def configure(values, *, keywords=False):
    """The Config of option values by name: the parsed command line's, or with keywords a library
    call's (measures and replicates under their keywords' names), each value refused when the
    command line's parser could not have produced it, and converted as it converts it."""
    if not keywords:
        fields = values["fields"] and merged_fields(
            pair for named in values["fields"] for pair in named.items())
        floors = {o.name: values[o.name] and [pair for given in values[o.name] for pair in given]
                  for o in OPTIONS if o.kind == "floors"}
        return Config(**dict(values, fields=fields, **floors))
    values = dict(values, measure=_measure_names(values["measures"]),
                  replicate=values.get("replicates"),
                  stage=_stage_pairs(values.get("stages"), "stages"),
                  baseline_stage=_stage_pairs(values.get("baseline_stages"), "baseline_stages"))
    as_given = [o.name for o in OPTIONS if o.stage == "input"] + ["measure"]
    options = {n: v for n, v in values.items() if n in Config._fields and n not in as_given}
    given = {n: values[n] for n in as_given if n in values}
    return Config(**_checked_library_options(options), **given)


def _stage_pairs(stages, keyword):
    """A library call's stages {name: run} as the command line's (name, run) pairs, or None."""
    if stages is None:
        return None
    return list(check_object(stages, keyword, "stage names to runs").items())


def wants_runid(config):
    """Whether --format trec is to print trec_eval's runid line, the run's tag: -m runid."""
    names = {n.strip() for group in config.measure or () for n in split_names(group, NAME_BREAKS)}
    if names == {"runid"} and config.format == "trec" and not config.k:  # no seed's R@3, RR@3
        raise EvalError("-m runid adds the run's tag to --format trec's measures: name some too "
                        "(-m runid,AP), or for the tag alone trec_eval's form: -m runid QRELS RUN")
    return config.format == "trec" and "runid" in names


def make_plan(config):
    """The Plan of a checked Config: its measures (none: R@k, RR@k at each --k, 3), options."""
    runid = wants_runid(config)  # a line of --format trec, not a measure
    renamed = {}
    names = [n for group in config.measure or [] for n in split_names(group, NAME_BREAKS)
             if not (runid and n.strip() == "runid")]
    if config.as_tool is not None:
        specs = tool_specs(*parse_tool(config.as_tool), names)
    else:
        specs = parse_measures(names, renamed)
    texts = [s.name for s in specs if s.measure.aggregate == "text"]
    if texts and config.format != "trec":
        raise EvalError("%s is no number, so it has no mean: --format trec "
                        "prints it per query" % texts[0])
    if config.k or not specs:
        specs = list(dict.fromkeys(specs + [s for cut in (config.k or [DEFAULT_K])
                                            for s in seed_specs(cut)]))
    asked = set(specs)
    gates, specs = gate_limits(config, specs, renamed)
    agreeing = [s for s in specs if agrees(s)]
    check_agreement(config, agreeing, specs)
    check_access(config, specs)
    gain_orders = ()
    if config.ties:
        gain_orders = tuple(dict.fromkeys(s.gains for s in specs if s.gains is not None))
    curves = config.plot is not None
    filters = filter_reaches(specs, curves)
    top_k, listed = seen_reach(config, specs)
    opts = Reading(config.relevance_level, config.depth, config.chunk_separator, config.ties,
                   config.judged_only, fields_table(config.fields or {}, config.stage),
                   config.duplicates, gain_orders, filters, match=config.match, top_k=top_k,
                   abstain=frozenset(s.filter for s in specs
                                     if not answers(s) and s.filter is not None), listed=listed,
                   views=tool_reading(specs),
                   agree=max(map(agreement_reach, agreeing)) if agreeing else None)
    return Plan(config, specs, opts, {name: getattr(config, name) for name in POLICIES}, curves,
                gates=gates, alone={s.name for s in specs if s not in asked}, renamed=renamed)


def filter_reaches(specs, curves):
    """{Filter: how far its ranking is read: the largest cutoff of its measures (a budget weighs
    no item past it; a plot, with curves, draws up to its top k), None for the whole ranking}."""
    filters = {}
    # a stage's ranking is read whole, not filtered
    for spec in (s for s in specs if s.filter is not None and s.filter.stage is None):
        reach = filters.get(spec.filter, 0)
        filters[spec.filter] = None if reach is None or spec.k is None else max(reach, spec.k)
    top = curves and max((s.k for s in curve_specs(specs).values()), default=0)
    return {f: reach and max(reach, top) for f, reach in filters.items()}


def seen_reach(config, specs):
    """(top_k, listed) of the Reading: the K within which each Ranking keeps the labeled
    documents' ranks, for --explain, --pool and a pipeline's fates (see fates), and whether it
    lists the top K's documents too (--judged-only leaves no unlabeled one to list)."""
    listed = config.explain or config.pool is not None
    # --baseline-qrels lists the label changes in either run's top k
    kept = listed or config.stage or config.index is not None or config.baseline_qrels
    top_k = kept and coverage_cutoff(specs)
    return top_k, listed and not config.judged_only


def gate_limits(config, specs, renamed=None):
    """({gate: {measure: limit}} of every gate in GATES, the specs with the measures floors add):
    a plain limit holds for every measure; a floor, or a limit per measure, for the measure it
    names (see check_limit); renamed: as parse_measures fills it."""
    gates = {}
    # the floors first: a floor measures what it names, asked for or not
    for name, gate in GATES.items():
        given, gates[name] = getattr(config, name), {}
        if isinstance(given, float):
            gates[name] = dict.fromkeys((s.name for s in specs), given)
            continue
        for text, limit in given.items() if isinstance(given, dict) else given or ():
            spec = named_spec(text, specs, renamed)
            check_limit(spec, gate, gates[name], specs, config.gate_on)
            gates[name][spec.name], specs = limit, list(dict.fromkeys(specs + [spec]))
    return gates, specs


def named_spec(text, specs, renamed):
    """The Spec a gate's measure names: another tool's measure by its name (--as), else ours
    (renamed: see parse_measures)."""
    tools = {s.name.lower(): s for s in specs if tool_row(s)}
    return tools.get(text.strip().lower()) or parse_measures([text], renamed)[0]


def check_limit(spec, gate, limits, specs, gate_on):
    """Refuse a second floor or limit of a Gate for a measure, a limit for one not
    measured (specs), and a floor on a text, which is no number, or on a sum's or a geometric
    mean's mean read by an interval (--gate-on), which only arithmetic means have."""
    aggregate = spec.measure.aggregate
    if spec.name in limits:
        raise EvalError("%s gives %s twice: give each measure one %s"
                        % (gate.flag, spec.name, "limit" if gate.needs else "floor"))
    if gate.needs and spec not in specs:
        raise EvalError("%s gives a limit for %s, which is not measured: add it to -m"
                        % (gate.flag, spec.name))
    if gate.needs:
        return
    if aggregate == "text":
        raise EvalError("%s is no number: it has no floor" % spec.name)
    if aggregate != "mean" and gate_on not in READ_MEAN and gate.scope == "mean":
        raise EvalError("--gate-on %s reads the 95%% interval of a mean, and %s is a %s, which has"
                        " none: floor it under --gate-on mean"
                        % (gate_on, spec.name, aggregate_word(spec.name)))


def aggregate_word(name):
    """What a measure's value over the queries is: 'sum' (a count's), 'geometric mean', 'mean'."""
    return parse_measures([name])[0].measure.aggregate.replace("geometric", "geometric mean")


def check_agreement(config, agreeing, specs):
    """Refuse agreement measures without a baseline or with replicates, and, when they are all
    the measures, an option that reads labels: it would have no effect."""
    if agreeing and (config.baseline is None or config.replicate):
        raise EvalError("%s compares each ranking with the baseline's: %s" % (agreeing[0].name, (
            "give --baseline (a run: an exact search's gives ANN recall)"
            if config.baseline is None else
            "the noise --replicate measures is that of the label measures: compare without it")))
    unread = [n for n in ("no_answer relevance_level judged_only unlabeled no_relevant "
                          "empty_labels explain access stage index").split()
              if getattr(config, n) != OPTION[n].default]
    if agreeing == specs and unread:  # nothing reads labels
        raise EvalError("%s acts on labels, and agreement measures read none: drop it, or add a "
                        "label measure" % long_flag(unread[0]))


def check_access(config, specs):
    """Refuse Leak without --access, and --access where ranked entries are texts, which the map
    does not name (--match text or contains)."""
    if config.access is None and any(s.base == "Leak" for s in specs):
        raise EvalError("Leak counts the documents a query may not read: give --access FILE, who "
                        "may read each document")
    if config.access is not None and config.match != "id":
        raise EvalError("--access names documents by ID, and --match %s ranks texts: give one of "
                        "them" % config.match)


def gates_given(config):
    """The gates a Config gives a limit of (a floor of no measure, {}, is none)."""
    return [gate for name, gate in GATES.items() if getattr(config, name) not in (None, {})]


def said(gates, needs=True):
    """The flags of these gates that need a baseline (needs False: of the floors) as a sentence
    names them: '--max-mean-drop, --max-query-drop or --max-group-drop'."""
    flags = [gate.flag for gate in gates if bool(gate.needs) == needs]
    return " or ".join(filter(None, [", ".join(flags[:-1]), flags[-1]]))


def check_as_tool(config):
    """Refuse, beside --as, the options the other tools have no counterpart of: they score the
    IDs ranked, whole, without trec_eval's form of output."""
    unread = [name for name in ("k", "chunk_separator", "match", "judged_only", "stage", "ties",
                                "unjudged_bounds", "duplicates", "relevance_level")
              if getattr(config, name) != OPTION[name].default]
    # a query scored 0 is one each tool leaves out or scores 0 (see AsRow); one skipped is not
    unread += [name for name in ("missing_run", "no_relevant") if getattr(config, name) == "skip"]
    if config.format == "trec":
        unread.append("format trec")
    if config.as_tool is not None and unread:
        raise EvalError("--as %s scores the IDs ranked as that tool does, and %s has no "
                        "counterpart there: leave it out, or score ours without --as"
                        % (config.as_tool, long_flag(unread[0])))


# what --candidate-qrels without --run reads: the labels, and how to read and report them
LABELS_ONLY = ("qrels candidate_qrels run fields match chunk_separator format per_query "
               "summary pool").split()


def check_label_files(config, gates):
    """Refuse --candidate-qrels and --baseline-qrels without the labels they compare with, or
    together, or with what they leave unread or unshown; and --gate-on retrieval without a
    change between label versions to split, or with what it does not split (gates: given)."""
    given = [name for name in ("candidate_qrels", "baseline_qrels") if getattr(config, name)]
    flag = given and long_flag(given[0])
    if given and config.qrels is None:
        raise EvalError("%s compares labels with --qrels, the reference: give it (a fixture "
                        "serves as --qrels and as --run)" % flag)
    if len(given) > 1:
        raise EvalError("--candidate-qrels tests other labels of one version, and --baseline-"
                        "qrels splits a change between two versions: give one")
    if config.baseline_qrels and config.baseline is None:
        raise EvalError("--baseline-qrels are the labels the baseline was approved on: give "
                        "--baseline, its run")
    if given and config.format in ("trec", "latex"):
        raise EvalError("--format %s has no place for what %s says: use json, table, markdown "
                        "or csv" % (config.format, flag))
    unread = [o.name for o in OPTIONS if o.name not in LABELS_ONLY
              and getattr(config, o.name) != o.default]
    if config.candidate_qrels and not config.run and unread:
        raise EvalError("%s acts on runs, and --candidate-qrels without --run compares the "
                        "labels alone: give --run, or leave it out" % long_flag(unread[0]))
    if config.gate_on == "retrieval":
        check_retrieval_gate(config, gates)


def check_retrieval_gate(config, gates):
    """Refuse --gate-on retrieval without --baseline-qrels or a drop gate, and with what it does
    not split: a group's mean, the replicates' noise."""
    if not config.baseline_qrels:
        raise EvalError("--gate-on retrieval reads the retrieval part of a change between label "
                        "versions: give --baseline-qrels, the labels the baseline was approved "
                        "on")
    if not any(gate.needs == "baseline" for gate in gates):
        raise EvalError("--gate-on retrieval says what a drop gate reads: give --max-mean-drop "
                        "or --max-query-drop")
    unsplit = [n for n in ("max_group_drop", "replicate") if getattr(config, n)]
    if unsplit:
        raise EvalError("--gate-on retrieval splits the change of each mean and query, and %s "
                        "reads what it does not split: leave one out" % long_flag(unsplit[0]))


def check_options(config):
    """Refuse options whose effect would be silently lost."""
    given = gates_given(config)
    for gate in given:
        if gate.needs and config.baseline is None:
            raise EvalError("%s needs --baseline: a gate compares against an approved run"
                            % gate.flag)
    if config.replicate and config.baseline is None:
        raise EvalError("--replicate needs --baseline: a replicate is another run of the "
                        "approved configuration")
    means = [gate for gate in GATES.values() if gate.scope == "mean"]
    if config.gate_on not in READ_MEAN and not set(means) & set(given):
        raise EvalError("--gate-on %s needs %s, or %s: it says how a mean gate reads the change, "
                        "or a floor the mean" % (config.gate_on, said(means), said(means, False)))
    if config.format == "trec" and (config.baseline is not None or config.explain):
        raise EvalError("--format trec has no place for %s: use json, table, markdown or csv"
                        % ("a comparison" if config.baseline is not None else "--explain"))
    # csv and json have a row per query of every run
    reports = config.per_query and config.format in ("table", "markdown")
    if len(config.run or ()) > 1 and (config.format == "trec" or reports):
        flag = "--format trec" if config.format == "trec" else "--per-query"
        raise EvalError("%s holds one run: for several, --format csv has a row per query, json "
                        "each run's per_query" % flag)
    if config.chunk_separator == "":
        raise EvalError("--chunk-separator needs a non-empty separator")
    check_as_tool(config)
    check_label_files(config, given)
    pipeline = config.stage or config.index is not None
    if pipeline and config.fixture is not None:
        raise EvalError("--stage and --index go with --qrels and --run, the last stage: give the "
                        "fixture's runs as --run files")
    if pipeline and config.qrels is None and config.evidence is None:
        raise EvalError("--stage and --index follow the relevant documents through the pipeline: "
                        "give the labels (--qrels)")
    if config.baseline_stage and config.baseline is None:
        raise EvalError("--baseline-stage needs --baseline: it is a stage of the baseline's "
                        "pipeline")
    if config.chunk_separator and config.match != "id":
        raise EvalError("--chunk-separator cuts IDs, and --match %s compares texts: "
                        "give one of them" % config.match)


# The approved side of a comparison: the baseline's rankings, its place, its replicates
# [(rankings, name), ...], and a list that holds, once the first run is compared, their
# evaluation (the baseline's Evaluated, the replicates', their noise): judged with the first
# run, where its errors come up as they always did, and kept for the next; the earlier stages of
# its pipeline [Stage, ...].
Approved = namedtuple("Approved", "ranked place replicates kept stages", defaults=((),))

# What a comparison keeps of an approved run (the baseline, or a replicate), judged as every run
# is: its rankings ({} when saved), judged queries (None when saved), skips, zeros, result, the
# repeats --duplicates first removed (or None), what its label coverage is read from (the
# judged queries, or a saved result's share), and a saved result's manifest (else None).
Evaluated = namedtuple("Evaluated", "ranked judged skipped zeroed result deduplicated "
                                    "coverage saved",
                       defaults=(None,))


# What is read of the inputs: the Truth, the runs [(run name, {qid: Ranking or None}, (the labels'
# place, the run's)), ...], the Approved baseline or None, the groups {name: [qid, ...]} or None,
# and the earlier stages of the pipeline [Stage, ...], earliest first (README: "Where was it
# lost?"; the index is the Truth's).
Inputs = namedtuple("Inputs", "truth runs baseline groups stages")

# An earlier stage of the pipeline: its name, its file's place, and {qid: Ranking or None}.
Stage = namedtuple("Stage", "name place ranked")


# How a refusal names a saved result and the options that take one: on the command line
# (flag "--"), and in a library call (flag "": its keywords).
SAVED_RESULT = {"--": ("a result this tool saved", "--baseline or --replicate"),
                "": ("a saved result", "baseline or replicates")}


def load_inputs(plan, seed_mode=False, flag="--"):
    """The Inputs of the files (or a library call's Values) the plan's Config names: what is
    true of the queries first (load_truth), then each run, reduced to its judged ranks as it is
    read; flag: see load_truth.  In seed mode a fixture's "groups" and "no_answer" are ignored,
    as the seed script ignored every other key."""
    config, kinds = plan.config, []  # kinds: of the files --fields could name fields of
    fixture, groups, baseline = config.fixture, config.groups, config.baseline
    truth, opts, loaded, extras, where = load_truth(plan, seed_mode, kinds, flag)
    inline = None
    if "groups" in extras and not seed_mode:
        inline = groups_from_json(extras["groups"], place(fixture), "groups")
    if groups is not None and inline is not None:
        given_twice("", '%s has "groups"' % place(fixture), "--groups", "the groups")
    groups = inline if groups is None else load(groups, "groups")
    if config.index is not None:
        truth = truth._replace(index=load(config.index, "index"))
    loaded += [(path, load_run(path, truth, last_stage(opts, config.stage, truth, path),
                               kinds=kinds), (place(where), place(path)))
               for path in config.run or ()]
    for path, ranked, _ in loaded:
        refuse_saved(path, ranked, "a candidate's", flag)
    runs = [("the run", path, ranked) for path, ranked, _ in loaded]
    stages = load_stages(plan, truth, config.stage, runs, kinds, flag)
    if baseline is not None:
        first = config.qrels and config.qrels[0]
        ours = {"labels": place(fixture or first or config.evidence or ""),
                "evidence": place(config.evidence or fixture or first or "")}
        baseline = load_baseline(plan, truth, ours, kinds, flag)
    check_fields_read(opts.fields, kinds)
    known = known_queries(plan, truth, loaded, baseline)
    groups = check_groups(groups, known, config.max_group_drop)
    if config.lengths is not None:
        approved = [baseline.ranked] + [r for r, _ in baseline.replicates] if baseline else []
        maps = [ranked for _, ranked, _ in loaded] + [r for r in approved
                                                      if not isinstance(r, Saved)]
        truth = truth._replace(counts_digest=weigh_later(maps, opts, config.lengths))
    return Inputs(truth, loaded, baseline, groups, stages)


def load_baseline(plan, truth, ours, kinds, flag):
    """The Approved baseline the Config names: its run (or saved result), its replicates, and the
    earlier stages of its pipeline (read as the run's are, but not checked against the index,
    which may have changed since); ours: see load_run."""
    config, opts = plan.config, plan.opts
    # the baseline's pipeline may predate the index
    truth = truth._replace(index=None)
    path, named = config.baseline, config.baseline_stage
    reading = last_stage(opts, named, truth, path, "the baseline")
    ranked = load_run(path, truth, reading, ("the baseline's", ours), kinds)
    approved = [(load_run(path, truth, opts, ("the replicate's", ours), kinds), path)
                for path in config.replicate or ()]
    check_baseline_stages(plan, isinstance(ranked, Saved), flag)
    other = config.candidate_qrels or config.baseline_qrels
    if other and isinstance(ranked, Saved):
        fail(place(path), "is %s, which holds no run, and %s scores the baseline's run on the "
                          "other labels too: give its run" % (SAVED_RESULT[flag][0], long_flag(
                              "candidate_qrels" if config.candidate_qrels else "baseline_qrels")))
    stages = []
    if not isinstance(ranked, Saved):
        stages = load_stages(plan, truth, named, [("the baseline", path, ranked)], kinds, flag)
    return Approved(ranked, place(path), approved, [], stages)


def stage_flags(flag):
    """How a message names --stage and --baseline-stage (flag "--"), or their keywords ("")."""
    return ("--stage", "--baseline-stage") if flag else ("stages", "baseline_stages")


def check_baseline_stages(plan, saved, flag):
    """Refuse a baseline's stages that are not named as the run's, or that a saved baseline
    (whose values of the stages' measures stand for them) cannot have, and a stage's measure
    that replicates, which have no stages, would compare."""
    config, (stage, theirs_flag) = plan.config, stage_flags(flag)
    ours, theirs = [n for n, _ in config.stage or ()], [n for n, _ in config.baseline_stage or ()]
    stage_measure = next((s.name for s in plan.specs if stage_of(s)), None)
    if saved and theirs:
        fail("", "%sbaseline is a saved result: its values of the stages' measures stand for its "
                 "stages; leave out %s" % (flag, theirs_flag))
    if not saved and stage_measure and not theirs:
        fail("", "%s compares a stage with the baseline's: give %s of the same names as %s"
             % (stage_measure, theirs_flag, stage))
    if not saved and theirs and theirs != ours:
        fail("", "%s names %s, and %s %s: give the baseline's stages under the run's names, in "
                 "the same order"
             % (theirs_flag, ", ".join(theirs), stage, ", ".join(ours) or "none"))
    if stage_measure and config.replicate:
        fail("", "%s reads a stage, and replicates have none: leave out %s or %s"
             % (stage_measure, stage_measure, "--replicate" if flag else "replicates"))


def last_stage(opts, named, truth, path, what="the run"):
    """The Reading of a run: in a pipeline (named: its stages [(name, file)], or an index), the
    last stage's (see Pipeline), which is also the first when no stage is named."""
    if truth.index is None and not named:
        return opts
    # the first stage, when no stage is named, is checked against the index
    pipeline = Pipeline(bool(named), (), None if named else truth.index, what, place(path))
    return opts._replace(pipeline=pipeline)


def refuse_saved(path, ranked, whose, flag):
    """Refuse a saved result where a ranking is to be scored."""
    if isinstance(ranked, Saved):
        fail(place(path), "%s stands for a baseline's run (%s), not for %s: score its run"
             % (SAVED_RESULT[flag] + (whose,)))


def load_stages(plan, truth, named, runs, kinds, flag):
    """[Stage, ...] of the stages named [(name, file)], earliest first, each read as a run is:
    from the last to the first (see Pipeline), each refused when it lacks an ID a later one
    holds for a query; runs: [(what a message calls it, its file, {qid: Ranking or None})] of
    the last stage.  Their labeled
    queries follow --missing-run: a query a stage lacks is refused, or ranked as empty (and so
    holds nothing), or left out of the runs (so skipped)."""
    named, stages = named or (), []
    check_stage_names(plan, named, flag)
    later = [(what, place(path), kept_ids(ranked)) for what, path, ranked in runs]
    for i in reversed(range(len(named))):
        name, path = named[i]
        pipeline = Pipeline(i > 0, later, truth.index if i == 0 else None, "stage " + name,
                            place(path))
        ranked = load_run(path, truth, stage_reading(plan, name, pipeline), kinds=kinds)
        refuse_saved(path, ranked, "a stage's", flag)
        stage = Stage(name, place(path), ranked)
        skipped = stage_queries(plan, truth, stage)
        # a query it ranks as empty holds nothing
        for qid in (q for _, _, ids in later for q in ids if q not in ranked and q not in skipped):
            held_ids(qid, [], None, pipeline)
        for _, _, run in runs:
            for qid in skipped:
                run.pop(qid, None)
        later = [(pipeline.name, stage.place, kept_ids(ranked))]
        stages.insert(0, stage)
    return stages


def stage_reading(plan, name, pipeline):
    """The Reading of a stage: the run's, with its ranking read from the field --fields gives
    the stage's name (README: "Where was it lost?"), in the list's order, when it gives one."""
    # --depth cuts the run: a stage is what it kept
    opts = plan.opts._replace(pipeline=pipeline, depth=None)
    own = (plan.config.fields or {}).get(name)
    # a stage named as a role reads the run's field
    if own is None or name in ROLES:
        return opts
    # the run's scores and token counts are parallel to the run's list, not the stage's
    return opts._replace(fields=dict(opts.fields, retrieved=(own,), scores=(), tokens=()))


def kept_ids(ranked):
    """{qid: IDs} a ranking kept for the stage before it (see Ranking.ids)."""
    return {qid: r.ids for qid, r in ranked.items() if r is not None and r.ids}


def check_stage_names(plan, named, flag):
    """Refuse a stage name that stage=NAME cannot give, one named twice, and a measure of a stage
    not given."""
    names, stage = [name for name, _ in named], stage_flags(flag)[0]
    bad = next((n for n in names if not (isinstance(n, str) and STAGE_NAME.fullmatch(n))), None)
    if bad is not None:
        fail("", "%s names stage %s: %s" % (stage, show(bad), STAGE_RULE))
    reserved = next((name for name in names if name in FUNNEL_ROWS), None)
    if reserved is not None:
        fail("", "%s names stage %s, a row of the funnel of its own: name it otherwise"
             % (stage, reserved))
    twice = next((name for i, name in enumerate(names) if name in names[:i]), None)
    if twice is not None:
        fail("", "stage %s is given twice: name each stage once" % show(twice))
    for spec in plan.specs:
        read = stage_of(spec)
        if read is not None and read not in names:
            fail("", "%s reads stage %s, and %s names no such stage"
                 % (spec.name, read, stage))


def stage_queries(plan, truth, stage):
    """The labeled queries a stage lacks that --missing-run skip leaves out; refused, as a run's
    are, under error (and its ranked queries without labels under --unlabeled error)."""
    missing, _ = differing_queries(truth.labels, stage.ranked, plan.policies, stage.place,
                                   truth.no_answer)
    return missing if plan.policies["missing_run"] == "skip" else []


def with_clusters(plan, inputs):
    """The Plan with the clusters {qid: cluster} the Config names, each of a known query (see
    known_queries)."""
    if plan.config.clusters is None:
        return plan
    return plan._replace(clusters=check_clusters(
        load(plan.config.clusters, "clusters"),
        known_queries(plan, inputs.truth, inputs.runs, inputs.baseline)))


def known_queries(plan, truth, loaded, baseline):
    """The queries a group or a cluster may name: the labeled ones, and beside agreement measures
    those a run or the baseline ranks."""
    if not plan.opts.agree:
        return truth.labels
    ranked = [r for _, r, _ in loaded] + ([baseline.ranked] if baseline else [])
    return set(truth.labels).union(*(r for r in ranked if not isinstance(r, Saved)))


def no_labels(specs, flag="--qrels"):
    """The labels when none are given (nor evidence sets standing in): {}, which only agreement
    measures can do with."""
    if label_specs(specs):
        raise EvalError("%s reads labels: give %s, or only agreement measures (%s), which compare "
                        "the run with --baseline" % (label_specs(specs)[0].name, flag, ", ".join(
                            s.name for s in MEASURES.values() if s.domain == AGREEMENT)))
    return {}


def load_truth(plan, seed_mode, kinds, flag="--"):
    """(Truth, the Reading the rankings are read with, [the fixture's run] or [], the fixture's
    other members, the labels' file) of the inputs the plan's Config names: the labels (or
    evidence sets standing in), evidence sets, token counts and the queries without an answer
    (labeled with nothing, so that their rankings are read), checked against one another.
    flag: how a message names an option: "--" (--qrels), or "" a library call's keyword."""
    config, opts = plan.config, plan.opts._replace(seed_mode=seed_mode)
    fixture, qrels, evidence = config.fixture, config.qrels, config.evidence
    no_answer = config.no_answer
    truth, loaded = Truth(None, None, None if config.lengths is None else LATER, {}), []
    if no_answer is not None:
        truth = truth._replace(no_answer=dict.fromkeys(load(no_answer, "no_answer"),
                                                       "--no-answer %s" % place(no_answer)))
    if evidence is not None:
        truth = truth._replace(evidence=load(evidence, "evidence", Known(opts=opts), kinds))
    if config.access is not None:
        truth = truth._replace(access=load(config.access, "access"))
    # "": no labels (agreement only)
    where = fixture or (qrels and qrels[0]) or evidence or ""
    if fixture is not None:
        labels, ranked, extras = load(fixture, "fixture", Known(truth, opts), kinds)
        loaded = [(fixture, ranked, (place(fixture), place(fixture)))]
    elif qrels is not None:
        labels, extras = label_files(qrels, truth, opts, kinds)
    elif evidence is not None:  # the evidence sets stand in for the labels
        labels, extras = evidence_labels_of(truth.evidence), {}
    else:  # for agreement measures only
        labels, extras = no_labels(plan.specs, flag + "qrels"), {}
    if not seed_mode and extras.get("no_answer"):
        truth = truth._replace(no_answer=dict.fromkeys(extras["no_answer"]))
    truth = with_empty_labels(truth, labels, config.empty_labels)
    labels = with_no_answer(labels, truth.no_answer)
    truth = truth._replace(labels=labels, evidence=extras.get("evidence") or truth.evidence)
    check_truth(plan, truth, extras, where)
    own_labels = qrels is not None or fixture is not None and not extras.get("stand_in")
    check_inputs_used(plan.specs, config.lengths, evidence, own_labels, flag)
    return truth, opts, loaded, extras, where


def label_files(qrels, truth, opts, kinds):
    """(labels, extras) of the --qrels files, merged; the first one's records may give evidence
    sets and the queries without an answer, unless another input gives them."""
    labels, extras = load(qrels[0], "labels", Known(truth, opts), kinds)
    for key, flag in (("evidence", "--evidence"), ("no_answer", "--no-answer")):
        if extras.get(key) and getattr(truth, key):
            given_twice(place(qrels[0]), "the records give " + key.replace("_", "-"), flag)
    return merged_labels([(place(qrels[0]), labels)] + [
        (place(path), load(path, "labels", Known(truth, opts), kinds)[0])
        for path in qrels[1:]]), extras


def check_truth(plan, truth, extras, where):
    """Refuse labels, evidence sets and queries without an answer that contradict one another or
    the measures (extras["keys"]: the first record's, when the labels came from records)."""
    config, labels, no_answer = plan.config, truth.labels, truth.no_answer
    check_no_answer(no_answer, labels, plan.opts.level, place(config.no_answer or where))
    check_evidence_wanted(plan.specs, truth.evidence, with_answer(labels, no_answer),
                          place(config.evidence or where), extras.get("keys"))
    if "keys" in extras and not no_answer and any(s.measure.domain == UNANSWERABLE
                                                  for s in plan.specs):
        # the records' empty labels: unanswered?
        empty = [q for q, grades in labels.items() if not grades]
        fail(place(where), "Abstain needs questions without an answer, and no record says "
                           "\"answerable\": false%s"
             % (": " + say_no_answer(empty) if empty
                else _role_hint(extras["keys"], "answerable")))


def evaluate_runs(plan, inputs, files=False):
    """{run name: general result} of the loaded Inputs' runs (files: read from the files the
    Config names, which the manifests name); with a baseline and several runs, Holm's
    correction is over all of them: one family."""
    # none to compute without a run (--candidate-qrels alone)
    digests = inputs.runs and truth_digests(inputs.truth)
    results = {name: evaluate_loaded(plan, inputs, digests, ranked, places, files and name)
               for name, ranked, places in inputs.runs}
    if len(results) > 1 and inputs.baseline is not None:
        holm_over(row for r in results.values() for row in r.comparison.values())
        holm_over(row for r in results.values() for block in r.get("groups", {}).values()
                  for row in block["comparison"].values())
    return results


def runs_output(plan, results, root=""):
    """The output of several runs {name: general result}: {"runs": results}, and with
    --pairwise or --format latex (which marks the pairs' tests) "pairs": each run compared with
    each one given before it, [{"baseline": the earlier run's name, "candidate": the later
    one's, "comparison": {measure: row}}] (see compare, without gates), with Holm's correction
    over the pairs, per measure (root: the prefix of the runs' names in messages)."""
    out = {"runs": results}
    if not (plan.config.pairwise or plan.config.format == "latex"):
        return out
    out["pairs"] = pairs = [{"baseline": a, "candidate": b, "comparison": compare(
        results[a], results[b], plan.specs, plan, place(root + b))["comparison"]}
                            for a, b in combinations(results, 2)]
    for spec in plan.specs:
        holm_over(pair["comparison"][spec.name] for pair in pairs)
    return out


def evaluate_loaded(plan, inputs, digests, ranked, places, run=None):
    """The general result of one run's rankings {qid: Ranking or None}, read with the other
    Inputs; digests: truth_digests of their Truth, the same for every run; places: (the
    labels', the run's); run: its file, when read from one.  A query without an answer is
    scored by Abstain only.  Each stage returns the result with its blocks, in the order the
    JSON output gives them."""
    labeled, truth, baseline = label_specs(plan.specs), inputs.truth, inputs.baseline
    judged, skipped, zeroed = judge_labeled(plan, truth, ranked, places)
    judged = staged(plan, truth, judged, inputs.stages)
    check_domains(judged, labeled, truth.no_answer, places[1])
    check_greatest_grade(judged, labeled, places[0])
    result = run_evaluation(judged, labeled, skipped, zeroed, truth.no_answer)
    if plan.opts.agree:
        result = agreement_rows(plan, ranked, baseline, result, places[1])
    intervals, replicates = None, ()
    if baseline is not None:
        comparison, intervals, replicates = compare_with_baseline(
            plan, truth, judged, result, baseline, places[0])
        result = Result(result, **comparison)
    if inputs.groups is not None:
        blocks, breaches = group_results(inputs.groups, result, plan, places[1], truth.no_answer,
                                         replicates)
        result = Result(result, groups=blocks)
    # of --max-group-drop, after the others
    if inputs.groups is not None and breaches:
        result = Result(result, breaches=result.breaches + breaches)
    result = Result(result, **described(plan, truth, ranked, judged, result, intervals))
    result = Result(result, **check_floors(plan, result))
    result = Result(result, **leak_block(truth, judged, plan.specs))
    result = Result(result, **as_block(plan, judged, result, truth.no_answer))
    answered = with_answer(judged, truth.no_answer)
    return Result(result, **explained(plan, inputs, ranked, answered, result),
                manifest=manifest(plan, digests, truth.labels, answered, run))


def described(plan, truth, ranked, judged, result, intervals):
    """The blocks a result holds after its values and comparison: --power's, how many clusters
    the tests drew, the warnings, what reading did (see what_reading_did), --ties' bounds and
    --ci's intervals (those of the comparison's resamples, when it drew them)."""
    specs, per_query, no_answer, blocks = plan.specs, result.per_query, truth.no_answer, {}
    if plan.renamed:
        blocks["renamed"] = plan.renamed
    if plan.config.power:
        blocks["power"] = power(per_query, specs, result.get("baseline_per_query"),
                                plan.gates["max_mean_drop"])
    if plan.clusters is not None:
        answered = list(with_answer(per_query, no_answer))
        blocks["clusters"] = len(cluster_rows(answered, plan.clusters))
    mismatch = id_mismatch(with_answer(ranked, no_answer), truth.labels, plan.opts.match)
    warnings = [w for w in (mismatch, coverage_warning(result.coverage, specs)) if w]
    blocks["warnings"] = warnings + blind_warnings(result, specs, plan)
    # agreement's unlabeled too
    blocks.update(what_reading_did(ranked, per_query, plan.opts))
    if plan.opts.ties:
        blocks["ties"] = tie_bounds(judged, specs, per_query, plan.opts, no_answer)
    if plan.config.ci and intervals is None:
        intervals = mean_intervals(per_query, specs, plan)
    if plan.config.ci:
        blocks["ci95"] = intervals
    return blocks


def explained(plan, inputs, ranked, judged, result):
    """The blocks a result ends with before its manifest: --unjudged-bounds' and --explain's,
    which also counts its causes in each group (judged: the answered queries'), and in a
    pipeline its funnel (see funnel), with the baseline pipeline's when it has stages."""
    blocks, approved = {}, inputs.baseline
    pipeline = funnels(plan, inputs, ranked, judged)
    if plan.config.unjudged_bounds:
        blocks["unjudged"] = unjudged_block(plan, judged, result, approved)
    if pipeline:
        blocks["funnel"] = pipeline
    if not plan.config.explain:
        return blocks
    blocks["explain"] = explain = explanations(plan, inputs, ranked, judged, result,
                                               pipeline and pipeline["queries"] or NOTHING)
    if result.groups:
        blocks["groups"] = {g: dict(b, explain=explain_counts(explain, b["members"]))
                            for g, b in result.groups.items()}
    return blocks

def staged(plan, truth, judged, stages):
    """The judged queries {qid: Judged} with, for each stage a measure reads (stage=NAME), the
    Judged record of that stage's ranking among their filtered ones (see _filtered); a query the
    stage does not rank (--missing-run zero) as an empty ranking."""
    read = {s.filter for s in plan.specs if stage_of(s) is not None}
    if not read:
        return judged
    rankings = {stage.name: stage.ranked for stage in stages}
    out = {}
    for qid, j in judged.items():
        filtered = dict(j.filtered or {})
        for ranking_filter in read:
            ranking = rankings[ranking_filter.stage].get(qid)
            empty = judge({}, 0, truth.labels[qid], plan.opts.level)
            filtered[ranking_filter] = empty if ranking is None else ranking.judged
        out[qid] = j._replace(filtered=filtered)
    return out


# Where a pipeline lost a relevant document (README: "Where was it lost?"): the rows of its
# funnel, in order, each {"stage": its name, "fate": of a document lost there}: the index, when
# given; the first stage (the run when no stage is named), which did not retrieve it; each later
# stage and the run ("run"), which removed it; the run's top K ("top 10"); with tokens= measures,
# the first one's budget ("budget").  A unit is a relevant document, or with evidence sets a slot
# (its documents joined by "|"), which passes as far as the best of its documents; a lost unit's
# fate is its row, with its rank in the run and in the stage before the run (the run's own when
# no stage is named), or null.
def funnels(plan, inputs, ranked, judged):
    """In a pipeline, the funnel block of the run (see funnel) over the answered queries (judged),
    with the baseline pipeline's when it has stages; else None."""
    stages, index, approved = inputs.stages, inputs.truth.index, inputs.baseline
    if not stages and index is None:
        return None
    check_evidence_labeled(inputs.truth, judged, place(plan.config.evidence or ""))
    # the relevant documents are folded
    if index is not None and plan.opts.separator:
        index = {i.split(plan.opts.separator, 1)[0] for i in index}
    block = funnel(plan, inputs.truth, ranked, stages, judged, index)
    if approved and approved.stages:
        block["baseline"] = funnel(plan, inputs.truth, approved.ranked, approved.stages, judged,
                                   index)
    return block


def check_evidence_labeled(truth, qids, where):
    """Refuse an evidence document without a label in a pipeline: a ranking keeps the ranks of
    the labeled documents only (see Ranking.seen), which the funnel follows."""
    for q in qids:
        sets = evidence_of(truth, q) or ()
        doc = next((d for d in evidence_labels(sets) if d not in truth.labels[q]), None)
        if doc is not None:
            fail(where, "evidence document %s has no label, and the funnel follows the labeled "
                     "documents: label it, or let the evidence sets stand in for the labels"
                 % show(doc), q)


def funnel(plan, truth, ranked, stages, qids, index):
    """The "funnel" block of a pipeline (its stages, the run's rankings ranked; index: {ID: None}
    folded, or None) over queries qids: the relevant units (documents, or evidence slots); per
    row those still there (count, share of all), their mean per-query recall (0 for a query
    without any), how many were lost there (the row before minus this one); per query that lost
    any, each lost unit's fate, with its rank in the run and in the stage before the run."""
    budget = next((f for f in plan.opts.filters if f.tokens is not None), None)
    rows = funnel_rows(plan, stages, index, budget)
    passed, lost = {}, {}
    for q in qids:
        points, ranks, before = query_points(plan, ranked.get(q), stages, q, index, budget)
        passed[q] = []
        for slot in relevant_units(plan, truth, q):
            far, doc = max((rows_passed(d, points), d) for d in slot)
            passed[q].append(far)
            if far < len(rows):
                fate = dict(rows[far], rank=ranks.get(doc), stage_rank=before.get(doc))
                lost.setdefault(q, {})["|".join(slot)] = fate
    total = sum(map(len, passed.values()))
    return {"relevant": total, "rows": counted_rows(rows, passed, total), "queries": lost}


def funnel_rows(plan, stages, index, budget):
    """The funnel's rows in pipeline order: each its name, and the fate of a unit lost there."""
    rows = [{"stage": "index", "fate": "not_indexed"}] if index is not None else []
    names = [stage.name for stage in stages] + ["run"]
    # the first stage's loss: never retrieved
    fates = ["not_retrieved"] + ["removed"] * len(stages)
    rows += [{"stage": name, "fate": fate} for name, fate in zip(names, fates)]
    rows.append({"stage": "top %d" % plan.opts.top_k, "fate": "below_k"})
    if budget is not None:
        rows.append({"stage": "budget", "fate": "over_budget"})
    return rows


def query_points(plan, ranking, stages, q, index, budget):
    """(What each funnel row holds of query q, in their order; the run's {document: rank}; the
    stage before the run's, the run's when it has none)."""
    ranks, _, kept = _seen_of(ranking)
    held = [_seen_of(stage.ranked.get(q))[0] for stage in stages]
    points = [index] if index is not None else []
    points += held + [ranks, {d for d, rank in ranks.items() if rank <= plan.opts.top_k}]
    if budget is not None:
        points.append(kept.get(budget, ()))
    return points, ranks, (held or [ranks])[-1]


def relevant_units(plan, truth, q):
    """A query's relevant units: its evidence slots, else each relevant document, a slot of one."""
    sets = evidence_of(truth, q)
    if sets:
        return dict.fromkeys(chain.from_iterable(sets))
    least = least_relevant(plan.opts.level)
    return [(d,) for d, grade in truth.labels[q].items() if grade >= least]


def rows_passed(doc, points):
    """How many funnel rows a document passes: up to the first whose points lack it."""
    return next((i for i, held in enumerate(points) if doc not in held), len(points))


def counted_rows(rows, passed, total):
    """The rows with their counts, of {qid: [rows each unit passed]}: the units still there, their
    share of the total, the mean per-query recall there, and the units lost there."""
    last = total
    for i, row in enumerate(rows):
        count = sum(far > i for fars in passed.values() for far in fars)
        recall = math.fsum(sum(far > i for far in fars) / len(fars)
                           for fars in passed.values() if fars) / (len(passed) or 1)
        row.update(relevant=count, share=count / (total or 1), recall=recall, lost=last - count)
        last = count
    return rows


def label_specs(specs):
    """The specs of the measures that read labels: all but the agreement measures."""
    return [s for s in specs if not agrees(s)]


def judge_labeled(plan, truth, ranked, places):
    """judge_queries of the queries the label measures score (none when every measure is an
    agreement measure); beside agreement measures, which score it, a ranked query without labels
    is neither an error nor skipped."""
    if not label_specs(plan.specs):
        return {}, {name: [] for name in POLICIES}, {"missing_run": [], "no_relevant": []}
    policies = plan.policies
    if plan.opts.agree:
        policies = dict(policies, unlabeled="skip")
    judged, skipped, zeroed = judge_queries(truth.labels, ranked, plan.opts.level, policies,
                                            places, truth.no_answer)
    if plan.opts.agree:
        skipped = dict(skipped, unlabeled=[])
    return judged, skipped, zeroed


def agreement_rows(plan, ranked, approved, result, where):
    """The result with the agreement measures scored on every query the run or the baseline
    ranks: its per_query rows (those without labels after the others), means and counts.  A
    query only one of them ranks is refused, or ranked as empty, or skipped, as --missing-run
    says."""
    mine = [s for s in plan.specs if agrees(s)]
    first = mine[0].name
    if isinstance(approved.ranked, Saved):
        fail(approved.place, "is a saved result, which holds no rankings, and %s compares "
                             "rankings: give the baseline's run" % first)
    theirs, policy = approved.ranked, plan.policies["missing_run"]
    skip = policy == "skip"
    alone = [q for q in chain(ranked, theirs) if (q in ranked) != (q in theirs)]
    if alone and policy == "error":
        fail(where, "%s ranked by only one of the run and the baseline (%s), and %s compares "
                    "both: see --missing-run"
             % (n_queries(len(alone)), first_few(alone), first))
    per_query, funcs = dict(result.per_query), [(s.name, _scorer(s), s.k) for s in mine]
    left = set(alone) if skip else ()
    for q in dict.fromkeys(chain(ranked, theirs)):
        if q not in left:
            pair = (_top_of(ranked.get(q)), _top_of(theirs.get(q)))
            per_query[q] = dict(per_query.get(q, {}), **{n: f(pair, k) for n, f, k in funcs})
    # the run's, and with zero those it lacks (compare_with_baseline)
    key = "skipped" if skip else "zeroed"
    listed = result[key]["missing_run"]
    listed = listed + [q for q in alone if q not in listed and (skip or q not in ranked)]
    # the rows of agreement values only
    unscored = sum(len(row) == len(mine) for row in per_query.values())
    agreement = {"queries": sum(first in row for row in per_query.values()),
                 "unscored": unscored if label_specs(plan.specs) else 0}
    return Result(result, queries=len(per_query) - result.get("no_answer_queries", 0),
                measures=aggregated(per_query, plan.specs), per_query=per_query,
                **{key: dict(result[key], missing_run=listed)}, agreement=agreement)


def _top_of(ranking):
    """The documents a Ranking keeps for the agreement measures (see Reading.agree), in rank
    order."""
    if ranking is None or not ranking.top:
        return ()
    return tuple(ranking.top.split("\n"))


def what_reading_did(ranked, judged, opts):
    """What the reader did to the evaluated queries' rankings, as the result reports it: chunks
    folded into documents, texts that held several labels, repeats removed."""
    out = {}
    for key, field, wanted in (("folded", "folded", opts.separator or opts.match == "contains"),
                               ("several_labels", "several", opts.match == "contains")):
        if wanted:
            counts = {q: getattr(ranked[q], field)
                      for q in judged if ranked.get(q) and getattr(ranked[q], field)}
            out[key] = {"total": sum(counts.values()), "per_query": counts}
    if opts.duplicates == "first":
        out["deduplicated"] = deduplicated(ranked, judged)
    return out


def explanations(plan, inputs, ranked, judged, result, lost=NOTHING):
    """The "explain" block (README: "The answer missed the passage"): per query with a relevant
    document missing from its top K, or cut from it by a floor or a budget, where each one went,
    the unjudged documents in its top K, and its cause; with a baseline, each changed query's
    relevant documents' ranks before and after; and counts by cause.  lost: in a pipeline,
    {qid: {relevant unit: its fate}} of those that lost any (see funnel)."""
    truth, approved, queries = inputs.truth, inputs.baseline, {}
    changed = {q for c in result.comparison.values() for q in chain(fell(c), c.get("lost", ()))}
    # a saved baseline's ranks are unknown: a note says so
    if approved is not None and isinstance(approved.ranked, Saved):
        changed = set()
    for q in judged:
        before = None
        if q in changed:
            before = _seen_of(approved.kept[0][0].ranked.get(q))[0]
        # --judged-only's drops count
        length = min(judged[q].ranked, plan.opts.depth or math.inf)
        entry = _explained(plan, truth.labels[q], ranked.get(q), length, before)
        if entry and q in lost:
            entry["fates"] = lost[q]
        if entry:
            queries[q] = entry
    counts = explain_counts({"queries": queries}, queries)
    return _named({"k": plan.opts.top_k, "counts": counts, "queries": queries}, plan.opts.match)


def _explained(plan, labels, ranking, length, before):
    """One query's entry of the explain block, {} for nothing to say: the cause when a relevant
    document is missing from the top k (absent, not_ranked: the ranking, ``length`` long, may be
    all a log kept, below) or cut from it, each missing one's rank, the unjudged (or unlabeled)
    in the top k, those cut by each measure; before: the baseline's ranks, when the query
    changed, for each relevant document's ranks before and after."""
    k, least = plan.opts.top_k, least_relevant(plan.opts.level)
    ranks, top, kept = _seen_of(ranking)
    relevant = [d for d, g in labels.items() if g >= least]
    missing = {d: ranks.get(d) for d in relevant if not ranks.get(d, k + 1) <= k}
    cut = {s.name: [d for d in relevant if d not in missing and d not in kept[s.filter]]
           for s in plan.specs if s.filter in kept}
    cause, entry = "below", {}
    if None in missing.values():
        cause = "absent"
        # a ranking no longer may be all a log kept: not "absent"
        if length <= max(k, plan.opts.depth or 0):
            cause = "not_ranked"
    if not missing:
        cause = "cut"
    if missing or any(cut.values()):
        # else the others are unlabeled
        unjudged = "unjudged" if any(g < least for g in labels.values()) else "unlabeled"
        entry = {"cause": cause, "missing": missing,
                 unjudged: [d for d in top if labels.get(d, -1) < 0],
                 "cut": {m: docs for m, docs in cut.items() if docs},
                 "ranked": cause == "not_ranked" and length}
    if before is not None:
        entry["ranks"] = {d: [before.get(d), ranks.get(d)] for d in relevant}
    # 0 ranked is something to say
    return {key: value for key, value in entry.items() if value or type(value) is int}


def _named(block, match):
    """The explain block with texts named t:... (README: "Logs as frameworks write them"), and
    "texts": {name: its first 40 characters} for the reports, under --match text or contains."""
    if match == "id":
        return block
    texts, queries = {}, {}

    def name(doc):
        short = text_id(doc)
        texts.setdefault(short, doc[:40])
        return short
    for q, entry in block["queries"].items():
        entry = queries[q] = dict(entry)
        for key in ("missing", "ranks", "fates"):
            if key in entry:
                entry[key] = {name(d): value for d, value in entry[key].items()}
        entry.update({key: [name(d) for d in entry[key]]
                      for key in ("unjudged", "unlabeled") if key in entry})
        if "cut" in entry:
            entry["cut"] = {m: [name(d) for d in docs] for m, docs in entry["cut"].items()}
    return dict(block, queries=queries, texts=texts)


def unjudged_block(plan, judged, result, approved=None):
    """The "unjudged" block of a result (README: "Did it really miss?"): each bounded measure's
    judged mean and its mean if every unjudged document were relevant; with a baseline, the
    baseline's too, and {measure: [qid, ...]} of the regressed or lost queries whose candidate
    top k holds unjudged documents."""
    block = unjudged_bounds(judged, plan.specs, result.measures)
    if approved is None:
        return block
    kept = approved.kept[0][0]
    # a saved baseline's: a note says so
    if kept.judged is not None:
        means = {name: c["baseline"] for name, c in result.comparison.items()}
        theirs = {q: kept.judged[q] for q in judged}
        block["baseline"] = unjudged_bounds(theirs, plan.specs, means)["measures"]
    specs = {s.name: s for s in plan.specs}
    changed = {name: list(dict.fromkeys(chain(c["regressed"], c.get("lost", ()))))
               for name, c in result.comparison.items() if name in block["measures"]}
    block["marked"] = {name: {"changed": len(qids), "queries": [
        q for q in qids if _unjudged_within(judged[q], specs[name].k)]}
        for name, qids in changed.items()}
    return block


def unjudged_marked(result):
    """{measure: set of the regressed or lost queries marked unjudged} of a comparison made
    under --unjudged-bounds (see unjudged_block); {} otherwise."""
    return {name: set(m["queries"]) for name, m in result.unjudged.get("marked", {}).items()}


def explain_counts(block, qids):
    """The counts of an explain block (see explanations) over some of its queries (a group's, or
    all)."""
    entries = [block["queries"][q] for q in qids if "cause" in block["queries"].get(q, {})]
    counts = {cause: sum(e["cause"] == cause for e in entries)
              for cause in ("absent", "not_ranked", "below", "cut")}
    return dict(missed=len(entries) - counts["cut"], **counts,
                unjudged=sum("unjudged" in e for e in entries),
                unlabeled=sum("unlabeled" in e for e in entries))


def pool_records(inputs, k, changed=()):
    """--pool's records (README: "Did it really miss?"): per query whose top k in any run given
    holds unjudged documents, {"query_id", "relevant": {doc: None}, "ranks": {doc: {run: rank}}},
    documents in the order of their best rank: the unlabeled queries ``changed`` first (see
    most_changed), then the labeled ones in the labels' order; one at a time, so that memory
    holds one."""
    truth, approved = inputs.truth, inputs.baseline
    sources = [(place(name), ranked) for name, ranked, _ in inputs.runs]
    # a saved result holds no rankings: a note says so
    if approved is not None:
        sources += [(where, ranked) for where, ranked in [(approved.place, approved.ranked)] + [
            (place(name), ranked) for ranked, name in approved.replicates]
            if not isinstance(ranked, Saved)]
    for qid in chain(changed, truth.labels):
        ranks, labels = {}, truth.labels.get(qid, {})
        for name, ranked in sources:
            for rank, doc in enumerate(_seen_of(ranked.get(qid))[1][:k], 1):
                if labels.get(doc, -1) < 0:
                    ranks.setdefault(doc, {})[name] = rank
        order = sorted(ranks, key=lambda doc: min(ranks[doc].values()))
        if order:
            yield {"query_id": qid, "relevant": dict.fromkeys(order),
                   "ranks": {d: ranks[d] for d in order}}


def most_changed(plan, results, labels):
    """The queries without labels that the agreement measures compare, those whose ranking
    changed most first: by the lowest value, in any run, of the first agreement measure asked
    for."""
    first, lowest = next((s.name for s in plan.specs if agrees(s)), None), {}
    if first is None:
        return []
    for result in results.values():
        for q, row in result.per_query.items():
            if q not in labels:
                lowest[q] = min(lowest.get(q, 1.0), row[first])
    return sorted(lowest, key=lowest.__getitem__)


def plotted_curves(plan, inputs):
    """{run name: its curves (see curves)}, and under None first the baseline's when it has
    rankings: what --plot draws over k; beside agreement measures each run's Overlap@k against
    the baseline, which agrees with itself: 1 at every k."""
    no_answer, approved, drawn = inputs.truth.no_answer, inputs.baseline, {}
    if approved is not None and approved.kept[0][0].judged is not None:
        drawn[None] = curves(with_answer(approved.kept[0][0].judged, no_answer), plan.specs)
    if plan.opts.agree:
        drawn[None]["Overlap@k"] = agreement_curve(plan, approved.ranked, approved.ranked)
    for name, ranked, places in inputs.runs:
        judged = judge_labeled(plan, inputs.truth, ranked, places)[0]
        drawn[name] = curves(with_answer(judged, no_answer), plan.specs)
        if plan.opts.agree:
            drawn[name]["Overlap@k"] = agreement_curve(plan, ranked, approved.ranked)
    return drawn


def agreement_curve(plan, ranked, theirs):
    """Overlap@k's curve [(k, mean)] of a run's rankings against the baseline's, on the queries the
    agreement measures score (see agreement_rows), k = 1 .. their largest cutoff (10 without one),
    as deep as they read."""
    skip = plan.policies["missing_run"] == "skip"
    qids = ranked.keys() & theirs.keys() if skip else {**ranked, **theirs}  # fsum: in any order
    pairs = [(_top_of(ranked.get(q)), _top_of(theirs.get(q))) for q in qids]
    top = max([s.k for s in plan.specs if agrees(s) and s.k] or [10])
    return [(k, math.fsum(overlap(p, k) for p in pairs) / (len(pairs) or 1))
            for k in plot_cutoffs(plan.specs, min(top, plan.opts.agree))]


def _seen_of(ranking):
    """A Ranking's seen (see Ranking); nothing seen for a query without a ranking."""
    if ranking is None or not ranking.seen:
        return {}, (), {}
    ranks, top, kept = ranking.seen
    return ranks, tuple(top.split("\n")) if top else (), kept or {}


def approved_evaluation(plan, truth, ranked, places, whose="the baseline", stages=()):
    """What a comparison keeps of the baseline, or of a replicate: its judged rankings, skips,
    zeros, result, the repeats --duplicates first removed and what its label
    coverage is read from, judged by the same policies as every run (stages: its pipeline's
    earlier ones); or a saved result's."""
    if isinstance(ranked, Saved):
        return saved_evaluation(plan, truth, ranked, whose)
    no_answer, removed = truth.no_answer, None
    judged, skipped, zeroed = judge_labeled(plan, truth, ranked, places)
    judged = staged(plan, truth, judged, stages)
    result = run_evaluation(judged, label_specs(plan.specs), skipped, zeroed, no_answer)
    if plan.opts.duplicates == "first":
        removed = deduplicated(ranked, ranked if plan.opts.agree else judged)
    return Evaluated(ranked, judged, skipped, zeroed, result, removed,
                     with_answer(judged, no_answer))


def saved_evaluation(plan, truth, saved, whose):
    """approved_evaluation of a saved result (README: "Keep the approved result"): its values of
    the measures asked for stand for its run's, once check_saved agrees and its queries are the
    labels' (less those it skipped).  It holds no rankings: no curves, nothing judged."""
    obj, where, measure = saved.result, saved.source, coverage_measure(plan.specs)
    if "per_query" not in obj:
        fail(where, "holds the results of %d runs: save one run's (--run once) to serve as %s"
             % (len(obj["runs"]), whose))
    if "manifest" not in obj and "mrr_at_k" in obj:
        fail(where, "is the output of the seed's mode (FIXTURE --k K), which keeps the seed's "
                    "shape: save a result with -m R@3,RR@3 instead, which says what it was made "
                    "on")
    no_repeated_key(obj, where)
    check_manifest(obj.get("manifest"), where)
    check_saved(saved, plan, truth, whose)
    result = _saved_result(plan, truth, obj, where, whose)
    coverage = obj["manifest"].get("label_coverage", {}).get(measure)
    if coverage is None and judges_nonrelevant(truth.labels, plan.opts.level):
        fail(loc(where, "manifest.label_coverage"), "holds no %s, which the label-coverage "
             "warning reads: score its run again" % measure)
    removed = None
    if plan.opts.duplicates == "first":
        removed = obj.get("deduplicated")
        counts = isinstance(removed, dict) and all(
            isinstance(n, int) and not isinstance(n, bool) for n in removed.values())
        if not counts:
            fail(loc(where, "deduplicated"), "expected {query ID: repeats removed}, not %s"
                 % show(removed))
    return Evaluated({}, None, result.skipped, result.zeroed, result, removed, coverage,
                     obj["manifest"])


def _saved_result(plan, truth, obj, where, whose):
    """The general result a saved one stands for: its skips and zeros, and its values of the
    measures asked for on the labels' queries (less those it skipped), refused when they are
    not those, or when its means are not those of its values."""
    skipped, zeroed = (_saved_lists(obj, key, names, where) for key, names in (
        ("skipped", POLICIES), ("zeroed", ("missing_run", "no_relevant"))))
    left = set(truth.labels) - set(skipped["missing_run"]) - set(skipped["no_relevant"])
    odd = set(obj["per_query"]) ^ left
    if odd:
        fail(where, "%s was saved on other queries than the labels give (%s): it was cut or "
                    "edited; score its run again" % (whose, first_few(sorted(odd))))
    specs, no_answer = plan.specs, truth.no_answer
    per_query = {q: _saved_row(row, [s for s in specs if answers(s) != (q in no_answer)], where, q)
                 for q, row in obj["per_query"].items()}
    result = scored_result(per_query, specs, skipped, zeroed, no_answer)
    check_self_consistent(obj, result, where)
    levels = [s.name for s in specs if s.rel is not None]
    if not levels:
        return result
    return Result(result, no_relevant_at_level={
        n: _saved_number(obj, ("no_relevant_at_level", n), where) for n in levels})


def replicate_entry(name, theirs, opts):
    """A replicate as the JSON output reports it: its name, means, skips and zeros (and the
    repeats --duplicates first removed), like the baseline's."""
    entry = {"run": name, "measures": theirs.result["measures"], "skipped": theirs.skipped,
             "zeroed": theirs.zeroed}
    if opts.duplicates == "first":
        entry["deduplicated"] = theirs.deduplicated
    return entry


def with_answer(per_query, no_answer):
    """{qid: value} of the queries that have an answer."""
    return {q: v for q, v in per_query.items() if q not in no_answer} if no_answer else per_query


def compare_with_baseline(plan, truth, judged, result, approved, qrels_place):
    """(The comparison block of the candidate's result against the Approved baseline's, on the
    same labels; under --ci the candidate's mean intervals from the comparison's resamples, else
    {}; the replicates' per_query).  With replicates the block has their results, the noise
    and the unstable queries (see replicate_noise)."""
    specs, opts, replicas = plan.specs, plan.opts, approved.replicates
    if not approved.kept:
        approved.kept.append(approved_side(plan, truth, approved, qrels_place))
    kept, theirs, (noise, unstable) = approved.kept[0]
    base, agreed = kept.result, [s.name for s in specs if agrees(s)]
    # identical with itself, the baseline agrees 1.0 wherever the run is compared with it
    if agreed:
        ones = {q: dict.fromkeys(agreed, 1.0)
                for q, row in result["per_query"].items() if agreed[0] in row}
        rows = {q: dict(base["per_query"].get(q, {}), **ones.get(q, {}))
                for q in chain(base["per_query"], ones)}
        base = dict(base, per_query=rows, measures=aggregated(rows, specs))
        lacked = kept.zeroed["missing_run"] + [q for q in ones if q not in kept.ranked]  # zeroed
        kept = kept._replace(zeroed=dict(kept.zeroed, missing_run=list(dict.fromkeys(lacked))))
    gates = Gates(gates_of(plan, "baseline"), plan.config.gate_on, noise, unstable, len(replicas))
    out = compare(base, result, specs, plan, approved.place, gates)
    intervals = out.pop("ci95")  # the result puts them last, as without a baseline
    out.update(baseline_skipped=kept.skipped, baseline_zeroed=kept.zeroed,
               baseline_per_query=base["per_query"])
    if replicas:
        out["replicates"] = [replicate_entry(name, mine, opts)
                             for (_, name), mine in zip(replicas, theirs)]
        out.update(noise=noise, unstable=unstable)
    if opts.duplicates == "first":
        out["baseline_deduplicated"] = kept.deduplicated
    if judges_nonrelevant(truth.labels, opts.level):
        out["coverage"] = coverage(kept.coverage, with_answer(judged, truth.no_answer), specs)
    said = saved_notes(plan, [kept] + theirs)
    if said:
        out["baseline_notes"] = said
    return out, intervals, [mine.result["per_query"] for mine in theirs]


def approved_side(plan, truth, approved, qrels_place):
    """(The baseline's Evaluated, its replicates', their (noise, unstable queries), see
    replicate_noise) of the Approved side, on the candidate's labels."""
    kept = approved_evaluation(plan, truth, approved.ranked, (qrels_place, approved.place),
                               stages=approved.stages)
    theirs = [approved_evaluation(plan, truth, ranked, (qrels_place, place(name)),
                                  "the replicate %s" % place(name))
              for ranked, name in approved.replicates]
    for (_, name), mine in zip(approved.replicates, theirs):
        same_queries(kept.result, mine.result, place(name), "the replicate and the baseline")
    if not theirs:
        return kept, theirs, (None, None)
    return kept, theirs, replicate_noise(kept.result, [r.result for r in theirs], plan.specs)


def saved_notes(plan, approved):
    """What a comparison says of saved results among the baseline and its replicates: what they
    cannot give (they hold no rankings), and the version that saved them when it is not this
    one."""
    tool, base = "%s %s" % (PROG, __version__), approved[0].saved is not None
    lines = ["%s was saved by %s, and this is %s"
             % ("a replicate" if i else "the baseline", kept.saved["tool"], tool)
             for i, kept in enumerate(approved)
             if kept.saved is not None and kept.saved["tool"] != tool]
    return lines + ["a saved result holds no rankings: %s" % what for wanted, what in (
        (plan.config.explain and base, "--explain gives no ranks before the change"),
        (plan.config.pool is not None and any(kept.saved is not None for kept in approved),
         "--pool lists no unjudged documents of it"),
        (plan.curves and base, "--plot draws no curves of the baseline"),
        (plan.config.unjudged_bounds and base,
         "--unjudged-bounds gives no bounds of the baseline")) if wanted]


# --- Other labels: a candidate's (--candidate-qrels), or the baseline's (--baseline-qrels) ---

def other_labels(plan, inputs, results, files=False, flag="--"):
    """(The results, each with what the other labels change: its candidate_labels block, or its
    label_versions; the output's blocks of both sources, label_agreement; --pool's records of
    the pairs they grade apart (see disagreements), or None) of the runs' results on --qrels.
    The other labels are read as --qrels is, folded, and every run scored on them alike."""
    config = plan.config
    labels = config.candidate_qrels or config.baseline_qrels
    if not labels:
        return results, {}, None
    other = plan._replace(config=config._replace(qrels=labels, candidate_qrels=None,
                                                 baseline_qrels=None))
    option = "candidate_qrels" if config.candidate_qrels else "baseline_qrels"
    try:
        others = load_inputs(other, flag=flag)
        theirs = evaluate_runs(other, others, files)
    # what the runs lack on the other labels is said of them
    except EvalError as exc:
        raise EvalError("on the labels of %s: %s" % (long_flag(option) if flag else option,
                                                     exc)) from None
    if config.baseline_qrels:
        return versions(plan, (others, inputs), results, theirs), {}, None
    results = {name: Result(r, candidate_labels=under_candidate(r, theirs[name]))
               for name, r in results.items()}
    both = (inputs.truth.labels, others.truth.labels)
    return results, {"label_agreement": label_agreement(*both, config)}, disagreements(*both)


def labels_output(plan, results, blocks, several, root=""):
    """The output of the results {name: general result}, with the blocks of two label sources
    (see other_labels) and, of two runs or more on candidate labels, label_orderings: one
    run's result, or runs_output's of several (of none, with --candidate-qrels alone: the
    blocks only)."""
    if not several:
        return Result(*results.values(), **blocks)
    if "label_agreement" in blocks and len(results) > 1:
        blocks = dict(blocks, label_orderings=orderings(results, plan.specs))
    return dict(runs_output(plan, results, root) if results else {}, **blocks)


def label_agreement(reference, candidate, config):
    """The label_agreement block (README: "Can the judge's labels be trusted?") of two labels
    {qid: {doc: grade}}: the pairs both label and those only one does (and the queries only one
    has), the grades seen, what graded_alike gives, kappa weighted (KAPPAS) and at each grade
    but the lowest (kappa_at: grade >= t relevant on both sides), Krippendorff's alpha, the
    confusion matrix (rows the reference's grades); per grade the candidate's precision and
    recall against the reference (None where undefined); per query, graded_alike's."""
    every, per_query = [], {}
    for qid, grades in reference.items():
        theirs = candidate.get(qid, NOTHING)
        pairs = [(g, theirs[d]) for d, g in grades.items() if d in theirs]
        if pairs:
            every += pairs
            per_query[qid] = graded_alike(pairs)
    names = (" + ".join(map(place, config.qrels)), " + ".join(map(place, config.candidate_qrels)))
    if not every:
        raise EvalError("%s and %s label no (query, document) pair alike: are they labels of the "
                        "same queries, under the same IDs?" % names)
    cells = Counter(every)
    rows, cols = margins(cells)
    grades = sorted(rows | cols)
    block = {"reference": names[0], "candidate": names[1], **graded_alike(every)}
    block.update({name: kappa(cells, weight) for name, weight in KAPPAS.items()})
    # grade >= t relevant (at: t's place among the grades): two places apart when one is below
    block["kappa_at"] = {str(t): kappa(cells, lambda i, j: (i < at) != (j < at))
                         for at, t in enumerate(grades[1:], 1)}
    block["alpha_ordinal"] = ordinal_alpha(cells)
    for side, labels, other in (("reference", reference, candidate),
                                ("candidate", candidate, reference)):
        block[side + "_only"] = sum(map(len, labels.values())) - len(every)
        block["queries_%s_only" % side] = len(labels.keys() - other.keys())
    return dict(block, grades=grades,
                confusion={str(g): {str(h): cells[g, h] for h in grades} for g in grades},
                per_grade={str(g): {"precision": share(cells[g, g], cols[g]),
                                    "recall": share(cells[g, g], rows[g])} for g in grades},
                per_query=per_query)


def share(part, whole):
    """part / whole, or None where whole is 0."""
    return part / whole if whole else None


def graded_alike(pairs):
    """How far two sources' grades [(reference's, candidate's)] of the pairs both label agree:
    the pairs, the share graded alike, leniency (the candidate's mean grade minus the
    reference's), and Cohen's kappa, (n * alike - chance) / (n * n - chance) in whole numbers
    (chance: the sum over the grades of the two sides' counts multiplied), None where chance is
    all (as kappa).

    >>> graded_alike([(0, 0), (0, 0), (1, 1), (1, 0)])["kappa"]
    0.5
    """
    n, (ours, theirs) = len(pairs), zip(*pairs)
    alike = sum(map(eq, ours, theirs))
    # the sum over the grades of both sides' counts multiplied
    chance = sum(map(Counter(theirs).__getitem__, ours))
    return {"pairs": n, "exact": alike / n, "leniency": (sum(theirs) - sum(ours)) / n,
            "kappa": share(n * alike - chance, n * n - chance)}


def disagreements(reference, candidate):
    """--pool's records with --candidate-qrels: per query whose two sources grade a document
    apart, {"query_id", "relevant": {doc: None}, "reference": {doc: grade}, "candidate": ...},
    documents by the gap between their grades, largest first, and queries by their largest; its
    relevant grades filled in, a labels file."""
    found = []
    for qid, grades in reference.items():
        theirs = candidate.get(qid, NOTHING)
        gaps = {d: abs(g - theirs[d]) for d, g in grades.items() if theirs.get(d, g) != g}
        apart = sorted(gaps, key=lambda d: -gaps[d])
        if apart:
            found.append((-gaps[apart[0]], {
                "query_id": qid, "relevant": dict.fromkeys(apart),
                "reference": {d: grades[d] for d in apart},
                "candidate": {d: theirs[d] for d in apart}}))
    # a generator: nothing is sorted unless --pool is written; a stable sort: ties in order
    yield from (record for _, record in sorted(found, key=itemgetter(0)))


def under_candidate(result, theirs):
    """A run's candidate_labels block: its queries, means, values and what was left out on the
    candidate labels (--candidate-qrels); with a baseline, each measure's change on both label
    sets and whether its sign flips, the gates' breaches on the candidate labels and whether
    the verdict (a gate failed, or none) flips."""
    block = {key: theirs[key] for key in "queries measures per_query skipped zeroed".split()}
    if theirs.groups:
        block["groups"] = {name: group["measures"] for name, group in theirs.groups.items()}
    if not result.comparison:
        return block
    block["changes"] = {}
    for name, row in result.comparison.items():
        ours, other = row["delta"], theirs.comparison[name]["delta"]
        block["changes"][name] = {"reference": ours, "candidate": other,
                                  "flipped": (ours > 0) - (ours < 0) != (other > 0) - (other < 0)}
    return dict(block, breaches=jsonable(theirs)["breaches"],
                verdict_flipped=bool(result.breaches) != bool(theirs.breaches))


def orderings(results, specs):
    """The label_orderings block: per measure, Kendall's tau-b and tau_AP (the reference's order
    the truth) of the orders of the runs by their means on the two label sets, and the pairs
    of runs they order apart."""
    out = {}
    for spec in specs:
        ours = [r.measures[spec.name] for r in results.values()]
        other = [r.candidate_labels["measures"][spec.name] for r in results.values()]
        out[spec.name] = {"tau_b": tau_b(ours, other), "tau_ap": tau_ap(ours, other),
                          "swapped": [[a, b] for (a, x, y), (b, u, v) in combinations(
                              zip(results, ours, other), 2) if (x - u) * (y - v) < 0]}
    return out


def split_change(four):
    """{"retrieval", "labels", "change"}: the parts of a measure's change after - before, from
    the baseline on its labels to the run on the newer ones (four: [before, moved, relabeled,
    after]), each the mean of its two ways of taking the steps: moved is the run's value on
    the older labels, relabeled the baseline's on the newer; they sum to the change (README:
    "The labels changed").

    >>> split_change([0.5, 0.75, 0.25, 1.0])
    {'retrieval': 0.5, 'labels': 0.0, 'change': 0.5}
    """
    before, moved, relabeled, after = four
    return {"retrieval": ((moved - before) + (after - relabeled)) / 2,
            "labels": ((relabeled - before) + (after - moved)) / 2, "change": after - before}


def across(combine, sides):
    """{key: combine([each side's value])} of the keys of the last side that every side has, in
    its order."""
    return {key: combine([side[key] for side in sides]) for key in sides[-1]
            if all(key in side for side in sides)}


def versions(plan, both, results, theirs):
    """The results {name: result on --qrels} with their label_versions blocks (--baseline-qrels;
    see versions_of); both: the Inputs on the older labels and on --qrels; theirs: the results
    on the older labels.  Under --gate-on retrieval the drop gates read the retrieval part of
    each change: the change of the values averaged over the two versions."""
    changed = label_changes(*(inputs.truth.labels for inputs in both))
    out = {}
    for (name, older, _), (_, newer, _) in zip(*(inputs.runs for inputs in both)):
        result = results[name]
        tops = [inputs.baseline.ranked for inputs in both] + [older, newer]
        four = sides(theirs[name]) + sides(result)
        block = versions_of(plan, four, changed, tops)
        groups = theirs[name].groups
        if groups:
            block["groups"] = {group: split_means(sides(groups[group]) + sides(part))
                               for group, part in result.groups.items()}
        out[name] = Result(result, label_versions=block)
        if plan.config.gate_on == "retrieval":
            kept = [b for b in result.breaches if not b.gate.needs]
            # four[2::-2]: the baseline's values on --qrels, then on the older labels, whose
            # order across keeps (four[3::-2]: the run's)
            out[name]["breaches"] = kept + retrieval_breaches(plan, averaged(four[2::-2]),
                                                              averaged(four[3::-2]))
    return out


def sides(result):
    """[(means, per_query) of the baseline, of the run] of a comparison's result, or of a group's
    block (its per_query {})."""
    return [({n: row["baseline"] for n, row in result["comparison"].items()},
             result.get("baseline_per_query", {})),
            (result["measures"], result.get("per_query", {}))]


def split_means(four):
    """{measure: {"retrieval", "labels", "change"}} of four (means, per_query), as versions gives
    them (see split_change), of the measures all four give."""
    return across(split_change, [means for means, _ in four])


def versions_of(plan, four, changed, tops):
    """A run's label_versions block: each measure's change from the baseline on its labels to
    the run on --qrels split (see split_change; four: the means and values of each, as
    versions gives them), in the mean and in each query both versions score where a part is
    not 0, and of those queries the label changes (changed: see label_changes) of the documents
    in either run's top k under either version (tops: their rankings)."""
    per_query = {}
    for qid, parts in across(partial(across, split_change), [rows for _, rows in four]).items():
        moved = {name: part for name, part in parts.items() if any(part.values())}
        if moved:
            per_query[qid] = moved
    k = plan.opts.top_k
    docs = {qid: top_changes(changed[1].get(qid, NOTHING), tops, qid, k) for qid in per_query}
    return {"qrels": " + ".join(map(place, plan.config.baseline_qrels)), "labels": changed[0],
            "measures": split_means(four), "per_query": per_query,
            "label_changes": {qid: found for qid, found in docs.items() if found}}


def label_changes(old, new):
    """({"added", "removed", "regraded", "queries_added", "queries_removed"}: how many labels
    one version has and the other not, or grades apart; {qid: {doc: {"before": the older
    grade, "after": the newer}}} of those, None where a version has none) of two versions of
    labels {qid: {doc: grade}}."""
    found = {}
    for qid in dict.fromkeys(chain(old, new)):
        before, after = old.get(qid, NOTHING), new.get(qid, NOTHING)
        docs = {d: {"before": before.get(d), "after": after.get(d)} for d in chain(before, after)
                if before.get(d) != after.get(d)}
        if docs:
            found[qid] = docs
    # 1: added (no grade before), -1: removed (none after), 0: regraded
    kinds = Counter((g["before"] is None) - (g["after"] is None)
                    for docs in found.values() for g in docs.values())
    return {"added": kinds[1], "removed": kinds[-1], "regraded": kinds[0],
            "queries_added": len(new.keys() - old.keys()),
            "queries_removed": len(old.keys() - new.keys())}, found


def top_changes(docs, tops, qid, k):
    """{doc: {"before", "after"}} of a query's label changes (docs) of the documents in the top
    k of any of these rankings {qid: Ranking}, in their order."""
    seen = dict.fromkeys(doc for ranked in tops
                         for doc, rank in _seen_of(ranked.get(qid))[0].items() if rank <= k)
    return {doc: docs[doc] for doc in seen if doc in docs}


def averaged(two):
    """{"measures", "per_query"} of two (means, per_query): each value the mean of the two, of
    the queries both score, in the order of the last's."""
    means, rows = zip(*two)
    return {"measures": across(_mean, means), "per_query": across(partial(across, _mean), rows)}


def retrieval_breaches(plan, baseline, run):
    """The breaches of --max-mean-drop and --max-query-drop read on the retrieval part of each
    change (--gate-on retrieval): the change from the baseline's values to the run's, each
    averaged over the label versions."""
    breaches = compare(baseline, run, plan.specs, plan, gates=Gates(gates_of(plan, "baseline")))
    return [breach._replace(rule={"part": "retrieval"}) for breach in breaches["breaches"]]

# === Library ===

# The command line's answers as calls: each returns the dict that --format json
# prints for the same inputs and options (breaches included: a failed gate is
# no exception).  Inputs are JSON-shaped, as in a fixture; they are never modified.

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
    labels = qrels_from_json(qrels, None, "qrels")
    ranked = judge_run(rankings_from_json(runs, None, "runs", None), Truth(labels), Reading(),
                       None, "runs")
    judged, skipped, zeroed = judge_queries(labels, ranked)
    return seed_result(run_evaluation(judged, seed_specs(k), skipped, zeroed), k)


def seed_result(result, k):
    """The seed script's output shape from a general result with R@k and RR@k."""
    r, rr = "R@%d" % k, "RR@%d" % k
    return {"k": k, "queries": result["queries"],
            "mean_recall_at_k": result["measures"][r], "mrr_at_k": result["measures"][rr],
            "per_query": {q: {"recall": row[r], "rr": row[rr]}
                          for q, row in result["per_query"].items()}}


def score_run(qrels, run, measures=None, *, relevance_level=1, depth=None, judged_only=False,
              missing_run="error", unlabeled="error", no_relevant="error", chunk_separator=None,
              match="id", explain=False, unjudged_bounds=False, duplicates="error", ties=False,
              ci=False, seed=0, groups=None, evidence=None, lengths=None, no_answer=None,
              power=False, clusters=None, min_mean=None, min_query=None, gate_on="mean",
              empty_labels="error", access=None, stages=None, index=None, as_tool=None):
    """Score one run: the dict that ``--format json`` prints.

    qrels: {qid: [relevant doc, ...]} or {qid: {doc: grade}} (or None when evidence stands
    in); run: {qid: [doc, ...]} in rank order or {qid: {doc: score}}; measures: names as for
    -m (a list, or one comma-separated string), default R@3 and RR@3; groups: {name: [qid,
    ...]}; evidence: {qid: evidence sets} as in a fixture; lengths: {ranked ID: token count};
    no_answer: [qid, ...] of the questions with no answer; min_mean and min_query: floors {measure:
    X}; access: {"documents": {doc: [principal, ...]}, "queries": {qid: [principal, ...]}}
    (--access: any leak is in "leaks"); stages: {name: run} of the pipeline's earlier stages,
    earliest first (see --stage); index: [ID, ...] the store holds; as_tool: "beir" or
    "llamaindex@0.12.2" (see --as); the other options are the command line's long options, with
    underscores.

    >>> score_run({"q1": ["d1"]}, {"q1": ["d9", "d1"]}, ["R@1", "RR"])["measures"]
    {'R@1': 0.0, 'RR': 0.5}
    """
    return _library_call(locals(), {"run": run})["run"]


def compare_runs(qrels, baseline, candidate, measures=None, *, relevance_level=1, depth=None,
                 judged_only=False, missing_run="error", unlabeled="error", no_relevant="error",
                 chunk_separator=None, match="id", explain=False, unjudged_bounds=False,
                 duplicates="error", ties=False, ci=False, seed=0, permutations=10000,
                 max_mean_drop=None, max_query_drop=None, groups=None, max_group_drop=None,
                 evidence=None, lengths=None, no_answer=None, replicates=None, gate_on="mean",
                 power=False, clusters=None, min_mean=None, min_query=None, empty_labels="error",
                 access=None, stages=None, index=None, baseline_stages=None, as_tool=None,
                 baseline_qrels=None):
    """Compare a candidate run with a baseline on the same labels (qrels None: agreement measures
    only, such as "RBO"): the dict that ``--format json --baseline`` prints, gate breaches under
    "breaches".  replicates: [run, ...], more runs of the baseline's configuration (see
    --replicate); gate_on: "mean", "interval", "noninferiority" or "retrieval" (see --gate-on);
    baseline_qrels: the labels the baseline was approved on, when qrels is newer (see
    --baseline-qrels: "label_versions").

    >>> compare_runs({"q1": ["d1"]}, {"q1": ["d1"]}, {"q1": ["d2"]},
    ...              "R@1")["comparison"]["R@1"]["lost"]
    ['q1']
    """
    return _library_call(locals(), {"candidate": candidate})["candidate"]


def score_runs(qrels, runs, measures=None, *, baseline=None, relevance_level=1, depth=None,
               judged_only=False, missing_run="error", unlabeled="error", no_relevant="error",
               chunk_separator=None, match="id", explain=False, unjudged_bounds=False,
               duplicates="error", ties=False, ci=False, seed=0, permutations=10000,
               max_mean_drop=None, max_query_drop=None, groups=None, max_group_drop=None,
               evidence=None, lengths=None, no_answer=None, replicates=None, gate_on="mean",
               power=False, clusters=None, min_mean=None, min_query=None, empty_labels="error",
               access=None, stages=None, index=None, baseline_stages=None, as_tool=None,
               pairwise=False, baseline_qrels=None, candidate_qrels=None):
    """Score several runs {name: run} (and compare each with a baseline, when given): the
    dict that ``--run A --run B --format json`` prints, {"runs": {name: result}}, with
    Holm's correction over every run and measure; pairwise: also "pairs", each run compared
    with each one before it (see --pairwise).

    >>> score_runs({"q1": ["d1"]}, {"a": {"q1": ["d1"]}, "b": {"q1": ["d2"]}},
    ...            "R@1")["runs"]["b"]["measures"]
    {'R@1': 0.0}
    """
    return _library_call(locals(), _named_runs(runs, candidate_qrels), "runs.")


def compare_labels(reference, candidate, runs=None, measures=None, **options):
    """Compare two sources of labels {qid: labels} (the candidate's under test, such as an LLM
    judge's, against the reference): the dict that ``--qrels REFERENCE --candidate-qrels
    CANDIDATE --format json`` prints, "label_agreement"; with runs {name: run}, as score_runs
    scores them (options: its keywords), each with its "candidate_labels", and with two or
    more "label_orderings".

    >>> compare_labels({"q1": {"d1": 1, "d2": 0}}, {"q1": {"d1": 1, "d2": 1}}
    ...                )["label_agreement"]["leniency"]
    0.5
    """
    return score_runs(reference, {} if runs is None else runs, measures,
                      candidate_qrels=candidate, **options)


def _named_runs(runs, labels=None):
    """score_runs' runs {name: run}, refused when a name is no ID or there is none (but beside
    candidate labels: compare_labels')."""
    for name in check_object(runs, "runs", "run names to runs"):
        check_id(name, "runs", what="run name")
    if not runs and labels is None:
        raise EvalError("runs: no run to score")
    return runs


def read_qrels(path, *, fields=None, match="id"):
    """{qid: {doc: grade}} of a qrels file: TREC or BEIR text, JSON, JSON Lines, records or a
    fixture (gzip too); fields: {role: key} as --fields names a log's fields; match: "text" or
    "contains" reads labels that are texts (normalized), as --match does.

    Raises EvalError, with the CLI's one-line message, on bad data.
    """
    return _read(path, "labels", fields, match)[0]


def read_run(path, *, fields=None, match="id"):
    """The rankings of a run file (TREC, JSON, JSON Lines, records or a fixture's; gzip too) in
    the JSON forms: {qid: {doc: score}} from scored input, {qid: [doc, ...]} from listed input;
    fields and match as for read_qrels."""
    return _read(path, "run forms", fields, match)


def _read(path, role, fields, match):
    """What the library's reader of a role reads, with fields and match checked as --fields and
    --match are."""
    match = _checked_library_options({"match": match})["match"]
    opts, kinds = Reading(fields=fields_table(fields), match=match), []
    with one_reading():
        value = load(_path(path), role, Known(opts=opts), kinds)
    check_fields_read(opts.fields, kinds)
    return value


def _path(path):
    """A file name given to the library: a str or a path-like object."""
    try:
        path = os.fspath(path)
    except TypeError:
        raise EvalError("a file name must be a string or a path, not %s"
                        % typed(path)) from None
    if not isinstance(path, str):
        raise EvalError("a file name must be text, not %s" % show(path))
    return path


def _library_call(keywords, runs, root=""):
    """{name: result} of a library call's JSON-shaped runs {name: run}, read and evaluated as
    the command line's files are; keywords: its own, as given (its locals(): the labels, the
    baseline JSON or None, the other inputs and the options)."""
    options = {n: v for n, v in keywords.items() if n not in ("run", "runs", "candidate")}
    config = configure(options, keywords=True)
    plan, replicates = make_plan(config), config.replicate
    if replicates is not None and not isinstance(replicates, (list, tuple)):
        raise EvalError("replicates must be a list of runs, not %s" % show(replicates))
    own = next((i for i, r in enumerate(replicates or ()) for run in runs.values() if r is run),
               None)
    if own is not None:
        raise EvalError("replicates[%d] is the candidate's own run: a replicate is another run "
                        "of the baseline's configuration, and the candidate's would pass its "
                        "change as noise" % own)
    config = _named_inputs(config, runs, root)
    check_options(config)
    plan = plan._replace(config=config)
    inputs = load_inputs(plan, flag="")
    plan = with_clusters(plan, inputs)
    results = evaluate_runs(plan, inputs)
    results, blocks, _ = other_labels(plan, inputs, results, flag="")
    results = {name: jsonable(results[root + name]) for name in runs}
    # score_runs' and compare_labels'
    return labels_output(plan, results, blocks, True, root) if root else results


def _named_inputs(config, runs, root):
    """The Config of a library call whose inputs are Values where the command line's are file
    names, each under the name its messages give it."""
    files = {o.name: Value(o.name, getattr(config, o.name)) for o in OPTIONS
             if o.stage == "input" and o.kind == "file" and getattr(config, o.name) is not None}
    replicates = config.replicate and [Value("replicates[%d]" % i, run)
                                       for i, run in enumerate(config.replicate)]
    labels = {name: None if getattr(config, name) is None else [Value(name, getattr(config, name))]
              for name in ("qrels", "candidate_qrels", "baseline_qrels")}
    runs = [Value(root + name, run) for name, run in runs.items()]
    stages = {name: getattr(config, name) and [(n, Value("%s.%s" % (key, n), run))
                                               for n, run in getattr(config, name)]
              for name, key in (("stage", "stages"), ("baseline_stage", "baseline_stages"))}
    return config._replace(run=runs, replicate=replicates, **labels, **stages, **files)


# === Output ===

def format_json(result):
    """The JSON text of a result (as json.dumps with indent 2 writes it), in pieces: json.dumps
    holds every small chunk of the encoder at once, more memory than the whole evaluation
    with --explain at msmarco-dev size."""
    chunks = json.JSONEncoder(indent=2).iterencode(jsonable(result))
    for batch in iter(lambda: list(islice(chunks, 8192)), []):
        yield "".join(batch)


def _number(value, digits=4):
    if value is None:  # a tie bound --ties could not give
        return "-"
    if isinstance(value, int):
        return str(value)
    return repr(value) if digits is None else "%.*f" % (digits, value)


def format_trec(result, runid=None):
    """trec_eval -q style: measure<TAB>query<TAB>value, then the 'all' rows (runid: the run's
    tag, for -m runid), then each group's, its query group:NAME."""
    lines = ["%s\t%s\t%s" % (trec_label(name), qid, _number(value, None))
             for qid, row in result.per_query.items() for name, value in row.items()]
    if runid is not None:
        lines.append("runid\tall\t%s" % runid)
    for label, block in [("all", result)] + [("group:" + g, b) for g, b in result.groups.items()]:
        lines.append("num_q\t%s\t%d" % (label, block["queries"]))
        # num_q counts the questions with an answer
        if "no_answer_queries" in block:
            lines.append("num_no_answer\t%s\t%d" % (label, block["no_answer_queries"]))
        lines += ["%s\t%s\t%s" % (trec_label(name), label, _number(value, None))
                  for name, value in block["measures"].items()]
    return "\n".join(lines)


def _columns(rows):
    """Rows of cells as aligned lines: the first column left, the others right."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join([r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])])
            for r in rows]


def _signed(value):
    return "%+.4f" % value


def format_comparison(result):
    """The reviewer's report: a row per measure, breaches, lost and worst queries, histograms."""
    lines = _columns(_comparison_rows(result))
    if result.breaches or result.leaks:
        lines += _section("gate breaches:", _breach_lines(result))
    lost, unstable, moved, histograms = changes(result)
    lines += ["lost (a hit before, nothing relevant now) by %s: %s%s"
              % (name, ", ".join(qids), _unjudged_of(", ".join(marked)))
              for name, qids, marked in lost]
    lines += ["unstable (values differ among the baseline and its replicates) by %s: %s"
              % (name, first_few(qids, 20)) for name, qids in unstable]
    for title, regressed, shown in moved:
        rows = [[name, q, before + " ->", after, delta] + marks
                for name, q, before, after, delta, *marks in regressed]
        lines += _section(title + ":", [line.rstrip() for line in _columns(rows)] + [shown])
    for name, counts in histograms:
        lines += ["", "per-query deltas of %s:" % name]
        lines += ["  %-13s %5d %s" % (label, n, "#" * (n * 40 // max(1, result.queries)))
                  for (label, _), n in zip(HISTOGRAM, counts)]
    cover = result.coverage
    if cover:
        lines += ["", "label coverage (%s): baseline %.4f, candidate %.4f"
                  % (cover["measure"], cover["baseline"], cover["candidate"])]
    return "\n".join(lines)


def _comparison_rows(result):
    """Header and a row per measure of a comparison, as the table and Markdown show it, and
    with replicates beside each measure its noise among them and its unstable queries."""
    rows = [["measure", "baseline", "candidate", "delta", "95% CI of delta", "p", "p (Holm)"]]
    if result.noise:
        rows[0] += ["noise", "unstable"]
    for name, c in result.comparison.items():
        row = [name, _number(c["baseline"]), _number(c["candidate"]), _signed(c["delta"]),
               "[%s, %s]" % tuple(map(_signed, c["ci95"])),
               _number(c["p_value"]), _number(c["p_holm"])]
        if result.noise:
            row += [_number(result.noise[name]), str(len(result.unstable[name]))]
        rows.append(row)
    return rows


def changes(result):
    """The model of a comparison's per-query changes that the table and Markdown render:
    [(measure, lost queries, those of them marked unjudged)], [(measure, unstable queries)], the
    [(title, rows, shown)] of the worst regressed and the agreement measures' most changed
    queries (see _worst_regressed), those with rows, and [(measure, its histogram's counts)]."""
    marked = unjudged_marked(result)
    lost = [(name, c["lost"], [q for q in c["lost"] if q in marked.get(name, ())])
            for name, c in result.comparison.items() if c.get("lost")]
    unstable = [(name, qids) for name, qids in result.unstable.items() if qids]
    moved = [m for m in map(partial(_worst_regressed, result), (False, True)) if m[1]]
    return lost, unstable, moved, [(name, _histogram(result, name)) for name in result.comparison]


def _breach_lines(result):
    """The breach lines a report shows: every mean and group breach, and of each measure's
    per-query breaches the largest ``each``, then how many more (JSON holds them all)."""
    lines = []
    by_measure = groupby(result.get("breaches", []), lambda b: (b.measure, b.query is not None))
    for (measure, per_query), breaches in by_measure:
        breaches = list(breaches)
        lines += [breach_text(b) for b in (breaches[:BREACHES_SHOWN] if per_query else breaches)]
        if per_query and len(breaches) > BREACHES_SHOWN:
            first = breaches[0]
            went = "dropped by more than" if first.gate.needs else "below"
            more = len(breaches) - BREACHES_SHOWN
            lines.append("%s: %d more queries %s %s %s (all of them in the JSON output)"
                         % (measure, more, went, first.gate.flag, first.limit))
    return lines + [leak_text(leak) for leak in result.leaks]


def leak_text(leak):
    """One leak as every report names it (README: "Who may read it?")."""
    return "leak: query %s: document %s at rank %d, which the query may not read (--access)" % (
        show(leak["query"]), show(leak["document"]), leak["rank"])


def _unjudged_of(marked):
    """What the lost line of a report adds about its queries marked unjudged (README: "Did it
    really miss?")."""
    if not marked:
        return ""
    return "; unjudged documents in the candidate's top k: %s" % marked


def _worst_regressed(result, agreeing=False):
    """(title, rows, shown) of the worst regressed queries (agreeing: of the agreement measures,
    those that changed most): (measure, query, before, after, delta) of each measure's ``worst``
    largest drops, as text; with replicates a cell more, "unstable" for a query whose values
    differ among them, else empty; under --unjudged-bounds one more, "unjudged" for a marked
    query (README: "Did it really miss?"); and a line saying how many of each measure's are
    shown."""
    base, cand, rows, shown = result.baseline_per_query, result.per_query, [], []
    # a report's length
    worst = 5
    unstable = {name: set(qids) for name, qids in result.unstable.items()}
    flags = [(flagged, word) for flagged, word in (
        (unstable, "unstable"), (unjudged_marked(result), "unjudged")) if flagged]
    for name, c in result.comparison.items():
        if ("changed" in c) != agreeing:
            continue
        drops = sorted(fell(c).items(), key=lambda pair: pair[1])
        for q, d in drops[:worst]:
            marks = tuple(word if q in flagged.get(name, ()) else "" for flagged, word in flags)
            rows.append((name, q, _number(base[q][name]), _number(cand[q][name]),
                         _signed(d)) + marks)
        if len(drops) > worst:
            shown.append("%s %d of %d" % (name, worst, len(drops)))
        elif drops:
            shown.append("%s all %d" % (name, len(drops)))
    moved, title = "regressed", "worst regressed queries"
    if agreeing:
        moved, title = "changed", "changed most (agreement with the baseline)"
    return title, rows, "shown, of the %s queries: %s" % (moved, ", ".join(shown))


def _histogram(result, name):
    """How many queries changed by how much (HISTOGRAM's bins) in a measure."""
    c = result.comparison[name]
    moved = dict(c.get("improved", {}), **fell(c))
    deltas = [moved.get(q, 0.0) for q, row in result.per_query.items() if name in row]
    return [sum(inside(d) for d in deltas) for _, inside in HISTOGRAM]


def explain_lines(block):
    """An explain block as report lines: its counts, then a line per query (at most ``limit``)."""
    k, c, texts, name = block["k"], block["counts"], block.get("texts"), str
    if texts:
        name = lambda d: "%s %s" % (d, show(texts[d]))
    unranked = ""
    if c["not_ranked"]:
        unranked = ", %d not in the ranking" % c["not_ranked"]
    lines = ["why it missed, within the top %d: %s missed (%d absent%s, %d below), %d cut; %d "
             "with unjudged documents in the top %d"
             % (k, n_queries(c["missed"]), c["absent"], unranked, c["below"], c["cut"],
                c["unjudged"], k)]
    lines += ["%s: %s" % (q, "; ".join(_explain_parts(e, k, name)))
              for q, e in islice(block["queries"].items(), 20)]
    more = len(block["queries"]) - 20
    if more > 0:
        lines.append("and %d more (all of them in the JSON output)" % more)
    return lines


def _explain_parts(e, k, name):
    """What a report says of one query of an explain block: the cause, where each relevant
    document missing went, those a floor or a budget cut, the unjudged in the top k, and with a
    baseline the ranks before -> after (name: a document as the report shows it)."""
    cause, gone = e.get("cause"), "absent"
    # the ranking may be all a log kept
    if cause == "not_ranked":
        cause, gone = "not in the ranking (%d ranked)" % e["ranked"], "not ranked"
    # in a pipeline, where each was lost
    fates = {unit: FATE_TEXTS[f["fate"]] % f for unit, f in e.get("fates", {}).items()}
    parts = [cause, _few("%s %s" % (name(d), fates.get(d, gone if r is None else "at %d" % r))
                         for d, r in e.get("missing", {}).items())]
    parts += ["cut by %s: %s" % (m, _few(map(name, docs))) for m, docs in e.get("cut", {}).items()]
    if "unjudged" in e:
        parts.append("unjudged in the top %d: %s" % (k, _few(map(name, e["unjudged"]))))
    if "ranks" in e:
        moves = ["%s %s -> %s" % (name(d), *("absent" if r is None else r for r in ranks))
                 for d, ranks in _moves_first(e["ranks"], k)]
        parts.append("ranks before -> after: " + _few(moves))
    return [p for p in parts if p]


# What a report says of a fate (see funnel)
FATE_TEXTS = {"not_indexed": "not indexed", "not_retrieved": "not retrieved by %(stage)s",
              "removed": "removed by %(stage)s", "below_k": "at %(rank)d (%(stage_rank)d before)",
              "over_budget": "over the budget"}
FUNNEL = "relevant documents (or evidence slots) still there, and lost, along the pipeline"


def funnel_table(block):
    """Header and a row per row of a funnel block (see funnel): the relevant units still there
    (and their share), the mean per-query recall there, and how many were lost there; the
    baseline pipeline's beside, first."""
    sides = funnel_sides(block)
    rows = [["stage"] + [p + h for p, _ in sides for h in ("relevant", "recall", "lost")]]
    for i, row in enumerate(block["rows"]):
        rows.append([row["stage"]])
        for r in (side["rows"][i] for _, side in sides):
            rows[-1] += ["%d (%.1f%%)" % (r["relevant"], 100 * r["share"]), _number(r["recall"]),
                         str(r["lost"])]
    return rows


def funnel_sides(block):
    """[(prefix, funnel)] of a funnel block ({}: none): the baseline pipeline's first, when it
    has one."""
    return [(p, side) for p, side in (("baseline ", block.get("baseline")), ("", block)) if side]


def _moves_first(ranks, k):
    """[(document, (rank before, rank after)), ...]: those that crossed the cutoff k first, then
    the largest moves (absent: past every rank)."""
    def order(item):
        before, after = (sys.maxsize if r is None else r for r in item[1])
        return (before <= k) == (after <= k), -abs(after - before)
    return sorted(ranks.items(), key=order)


def _few(items):
    """'a, b, c and 4 more': a report's line of documents, never a wall (JSON holds them all)."""
    items = list(items)
    if len(items) <= 5:
        return ", ".join(items)
    return ", ".join(items[:5]) + " and %d more" % (len(items) - 5)


def format_table(result, per_query=False):
    """Aligned columns a person reads: the means first, per-query rows on request."""
    names, ties = list(result.measures), result.ties.get("measures", {})
    # the Markdown's rows, a column per measure
    rows = [[_TABLE_LABELS.get(row[0], row[0]), *row[1:]]
            for row in zip(*_means_rows(result, "ci95" in result))]
    # a * marks a measure whose mean depends on how tied scores are ordered
    rows[0][1:] = [n + ("*" if n in ties and ties[n]["high"] != ties[n]["low"] else "")
                   for n in names]
    if per_query:
        rows += [[qid] + _cells(row, names) for qid, row in result.per_query.items()]
    lines = _columns(rows) + ["%s evaluated%s" % (n_queries(result.queries), _unanswered(result))]
    tied = result.ties.get("queries")
    if tied:
        lines.append("* depends on the order of tied scores in %s: %s"
                     % (n_queries(len(tied)), first_few(tied, 10)))
    if result.folded:
        lines.append(_folded_text(result))
    for kind, lists in (("skipped", result.skipped),
                        ("scored as empty or without relevant labels", result.zeroed)):
        lines += ["%s (%s): %d: %s"
                  % (kind, reason.replace("_", " "), len(qids), first_few(qids, 10))
                  for reason, qids in lists.items() if qids]
    if result.comparison:
        lines += ["", format_comparison(result)]
    # a floor's, without a baseline
    elif result.breaches or result.leaks:
        lines += _section("gate breaches:", _breach_lines(result))
    if result.groups:
        lines += _section("groups:", _columns(_group_rows(result))) + _group_footnotes(result)
    lines += label_lines(result, {"": result}, False, per_query)
    return "\n".join(lines + _explained_sections(result))


def _explained_sections(result, label=""):
    """A text report's sections of a result's --explain and funnel blocks, when it has them
    (label: with several runs, the run's and ": ")."""
    lines = []
    if result.explain:
        head, *rest = explain_lines(result.explain)
        lines += _section(label + head, rest)
    if result.funnel:
        lines += _section(label + FUNNEL + ":", _columns(funnel_table(result.funnel)))
    return lines


_TABLE_LABELS = {"measure": "query", "mean": "all", "lowest (ties)": "ties: lowest",
                 "highest (ties)": "ties: highest"}


def _section(head, lines):
    """A section of a text report: a blank line, its head, its lines indented."""
    return ["", head] + ["  " + line for line in lines]


def _bullets(lines):
    """Report lines as the items of a Markdown list."""
    return ["- " + _md(line) for line in lines]


def _folded_text(result):
    """What the reader folded: chunks into an earlier chunk of their document, or under --match
    contains the texts whose labels an earlier text had claimed."""
    removed, queries = result.folded["total"], n_queries(len(result.folded["per_query"]))
    if result.several_labels:
        return "removed %s whose labels an earlier text had claimed, in %s" % (
            _many(removed, "ranked text"), queries)
    return "folded %d ranked chunks into an earlier chunk of their document, in %s" % (
        removed, queries)


def _interval(ci):
    """A 95% interval as a report's cell: '[0.2500, 0.7500]', or empty without one."""
    if not ci:
        return ""
    return "[%.4f, %.4f]" % tuple(ci)


def _cells(row, names):
    """A query's values of the measures, as a table shows them; empty for a measure that does
    not score the query (Abstain, or any other, on a query without an answer)."""
    return [_number(row[n]) if n in row else "" for n in names]


def _unanswered(result):
    """', and 2 without an answer' when some queries have no answer in the corpus."""
    if "no_answer_queries" not in result:
        return ""
    return ", and %d without an answer" % result.no_answer_queries


def _group_rows(result):
    """Header and a row per group: its queries, then each measure's mean or, with a
    baseline, the candidate's mean, the change and a * when Holm's p < 0.05 (and with
    replicates the group's noise, which its gate allows)."""
    names, rows, per_query = list(result.measures), [], result.per_query
    for group, block in result.groups.items():
        cells, size = [_group_cell(block, n) for n in names], block["queries"]
        # Abstain's: the unanswered
        counts = [sum(n in per_query[q] for q in block["members"]) for n in names]
        # a count beside the mean it counts
        for i, count in enumerate(counts):
            if cells[i] and count != size:
                cells[i] += " over %d%s" % (count, _few_mark(count))
        # of the means it counts
        mark = _few_mark(size) if size in counts else ""
        rows.append([group, "%d%s" % (size, mark)] + cells)
    return [["group", "queries"] + names] + rows


def _group_cell(block, name):
    """A group's cell of a measure: its mean or, with a baseline, its change (see _change_cell),
    and with replicates its noise; empty when no query of the group is scored by it."""
    if name not in block["measures"]:
        return ""
    cell = _number(block["measures"][name])
    if "comparison" in block:
        cell = _change_cell(block["comparison"][name])
    if "noise" in block:
        cell = "%s noise %s" % (cell, _number(block["noise"][name]))
    return cell


def _few_mark(n):
    return " (few)" if n < SMALL_GROUP else ""


def _change_cell(c):
    """'0.5000 (-0.2500)*': a mean, its change from the baseline, * when Holm's p < 0.05."""
    star = (c["p_holm"] or 1) < 0.05  # none: in no Holm family
    return "%s (%s)%s" % (_number(c["candidate"]), _signed(c["delta"]), "*" if star else "")


def _group_footnotes(*results):
    """What the marks of the group rows of these results mean."""
    blocks = [block for r in results for block in r.groups.values()]
    lines = []
    if any(block["small"] for block in blocks):
        lines.append("(few): fewer than %d queries, a mean closer to noise than to a finding "
                     "(still gated)" % SMALL_GROUP)
    if any("comparison" in block for block in blocks):
        lines.append(_change_note("groups"))
    if any(block.get("no_answer_queries") for block in blocks):
        lines.append("queries: those with an answer; a group's questions without one count in "
                     "Abstain alone")
    return lines


_MD_SPECIAL = re.compile(r"[\\`*_{}\[\]<>~&!]")


def _md(text):
    """Text for Markdown, its markup characters escaped: an ID holding '|' or '*' can break no
    table (a '|' becomes an entity: no splitter can take it for a cell's end) and start no
    emphasis."""
    return _MD_SPECIAL.sub(r"\\\g<0>", str(text)).replace("|", "&#124;")


def _md_table(rows, labels=1):
    """A GitHub table: the first row is the header, the first ``labels`` columns text
    (escaped), the rest numbers we formatted (right-aligned, nothing to escape)."""
    header = "| " + " | ".join(map(_md, rows[0])) + " |"
    rule = "|" + " --- |" * labels + " ---: |" * (len(rows[0]) - labels)
    return [header, rule] + ["| " + " | ".join(list(map(_md, row[:labels])) + row[labels:]) + " |"
                             for row in rows[1:]]


def format_markdown(result, per_query=False):
    """GitHub-flavoured Markdown for a pull request or a CI summary page: breaches first,
    then the means (or the comparison), lost and worst regressed queries, changes."""
    lines = ["### Retrieval evaluation: %s%s" % (n_queries(result.queries), _unanswered(result)),
             ""]
    lines += _md_breaches(_breach_lines(result), len(result.breaches) + len(result.leaks))
    if result.comparison:
        lines += _md_table(_comparison_rows(result)) + [""] + _md_changes(result)
    else:
        lines += _md_table(_means_rows(result, bool(result.ci95))) + [""]
    lines += _bullets(note.text for note in notes(result) if note.kind != "gate failed")
    if result.groups:
        lines += ["", "Groups:", ""] + _md_table(_group_rows(result)) + [""]
        lines += _bullets(_group_footnotes(result))
    if result.explain:
        lines += _md_explain(result.explain)
    if result.funnel:
        lines += ["", "**%s**" % FUNNEL, ""] + _md_table(funnel_table(result.funnel))
    lines += label_lines(result, {"": result}, True, per_query)
    if per_query:
        names = list(result.measures)
        rows = [[qid] + _cells(row, names) for qid, row in result.per_query.items()]
        lines += ["", "<details><summary>Per query</summary>", ""]
        lines += _md_table([["query"] + names] + rows) + ["", "</details>"]
    # one blank line between blocks, however built
    return re.sub("\n{3,}", "\n\n", "\n".join(lines)).rstrip("\n")


def _md_explain(block):
    """An explain block for a CI page: the counts and the first queries, the rest folded away."""
    head, *rest = explain_lines(block)
    lines = ["", "**%s**" % _md(head[0].upper() + head[1:]), ""]
    lines += _bullets(rest[:5])
    if rest[5:]:
        lines += ["", "<details><summary>%d more</summary>" % (len(block["queries"]) - 5), ""]
        lines += _bullets(rest[5:]) + ["", "</details>"]
    return lines + [""]


def _md_breaches(breaches, count):
    """The breaches first, for a reviewer who reads no further (count: how many, when the
    lines leave some out); nothing when there are none."""
    if not breaches:
        return []
    plural = "" if count == 1 else "es"
    return ["**%d gate breach%s**" % (count, plural), ""] + _bullets(breaches) + [""]


def _means_rows(result, ci):
    """Header and a row per measure: mean, and its interval (ci: whether to show it) and tie
    bounds when asked for."""
    ties = result.ties.get("measures", {})
    rows = [["measure", "mean"]]
    if ci:
        rows[0].append("95% CI")
    if ties:
        rows[0] += ["lowest (ties)", "highest (ties)"]
    for name, mean in result.measures.items():
        row = [name, _number(mean)]
        if ci:
            row.append(_interval(result.ci95.get(name)))
        if ties:
            row += [_number(ties[name]["low"]), _number(ties[name]["high"])]
        rows.append(row)
    return rows


def _md_changes(result):
    """Lost queries, the worst regressed ones and a histogram of per-query changes."""
    lost, unstable, moved, histograms = changes(result)
    lines = ["- **lost** by %s (a hit before, nothing relevant now): %s%s"
             % (_md(name), _md(first_few(qids, 20)), _md(_unjudged_of(first_few(marked, 20))))
             for name, qids, marked in lost]
    lines += ["- **unstable** by %s (values differ among the baseline and its replicates; not "
              "gated per query): %s" % (_md(name), _md(first_few(qids, 20)))
              for name, qids in unstable]
    header = ["measure", "query", "baseline", "candidate", "delta"]
    if result.unstable:
        header.append("replicates")
    if unjudged_marked(result):
        header.append("labels")
    for title, regressed, shown in moved:
        lines += ["", title.capitalize() + ":", ""]
        lines += _md_table([header] + list(map(list, regressed)), labels=2) + ["", _md(shown)]
    rows = [["per-query change"] + [label for label, _ in HISTOGRAM]]
    rows += [[name] + list(map(str, counts)) for name, counts in histograms]
    return lines + [""] + _md_table(rows) + [""]


def format_csv(result):
    """A header row, then a row per evaluated query: its ID, then each measure's value
    (with a comparison, each measure's baseline value, candidate value and delta, and with
    replicates 1 when the query is unstable, else 0), then with groups a column per group:
    1 for its members, else 0."""
    base, rows, columns = result.baseline_per_query, result.per_query, []
    unstable = {n: set(qids) for n, qids in result.unstable.items()}
    marked = unjudged_marked(result)
    for n in result.measures:
        value = partial(_cell, rows, n)
        if not base:
            columns.append((n, value))
            continue
        columns += [("%s baseline" % n, lambda q, n=n: base[q][n] if n in rows[q] else ""),
                    ("%s candidate" % n, value),
                    ("%s delta" % n, partial(_delta_cell, value, base, n))]
        if unstable:
            columns.append(("%s unstable" % n, partial(_flag_cell, unstable, n, rows)))
        if n in marked:
            columns.append(("%s unjudged" % n, partial(_flag_cell, marked, n, rows)))
    columns += explain_columns(result.explain, "") + leak_columns(result, "")
    columns += funnel_columns(result.funnel, "") + label_columns(result, "")
    return _csv_text(list(rows), columns, [result])


def _delta_cell(value, base, name, qid):
    """A query's change of a measure from the baseline (value: its cell), or "" where the
    measure does not score it."""
    mine = value(qid)
    if mine == "":
        return ""
    return mine - base[qid][name]


def explain_columns(block, label):
    """CSV columns of an explain block, or none: per query the documents absent, not in a ranking
    that may be all a log kept (not_ranked: see explanations), below and unjudged."""
    if not block:
        return []
    entry = lambda q: block["queries"].get(q, {})

    def missing(q, cause):
        # a document without a rank has its query's cause
        causes = [entry(q)["cause"] if r is None else "below"
                  for r in entry(q).get("missing", {}).values()]
        return causes.count(cause)
    columns = [(label + cause, partial(missing, cause=cause))
               for cause in ("absent", "not_ranked", "below")]
    return columns + [(label + "unjudged", lambda q: len(entry(q).get("unjudged", ())))]


def leak_columns(result, label):
    """With --access, the column of each query's leaks (label: the run's, and a space, or ""):
    RANK:DOCUMENT, separated by spaces."""
    if "leaks" not in result:
        return []
    # a query's leaks come together
    cells = {qid: " ".join("%d:%s" % (leak["rank"], leak["document"]) for leak in leaks)
             for qid, leaks in groupby(result.leaks, itemgetter("query"))}
    return [(label + "leaks", lambda qid: cells.get(qid, ""))]


def funnel_columns(block, label):
    """CSV columns of a funnel block, or none: per row (the baseline pipeline's first), the units
    each query lost there."""
    return [(label + prefix + "lost at " + row["stage"],
             lambda q, lost=side["queries"], at=row["stage"]:
             sum(f["stage"] == at for f in lost.get(q, {}).values()))
            for prefix, side in funnel_sides(block) for row in side["rows"]]


def _cell(per_query, name, qid):
    """A query's value of a measure, or "" where the measure does not score it."""
    return per_query[qid][name] if name in per_query.get(qid, ()) else ""


def _csv_text(qids, columns, results):
    """CSV of a row per query: its ID, a cell per column (header, cell(qid)), then a 0/1
    column per group of the results."""
    import csv
    members = {}
    for r in results:
        for name, block in r.groups.items():
            members.setdefault(name, set()).update(block["members"])
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    groups = ["group:" + name for name in members]
    writer.writerow(["query"] + [header for header, _ in columns] + groups)
    writer.writerows([q] + [cell(q) for _, cell in columns]
                     + [int(q in m) for m in members.values()] for q in qids)
    return out.getvalue().rstrip("\n")


def _flag_cell(flagged, name, rows, qid):
    """1 or 0: is the query flagged for the measure (unstable among the baseline's replicates,
    or marked unjudged); "" where the measure does not score it."""
    return int(qid in flagged[name]) if name in rows.get(qid, ()) else ""


# --- Several runs: {"runs": {name: result}} ---

def run_labels(names, baseline=None):
    """{run name: label}, and None: the baseline's label when there is one: what tables, CSV
    columns and the plot show of each run, printable and unique ("baseline" unless a run
    is named so too)."""
    labels = {}
    if baseline is not None:
        taken = "baseline" in map(place, names)
        labels[None] = "baseline %s" % place(baseline) if taken else "baseline"
    for name in names:
        label, n = place(name), 1
        while label in labels.values():
            n += 1
            label = "%s (%d)" % (place(name), n)
        labels[name] = label
    return labels


def format_runs(results, fmt, labels=None, pairs=None, extra=NOTHING):
    """The output of several runs: JSON nests each run's own; the reports put one row per
    run (the baseline first) and a column per measure; CSV a column per run and measure.
    labels: run_labels() of the runs and the baseline; pairs: see runs_output, or None; extra:
    the output's blocks of two label sources (see other_labels)."""
    first = next(iter(results.values()))
    labels = labels or run_labels(list(results), "" if first.comparison else None)
    # each run's text as --run alone prints it, indented one level
    if fmt == "json":
        marker = "\0run\0"
        outer = {"runs": dict.fromkeys(results, marker)}
        if pairs is not None:
            outer["pairs"] = pairs
        outer = json.dumps(dict(outer, **extra), indent=2)
        parts = [(piece.replace("\n", "\n    ") for piece in format_json(r))
                 for r in results.values()]
        return chain.from_iterable(chain([text], part) for text, part in
                                   zip(outer.split(json.dumps(marker)), parts + [()]))
    if fmt == "csv":
        return _runs_csv(results, labels, pairs or (), extra)
    breaches = ["%s: %s" % (labels[name], line)
                for name, r in results.items() for line in _breach_lines(r)]
    heads = {labels[name] + ": ": r for name, r in results.items()}
    if fmt == "table":
        return "\n".join([_runs_table(results, labels, breaches, pairs)]
                         + label_lines(extra, heads))
    return "\n".join([_runs_markdown(results, labels, breaches, pairs)]
                     + label_lines(extra, heads, True))


def _runs_table(results, labels, breaches, pairs):
    """format_runs' table: the runs' rows, their pairs, breaches, each run's groups and
    --explain."""
    lines = _columns(_runs_rows(results, labels)) + _runs_footnotes(results)
    if pairs:
        lines += _section("pairs:", _columns(_pair_rows(pairs, labels)) + [PAIRS_NOTE])
    if breaches:
        lines += _section("gate breaches:", breaches)
    for name, r in results.items():
        if r.groups:
            lines += _section("groups of %s:" % labels[name], _columns(_group_rows(r)))
    lines += _group_footnotes(*results.values())
    for name, r in results.items():
        lines += _explained_sections(r, labels[name] + ": ")
    return "\n".join(lines)


def _runs_markdown(results, labels, breaches, pairs):
    """format_runs' Markdown: breaches first, the runs' rows, their notes, their pairs, each
    run's groups and --explain."""
    lines = ["### Retrieval evaluation: %d runs" % len(results), ""]
    lines += _md_breaches(breaches, sum(len(r.breaches) + len(r.leaks)
                                        for r in results.values()))
    lines += _md_table(_runs_rows(results, labels)) + [""]
    lines += _bullets(_runs_footnotes(results))
    if pairs:
        lines += ["", "Pairs:", ""] + _md_table(_pair_rows(pairs, labels), 2) + [""]
        lines += _bullets([PAIRS_NOTE])
    # the gates that cannot see, too
    lines += _bullets("%s: %s" % (labels[name], note.text) for name, r in results.items()
                      for note in notes(r) if note.kind == "warning")
    grouped = [r for r in results.values() if r.groups]
    for name, r in results.items():
        if r.groups:
            lines += ["", "Groups of %s:" % _md(labels[name]), ""] + _md_table(_group_rows(r))
    if grouped:
        lines += [""] + _bullets(_group_footnotes(*grouped))
    for name, r in results.items():
        if r.explain:
            lines += ["", "#### %s" % _md(labels[name])] + _md_explain(r.explain)
        if r.funnel:
            lines += ["", "**%s: %s**" % (_md(labels[name]), FUNNEL), ""]
            lines += _md_table(funnel_table(r.funnel))
    return "\n".join(lines).rstrip("\n")


def _runs_rows(results, labels):
    """Header and a row per run (the baseline's first, then with replicates the noise of each
    measure and how many queries are unstable): queries, then each measure's mean, with a
    baseline its change and a * when Holm's p over runs x measures is < 0.05; under --ci
    each measure's interval (of the change, with a baseline) beside it."""
    first = next(iter(results.values()))
    names, ci = list(first.measures), "ci95" in first

    def row(label, count, cell, interval=lambda n: ""):
        cells = []
        for n in names:
            cells.append(cell(n))
            if ci:
                cells.append(interval(n))
        return [label, count] + cells
    rows = [row("run", "queries", str, "%s 95%% CI".__mod__)]
    if first.comparison:
        baseline = lambda n: _number(first.comparison[n]["baseline"])
        rows.append(row(labels[None], str(first.queries), baseline))
    if first.noise:
        noise = "noise (%s)" % _many(len(first.replicates), "replicate")
        rows.append(row(noise, "", lambda n: _number(first.noise[n])))
        rows.append(row("unstable queries", "", lambda n: str(len(first.unstable[n]))))
    for name, r in results.items():
        cell = lambda n: _number(r.measures[n])
        interval = lambda n: _interval(r.ci95.get(n))
        if r.comparison:
            cell = lambda n: _change_cell(r.comparison[n])
            interval = lambda n: _interval(r.comparison[n]["ci95"])
        rows.append(row(labels[name], str(r.queries), cell, interval))
    return rows


def _runs_footnotes(results):
    """What the change marks mean and, when some queries have no answer in the corpus, what
    the queries column counts."""
    lines = []
    if "comparison" in next(iter(results.values())):
        lines.append(_change_note("runs"))
    unanswered = {name: r["no_answer_queries"] for name, r in results.items()
                  if "no_answer_queries" in r}
    if not unanswered:
        return lines
    counts = ", ".join("%s %d" % kv for kv in unanswered.items())
    if len(set(unanswered.values())) == 1:
        counts = set(unanswered.values()).pop()
    return lines + ["queries: those with an answer; those without one, which only Abstain "
                    "scores: %s" % counts]


# what the pairs' rows say
PAIRS_NOTE = ("each run (candidate) against each one given before it (baseline); p (Holm): "
              "Holm's correction over the pairs, per measure")


def _pair_rows(pairs, labels):
    """Header and a row per pair of runs and measure: the pair, then the row of a comparison
    (see _comparison_rows)."""
    rows = [["pair"] + _comparison_rows(Result())[0]]
    for pair in pairs:
        label = "%s vs %s" % (labels[pair["candidate"]], labels[pair["baseline"]])
        rows += [[label] + row
                 for row in _comparison_rows(Result(comparison=pair["comparison"]))[1:]]
    return rows


def _change_note(family):
    return ("(+/-x): change from the baseline; *: p < 0.05 after Holm's correction over %s x "
            "measures" % family)


def _runs_csv(results, labels, pairs, extra):
    """A row per query evaluated in any run; per measure the baseline's value (with one), then
    each run's value (and change), and each pair's change ("R@5 b - a"): a run that did not
    evaluate a query leaves its cells empty; with groups a 0/1 column per group, as for one
    run."""
    first = next(iter(results.values()))
    base, columns = first.baseline_per_query, []
    unstable = {n: set(ids) for n, ids in first.unstable.items()}
    for n in first.measures:
        if base:
            columns.append(("%s %s" % (n, labels[None]), partial(_cell, base, n)))
            if unstable:
                columns.append(("%s unstable" % n, partial(_flag_cell, unstable, n, base)))
        for run, r in results.items():
            value, marked = partial(_cell, r.per_query, n), unjudged_marked(r)
            columns.append(("%s %s" % (n, labels[run]), value))
            if base:
                columns.append(("%s %s delta" % (n, labels[run]),
                                partial(_delta_cell, value, base, n)))
            if n in marked:
                columns.append(("%s %s unjudged" % (n, labels[run]),
                                partial(_flag_cell, marked, n, r.per_query)))
        columns += [("%s %s - %s" % (n, labels[b], labels[a]), partial(
            _delta_cell, partial(_cell, results[b].per_query, n), results[a].per_query, n))
                    for a, b in map(itemgetter("baseline", "candidate"), pairs)]
    for run, r in results.items():
        columns += explain_columns(r.explain, labels[run] + " ")
        columns += leak_columns(r, labels[run] + " ")
        columns += funnel_columns(r.funnel, labels[run] + " ")
        columns += label_columns(r, labels[run] + " ")
    columns += label_columns(extra, "")
    qids = list(dict.fromkeys(q for r in results.values() for q in r.per_query))
    return _csv_text(qids, columns, results.values())


# --- What two label sources say (--candidate-qrels, --baseline-qrels) ---

def label_tables(out, heads, per_query=False):
    """[(title, rows)] of what two label sources say, as the text and Markdown reports show them:
    each block (see other_labels) a table of its numbers and one of each member that maps names
    to numbers or records (see member_rows), its JSON names for titles, "per_query" only with
    per_query; out: the output (or one run's result), heads: {what each run's titles start
    with: its result}."""
    blocks = [("label_agreement", out.get("label_agreement", {}))]
    blocks += [(head + key, r.get(key, {})) for head, r in heads.items()
               for key in ("candidate_labels", "label_versions")]
    # an empty member has no table
    blocks.append(("", {"label_orderings": out.get("label_orderings", {})}))
    tables = []
    for title, block in blocks:
        scalars = [[key, _text(v)] for key, v in block.items() if not isinstance(v, dict)]
        tables += [(title, [["", "value"]] + scalars)] if scalars else []
        tables += [((title + " " + key).strip(), member_rows(v))
                   for key, v in block.items() if isinstance(v, dict)
                   and (per_query or key not in ("per_query", "label_changes"))
                   and any(x != [] for x in flat(v).values())]
    return tables


def flat(value, name=""):
    """{the path of keys to each number or list in a JSON value, joined by spaces: it}."""
    if not isinstance(value, dict):
        return {name: value}
    return {path: v for key, item in value.items()
            for path, v in flat(item, ("%s %s" % (name, key)).lstrip()).items()}


def member_rows(member):
    """A table of a block's member: a row per record of numbers (named by the path of keys to it,
    see flat; IDs hold no space), a column per key."""
    cells = {}
    for path, value in flat(member).items():
        row, _, column = path.rpartition(" ")
        cells.setdefault(row, {})[column] = value
    columns = list(dict.fromkeys(c for row in cells.values() for c in row))
    return [[""] + columns] + [[row] + [_text(r.get(c)) for c in columns]
                               for row, r in cells.items()]


def _text(value):
    """A JSON value in a report's cell: text as it is, a number as _number writes it, true yes,
    a list of records their count, another list its items ('a/b' a pair), 'none' none."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, list):
        return _number(value)
    if value and isinstance(value[0], dict):
        return str(len(value))
    items = ["/".join(map(str, v)) if isinstance(v, list) else _text(v) for v in value]
    return first_few(items, 10).replace("'", "") or "none"


def label_lines(out, heads, markdown=False, per_query=False):
    """The text report's sections of label_tables, or the Markdown report's tables."""
    lines = []
    for title, rows in label_tables(out, heads, per_query):
        if markdown:
            lines += ["", "**%s**" % _md(title), ""] + _md_table(rows)
        else:
            lines += _section(title + ":", _columns(rows))
    return lines


def label_columns(out, label):
    """CSV columns of what two label sources say of each query: the per_query records of the
    output's (or a run's result's) label_agreement, candidate_labels and label_versions,
    flattened (see flat; empty where the record has no such path); label: the run's, and a
    space (a run of several has no label_agreement: the output has)."""
    columns = []
    for prefix, key in (("labels ", "label_agreement"), ("candidate labels ", "candidate_labels"),
                        ("", "label_versions")):
        rows = {q: flat(row) for q, row in out.get(key, {}).get("per_query", {}).items()}
        paths = dict.fromkeys(path for row in rows.values() for path in row)
        columns += [(label + prefix + path,
                     lambda q, rows=rows, path=path: rows.get(q, {}).get(path, ""))
                    for path in paths]
    return columns


def format_labels(out, fmt, per_query=False):
    """The report of two label sources without runs (--candidate-qrels alone), in a format."""
    if fmt == "json":
        return format_json(out)
    if fmt == "csv":
        qids = list(out["label_agreement"]["per_query"])
        return _csv_text(qids, label_columns(out, ""), [])
    lines = label_lines(out, {}, fmt == "markdown", per_query)
    if fmt == "table":
        return "\n".join(lines[1:])
    return "\n".join(["### Labels compared"] + lines)

# --- A paper's table (--format latex) ---

# LaTeX's special characters, as a name escapes them: these as words, the others by a backslash
_LATEX_SPECIAL = str.maketrans({
    "\\": r"\textbackslash{}", "^": r"\textasciicircum{}", "~": r"\textasciitilde{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",
    **{c: "\\" + c for c in "{}$&#_%"}})
LATEX_CAPTION = "Each measure over %s, the highest in bold."
# the caption's test, when runs are compared
LATEX_TEST = """ A superscript names the runs a
value is significantly higher than: a paired two-sided randomization (sign-flip) test, exact up
to %d changed queries, else of %d draws (seed %d), with Holm's correction over the %s of runs
of each measure, $p < 0.05$."""
LATEX_TABLE = r"""%% in the preamble: \usepackage{booktabs}
\begin{table}[ht]
\centering
\caption{%s}
\label{tab:results}
\begin{tabular}{cl%s}
\toprule
\# & Run & %s \\
\midrule
%s
\bottomrule
\end{tabular}
\end{table}"""


def _latex(text):
    r"""A name as LaTeX sets it: its special characters escaped.

    >>> print(_latex("run_1 {50%} ~a\\b"))
    run\_1 \{50\%\} \textasciitilde{}a\textbackslash{}b
    """
    return text.translate(_LATEX_SPECIAL)


def format_latex(results, pairs, labels, config):
    """A LaTeX table of the runs {name: result} (rows, lettered a, b, ... as given) by
    measures, as ranx's Report.to_latex lays it out (booktabs): each measure's highest value
    in bold, and after a value the letters of the runs it is significantly higher than (Holm's
    p over the pairs < 0.05; see runs_output), the test named in the caption."""
    first = next(iter(results.values()))
    names = list(first.measures)
    tested = {frozenset((p["baseline"], p["candidate"])): p["comparison"] for p in pairs}
    rows = [" & ".join([letter, _latex(labels[run])] + [_latex_cell(results, run, n, tested)
                                                        for n in names]) + r" \\"
            for run, letter in zip(results, ascii_lowercase)]
    caption = LATEX_CAPTION % n_queries(first.queries)
    if pairs:
        caption += LATEX_TEST % (EXACT_LIMIT, config.permutations, config.seed,
                                 _many(len(pairs), "pair"))
    return LATEX_TABLE % (caption, "c" * len(names), " & ".join(map(_latex, names)),
                          "\n".join(rows))


def _latex_cell(results, run, name, tested):
    """A run's value of a measure as format_latex's cell: bold when no run's is higher as
    shown, then the letters of the runs it is significantly higher than (tested: {the pair's
    runs: its comparison}), and an \\hphantom of the others' letters, which keeps the column
    aligned."""
    mine = results[run].measures[name]
    value = _number(mine)
    if value == _number(max(r.measures[name] for r in results.values())):
        value = r"\textbf{%s}" % value
    marks = room = ""
    for other, letter in zip(results, ascii_lowercase):
        if other == run:
            continue
        if mine > results[other].measures[name] and (
                tested[frozenset((run, other))][name]["p_holm"] or 1) < 0.05:
            marks += letter
        else:
            room += letter
    cell = r"%s$^{%s}$\hphantom{$^{%s}$}" % (value, marks, room)
    return cell.replace("$^{}$", "").replace(r"\hphantom{}", "")


Note = namedtuple("Note", "kind text approved", defaults=(False,))


def notes(result):
    """What a report says beside the numbers, as Note records of kind "note" (what was left out,
    of the baseline too, and how: approved when it is on the baseline or its replicates, the same
    for every run compared to them), "warning" and "gate failed" (one per breach)."""
    first = [Note("note", skipped_text(result.skipped))]
    first += [Note("note", text, True)
              for text in approved_notes(result) + family_notes(result.comparison)]
    # the same for every run: said once
    first.append(Note("note", renamed_text(result.renamed), True))
    first += [Note("note", line) for line in _own_notes(result)]
    theirs = result.candidate_labels.get("queries", result.queries)
    if theirs != result.queries:
        first.append(Note("note", "the candidate labels score %s, the reference %d: their means "
                                  "are of other queries" % (n_queries(theirs), result.queries)))
    # the verdict is the labels' as much as the run's (--candidate-qrels)
    if result.candidate_labels.get("verdict_flipped"):
        first.append(Note("warning", "warning: the gates' verdict flips on the candidate "
                                     "labels: they %s there"
                          % ("fail" if result.candidate_labels["breaches"] else "pass")))
    said = power_lines(result.power, "--max-mean-drop")
    for name, block in result.groups.items():
        said += power_lines(block.get("power", {}), "--max-group-drop", "group %s " % name)
    return ([note for note in first if note.text]
            + [Note(*line) for line in said if line[0] == "note"]
            + [Note("warning", w) for w in result.warnings]
            + [Note(*line) for line in said if line[0] == "warning"]
            + [Note("gate failed", line) for line in _breach_lines(result)])


def renamed_text(renamed):
    """What became of other tools' names in -m ('' for none), as 'recall@5 is R@5'."""
    said = ", ".join("%s is %s" % pair for pair in renamed.items())
    return said and "other tools' names, as ours: " + said


def _own_notes(result):
    """The notes on the run's own result (None: nothing to say): the measures scored 0 for want
    of a relevant label at their level, what --ties and --ci cannot bound, the repeats removed,
    the agreement measures' queries without labels, --unjudged-bounds' notes, --explain's
    unlabeled documents, the clusters drawn and the texts that held several labels."""
    lines = ["%s scored 0 on %s with nothing relevant at its own level" % (name, n_queries(count))
             for name, count in result.no_relevant_at_level.items() if count]
    lines += ["--ties does not bound %s: %s" % (name, why)
              for name, why in result.ties.get("not_bounded", {}).items()]
    unbounded = [n for n in result.measures if "ci95" in result and n not in result.ci95]
    if unbounded:
        lines.append("--ci draws no interval for %s: its bootstrap is of arithmetic means, and "
                     "these are sums or geometric means" % ", ".join(unbounded))
    lines.append(_deduplicated_text(result.deduplicated, ""))
    agreement = result.agreement
    if agreement.get("unscored"):
        lines.append("the agreement measures compared %s, %d of them without labels, which the "
                     "other measures do not score"
                     % (n_queries(agreement["queries"]), agreement["unscored"]))
    lines += unjudged_notes(result.unjudged)
    explain = result.explain
    if explain and explain["counts"]["unlabeled"]:
        lines.append("--explain: unjudged would mean merely unlabeled where the labels name only "
                     "relevant documents, as those of %s do: their unlabeled documents in the top "
                     "%d are not listed (JSON: \"unlabeled\")"
                     % (n_queries(explain["counts"]["unlabeled"]), explain["k"]))
    if "clusters" in result:
        lines.append("clusters: the sign-flip test and the bootstrap draw %d clusters of the %s, "
                     "not the queries one by one" % (result.clusters, n_queries(result.queries)))
    if result.get("unmapped"):
        lines.append("--access: %s in no map, readable by no one: each a leak"
                     % _many(result.unmapped, "ranked document"))
    several = result.several_labels.get("per_query")
    if several:
        lines.append("%s contained more than one label, in %s (%s): each claims the first that "
                     "no earlier text had" % (_many(sum(several.values()), "ranked text"),
                                              n_queries(len(several)), first_few(several)))
    return lines + as_notes(result["as"]) if "as" in result else lines


def as_notes(block):
    """--as: a line per measure whose values differ from trec_eval's on some query: its
    counterpart and mean, and what sets them apart (a mean that is only rounded is not said)."""
    lines = []
    for name, said in block["measures"].items():
        apart = ["%s on %s" % (cause, n_queries(n)) for cause, n in
                 said["queries_differing"].items()] + said["mean_causes"]
        left_out = said["queries_left_out"]
        if left_out:
            apart[apart.index("queries averaged over")] += " (%s left out)" % n_queries(left_out)
        if apart not in (["rounding"], []):
            lines.append("%s is %s %s's; trec_eval's %s is %.4f, apart by %s" % (
                name, block["tool"], block["version"], said["trec_eval"],
                said["trec_eval_mean"], ", ".join(apart)))
    return lines


def family_notes(comparison):
    """What a comparison says of its rows in no Holm family: agreement measures, and measures
    only a floor asked for."""
    agreeing = [n for n, c in comparison.items() if c["p_value"] is None]
    alone = [n for n, c in comparison.items() if c["p_holm"] is None and n not in agreeing]
    return [text % ", ".join(names) for text, names in (
        ("%s: agreement with the baseline, 1 by construction: a change says how far the rankings "
         "moved; no sign-flip p-value (p_value null), no Holm family, no *", agreeing),
        ("%s: asked for by a floor only, in no Holm family", alone)) if names]


def unjudged_notes(block):
    """What --unjudged-bounds says beside the numbers: the most the missing labels could add, and
    the changed queries whose candidate top k holds unjudged documents."""
    if not block:
        return []
    lines = []
    for whose, bounds in (("", block["measures"]), ("the baseline's, ", block.get("baseline"))):
        if bounds:
            values = ", ".join("%s %s -> %s" % (name, _number(v["judged"]),
                                                _number(v["if_relevant"]))
                               for name, v in bounds.items())
            lines.append("%sif every unjudged document were relevant: %s" % (whose, values))
    lines += ["unjudged: %d of %d regressed or lost queries of %s have unjudged documents in the "
              "candidate's top k (%s): label them before calling it a regression"
              % (len(m["queries"]), m["changed"], name, first_few(m["queries"]))
              for name, m in block.get("marked", {}).items() if m["queries"]]
    return lines + ["--unjudged-bounds does not bound %s: %s" % kv
                    for kv in block.get("not_bounded", {}).items()]


def approved_notes(result):
    """The notes on the baseline and its replicates (None for nothing to say): the same for
    every run compared to them."""
    lines = []
    if "baseline_skipped" in result:
        lines += _approved_notes("the baseline", result.baseline_skipped, result.baseline_zeroed)
    for entry in result.replicates:
        lines += _approved_notes("the replicate " + place(entry["run"]), entry["skipped"],
                                 entry["zeroed"])
    if result.noise:
        lines += _noise_notes(result)
    lines.append(_deduplicated_text(result.baseline_deduplicated, "the baseline's "))
    return lines + list(result.baseline_notes)


def _deduplicated_text(removed, whose):
    """What --duplicates first removed ({qid: how many}), or None."""
    if not removed:
        return None
    return "--duplicates first removed %s from %s%s (%s)" % (
        _many(sum(removed.values()), "repeated document"), whose, n_queries(len(removed)),
        first_few(removed))


def _approved_notes(whose, skipped, zeroed):
    """What the baseline, or a replicate, skipped and scored as empty for want of a ranking."""
    lines, missing = [skipped_text(skipped, whose + " ")], zeroed["missing_run"]
    if missing:
        lines.append("%s has no ranking for %s (%s): scored as empty"
                     % (whose, n_queries(len(missing)), first_few(missing)))
    return lines


def _noise_notes(result):
    """The noise of each measure among the baseline and its replicates, and its unstable
    queries, which the per-query gate leaves out."""
    n = _many(len(result.replicates), "replicate")
    noise = ", ".join("%s %s" % (name, _number(v)) for name, v in result.noise.items())
    unstable = "; ".join("%s %d%s" % (name, len(qids), " (%s)" % first_few(qids) if qids else "")
                         for name, qids in result.unstable.items())
    return ["noise among the baseline and %s (largest minus smallest mean): %s" % (n, noise),
            "unstable queries (their values differ among the baseline and %s; --max-query-drop "
            "leaves them out): %s" % (n, unstable)]


def power_lines(block, flag, what=""):
    """What --power says (see power) as (kind, text): per measure the smallest change the set
    detects, and the queries a gate's limit would need; a warning for a gate finer than that."""
    lines = []
    for name, p in block.items():
        if p["mde"] is None:
            lines.append(("note", "power: %s%s: fewer than 2 queries, nothing to say"
                          % (what, name)))
            continue
        # (the limit as given, the queries it needs)
        gate = next(iter(p.get("queries_for", {}).items()), None)
        detects, bound, summed = "detects", "", ""
        if not p["paired"]:
            detects, bound = "would detect", " (sqrt(2) x the run's: a bound, with no baseline)"
        if "of" in p:
            summed = " in its sum"
        lines.append(("note", "power (80%%, two-sided 5%%): %s%s %s a change of %s%s over %d "
                              "queries, sd %s%s%s"
                      % (what, name, detects, _number(p["mde"]), summed, p["n"],
                         _number(p["sd"]), bound, _need_text(p, gate, flag))))
        if p.get("floor"):
            lines.append(_floor_power(p["floor"], what + name, p["n"]))
        if gate and float(gate[0]) < p["mde"]:
            lines.append(("warning", finer_text(flag, gate[0], what + name, p["mde"])))
    return lines


def _need_text(p, gate, flag):
    """What a power note adds of a gate's limit (gate: (the limit as given, the queries it
    needs)): the queries; for a sum's, that more do not help; for a limit of 0, that none do."""
    if not gate:
        return ""
    if gate[1] is not None:
        return " (%s %s would need %d queries)" % (flag, *gate)
    if "of" in p:
        return "; more queries make a sum's change larger, not easier to see"
    return "; %s %s: a change of 0 cannot be resolved by any number of queries" % (flag, gate[0])


def _floor_power(floor, name, n):
    """What --power says of a mean floor (kind, text): where the interval of n queries lies, or
    that the floor lies inside it: under --gate-on mean a coin toss, a warning."""
    (low, high), limit = floor["ci95"], floor["limit"]
    interval = interval_text(low, high, n)
    if floor["resolved"]:
        side = "below"
        if low > limit:
            side = "above"
        return "note", "power: %s's %s lies %s --min-mean %s" % (name, interval, side, limit)
    if floor["gate_on"] in READ_MEAN:
        return "warning", undecided_text("warning: ", name, limit, interval)
    return "note", undecided_text("power: ", name, limit, interval)


def breach_text(b):
    """One gate breach: what dropped, from what to what, past which limit (plus the noise among
    the baseline's replicates), or, for a floor, what is below it; under --gate-on interval,
    the interval that lies past it."""
    allowed = "%s %s" % (b.gate.flag, b.limit)
    if "noise" in b.rule:
        allowed += " + noise %s among the baseline and %s" % (
            _number(b.rule["noise"]), _many(b.rule["replicates"], "replicate"))
    if b.gate.needs and b.drop is None:
        return ("%s group %s mean: no query of the group is scored by it: %s cannot decide on "
                "nothing, and fails" % (b.measure, show(b.rule["group"]), allowed))
    if "gate_on" in b.rule and b.rule["queries"] < 2:
        rule = "--gate-on %s cannot decide on %s, and fails: %s" % (
            b.rule["gate_on"], n_queries(b.rule["queries"]), allowed)
    elif "gate_on" in b.rule:
        rule = _interval_rule(b, allowed)
    elif b.gate.needs:
        rule = "drop %s > %s" % (_number(b.drop), allowed)
        if "part" in b.rule:  # --gate-on retrieval: of the means over both label versions
            rule = "the %s part's %s" % (b.rule["part"], rule)
    else:
        rule = "below " + allowed
    if b.query is not None and "replicates" in b.rule:
        rule += "; the same in the baseline and %s" % _many(b.rule["replicates"], "replicate")
    values = _number(b.candidate)
    if b.gate.needs:
        values = "%s -> %s" % (_number(b.baseline), values)
    where = _where(b.gate, b.measure, b.query, b.rule.get("group"))
    return "%s %s: %s (%s)" % (b.measure, where, values, rule)


def _interval_rule(b, allowed):
    """The interval that lies past a gate read by it: of the change, or of a floor's mean."""
    low, high = b.rule["ci95"]
    below = b.rule["gate_on"] == "interval"
    if not b.gate.needs:
        verb = "lies below" if below else "does not lie at or above"
        return "95%% CI [%s, %s] %s %s" % (_number(low), _number(high), verb, allowed)
    verb, shown = ("lies below", "") if below else (
        "does not lie above", ": not shown to be no worse")
    return "95%% CI of the change [%s, %s] %s -(%s)%s; drop %s" % (
        _signed(low), _signed(high), verb, allowed, shown, _number(b.drop))


def _where(gate, measure, query=None, group=None, quote=show):
    """Where a gate checks a measure: a query, a group's mean, every query (a per-query gate's
    JUnit case), or the mean (a floor's: the sum or geometric mean of a measure aggregated so)."""
    if query is not None:
        return "query " + quote(query)
    if group is not None:
        return "group %s mean" % quote(group)
    if gate.scope == "query":
        return "every query"
    return "mean" if gate.needs else aggregate_word(measure)


def format_junit(runs, labels, limits):
    """JUnit XML of the gates' checks, as CI servers read it (README: "In CI"): a testsuite per
    run, a testcase per measure and gate given (per group for a group's gate; for a per-query gate,
    besides, one per breached query), and in each breached one a failure holding its line.
    limits: {gate: {measure: limit}} (Plan.gates)."""
    # here, not above: the import costs every other start a few ms
    from xml.etree import ElementTree
    suites = ElementTree.Element("testsuites", name=PROG)
    for name, result in runs.items():
        cases = {(gate.flag, "%s %s (%s %s)" % (measure, _where(gate, measure, query, group, str),
                                                gate.flag, limits[gate.name][measure])):
                 [breach_text(b) for b in found]
                 for (gate, measure, group, query), found in junit_cases(result, limits).items()}
        # with --access, a case of its own: every leak fails it
        if "leaks" in result:
            cases["--access", "every ranked document readable (--access)"] = [
                leak_text(leak) for leak in result.leaks]
        suite = ElementTree.SubElement(suites, "testsuite", name=labels[name],
                                       tests=str(len(cases)),
                                       failures=str(sum(map(bool, cases.values()))),
                                       errors="0", skipped="0", time="0")
        for (flag, title), lines in cases.items():
            case = ElementTree.SubElement(suite, "testcase", classname=labels[name], time="0",
                                          name=title)
            if lines:
                failure = ElementTree.SubElement(case, "failure", message=lines[0], type=flag)
                failure.text = "\n".join(lines)
    for key in ("tests", "failures"):
        suites.set(key, str(sum(int(suite.get(key)) for suite in suites)))
    ElementTree.indent(suites)
    text = ElementTree.tostring(suites, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n%s\n' % text


def junit_cases(result, limits):
    """{(Gate, measure, group, query): [its Breach, ...]} of a result: a case per measure and
    gate with a baseline, in the comparison's order (per group for a group's gate), then per
    floor and measure; then one per breached query of a per-query gate."""
    cases = {}
    for measure in result.get("comparison", {}):
        for name, gate in GATES.items():
            groups = result.get("groups", {}) if gate.needs == "groups" else [None]
            if gate.needs and measure in limits[name]:
                cases.update(((gate, measure, group, None), []) for group in groups)
    for name, gate in GATES.items():
        if not gate.needs:
            cases.update(((gate, measure, None, None), []) for measure in limits[name])
    # none without a gate but --access
    for b in result.breaches:
        cases.setdefault((b.gate, b.measure, b.rule.get("group"), b.query), []).append(b)
        if b.query is not None:
            cases[b.gate, b.measure, None, None].append(b)
    return cases


def _many(n, thing):
    """'1 thing', '2 things'."""
    return "%d %s%s" % (n, thing, "" if n == 1 else "s")


def stderr_lines(runs, labels, several):
    """The notes of {name: result} as stderr prints them: a warning is its own text.  With
    several runs a line names its run, but for the notes on the baseline and replicates:
    the same for every run, they come first, once."""
    shared, lines = {}, []
    for name, result in runs.items():
        for kind, text, approved in notes(result):
            line = text if kind == "warning" else "%s: %s" % (kind, text)
            if approved and several:
                shared[line] = None
            else:
                lines.append("%s: %s" % (labels[name], line) if several else line)
    return list(shared) + lines


# --- The plot (--plot FILE.svg) ---

# A standalone SVG a browser shows and a pull request embeds: per cutoff measure
# the curve of its mean over k for each run (and the baseline), then with a
# baseline each query's change, sorted, as a strip of bars.  Every name is text,
# and the picture carries a title and a description, for screen readers too.
PLOT_BARS = 600  # a strip of more queries shows the mean change of neighbours in its sorted order
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
_SVG_WIDTH, _LEFT, _RIGHT, _PANEL, _STRIP = 760, 64, 200, 220, 130
# the width of a panel's or a strip's plotting area
_PLOT_WIDTH = _SVG_WIDTH - _LEFT - _RIGHT
_TITLE = 72  # characters of a bold 16px title that fit in a line of the picture
_LEGEND = (_RIGHT - 36 - 8) // 7  # characters of a legend's 12px line that fit right of a panel


def format_svg(runs, drawn, labels):
    """The SVG text of {run name: result} (with a baseline, its per-query values among them)
    and their curves, drawn: {run name: curves} and the baseline's under None, when it has
    some; labels: run_labels() of the runs and the baseline, shown whole in the title and
    tooltips, shortened in legends."""
    first, series = next(iter(runs.values())), list(drawn.items())
    named = {name: labels[name] for name in drawn}
    colours = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(drawn)}
    legend, compared = _legend(named), "baseline_per_query" in first
    # the <title>, whole
    title = "Retrieval evaluation of %s" % ", ".join(named.values())
    lines = _wrap(title, _TITLE)
    # names too long to show whole: shortened as a legend's, with more room
    if len(lines) > 3:
        wide = _legend(named, _TITLE // 2)
        lines = _wrap("Retrieval evaluation of %s" % ", ".join(wide.values()), _TITLE)
    parts, y = _funnel_panels(runs, legend, colours, 36 + 20 * len(lines))
    for label in series[-1][1]:
        panel = [(labels[n], legend[n], c[label], colours[n]) for n, c in series]
        parts.append(_curve_panel(label, panel, y))
        y += _PANEL + 70
    for name, r in runs.items() if compared else ():
        for measure in r.measures:
            parts.append(_strip(labels[name], legend[name], measure, r, y))
            y += _STRIP + 60
    shown = _xml(lines[0])
    if len(lines) > 1:
        shown = "".join('<tspan x="%d" dy="%d">%s</tspan>' % (_LEFT, 20 * (i > 0), _xml(line))
                        for i, line in enumerate(lines))
    desc = "Mean of %s over the cutoff k for each run" % ", ".join(series[-1][1])
    if compared:
        desc += ("; then each query's change from the baseline, sorted, losses in red, gains in "
                 "green")
    head = ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
            'role="img" aria-labelledby="t d" font-family="sans-serif" font-size="12">\n<title '
            'id="t">%s</title>\n<desc id="d">%s</desc>\n<rect width="100%%" height="100%%" '
            'fill="white"/>\n<text x="%d" y="28" font-size="16" font-weight="bold">%s</text>\n'
            % (_SVG_WIDTH, y, _SVG_WIDTH, y, _xml(title), _xml(desc + "."), _LEFT, shown))
    return head + "".join(parts) + "</svg>\n"


def _legend(labels, limit=_LEGEND):
    """{run: its label as a legend shows it}: the end of a long one, where paths differ, from a
    path separator when one leaves room (the whole label is in the picture's title and in each
    line's tooltip), the baseline's still called so, and numbered when two are the same."""
    short = {name: _shortened(name, label, limit) for name, label in labels.items()}
    if len(set(short.values())) < len(short):
        short = {name: "%d: %s" % (i, _shortened(name, label, limit - 3))
                 for i, (name, label) in enumerate(labels.items(), 1)}
    return short


def _shortened(name, label, room):
    """A run's label (name: None for the baseline's) within ``room`` characters: its end, from a
    path separator when one leaves room, after "baseline " for the baseline's."""
    head = ""
    if name is None and label.startswith("baseline "):
        head = "baseline "
    tail, room = label[len(head):], room - len(head)
    if len(tail) <= room:
        return head + tail
    cuts = [i for i, c in enumerate(tail) if c in "/\\" and len(tail) - i < room]
    return head + "\u2026" + tail[(cuts + [len(tail) + 1 - room])[0]:]


def _wrap(text, width):
    """Lines of at most ``width`` characters, broken after a space or a path separator (a longer
    piece is cut where it must be).

    >>> _wrap("Retrieval evaluation of runs/msmarco/run.bm25.trec", 24), _wrap("ab cd", 5)
    (['Retrieval evaluation of', 'runs/msmarco/', 'run.bm25.trec'], ['ab cd'])
    """
    lines = [""]
    for piece in re.findall(r".{1,%d}?(?:[ /\\]|$)|.{%d}" % (width, width), text):
        if lines[-1] and len((lines[-1] + piece).rstrip()) > width:
            lines.append("")
        lines[-1] += piece
    return [line.rstrip() for line in lines if line.strip()]


def _xml(text):
    """Text for XML: markup escaped, and the two characters XML 1.0 cannot hold replaced."""
    text = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace('"', "&quot;").replace("\ufffe", "?").replace("\uffff", "?")


def _curve_panel(label, series, top):
    """One measure's curves: axes, a grid, a line per run, a legend."""
    right, ks = _LEFT + _PLOT_WIDTH, [k for k, _ in series[0][2]]
    values = [v for _, _, points, _ in series for _, v in points]
    low, high = min(0.0, min(values)), max(1.0, max(values))
    # past PLOT_POINTS, k on a log scale: k <= 10 stays wide
    spread = math.log if ks[-1] > PLOT_POINTS else float

    def x(k):
        if ks[-1] == 1:
            return _LEFT + _PLOT_WIDTH / 2
        return _LEFT + _PLOT_WIDTH * (spread(k) - spread(1)) / (spread(ks[-1]) - spread(1))
    y = lambda v: top + _PANEL - _PANEL * (v - low) / (high - low)
    out = ['<g aria-label="%s over k">\n<text x="%d" y="%d" font-weight="bold">%s, mean over '
           'queries</text>\n' % (_xml(label), _LEFT, top - 10, _xml(label))]
    for v in (low + (high - low) * i / 4 for i in range(5)):
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" '
                   'y="%.1f" text-anchor="end">%.2f</text>\n'
                   % (_LEFT, right, y(v), y(v), _LEFT - 6, y(v) + 4, v))
    for k in _k_ticks(ks[-1]):
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>\n'
                   % (x(k), top + _PANEL + 16, k))
    out.append('<text x="%.1f" y="%d" text-anchor="middle">k (documents retrieved)</text>\n'
               % (_LEFT + _PLOT_WIDTH / 2, top + _PANEL + 34))
    for i, (name, short, points, colour) in enumerate(series):
        out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"><title>%s'
                   '</title></polyline>\n'
                   % (colour, " ".join("%.1f,%.1f" % (x(k), y(v)) for k, v in points), _xml(name)))
        row = top + 14 + 18 * i
        out.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="3"/><text '
                   'x="%d" y="%d">%s</text>\n'
                   % (right + 12, right + 30, row, row, colour, right + 36, row + 4, _xml(short)))
    return "".join(out) + "</g>\n"


def _funnel_panels(runs, legend, colours, top):
    """([the SVG of each run's funnel (see funnel)], where the next panel starts): per row a bar
    as wide as the share of the relevant units still there, the baseline pipeline's first, each
    in the colour of its curves."""
    out = []
    for name, r in runs.items():
        for prefix, side in funnel_sides(r.get("funnel", {})):
            whose = None if prefix else name
            out.append('<text x="%d" y="%d" font-weight="bold">%s, %s</text>\n'
                       % (_LEFT, top - 10, _xml(legend[whose]), FUNNEL))
            for row in side["rows"]:
                width = _PLOT_WIDTH * row["share"]
                out.append('<rect x="%d" y="%d" width="%.1f" height="20" fill="%s"/>'
                           '<text x="%.1f" y="%d">%s: %.1f%%</text>\n'
                           % (_LEFT, top, width, colours[whose], _LEFT + 4 + width, top + 14,
                              _xml(row["stage"]), 100 * row["share"]))
                top += 24
            top += 50
    return out, top


def _k_ticks(top):
    """Round ticks of the k axis up to ``top``: 1, 5, 10, 15, 20 on a linear one; 1, 2, 5, 10,
    20, 50 ... on a log one; and ``top`` itself, unless a tick stands too close to it.

    >>> _k_ticks(10), _k_ticks(16), _k_ticks(18), _k_ticks(9)
    ([1, 5, 10], [1, 5, 10, 16], [1, 5, 10, 15, 18], [1, 5, 9])
    >>> _k_ticks(1000), _k_ticks(700)
    ([1, 2, 5, 10, 20, 50, 100, 200, 500, 1000], [1, 2, 5, 10, 20, 50, 100, 200, 700])
    """
    # a tick past far would crowd top's label
    ticks, far = [1] + list(range(5, top + 1, 5)), top * (7 / 8)
    if top > PLOT_POINTS:
        ticks = [m * 10 ** e for e in range(len(str(top))) for m in (1, 2, 5)
                 if m * 10 ** e <= top]
        far = top * 0.7
    shown = [t for t in ticks if t == top or t <= far]
    if top not in ticks:
        shown.append(top)
    return shown


def _strip(name, short, measure, result, top):
    """Each query's change of a measure, sorted: losses left in red, gains right in green;
    with replicates, a grey tick under each bar that holds an unstable query."""
    base, unstable = result["baseline_per_query"], set(result.get("unstable", {}).get(measure, ()))
    moved = sorted((row[measure] - base[q][measure], q in unstable)
                   for q, row in result["per_query"].items() if measure in row)
    deltas = [d for d, _ in moved]
    bins = min(len(deltas), PLOT_BARS)
    edges = [i * len(deltas) // bins for i in range(bins + 1)]
    bars = [math.fsum(deltas[edges[i]:edges[i + 1]]) / (edges[i + 1] - edges[i])
            for i in range(bins)]
    scale = max([abs(d) for d in deltas] + [1e-12])
    out = _strip_head(name, short, measure, deltas, top, scale)
    middle, step = top + _STRIP / 2, max(_PLOT_WIDTH / bins, 0.5)
    for i, d in enumerate(bars):
        left, h = _LEFT + _PLOT_WIDTH * i / bins, _STRIP / 2 * abs(d) / scale
        y, fill = middle, "#d62728"
        if d > 0:
            y, fill = middle - h, "#2ca02c"
        if d:
            out.append('<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s"/>\n'
                       % (left, y, step, h, fill))
        if any(flag for _, flag in moved[edges[i]:edges[i + 1]]):
            out.append('<rect x="%.2f" y="%d" width="%.2f" height="4" fill="#888"/>\n'
                       % (left, top + _STRIP + 2, step))
    ticks = ""
    if unstable:
        ticks = ("; a grey tick marks the %d unstable among the baseline's replicates"
                 % len(unstable))
    out.append('<text x="%d" y="%d">queries, sorted by change%s</text>\n'
               % (_LEFT, top + _STRIP + 18, ticks))
    return "".join(out) + "</g>\n"


def _strip_head(name, short, measure, deltas, top, scale):
    """A strip's group, its title (how many queries are worse, better, or of an agreement
    measure changed, and the same), its middle line and its scale: none when nothing moved."""
    middle = top + _STRIP / 2
    worse, better = sum(d < 0 for d in deltas), sum(d > 0 for d in deltas)
    counts = "%d worse, %d better" % (worse, better)
    # agreement: a change, neither worse nor better
    facts = MEASURES.get(_NAME.match(measure)[1])
    if facts and facts.domain == AGREEMENT:
        counts = "%d changed" % worse
    scale_text = '<text x="%d" y="%.1f" text-anchor="end">0</text>\n' % (_LEFT - 6, middle + 4)
    if any(deltas):
        scale_text = ('<text x="%d" y="%.1f" text-anchor="end">%+.2f</text><text x="%d" y="%.1f" '
                      'text-anchor="end">%+.2f</text>\n'
                      % (_LEFT - 6, top + 4, scale, _LEFT - 6, top + _STRIP + 4, -scale))
    return ['<g aria-label="change of %s per query, %s against the baseline">\n'
            % (_xml(measure), _xml(name)),
            '<text x="%d" y="%d" font-weight="bold">%s: change of %s per query (%s, %d the same)'
            '</text>\n' % (_LEFT, top - 10, _xml(short), _xml(measure), counts,
                           len(deltas) - worse - better),
            '<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#999"/>\n'
            % (_LEFT, _SVG_WIDTH - _RIGHT, middle, middle),
            scale_text]


# === Command line ===

USAGE = """%(prog)s [options] FIXTURE
       %(prog)s [options] --qrels FILE --run FILE [--run FILE ...] [--baseline FILE]
       %(prog)s [-q] [-c] [-l N] [-M N] [-J] [-N N] [-m MEASURE[.PARAMS]]... QRELS RUN   \
(trec_eval's form)"""
EPILOG = """\
input forms, three lines each (a file whose first non-blank character is '{' is JSON):
  TREC qrels: QID ITER DOCID GRADE        TREC run: QID Q0 DOCID RANK SCORE [TAG]
    q1 0 d1 2                               q1 Q0 d9 1 12.5 bm25
    q1 0 d7 0                               q1 Q0 d1 2 11.0 bm25
  BEIR/MTEB qrels: QID DOCID GRADE, tab-separated, header optional
    query-id  corpus-id  score
    q1        d1         1
  JSON fixture (--qrels and --run also take either half, or a whole fixture):
    {"qrels": {"q1": ["d1", "d2"], "q2": {"d3": 2, "d7": 0}},
     "runs": {"q1": ["d9", "d1"], "q2": {"d3": 12.5, "d7": 3.0}}}
  JSON Lines, a record a query (Ragas: reference_context_ids, retrieved_context_ids;
  LlamaIndex: expected_ids, retrieved_ids; other fields are ignored; other names with
  --fields relevant=expected_chunk_ids,retrieved=retrieved_chunk_ids); a JSON array of
  such records, or one record, too:
    {"query_id": "q1", "question": "...", "relevant": ["d1"], "retrieved": ["d9", "d1"]}
    {"query_id": "q2", "relevant": {"d3": 2}, "retrieved": {"d3": 12.5, "d7": 3.0}}
  Evidence sets (--evidence, a fixture's "evidence", a record's evidence or retrieval_gt):
    {"q1": ["d1", "d3"]}   {"q1": [["d1", "d2"], ["d3"]]}   {"q1": [[["d1"], ["d3"]], [["d9"]]]}
    one set of IDs, one set of slots (any ID fills its slot), or alternative sets;
    text lines QID SET SLOT DOCID; without --qrels, every ID in them is a relevant label.
  Token counts (--lengths): {"d1": 300, "d2": 900} or lines ID TOKENS; a record's "tokens"
    list, parallel to its ranking, comes first.  Questions with no answer (--no-answer):
    query IDs one a line, or ["q3", "q4"]; a fixture's "no_answer"; a record's "answerable": false.
  Listed labels have grade 1; grades <= 0 are judged non-relevant.  A list is
  ranked in its order, scores descending with ties by ID descending (trec_eval).
  UTF-8, gzip unpacked, '-' reads standard input (once), '#' lines in TREC text
  are comments; an explicitly empty ranking is valid and scores zero.

output shape: a FIXTURE with at most one --k and no other option than --format json
  prints the seed's {"k", "queries", "mean_recall_at_k", "mrr_at_k", "per_query"};
  anything else prints {"queries", "measures", "per_query", ...}.

measures (-m, separated by commas or blanks, repeatable; values as trec_eval computes them):
%s

parameters, in parentheses before any @k: rel=L (a relevance level of its own), gains={G:V,...}
  (nDCG); on R, P, RR, Success, AP, nDCG and the Evidence measures a filter of the ranking,
  applied before chunks are folded and before --depth: thresh=X (only items scoring X or more;
  Abstain takes it too), tokens=B (the items that fit in B tokens, each its count plus
  overhead=N; pack=skip passes over an item that does not fit and goes on); with a filter @k
  may be left out, and P divides by the items left:
  R(tokens=2000,overhead=50)@10  P(rel=2)@10  Success(thresh=0.45)@5  nDCG(gains={1:1,2:3})@10
  G, nDCGRel, RnDCG and RBP take gains= too; RBP and RBPResid p=X; Utility weights={a,b,c,d} and
  docs=N; IPrecAvg levels={X,...}; ERR max_rel=N (gdeval's greatest grade, 4):
  RBP(p=0.9)  Utility(weights={2,-1,0,0})  IPrecAvg(levels={.2,.5,.8})  ERR(max_rel=3)@20

trec_eval's names (map, P_5, P.5,10, ndcg_cut.10, recip_rank, 11pt_avg, ...) mean what trec_eval
  means, its rbp and rbp_resid p=0.9 (RBP's default is ir_measures' 0.8), and its nicknames
  official, set and all_trec its measures but runid, num_q and relstring.  With two files and only
  its flags, the command line is trec_eval's, and so is the output: -q (each query, then all),
  -c (labeled queries without a ranking score 0), -l N, -M N, -J, -N N (the collection's size,
  for utility), -m NAME[.PARAMS] repeatable, or a nickname: official (the default), set, all_trec.

other tools' names (ir_measures, ranx, BEIR, MTEB, sentence-transformers, LlamaIndex, Ragas,
  Haystack, AutoRAG: recall@5, MRR@10, map_at_100, hit_rate@5, accuracy@5, r-precision, ...)
  are ours where the tool computes our measure for a query: the output names ours, and a note
  says which name became which.  A name that means another measure in the tool that uses it
  (hits@5, cosine_map@100, retrieval_mrr, ...) is refused, saying how it differs.

exit statuses:
  0 evaluated (and every gate passed); 1 a gate failed; 2 bad input or usage;
  3 the output, the --summary or the --plot file could not be written (disk full, stdout closed);
  70 a bug of this tool, never a user's mistake (the traceback, and a line asking for a report)

examples:
  python3 rag_retrieval_eval.py retrieval_fixture.json --k 3
  python3 rag_retrieval_eval.py --qrels qrels.txt --run run.txt -m R@10,nDCG@10 -m AP --format \
table
  python3 rag_retrieval_eval.py new.json --baseline approved.json -m R@5 --max-query-drop 0.5
  python3 rag_retrieval_eval.py --qrels scifact/qrels/test.tsv --run results.json -m \
nDCG@10,R@100 --unlabeled skip
  python3 rag_retrieval_eval.py log.jsonl -m R@5 --fields \
relevant=expected_chunk_ids,retrieved=retrieved_chunk_ids
  python3 rag_retrieval_eval.py cand.jsonl --baseline approved.jsonl -m R@5 --max-query-drop 0.5 \\
      --summary "$GITHUB_STEP_SUMMARY" > report.json
  python3 rag_retrieval_eval.py --qrels qrels.txt --run bm25.txt --run dense.txt --baseline \
approved.txt \\
      -m R@10,nDCG@10 --groups groups.json --max-group-drop 0.05 --format table --plot recall.svg
  python3 rag_retrieval_eval.py --qrels qrels.txt --run ann.txt --baseline approved.txt \
--replicate approved-2.txt \\
      --replicate approved-3.txt -m nDCG@10 --max-mean-drop 0.01 --gate-on interval
"""


def _arg(parse):
    """An argparse type that reports our one-line message for bad values."""
    def convert(text):
        try:
            return parse(text)
        except EvalError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    convert.__name__ = parse.__name__
    return convert


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one line and exit status 2."""

    def error(self, message):
        extra = message.partition("unrecognized arguments: ")[2].split()
        ours = ["%s for %s" % (TREC_FLAGS_OURS[a[:2]], a)
                for a in extra if a[:2] in TREC_FLAGS_OURS]
        # trec_eval's files, flags: ours
        if ours or any(not a.startswith("-") for a in extra):
            message += (": trec_eval's form is QRELS RUN with its flags only; ours takes --qrels, "
                        "--run" + "".join(", " + o for o in ours))
        raise EvalError("%s (see --help)" % place(message))

    def convert_arg_line_to_args(self, line):
        # an argument file's blank line is no argument
        return [line] if line.strip() else []

    def _read_args_from_files(self, arg_strings):
        # argparse's reading of @FILE: what goes wrong there is the user's
        try:
            return super()._read_args_from_files(arg_strings)
        # the deepest call says it, naming its files
        except (RecursionError, UnicodeError) as exc:
            looped = isinstance(exc, RecursionError)
            why = "names itself, or a file naming it" if looped else "is no UTF-8 text"
            raise EvalError("argument file %s %s" % (
                ", ".join(a for a in arg_strings if a[:1] == "@"), why)) from None


def measure_help():
    """A line per measure: its spellings, then what it is, in a column (on a line of its own when
    the spellings fill theirs)."""
    return "\n".join("  %-18s %s" % (names, doc) if len(names) <= 18
                     else "  %s\n%21s%s" % (names, "", doc)
                     for names, doc in ((", ".join(spellings(spec)), spec.doc)
                                        for spec in MEASURES.values()))


@lru_cache(maxsize=2)
def build_parser(defaults=True):
    """The parser of OPTIONS; with defaults False, the namespace holds only the options given.
    Built once: argparse asks the terminal its size for every option (80% of a small main())."""
    parser = _Parser(prog="rag_retrieval_eval.py",
                     formatter_class=argparse.RawDescriptionHelpFormatter,
                     description=__doc__.split("\n\n")[0], epilog=EPILOG % measure_help(),
                     argument_default=argparse.SUPPRESS, usage=USAGE, fromfile_prefix_chars="@")
    group = parser
    for option in OPTIONS:
        flags, keywords = _argument(option)
        if option.name in HELP_GROUPS:
            group = parser.add_argument_group(HELP_GROUPS[option.name])
        group.add_argument(*flags, help=option.help, **keywords)
    if defaults:
        parser.set_defaults(**Config()._asdict())
    return parser


def _argument(option):
    """(flags, add_argument's keywords) of an option, by its kind."""
    flag = long_flag(option.name)
    metavar = option.metavar or METAVARS.get(option.kind)
    keywords = {"metavar": metavar, "dest": option.name} if metavar else {}
    keywords.update({
        "positional": {"nargs": "?"}, "files": {"action": "append"},
        "names": {"action": "append"}, "flag": {"action": "store_true"},
        "choice": {"choices": option.values},
        "cutoffs": {"nargs": "+", "action": "extend", "type": _arg(parse_cutoff)},
        "cutoff": {"type": _arg(parse_cutoff)}, "limit": {"type": _arg(parse_limits)},
        "count": {"type": _arg(lambda text: parse_cutoff(text, option.values,
                                                         option.name.replace("_", " ")))},
        "fields": {"action": "append", "type": _arg(parse_fields)},
        "stages": {"action": "append", "type": _arg(parse_stage)},
        "floors": {"action": "append", "type": _arg(parse_floors)},
        "version": {"action": "version", "version": "%s %s" % (PROG, __version__)}}.get(
            option.kind, {}))
    if option.kind == "positional":
        return [option.name], keywords
    if option.short:
        return [option.short, flag], keywords
    return [flag], keywords


# trec_eval's own command line: QRELS RUN and its flags (README: "Coming from trec_eval").
TREC_FLAGS = "qcJl:M:N:m:"
# each flag's option of ours
TREC_FLAGS_OURS = {"-c": "--missing-run zero", "-J": "--judged-only",
                   "-l": "--relevance-level", "-M": "--depth", "-N": "Utility(docs=N)"}


def trec_eval_form(argv):
    """(flags [(flag, value)], [QRELS, RUN]) when argv is trec_eval's form: two files and its
    flags only; None for our forms, the only ones that read argument files (@args.txt)."""
    if any(arg.startswith("@") for arg in argv):
        return None
    try:
        flags, files = getopt.gnu_getopt(argv, TREC_FLAGS)
    # one of ours: argparse says what, and of a second file which form to use
    except getopt.GetoptError:
        return None
    return (flags, files) if len(files) == 2 else None


def trec_eval_main(flags, files):
    """Evaluate as trec_eval does and print its layout; the status, 2 for bad input."""
    given, measures = dict(flags), [value for flag, value in flags if flag == "-m"] or ["official"]
    try:
        # QRELS and RUN both '-'
        check_stdin_once(files)
        chosen, said = {}, []
        for name, params in (row for text in measures for row in _trec_rows(text)):
            if params and chosen.get(name, params) not in ("", params):
                said.append("-m %s.%s is ignored: trec_eval keeps a measure's first parameters, "
                            "%s.%s" % (name, params, name, chosen[name]))
            # as trec_eval: the first parameters given
            chosen[name] = chosen.get(name) or params
        rows = sorted(chosen.items(), key=lambda row: list(TREC_ORDER).index(row[0]))
        values = dict(qrels=[files[0]], run=[files[1]], unlabeled="skip",
                      no_relevant="zero", format="trec",
                      missing_run="zero" if "-c" in given else "skip", judged_only="-J" in given,
                      relevance_level=parse_cutoff(given.get("-l", "1"), 0, "-l"),
                      depth=given.get("-M") and parse_cutoff(given["-M"], 1, "-M"))
        # the collection's size, which utility reads
        docs = parse_cutoff(given.get("-N", "0"), 0, "-N")
        # "map." is map
        specs = {row: trec_specs("%s.%s" % row, docs) or [] for row in rows}
        names = list(dict.fromkeys(s.name for found in specs.values()
                                   for s in found)) or ["NumRet"]
        result, _, _ = compute(Config(measure=names, **values))
    except EvalError as exc:
        _say("error: %s" % exc)
        return 2
    _say_trec_notes(said, result, measures, given)
    # a gzip run is read through again for it
    text = format_trec_eval(result, specs, _runid(files[1]) if "runid" in chosen else None,
                            "-q" in given)
    # -m relstring without -q: nothing, as trec_eval
    return _print(text, 0) if text else 0


def _say_trec_notes(said, result, measures, given):
    """Say the notes of trec_eval's form on stderr: the ones said, the labeled queries that are
    not ranked (trec_eval 9 leaves them out, 10 stops), a relstring without -q."""
    missing = result["skipped"]["missing_run"]
    if missing:
        said.append("%s labeled, not ranked (%s): the means are over the %d ranked, as in "
                    "trec_eval 9 (10 stops; -c scores them 0)"
                    % (n_queries(len(missing)), first_few(missing), result["queries"]))
    # all_trec's relstring: unsaid
    if "relstring" in [text.partition(".")[0] for text in measures] and "-q" not in given:
        said.append("relstring is a query's line, and no mean: give -q to print it")
    for line in said:
        _say("note: " + line)


def _trec_rows(text):
    """[(trec_eval name, its parameters or "")] of a -m value: one, or a nickname's measures."""
    name, _, params = text.partition(".")
    if name in TREC_NICKNAMES and not params:
        return [(measure, "") for measure in TREC_NICKNAMES[name]]
    if name not in TREC_ORDER:
        raise EvalError("-m: trec_eval has no measure %s%s"
                        % (show(text), suggestions(name, [*TREC_ORDER, *TREC_NICKNAMES])))
    return [(name, params)]


def format_trec_eval(result, specs, runid, per_query):
    """trec_eval's layout: with per_query each query's lines (by query ID), then the summary."""
    # utility_2,-1,0,0 as typed
    labels = {spec.name: name + "_" + params if params and not TREC_ORDER[name]
              else trec_label(spec.name)
              for (name, params), found in specs.items() for spec in found}
    # the run's, not a measure's
    lines, said = [], {"runid": runid, "num_q": result["queries"]}
    for qid in sorted(result["per_query"]) if per_query else ():
        row = result["per_query"][qid]
        # a geometric mean is, as in trec_eval, a summary only
        lines += [_trec_line(spec, qid, row[spec.name], labels) for found in specs.values()
                  for spec in found if spec.measure.aggregate != "geometric"]
    for (name, _), found in specs.items():
        if name in said:
            lines.append("%-22s\tall\t%s" % (name, said[name]))
        else:
            # a text (RelString) is a query's only
            lines += [_trec_line(spec, "all", result["measures"][spec.name], labels)
                      for spec in found if spec.measure.aggregate != "text"]
    return "\n".join(lines)


def _trec_line(spec, qid, value, labels):
    layout = {"sum": "%-22s\t%s\t%d", "text": "%-22s\t%s\t'%s'"}.get(
        spec.measure.aggregate, "%-22s\t%s\t%6.4f")
    return layout % (labels[spec.name], qid, value)


def _runid(path):
    """The run's tag: the 6th field of its last line, as trec_eval keeps it (read again: gzip
    is read through, standard input kept from the first read)."""
    import gzip
    with open_input(path) as stream:
        # JSON and JSON Lines hold no TREC line, so no tag
        if is_json(stream, place(path)):
            return ""
        if isinstance(stream, gzip.GzipFile):
            tail, fields = b"", []
            for block in iter(partial(read_bytes, stream, place(path), BLOCK), b""):
                # whole lines; the next's start
                done, _, tail = (tail + block).rpartition(b"\n")
                fields = _last_fields(done, True) or fields
            fields = _last_fields(tail, True) or fields
        else:
            end, size, fields = stream.seek(0, io.SEEK_END), 65536, None
            # a line longer than the tail: read further back
            while fields is None:
                stream.seek(max(0, end - size))
                fields, size = _last_fields(stream.read(), size >= end), size * 16
    return fields[5].decode("utf-8", "replace") if len(fields) > 5 else ""


def _last_fields(tail, whole):
    """The fields of the tail's last line that is no comment (indented or not: trec_eval skips
    both), [] for none; None when that is the first line of a tail not whole, which may be cut."""
    lines = reversed(tail.splitlines()[not whole:])
    data = (fields for fields in map(bytes.split, lines) if fields and fields[0][:1] != b"#")
    return next(data, [] if whole else None)


def parse_command_line(argv):
    """(Config, seed mode): seed mode is a FIXTURE with at most one --k and no other option
    than --format json, whose stdout keeps the seed script's bytes."""
    config = configure(vars(build_parser().parse_args(argv)))
    given = set(vars(build_parser(defaults=False).parse_args(argv)))
    seed_mode = ("fixture" in given and given <= {"fixture", "k", "format"}
                 and config.format == "json" and len(config.k or ()) <= 1)
    check_usage(config)
    return config, seed_mode


# the options whose output a --format latex table has no place for
LATEX_UNSHOWN = ("baseline groups stage index explain ci ties unjudged_bounds power "
                 "per_query").split()


def check_usage(config):
    """Refuse what argparse cannot see: missing inputs, and options whose effect would be lost."""
    if config.fixture is not None and (config.qrels or config.run):
        raise EvalError("give a FIXTURE or --qrels and --run, not both (see --help)")
    # --candidate-qrels without --qrels is refused by check_label_files, which says why
    labels = config.qrels or config.evidence or config.baseline or config.candidate_qrels
    if config.fixture is None and not (labels and (config.run or config.candidate_qrels)):
        hint = ""
        if config.run:
            hint = ("; or, for agreement measures (RBO, Overlap@k, Jaccard@k), which need no "
                    "labels, --baseline")
        raise EvalError("give a FIXTURE, or both --qrels (or --evidence) and --run (see --help)"
                        + hint)
    check_options(config)
    if config.pairwise and len(config.run or ()) < 2:
        raise EvalError("--pairwise compares each --run with each other one: give two or more")
    # a paper's table holds means, lettered runs and their pairs' tests
    lost = [name for name in LATEX_UNSHOWN if getattr(config, name) not in (None, False)]
    if config.format == "latex" and lost:
        raise EvalError("--format latex has no place for --%s: use json, table, markdown or csv"
                        % lost[0].replace("_", "-"))
    if config.format == "latex" and config.pairwise:
        raise EvalError("--format latex tests every pair of runs already: leave out --pairwise")
    if config.format == "latex" and len(config.run or ()) > 26:
        raise EvalError("--format latex letters the runs a to z: give at most 26")
    if config.junit is not None and not gates_given(config) and config.access is None:
        raise EvalError("--junit reports the gates' checks: give %s (with --baseline), or a "
                        "floor: %s" % (said(GATES.values()), said(GATES.values(), False)))
    _check_files(config)
    _check_runs(config)


def _check_files(config):
    """Refuse an output file that cannot be written or that names an input or another output,
    and standard input named for two inputs."""
    given = [getattr(config, o.name) for o in OPTIONS if o.stage == "input"]
    # every role's: none, one, or (a repeatable option's) a list, of --stage's (name, file)
    named = [p for value in given for p in (value if isinstance(value, list) else [value]) if p]
    named = [p[1] if isinstance(p, tuple) else p for p in named]
    outputs = [("--" + o.name, getattr(config, o.name)) for o in OPTIONS
               if o.stage == "output" and o.kind == "file" and getattr(config, o.name) is not None]
    # refused before any work; nothing is created
    for i, (flag, path) in enumerate(outputs):
        check_output_path(flag, path)
        twin = _twin(path, named + [p for _, p in outputs[:i]])
        if twin is not None:
            raise EvalError("%s %s names %s, which is read or written already: give it a file "
                            "of its own" % (flag, place(path), "standard input"
                                            if twin in STDIN_NAMES else place(twin)))
    check_stdin_once(named)


def _check_runs(config):
    """Refuse a run given twice, and a replicate that is the candidate's own input."""
    replicates = config.replicate or []
    for flag, paths in (("--run", config.run or ()),
                        ("--replicate", [config.baseline] + replicates)):
        for i, path in enumerate(paths):
            twin = _twin(path, paths[:i])
            if twin is None:
                continue
            raise EvalError("%s %s and %s %s name the same file: give each run once"
                            % ("--baseline" if twin == config.baseline else flag, place(twin),
                               flag, place(path)))
    candidates = dict.fromkeys(config.run or (), "--run")
    if config.fixture is not None:
        candidates[config.fixture] = "FIXTURE"
    for path in replicates:
        own = _twin(path, candidates)
        if own is not None:
            raise EvalError("--replicate %s is the candidate's own input (%s %s): a replicate is "
                            "another run of the baseline's configuration, and the candidate's "
                            "would pass its change as noise"
                            % (place(path), candidates[own], place(own)))


def _twin(path, others):
    """The first of ``others`` that names the same file as ``path``, or None."""
    return next((other for other in others if _same_file(path, other)), None)


def check_stdin_once(paths):
    """Refuse standard input named for two inputs (-, /dev/stdin): it can be read once."""
    inputs = [p for p in paths if p in STDIN_NAMES]
    if len(inputs) > 1:
        raise EvalError("standard input can be read once: %s given for two inputs" % " and ".join(
            map(show, inputs)))


def _same_file(one, other):
    if one in STDIN_NAMES or other in STDIN_NAMES:
        return one == other
    try:
        return os.path.samefile(one, other)
    except (OSError, ValueError):
        return os.path.realpath(one) == os.path.realpath(other)


def check_output_path(flag, path):
    """Refuse, before any work, a --summary or --plot path that cannot be written; create
    nothing."""
    if not path:
        raise EvalError("%s '' is empty: give a file name%s" % (flag, (
            " (was the variable it came from, such as $GITHUB_STEP_SUMMARY, unset?)"
            if flag == "--summary" else "")))
    if path in STDIN_NAMES:
        raise EvalError("%s %s: standard output holds the main output; "
                        "give %s a file" % (flag, path, flag))
    folder = os.path.dirname(os.path.abspath(path))
    problem = None
    if os.path.isdir(path) or path.endswith(("/", os.sep)):
        problem = "it names a directory"
    elif not os.path.isdir(folder):
        problem = "its directory %s does not exist" % place(folder)
    elif os.path.exists(path) and not os.access(path, os.W_OK):
        problem = "it is not writable"
    elif not os.access(folder, os.W_OK):
        problem = "its directory is not writable"
    if problem:
        raise EvalError("%s %s cannot be written: %s" % (flag, place(path), problem))


def main(argv=None):
    """Parse, load, compute, print; return the exit status: 70 (sysexits' EX_SOFTWARE) for a bug
    of ours, with its traceback, so that CI never reads a crash as a failed gate (1)."""
    try:
        with one_reading():
            return _main(argv)
    # a user's mistake is an EvalError, answered in _main: this is ours
    except Exception:
        with contextlib.suppress(AttributeError, OSError, ValueError):
            import traceback
            traceback.print_exc()
        _say("internal error: this is a bug of %s %s, not a problem with your input: please "
             "report it with the traceback above and the command line" % (PROG, __version__))
        return 70


def _main(argv):
    form = trec_eval_form(list(sys.argv[1:] if argv is None else argv))
    if form is not None:
        return trec_eval_main(*form)
    try:
        config, seed_mode = parse_command_line(argv)
        result, pool, drawn = compute(config, seed_mode)
    except EvalError as exc:
        _say("error: %s" % exc)
        return 2
    # --help
    except SystemExit as exc:
        return exc.code
    if not (config.run or config.fixture):  # --candidate-qrels alone
        return labels_main(config, result, pool)
    several = "runs" in result
    runs = result["runs"] if several else {config.fixture or config.run[0]: result}
    pairs = result.get("pairs")
    extra = {key: result[key] for key in ("label_agreement", "label_orderings")
             if several and key in result}
    labels = run_labels(list(runs), config.baseline)
    for line in stderr_lines(runs, labels, several) + unshown(config):
        _say(line)
    # stdout keeps the seed script's bytes; notes went to stderr
    if seed_mode:
        return _print(format_json(seed_result(result, (config.k or [DEFAULT_K])[0])), 0)
    if config.format == "latex":
        text = format_latex(runs, pairs or [], labels, config)
    elif several:
        text = format_runs(runs, config.format, labels, pairs, extra)
    else:
        text = _one_run_text(config, result)
    status = 1 if any(r.get("breaches") or r.get("leaks") for r in runs.values()) else 0
    status = max(status, _write_files(config, runs, labels, pool, drawn, (pairs, extra)))
    return max(_print(text, status), status)


def labels_main(config, out, pool):
    """Print the report of two label sources without runs, write --summary and --pool; return
    the status: 0, or 3 when an output could not be written."""
    status = 0
    if config.summary is not None:
        status = 0 if _append(config.summary, format_labels(out, "markdown",
                                                            config.per_query)) else 3
    if config.pool is not None and not write_file(config.pool, pool, "the pool"):
        status = 3
    return max(_print(format_labels(out, config.format, config.per_query), status), status)


def _one_run_text(config, result):
    """The main output of one run, in its --format."""
    runid = None
    if wants_runid(config):
        runid = _runid(config.run[0] if config.run else config.fixture)
    formats = {"json": format_json, "csv": format_csv, "trec": partial(format_trec, runid=runid),
               "table": partial(format_table, per_query=config.per_query),
               "markdown": partial(format_markdown, per_query=config.per_query)}
    return formats[config.format](result)


def _write_files(config, runs, labels, pool, drawn, pairs):
    """Write the files asked for: --summary, --plot, --pool, --junit (drawn: the plot's curves;
    pairs: format_runs' pairs and extra); 3 when one could not be written, else 0."""
    status = 0
    # made only when asked for: a report costs a large comparison 0.1 s
    if config.summary is not None:
        if len(runs) > 1:
            summary = format_runs(runs, "markdown", labels, *pairs)
        else:
            summary = format_markdown(*runs.values(), config.per_query)
        status = status if _append(config.summary, summary) else 3
    legend = labels
    # a legend names the baseline's file
    if config.baseline is not None:
        legend = {**labels, None: "baseline %s" % place(config.baseline)}
    svg = config.plot and [format_svg(runs, drawn, legend)]
    junit = config.junit and [format_junit(runs, labels, make_plan(config).gates)]
    for path, written, what in ((config.plot, svg, "the plot"), (config.pool, pool, "the pool"),
                                (config.junit, junit, "the JUnit report")):
        status = 3 if written is not None and not write_file(path, written, what) else status
    return status


def unshown(config):
    """The note on what --format trec has no place for: --ci's intervals, --ties' bounds."""
    lost = [flag for flag in ("ci", "ties") if getattr(config, flag) and config.format == "trec"]
    if not lost:
        return []
    return ["note: --format trec has no place for --%s: use json, table, markdown or csv"
            % " or --".join(lost)]


def _say(line):
    """A line on stderr; a closed or failing stderr is no further error."""
    try:
        sys.stderr.write("%s: %s\n" % (PROG, line))
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):
        pass


def _in_place(path):
    """Whether an output path is written in place, as a shell's > writes it: it exists and is
    no regular file (a device such as /dev/null, a FIFO), which a rename would replace."""
    return os.path.exists(path) and not os.path.isfile(path)


def _append(path, text):
    """Append a report to a file, all of it or nothing (what a failed write added is cut
    off again), on a line of its own; say so and return False when it cannot be."""
    try:
        regular = not _in_place(path)
        with open(path, "a+b" if regular else "ab", buffering=0) as summary:
            start = summary.seek(0, os.SEEK_END) if regular else 0
            if start:
                summary.seek(start - 1)
                text = ("" if summary.read(1) == b"\n" else "\n") + text
            data, done = (text + "\n\n").encode("utf-8"), 0
            try:
                # a raw write may take part of it
                while done < len(data):
                    done += summary.write(data[done:])
            except OSError:
                # a device such as /dev/full cannot be cut
                with contextlib.suppress(OSError):
                    summary.truncate(start)
                raise
        return True
    except OSError as exc:
        _say("error: cannot append the summary to %s: %s" % (place(path), exc.strerror or exc))
        return False


def write_file(path, pieces, what):
    """Write a side output (the plot, the pool: pieces of its text) to a new file beside ``path``
    (the file a symlink names), then put it in its place: a failed write leaves the previous file
    whole.  A device or a FIFO is written in place (see _in_place).  Say so and return False when
    it cannot be."""
    target = None if _in_place(path) else os.path.realpath(path)
    temporary = target and "%s.%d.tmp" % (target, os.getpid())
    try:
        with open(temporary or path, "wb") as out:
            for piece in pieces:
                out.write(piece.encode("utf-8"))
        if target:
            os.replace(temporary, target)
        return True
    except OSError as exc:
        # TypeError: no temporary was made
        with contextlib.suppress(OSError, TypeError):
            os.remove(temporary)
        _say("error: cannot write %s %s: %s" % (what, place(path), exc.strerror or exc))
        return False


def _print(text, status):
    """Write the output (a string, or its pieces); return the evaluation's status, or 3 when the
    output could not be written."""
    try:
        if sys.stdout is None:
            raise OSError("standard output is closed")
        for piece in [text] if isinstance(text, str) else text:
            sys.stdout.write(piece)
        sys.stdout.write("\n")
        sys.stdout.flush()
    # the reader went away early (`| head`): the evaluation's status stands
    except BrokenPipeError:
        return status
    except (OSError, ValueError) as exc:
        _say("error: cannot write the output: %s" % (getattr(exc, "strerror", None) or exc))
        return 3
    return status


def compute(config, seed_mode=False):
    """Load the inputs a Config names and evaluate them: the general result, or with several
    runs {"runs": {name: result}}, Holm's correction over all of them."""
    plan = make_plan(config)
    # a pipeline's funnel is drawn too
    funnel_drawn = plan.config.stage or plan.config.index is not None
    if plan.curves and not curve_specs(plan.specs) and not (plan.opts.agree or funnel_drawn):
        raise EvalError("--plot draws measures over k, and %s have no cutoff: add "
                        "one, such as R@10"
                        % ", ".join(s.name for s in plan.specs))
    inputs = load_inputs(plan, seed_mode)
    plan = with_clusters(plan, inputs)
    results = evaluate_runs(plan, inputs, files=True)
    results, blocks, disagreeing = other_labels(plan, inputs, results, files=True)
    # --pool's records: of the pairs graded apart, with --candidate-qrels
    pool = config.pool and (json.dumps(r) + "\n" for r in disagreeing or pool_records(
        inputs, plan.opts.top_k, most_changed(plan, results, inputs.truth.labels)))
    drawn = plan.curves and plotted_curves(plan, inputs)
    return labels_output(plan, results, blocks, len(results) != 1), pool, drawn


def _run_script():
    # The tool builds no reference cycles, so the cyclic collector would only walk
    # its many live records again and again (10-20% of a large run); refcounting
    # frees everything.  Only the script does this, never a library user.
    gc.disable()
    signal.signal(signal.SIGTERM, _terminated)
    try:
        status = main()
    # Ctrl-C, or SIGTERM: one line, no traceback
    except KeyboardInterrupt as exc:
        terminated = exc.args == ("terminated",)
        _say("terminated" if terminated else "interrupted")
        status = 128 + (signal.SIGTERM if terminated else signal.SIGINT)
    try:
        if sys.stderr is not None:
            sys.stderr.flush()
    except OSError:
        pass
    # Freeing millions of IDs one by one at exit takes a third of a second and
    # serves nobody: the output is flushed (or failed, and said so), so leave at once.
    os._exit(status)


def _terminated(signum, frame):
    raise KeyboardInterrupt("terminated")


if __name__ == "__main__":
    _run_script()
