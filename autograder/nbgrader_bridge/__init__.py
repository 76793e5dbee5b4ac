"""The bridge between nbgrader and the trusted grader.

nbgrader stays the instructors' tool (release, collect, autograde, feedback, export, formgrader);
every automatic score comes from the trusted grader. The modules here: where the course lives
(`course`), what nbgrader's gradebook says (`gradebook`), the trusted results and executed
notebooks pinned for the collected files (`pinned`), nbgrader's autograde pipeline that writes
them into the gradebook (`autograde_pipeline`) and the outputs into the autograded notebook
without running it (`executed_outputs`), the gradebook-vs-pinned comparison (`reconcile`), when solutions may go out (`release_gate`) and what
goes out (`solutions_bundle`), and preprocessors nbgrader loads from nbgrader_config.py:
`sanitize_metadata` (autograde) and `feedback_tracebacks` (generate_feedback); `templates/`
holds the feedback page with Chinese labels.
"""
