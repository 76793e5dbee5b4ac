"""`python -m solutions.lec01_codesign`: print the lecture's three demos with the reference functions."""

from solutions.lec01_codesign.demo import main

main()
