"""Code similarity across a class: which submissions share more code than independent work would.

    sources  what is compared: each student's own files (functions + notebook code cells) as one
             text, and the boilerplate every student starts from (the released skeleton, the
             notebook's released cells, the public tests)
    packed   code a student runs from an encoded or compressed string, decoded statically
             (never run) so it is compared too, and reported either way
    compare  pairwise similarity with copydetect (winnowed fingerprints of the tokenized code:
             renamed variables and reordered functions do not hide a copy) beyond the reference,
             each student's share of the reference, the ranked pairs and the CSV
    report   the offline HTML report, every student-chosen text in it escaped
"""

from autograder.similarity.compare import Pair, compare_class, reference_shares, write_pairs_csv
from autograder.similarity.report import write_report
from autograder.similarity.sources import stage_boilerplate, stage_class

__all__ = ["Pair", "compare_class", "reference_shares", "stage_boilerplate", "stage_class", "write_pairs_csv",
           "write_report"]
