"""Code similarity across a class: which submissions share more code than independent work would.

    sources  what is compared: each student's own files (functions + notebook code cells) as one
             text, and the boilerplate every student starts from (the released skeleton, the
             notebook's released cells, the public tests)
    packed   code a student runs from an encoded or compressed string, decoded statically
             (never run) so it is compared too, and reported either way
    compare  pairwise similarity with copydetect (winnowed fingerprints of the tokenized code:
             renamed variables and reordered functions do not hide a copy), the ranked pairs,
             the CSV and the offline HTML report
"""

from autograder.similarity.compare import Pair, compare_class, write_pairs_csv, write_report
from autograder.similarity.sources import stage_boilerplate, stage_class

__all__ = ["Pair", "compare_class", "stage_boilerplate", "stage_class", "write_pairs_csv", "write_report"]
