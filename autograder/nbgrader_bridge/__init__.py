"""The bridge between nbgrader and the trusted grader.

nbgrader stays the instructors' tool (release, collect, autograde, feedback, export, formgrader);
every automatic score comes from the trusted grader. The modules here: where the course lives
(`course`), what nbgrader's gradebook says (`gradebook`), one submission graded once per content
for the kernel's check() (`trusted_scores`), the nbgrader-vs-trusted comparison (`reconcile`),
when solutions may go out (`release_gate`) and what goes out (`solutions_bundle`), and two
preprocessors nbgrader loads from nbgrader_config.py: `sanitize_metadata` (autograde) and
`feedback_tracebacks` (generate_feedback).
"""
