"""Layer 7, the applications: the ``hearts-sim`` command line, the move server and the
terminal game against CPU levels."""
