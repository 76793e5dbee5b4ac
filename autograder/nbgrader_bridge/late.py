"""nbgrader's late penalty under the course's late policy (grading.toml `[late]`).

nbgrader computes how late a submission is from its timestamp.txt and the due date recorded with
`nbgrader db assignment add --duedate`, then asks this plugin for the penalty of each notebook at
autograde time. The penalty is the one the trusted grader shows in grades.csv, feedback and
Gradescope: `autograder.engine.lateness.penalty_points`. CourseAssignLatePenalties is nbgrader's
step that asks it, plus a warning naming each student whose submission time is unknown while a due
date is recorded (an LMS name without a time: no penalty would be charged without a word).
Loaded only by nbgrader.
"""

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import LateSubmissionPlugin
from nbgrader.preprocessors import AssignLatePenalties

from autograder.engine.lateness import load_policy, penalty_points
from autograder.engine.registry import load_config


class CourseLatePenalty(LateSubmissionPlugin):
    def late_submission_penalty(self, student_id, score, total_seconds_late):
        assignment = getattr(self.parent, "assignment_id", None)
        policy = load_policy(load_config(assignment)) if assignment else None
        if policy is None:
            self.log.warning("No [late] policy for %s: %s is %.0f s late, no penalty",
                             assignment, student_id, total_seconds_late)
            return None
        penalty = penalty_points(score, total_seconds_late, policy)
        self.log.warning("%s is %.0f s late (%d day(s) charged): %g%% of %s = %s points off",
                         student_id, total_seconds_late, policy.days_charged(total_seconds_late),
                         policy.percent(total_seconds_late), score, penalty)
        return penalty


class CourseAssignLatePenalties(AssignLatePenalties):
    def preprocess(self, nb, resources):
        nb, resources = super().preprocess(nb, resources)
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            try:
                submission = gb.find_submission(info["assignment"], info["student"])
            except MissingEntry:
                return nb, resources
            if submission.timestamp is None and submission.assignment.duedate is not None:
                self.log.warning(
                    "%s: no submission time known (no timestamp.txt in submitted/%s/%s/), so no late penalty. "
                    "If they handed in late, write the time into that timestamp.txt (e.g. 2030-02-01 10:30:00 UTC) "
                    "and run autograde again.", info["student"], info["student"], info["assignment"])
        return nb, resources
