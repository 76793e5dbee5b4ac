"""nbgrader's late penalty under the course's late policy (grading.toml `[late]`).

nbgrader computes how late a submission is from its timestamp.txt and the due date recorded with
`nbgrader db assignment add --duedate`, then asks this plugin for the penalty of each notebook at
autograde time. The penalty is the one the trusted grader shows in grades.csv, feedback and
Gradescope: `autograder.engine.lateness.penalty_points`. Loaded only by nbgrader.
"""

from nbgrader.plugins import LateSubmissionPlugin

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
