"""Reports built from the engine's results, for a person to read: the terminal's progress and
gradebook (console_view), and the copied-answers report (answer_matches). They read results and
the assignment; nothing in the engine depends on them."""
